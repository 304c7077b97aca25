//===- LowerTrainingOps.cpp - Adagrad, Adam, Momentum to linalg -----------===//
//
// Part of convert-kiln-to-linalg (see KilnToLinalg.cpp). The optimizers of
// the ONNX `ai.onnx.preview.training` domain update each optimized tensor X
// from its gradient G and its state (H, V) elementwise, scaled by the
// learning rate R and the step count T, both scalars read at run time. Each
// X becomes one linalg.generic that yields the new X and the new states.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

using namespace mlir;
using namespace kiln;

namespace kiln::lowering {
namespace {

/// Reads the single element of the scalar tensor `t` (any rank).
Value extractScalar(OpBuilder &b, Location loc, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<Value> zeros;
  if (type.getRank())
    zeros.assign(type.getRank(), arith::ConstantIndexOp::create(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, t, zeros);
}

/// The operands of an optimizer, split into R and T (read as scalars, R of
/// the optimized element type) and, per optimized tensor, X followed by G
/// and the states.
struct OptimizerOperands {
  Value r, t;
  /// groups[i] = {X_i, G_i, state1_i, ...}.
  SmallVector<SmallVector<Value>> groups;
  RankedTensorType tensorType(size_t i) const {
    return cast<RankedTensorType>(groups[i][0].getType());
  }
};

/// Splits and checks the operands of `op`: R, T, then `perTensor` groups of
/// inputs (X..., G..., states...) and `perTensor - 1` groups of results
/// (X_new..., states_new...), every tensor of a group of the type of its X,
/// which has float elements.
FailureOr<OptimizerOperands> splitOperands(OpBuilder &b, Operation *op, Value r,
                                           Value t, ValueRange inputs,
                                           unsigned perTensor) {
  Location loc = op->getLoc();
  size_t n = inputs.size() / perTensor;
  if (n == 0 || inputs.size() % perTensor)
    return op->emitOpError("needs ")
               << perTensor
               << " inputs per optimized tensor after R and T, got "
               << inputs.size(),
           failure();
  if (op->getNumResults() != n * (perTensor - 1))
    return op->emitOpError("needs ")
               << n * (perTensor - 1) << " results for " << n
               << " optimized tensors, got " << op->getNumResults(),
           failure();
  for (Value s : {r, t})
    if (cast<RankedTensorType>(s.getType()).getNumElements() != 1)
      return op->emitOpError("needs scalar R and T, got ") << s.getType(),
             failure();
  if (!isa<IntegerType>(getElementTypeOrSelf(t.getType())) ||
      !isFloat(r.getType()))
    return op->emitOpError("needs a float R and an integer T, got ")
               << r.getType() << " and " << t.getType(),
           failure();
  OptimizerOperands ops;
  for (size_t i = 0; i < n; ++i) {
    SmallVector<Value> &group = ops.groups.emplace_back();
    for (unsigned k = 0; k < perTensor; ++k)
      group.push_back(inputs[k * n + i]);
    Type x = group[0].getType();
    if (!isFloat(x))
      return op->emitOpError("needs float tensors to optimize, got ") << x,
             failure();
    auto same = [&](Type other) { return other == x; };
    if (!llvm::all_of(ValueRange(group).getTypes(), same))
      return op->emitOpError("needs the gradient and states of input #")
                 << i << " of its type " << x,
             failure();
    for (unsigned k = 0; k + 1 < perTensor; ++k)
      if (!same(op->getResult(k * n + i).getType()))
        return op->emitOpError("needs result #")
                   << k * n + i << " of the type " << x << " of its input",
               failure();
  }
  Type elt = getElementTypeOrSelf(ops.groups[0][0].getType());
  if (!llvm::all_of(ops.groups, [&](ArrayRef<Value> g) {
        return getElementTypeOrSelf(g[0].getType()) == elt;
      }))
    return op->emitOpError("needs tensors of one element type to optimize"),
           failure();
  ops.r = convertScalar(b, loc, extractScalar(b, loc, r), elt);
  ops.t = extractScalar(b, loc, t);
  return ops;
}

/// The scalar `v` as a 0-d tensor, an input that the update broadcasts.
Value scalarTensor(OpBuilder &b, Location loc, Value v) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, v.getType()), v);
}

using UpdateFn =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

