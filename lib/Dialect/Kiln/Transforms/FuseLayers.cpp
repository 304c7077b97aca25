//===- FuseLayers.cpp - decomposed layers into single kiln ops ------------===//
//
// Exporters write normalizations and activations as chains of primitive
// ops: PyTorch's TorchScript exporter below opset 17 writes LayerNorm as
// ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add; GELU below
// opset 20 as Div, Erf, Add, Mul, Mul; both exporters write SiLU as
// Sigmoid and Mul and RMSNorm as Pow, ReduceMean, Add, Sqrt, Reciprocal,
// Mul, Mul. Each pattern here recognizes one such chain, anchored at the op
// that starts it, and replaces it by the one ONNX op it computes
// (LayerNormalization, RMSNormalization, Gelu, Swish), which the lowering
// turns into a fixed, known sequence of loops (one reduction per
// statistic, one elementwise pass). A chain fuses only when every value
// inside it has no user outside it, its reductions are over trailing axes
// with the dims kept, its constants (epsilon, 0.5, 1, sqrt 2, ...) are
// constants of the expected values, and its scale and bias broadcast over
// the normalized dims only; anything else is left as it is.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>
#include <cmath>

#define DEBUG_TYPE "kiln-fuse-layers"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSELAYERS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The value of a one-element float or integer constant.
std::optional<double> scalarOf(Value v) {
  Attribute attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() != 1)
    return std::nullopt;
  Type elt = dense.getElementType();
  if (isa<FloatType>(elt)) {
    APFloat f = *dense.getValues<APFloat>().begin();
    bool lost;
    f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  if (elt.isSignlessInteger() || elt.isSignedInteger())
    return static_cast<double>(
        (*dense.getValues<APInt>().begin()).getSExtValue());
  return std::nullopt;
}

/// Whether `c` is within a relative 1e-4 of `x` (exporters write sqrt(2)
/// and sqrt(2/pi) rounded to f32 or shorter).
bool near(double c, double x) { return std::abs(c - x) <= 1e-4 * std::abs(x); }

/// Whether `v` is a one-element constant near `x`.
bool isConstant(Value v, double x) {
  std::optional<double> c = scalarOf(v);
  return c && near(*c, x);
}

/// `v` as `w * c` for a one-element constant `c`: Mul(w, c), Mul(c, w) or
/// Div(w, 1 / c). Nullopt when `v` is no such product.
std::optional<std::pair<Value, double>> constantFactor(Value v) {
  if (auto mul = v.getDefiningOp<MulOp>())
    for (int side = 0; side < 2; ++side)
      if (std::optional<double> c = scalarOf(mul->getOperand(1 - side)))
        return std::make_pair(mul->getOperand(side), *c);
  if (auto div = v.getDefiningOp<DivOp>())
    if (std::optional<double> c = scalarOf(div.getB()); c && *c != 0)
      return std::make_pair(div.getA(), 1.0 / *c);
  return std::nullopt;
}

/// `v` times a constant `c`, used once, as (`v`'s other factor, `c`); else
/// (`v`, 1).
std::pair<Value, double> unscaled(Value v) {
  if (!v.hasOneUse())
    return {v, 1.0};
  return constantFactor(v).value_or(std::make_pair(v, 1.0));
}

/// The operand of binary `op` other than `v`, or null when `v` is not one
/// of its operands. Both operands are `v` for `op(v, v)`.
Value otherOperand(Operation *op, Value v) {
  if (!op || op->getNumOperands() != 2)
    return nullptr;
  if (op->getOperand(0) == v)
    return op->getOperand(1);
  if (op->getOperand(1) == v)
    return op->getOperand(0);
  return nullptr;
}

/// The one op that uses `v`, when it has exactly one use.
Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// `v`'s one user, when it is an `OpT`.
template <typename OpT> OpT soleUserOf(Value v) {
  return dyn_cast_or_null<OpT>(soleUser(v));
}

RankedTensorType staticFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || !isa<FloatType>(t.getElementType()))
    return nullptr;
  return t;
}

