//===- LowerRecurrentOps.cpp - RNN, GRU and LSTM to linalg ---------------===//
//
// Part of convert-kiln-to-linalg (see KilnToLinalg.cpp).
//
// Each direction of a recurrent op becomes an scf.for over the time steps
// that carries the hidden state (the LSTM cell state too, and the Y being
// written) as tensors. The input projection X * W^T + Wb + Rb of all steps
// is one linalg.matmul before the loop; each step accumulates H * R^T into
// its slice of it with a linalg.matmul and applies the gates in a
// linalg.generic. With sequence_lens, the steps past a batch entry's length
// keep its state and write zeros to Y; the reverse direction reads (and
// writes) each entry's sequence reversed within its own length, as ONNX
// Runtime does.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include <string>

using namespace mlir;
using namespace kiln;

namespace kiln::lowering {

namespace {

enum class Cell { Rnn, Gru, Lstm };

/// An activation function of a cell with the alpha and beta it applies.
struct Activation {
  std::string name; ///< Lower case: names match case-insensitively.
  float alpha = 0, beta = 0;
};

/// An activation function ONNX allows in recurrent cells: whether it takes
/// an alpha and a beta from activation_alpha/_beta, and their defaults.
struct ActivationKind {
  StringRef name;
  bool takesAlpha, takesBeta;
  float alpha, beta;
};

constexpr ActivationKind kActivationKinds[] = {
    {"relu", false, false, 0, 0},
    {"tanh", false, false, 0, 0},
    {"sigmoid", false, false, 0, 0},
    {"affine", true, true, 1, 0},
    {"leakyrelu", true, false, 0.01f, 0},
    {"thresholdedrelu", true, false, 1, 0},
    {"scaledtanh", true, true, 1, 1},
    {"hardsigmoid", true, true, 0.2f, 0.5f},
    {"elu", true, false, 1, 0},
    {"softsign", false, false, 0, 0},
    {"softplus", false, false, 0, 0},
};

/// One recurrent op: its operands (absent ones null), attributes and sizes.
struct Recurrence {
  Cell cell;
  /// Gate blocks of `hidden` rows in W and R: 1, 3 or 4.
  int64_t gates;
  int64_t steps, batch, inputSize, hidden, directions;
  /// layout = 1: X, Y and the states have the batch dim first.
  bool batchMajor;
  bool reverseOnly;
  std::optional<double> clip;
  bool linearBeforeReset, inputForget;
  /// The cell's activation functions (f; f, g; or f, g, h), direction by
  /// direction.
  SmallVector<Activation> activations;
  Value x, w, r, bias, lens, initialH, initialC, peepholes;
  Value y, yH, yC;
  Type elt;
  RankedTensorType state; ///< [batch, hidden]
};

/// The activation functions of `op` for every direction (the defaults when
/// it names none), with the alpha and beta values consumed in list order
/// by the functions that take them.
FailureOr<SmallVector<Activation>> readActivations(Operation *op, Cell cell,
                                                   int64_t directions) {
  SmallVector<StringRef> names;
  size_t perDirection = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 2 : 3;
  if (auto list = op->getAttrOfType<ArrayAttr>("activations")) {
    for (Attribute a : list)
      names.push_back(cast<StringAttr>(a).getValue());
    if (names.size() != perDirection * directions)
      return op->emitOpError("expects ")
                 << perDirection * directions
                 << " activation functions (per direction: " << perDirection
                 << "), got " << names.size(),
             failure();
  } else {
    // The LSTM's f, g and h; the GRU's f and g are its first two, the
    // RNN's f is a Tanh.
    StringRef defaults[] = {"Sigmoid", "Tanh", "Tanh"};
    ArrayRef<StringRef> each =
        cell == Cell::Rnn ? ArrayRef(defaults).slice(1, 1)
                          : ArrayRef(defaults).take_front(perDirection);
    for (int64_t d = 0; d < directions; ++d)
      names.append(each.begin(), each.end());
  }
  ArrayRef<float> alphas, betas;
  if (auto a = op->getAttrOfType<DenseF32ArrayAttr>("activation_alpha"))
    alphas = a.asArrayRef();
  if (auto a = op->getAttrOfType<DenseF32ArrayAttr>("activation_beta"))
    betas = a.asArrayRef();
  SmallVector<Activation> acts;
  for (StringRef name : names) {
    std::string lower = name.lower();
    const auto *kind = llvm::find_if(
        kActivationKinds, [&](const auto &k) { return k.name == lower; });
    if (kind == std::end(kActivationKinds))
      return op->emitOpError("activation function '")
                 << name << "' is not supported",
             failure();
    Activation act{lower, kind->alpha, kind->beta};
    if (kind->takesAlpha && !alphas.empty()) {
      act.alpha = alphas.front();
      alphas = alphas.drop_front();
    }
    if (kind->takesBeta && !betas.empty()) {
      act.beta = betas.front();
      betas = betas.drop_front();
    }
    acts.push_back(act);
  }
  return acts;
}

/// Reads and checks the operands, attributes and result types of `op`.
FailureOr<Recurrence> readRecurrence(Operation *op) {
  Recurrence rec;
  if (auto o = dyn_cast<RNNOp>(op)) {
    rec.cell = Cell::Rnn;
    rec.y = o.getY();
    rec.yH = o.getYH();
  } else if (auto o = dyn_cast<GRUOp>(op)) {
    rec.cell = Cell::Gru;
    rec.y = o.getY();
    rec.yH = o.getYH();
  } else {
    auto lstm = cast<LSTMOp>(op);
    rec.cell = Cell::Lstm;
    rec.y = lstm.getY();
    rec.yH = lstm.getYH();
    rec.yC = lstm.getYC();
    rec.initialC = getOnnxInput(op, 6);
    rec.peepholes = getOnnxInput(op, 7);
  }
  rec.gates = rec.cell == Cell::Rnn ? 1 : rec.cell == Cell::Gru ? 3 : 4;
  rec.x = getOnnxInput(op, 0);
  rec.w = getOnnxInput(op, 1);
  rec.r = getOnnxInput(op, 2);
  rec.bias = getOnnxInput(op, 3);
  rec.lens = getOnnxInput(op, 4);
  rec.initialH = getOnnxInput(op, 5);

  StringRef direction = "forward";
  if (auto a = op->getAttrOfType<StringAttr>("direction"))
    direction = a.getValue();
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return op->emitOpError("unknown direction '") << direction << "'",
           failure();
  rec.reverseOnly = direction == "reverse";
  rec.directions = direction == "bidirectional" ? 2 : 1;
  int64_t layout = intAttr(op, "layout", 0);
  if (layout != 0 && layout != 1)
    return op->emitOpError("unknown layout ") << layout, failure();
  rec.batchMajor = layout == 1;
  if (auto a = op->getAttrOfType<FloatAttr>("clip"))
    rec.clip = a.getValueAsDouble();
  rec.linearBeforeReset = intAttr(op, "linear_before_reset", 0) != 0;
  rec.inputForget = intAttr(op, "input_forget", 0) != 0;

  auto xt = cast<RankedTensorType>(rec.x.getType());
  auto rt = cast<RankedTensorType>(rec.r.getType());
  rec.elt = xt.getElementType();
  if (!isa<FloatType>(rec.elt))
    return op->emitOpError("needs float inputs, got ") << rec.elt, failure();
  if (xt.getRank() != 3 || rt.getRank() != 3)
    return op->emitOpError("needs X and R of rank 3"), failure();
  rec.steps = xt.getDimSize(rec.batchMajor ? 1 : 0);
  rec.batch = xt.getDimSize(rec.batchMajor ? 0 : 1);
  rec.inputSize = xt.getDimSize(2);
  rec.hidden = rt.getDimSize(2);
  int64_t hiddenAttr = intAttr(op, "hidden_size", rec.hidden);
  if (hiddenAttr != rec.hidden)
    return op->emitOpError("hidden_size ")
               << hiddenAttr << " disagrees with R's shape " << rt,
           failure();
  rec.state = RankedTensorType::get({rec.batch, rec.hidden}, rec.elt);

  int64_t d = rec.directions, t = rec.steps, b = rec.batch, h = rec.hidden;
  int64_t gh = rec.gates * h;
  auto inner = [&](int64_t a, int64_t c) -> SmallVector<int64_t> {
    return rec.batchMajor ? SmallVector<int64_t>{b, a, c}
                          : SmallVector<int64_t>{a, b, c};
  };
  SmallVector<int64_t> yShape = rec.batchMajor
                                    ? SmallVector<int64_t>{b, t, d, h}
                                    : SmallVector<int64_t>{t, d, b, h};
  auto check = [&](Value v, StringRef name,
                   ArrayRef<int64_t> shape) -> LogicalResult {
    auto vt = cast<RankedTensorType>(v.getType());
    bool isLens = v == rec.lens;
    if (vt.getShape() != shape ||
        (isLens ? !isa<IntegerType>(vt.getElementType())
                : vt.getElementType() != rec.elt))
      return op->emitOpError("expects ")
             << name << " of shape [" << shape << "] and "
             << (isLens ? "an integer" : "X's") << " element type, got " << vt;
    return success();
  };
  std::pair<Value, SmallVector<int64_t>> expected[] = {
      {rec.w, {d, gh, rec.inputSize}}, {rec.r, {d, gh, h}},
      {rec.bias, {d, 2 * gh}},         {rec.lens, {b}},
      {rec.initialH, inner(d, h)},     {rec.initialC, inner(d, h)},
      {rec.peepholes, {d, 3 * h}},     {rec.y, yShape},
      {rec.yH, inner(d, h)},           {rec.yC, inner(d, h)}};
  StringRef names[] = {"W",         "R", "B", "sequence_lens", "initial_h",
                       "initial_c", "P", "Y", "Y_h",           "Y_c"};
  for (auto [e, name] : llvm::zip(expected, names))
    if (e.first && failed(check(e.first, name, e.second)))
      return failure();

  auto acts = readActivations(op, rec.cell, rec.directions);
  if (failed(acts))
    return failure();
  rec.activations = std::move(*acts);
  return rec;
}

/// `act` applied to the scalar `x`.
Value activate(OpBuilder &b, Location loc, const Activation &act, Value x) {
  auto cst = [&](double v) { return scalarConst(b, loc, x.getType(), v); };
  auto mul = [&](Value a, Value c) -> Value {
    return arith::MulFOp::create(b, loc, a, c);
  };
  auto add = [&](Value a, Value c) -> Value {
    return arith::AddFOp::create(b, loc, a, c);
  };
  auto less = [&](Value a, Value c) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a, c);
  };
  StringRef name = act.name;
  if (name == "relu")
    return arith::MaximumFOp::create(b, loc, x, cst(0));
  if (name == "tanh")
    return math::TanhOp::create(b, loc, x);
  if (name == "sigmoid")
    return arith::DivFOp::create(
        b, loc, cst(1),
        add(cst(1),
            math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x))));
  if (name == "affine")
    return add(mul(x, cst(act.alpha)), cst(act.beta));
  if (name == "leakyrelu")
    return arith::SelectOp::create(b, loc, less(x, cst(0)),
                                   mul(x, cst(act.alpha)), x);
  if (name == "thresholdedrelu")
    return arith::SelectOp::create(b, loc, less(cst(act.alpha), x), x, cst(0));
  if (name == "scaledtanh")
    return mul(cst(act.alpha),
               math::TanhOp::create(b, loc, mul(x, cst(act.beta))));
  if (name == "hardsigmoid")
    return arith::MinimumFOp::create(
        b, loc,
        arith::MaximumFOp::create(
            b, loc, add(mul(x, cst(act.alpha)), cst(act.beta)), cst(0)),
        cst(1));
  if (name == "elu")
    return arith::SelectOp::create(
        b, loc, less(x, cst(0)),
        mul(math::ExpM1Op::create(b, loc, x), cst(act.alpha)), x);
  if (name == "softsign")
    return arith::DivFOp::create(b, loc, x,
                                 add(cst(1), math::AbsFOp::create(b, loc, x)));
  assert(name == "softplus" && "activations are checked when read");
  return math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, x));
}

