//===- LengthRange.cpp - kiln-compile for a range of lengths --------------===//
//
// See LengthRange.h.
//
//===----------------------------------------------------------------------===//

#include "LengthRange.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Import/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace mlir;

namespace kiln::compile {

std::vector<int64_t>
lengthBuckets(int64_t min, int64_t max, int64_t opt,
              const std::vector<int64_t> &explicitBuckets) {
  std::vector<int64_t> b = explicitBuckets;
  b.push_back(opt);
  if (explicitBuckets.empty()) {
    b.push_back(min);
    for (int64_t p = 1; p < max; p *= 2)
      if (p > min)
        b.push_back(p);
  }
  b.push_back(max);
  llvm::sort(b);
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

namespace {

std::string nodeName(Operation *op) {
  Location loc = op->getLoc();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(l))
        return name.getName().str();
  return "";
}

std::string where(Operation *op) {
  std::string name = nodeName(op);
  std::string s;
  llvm::raw_string_ostream os(s);
  if (!name.empty())
    os << "node '" << name << "' (" << op->getName() << ")";
  else
    os << "'" << op->getName() << "' at " << op->getLoc();
  return s;
}

int64_t normalized(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Ops that compute each element from the elements at the same (or
/// broadcast) index of their operands.
bool isPointwise(StringRef name) {
  static const llvm::StringSet<> ops = {
      // ONNX's unary elementwise ops (inferRule "Same", none with an axis).
      "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_not",
      "ceil", "celu", "clip", "cos", "cosh", "elu", "erf", "exp", "floor",
      "gelu", "hard_sigmoid", "hard_swish", "identity", "leaky_relu", "log",
      "mish", "neg", "not", "reciprocal", "relu", "round", "selu", "shrink",
      "sigmoid", "sign", "sin", "sinh", "softplus", "softsign", "sqrt", "swish",
      "tan", "tanh", "thresholded_relu",
      // Broadcasting binary and variadic ops, comparisons.
      "add", "bit_shift", "bitwise_and", "bitwise_or", "bitwise_xor", "div",
      "max", "mean", "min", "mod", "mul", "prelu", "pow", "sub", "sum", "and",
      "equal", "greater", "greater_or_equal", "less", "less_or_equal", "or",
      "xor",
      // Others without a view across elements.
      "cast", "cast_like", "dropout", "is_inf", "is_nan", "where", "bit_cast",
      "batch_normalization"};
  return name.consume_front("kiln.") && ops.contains(name);
}

/// The bytes of a constant's elements, row-major, one element per
/// `elementBytes`; false for splats, bools and other attributes.
bool rawElements(Attribute value, ArrayRef<char> &data, size_t &elementBytes) {
  auto type = dyn_cast<ShapedType>(cast<TypedAttr>(value).getType());
  if (!type || !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8)
    return false;
  elementBytes = type.getElementTypeBitWidth() / 8;
  if (auto r = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = r.getRawHandle().getBlob();
    if (!blob)
      return false;
    data = blob->getData();
  } else if (auto d = dyn_cast<DenseIntOrFPElementsAttr>(value)) {
    if (d.isSplat())
      return false;
    data = d.getRawData();
  } else {
    return false;
  }
  return data.size() ==
         elementBytes * static_cast<size_t>(type.getNumElements());
}

/// Whether two constants of one type hold the same values (two imports'
/// resources are two resources: their bytes are compared).
bool sameValues(Attribute a, Attribute b) {
  if (a == b)
    return true;
  ArrayRef<char> x, y;
  size_t ex = 0, ey = 0;
  if (rawElements(a, x, ex) && rawElements(b, y, ey))
    return ex == ey && x.size() == y.size() &&
           std::memcmp(x.data(), y.data(), x.size()) == 0;
  auto da = dyn_cast<DenseElementsAttr>(a), db = dyn_cast<DenseElementsAttr>(b);
  return da && db && da.getType() == db.getType() &&
         llvm::equal(da.getValues<Attribute>(), db.getValues<Attribute>());
}

/// Whether `a` (at the shorter length) holds the values `b` holds at the
/// same indices: `b`'s shape is `a`'s with the length dims longer.
bool prefixEqual(Attribute a, Attribute b) {
  auto ta = cast<ShapedType>(cast<TypedAttr>(a).getType());
  auto tb = cast<ShapedType>(cast<TypedAttr>(b).getType());
  auto da = dyn_cast<DenseElementsAttr>(a), db = dyn_cast<DenseElementsAttr>(b);
  if (da && db && da.isSplat() && db.isSplat())
    return da.getSplatValue<Attribute>() == db.getSplatValue<Attribute>();
  int64_t rank = ta.getRank(), n = ta.getNumElements();
  auto linearIn = [&](ArrayRef<int64_t> index) {
    int64_t linear = 0;
    for (int64_t d = 0; d < rank; ++d)
      linear = linear * tb.getDimSize(d) + index[d];
    return linear;
  };
  auto next = [&](SmallVectorImpl<int64_t> &index) {
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < ta.getDimSize(d))
        return;
      index[d] = 0;
    }
  };
  SmallVector<int64_t> index(rank, 0);
  ArrayRef<char> x, y;
  size_t ex = 0, ey = 0;
  if (rawElements(a, x, ex) && rawElements(b, y, ey) && ex == ey) {
    for (int64_t i = 0; i < n; ++i, next(index))
      if (std::memcmp(x.data() + i * ex, y.data() + linearIn(index) * ex, ex))
        return false;
    return true;
  }
  if (!da || !db)
    return false;
  auto va = da.getValues<Attribute>();
  auto vb = db.getValues<Attribute>();
  for (int64_t i = 0; i < n; ++i, next(index))
    if (va[i] != vb[linearIn(index)])
      return false;
  return true;
}

using Dims = SmallVector<int64_t, 2>;

struct Walker {
  int64_t a, b;                           // the two lengths
  llvm::DenseMap<Value, Dims> length;     // values with length dims
  llvm::DenseSet<Value> lengthValued;     // values that hold the length
  llvm::DenseMap<Value, Dims> zeroPadded; // dims whose padded entries are 0
  LengthPlan &plan;
  std::string &error;

  Walker(int64_t a, int64_t b, LengthPlan &plan, std::string &error)
      : a(a), b(b), plan(plan), error(error) {}

  // Constants as the op being checked reads them (see step).
  llvm::DenseMap<Value, Dims> useLen;
  llvm::DenseSet<Value> useValued;

  const Dims *lenOf(Value v) const {
    auto u = useLen.find(v);
    if (u != useLen.end())
      return &u->second;
    auto it = length.find(v);
    return it == length.end() ? nullptr : &it->second;
  }
  bool isLen(Value v, int64_t dim) const {
    const Dims *d = lenOf(v);
    return d && llvm::is_contained(*d, dim);
  }
  bool fail(Operation *op, const std::string &why) {
    error = where(op) + " " + why +
            ": a length range needs each position computed from the same "
            "position of its operands (see docs/cli.md, --input-shape)";
    return false;
  }

  /// Checks an op some of whose operands have length dims.
  bool checkOp(Operation *op, Operation *other) {
    StringRef name = op->getName().getStringRef();
    if (op->getNumRegions())
      return fail(op, "runs regions on values shaped by the length");
    if (isPointwise(name)) {
      // Zeros stay zeros through a Cast, a Dropout and an Identity, and
      // through a Where that picks them or zeros (SDPA's NaN guard).
      if ((name == "kiln.cast" || name == "kiln.dropout" ||
           name == "kiln.identity") &&
          zeroPadded.count(op->getOperand(0)))
        zeroPadded[op->getResult(0)] = zeroPadded[op->getOperand(0)];
      if (name == "kiln.where")
        for (int side : {1, 2}) {
          DenseElementsAttr other;
          Value v = op->getOperand(side);
          if (zeroPadded.count(v) &&
              matchPattern(op->getOperand(3 - side), m_Constant(&other)) &&
              other.isSplat() && isa<FloatType>(other.getElementType()) &&
              other.getSplatValue<APFloat>().isZero() &&
              op->getResult(0).getType() == v.getType())
            zeroPadded[op->getResult(0)] = zeroPadded[v];
        }
      return true;
    }
    Value x = op->getNumOperands() ? op->getOperand(0) : Value();
    auto rankOf = [](Value v) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      return t ? t.getRank() : 0;
    };
    auto intAttr = [&](StringRef attr, int64_t dflt) {
      auto i = op->getAttrOfType<IntegerAttr>(attr);
      return i ? i.getInt() : dflt;
    };
    if (name == "kiln.softmax" || name == "kiln.log_softmax" ||
        name == "kiln.hardmax") {
      int64_t axis = normalized(intAttr("axis", -1), rankOf(x));
      if (!isLen(x, axis))
        return true;
      if (name != "kiln.softmax")
        return fail(op, "normalizes over positions");
      std::string n = nodeName(op);
      if (n.empty() || nodeName(other) != n)
        return fail(op, "normalizes over positions and has no name to mask "
                        "it by");
      plan.masks.push_back({n, axis});
      zeroPadded[op->getResult(0)] = {axis};
      return true;
    }
    if (name == "kiln.matmul" || name == "kiln.matmul_integer" ||
        name == "kiln.qlinear_matmul" || name == "kiln.gemm") {
      bool qlinear = name == "kiln.qlinear_matmul";
      Value lhs = op->getOperand(0), rhs = op->getOperand(qlinear ? 3 : 1);
      int64_t ra = rankOf(lhs), rb = rankOf(rhs);
      int64_t ka = ra - 1, kb = rb == 1 ? 0 : rb - 2;
      if (name == "kiln.gemm") {
        ka = intAttr("transA", 0) ? 0 : 1;
        kb = intAttr("transB", 0) ? 1 : 0;
      }
      if (!isLen(lhs, ka) && !isLen(rhs, kb))
        return true;
      auto zp = zeroPadded.find(lhs);
      if (zp != zeroPadded.end() && llvm::is_contained(zp->second, ka))
        return true;
      return fail(op, "sums over positions whose padded entries are not "
                      "known to be zero (only a Softmax over positions, "
                      "masked, gives such)");
    }
    if (name == "kiln.reshape" || name == "kiln.transpose" ||
        name == "kiln.squeeze" || name == "kiln.unsqueeze" ||
        name == "kiln.expand" || name == "kiln.flatten" ||
        name == "kiln.tile" || name == "kiln.pad") {
      // Where the length dims go is what the types say (checked for every
      // result); a Transpose moves zero-padded dims along.
      if (name == "kiln.transpose" && zeroPadded.count(x))
        if (auto perm = op->getAttrOfType<DenseI64ArrayAttr>("perm")) {
          Dims moved;
          for (auto [i, p] : llvm::enumerate(perm.asArrayRef()))
            if (llvm::is_contained(zeroPadded[x], p))
              moved.push_back(static_cast<int64_t>(i));
          zeroPadded[op->getResult(0)] = moved;
        }
      return true;
    }
    if (name == "kiln.concat" || name == "kiln.split" ||
        name == "kiln.argmax" || name == "kiln.argmin" || name == "kiln.topk" ||
        name == "kiln.quantize_linear" || name == "kiln.dequantize_linear") {
      int64_t dflt = name == "kiln.topk" ? -1 : 0;
      bool per =
          name == "kiln.quantize_linear" || name == "kiln.dequantize_linear";
      if (per) {
        // Per tensor (a scalar scale) reads no axis.
        auto st = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
        if (st && st.getNumElements() == 1)
          return true;
        dflt = 1;
      }
      for (Value v : op->getOperands())
        if (isLen(v, normalized(intAttr("axis", dflt), rankOf(v))))
          return fail(op, "works along positions");
      return true;
    }
    if (name == "kiln.layer_normalization" ||
        name == "kiln.rms_normalization") {
      int64_t r = rankOf(x);
      for (int64_t d = normalized(intAttr("axis", -1), r); d < r; ++d)
        if (isLen(x, d))
          return fail(op, "normalizes over positions");
      return true;
    }
    if (name.starts_with("kiln.reduce_")) {
      std::optional<SmallVector<int64_t>> axes;
      if (op->getNumOperands() > 1 && op->getOperand(1))
        axes = getConstantInts(op->getOperand(1));
      else if (auto attr = op->getAttrOfType<ArrayAttr>("axes")) {
        axes.emplace();
        for (Attribute e : attr)
          axes->push_back(cast<IntegerAttr>(e).getInt());
      } else if (auto arr = op->getAttrOfType<DenseI64ArrayAttr>("axes")) {
        axes.emplace(arr.asArrayRef());
      }
      if (!axes)
        return fail(op, "reduces over axes known only at run time");
      if (axes->empty())
        return fail(op, "reduces over every axis, positions among them");
      for (int64_t ax : *axes)
        if (isLen(x, normalized(ax, rankOf(x))))
          return fail(op, "reduces over positions");
      return true;
    }
    if (name == "kiln.gather") {
      int64_t axis = normalized(intAttr("axis", 0), rankOf(x));
      if (!isLen(x, axis))
        return true;
      // Positions picked by constant indices below the shortest length.
      auto idx = getConstantInts(op->getOperand(1));
      if (!idx || lenOf(op->getOperand(1)))
        return fail(op, "gathers positions by indices known only at run "
                        "time");
      for (int64_t i : *idx)
        if (i < 0 || i >= a)
          return fail(op, "gathers position " + std::to_string(i) +
                              ", which a run of the shortest length does "
                              "not have");
      return true;
    }
    if (name == "kiln.gather_elements") {
      // out[.., j, ..] = data[.., index[.., j, ..], ..] along `axis`: per
      // position of the index, unless the data has the length there.
      int64_t axis = normalized(intAttr("axis", 0), rankOf(x));
      if (isLen(x, axis))
        return fail(op, "gathers positions by indices known only at run "
                        "time");
      return true;
    }
    if (name == "kiln.slice") {
      // Along a length dim a Slice must keep positions where they are:
      // start 0, step 1.
      int64_t r = rankOf(x);
      if (op->getNumOperands() < 3)
        return fail(op, "slices with starts known only at run time");
      auto starts = getConstantInts(op->getOperand(1));
      std::optional<SmallVector<int64_t>> axes, steps;
      if (op->getNumOperands() > 3 && op->getOperand(3))
        axes = getConstantInts(op->getOperand(3));
      else
        axes =
            llvm::to_vector(llvm::seq<int64_t>(0, starts ? starts->size() : 0));
      if (op->getNumOperands() > 4 && op->getOperand(4))
        steps = getConstantInts(op->getOperand(4));
      if (!starts || !axes ||
          (op->getNumOperands() > 4 && op->getOperand(4) && !steps))
        return fail(op, "slices by values known only at run time");
      for (auto [i, ax] : llvm::enumerate(*axes)) {
        int64_t d = normalized(ax, r);
        if (!isLen(x, d))
          continue;
        int64_t step = steps ? (*steps)[i] : 1;
        if ((*starts)[i] != 0 || step != 1)
          return fail(op, "moves positions (it slices the length from " +
                              std::to_string((*starts)[i]) + " by " +
                              std::to_string(step) + ")");
      }
      return true;
    }
    if (name == "kiln.shape" || name == "kiln.size")
      return true; // its result holds the length (lengthValued)
    if (name == "kiln.attention")
      return fail(op, "is an ONNX Attention op; a length range takes "
                      "attention as the decomposed MatMul/Softmax/MatMul "
                      "the exporters write");
    return fail(op, "is not known to compute each position on its own");
  }

  /// Whether an op may read the length as a value from operand `i`.
  static bool readsLengthAsShape(Operation *op, unsigned i) {
    StringRef name = op->getName().getStringRef();
    return ((name == "kiln.reshape" || name == "kiln.expand" ||
             name == "kiln.tile") &&
            i == 1) ||
           (name == "kiln.slice" && i == 2) ||
           (name == "kiln.range" && i == 1) ||
           (name == "kiln.constant_of_shape" && i == 0);
  }

  /// The length dims of `ra` (a value at length a) against `rb` (at b):
  /// the dims that are a at one and b at the other. None, after `fail`,
  /// where a dim changes otherwise.
  std::optional<Dims> dimsOf(Operation *op, Value ra, Value rb) {
    auto ta = dyn_cast<RankedTensorType>(ra.getType());
    auto tb = dyn_cast<RankedTensorType>(rb.getType());
    if (ra.getType() != rb.getType() &&
        (!ta || !tb || ta.getRank() != tb.getRank() ||
         ta.getElementType() != tb.getElementType())) {
      fail(op, "computes values of other kinds at two lengths");
      return std::nullopt;
    }
    Dims dims;
    if (ta && tb)
      for (int64_t d = 0; d < ta.getRank(); ++d) {
        int64_t x = ta.getDimSize(d), y = tb.getDimSize(d);
        if (x == y)
          continue;
        if (x != a || y != b) {
          fail(op, "computes or reads a value whose dim " + std::to_string(d) +
                       " depends on the length but is not the length (" +
                       typeString(ta) + " at length " + std::to_string(a) +
                       ", " + typeString(tb) + " at " + std::to_string(b) +
                       ")");
          return std::nullopt;
        }
        dims.push_back(d);
      }
    return dims;
  }

  bool valued(Value v) const {
    return lengthValued.contains(v) || useValued.contains(v);
  }

  bool step(Operation *opA, Operation *opB) {
    // Constants are judged where they are used (the two imports share
    // equal constants differently): shaped by the length, they must agree
    // on the first positions; the same shape with other values holds the
    // length.
    useLen.clear();
    useValued.clear();
    for (auto [va, vb] : llvm::zip(opA->getOperands(), opB->getOperands())) {
      Attribute ca, cb;
      if (!matchPattern(va, m_Constant(&ca)) ||
          !matchPattern(vb, m_Constant(&cb)))
        continue;
      std::optional<Dims> dims = dimsOf(opA, va, vb);
      if (!dims)
        return false;
      if (dims->empty()) {
        if (!sameValues(ca, cb))
          useValued.insert(va);
      } else if (!prefixEqual(ca, cb)) {
        return fail(opA, "reads a constant shaped by the length whose first "
                         "positions differ between lengths");
      } else {
        useLen[va] = *dims;
      }
    }
    bool hasLen = false;
    for (auto [i, v] : llvm::enumerate(opA->getOperands())) {
      if (lenOf(v))
        hasLen = true;
      if (valued(v) && !readsLengthAsShape(opA, i))
        return fail(opA, "uses the length as a number");
    }
    if (opA->getNumRegions())
      opA->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (lenOf(v) || valued(v))
            hasLen = true;
      });
    if (hasLen && !checkOp(opA, opB))
      return false;
    StringRef name = opA->getName().getStringRef();
    bool readsLength =
        llvm::any_of(opA->getOperands(), [&](Value v) { return valued(v); });
    for (auto [ra, rb] : llvm::zip(opA->getResults(), opB->getResults())) {
      std::optional<Dims> dims = dimsOf(opA, ra, rb);
      if (!dims)
        return false;
      if (dims->empty()) {
        if (((name == "kiln.shape" || name == "kiln.size") && hasLen) ||
            readsLength)
          lengthValued.insert(ra);
        continue;
      }
      if (!hasLen && !readsLength)
        return fail(opA, "computes a value shaped by the length from values "
                         "that are not");
      length[ra] = *dims;
    }
    return true;
  }
};

} // namespace