/// The first axis of a ReduceMean with kept dims over the trailing axes
/// axis..rank-1 of its input, given as a constant.
std::optional<int64_t> trailingMeanAxis(ReduceMeanOp mean) {
  auto t = staticFloatTensor(mean.getData());
  DenseIntElementsAttr axes;
  if (!t || mean.getKeepdims() != 1 || !mean.getAxes() ||
      !matchPattern(mean.getAxes(), m_Constant(&axes)) || axes.empty())
    return std::nullopt;
  int64_t rank = t.getRank();
  SmallVector<int64_t> sorted;
  for (const APInt &a : axes) {
    int64_t v = a.getSExtValue();
    sorted.push_back(v < 0 ? v + rank : v);
  }
  llvm::sort(sorted);
  for (auto [i, a] : llvm::enumerate(sorted))
    if (a !=
        rank - static_cast<int64_t>(sorted.size()) + static_cast<int64_t>(i))
      return std::nullopt;
  return sorted.front();
}

/// Whether `v` is `Pow(x, 2)` or `Mul(x, x)`.
bool isSquareOf(Value v, Value x) {
  if (auto pow = v.getDefiningOp<PowOp>())
    return pow.getX() == x && isConstant(pow.getY(), 2.0);
  if (auto mul = v.getDefiningOp<MulOp>())
    return mul.getA() == x && mul.getB() == x;
  return false;
}

/// Whether a scale or bias of type `t` multiplies or adds to a tensor of
/// type `x` normalized over dims axis.. without broadcasting `x` itself:
/// trailing-aligned, 1 over the dims before axis, the dim or 1 after.
bool fitsNormalized(Value v, RankedTensorType x, int64_t axis) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t || !t.hasStaticShape() || t.getElementType() != x.getElementType() ||
      t.getRank() > x.getRank())
    return false;
  int64_t off = x.getRank() - t.getRank();
  for (int64_t d = 0; d < t.getRank(); ++d) {
    int64_t size = t.getDimSize(d);
    if (off + d < axis ? size != 1 : size != 1 && size != x.getDimSize(off + d))
      return false;
  }
  return true;
}

/// The statistic's normalization `x / sqrt(stat + eps)` from `stat` on: an
/// Add of a constant epsilon, Sqrt, then Div(x, .), or Reciprocal (or
/// Div(1, .)) and Mul with `x`. Returns the op that yields the normalized
/// value and sets `eps`; null when the chain differs or a value in it has
/// another user.
Operation *matchNormalize(Value stat, Value x, double &eps) {
  auto addEps = soleUserOf<AddOp>(stat);
  if (!addEps)
    return nullptr;
  std::optional<double> e = scalarOf(otherOperand(addEps, stat));
  if (!e || *e < 0)
    return nullptr;
  eps = *e;
  auto sqrt = soleUserOf<SqrtOp>(addEps.getC());
  if (!sqrt)
    return nullptr;
  Operation *user = soleUser(sqrt.getY());
  if (auto div = dyn_cast_or_null<DivOp>(user)) {
    if (div.getB() == sqrt.getY() && div.getA() == x)
      return div;
    if (div.getB() != sqrt.getY() || !isConstant(div.getA(), 1.0))
      return nullptr;
    auto mul = soleUserOf<MulOp>(div.getC());
    return mul && otherOperand(mul, div.getC()) == x ? mul : nullptr;
  }
  if (auto recip = dyn_cast_or_null<ReciprocalOp>(user)) {
    auto mul = soleUserOf<MulOp>(recip.getY());
    return mul && otherOperand(mul, recip.getY()) == x ? mul : nullptr;
  }
  return nullptr;
}

/// After a normalization's result `y`: a Mul by a scale and then an Add of
/// a bias (when `withBias`), each taken when it is `y`'s one user and its
/// other operand fits the normalized dims. Moves `last` to the last op
/// taken.
void matchAffine(Operation *&last, RankedTensorType x, int64_t axis,
                 bool withBias, Value &scale, Value &bias) {
  Value y = last->getResult(0);
  if (auto mul = soleUserOf<MulOp>(y)) {
    Value s = otherOperand(mul, y);
    if (s != y && fitsNormalized(s, x, axis)) {
      scale = s;
      last = mul;
      y = mul.getC();
    }
  }
  if (!withBias)
    return;
  if (auto add = soleUserOf<AddOp>(y)) {
    Value b = otherOperand(add, y);
    if (b != y && fitsNormalized(b, x, axis)) {
      bias = b;
      last = add;
    }
  }
}