/// An `index` constant.
Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The slice of `v` at `index` of dim `dim`, without that dim; along
/// `rangeDim` (when set) only `size` entries from `offset`.
Value sliceAt(OpBuilder &b, Location loc, Value v, int64_t dim,
              OpFoldResult index, std::optional<int64_t> rangeDim = {},
              int64_t offset = 0, int64_t size = 0) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0)), sizes,
      strides(t.getRank(), b.getIndexAttr(1));
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    int64_t n = i == rangeDim ? size : t.getDimSize(i);
    sizes.push_back(b.getIndexAttr(i == dim ? 1 : n));
    if (i != dim)
      shape.push_back(n);
  }
  offsets[dim] = index;
  if (rangeDim)
    offsets[*rangeDim] = b.getIndexAttr(offset);
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v, offsets,
      sizes, strides);
}

/// `dest` with `src` written at `index` of its dim `dim`, which `src` lacks.
Value insertAt(OpBuilder &b, Location loc, Value src, Value dest, int64_t dim,
               OpFoldResult index) {
  auto t = cast<RankedTensorType>(dest.getType());
  SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0)), sizes,
      strides(t.getRank(), b.getIndexAttr(1));
  for (int64_t i = 0; i < t.getRank(); ++i)
    sizes.push_back(b.getIndexAttr(i == dim ? 1 : t.getDimSize(i)));
  offsets[dim] = index;
  return tensor::InsertSliceOp::create(b, loc, src, dest, offsets, sizes,
                                       strides);
}

