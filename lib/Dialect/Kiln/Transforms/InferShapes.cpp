//===- InferShapes.cpp - refine result types through the graph ------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "kiln/Dialect/Kiln/Transforms/ConstantEvaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/FoldUtils.h"

#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "kiln-infer-shapes"

namespace kiln {
#define GEN_PASS_DEF_KILNINFERSHAPES
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// `t` with a dim of `size` inserted at `axis`.
Type withDim(Type t, int64_t axis, int64_t size) {
  auto r = dyn_cast<RankedTensorType>(t);
  if (!r || axis < 0 || axis > r.getRank())
    return {};
  SmallVector<int64_t> shape(r.getShape());
  shape.insert(shape.begin() + axis, size);
  return RankedTensorType::get(shape, r.getElementType());
}

/// `t` without its dim `axis`.
Type withoutDim(Type t, int64_t axis) {
  auto r = dyn_cast<RankedTensorType>(t);
  if (!r || axis < 0 || axis >= r.getRank())
    return {};
  SmallVector<int64_t> shape(r.getShape());
  shape.erase(shape.begin() + axis);
  return RankedTensorType::get(shape, r.getElementType());
}

struct InferShapesPass
    : public kiln::impl::KilnInferShapesBase<InferShapesPass> {
  using KilnInferShapesBase::KilnInferShapesBase;
  OperationFolder *folder = nullptr;
  /// Whether inferred ops are folded (not the ops `create` makes).
  bool foldOps = true;

  void runOnOperation() override {
    // One pass in program order: each op's types are refined from its
    // operands, then the op is folded if its operands are constants, so
    // that shape computations (Shape -> Gather -> Concat -> Reshape, and
    // their Equal/Where/ConstantOfShape variants in exported graphs)
    // become constants before the ops that consume them are inferred.
    // Control flow is entered: a Loop's or Scan's body arguments take
    // their types from the op's operands before the body is inferred, and
    // its results follow what the body yields; an If whose condition is a
    // constant is replaced by the branch it takes.
    OperationFolder f(&getContext());
    folder = &f;
    WalkResult walk = getOperation()->walk([&](FunctionOpInterface fn) {
      if (fn.isExternal())
        return WalkResult::advance();
      for (Block &block : fn.getFunctionBody())
        if (failed(inferBlock(block)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // Backward, in each function's body and the regions in it: the static
    // shape a value must have where an op that keeps its operand's shape
    // (or broadcasts it) has a static result, typically a declared graph
    // or loop-body output (a function's
    // expanded ReduceL2: ReduceSum over run-time axes, then Sqrt and
    // CastLike into the declared output).
    getOperation()->walk([&](FunctionOpInterface fn) {
      if (!fn.isExternal())
        for (Block &block : fn.getFunctionBody())
          refineBackward(block);
    });
    if (auto main = dyn_cast_or_null<func::FuncOp>(
            SymbolTable::lookupSymbolIn(getOperation(), "main")))
      flattenSequenceResults(main);
    // The sequence ops whose every use was resolved.
    for (Operation *op : llvm::reverse(sequenceOps))
      if (op->use_empty())
        op->erase();
    // Function results follow the refined values they return.
    getOperation()->walk([](FunctionOpInterface fn) {
      if (fn.isExternal())
        return;
      Operation *term = fn.getFunctionBody().back().getTerminator();
      auto type = cast<FunctionType>(fn.getFunctionType());
      fn.setType(FunctionType::get(fn->getContext(), type.getInputs(),
                                   term->getOperandTypes()));
    });
  }

  /// Whether `op` is a kiln op of one result named (without the dialect)
  /// in `names`.
  static bool isKilnOpIn(Operation *op, const llvm::StringSet<> &names) {
    return op->getDialect() &&
           op->getDialect()->getNamespace() ==
               KilnDialect::getDialectNamespace() &&
           op->getNumResults() == 1 &&
           names.contains(op->getName().stripDialect());
  }

  /// Ops whose result has their first operand's shape, element by
  /// element.
  static bool keepsShape(Operation *op) {
    static const llvm::StringSet<> names = {
        "abs",        "acos",         "acosh",
        "asin",       "asinh",        "atan",
        "atanh",      "bitwise_not",  "cast",
        "cast_like",  "ceil",         "celu",
        "cos",        "cosh",         "elu",
        "erf",        "exp",          "floor",
        "gelu",       "hard_sigmoid", "hard_swish",
        "identity",   "is_inf",       "is_nan",
        "leaky_relu", "log",          "mish",
        "neg",        "not",          "reciprocal",
        "relu",       "round",        "selu",
        "shrink",     "sigmoid",      "sign",
        "sin",        "sinh",         "softplus",
        "softsign",   "sqrt",         "swish",
        "tan",        "tanh",         "thresholded_relu"};
    return op->getNumOperands() >= 1 && isKilnOpIn(op, names);
  }

  /// Ops whose result broadcasts their operands (multidirectionally).
  static bool broadcasts(Operation *op) {
    static const llvm::StringSet<> names = {"add",        "sub",
                                            "mul",        "div",
                                            "pow",        "max",
                                            "min",        "mod",
                                            "and",        "or",
                                            "xor",        "equal",
                                            "greater",    "greater_or_equal",
                                            "less",       "less_or_equal",
                                            "prelu",      "bitwise_and",
                                            "bitwise_or", "bitwise_xor"};
    return isKilnOpIn(op, names);
  }

  /// The backward sweep of runOnOperation: in reverse order, an operand
  /// that is an op's result gets the dims it must have: all of a
  /// shape-keeping op's static result; of a broadcasting op's, each dim
  /// that is 1 (an operand of the result's rank broadcasts to 1 only from
  /// 1), and each dim whose other operands all have 1 there.
  /// Regions are entered: a value in a Loop's or Scan's body (or an If's
  /// branch) whose users have static results in every iteration has that
  /// shape in every iteration.
  void refineBackward(Block &block) {
    for (Operation &op : llvm::reverse(block)) {
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          refineBackward(inner);
      if (op.getNumResults() != 1)
        continue;
      auto rt = dyn_cast<RankedTensorType>(op.getResult(0).getType());
      if (!rt)
        continue;
      auto setShape = [&](Value v, ArrayRef<int64_t> shape) {
        auto vt = dyn_cast<TensorType>(v.getType());
        // (Not constants, nor the results of control flow, which follow
        // what their regions yield.)
        if (!vt || !isa<OpResult>(v) || isa<ConstantOp>(v.getDefiningOp()) ||
            v.getDefiningOp()->getNumRegions() > 0)
          return;
        auto want = RankedTensorType::get(shape, vt.getElementType());
        if (areCompatibleTypes(want, vt))
          v.setType(refineType(vt, want));
      };
      if (keepsShape(&op)) {
        if (rt.hasStaticShape())
          setShape(op.getOperand(0), rt.getShape());
        continue;
      }
      if (!broadcasts(&op))
        continue;
      for (OpOperand &o : op.getOpOperands()) {
        auto ot = dyn_cast<RankedTensorType>(o.get().getType());
        if (!ot || ot.getRank() != rt.getRank() || ot.hasStaticShape())
          continue;
        SmallVector<int64_t> shape(ot.getShape());
        for (int64_t d = 0; d < rt.getRank(); ++d) {
          if (!ShapedType::isDynamic(shape[d]) ||
              ShapedType::isDynamic(rt.getDimSize(d)))
            continue;
          bool othersOne = true;
          for (OpOperand &other : op.getOpOperands()) {
            if (&other == &o)
              continue;
            auto t = dyn_cast<RankedTensorType>(other.get().getType());
            int64_t at = t ? d - (rt.getRank() - t.getRank()) : -1;
            othersOne &= t && (at < 0 || t.getDimSize(at) == 1);
          }
          if (rt.getDimSize(d) == 1 || othersOne)
            shape[d] = rt.getDimSize(d);
        }
        setShape(o.get(), shape);
      }
    }
  }

  LogicalResult inferBlock(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block))
      if (failed(inferOp(&op)))
        return failure();
    return success();
  }

  /// Refines `value`'s type by `want`, which must be compatible with it.
  LogicalResult refine(Operation *op, Value value, Type want, StringRef what) {
    if (!want)
      return success();
    // Only tensors are refined through control flow; an op's shape function
    // may also type sequences and optionals.
    if (!isa<OpResult>(value) ||
        !isa<InferResultTypesOpInterface>(value.getDefiningOp())) {
      if (!isa<TensorType>(want) || !isa<TensorType>(value.getType()))
        return success();
    }
    if (!areCompatibleTypes(want, value.getType()))
      return op->emitOpError()
             << what << " has type " << value.getType() << " but "
             << (isa<OpResult>(value) ? "its operands imply " : "is given ")
             << want;
    value.setType(refineType(value.getType(), want));
    return success();
  }

  /// Sequences of known length (built from SequenceEmpty/Construct,
  /// Insert, Erase with constant positions, SplitToSequence): their
  /// elements. SequenceAt, SequenceLength, ConcatFromSequence of one are
  /// replaced by the element, a constant, a Concat; the sequence ops left
  /// unused are erased at the end.
  DenseMap<Value, SmallVector<Value>> sequences;
  /// Known sequences whose length is known only at run time (their
  /// elements in `sequences` are the most they can have; the rest are
  /// empty or unspecified), and optionals (Optional ops) whose presence
  /// is: a rank-0 tensor<i64> with the length, or 1 for present and 0 for
  /// absent.
  DenseMap<Value, Value> counts;
  SmallVector<Operation *> sequenceOps;

  /// A constant scalar position into a sequence of `size` elements
  /// (negative from the end; `inclusiveEnd`: `size` itself is valid).
  std::optional<int64_t> position(Value v, int64_t size, bool inclusiveEnd) {
    std::optional<SmallVector<int64_t>> p = getConstantInts(v);
    if (!p || p->size() != 1)
      return std::nullopt;
    int64_t i = (*p)[0] < 0 ? (*p)[0] + size : (*p)[0];
    if (i < 0 || i > size || (i == size && !inclusiveEnd))
      return std::nullopt;
    return i;
  }

  /// Creates a kiln op of `name` before `at` and infers its types. It is
  /// not folded: the caller uses it (canonicalization folds it later).
  FailureOr<Operation *> create(Operation *at, StringRef name,
                                ValueRange operands, TypeRange types,
                                ArrayRef<NamedAttribute> attrs = {}) {
    OpBuilder b(at);
    OperationState st(at->getLoc(), name);
    st.addOperands(operands);
    st.addTypes(types);
    st.addAttributes(attrs);
    Operation *op = b.create(st);
    if (failed(inferUnfolded(op)))
      return failure();
    return op;
  }

  /// Infers the types of an op just created, without folding it (which
  /// would erase it: its operands may be constants).
  LogicalResult inferUnfolded(Operation *op) {
    bool fold = foldOps;
    foldOps = false;
    LogicalResult inferred = inferOp(op);
    foldOps = fold;
    return inferred;
  }

  Value i64Constant(Operation *at, ArrayRef<int64_t> values, bool scalar) {
    OpBuilder b(at);
    auto type = RankedTensorType::get(
        scalar ? ArrayRef<int64_t>{}
               : ArrayRef<int64_t>{(int64_t)values.size()},
        b.getI64Type());
    return ConstantOp::create(b, at->getLoc(), type,
                              DenseElementsAttr::get(type, values));
  }

  /// A kiln op of `name` on scalars or small index tensors, before `at`:
  /// its one result.
  FailureOr<Value> scalarOp(Operation *at, StringRef name, ValueRange operands,
                            Type elt, ArrayRef<NamedAttribute> attrs = {}) {
    FailureOr<Operation *> op =
        create(at, name, operands, {UnrankedTensorType::get(elt)}, attrs);
    if (failed(op))
      return failure();
    return (*op)->getResult(0);
  }

  /// An integer tensor cast to i64 where it is not.
  FailureOr<Value> toI64(Operation *at, Value v) {
    Type i64 = IntegerType::get(at->getContext(), 64);
    if (getElementTypeOrSelf(v.getType()) == i64)
      return v;
    return scalarOp(at, "kiln.cast", {v}, i64,
                    {NamedAttribute(StringAttr::get(at->getContext(), "to"),
                                    TypeAttr::get(i64))});
  }

  /// A tensor of one integer (static shape) as a rank-0 tensor<i64>.
  FailureOr<Value> scalarI64(Operation *at, Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() == 0)
      return toI64(at, v);
    FailureOr<Value> r =
        scalarOp(at, "kiln.reshape", {v, i64Constant(at, {}, false)},
                 t.getElementType());
    return failed(r) ? r : toI64(at, *r);
  }

  /// A Slice of `data` along `axis` from `start` to `end` (tensor<1xi64>
  /// values), before `at`, inferred: where they are known only at run time,
  /// its extent along the axis depends on the data.
  FailureOr<Value> sliceAlong(Operation *at, Value data, Value start, Value end,
                              int64_t axis) {
    OpBuilder b(at);
    auto slice = SliceOp::create(
        b, at->getLoc(),
        UnrankedTensorType::get(getElementTypeOrSelf(data.getType())), data,
        start, end, i64Constant(at, {axis}, false), Value());
    if (failed(inferUnfolded(slice)))
      return failure();
    return slice.getResult();
  }

  /// A position into a sequence of `size` elements known only at run time,
  /// as a rank-0 tensor<i64>, negative ones counted from the end.
  FailureOr<Value> runTimePosition(Operation *at, Value position,
                                   int64_t size) {
    Builder b(at->getContext());
    Type i64 = b.getI64Type();
    auto pt = dyn_cast<RankedTensorType>(position.getType());
    if (!pt || !pt.hasStaticShape() || pt.getNumElements() != 1 ||
        !isa<IntegerType>(pt.getElementType()))
      return at->emitOpError("needs a position of one integer, got ")
             << position.getType();
    FailureOr<Value> p = scalarI64(at, position);
    if (failed(p))
      return failure();
    FailureOr<Value> negative = scalarOp(
        at, "kiln.less", {*p, i64Constant(at, {0}, true)}, b.getI1Type());
    FailureOr<Value> wrapped =
        scalarOp(at, "kiln.add", {*p, i64Constant(at, {size}, true)}, i64);
    if (failed(negative) || failed(wrapped))
      return failure();
    return scalarOp(at, "kiln.where", {*negative, *wrapped, *p}, i64);
  }

  /// `p` compared with the constant `k` by the kiln op `name` (`kiln.equal`,
  /// `kiln.greater`): a rank-0 tensor<i1>.
  FailureOr<Value> compare(Operation *at, StringRef name, Value p, int64_t k) {
    return scalarOp(at, name, {p, i64Constant(at, {k}, true)},
                    IntegerType::get(at->getContext(), 1));
  }

  /// The first of `values` whose condition in `conds` (rank-0 booleans, one
  /// fewer than the values) holds at run time, else the last value. Values
  /// of one static type are chosen among by Where. Values of one rank whose
  /// shapes differ along one axis are concatenated along it and the chosen
  /// one sliced out at run time: its extent along that axis depends on the
  /// data, which a graph output can have (an output sequence's element).
  FailureOr<Value> choose(Operation *at, ArrayRef<Value> conds,
                          ArrayRef<Value> values) {
    assert(conds.size() + 1 == values.size() && "one condition per value");
    if (values.size() == 1)
      return values[0];
    SmallVector<RankedTensorType> types;
    for (Value v : values) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || !t.hasStaticShape())
        return at->emitOpError("chooses at run time among sequence "
                               "elements of unknown shape (")
               << v.getType() << ")";
      types.push_back(t);
    }
    Type elt = types[0].getElementType();
    if (llvm::all_equal(types)) {
      Value r = values.back();
      for (int64_t k = conds.size() - 1; k >= 0; --k) {
        FailureOr<Value> w =
            scalarOp(at, "kiln.where", {conds[k], values[k], r}, elt);
        if (failed(w))
          return failure();
        r = *w;
      }
      return r;
    }
    std::optional<int64_t> axis;
    for (RankedTensorType t : types) {
      if (t.getRank() != types[0].getRank() || t.getElementType() != elt)
        return at->emitOpError("chooses at run time among sequence elements "
                               "of different ranks or types (")
               << types[0] << " and " << t << ")";
      for (int64_t d = 0; d < t.getRank(); ++d)
        if (t.getDimSize(d) != types[0].getDimSize(d)) {
          if (axis && *axis != d)
            return at->emitOpError("chooses at run time among sequence "
                                   "elements whose shapes differ along more "
                                   "than one axis (")
                   << types[0] << " and " << t << ")";
          axis = d;
        }
    }
    Builder b(at->getContext());
    FailureOr<Value> pool =
        scalarOp(at, "kiln.concat", values, elt,
                 {b.getNamedAttr("axis", b.getI64IntegerAttr(*axis))});
    if (failed(pool))
      return failure();
    SmallVector<int64_t> offsets;
    int64_t offset = 0;
    for (RankedTensorType t : types) {
      offsets.push_back(offset);
      offset += t.getDimSize(*axis);
    }
    offsets.push_back(offset);
    Type i64 = b.getI64Type();
    Value start = i64Constant(at, {offsets[values.size() - 1]}, false);
    Value end = i64Constant(at, {offsets[values.size()]}, false);
    for (int64_t k = conds.size() - 1; k >= 0; --k) {
      FailureOr<Value> s = scalarOp(
          at, "kiln.where",
          {conds[k], i64Constant(at, {offsets[k]}, false), start}, i64);
      FailureOr<Value> e = scalarOp(
          at, "kiln.where",
          {conds[k], i64Constant(at, {offsets[k + 1]}, false), end}, i64);
      if (failed(s) || failed(e))
        return failure();
      start = *s;
      end = *e;
    }
    return sliceAlong(at, *pool, start, end, *axis);
  }