/// A constant of ones of `x`'s normalized dims, for a chain without scale.
Value onesOfNormalized(PatternRewriter &rewriter, Location loc,
                       RankedTensorType x, int64_t axis) {
  auto t =
      RankedTensorType::get(x.getShape().drop_front(axis), x.getElementType());
  return ConstantOp::create(
      rewriter, loc, t,
      DenseElementsAttr::get(t, rewriter.getFloatAttr(t.getElementType(), 1)));
}

/// The fused op's location: the chain's own locations, named after the
/// fused op and the chain's first node, so that kernels and profile
/// regions say where they come from.
Location fusedLoc(PatternRewriter &rewriter, StringRef kind,
                  ArrayRef<Operation *> chain) {
  SmallVector<Location> locs;
  for (Operation *op : chain)
    locs.push_back(op->getLoc());
  std::string first;
  if (auto named = dyn_cast<NameLoc>(chain.front()->getLoc()))
    first = named.getName().str();
  std::string name = (kind + "(" + first + ")").str();
  return NameLoc::get(rewriter.getStringAttr(name), rewriter.getFusedLoc(locs));
}

/// Replaces the normalization chain `chain` (first node first, `last`
/// last) by the op `name` over `x` with the given axis, epsilon, scale (a
/// constant of ones when null) and bias (when not null).
LogicalResult replaceByNormalization(PatternRewriter &rewriter, StringRef kind,
                                     StringRef name,
                                     ArrayRef<Operation *> chain, Value x,
                                     int64_t axis, double eps, Value scale,
                                     Value bias) {
  Operation *last = chain.back();
  auto xt = cast<RankedTensorType>(x.getType());
  if (last->getResult(0).getType() != xt)
    return failure();
  Location loc = fusedLoc(rewriter, kind, chain);
  if (!scale)
    scale = onesOfNormalized(rewriter, loc, xt, axis);
  OperationState state(loc, name);
  state.addOperands({x, scale});
  if (bias)
    state.addOperands(bias);
  state.addAttribute("axis", rewriter.getI64IntegerAttr(axis));
  state.addAttribute("epsilon",
                     rewriter.getF32FloatAttr(static_cast<float>(eps)));
  // LayerNormalization's Mean and InvStdDev results are left out.
  if (name == LayerNormalizationOp::getOperationName())
    state.addAttribute("resultSegmentSizes",
                       rewriter.getDenseI32ArrayAttr({1, 0, 0}));
  state.addTypes(xt);
  rewriter.replaceOp(last, rewriter.create(state)->getResults());
  return success();
}

/// LayerNorm: mean = ReduceMean(x), d = Sub(x, mean), var =
/// ReduceMean(Pow(d, 2)), y = d / Sqrt(var + eps), then optionally
/// Mul(y, scale) and Add(., bias). Anchored at the first ReduceMean.
struct FuseLayerNorm : OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceMeanOp mean,
                                PatternRewriter &rewriter) const override {
    std::optional<int64_t> axis = trailingMeanAxis(mean);
    if (!axis)
      return failure();
    Value x = mean.getData();
    auto xt = staticFloatTensor(x);
    auto sub = soleUserOf<SubOp>(mean.getReduced());
    if (!sub || sub.getA() != x || sub.getB() != mean.getReduced() ||
        sub.getC().getType() != xt)
      return failure();
    Value d = sub.getC();
    // d feeds the square and the normalization, nothing else.
    Operation *square = nullptr;
    for (Operation *user : d.getUsers())
      if (user->getNumResults() == 1 && isSquareOf(user->getResult(0), d))
        square = user;
    if (!square || !square->getResult(0).hasOneUse())
      return failure();
    auto var = soleUserOf<ReduceMeanOp>(square->getResult(0));
    if (!var || trailingMeanAxis(var) != axis)
      return failure();
    double eps;
    Operation *norm = matchNormalize(var.getReduced(), d, eps);
    if (!norm || norm->getResult(0).getType() != xt)
      return failure();
    for (Operation *user : d.getUsers())
      if (user != square && user != norm)
        return failure();
    Operation *last = norm;
    Value scale, bias;
    matchAffine(last, xt, *axis, /*withBias=*/true, scale, bias);
    return replaceByNormalization(rewriter, "LayerNormalization",
                                  LayerNormalizationOp::getOperationName(),
                                  {mean, sub, square, var, norm, last}, x,
                                  *axis, eps, scale, bias);
  }
};