/// Columns [offset, offset + size) of the matrix `v`.
Value columns(OpBuilder &b, Location loc, Value v, int64_t offset,
              int64_t size) {
  auto t = cast<RankedTensorType>(v.getType());
  return tensor::ExtractSliceOp::create(
      b, loc,
      RankedTensorType::get({t.getDimSize(0), size}, t.getElementType()), v,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(t.getDimSize(0)),
                             b.getIndexAttr(size)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

/// `acc + a * m` as a linalg.matmul.
Value matmulAcc(OpBuilder &b, Location loc, Value a, Value m, Value acc) {
  return linalg::MatmulOp::create(b, loc, TypeRange{acc.getType()},
                                  ValueRange{a, m}, ValueRange{acc})
      .getResult(0);
}

/// Rows [row, row + rows) of direction `d` of a weight tensor [D, G*H, K],
/// transposed to [K, rows] for row-major matmuls.
Value weightsTransposed(OpBuilder &b, Location loc, Value w, int64_t d,
                        int64_t row, int64_t rows) {
  Value slice = sliceAt(b, loc, w, 0, b.getIndexAttr(d), 1, row, rows);
  auto st = cast<RankedTensorType>(slice.getType());
  auto tt =
      RankedTensorType::get({st.getDimSize(1), rows}, st.getElementType());
  return linalg::TransposeOp::create(b, loc, slice, emptyLike(b, loc, tt),
                                     ArrayRef<int64_t>{1, 0})
      ->getResult(0);
}

/// `x` (time-major [T, B, K], or batch-major [B, T, K]) with each batch
/// entry's first `lens` steps reversed and its steps past them zero. The
/// lengths are clamped to [0, T].
Value reverseWithinLengths(OpBuilder &b, Location loc, Value x, Value lens,
                           bool batchMajor) {
  auto t = cast<RankedTensorType>(x.getType());
  int64_t timeDim = batchMajor ? 1 : 0;
  int64_t steps = t.getDimSize(timeDim);
  MLIRContext *ctx = b.getContext();
  AffineMap perBatch =
      AffineMap::get(3, 0, getAffineDimExpr(1 - timeDim, ctx), ctx);
  return elementwise(
      b, loc, t, ValueRange{lens},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value len = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
        len = arith::MinSIOp::create(
            nb, nl, arith::MaxSIOp::create(nb, nl, len, indexConst(nb, nl, 0)),
            indexConst(nb, nl, steps));
        SmallVector<Value> idx;
        for (int64_t i = 0; i < 3; ++i)
          idx.push_back(linalg::IndexOp::create(nb, nl, i));
        Value step = idx[timeDim];
        Value valid =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, step, len);
        Value last = arith::SubIOp::create(nb, nl, len, indexConst(nb, nl, 1));
        idx[timeDim] = arith::MaxSIOp::create(
            nb, nl, arith::SubIOp::create(nb, nl, last, step),
            indexConst(nb, nl, 0));
        Value v = tensor::ExtractOp::create(nb, nl, x, idx);
        return arith::SelectOp::create(
            nb, nl, valid, v, scalarConst(nb, nl, t.getElementType(), 0));
      },
      {perBatch});
}