bool checkPositionIndependence(MLIRContext &context, const std::string &model,
                               const std::vector<ShapeSpec> &specs,
                               bool onnxChecks, LengthPlan &plan,
                               std::string &error) {
  int64_t lo = 0;
  llvm::StringMap<int64_t> rangedDim;
  for (const ShapeSpec &s : specs)
    if (s.lengthDim >= 0) {
      lo = s.lengthMin;
      rangedDim[s.name] = s.lengthDim;
    }
  int64_t lengths[2] = {lo, lo + 1};
  TwinImports twins;
  if (!importTwice(
          context, model, specs, onnxChecks,
          [&](const ShapeSpec &s, int k) {
            return specAt(s, s.rangeMax ? s.rangeMin : 0, lengths[k]);
          },
          [&](int k) { return "length " + std::to_string(lengths[k]); }, twins,
          error))
    return false;
  func::FuncOp *fns = twins.fns;
  SmallVector<Operation *> *ops = twins.ops;
  Walker w(lengths[0], lengths[1], plan, error);
  for (BlockArgument arg : fns[0].getArguments())
    if (auto n = fns[0].getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                     "kiln.name")) {
      auto it = rangedDim.find(n.getValue());
      if (it != rangedDim.end())
        w.length[arg] = {it->second};
    }
  for (size_t i = 0; i < ops[0].size(); ++i) {
    Operation *opA = ops[0][i], *opB = ops[1][i];
    if (opA->getName() != opB->getName() ||
        opA->getNumResults() != opB->getNumResults()) {
      error = "the graph differs at lengths " + std::to_string(lengths[0]) +
              " and " + std::to_string(lengths[1]) + " at " + where(opA);
      return false;
    }
    if (isa<func::ReturnOp>(opA))
      continue;
    if (!w.step(opA, opB))
      return false;
  }
  plan.outputLengthDims.clear();
  Operation *ret = fns[0].getBody().front().getTerminator();
  for (Value v : ret->getOperands()) {
    if (w.valued(v)) {
      error = "a graph output holds the length as a value (a Shape); a "
              "length range cannot return it yet";
      return false;
    }
    const Dims *d = w.lenOf(v);
    plan.outputLengthDims.push_back(
        d ? std::vector<int64_t>(d->begin(), d->end())
          : std::vector<int64_t>());
  }
  return true;
}