/// RMSNorm: ms = ReduceMean(Pow(x, 2)), y = x / Sqrt(ms + eps) (or x times
/// its reciprocal), then optionally Mul(y, scale). Anchored at the
/// ReduceMean. Not when x is itself a centered value (x - mean(x) over the
/// same axes): that chain is a LayerNorm.
struct FuseRMSNorm : OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceMeanOp ms,
                                PatternRewriter &rewriter) const override {
    std::optional<int64_t> axis = trailingMeanAxis(ms);
    if (!axis)
      return failure();
    Operation *square = ms.getData().getDefiningOp();
    if (!square || square->getNumOperands() != 2 || !ms.getData().hasOneUse())
      return failure();
    Value x = square->getOperand(0);
    auto xt = staticFloatTensor(x);
    if (!xt || !isSquareOf(ms.getData(), x))
      return failure();
    if (auto sub = x.getDefiningOp<SubOp>())
      if (auto mean = sub.getB().getDefiningOp<ReduceMeanOp>())
        if (mean.getData() == sub.getA() && trailingMeanAxis(mean) == axis)
          return failure();
    double eps;
    Operation *norm = matchNormalize(ms.getReduced(), x, eps);
    if (!norm || norm->getResult(0).getType() != xt)
      return failure();
    Operation *last = norm;
    Value scale, bias;
    matchAffine(last, xt, *axis, /*withBias=*/false, scale, bias);
    return replaceByNormalization(
        rewriter, "RMSNormalization", RMSNormalizationOp::getOperationName(),
        {square, ms, norm, last}, x, *axis, eps, scale, Value());
  }
};

/// The tail every GELU form shares, from `a` = 1 + erf(.) or 1 + tanh(.):
/// 0.5 * x * a in any association (Mul(Mul(x, a), 0.5), Mul(Mul(x, 0.5),
/// a), Mul(Mul(a, 0.5), x), or Div(Mul(x, a), 2)). Returns the last op and
/// appends the ops taken to `chain`.
Operation *matchHalfXTimes(Value a, Value x,
                           SmallVectorImpl<Operation *> &chain) {
  auto mul = soleUserOf<MulOp>(a);
  if (!mul)
    return nullptr;
  chain.push_back(mul);
  Value other = otherOperand(mul, a);
  if (other == x) {
    Operation *next = soleUser(mul.getC());
    if (auto half = dyn_cast_or_null<MulOp>(next);
        half && isConstant(otherOperand(half, mul.getC()), 0.5))
      return chain.push_back(half), half;
    if (auto div = dyn_cast_or_null<DivOp>(next);
        div && div.getA() == mul.getC() && isConstant(div.getB(), 2.0))
      return chain.push_back(div), div;
    return nullptr;
  }
  if (auto halfX = other.getDefiningOp<MulOp>();
      halfX && halfX.getC().hasOneUse() && otherOperand(halfX, x) &&
      isConstant(otherOperand(halfX, x), 0.5))
    return chain.push_back(halfX), mul;
  if (isConstant(other, 0.5)) {
    auto byX = soleUserOf<MulOp>(mul.getC());
    if (byX && otherOperand(byX, mul.getC()) == x)
      return chain.push_back(byX), byX;
  }
  return nullptr;
}

/// `1 + v`, as v's one user.
AddOp onePlus(Value v) {
  auto add = soleUserOf<AddOp>(v);
  return add && isConstant(otherOperand(add, v), 1.0) ? add : AddOp();
}

/// Replaces the GELU chain ending at `last` by Gelu(x).
LogicalResult replaceByGelu(PatternRewriter &rewriter, Operation *last, Value x,
                            StringRef approximate,
                            ArrayRef<Operation *> chain) {
  if (!last || last->getResult(0).getType() != x.getType())
    return failure();
  auto gelu =
      GeluOp::create(rewriter, fusedLoc(rewriter, "Gelu", chain), x.getType(),
                     x, rewriter.getStringAttr(approximate));
  rewriter.replaceOp(last, gelu->getResults());
  return success();
}