/// Inputs of a linalg.generic over the [batch, hidden] state, each read
/// whole, per hidden unit (peepholes) or per batch entry (lengths).
class StateGeneric {
public:
  StateGeneric(OpBuilder &b, RankedTensorType state) : b(b), state(state) {}

  /// Adds an input read like the state; returns its argument number.
  unsigned whole(Value v) { return add(v, {0, 1}); }
  /// Adds a vector read at the hidden unit.
  unsigned perHidden(Value v) { return add(v, {1}); }
  /// Adds a vector read at the batch entry.
  unsigned perBatch(Value v) { return add(v, {0}); }

  /// The generic with `numResults` state-shaped results that `fn` computes
  /// from the scalar inputs.
  SmallVector<Value> build(
      Location loc, unsigned numResults,
      function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> fn) {
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineMap> allMaps = maps;
    allMaps.append(numResults, AffineMap::getMultiDimIdentityMap(2, ctx));
    SmallVector<Value> outs;
    for (unsigned i = 0; i < numResults; ++i)
      outs.push_back(emptyLike(b, loc, state));
    SmallVector<Type> types(numResults, state);
    SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, types, inputs, outs, allMaps, iters,
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          linalg::YieldOp::create(nb, nl,
                                  fn(nb, nl, args.take_front(inputs.size())));
        });
    return SmallVector<Value>(generic.getResults());
  }