bool addLengthMasks(ModuleOp module,
                    const std::vector<std::pair<std::string, int64_t>> &masks,
                    std::string &error) {
  auto fn = module.lookupSymbol<func::FuncOp>("main");
  if (!fn) {
    error = "the module has no func.func @main";
    return false;
  }
  SmallVector<std::pair<SoftmaxOp, int64_t>> found;
  for (const auto &[name, axis] : masks) {
    SoftmaxOp hit;
    fn.walk([&](SoftmaxOp op) {
      if (!hit && nodeName(op) == name)
        hit = op;
    });
    if (!hit) {
      error = "the Softmax node '" + name + "' to mask is not in the model";
      return false;
    }
    found.push_back({hit, axis});
  }
  if (found.empty())
    return true;
  auto inputType = [](SoftmaxOp s) {
    return cast<RankedTensorType>(s.getInput().getType());
  };
  int64_t length = inputType(found[0].first).getDimSize(found[0].second);
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  auto maskType = RankedTensorType::get({length}, b.getF32Type());
  unsigned index = fn.getNumArguments();
  if (failed(fn.insertArgument(
          index, maskType,
          b.getDictionaryAttr(
              b.getNamedAttr("kiln.name", b.getStringAttr("kiln.length_mask"))),
          fn.getLoc()))) {
    error = "cannot add the length mask to @main";
    return false;
  }
  Value mask = fn.getArgument(index);
  for (auto [softmax, axis] : found) {
    auto xt = inputType(softmax);
    if (!xt.hasStaticShape() || xt.getDimSize(axis) != length) {
      error = "the Softmax node '" + nodeName(softmax) +
              "' does not have the length along its axis";
      return false;
    }
    Location loc = softmax.getLoc();
    Value x = softmax.getInput();
    auto add = x.getDefiningOp<AddOp>();
    if (add && !x.hasOneUse())
      add = nullptr;
    b.setInsertionPoint(add ? add.getOperation() : softmax.getOperation());
    Value m = mask;
    Type elt = xt.getElementType();
    if (elt != b.getF32Type())
      m = CastOp::create(b, loc, RankedTensorType::get({length}, elt), m,
                         StringAttr(), IntegerAttr(), TypeAttr::get(elt));
    SmallVector<int64_t> dims(xt.getRank(), 1);
    dims[axis] = length;
    auto shapeType = RankedTensorType::get({xt.getRank()}, b.getI64Type());
    Value shape = ConstantOp::create(
        b, loc, shapeType, DenseIntElementsAttr::get(shapeType, dims));
    auto mt = RankedTensorType::get(dims, elt);
    m = ReshapeOp::create(b, loc, mt, m, shape);
    // Add(scores, mask): the mask is the operand that broadcasts.
    unsigned side = 1;
    if (add && add.getA().getType() != xt && add.getB().getType() == xt)
      side = 0;
    if (add && isa<RankedTensorType>(add->getOperand(side).getType())) {
      Value old = add->getOperand(side);
      auto ot = cast<RankedTensorType>(old.getType());
      SmallVector<int64_t> both(std::max(ot.getRank(), mt.getRank()), 1);
      for (int64_t i = 0; i < static_cast<int64_t>(both.size()); ++i) {
        int64_t oi = i - (static_cast<int64_t>(both.size()) - ot.getRank());
        int64_t mi = i - (static_cast<int64_t>(both.size()) - mt.getRank());
        int64_t od = oi >= 0 ? ot.getDimSize(oi) : 1;
        int64_t md = mi >= 0 ? mt.getDimSize(mi) : 1;
        // Types before shape inference may not be known yet.
        both[i] = ShapedType::isDynamic(od) ? od : std::max(od, md);
      }
      Value sum =
          AddOp::create(b, loc, RankedTensorType::get(both, elt), old, m);
      add->setOperand(side, sum);
      continue;
    }
    Value sum = AddOp::create(b, loc, xt, x, m);
    softmax->setOperand(0, sum);
  }
  return true;
}

} // namespace kiln::compile