/// GELU, erf form: 0.5 * x * (1 + erf(x / sqrt(2))), x / sqrt(2) also as
/// x * (1 / sqrt(2)). Anchored at the Erf.
struct FuseGeluErf : OpRewritePattern<ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ErfOp erf,
                                PatternRewriter &rewriter) const override {
    // x / sqrt(2), or x times sqrt(1/2).
    auto factor = constantFactor(erf.getInput());
    if (!factor || !erf.getInput().hasOneUse() ||
        !near(factor->second, std::sqrt(0.5)))
      return failure();
    Value x = factor->first;
    Operation *scaled = erf.getInput().getDefiningOp();
    if (!staticFloatTensor(x))
      return failure();
    AddOp a = onePlus(erf.getOutput());
    if (!a)
      return failure();
    SmallVector<Operation *> chain = {scaled, erf, a};
    Operation *last = matchHalfXTimes(a.getC(), x, chain);
    return replaceByGelu(rewriter, last, x, "none", chain);
  }
};

/// Whether `v` is x cubed: Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x),
/// x), its inner values used once.
bool isCubeOf(Value v, Value x) {
  if (auto pow = v.getDefiningOp<PowOp>())
    return pow.getX() == x && isConstant(pow.getY(), 3.0);
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul)
    return false;
  Value sq = otherOperand(mul, x);
  return sq && sq != x && sq.hasOneUse() && isSquareOf(sq, x);
}

/// GELU, tanh form: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 *
/// x^3))). Anchored at the Tanh.
struct FuseGeluTanh : OpRewritePattern<TanhOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TanhOp tanh,
                                PatternRewriter &rewriter) const override {
    auto scaled = constantFactor(tanh.getInput());
    if (!scaled || !tanh.getInput().hasOneUse() ||
        !near(scaled->second, std::sqrt(2.0 / M_PI)))
      return failure();
    Value inner = scaled->first;
    auto poly = inner.getDefiningOp<AddOp>();
    if (!poly || !inner.hasOneUse())
      return failure();
    // x + 0.044715 * x^3, either way round.
    for (int side = 0; side < 2; ++side) {
      Value x = poly->getOperand(side), term = poly->getOperand(1 - side);
      auto cubed = constantFactor(term);
      if (!cubed || !term.hasOneUse() || !staticFloatTensor(x) ||
          !near(cubed->second, 0.044715))
        continue;
      Value cube = cubed->first;
      if (!cube.hasOneUse() || !isCubeOf(cube, x))
        continue;
      AddOp a = onePlus(tanh.getOutput());
      if (!a)
        return failure();
      SmallVector<Operation *> chain = {cube.getDefiningOp(),
                                        term.getDefiningOp(),
                                        poly,
                                        tanh.getInput().getDefiningOp(),
                                        tanh,
                                        a};
      Operation *last = matchHalfXTimes(a.getC(), x, chain);
      return replaceByGelu(rewriter, last, x, "tanh", chain);
    }
    return failure();
  }
};

/// SiLU: Mul(x, Sigmoid(x)) is Swish(x) with alpha 1. Anchored at the
/// Sigmoid.
struct FuseSilu : OpRewritePattern<SigmoidOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SigmoidOp sigmoid,
                                PatternRewriter &rewriter) const override {
    Value x = sigmoid.getX();
    auto mul = soleUserOf<MulOp>(sigmoid.getY());
    if (!mul || otherOperand(mul, sigmoid.getY()) != x ||
        mul.getC().getType() != x.getType() || !staticFloatTensor(x))
      return failure();
    auto swish =
        SwishOp::create(rewriter, fusedLoc(rewriter, "Swish", {sigmoid, mul}),
                        x.getType(), x, rewriter.getF32FloatAttr(1.0f));
    rewriter.replaceOp(mul, swish->getResults());
    return success();
  }
};