private:
  unsigned add(Value v, ArrayRef<unsigned> dims) {
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineExpr> exprs;
    for (unsigned d : dims)
      exprs.push_back(getAffineDimExpr(d, ctx));
    inputs.push_back(v);
    maps.push_back(AffineMap::get(2, 0, exprs, ctx));
    return inputs.size() - 1;
  }

  OpBuilder &b;
  RankedTensorType state;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
};

/// Lowers one direction of a recurrence: the loop-invariant weights, the
/// loop over the steps and the cell in its body.
class DirectionLowering {
public:
  DirectionLowering(OpBuilder &b, Location loc, const Recurrence &rec,
                    int64_t d)
      : b(b), loc(loc), rec(rec), d(d), reverse(rec.reverseOnly || d == 1),
        acts(ArrayRef(rec.activations)
                 .slice(d * (rec.activations.size() / rec.directions),
                        rec.activations.size() / rec.directions)) {}

  /// The direction's Y (its time steps in the layout of X, null when the
  /// op has no Y), final hidden state and (LSTM) final cell state.
  SmallVector<Value> lower();

private:
  Value projectInput();
  Value initialState(Value v);
  Value vectorOf(Value v, int64_t offset, int64_t size);
  SmallVector<Value> step(OpBuilder &nb, Location nl, Value xw, Value s,
                          ValueRange state);
  Value gate(OpBuilder &nb, Location nl, Value pre,
             const Activation &act) const;
  Value keepPastLength(OpBuilder &nb, Location nl, ValueRange a, unsigned lens,
                       Value s, Value next, Value prev) const;

  OpBuilder &b;
  Location loc;
  const Recurrence &rec;
  int64_t d;
  bool reverse;
  ArrayRef<Activation> acts;
  /// R^T (GRU: of the update and reset gates), [hidden, gates * hidden].
  Value rt;
  /// GRU: R_h^T, and with linear_before_reset, Rb_h broadcast to the state
  /// (zeros without B).
  Value rtH, rbH;
  /// LSTM: the input, output and forget peepholes, [hidden].
  Value peepholes[3];
};

/// Entries [offset, offset + size) of this direction's row of `v`, a
/// [directions, N] tensor (B, P).
Value DirectionLowering::vectorOf(Value v, int64_t offset, int64_t size) {
  return sliceAt(b, loc, v, 0, b.getIndexAttr(d), 1, offset, size);
}

/// The initial state from `v` (zeros when absent): a tensor of its own,
/// as the loop updates its states in place and the op's inputs stay intact.
Value DirectionLowering::initialState(Value v) {
  if (!v)
    return filled(b, loc, rec.state, scalarConst(b, loc, rec.elt, 0));
  return linalg::CopyOp::create(
             b, loc,
             sliceAt(b, loc, v, rec.batchMajor ? 1 : 0, b.getIndexAttr(d)),
             emptyLike(b, loc, rec.state))
      .getResult(0);
}