/// One linalg.generic over the type `type` of the tensors `tensors`, with
/// the 0-d `scalars` broadcast, yielding `numResults` tensors of that type:
/// `fn` maps the elements (tensors first, then scalars) to the results.
SmallVector<Value> update(OpBuilder &b, Location loc, RankedTensorType type,
                          ValueRange tensors, ValueRange scalars,
                          unsigned numResults, UpdateFn fn) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineMap> maps(tensors.size(), identity);
  maps.append(scalars.size(), AffineMap::get(rank, 0, {}, ctx));
  maps.append(numResults, identity);
  SmallVector<Value> inits, inputs = llvm::to_vector(tensors);
  inputs.append(scalars.begin(), scalars.end());
  for (unsigned i = 0; i < numResults; ++i)
    inits.push_back(emptyLike(b, loc, type));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, SmallVector<Type>(numResults, type), inputs, inits, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl,
                                fn(nb, nl, args.take_front(inputs.size())));
      });
  return SmallVector<Value>(generic.getResults());
}

/// Small arith builders over scalars of one float type.
struct Arith {
  OpBuilder &b;
  Location loc;
  Value c(Type t, double v) { return scalarConst(b, loc, t, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value pow(Value x, Value y) { return math::PowFOp::create(b, loc, x, y); }
  /// The integer `t` as a float of type `to`.
  Value fromInt(Value t, Type to) {
    return arith::SIToFPOp::create(b, loc, to, t);
  }
  /// `norm * x + g`, the gradient with the L2 regularization term.
  Value regularized(Value x, Value g, double norm) {
    return add(mul(c(x.getType(), norm), x), g);
  }
};

/// Results in ONNX order (X_new..., states_new...) from the per-tensor
/// results (X_new_i, states_new_i...).
SmallVector<Value> interleave(ArrayRef<SmallVector<Value>> perTensor) {
  SmallVector<Value> results;
  for (size_t k = 0; k < perTensor[0].size(); ++k)
    for (const SmallVector<Value> &r : perTensor)
      results.push_back(r[k]);
  return results;
}

/// Adagrad: r = R / (1 + T * decay_factor), G' = norm_coefficient * X + G,
/// H_new = H + G' * G', X_new = X - r * G' / (sqrt(H_new) + epsilon).
FailureOr<SmallVector<Value>> lowerAdagrad(OpBuilder &b, AdagradOp op) {
  Location loc = op.getLoc();
  auto ops = splitOperands(b, op, op.getR(), op.getT(), op.getInputs(), 3);
  if (failed(ops))
    return failure();
  Arith a{b, loc};
  Type elt = ops->r.getType();
  double decay = op.getDecayFactor().convertToDouble();
  double eps = op.getEpsilon().convertToDouble();
  double norm = op.getNormCoefficient().convertToDouble();
  // Built one op per statement, so that the IR order does not depend on the
  // compiler's order of evaluating arguments.
  Value decayed = a.mul(a.fromInt(ops->t, elt), a.c(elt, decay));
  Value one = a.c(elt, 1);
  Value r = scalarTensor(b, loc, a.div(ops->r, a.add(one, decayed)));
  SmallVector<SmallVector<Value>> perTensor;
  for (auto [i, group] : llvm::enumerate(ops->groups))
    perTensor.push_back(update(
        b, loc, ops->tensorType(i), group, r, 2,
        [&](OpBuilder &nb, Location nl, ValueRange v) -> SmallVector<Value> {
          Arith e{nb, nl};
          Value g = e.regularized(v[0], v[1], norm);
          Value h = e.add(v[2], e.mul(g, g));
          Value root = e.sqrt(h);
          Value denom = e.add(root, e.c(elt, eps));
          Value step = e.mul(v[3], g);
          return {e.sub(v[0], e.div(step, denom)), h};
        }));
  return interleave(perTensor);
}

/// Adam: G' = norm_coefficient * X + G, V_new = alpha * V + (1 - alpha) * G',
/// H_new = beta * H + (1 - beta) * G' * G', r = T > 0 ?
/// R * sqrt(1 - beta^T) / (1 - alpha^T) : R, X_new = (1 -
/// norm_coefficient_post) * (X - r * V_new / (sqrt(H_new) + epsilon)).
FailureOr<SmallVector<Value>> lowerAdam(OpBuilder &b, AdamOp op) {
  Location loc = op.getLoc();
  auto ops = splitOperands(b, op, op.getR(), op.getT(), op.getInputs(), 4);
  if (failed(ops))
    return failure();
  Arith a{b, loc};
  Type elt = ops->r.getType();
  double alpha = op.getAlpha().convertToDouble();
  double beta = op.getBeta().convertToDouble();
  double eps = op.getEpsilon().convertToDouble();
  double norm = op.getNormCoefficient().convertToDouble();
  double post = op.getNormCoefficientPost().convertToDouble();
  Value one = a.c(elt, 1);
  Value t = a.fromInt(ops->t, elt);
  Value betaPow = a.pow(a.c(elt, beta), t);
  Value scaled = a.mul(ops->r, a.sqrt(a.sub(one, betaPow)));
  Value alphaPow = a.pow(a.c(elt, alpha), t);
  Value adjusted = a.div(scaled, a.sub(one, alphaPow));
  Value positive =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, ops->t,
                            scalarConst(b, loc, ops->t.getType(), 0));
  Value r = scalarTensor(
      b, loc, arith::SelectOp::create(b, loc, positive, adjusted, ops->r));
  SmallVector<SmallVector<Value>> perTensor;
  for (auto [i, group] : llvm::enumerate(ops->groups))
    perTensor.push_back(update(
        b, loc, ops->tensorType(i), group, r, 3,
        [&](OpBuilder &nb, Location nl, ValueRange v) -> SmallVector<Value> {
          Arith e{nb, nl};
          Value g = e.regularized(v[0], v[1], norm);
          Value vOld = e.mul(e.c(elt, alpha), v[2]);
          Value vNew = e.add(vOld, e.mul(e.c(elt, 1 - alpha), g));
          Value hOld = e.mul(e.c(elt, beta), v[3]);
          Value square = e.mul(g, g);
          Value hNew = e.add(hOld, e.mul(e.c(elt, 1 - beta), square));
          Value root = e.sqrt(hNew);
          Value denom = e.add(root, e.c(elt, eps));
          Value step = e.mul(v[4], e.div(vNew, denom));
          Value x = e.sub(v[0], step);
          return {e.mul(e.c(elt, 1 - post), x), vNew, hNew};
        }));
  return interleave(perTensor);
}

/// Momentum: G' = norm_coefficient * X + G, V_new = alpha * V + b * G' with
/// b = T > 0 ? beta : 1; X_new = X - R * V_new ("standard") or
/// X - R * (G' + alpha * V_new) ("nesterov").
FailureOr<SmallVector<Value>> lowerMomentum(OpBuilder &b, MomentumOp op) {
  Location loc = op.getLoc();
  StringRef mode = op.getMode();
  if (mode != "standard" && mode != "nesterov")
    return op.emitOpError("mode '")
               << mode << "' is not one of 'standard', 'nesterov'",
           failure();
  auto ops = splitOperands(b, op, op.getR(), op.getT(), op.getInputs(), 3);
  if (failed(ops))
    return failure();
  Type elt = ops->r.getType();
  double alpha = op.getAlpha().convertToDouble();
  double norm = op.getNormCoefficient().convertToDouble();
  Value positive =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, ops->t,
                            scalarConst(b, loc, ops->t.getType(), 0));
  Value beta = scalarConst(b, loc, elt, op.getBeta().convertToDouble());
  Value one = scalarConst(b, loc, elt, 1);
  Value betaAdjusted = scalarTensor(
      b, loc, arith::SelectOp::create(b, loc, positive, beta, one));
  Value r = scalarTensor(b, loc, ops->r);
  bool nesterov = mode == "nesterov";
  SmallVector<SmallVector<Value>> perTensor;
  for (auto [i, group] : llvm::enumerate(ops->groups))
    perTensor.push_back(update(
        b, loc, ops->tensorType(i), group, {r, betaAdjusted}, 2,
        [&](OpBuilder &nb, Location nl, ValueRange v) -> SmallVector<Value> {
          Arith e{nb, nl};
          Value g = e.regularized(v[0], v[1], norm);
          Value vOld = e.mul(e.c(elt, alpha), v[2]);
          Value vNew = e.add(vOld, e.mul(v[4], g));
          Value step = nesterov ? e.add(g, e.mul(e.c(elt, alpha), vNew)) : vNew;
          return {e.sub(v[0], e.mul(v[3], step)), vNew};
        }));
  return interleave(perTensor);
}

} // namespace

LoweringResult lowerTrainingOp(OpBuilder &b, Operation *op) {
  if (auto a = dyn_cast<AdagradOp>(op))
    return lowerAdagrad(b, a);
  if (auto a = dyn_cast<AdamOp>(op))
    return lowerAdam(b, a);
  if (auto m = dyn_cast<MomentumOp>(op))
    return lowerMomentum(b, m);
  return std::nullopt;
}

} // namespace kiln::lowering