  /// SequenceInsert at a position known only at run time into a sequence
  /// of known elements: element i of the result is the input's element i
  /// before the position, the tensor at it, the input's element i - 1
  /// after it.
  FailureOr<SmallVector<Value>> insertAtRunTime(SequenceInsertOp op,
                                                ArrayRef<Value> list) {
    int64_t n = list.size();
    FailureOr<Value> p = runTimePosition(op, op.getPosition(), n);
    if (failed(p))
      return failure();
    SmallVector<Value> next;
    for (int64_t i = 0; i <= n; ++i) {
      SmallVector<Value> conds, values;
      if (i < n) {
        FailureOr<Value> after = compare(op, "kiln.greater", *p, i);
        if (failed(after))
          return failure();
        conds.push_back(*after);
        values.push_back(list[i]);
      }
      if (i > 0) {
        FailureOr<Value> at = compare(op, "kiln.equal", *p, i);
        if (failed(at))
          return failure();
        conds.push_back(*at);
      }
      values.push_back(op.getTensor());
      if (i > 0)
        values.push_back(list[i - 1]);
      FailureOr<Value> e = choose(op, conds, values);
      if (failed(e))
        return failure();
      next.push_back(*e);
    }
    return next;
  }

  /// SequenceErase at a position known only at run time: element i of the
  /// result is the input's element i before the position, i + 1 from it.
  FailureOr<SmallVector<Value>> eraseAtRunTime(SequenceEraseOp op,
                                               ArrayRef<Value> list) {
    int64_t n = list.size();
    FailureOr<Value> p = runTimePosition(op, op.getPosition(), n);
    if (failed(p))
      return failure();
    SmallVector<Value> next;
    for (int64_t i = 0; i + 1 < n; ++i) {
      FailureOr<Value> after = compare(op, "kiln.greater", *p, i);
      if (failed(after))
        return failure();
      FailureOr<Value> e = choose(op, {*after}, {list[i], list[i + 1]});
      if (failed(e))
        return failure();
      next.push_back(*e);
    }
    return next;
  }