/// X * W^T + Wb + Rb for every step, [T, B, gates * H] (batch-major with
/// layout 1), in the order the loop takes the steps. GRU with
/// linear_before_reset adds Rb_h inside the cell.
Value DirectionLowering::projectInput() {
  int64_t gh = rec.gates * rec.hidden, rows = rec.steps * rec.batch;
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({rows, rec.inputSize}, rec.elt), rec.x,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  auto projType = RankedTensorType::get({rows, gh}, rec.elt);
  Value init;
  if (rec.bias) {
    Value wb = vectorOf(rec.bias, 0, gh);
    Value rb = vectorOf(rec.bias, gh, gh);
    int64_t rbEnd =
        rec.cell == Cell::Gru && rec.linearBeforeReset ? 2 * rec.hidden : gh;
    Value both = elementwise(
        b, loc, cast<RankedTensorType>(wb.getType()), ValueRange{wb, rb},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value sum = arith::AddFOp::create(nb, nl, a[0], a[1]);
          if (rbEnd == gh)
            return sum;
          Value inR = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                            linalg::IndexOp::create(nb, nl, 0),
                                            indexConst(nb, nl, rbEnd));
          return arith::SelectOp::create(nb, nl, inR, sum, a[0]);
        });
    init = elementwise(
        b, loc, projType, ValueRange{both},
        [](OpBuilder &, Location, ValueRange a) -> Value { return a[0]; });
  } else {
    init = filled(b, loc, projType, scalarConst(b, loc, rec.elt, 0));
  }
  Value proj =
      matmulAcc(b, loc, flat, weightsTransposed(b, loc, rec.w, d, 0, gh), init);
  SmallVector<int64_t> shape =
      rec.batchMajor ? SmallVector<int64_t>{rec.batch, rec.steps, gh}
                     : SmallVector<int64_t>{rec.steps, rec.batch, gh};
  Value steps = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, rec.elt), proj,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  // Reversed after the matmul: the gather fused into it would keep it from
  // being tiled and vectorized as a contraction.
  if (reverse && rec.lens)
    return reverseWithinLengths(b, loc, steps, rec.lens, rec.batchMajor);
  return steps;
}

/// `act` of the pre-activation `pre`, clipped first if the op clips.
Value DirectionLowering::gate(OpBuilder &nb, Location nl, Value pre,
                              const Activation &act) const {
  if (rec.clip) {
    Type t = pre.getType();
    pre = arith::MinimumFOp::create(
        nb, nl,
        arith::MaximumFOp::create(nb, nl, pre,
                                  scalarConst(nb, nl, t, -*rec.clip)),
        scalarConst(nb, nl, t, *rec.clip));
  }
  return activate(nb, nl, act, pre);
}

/// `next`, or `prev` where step `s` is past the batch entry's length (the
/// generic's input `lens`); `next` alone without sequence_lens.
Value DirectionLowering::keepPastLength(OpBuilder &nb, Location nl,
                                        ValueRange a, unsigned lens, Value s,
                                        Value next, Value prev) const {
  if (!rec.lens)
    return next;
  Value len = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[lens]);
  Value valid =
      arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, s, len);
  return arith::SelectOp::create(nb, nl, valid, next, prev);
}