/// Whether every value of `mask` is finite, provably from how it is made:
/// a constant of finite values, or a Where choosing between finite
/// constants, through Cast, Expand, Reshape and Unsqueeze.
bool provablyFinite(Value mask) {
  Operation *def = mask.getDefiningOp();
  while (isa_and_nonnull<CastOp, ExpandOp, ReshapeOp, UnsqueezeOp>(def)) {
    mask = def->getOperand(0);
    def = mask.getDefiningOp();
  }
  if (auto where = dyn_cast_or_null<WhereOp>(def))
    return provablyFinite(where.getX()) && provablyFinite(where.getY());
  DenseElementsAttr dense;
  if (!matchPattern(mask, m_Constant(&dense)) ||
      !isa<FloatType>(dense.getElementType()))
    return false;
  return llvm::all_of(dense.getValues<APFloat>(),
                      [](const APFloat &f) { return f.isFinite(); });
}

/// Attention: Softmax(Q K^T * scale (+ mask)) V, as exporters write it:
/// the scale after the product (Div by sqrt(d), Mul by 1/sqrt(d)) or on
/// both operands (SDPA's Mul of Q and of K^T by d^-1/4), K^T a Transpose
/// of K (or any [B, H, D, Skv] value), an additive float mask with one
/// value per key, the probabilities read by the second MatMul directly,
/// through a Cast to their own type, or through SDPA's guard Where(IsNaN(P),
/// 0, P): dropped when the mask is provably finite (the guard then never
/// fires), else kept as the op's `kiln.zero_nan_rows` attribute (a row
/// the mask hides whole gives zeros).
/// Becomes Attention(Q, K, V, mask) with that scale. Anchored at the
/// Softmax. Not when the mask broadcasts over the keys, the batch or head
/// dims of Q, K and V differ (MatMul would broadcast them), or a value
/// inside has another user.
struct FuseAttention : OpRewritePattern<SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    auto st = staticFloatTensor(softmax.getInput());
    auto axis = static_cast<int64_t>(softmax.getAxis());
    if (!st || st.getRank() != 4 || (axis != -1 && axis != 3) ||
        !softmax.getInput().hasOneUse())
      return failure();
    SmallVector<Operation *> chain;
    // The bias: Add(scores, mask) either way round.
    Value logits = softmax.getInput(), mask;
    MatMulOp qk;
    double scale = 1.0;
    auto matchScores = [&](Value v) {
      auto [product, c] = unscaled(v);
      auto mm = product.getDefiningOp<MatMulOp>();
      if (!mm || !mm.getY().hasOneUse())
        return false;
      qk = mm;
      scale = c;
      if (product != v)
        chain.push_back(v.getDefiningOp());
      return true;
    };
    if (auto add = logits.getDefiningOp<AddOp>()) {
      for (int side = 0; side < 2 && !qk; ++side)
        if (matchScores(add->getOperand(side)))
          mask = add->getOperand(1 - side);
      if (!qk)
        return failure();
      chain.push_back(add);
    } else if (!matchScores(logits)) {
      return failure();
    }
    chain.push_back(qk);
    // Scales on the operands.
    auto [q, qScale] = unscaled(qk.getA());
    auto [kT, kScale] = unscaled(qk.getB());
    scale *= qScale * kScale;
    if (q != qk.getA())
      chain.push_back(qk.getA().getDefiningOp());
    if (kT != qk.getB())
      chain.push_back(qk.getB().getDefiningOp());
    chain.push_back(softmax);
    // The probabilities' reader.
    Value p = softmax.getOutput();
    bool guarded = false;
    if (auto cast = soleUserOf<CastOp>(p);
        cast && cast.getOutput().getType() == p.getType()) {
      chain.push_back(cast);
      p = cast.getOutput();
    } else if (!p.hasOneUse()) {
      // SDPA's guard: Where(IsNaN(P), 0, P).
      IsNaNOp isNan;
      WhereOp where;
      for (Operation *user : p.getUsers()) {
        if (auto n = dyn_cast<IsNaNOp>(user))
          isNan = n;
        else if (auto w = dyn_cast<WhereOp>(user))
          where = w;
        else
          return failure();
      }
      if (!isNan || !where || !isNan.getY().hasOneUse() ||
          where.getCondition() != isNan.getY() || where.getY() != p ||
          !isConstant(where.getX(), 0.0) ||
          where.getOutput().getType() != p.getType())
        return failure();
      chain.push_back(isNan);
      chain.push_back(where);
      p = where.getOutput();
      guarded = true;
    }
    auto pv = soleUserOf<MatMulOp>(p);
    if (!pv || pv.getA() != p)
      return failure();
    chain.push_back(pv);
    // A guard that may fire (a mask with -inf can mask a whole row, whose
    // probabilities are then NaN) stays part of the op's meaning.
    bool zeroNaNRows = guarded && mask && !provablyFinite(mask);
    // Shapes: Q [B, H, Sq, D], K^T [B, H, D, Skv], V [B, H, Skv, Dv].
    Value v = pv.getB();
    auto qt = staticFloatTensor(q), kTt = staticFloatTensor(kT);
    auto vt = staticFloatTensor(v), yt = staticFloatTensor(pv.getY());
    if (!qt || !kTt || !vt || !yt || qt.getRank() != 4 || kTt.getRank() != 4 ||
        vt.getRank() != 4 ||
        qt.getShape().take_front(2) != kTt.getShape().take_front(2) ||
        qt.getShape().take_front(2) != vt.getShape().take_front(2) ||
        qt.getDimSize(3) != kTt.getDimSize(2) ||
        kTt.getDimSize(3) != vt.getDimSize(2) ||
        qt.getElementType() != kTt.getElementType() ||
        qt.getElementType() != vt.getElementType())
      return failure();
    if (mask) {
      auto mt = dyn_cast<RankedTensorType>(mask.getType());
      if (!mt || !mt.hasStaticShape() || mt.getRank() < 1 || mt.getRank() > 4 ||
          mt.getElementType() != qt.getElementType() ||
          mt.getDimSize(mt.getRank() - 1) != st.getDimSize(3))
        return failure();
      for (int64_t i = 0; i < mt.getRank(); ++i) {
        int64_t m = mt.getDimSize(i), s = st.getDimSize(4 - mt.getRank() + i);
        if (m != 1 && m != s)
          return failure();
      }
    }
    // Named after the Q K^T product, the chain's first node in the graph.
    std::stable_partition(chain.begin(), chain.end(),
                          [&](Operation *op) { return op == qk; });
    Location loc = fusedLoc(rewriter, "Attention", chain);
    // K as [B, H, Skv, D]: the Transpose that made K^T, composed with the
    // swap of the last two dims, or a Transpose of K^T.
    SmallVector<int64_t> swap = {0, 1, 3, 2}, perm = swap;
    Value kSource = kT;
    if (auto tr = kT.getDefiningOp<TransposeOp>();
        tr && tr.getPerm() && tr.getPerm()->size() == 4) {
      kSource = tr.getData();
      for (int i = 0; i < 4; ++i)
        perm[i] = (*tr.getPerm())[swap[i]];
    }
    Value k = kSource;
    if (perm != SmallVector<int64_t>{0, 1, 2, 3}) {
      auto kt = RankedTensorType::get({qt.getDimSize(0), qt.getDimSize(1),
                                       kTt.getDimSize(3), kTt.getDimSize(2)},
                                      qt.getElementType());
      k = TransposeOp::create(rewriter, loc, kt, kSource,
                              rewriter.getDenseI64ArrayAttr(perm));
    }
    OperationState state(loc, AttentionOp::getOperationName());
    state.addOperands({q, k, v});
    if (mask)
      state.addOperands(mask);
    state.addAttribute(
        "operandSegmentSizes",
        rewriter.getDenseI32ArrayAttr({1, 1, 1, mask ? 1 : 0, 0, 0, 0}));
    state.addAttribute("resultSegmentSizes",
                       rewriter.getDenseI32ArrayAttr({1, 0, 0, 0}));
    state.addAttribute("scale",
                       rewriter.getF32FloatAttr(static_cast<float>(scale)));
    if (zeroNaNRows)
      state.addAttribute(kZeroNaNRowsAttrName, rewriter.getUnitAttr());
    state.addTypes(yt);
    rewriter.replaceOp(pv, rewriter.create(state)->getResults());
    return success();
  }
};

struct FuseLayersPass : public kiln::impl::KilnFuseLayersBase<FuseLayersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // LayerNorm before RMSNorm: a LayerNorm's variance is an RMSNorm
    // chain over the centered value, which FuseRMSNorm refuses anyway.
    patterns.add<FuseLayerNorm>(&getContext(), /*benefit=*/2);
    patterns
        .add<FuseRMSNorm, FuseGeluErf, FuseGeluTanh, FuseSilu, FuseAttention>(
            &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