  /// SequenceAt at a position known only at run time: the element there.
  FailureOr<Value> atRunTime(SequenceAtOp op, ArrayRef<Value> list) {
    int64_t n = list.size();
    FailureOr<Value> p = runTimePosition(op, op.getPosition(), n);
    if (failed(p))
      return failure();
    SmallVector<Value> conds;
    for (int64_t k = 0; k + 1 < n; ++k) {
      FailureOr<Value> c = compare(op, "kiln.equal", *p, k);
      if (failed(c))
        return failure();
      conds.push_back(*c);
    }
    return choose(op, conds, list);
  }

  /// SplitToSequence of a static input by a 1-D split of static length
  /// whose values are known only at run time: element k is the slice from
  /// the sum of the split's first k values, as long as its value k (its
  /// extent along the axis depends on the data).
  FailureOr<SmallVector<Value>> splitAtRunTime(SplitToSequenceOp op,
                                               int64_t axis) {
    auto st = cast<RankedTensorType>(op.getSplit().getType());
    FailureOr<Value> split = toI64(op, op.getSplit());
    if (failed(split))
      return failure();
    Type i64 = IntegerType::get(op->getContext(), 64);
    Value start = i64Constant(op, {0}, false);
    SmallVector<Value> parts;
    for (int64_t k = 0; k < st.getDimSize(0); ++k) {
      OpBuilder ob(op);
      auto size =
          SliceOp::create(ob, op->getLoc(), UnrankedTensorType::get(i64),
                          *split, i64Constant(op, {k}, false),
                          i64Constant(op, {k + 1}, false), Value(), Value());
      if (failed(inferUnfolded(size)))
        return failure();
      FailureOr<Value> end = scalarOp(op, "kiln.add", {start, size}, i64);
      FailureOr<Value> part =
          failed(end) ? end : sliceAlong(op, op.getInput(), start, *end, axis);
      if (failed(part))
        return failure();
      parts.push_back(*part);
      start = *end;
    }
    return parts;
  }

  /// SplitToSequence of a static input into parts of a size known only at
  /// run time (a scalar split; the last part may be shorter): as many parts
  /// as the axis has entries, part k the slice from k * size, and the
  /// length ceil(extent / size), known at run time. A size below 1 is taken
  /// as 1 (ONNX leaves it undefined).
  FailureOr<bool> splitByRunTimeSize(SplitToSequenceOp op, int64_t axis,
                                     int64_t extent) {
    if (!isa<IntegerType>(getElementTypeOrSelf(op.getSplit().getType())))
      return false;
    Type i64 = IntegerType::get(op->getContext(), 64);
    FailureOr<Value> s = toI64(op, op.getSplit());
    if (failed(s))
      return failure();
    s = scalarOp(op, "kiln.max", {*s, i64Constant(op, {1}, true)}, i64);
    if (failed(s))
      return failure();
    FailureOr<Value> rounded = scalarOp(
        op, "kiln.add", {*s, i64Constant(op, {extent - 1}, true)}, i64);
    if (failed(rounded))
      return failure();
    FailureOr<Value> length = scalarOp(op, "kiln.div", {*rounded, *s}, i64);
    if (failed(length))
      return failure();
    FailureOr<Value> step =
        scalarOp(op, "kiln.reshape", {*s, i64Constant(op, {1}, false)}, i64);
    if (failed(step))
      return failure();
    SmallVector<Value> parts;
    for (int64_t k = 0; k < extent; ++k) {
      FailureOr<Value> start =
          scalarOp(op, "kiln.mul", {*step, i64Constant(op, {k}, false)}, i64);
      FailureOr<Value> end =
          failed(start) ? start
                        : scalarOp(op, "kiln.add", {*start, *step}, i64);
      FailureOr<Value> part =
          failed(end) ? end : sliceAlong(op, op.getInput(), *start, *end, axis);
      if (failed(part))
        return failure();
      parts.push_back(*part);
    }
    sequences[op.getResult()] = parts;
    counts[op.getResult()] = *length;
    return true;
  }

  /// Whether `op` runs once per run of its function: in the function's
  /// body or in If branches there, not in a loop body. Sequences built
  /// there have one known list of elements.
  static bool runsOnce(Operation *op) {
    for (Operation *parent = op->getParentOp(); parent;
         parent = parent->getParentOp()) {
      if (isa<FunctionOpInterface>(parent))
        return true;
      if (!isa<IfOp>(parent))
        return false;
    }
    return false;
  }

  /// A copy of `body` at `b`'s insertion point, its arguments replaced by
  /// `mapping`, each op inferred in order (an op may fold away; what
  /// replaced it is used): the values the copy yields.
  FailureOr<SmallVector<Value>> inlineCopy(OpBuilder &b, Block &body,
                                           IRMapping &mapping) {
    // The terminator is copied too, so that its operands follow folds,
    // and dropped at the end.
    Operation *firstCopy = nullptr, *yieldCopy = nullptr;
    for (Operation &bodyOp : body) {
      Operation *c = b.clone(bodyOp, mapping);
      if (!firstCopy)
        firstCopy = c;
      yieldCopy = c;
    }
    for (Operation &c : llvm::make_early_inc_range(llvm::make_range(
             firstCopy->getIterator(), yieldCopy->getIterator())))
      if (failed(inferOp(&c)))
        return failure();
    SmallVector<Value> values(yieldCopy->getOperands());
    yieldCopy->erase();
    return values;
  }

  /// A SequenceMap over sequences of known elements, all of one length:
  /// its body once per element, inlined, and each result a known sequence
  /// of what the copies yield. False when a sequence is not known.
  FailureOr<bool> unrollSequenceMap(SequenceMapOp map) {
    // Copies: inferring the body's copies adds sequences to the map.
    SmallVector<std::optional<SmallVector<Value>>> lists;
    std::optional<size_t> length;
    for (Value v : map->getOperands()) {
      if (!isa<SeqType>(v.getType())) {
        lists.push_back(std::nullopt);
        continue;
      }
      auto it = sequences.find(v);
      if (it == sequences.end())
        return false;
      if (length && *length != it->second.size())
        return map.emitOpError("maps sequences of lengths ")
               << *length << " and " << it->second.size()
               << "; they must have one length";
      length = it->second.size();
      lists.push_back(it->second);
    }
    Block &body = map.getBody().front();
    if (!length)
      return false;
    if (body.getNumArguments() != map->getNumOperands())
      return map.emitOpError("has ")
             << map->getNumOperands() << " inputs but its body takes "
             << body.getNumArguments();
    SmallVector<SmallVector<Value>> results(map->getNumResults());
    OpBuilder b(map);
    for (size_t i = 0; i < *length; ++i) {
      IRMapping mapping;
      for (auto [k, arg] : llvm::enumerate(body.getArguments()))
        mapping.map(arg, lists[k] ? (*lists[k])[i] : map->getOperand(k));
      FailureOr<SmallVector<Value>> yielded = inlineCopy(b, body, mapping);
      if (failed(yielded))
        return failure();
      if (yielded->size() != map->getNumResults())
        return map.emitOpError("has ")
               << map->getNumResults() << " results but its body yields "
               << yielded->size();
      for (auto [r, v] : llvm::enumerate(*yielded))
        results[r].push_back(v);
    }
    for (auto [r, values] : llvm::enumerate(results))
      sequences[map->getResult(r)] = values;
    return true;
  }