/// One step of the cell: the new states from `xw` (this step's input
/// projection, [B, gates * H]) and the previous `state` (h, and c for the
/// LSTM); `s` is the step number.
SmallVector<Value> DirectionLowering::step(OpBuilder &nb, Location nl, Value xw,
                                           Value s, ValueRange state) {
  int64_t hs = rec.hidden;
  Value h = state[0];
  StateGeneric cell(nb, rec.state);
  // The previous h feeds the GRU's output and, with sequence_lens, the
  // entries past their length; keepPastLength ignores it otherwise.
  bool readsH = rec.cell == Cell::Gru || rec.lens;
  unsigned hPrev = readsH ? cell.whole(h) : 0;
  unsigned lens = rec.lens ? cell.perBatch(rec.lens) : 0;
  auto one = [&](OpBuilder &cb, Location cl, Value like) {
    return scalarConst(cb, cl, like.getType(), 1);
  };
  if (rec.cell == Cell::Rnn) {
    unsigned pre = cell.whole(matmulAcc(nb, nl, h, rt, xw));
    return cell.build(nl, 1, [&](OpBuilder &cb, Location cl, ValueRange a) {
      Value next = gate(cb, cl, a[pre], acts[0]);
      return SmallVector<Value>{
          keepPastLength(cb, cl, a, lens, s, next, a[hPrev])};
    });
  }
  if (rec.cell == Cell::Gru) {
    // z and r from one matmul; h~ from r (.) H or from H, by
    // linear_before_reset.
    Value zr = matmulAcc(nb, nl, h, rt, columns(nb, nl, xw, 0, 2 * hs));
    unsigned z = cell.whole(columns(nb, nl, zr, 0, hs));
    Value xh = columns(nb, nl, xw, 2 * hs, hs);
    unsigned r = 0, xH = 0, hR = 0, hPre = 0;
    if (rec.linearBeforeReset) {
      r = cell.whole(columns(nb, nl, zr, hs, hs));
      xH = cell.whole(xh);
      hR = cell.whole(matmulAcc(nb, nl, h, rtH, rbH));
    } else {
      StateGeneric reset(nb, rec.state);
      unsigned rr = reset.whole(columns(nb, nl, zr, hs, hs));
      unsigned hh = reset.whole(h);
      Value rh =
          reset.build(nl, 1, [&](OpBuilder &cb, Location cl, ValueRange a) {
            return SmallVector<Value>{arith::MulFOp::create(
                cb, cl, gate(cb, cl, a[rr], acts[0]), a[hh])};
          })[0];
      hPre = cell.whole(matmulAcc(nb, nl, rh, rtH, xh));
    }
    bool lbr = rec.linearBeforeReset;
    return cell.build(nl, 1, [&](OpBuilder &cb, Location cl, ValueRange a) {
      Value zt = gate(cb, cl, a[z], acts[0]);
      Value pre = lbr ? arith::AddFOp::create(
                            cb, cl, a[xH],
                            arith::MulFOp::create(
                                cb, cl, gate(cb, cl, a[r], acts[0]), a[hR])
                                .getResult())
                            .getResult()
                      : a[hPre];
      Value ht = gate(cb, cl, pre, acts[1]);
      // (1 - z) (.) h~ + z (.) H
      Value next = arith::AddFOp::create(
          cb, cl,
          arith::MulFOp::create(
              cb, cl, arith::SubFOp::create(cb, cl, one(cb, cl, zt), zt), ht),
          arith::MulFOp::create(cb, cl, zt, a[hPrev]));
      return SmallVector<Value>{
          keepPastLength(cb, cl, a, lens, s, next, a[hPrev])};
    });
  }
  // LSTM: the gates i, o, f, c in W and R's row order.
  Value pre = matmulAcc(nb, nl, h, rt, xw);
  unsigned g[4];
  for (int64_t k = 0; k < 4; ++k)
    g[k] = cell.whole(columns(nb, nl, pre, k * hs, hs));
  unsigned cPrev = cell.whole(state[1]);
  unsigned p[3] = {0, 0, 0};
  if (rec.peepholes)
    for (int64_t k = 0; k < 3; ++k)
      p[k] = cell.perHidden(peepholes[k]);
  bool peep = static_cast<bool>(rec.peepholes);
  return cell.build(nl, 2, [&](OpBuilder &cb, Location cl, ValueRange a) {
    auto withPeephole = [&](unsigned gi, unsigned pi, Value c) -> Value {
      if (!peep)
        return a[gi];
      return arith::AddFOp::create(cb, cl, a[gi],
                                   arith::MulFOp::create(cb, cl, a[pi], c));
    };
    Value c = a[cPrev];
    Value it = gate(cb, cl, withPeephole(g[0], p[0], c), acts[0]);
    Value ft =
        rec.inputForget
            ? arith::SubFOp::create(cb, cl, one(cb, cl, it), it).getResult()
            : gate(cb, cl, withPeephole(g[2], p[2], c), acts[0]);
    Value ct = gate(cb, cl, a[g[3]], acts[1]);
    Value cNext =
        arith::AddFOp::create(cb, cl, arith::MulFOp::create(cb, cl, ft, c),
                              arith::MulFOp::create(cb, cl, it, ct));
    Value ot = gate(cb, cl, withPeephole(g[1], p[1], cNext), acts[0]);
    Value hNext =
        arith::MulFOp::create(cb, cl, ot, activate(cb, cl, acts[2], cNext));
    return SmallVector<Value>{
        keepPastLength(cb, cl, a, lens, s, hNext, a[hPrev]),
        keepPastLength(cb, cl, a, lens, s, cNext, c)};
  });
}

