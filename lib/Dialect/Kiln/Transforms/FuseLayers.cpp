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
    return static_cast<double>((*dense.getValues<APInt>().begin())
                                   .getSExtValue());
  return std::nullopt;
}

/// Whether `v` is a one-element constant within a relative 1e-4 of `x`
/// (exporters write sqrt(2) and sqrt(2/pi) rounded to f32 or shorter).
bool isConstant(Value v, double x) {
  std::optional<double> c = scalarOf(v);
  return c && std::abs(*c - x) <= 1e-4 * std::abs(x);
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
    if (a != rank - static_cast<int64_t>(sorted.size()) +
                 static_cast<int64_t>(i))
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
    if (off + d < axis ? size != 1
                       : size != 1 && size != x.getDimSize(off + d))
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
  auto t = RankedTensorType::get(x.getShape().drop_front(axis),
                                 x.getElementType());
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
  return NameLoc::get(rewriter.getStringAttr(name),
                      rewriter.getFusedLoc(locs));
}

/// Replaces the normalization chain `chain` (first node first, `last`
/// last) by the op `name` over `x` with the given axis, epsilon, scale (a
/// constant of ones when null) and bias (when not null).
LogicalResult replaceByNormalization(PatternRewriter &rewriter,
                                     StringRef kind, StringRef name,
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
    if (!square || square->getNumOperands() != 2 ||
        !ms.getData().hasOneUse())
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
    return replaceByNormalization(rewriter, "RMSNormalization",
                                  RMSNormalizationOp::getOperationName(),
                                  {square, ms, norm, last}, x, *axis, eps,
                                  scale, Value());
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
      halfX && halfX.getC().hasOneUse() &&
      otherOperand(halfX, x) && isConstant(otherOperand(halfX, x), 0.5))
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
LogicalResult replaceByGelu(PatternRewriter &rewriter, Operation *last,
                            Value x, StringRef approximate,
                            ArrayRef<Operation *> chain) {
  if (!last || last->getResult(0).getType() != x.getType())
    return failure();
  auto gelu =
      GeluOp::create(rewriter, fusedLoc(rewriter, "Gelu", chain),
                     x.getType(), x, rewriter.getStringAttr(approximate));
  rewriter.replaceOp(last, gelu->getResults());
  return success();
}

/// GELU, erf form: 0.5 * x * (1 + erf(x / sqrt(2))), x / sqrt(2) also as
/// x * (1 / sqrt(2)). Anchored at the Erf.
struct FuseGeluErf : OpRewritePattern<ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ErfOp erf,
                                PatternRewriter &rewriter) const override {
    Operation *scaled = erf.getInput().getDefiningOp();
    if (!scaled || !erf.getInput().hasOneUse())
      return failure();
    Value x;
    if (auto div = dyn_cast<DivOp>(scaled);
        div && isConstant(div.getB(), std::sqrt(2.0)))
      x = div.getA();
    if (auto mul = dyn_cast<MulOp>(scaled)) {
      if (isConstant(mul.getB(), std::sqrt(0.5)))
        x = mul.getA();
      else if (isConstant(mul.getA(), std::sqrt(0.5)))
        x = mul.getB();
    }
    if (!x || !staticFloatTensor(x))
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
    auto scaled = tanh.getInput().getDefiningOp<MulOp>();
    if (!scaled || !tanh.getInput().hasOneUse())
      return failure();
    const double k = std::sqrt(2.0 / M_PI);
    Value inner = isConstant(scaled.getA(), k)   ? scaled.getB()
                  : isConstant(scaled.getB(), k) ? scaled.getA()
                                                 : Value();
    auto poly = inner ? inner.getDefiningOp<AddOp>() : AddOp();
    if (!poly || !inner.hasOneUse())
      return failure();
    // x + 0.044715 * x^3, either way round.
    for (int side = 0; side < 2; ++side) {
      Value x = poly->getOperand(side);
      auto term = poly->getOperand(1 - side).getDefiningOp<MulOp>();
      if (!term || !term.getC().hasOneUse() || !staticFloatTensor(x))
        continue;
      Value cube = isConstant(term.getA(), 0.044715)   ? term.getB()
                   : isConstant(term.getB(), 0.044715) ? term.getA()
                                                       : Value();
      if (!cube || !cube.hasOneUse() || !isCubeOf(cube, x))
        continue;
      AddOp a = onePlus(tanh.getOutput());
      if (!a)
        return failure();
      SmallVector<Operation *> chain = {cube.getDefiningOp(), term, poly,
                                        scaled, tanh, a};
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

struct FuseLayersPass : public kiln::impl::KilnFuseLayersBase<FuseLayersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // LayerNorm before RMSNorm: a LayerNorm's variance is an RMSNorm
    // chain over the centered value, which FuseRMSNorm refuses anyway.
    patterns.add<FuseLayerNorm>(&getContext(), /*benefit=*/2);
    patterns.add<FuseRMSNorm, FuseGeluErf, FuseGeluTanh, FuseSilu>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