  /// Resolves a sequence op over a sequence of known elements; false when
  /// `op` is not one or its sequence is not known.
  FailureOr<bool> resolveSequence(Operation *op) {
    auto known = [&](Value v) -> SmallVector<Value> * {
      auto it = sequences.find(v);
      return it == sequences.end() ? nullptr : &it->second;
    };
    // A sequence of run-time length has its length and passes through
    // Identity; the other ops on it stay (and fail to lower).
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return counts.contains(v); })) {
      if (auto len = dyn_cast<SequenceLengthOp>(op)) {
        len.getResult().replaceAllUsesWith(counts[len.getInputSequence()]);
        op->erase();
        return true;
      }
      auto id = dyn_cast<IdentityOp>(op);
      if (!id || !isa<SeqType>(id.getInput().getType()))
        return false;
      sequences[id.getResult()] = sequences[id.getInput()];
      counts[id.getResult()] = counts[id.getInput()];
      sequenceOps.push_back(op);
      return true;
    }
    if (auto e = dyn_cast<SequenceEmptyOp>(op)) {
      sequences[e.getResult()] = {};
    } else if (auto c = dyn_cast<SequenceConstructOp>(op)) {
      sequences[c.getResult()] = SmallVector<Value>(c.getInputs());
    } else if (auto ins = dyn_cast<SequenceInsertOp>(op)) {
      SmallVector<Value> *list = known(ins.getInputSequence());
      if (!list)
        return false;
      int64_t n = list->size();
      std::optional<int64_t> at =
          ins.getPosition() ? position(ins.getPosition(), n, true) : n;
      if (!at) {
        if (getConstantInts(ins.getPosition()))
          return false; // Out of range: the op's verifier says so.
        FailureOr<SmallVector<Value>> next = insertAtRunTime(ins, *list);
        if (failed(next))
          return failure();
        sequences[ins.getResult()] = *next;
        sequenceOps.push_back(op);
        return true;
      }
      SmallVector<Value> next(*list);
      next.insert(next.begin() + *at, ins.getTensor());
      sequences[ins.getResult()] = next;
    } else if (auto er = dyn_cast<SequenceEraseOp>(op)) {
      SmallVector<Value> *list = known(er.getInputSequence());
      if (!list || list->empty())
        return false;
      int64_t n = list->size();
      std::optional<int64_t> at =
          er.getPosition() ? position(er.getPosition(), n, false) : n - 1;
      if (!at) {
        if (getConstantInts(er.getPosition()))
          return false;
        FailureOr<SmallVector<Value>> next = eraseAtRunTime(er, *list);
        if (failed(next))
          return failure();
        sequences[er.getResult()] = *next;
        sequenceOps.push_back(op);
        return true;
      }
      SmallVector<Value> next(*list);
      next.erase(next.begin() + *at);
      sequences[er.getResult()] = next;
    } else if (auto id = dyn_cast<IdentityOp>(op);
               id && isa<SeqType>(id.getInput().getType())) {
      SmallVector<Value> *list = known(id.getInput());
      if (!list)
        return false;
      sequences[id.getResult()] = SmallVector<Value>(*list);
    } else if (auto map = dyn_cast<SequenceMapOp>(op)) {
      FailureOr<bool> unrolled = unrollSequenceMap(map);
      if (failed(unrolled) || !*unrolled)
        return unrolled;
    } else if (auto sp = dyn_cast<SplitToSequenceOp>(op)) {
      auto t = dyn_cast<RankedTensorType>(sp.getInput().getType());
      if (!t || !t.hasStaticShape())
        return false;
      int64_t axis = static_cast<int64_t>(sp.getAxis());
      if (axis < 0)
        axis += t.getRank();
      if (axis < 0 || axis >= t.getRank())
        return false;
      int64_t extent = t.getDimSize(axis);
      SmallVector<int64_t> sizes;
      bool squeeze = false;
      if (!sp.getSplit()) {
        sizes.assign(extent, 1);
        squeeze = sp.getKeepdims() == 0;
      } else {
        std::optional<SmallVector<int64_t>> split =
            getConstantInts(sp.getSplit());
        auto st = cast<ShapedType>(sp.getSplit().getType());
        if (!split && st.hasRank() && st.getRank() == 0) {
          FailureOr<bool> parts = splitByRunTimeSize(sp, axis, extent);
          if (failed(parts) || !*parts)
            return parts;
          sequenceOps.push_back(op);
          return true;
        }
        if (!split && st.hasRank() && st.getRank() == 1 &&
            st.hasStaticShape()) {
          FailureOr<SmallVector<Value>> parts = splitAtRunTime(sp, axis);
          if (failed(parts))
            return failure();
          sequences[sp.getResult()] = *parts;
          sequenceOps.push_back(op);
          return true;
        }
        if (!split)
          return false;
        if (st.getRank() == 0) {
          if ((*split)[0] <= 0)
            return false;
          for (int64_t left = extent; left > 0; left -= (*split)[0])
            sizes.push_back(std::min(left, (*split)[0]));
        } else {
          sizes.assign(split->begin(), split->end());
        }
      }
      if (sizes.empty())
        return false;
      OpBuilder b(op);
      SmallVector<Type> types(sizes.size(),
                              UnrankedTensorType::get(t.getElementType()));
      FailureOr<Operation *> split = create(
          op, "kiln.split", {sp.getInput(), i64Constant(op, sizes, false)},
          types, {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
      if (failed(split))
        return failure();
      SmallVector<Value> parts((*split)->getResults());
      if (squeeze)
        for (Value &part : parts) {
          FailureOr<Operation *> sq =
              create(op, "kiln.squeeze", {part, i64Constant(op, {axis}, false)},
                     {UnrankedTensorType::get(t.getElementType())});
          if (failed(sq))
            return failure();
          part = (*sq)->getResult(0);
        }
      sequences[sp.getResult()] = parts;
    } else if (auto at = dyn_cast<SequenceAtOp>(op)) {
      SmallVector<Value> *list = known(at.getInputSequence());
      if (!list)
        return false;
      std::optional<int64_t> i =
          position(at.getPosition(), list->size(), false);
      if (!i) {
        if (list->empty() || getConstantInts(at.getPosition()))
          return false;
        FailureOr<Value> element = atRunTime(at, *list);
        if (failed(element))
          return failure();
        at.getResult().replaceAllUsesWith(*element);
        op->erase();
        return true;
      }
      at.getResult().replaceAllUsesWith((*list)[*i]);
      op->erase();
      return true;
    } else if (auto len = dyn_cast<SequenceLengthOp>(op)) {
      SmallVector<Value> *list = known(len.getInputSequence());
      if (!list)
        return false;
      len.getResult().replaceAllUsesWith(
          i64Constant(op, {(int64_t)list->size()}, true));
      op->erase();
      return true;
    } else if (auto cat = dyn_cast<ConcatFromSequenceOp>(op)) {
      SmallVector<Value> *list = known(cat.getInputSequence());
      if (!list || list->empty())
        return false;
      SmallVector<Value> parts(*list);
      int64_t axis = cat.getAxis();
      OpBuilder b(op);
      if (cat.getNewAxis()) {
        for (Value &part : parts) {
          FailureOr<Operation *> un = create(
              op, "kiln.unsqueeze", {part, i64Constant(op, {axis}, false)},
              {UnrankedTensorType::get(getElementTypeOrSelf(part.getType()))});
          if (failed(un))
            return failure();
          part = (*un)->getResult(0);
        }
      }
      FailureOr<Operation *> concat = create(
          op, "kiln.concat", parts,
          {UnrankedTensorType::get(getElementTypeOrSelf(parts[0].getType()))},
          {b.getNamedAttr("axis", b.getI64IntegerAttr(axis))});
      if (failed(concat))
        return failure();
      cat.getResult().replaceAllUsesWith((*concat)->getResult(0));
      op->erase();
      return true;
    } else {
      return false;
    }
    sequenceOps.push_back(op);
    return true;
  }

  /// Resolves an OptionalHasElement or OptionalGetElement whose answer
  /// the graph states: no input, a plain tensor, or an Optional op with or
  /// without its input. False when `op` is not one or it does not.
  bool resolveOptional(Operation *op) {
    auto present = [&](Value v) -> std::optional<bool> {
      if (!v)
        return false;
      if (isa<TensorType, SeqType>(v.getType()))
        return true;
      if (counts.contains(v))
        return std::nullopt;
      if (auto o = v.getDefiningOp<OptionalOp>())
        return o.getInput() != nullptr;
      return std::nullopt;
    };
    if (auto has = dyn_cast<OptionalHasElementOp>(op);
        has && has.getInput() && counts.contains(has.getInput())) {
      // Present at run time: the presence (0 or 1) as a boolean.
      Builder b(op->getContext());
      FailureOr<Operation *> cast =
          create(op, "kiln.cast", {counts[has.getInput()]},
                 {RankedTensorType::get({}, b.getI1Type())},
                 {b.getNamedAttr("to", TypeAttr::get(b.getI1Type()))});
      if (failed(cast))
        return false;
      has.getOutput().replaceAllUsesWith((*cast)->getResult(0));
      op->erase();
      return true;
    }
    if (auto has = dyn_cast<OptionalHasElementOp>(op)) {
      std::optional<bool> known = present(has.getInput());
      if (!known)
        return false;
      OpBuilder b(op);
      auto type = RankedTensorType::get({}, b.getI1Type());
      Value c = ConstantOp::create(b, op->getLoc(), type,
                                   DenseElementsAttr::get(type, *known));
      has.getOutput().replaceAllUsesWith(c);
      op->erase();
      return true;
    }
    auto get = dyn_cast<OptionalGetElementOp>(op);
    if (!get)
      return false;
    Value element = get.getInput();
    if (auto o = element.getDefiningOp<OptionalOp>())
      element = o.getInput();
    if (!element || !isa<TensorType, SeqType>(element.getType()))
      return false;
    get.getOutput().replaceAllUsesWith(element);
    op->erase();
    return true;
  }

  LogicalResult inferOp(Operation *op) {
    if (resolveOptional(op))
      return success();
    if (isa<SequenceEmptyOp, SequenceConstructOp, SequenceInsertOp,
            SequenceEraseOp, SplitToSequenceOp, SequenceAtOp, SequenceLengthOp,
            ConcatFromSequenceOp, SequenceMapOp, IdentityOp>(op) &&
        runsOnce(op)) {
      FailureOr<bool> resolved = resolveSequence(op);
      if (failed(resolved))
        return failure();
      if (*resolved)
        return success();
    }
    if (auto ifOp = dyn_cast<IfOp>(op))
      return inferIf(ifOp);
    if (auto loop = dyn_cast<LoopOp>(op))
      return inferLoop(loop);
    if (auto scan = dyn_cast<ScanOp>(op))
      return inferScan(scan);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (failed(inferBlock(block)))
          return failure();
    auto iface = dyn_cast<InferResultTypesOpInterface>(op);
    if (!iface)
      return success();
    SmallVector<Type> inferred;
    if (failed(iface.inferResultTypes(inferred)))
      return failure();
    for (auto [result, want] : llvm::zip(op->getResults(), inferred))
      if (failed(refine(op, result, want,
                        "result #" + std::to_string(result.getResultNumber()))))
        return failure();
    if (auto gather = dyn_cast<GatherOp>(op); gather && foldOps)
      if (FailureOr<bool> view = gatherAsView(gather); failed(view))
        return failure();
      else if (*view)
        return success();
    if (foldOps && failed(folder->tryToFold(op)))
      evaluateConstant(op);
    return success();
  }

  /// An op of constants that its folder leaves (a weight-sized Transpose,
  /// Slice, Cast, ConstantOfShape ...) becomes the constant it computes,
  /// so that what depends on its values (a Pad's pads, a Reshape's shape)
  /// is inferred from them. DequantizeLinear waits for kiln-fold-constants,
  /// after a QDQ model's quantized groups are recognized.
  void evaluateConstant(Operation *op) {
    ConstantEvaluationOptions options;
    options.dequantize = false;
    std::optional<SmallVector<ElementsAttr>> values =
        evaluateConstantOp(op, options);
    if (!values)
      return;
    OpBuilder b(op);
    for (auto [result, value] : llvm::zip(op->getResults(), *values))
      result.replaceAllUsesWith(
          ConstantOp::create(b, op->getLoc(), result.getType(), value));
    op->erase();
  }

  /// A Gather along axis 0 of a Flatten by constant indices that are the
  /// row-major positions of a broadcast of the Flatten's input (how
  /// exporters write `mask[b, k]` for a padding mask: Gather(Flatten(mask),
  /// b * S + k)) becomes that broadcast: a Reshape of the input to the
  /// indices' rank (its dims where the indices vary with them, in order)
  /// and an Expand. True when it did; `op` is then gone.
  FailureOr<bool> gatherAsView(GatherOp gather) {
    auto flat = gather.getData().getDefiningOp<FlattenOp>();
    if (!flat || gather.getAxis() != 0)
      return false;
    auto xt = dyn_cast<RankedTensorType>(flat.getInput().getType());
    auto it = dyn_cast<RankedTensorType>(gather.getIndices().getType());
    auto rt = dyn_cast<RankedTensorType>(gather.getOutput().getType());
    if (!xt || !it || !rt || !xt.hasStaticShape() || !it.hasStaticShape() ||
        !rt.hasStaticShape())
      return false;
    std::optional<SmallVector<int64_t>> idx =
        getConstantInts(gather.getIndices());
    if (!idx || idx->empty())
      return false;
    ArrayRef<int64_t> d = xt.getShape(), s = it.getShape();
    int64_t rank = xt.getRank(), r = it.getRank();
    // The attribute is signed (-1: the last dim); its getter is unsigned.
    int64_t a = static_cast<int64_t>(flat.getAxis());
    if (a < 0)
      a += rank;
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < rank; ++k)
      (k < a ? outer : inner) *= d[k];
    for (int64_t v : *idx)
      if (v < 0 || v >= outer)
        return false;
    // Each index's coordinates along its own dims.
    auto coordinate = [&](int64_t linear, int64_t j) {
      int64_t stride = 1;
      for (int64_t t = r - 1; t > j; --t)
        stride *= s[t];
      return linear / stride % s[j];
    };
    SmallVector<int64_t> view(r, 1);
    int64_t stride = outer, last = -1;
    for (int64_t k = 0; k < a; ++k) {
      stride /= d[k];
      if (d[k] == 1)
        continue;
      int64_t found = -1;
      for (int64_t j = last + 1; j < r && found < 0; ++j) {
        if (s[j] != d[k])
          continue;
        bool all = true;
        for (int64_t i = 0; i < (int64_t)idx->size() && all; ++i)
          all = (*idx)[i] / stride % d[k] == coordinate(i, j);
        if (all)
          found = j;
      }
      if (found < 0)
        return false;
      view[found] = d[k];
      last = found;
    }
    view.push_back(inner);
    SmallVector<int64_t> want(s.begin(), s.end());
    want.push_back(inner);
    if (rt.getShape() != ArrayRef<int64_t>(want))
      return false;
    auto viewType = RankedTensorType::get(view, xt.getElementType());
    FailureOr<Operation *> reshape =
        create(gather, ReshapeOp::getOperationName(),
               {flat.getInput(), i64Constant(gather, view, false)}, {viewType});
    if (failed(reshape))
      return failure();
    FailureOr<Operation *> expand = create(
        gather, ExpandOp::getOperationName(),
        {(*reshape)->getResult(0), i64Constant(gather, want, false)}, {rt});
    if (failed(expand))
      return failure();
    gather.getOutput().replaceAllUsesWith((*expand)->getResult(0));
    gather->erase();
    return true;
  }

  /// Moves the ops of `region`'s block before `op` and replaces `op`'s
  /// results by what the block yields.
  void inlineRegion(Operation *op, Region &region) {
    Block &block = region.front();
    Operation *yield = block.getTerminator();
    SmallVector<Value> values(yield->getOperands());
    yield->erase();
    op->getBlock()->getOperations().splice(op->getIterator(),
                                           block.getOperations());
    for (auto [result, value] : llvm::zip(op->getResults(), values))
      result.replaceAllUsesWith(value);
    op->erase();
  }

  LogicalResult inferIf(IfOp op) {
    if (std::optional<bool> taken = getConstantCondition(op.getCond())) {
      Region &region = *taken ? op.getThenBranch() : op.getElseBranch();
      if (failed(inferBlock(region.front())))
        return failure();
      Operation *yield = region.front().getTerminator();
      if (yield->getNumOperands() != op->getNumResults())
        return op.emitOpError("the branch taken yields ")
               << yield->getNumOperands() << " values for "
               << op->getNumResults() << " results";
      for (auto [result, value] :
           llvm::zip(op->getResults(), yield->getOperands()))
        if (!areCompatibleTypes(value.getType(), result.getType()))
          return op.emitOpError("result #")
                 << result.getResultNumber() << " has type " << result.getType()
                 << " but the branch taken yields " << value.getType();
      inlineRegion(op, region);
      return success();
    }
    for (Region *region : {&op.getThenBranch(), &op.getElseBranch()})
      if (failed(inferBlock(region->front())))
        return failure();
    Operation *thenYield = op.getThenBranch().front().getTerminator();
    Operation *elseYield = op.getElseBranch().front().getTerminator();
    for (OpResult result : op->getResults()) {
      unsigned i = result.getResultNumber();
      if (i >= thenYield->getNumOperands() || i >= elseYield->getNumOperands())
        break;
      Type a = thenYield->getOperand(i).getType();
      Type b = elseYield->getOperand(i).getType();
      // Both branches yield one static type: the result has it.
      if (a == b &&
          failed(refine(op, result, a, "result #" + std::to_string(i))))
        return failure();
    }
    return expandSequenceResults(op);
  }

  /// The Optional op an optional value comes from, through Identity; null
  /// where the graph does not state it.
  static OptionalOp optionalOp(Value v) {
    while (auto id = v.getDefiningOp<IdentityOp>())
      v = id.getInput();
    return v.getDefiningOp<OptionalOp>();
  }

  /// What an optional value holds where the graph states it: its Optional
  /// op's input (null: absent); nullopt elsewhere.
  static std::optional<Value> optionalValue(Value v) {
    if (OptionalOp o = optionalOp(v))
      return o.getInput();
    return std::nullopt;
  }

  /// A SequenceEmpty or SequenceConstruct of `elements` at `b`, recorded
  /// as a known sequence (erased at the end if unused).
  Value knownSequence(OpBuilder &b, Location loc, Type type,
                      ArrayRef<Value> elements) {
    Value seq =
        elements.empty()
            ? SequenceEmptyOp::create(b, loc, type, /*dtype=*/IntegerAttr())
                  .getResult()
            : SequenceConstructOp::create(b, loc, type, elements).getResult();
    sequences[seq] = SmallVector<Value>(elements);
    sequenceOps.push_back(seq.getDefiningOp());
    return seq;
  }

  /// An If whose branches yield, for a sequence result, known sequences of
  /// one length and element types: the If yields their elements instead,
  /// and the result is a known sequence of its new results. For an
  /// optional result that one branch leaves absent and the other gives a
  /// tensor or a known sequence: the If yields its tensors (zeros from the
  /// absent branch) and its presence, an i64 of 0 or 1, and the result is
  /// an Optional of them present at run time (`counts`).
  LogicalResult expandSequenceResults(IfOp op) {
    if (!runsOnce(op))
      return success();
    Operation *yields[2] = {op.getThenBranch().front().getTerminator(),
                            op.getElseBranch().front().getTerminator()};
    if (yields[0]->getNumOperands() != op->getNumResults() ||
        yields[1]->getNumOperands() != op->getNumResults())
      return success();
    // Per result: how it is expanded.
    struct Expansion {
      enum Kind { Keep, Sequence, Optional } kind = Keep;
      // The values each branch yields for it (a sequence's elements, an
      // optional's tensor or elements; empty for an absent one).
      SmallVector<Value> values[2];
      bool present[2] = {true, true};
      bool heldSequence = false;
    };
    SmallVector<Expansion> plan;
    SmallVector<Type> types;
    bool any = false;
    auto sameTypes = [](ArrayRef<Value> a, ArrayRef<Value> b) {
      return a.size() == b.size() && llvm::all_of(llvm::zip(a, b), [](auto p) {
               return std::get<0>(p).getType() == std::get<1>(p).getType();
             });
    };
    for (OpResult result : op->getResults()) {
      unsigned i = result.getResultNumber();
      Expansion &e = plan.emplace_back();
      if (isa<SeqType>(result.getType())) {
        auto a = sequences.find(yields[0]->getOperand(i));
        auto b = sequences.find(yields[1]->getOperand(i));
        if (a != sequences.end() && b != sequences.end() &&
            !counts.contains(a->first) && !counts.contains(b->first) &&
            sameTypes(a->second, b->second)) {
          e.kind = Expansion::Sequence;
          e.values[0] = a->second;
          e.values[1] = b->second;
        }
      } else if (auto opt = dyn_cast<OptType>(result.getType())) {
        std::optional<Value> held[2] = {
            optionalValue(yields[0]->getOperand(i)),
            optionalValue(yields[1]->getOperand(i))};
        bool ok = held[0] && held[1];
        e.heldSequence = isa<SeqType>(opt.getValueType());
        for (unsigned r = 0; ok && r < 2; ++r) {
          e.present[r] = *held[r] != nullptr;
          if (!e.present[r])
            continue;
          if (counts.contains(*held[r])) {
            ok = false;
          } else if (e.heldSequence) {
            auto it = sequences.find(*held[r]);
            ok = it != sequences.end();
            if (ok)
              e.values[r] = it->second;
          } else {
            e.values[r] = {*held[r]};
          }
        }
        // A present branch's tensors, of static types, stand for the
        // absent branch's.
        if (ok && e.present[0] != e.present[1]) {
          unsigned from = e.present[0] ? 0 : 1;
          ok = llvm::all_of(e.values[from], [](Value v) {
            auto t = dyn_cast<RankedTensorType>(v.getType());
            return t && t.hasStaticShape();
          });
        } else {
          ok = false; // Both present or both absent: nothing at run time.
        }
        if (ok)
          e.kind = Expansion::Optional;
      }
      if (e.kind == Expansion::Keep) {
        types.push_back(result.getType());
        continue;
      }
      any = true;
      unsigned from = e.present[0] ? 0 : 1;
      for (Value v : e.values[from])
        types.push_back(v.getType());
      if (e.kind == Expansion::Optional)
        types.push_back(
            RankedTensorType::get({}, IntegerType::get(op->getContext(), 64)));
    }
    if (!any)
      return success();
    OpBuilder b(op);
    OperationState st(op.getLoc(), op->getName());
    st.addOperands(op->getOperands());
    st.addAttributes(op->getAttrs());
    st.addTypes(types);
    st.addRegion();
    st.addRegion();
    Operation *expanded = b.create(st);
    for (unsigned r = 0; r < 2; ++r) {
      expanded->getRegion(r).takeBody(op->getRegion(r));
      Operation *yield = expanded->getRegion(r).front().getTerminator();
      OpBuilder yb(yield);
      SmallVector<Value> values;
      for (auto [i, v] : llvm::enumerate(yield->getOperands())) {
        const Expansion &e = plan[i];
        if (e.kind == Expansion::Keep) {
          values.push_back(v);
          continue;
        }
        if (e.kind == Expansion::Sequence || e.present[r]) {
          llvm::append_range(values, e.values[r]);
        } else {
          for (Value w : e.values[1 - r]) {
            auto t = cast<RankedTensorType>(w.getType());
            values.push_back(ConstantOp::create(
                yb, op.getLoc(), t, cast<ElementsAttr>(yb.getZeroAttr(t))));
          }
        }
        if (e.kind == Expansion::Optional)
          values.push_back(i64Constant(yield, {e.present[r] ? 1 : 0}, true));
      }
      yield->setOperands(values);
    }
    unsigned next = 0;
    for (OpResult result : op->getResults()) {
      unsigned i = result.getResultNumber();
      const Expansion &e = plan[i];
      if (e.kind == Expansion::Keep) {
        result.replaceAllUsesWith(expanded->getResult(next++));
        continue;
      }
      size_t n = e.values[e.present[0] ? 0 : 1].size();
      ValueRange elements = expanded->getResults().slice(next, n);
      next += n;
      Value held;
      if (e.kind == Expansion::Optional && !e.heldSequence) {
        held = elements[0];
      } else {
        Type seqType = result.getType();
        if (auto opt = dyn_cast<OptType>(seqType))
          seqType = opt.getValueType();
        held = knownSequence(b, op.getLoc(), seqType,
                             SmallVector<Value>(elements));
      }
      if (e.kind == Expansion::Sequence) {
        result.replaceAllUsesWith(held);
        continue;
      }
      auto opt = OptionalOp::create(b, op.getLoc(), result.getType(), held,
                                    /*type_=*/TypeAttr());
      counts[opt.getResult()] = expanded->getResult(next++);
      result.replaceAllUsesWith(opt.getResult());
    }
    op->erase();
    return success();
  }

  /// @main's sequence results of known elements become those elements
  /// (named NAME[i]), and its optional results whose presence the graph
  /// states become their value (NAME, or a sequence's NAME[i]) or nothing,
  /// recorded in its `kiln.composites` as the importer records composite
  /// inputs.
  void flattenSequenceResults(func::FuncOp fn) {
    Operation *ret = fn.getFunctionBody().back().getTerminator();
    if (llvm::none_of(ret->getOperandTypes(),
                      [](Type t) { return isa<SeqType, OptType>(t); }))
      return;
    Builder b(fn.getContext());
    SmallVector<Value> values;
    SmallVector<DictionaryAttr> attrs;
    SmallVector<Attribute> entries;
    if (auto existing = fn->getAttrOfType<ArrayAttr>("kiln.composites"))
      llvm::append_range(entries, existing.getValue());
    for (auto [i, v] : llvm::enumerate(ret->getOperands())) {
      DictionaryAttr dict = fn.getResultAttrDict(i);
      auto keep = [&, v = v] {
        values.push_back(v);
        attrs.push_back(dict ? dict : b.getDictionaryAttr({}));
      };
      StringRef kind = "sequence";
      Value seq = v;
      bool absent = false;
      // The run-time length of a sequence, or presence of an optional.
      Value count;
      if (isa<OptType>(v.getType())) {
        OptionalOp opt = optionalOp(v);
        if (!opt) {
          keep();
          continue;
        }
        count = counts.lookup(opt.getResult());
        seq = opt.getInput();
        absent = !seq;
        Type valueType = cast<OptType>(v.getType()).getValueType();
        kind =
            isa<SeqType>(valueType) ? "optional_sequence" : "optional_tensor";
      } else if (!isa<SeqType>(v.getType())) {
        keep();
        continue;
      }
      SmallVector<Value> elements;
      if (seq && isa<SeqType>(seq.getType())) {
        auto it = sequences.find(seq);
        if (it == sequences.end() || (count && counts.contains(seq))) {
          keep();
          continue;
        }
        elements = it->second;
        if (!count)
          count = counts.lookup(seq);
      } else if (seq) {
        elements.push_back(seq);
      }
      auto named = dict ? dict.getAs<StringAttr>("kiln.name") : StringAttr();
      std::string name = named ? named.str() : "output" + std::to_string(i);
      Type valueType = v.getType();
      if (auto opt = dyn_cast<OptType>(valueType))
        valueType = opt.getValueType();
      if (auto st = dyn_cast<SeqType>(valueType))
        valueType = st.getElementType();
      SmallVector<NamedAttribute> entry = {
          b.getNamedAttr("name", b.getStringAttr(name)),
          b.getNamedAttr("output", b.getUnitAttr()),
          b.getNamedAttr("kind", b.getStringAttr(kind)),
          b.getNamedAttr("first", b.getI64IntegerAttr(values.size())),
          b.getNamedAttr("length", b.getI64IntegerAttr(elements.size())),
          b.getNamedAttr("element_type",
                         TypeAttr::get(getElementTypeOrSelf(valueType)))};
      if (absent)
        entry.push_back(b.getNamedAttr("absent", b.getUnitAttr()));
      if (count)
        entry.push_back(b.getNamedAttr("run_time_count", b.getUnitAttr()));
      entries.push_back(b.getDictionaryAttr(entry));
      for (auto [k, e] : llvm::enumerate(elements)) {
        values.push_back(e);
        std::string elementName = kind == "optional_tensor"
                                      ? name
                                      : name + "[" + std::to_string(k) + "]";
        attrs.push_back(b.getDictionaryAttr(
            {b.getNamedAttr("kiln.name", b.getStringAttr(elementName))}));
      }
      // After the tensors: how many the run gave (a sequence) or whether
      // it holds them (an optional, 1 or 0).
      if (count) {
        values.push_back(count);
        attrs.push_back(b.getDictionaryAttr({b.getNamedAttr(
            "kiln.name",
            b.getStringAttr(name +
                            (kind == "sequence" ? ".length" : ".present")))}));
      }
    }
    ret->setOperands(values);
    fn.setType(FunctionType::get(fn.getContext(),
                                 fn.getFunctionType().getInputs(),
                                 ValueRange(values).getTypes()));
    fn.setAllResultAttrs(attrs);
    fn->setAttr("kiln.composites", b.getArrayAttr(entries));
  }

  /// Refines the types a loop body's carried arguments from the values
  /// that enter the loop, infers the body, and checks that each carried
  /// value keeps its type from one iteration to the next.
  LogicalResult inferCarried(Operation *op, Block &body, ValueRange initial,
                             unsigned firstArg, unsigned firstYield) {
    // Sequences and optionals are passed through as they are.
    auto isTensor = [](Type t) { return isa<TensorType>(t); };
    for (auto [i, init] : llvm::enumerate(initial)) {
      if (firstArg + i >= body.getNumArguments())
        break;
      BlockArgument arg = body.getArgument(firstArg + i);
      if (!isTensor(arg.getType()) || !isTensor(init.getType()))
        continue;
      if (failed(refine(op, arg, init.getType(),
                        "body argument #" + std::to_string(firstArg + i))))
        return failure();
    }
    if (failed(inferBlock(body)))
      return failure();
    Operation *yield = body.getTerminator();
    for (auto [i, init] : llvm::enumerate(initial)) {
      if (firstYield + i >= yield->getNumOperands())
        break;
      Type next = yield->getOperand(firstYield + i).getType();
      if (isTensor(next) && isTensor(init.getType()) &&
          !areCompatibleTypes(next, init.getType()))
        return op->emitOpError("carried value #")
               << i << " enters the loop as " << init.getType()
               << " but the body yields " << next
               << ": a loop-carried value that changes shape between "
                  "iterations is not supported";
    }
    return success();
  }

  LogicalResult inferLoop(LoopOp op) {
    Block &body = op.getBody().front();
    ValueRange initial = op.getVInitial();
    if (failed(inferCarried(op, body, initial, /*firstArg=*/2,
                            /*firstYield=*/1)))
      return failure();
    FailureOr<bool> unrolled = unrollSequenceLoop(op);
    if (succeeded(unrolled) && !*unrolled)
      unrolled = unrollBoundedSequenceLoop(op);
    if (failed(unrolled) || *unrolled)
      return failure(failed(unrolled));
    Operation *yield = body.getTerminator();
    int64_t trips = getLoopTripCount(op).value_or(ShapedType::kDynamic);
    unsigned carried = initial.size();
    for (OpResult result : op->getResults()) {
      unsigned i = result.getResultNumber();
      if (1 + i >= yield->getNumOperands())
        break;
      Type y = yield->getOperand(1 + i).getType();
      Type want = i < carried ? y : withDim(y, 0, trips);
      if (failed(refine(op, result, want, "result #" + std::to_string(i))))
        return failure();
    }
    return success();
  }

  /// The most iterations of a loop over sequences that are unrolled.
  static constexpr int64_t kMaxUnrolledTrips = 4096;

  /// A Loop that reads or carries sequences, runs once per run of its
  /// function, has a trip count known at compile time (a constant M, the
  /// condition constant true) and no scan outputs (SequenceMap's expanded
  /// form, say): its body once per iteration, inlined, so that the
  /// sequences it builds and the positions it reads are known. False when
  /// the loop is not one.
  FailureOr<bool> unrollSequenceLoop(LoopOp op) {
    Block &body = op.getBody().front();
    Operation *yield = body.getTerminator();
    unsigned carried = op.getVInitial().size();
    auto isSeq = [](Value v) { return isa<SeqType>(v.getType()); };
    bool readsSequences = llvm::any_of(op.getVInitial(), isSeq);
    body.walk([&](Operation *inner) {
      readsSequences |= llvm::any_of(inner->getOperands(), isSeq);
    });
    std::optional<int64_t> trips = getLoopTripCount(op);
    if (!readsSequences || !runsOnce(op) || !trips ||
        *trips > kMaxUnrolledTrips || op->getNumResults() != carried ||
        yield->getNumOperands() != 1 + carried ||
        body.getNumArguments() != 2 + carried)
      return false;
    OpBuilder b(op);
    auto boolType = RankedTensorType::get({}, b.getI1Type());
    Value cond =
        op.getCond()
            ? op.getCond()
            : ConstantOp::create(b, op.getLoc(), boolType,
                                 DenseElementsAttr::get(boolType, true))
                  .getResult();
    SmallVector<Value> current(op.getVInitial());
    for (int64_t i = 0; i < *trips; ++i) {
      IRMapping mapping;
      Value iter = i64Constant(op, {i}, /*scalar=*/true);
      if (iter.getType() != body.getArgument(0).getType())
        return false;
      mapping.map(body.getArgument(0), iter);
      mapping.map(body.getArgument(1), cond);
      for (unsigned k = 0; k < carried; ++k)
        mapping.map(body.getArgument(2 + k), current[k]);
      FailureOr<SmallVector<Value>> yielded = inlineCopy(b, body, mapping);
      if (failed(yielded))
        return failure();
      for (unsigned k = 0; k < carried; ++k)
        current[k] = (*yielded)[1 + k];
    }
    for (unsigned k = 0; k < carried; ++k)
      op->getResult(k).replaceAllUsesWith(current[k]);
    op->erase();
    return true;
  }

  /// The elements of a known sequence of compile-time length, or of an
  /// optional whose presence the graph states holding one (none when
  /// absent); nullopt otherwise.
  std::optional<SmallVector<Value>> knownElements(Value v) {
    if (isa<OptType>(v.getType())) {
      OptionalOp opt = optionalOp(v);
      if (!opt || counts.contains(opt.getResult()))
        return std::nullopt;
      if (!opt.getInput())
        return SmallVector<Value>();
      v = opt.getInput();
    }
    auto it = sequences.find(v);
    if (!isa<SeqType>(v.getType()) || it == sequences.end() ||
        counts.contains(v))
      return std::nullopt;
    return it->second;
  }

  /// The bound of `unrollBoundedSequenceLoop`: the module's
  /// `kiln.max_sequence_loop_trips` (kiln-compile
  /// --max-sequence-loop-trips), else the pass option.
  int64_t sequenceLoopBound(Operation *op) {
    if (auto module = op->getParentOfType<ModuleOp>())
      if (auto a = module->getAttrOfType<IntegerAttr>(
              "kiln.max_sequence_loop_trips"))
        return a.getInt();
    return maxSequenceLoopTrips;
  }

  /// A Loop that runs once per run of its function, whose trip count or
  /// condition is known only at run time, that carries static tensors and
  /// known sequences it only appends to, and whose sequences @main
  /// returns: its body `sequenceLoopBound` times, inlined, iteration i
  /// running (its carried tensors taken, its appends counted) where the
  /// ones before ran, its condition held and i < M. Each sequence result
  /// has every element an iteration could append and a run-time length;
  /// where the loop would run beyond the bound, that length is one more
  /// than its elements, which the runtime refuses. False when the loop is
  /// not one.
  FailureOr<bool> unrollBoundedSequenceLoop(LoopOp op) {
    Block &body = op.getBody().front();
    Operation *yield = body.getTerminator();
    unsigned carried = op.getVInitial().size();
    int64_t bound = sequenceLoopBound(op);
    if (bound <= 0 || bound > kMaxUnrolledTrips || !runsOnce(op) ||
        getLoopTripCount(op) || op->getNumResults() != carried ||
        yield->getNumOperands() != 1 + carried ||
        body.getNumArguments() != 2 + carried ||
        body.getArgument(0).getType() !=
            RankedTensorType::get({}, IntegerType::get(op->getContext(), 64)))
      return false;
    // What it carries: static tensors, and known sequences (or optionals
    // of one, or absent, that become sequences) whose results only the
    // function returns.
    bool anySequence = false;
    SmallVector<SmallVector<Value>> lists(carried);
    for (auto [k, init] : llvm::enumerate(op.getVInitial())) {
      if (isa<SeqType, OptType>(init.getType())) {
        std::optional<SmallVector<Value>> list = knownElements(init);
        if (!list || !isa<SeqType>(op->getResult(k).getType()) ||
            llvm::any_of(op->getResult(k).getUsers(),
                         [](Operation *u) { return !isa<func::ReturnOp>(u); }))
          return false;
        lists[k] = *list;
        anySequence = true;
        continue;
      }
      auto t = dyn_cast<RankedTensorType>(init.getType());
      if (!t || !t.hasStaticShape())
        return false;
    }
    // Only @main's results carry a run-time length (its signature).
    auto fn = op->getParentOfType<func::FuncOp>();
    if (!anySequence || !fn || fn.getSymName() != "main")
      return false;
    Builder b(op->getContext());
    Type i1 = b.getI1Type(), i64 = b.getI64Type();
    // The trip count M as a rank-0 i64 (none: no bound).
    FailureOr<Value> m = Value();
    if (Value tripCount = op.getM()) {
      auto mt = dyn_cast<RankedTensorType>(tripCount.getType());
      if (!mt || !mt.hasStaticShape() || mt.getNumElements() != 1)
        return false;
      m = scalarI64(op, tripCount);
      if (failed(m))
        return failure();
    }
    auto boolType = RankedTensorType::get({}, i1);
    Value cond = op.getCond();
    if (!cond) {
      OpBuilder ob(op);
      cond = ConstantOp::create(ob, op.getLoc(), boolType,
                                DenseElementsAttr::get(boolType, true));
    }
    // Whether iteration i runs, given that i - 1 did and `c` holds.
    auto runs = [&](Value before, Value c, int64_t i) -> FailureOr<Value> {
      FailureOr<Value> r = c;
      if (before)
        r = scalarOp(op, "kiln.and", {before, c}, i1);
      if (succeeded(r) && *m) {
        FailureOr<Value> below =
            scalarOp(op, "kiln.less", {i64Constant(op, {i}, true), *m}, i1);
        r = failed(below) ? below : scalarOp(op, "kiln.and", {*r, *below}, i1);
      }
      return r;
    };
    FailureOr<Value> active = runs(Value(), cond, 0);
    if (failed(active))
      return failure();
    // Per carried value: a tensor's value, or a sequence's elements and
    // run-time length.
    SmallVector<Value> current(op.getVInitial());
    SmallVector<Value> lengths(carried);
    for (auto [k, init] : llvm::enumerate(op.getVInitial()))
      if (isa<SeqType, OptType>(init.getType()))
        lengths[k] = i64Constant(op, {(int64_t)lists[k].size()}, true);
    OpBuilder ob(op);
    for (int64_t i = 0; i < bound; ++i) {
      IRMapping mapping;
      mapping.map(body.getArgument(0), i64Constant(op, {i}, /*scalar=*/true));
      mapping.map(body.getArgument(1), cond);
      // An iteration runs only where the ones before did: it sees what
      // they made (an optional present after the first).
      for (unsigned k = 0; k < carried; ++k) {
        Value arg = current[k];
        if (lengths[k] && i > 0) {
          Type type = body.getArgument(2 + k).getType();
          auto opt = dyn_cast<OptType>(type);
          arg = knownSequence(ob, op.getLoc(), opt ? opt.getValueType() : type,
                              lists[k]);
          if (opt)
            arg = OptionalOp::create(ob, op.getLoc(), opt, arg,
                                     /*type_=*/TypeAttr());
        }
        mapping.map(body.getArgument(2 + k), arg);
      }
      FailureOr<SmallVector<Value>> yielded = inlineCopy(ob, body, mapping);
      if (failed(yielded))
        return failure();
      for (unsigned k = 0; k < carried; ++k) {
        Value y = (*yielded)[1 + k];
        if (!lengths[k]) {
          if (y.getType() != current[k].getType())
            return op.emitOpError("carried value #")
                   << k << " is " << current[k].getType()
                   << " before an iteration and " << y.getType() << " after it";
          FailureOr<Value> next =
              scalarOp(op, "kiln.where", {*active, y, current[k]},
                       getElementTypeOrSelf(y.getType()));
          if (failed(next))
            return failure();
          current[k] = *next;
          continue;
        }
        // A sequence: kept, or appended to.
        std::optional<SmallVector<Value>> made = knownElements(y);
        size_t n = lists[k].size();
        if (!made || made->size() < n ||
            !llvm::equal(ArrayRef<Value>(*made).take_front(n), lists[k]))
          return op.emitOpError("carried sequence #")
                 << k
                 << " changes other than by appending in an iteration; "
                    "with a trip count known only at run time, Kiln "
                    "supports loops that append (pin the trip count with "
                    "--input-value)";
        if (made->size() > n) {
          FailureOr<Value> grown =
              scalarOp(op, "kiln.add",
                       {lengths[k],
                        i64Constant(op, {(int64_t)(made->size() - n)}, true)},
                       i64);
          FailureOr<Value> next =
              failed(grown) ? grown
                            : scalarOp(op, "kiln.where",
                                       {*active, *grown, lengths[k]}, i64);
          if (failed(next))
            return failure();
          lengths[k] = *next;
          lists[k] = *made;
        }
      }
      cond = (*yielded)[0];
      active = runs(*active, cond, i + 1);
      if (failed(active))
        return failure();
    }
    // `active` now says whether iteration `bound` would run: then each
    // sequence's length is one more than its elements.
    for (unsigned k = 0; k < carried; ++k) {
      Value result = op->getResult(k);
      if (!lengths[k]) {
        result.replaceAllUsesWith(current[k]);
        continue;
      }
      FailureOr<Value> length = scalarOp(
          op, "kiln.where",
          {*active, i64Constant(op, {(int64_t)lists[k].size() + 1}, true),
           lengths[k]},
          i64);
      if (failed(length))
        return failure();
      Value seq = knownSequence(ob, op.getLoc(), result.getType(), lists[k]);
      counts[seq] = *length;
      result.replaceAllUsesWith(seq);
    }
    op->erase();
    return true;
  }

  LogicalResult inferScan(ScanOp op) {
    Block &body = op.getBody().front();
    ValueRange operands = op.getInitialStateAndScanInputs();
    int64_t numScan = op.getNumScanInputs();
    if (numScan < 0 || numScan > static_cast<int64_t>(operands.size()))
      return op.emitOpError("num_scan_inputs ")
             << numScan << " is out of range for " << operands.size()
             << " inputs";
    unsigned states = operands.size() - numScan;
    auto attrAt = [](std::optional<ArrayRef<int64_t>> a, size_t i) {
      return a && i < a->size() ? (*a)[i] : 0;
    };
    // The scan inputs' slices, and the number of iterations.
    int64_t trips = ShapedType::kDynamic;
    for (int64_t j = 0; j < numScan; ++j) {
      Value in = operands[states + j];
      auto t = dyn_cast<RankedTensorType>(in.getType());
      if (!t || states + j >= body.getNumArguments())
        continue;
      int64_t axis = attrAt(op.getScanInputAxes(), j);
      if (axis < 0)
        axis += t.getRank();
      if (axis < 0 || axis >= t.getRank())
        return op.emitOpError("scan input #")
               << j << ": axis " << attrAt(op.getScanInputAxes(), j)
               << " is out of range for rank " << t.getRank();
      if (!t.isDynamicDim(axis)) {
        if (trips != ShapedType::kDynamic && trips != t.getDimSize(axis))
          return op.emitOpError("scan inputs have different lengths (")
                 << trips << " and " << t.getDimSize(axis) << ")";
        trips = t.getDimSize(axis);
      }
      BlockArgument arg = body.getArgument(states + j);
      if (failed(refine(op, arg, withoutDim(t, axis),
                        "body argument #" + std::to_string(states + j))))
        return failure();
    }
    if (failed(inferCarried(op, body, operands.take_front(states), 0, 0)))
      return failure();
    Operation *yield = body.getTerminator();
    for (OpResult result : op->getResults()) {
      unsigned i = result.getResultNumber();
      if (i >= yield->getNumOperands())
        break;
      Type y = yield->getOperand(i).getType();
      Type want = y;
      if (i >= states) {
        auto r = dyn_cast<RankedTensorType>(y);
        if (!r)
          continue;
        int64_t axis = attrAt(op.getScanOutputAxes(), i - states);
        if (axis < 0)
          axis += r.getRank() + 1;
        if (axis < 0 || axis > r.getRank())
          return op.emitOpError("scan output #")
                 << i - states << ": axis "
                 << attrAt(op.getScanOutputAxes(), i - states)
                 << " is out of range for rank " << r.getRank() + 1;
        want = withDim(y, axis, trips);
      }
      if (failed(refine(op, result, want, "result #" + std::to_string(i))))
        return failure();
    }
    return success();
  }
};
} // namespace