/// The loop over the steps, after the loop-invariant weights it reads.
SmallVector<Value> DirectionLowering::lower() {
  int64_t hs = rec.hidden, gh = rec.gates * hs;
  if (rec.cell == Cell::Gru) {
    rt = weightsTransposed(b, loc, rec.r, d, 0, 2 * hs);
    rtH = weightsTransposed(b, loc, rec.r, d, 2 * hs, hs);
    if (rec.linearBeforeReset)
      rbH = rec.bias
                ? elementwise(b, loc, rec.state,
                              ValueRange{vectorOf(rec.bias, gh + 2 * hs, hs)},
                              [](OpBuilder &, Location, ValueRange a) -> Value {
                                return a[0];
                              })
                : filled(b, loc, rec.state, scalarConst(b, loc, rec.elt, 0));
  } else {
    rt = weightsTransposed(b, loc, rec.r, d, 0, gh);
  }
  if (rec.peepholes)
    for (int64_t k = 0; k < 3; ++k)
      peepholes[k] = vectorOf(rec.peepholes, k * hs, hs);
  Value xw = projectInput();

  int64_t timeDim = rec.batchMajor ? 1 : 0;
  SmallVector<Value> inits = {initialState(rec.initialH)};
  if (rec.cell == Cell::Lstm)
    inits.push_back(initialState(rec.initialC));
  unsigned numStates = inits.size();
  if (rec.y) {
    auto xt = cast<RankedTensorType>(rec.x.getType());
    inits.push_back(
        emptyLike(b, loc,
                  RankedTensorType::get(
                      {xt.getDimSize(0), xt.getDimSize(1), hs}, rec.elt)));
  }
  // Without sequence_lens the reverse direction walks the steps backwards;
  // with them it walks the sequences reversed within their lengths.
  bool backwards = reverse && !rec.lens;
  auto loop = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), indexConst(b, loc, rec.steps),
      indexConst(b, loc, 1), inits,
      [&](OpBuilder &nb, Location nl, Value s, ValueRange iter) {
        Value t = backwards ? arith::SubIOp::create(
                                  nb, nl, indexConst(nb, nl, rec.steps - 1), s)
                                  .getResult()
                            : s;
        Value xwT = sliceAt(nb, nl, xw, timeDim, t);
        SmallVector<Value> next =
            step(nb, nl, xwT, s, iter.take_front(numStates));
        // The new states are copied into the loop's: yielding tensors that
        // bufferize to the iter_args' buffers keeps the loop in place.
        for (unsigned k = 0; k < numStates; ++k)
          next[k] =
              linalg::CopyOp::create(nb, nl, next[k], iter[k]).getResult(0);
        if (rec.y) {
          // Zeros past the lengths; the reverse direction gets them when its
          // Y is reversed back after the loop.
          Value row = next[0];
          if (rec.lens && !reverse) {
            StateGeneric mask(nb, rec.state);
            unsigned hv = mask.whole(row);
            unsigned lens = mask.perBatch(rec.lens);
            row = mask.build(
                nl, 1, [&](OpBuilder &cb, Location cl, ValueRange a) {
                  return SmallVector<Value>{
                      keepPastLength(cb, cl, a, lens, s, a[hv],
                                     scalarConst(cb, cl, rec.elt, 0))};
                })[0];
          }
          next.push_back(insertAt(nb, nl, row, iter.back(), timeDim, t));
        }
        scf::YieldOp::create(nb, nl, next);
      });
  Value y;
  if (rec.y)
    y = reverse && rec.lens
            ? reverseWithinLengths(b, loc, loop.getResults().back(), rec.lens,
                                   rec.batchMajor)
            : loop.getResults().back();
  SmallVector<Value> results = {y};
  results.append(loop.getResults().begin(),
                 loop.getResults().begin() + numStates);
  return results;
}

} // namespace

LoweringResult lowerRecurrentOp(OpBuilder &b, Operation *op) {
  if (!isa<RNNOp, GRUOp, LSTMOp>(op))
    return std::nullopt;
  FailureOr<Recurrence> rec = readRecurrence(op);
  if (failed(rec))
    return FailureOr<SmallVector<Value>>(failure());
  Location loc = op->getLoc();
  SmallVector<SmallVector<Value>> dirs;
  for (int64_t d = 0; d < rec->directions; ++d)
    dirs.push_back(DirectionLowering(b, loc, *rec, d).lower());
  // Y takes each direction's steps at its direction index (dim 1, or 2
  // batch-major), the final states theirs at dim 0 (1 batch-major).
  SmallVector<Value> results;
  Value outs[] = {rec->y, rec->yH, rec->yC};
  for (auto [k, out] : llvm::enumerate(outs)) {
    if (!out)
      continue;
    int64_t dim = (k == 0 ? 1 : 0) + (rec->batchMajor ? 1 : 0);
    Value v = emptyLike(b, loc, cast<RankedTensorType>(out.getType()));
    for (auto [d, dir] : llvm::enumerate(dirs))
      v = insertAt(b, loc, dir[k], v, dim, b.getIndexAttr(d));
    results.push_back(v);
  }
  return FailureOr<SmallVector<Value>>(std::move(results));
}

} // namespace kiln::lowering
