//===- LowerStateOps.cpp - LinearAttention, CausalConvWithState, ... ------===//
//
// Part of convert-kiln-to-linalg (see KilnToLinalg.cpp).
//
// The ops that carry a model's state between calls: the recurrent linear
// attention of Gated DeltaNet-style layers (LinearAttention), the causal
// depthwise convolution before it (CausalConvWithState), and the KV-cache
// write of attention layers (TensorScatter).
//
// LinearAttention is an scf.for over the tokens carrying the f32 state
// [B, H_kv, d_k, d_v] and the output being written: per token, linalg
// generics decay the state, read it back along k (the delta rules),
// add k ⊗ v and read it along q, each query head from its KV head (GQA).
// CausalConvWithState is the past state concatenated before the input and
// one depthwise generic over the taps (f32 accumulation, SiLU applied
// before the one conversion). TensorScatter is one generic over the cache
// that takes, inside each row's write window, the update's element.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include <cmath>

using namespace mlir;
using namespace kiln;

namespace kiln::lowering {

namespace {

using utils::IteratorType;

Value indexValue(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A linalg.generic of one result over `dims` loops: `maps` are the
/// inputs' then the output's (given as expression lists), `iters` the
/// loops' kinds.
Value generic(OpBuilder &b, Location loc, Value init, ValueRange inputs,
              int64_t dims, ArrayRef<SmallVector<AffineExpr>> maps,
              ArrayRef<IteratorType> iters, ScalarFn body) {
  SmallVector<AffineMap> affine;
  for (const SmallVector<AffineExpr> &m : maps)
    affine.push_back(AffineMap::get(dims, 0, m, b.getContext()));
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init},
             affine, iters,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               linalg::YieldOp::create(nb, nl, body(nb, nl, a));
             })
      .getResult(0);
}

/// `v` (a static tensor) converted elementwise to element type `to`.
Value convertTensor(OpBuilder &b, Location loc, Value v, Type to) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getElementType() == to)
    return v;
  auto rt = RankedTensorType::get(t.getShape(), to);
  SmallVector<AffineExpr> id;
  for (int64_t d = 0; d < t.getRank(); ++d)
    id.push_back(b.getAffineDimExpr(d));
  return generic(b, loc, emptyLike(b, loc, rt), {v}, t.getRank(), {id, id},
                 SmallVector<IteratorType>(t.getRank(), IteratorType::parallel),
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   return convertScalar(nb, nl, a[0], to);
                 });
}

/// Token `t` of a [B, T, N] tensor, as [B, heads, N / heads].
Value tokenHeads(OpBuilder &b, Location loc, Value x, Value t, int64_t heads) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t batch = xt.getDimSize(0), n = xt.getDimSize(2);
  Value row = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({batch, 1, n}, xt.getElementType()), x,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), t, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(batch), b.getIndexAttr(1),
                             b.getIndexAttr(n)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                             b.getIndexAttr(1)});
  return reshapeTo(
      b, loc, row,
      RankedTensorType::get({batch, heads, n / heads}, xt.getElementType()));
}

FailureOr<SmallVector<Value>> lowerLinearAttention(OpBuilder &b,
                                                   LinearAttentionOp op) {
  Location loc = op.getLoc();
  StringRef rule = op.getUpdateRule();
  if (rule != "linear" && rule != "gated" && rule != "delta" &&
      rule != "gated_delta")
    return op.emitOpError("update_rule '")
               << rule
               << "' is not one of linear, gated, delta and gated_delta",
           failure();
  bool gating = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value past = op.getPastState(), decay = op.getDecay(), beta = op.getBeta();
  if (gating != bool(decay))
    return op.emitOpError("update_rule '")
               << rule << "' " << (gating ? "needs" : "takes no")
               << " decay input",
           failure();
  if (delta != bool(beta))
    return op.emitOpError("update_rule '")
               << rule << "' " << (delta ? "needs" : "takes no")
               << " beta input",
           failure();
  auto qt = cast<RankedTensorType>(q.getType());
  auto kt = cast<RankedTensorType>(k.getType());
  auto vt = cast<RankedTensorType>(v.getType());
  int64_t hq = op.getQNumHeads(), hkv = op.getKvNumHeads();
  if (qt.getRank() != 3 || kt.getRank() != 3 || vt.getRank() != 3)
    return op.emitOpError("needs query, key and value of rank 3 ([B, T, "
                          "heads * head size])"),
           failure();
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    return op.emitOpError("q_num_heads ")
               << hq << " must be a positive multiple of kv_num_heads " << hkv,
           failure();
  int64_t batch = qt.getDimSize(0), steps = qt.getDimSize(1);
  if (qt.getDimSize(2) % hq != 0 || vt.getDimSize(2) % hkv != 0)
    return op.emitOpError("query's last dim must divide into q_num_heads and "
                          "value's into kv_num_heads"),
           failure();
  int64_t dk = qt.getDimSize(2) / hq, dv = vt.getDimSize(2) / hkv;
  int64_t group = hq / hkv;
  auto same = [&](RankedTensorType t, int64_t last) {
    return t.getDimSize(0) == batch && t.getDimSize(1) == steps &&
           t.getDimSize(2) == last;
  };
  if (!same(kt, hkv * dk) || !same(vt, hkv * dv))
    return op.emitOpError("needs key [B, T, kv_num_heads * d_k] and value "
                          "[B, T, kv_num_heads * d_v] beside query [B, T, "
                          "q_num_heads * d_k]"),
           failure();
  // Decay per KV head or per key dim; beta per KV head or one for all.
  bool decayPerDim = false, betaShared = false;
  if (decay) {
    auto t = cast<RankedTensorType>(decay.getType());
    if (t.getRank() != 3 || !(same(t, hkv) || same(t, hkv * dk)))
      return op.emitOpError("needs decay [B, T, kv_num_heads] or [B, T, "
                            "kv_num_heads * d_k]"),
             failure();
    decayPerDim = t.getDimSize(2) == hkv * dk && dk != 1;
  }
  if (beta) {
    auto t = cast<RankedTensorType>(beta.getType());
    if (t.getRank() != 3 || !(same(t, hkv) || same(t, 1)))
      return op.emitOpError("needs beta [B, T, kv_num_heads] or [B, T, 1]"),
             failure();
    betaShared = t.getDimSize(2) == 1 && hkv != 1;
  }
  auto stateType = RankedTensorType::get({batch, hkv, dk, dv}, b.getF32Type());
  if (past &&
      cast<RankedTensorType>(past.getType()).getShape() != stateType.getShape())
    return op.emitOpError("needs past_state [B, kv_num_heads, d_k, d_v] = ")
               << "[" << batch << ", " << hkv << ", " << dk << ", " << dv
               << "]",
           failure();
  auto outType = cast<RankedTensorType>(op.getOutput().getType());
  auto presentType = cast<RankedTensorType>(op.getPresentState().getType());
  float scale = op.getScale().convertToFloat();
  if (scale == 0)
    scale = 1.0f / std::sqrt(static_cast<float>(dk));

  Type f32 = b.getF32Type();
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  AffineExpr zero = b.getAffineConstantExpr(0);
  auto par = [](int64_t n) {
    return SmallVector<IteratorType>(n, IteratorType::parallel);
  };
  auto wide = [&](OpBuilder &nb, Location nl, Value x) {
    return convertScalar(nb, nl, x, f32);
  };
  Value state0 = past ? convertTensor(b, loc, past, f32)
                      : filled(b, loc, stateType, scalarConst(b, loc, f32, 0));
  Value out0 = emptyLike(b, loc, outType);
  auto loop = scf::ForOp::create(
      b, loc, indexValue(b, loc, 0), indexValue(b, loc, steps),
      indexValue(b, loc, 1), ValueRange{state0, out0},
      [&](OpBuilder &nb, Location nl, Value t, ValueRange iter) {
        Value s = iter[0];
        Value kh = tokenHeads(nb, nl, k, t, hkv); // [B, Hkv, dk]
        Value vh = tokenHeads(nb, nl, v, t, hkv); // [B, Hkv, dv]
        Value qh = tokenHeads(nb, nl, q, t, hkv); // [B, Hkv, G * dk]
        qh = reshapeTo(nb, nl, qh,
                       RankedTensorType::get({batch, hkv, group, dk},
                                             qt.getElementType()));
        // Loops (b, h, d, m) over the state.
        SmallVector<AffineExpr> sMap = {d(0), d(1), d(2), d(3)};
        if (gating) {
          Value g = tokenHeads(nb, nl, decay, t, hkv); // [B, Hkv, dk or 1]
          SmallVector<AffineExpr> gMap = {d(0), d(1),
                                          decayPerDim ? d(2) : zero};
          s = generic(nb, nl, emptyLike(nb, nl, stateType), {s, g}, 4,
                      {sMap, gMap, sMap}, par(4),
                      [&](OpBuilder &cb, Location cl, ValueRange a) {
                        Value e =
                            math::ExpOp::create(cb, cl, wide(cb, cl, a[1]));
                        return arith::MulFOp::create(cb, cl, a[0], e);
                      });
        }
        // The value added, per (b, h, m): v, or beta * (v - S^T k).
        auto vType = RankedTensorType::get({batch, hkv, dv}, f32);
        Value add;
        if (delta) {
          // Loops (b, h, m, d): S^T k.
          Value read = generic(
              nb, nl, filled(nb, nl, vType, scalarConst(nb, nl, f32, 0)),
              {s, kh}, 4,
              {{d(0), d(1), d(3), d(2)},
               {d(0), d(1), d(3)},
               {d(0), d(1), d(2)}},
              {IteratorType::parallel, IteratorType::parallel,
               IteratorType::parallel, IteratorType::reduction},
              [&](OpBuilder &cb, Location cl, ValueRange a) {
                Value p =
                    arith::MulFOp::create(cb, cl, a[0], wide(cb, cl, a[1]));
                return arith::AddFOp::create(cb, cl, a[2], p);
              });
          Value bt = tokenHeads(nb, nl, beta, t, betaShared ? 1 : hkv);
          SmallVector<AffineExpr> vMap = {d(0), d(1), d(2)};
          add = generic(
              nb, nl, emptyLike(nb, nl, vType), {vh, read, bt}, 3,
              {vMap, vMap, {d(0), betaShared ? zero : d(1), zero}, vMap},
              par(3), [&](OpBuilder &cb, Location cl, ValueRange a) {
                Value diff =
                    arith::SubFOp::create(cb, cl, wide(cb, cl, a[0]), a[1]);
                return arith::MulFOp::create(cb, cl, wide(cb, cl, a[2]), diff);
              });
        } else {
          add = vh;
        }
        // S += k ⊗ add.
        Value next =
            generic(nb, nl, emptyLike(nb, nl, stateType), {s, kh, add}, 4,
                    {sMap, {d(0), d(1), d(2)}, {d(0), d(1), d(3)}, sMap},
                    par(4), [&](OpBuilder &cb, Location cl, ValueRange a) {
                      Value p = arith::MulFOp::create(
                          cb, cl, wide(cb, cl, a[1]), wide(cb, cl, a[2]));
                      return arith::AddFOp::create(cb, cl, a[0], p);
                    });
        // Loops (b, h, g, m, d): each query head h * G + g reads KV head h.
        auto oType = RankedTensorType::get({batch, hkv, group, dv}, f32);
        Value o = generic(
            nb, nl, filled(nb, nl, oType, scalarConst(nb, nl, f32, 0)),
            {qh, next}, 5,
            {{d(0), d(1), d(2), d(4)},
             {d(0), d(1), d(4), d(3)},
             {d(0), d(1), d(2), d(3)}},
            {IteratorType::parallel, IteratorType::parallel,
             IteratorType::parallel, IteratorType::parallel,
             IteratorType::reduction},
            [&](OpBuilder &cb, Location cl, ValueRange a) {
              Value p = arith::MulFOp::create(cb, cl, wide(cb, cl, a[0]), a[1]);
              return arith::AddFOp::create(cb, cl, a[2], p);
            });
        SmallVector<AffineExpr> oMap = {d(0), d(1), d(2), d(3)};
        Type outElt = outType.getElementType();
        o = generic(
            nb, nl,
            emptyLike(nb, nl, RankedTensorType::get(oType.getShape(), outElt)),
            {o}, 4, {oMap, oMap}, par(4),
            [&](OpBuilder &cb, Location cl, ValueRange a) {
              Value sc = arith::MulFOp::create(cb, cl, a[0],
                                               scalarConst(cb, cl, f32, scale));
              return convertScalar(cb, cl, sc, outElt);
            });
        o = reshapeTo(nb, nl, o,
                      RankedTensorType::get({batch, 1, hq * dv}, outElt));
        Value written = tensor::InsertSliceOp::create(
            nb, nl, o, iter[1],
            ArrayRef<OpFoldResult>{nb.getIndexAttr(0), t, nb.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{nb.getIndexAttr(batch), nb.getIndexAttr(1),
                                   nb.getIndexAttr(hq * dv)},
            ArrayRef<OpFoldResult>{nb.getIndexAttr(1), nb.getIndexAttr(1),
                                   nb.getIndexAttr(1)});
        // Copied into the loop's state: the loop then bufferizes in place.
        next = linalg::CopyOp::create(nb, nl, next, iter[0]).getResult(0);
        scf::YieldOp::create(nb, nl, ValueRange{next, written});
      });
  return SmallVector<Value>{
      loop.getResult(1),
      convertTensor(b, loc, loop.getResult(0), presentType.getElementType())};
}

FailureOr<SmallVector<Value>>
lowerCausalConvWithState(OpBuilder &b, CausalConvWithStateOp op) {
  Location loc = op.getLoc();
  StringRef act = op.getActivation();
  if (act != "none" && act != "silu" && act != "swish")
    return op.emitOpError("activation '")
               << act << "' is not one of none, silu and swish",
           failure();
  Value x = op.getInput(), w = op.getWeight(), bias = op.getBias(),
        past = op.getPastState();
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(w.getType());
  if (xt.getRank() != 3 || wt.getRank() != 3 ||
      wt.getDimSize(0) != xt.getDimSize(1) || wt.getDimSize(1) != 1 ||
      wt.getDimSize(2) < 1)
    return op.emitOpError("needs input [B, C, L] and weight [C, 1, k]"),
           failure();
  int64_t batch = xt.getDimSize(0), channels = xt.getDimSize(1),
          length = xt.getDimSize(2), taps = wt.getDimSize(2);
  Type elt = xt.getElementType(), f32 = b.getF32Type();
  if (bias && cast<RankedTensorType>(bias.getType()).getShape() !=
                  ArrayRef<int64_t>{channels})
    return op.emitOpError("needs bias [C]"), failure();
  auto stateType = RankedTensorType::get({batch, channels, taps - 1}, elt);
  if (past &&
      cast<RankedTensorType>(past.getType()).getShape() != stateType.getShape())
    return op.emitOpError("needs past_state [B, C, k - 1] = [")
               << batch << ", " << channels << ", " << taps - 1 << "]",
           failure();
  // The input after the k - 1 positions of the state (zeros without one).
  auto paddedType =
      RankedTensorType::get({batch, channels, length + taps - 1}, elt);
  Value padded = x;
  if (taps > 1)
    padded = concatAlong(
        b, loc,
        {past ? past : filled(b, loc, stateType, scalarConst(b, loc, elt, 0)),
         x},
        2, paddedType);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  // Loops (b, c, t, j): y[b, c, t] = bias[c] + sum_j w[c, 0, j] x[b, c, t + j].
  auto accType = RankedTensorType::get({batch, channels, length}, f32);
  SmallVector<AffineExpr> id = {d(0), d(1), d(2)};
  Value init = filled(b, loc, accType, scalarConst(b, loc, f32, 0));
  if (bias)
    init = generic(b, loc, emptyLike(b, loc, accType), {bias}, 3, {{d(1)}, id},
                   SmallVector<IteratorType>(3, IteratorType::parallel),
                   [&](OpBuilder &nb, Location nl, ValueRange a) {
                     return convertScalar(nb, nl, a[0], f32);
                   });
  Value acc = generic(
      b, loc, init, {padded, w}, 4,
      {{d(0), d(1), d(2) + d(3)}, {d(1), b.getAffineConstantExpr(0), d(3)}, id},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction},
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value p =
            arith::MulFOp::create(nb, nl, convertScalar(nb, nl, a[0], f32),
                                  convertScalar(nb, nl, a[1], f32));
        return arith::AddFOp::create(nb, nl, a[2], p);
      });
  bool silu = act != "none";
  Value y = generic(
      b, loc, emptyLike(b, loc, xt), {acc}, 3, {id, id},
      SmallVector<IteratorType>(3, IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value r = a[0];
        if (silu) {
          Value e =
              math::ExpOp::create(nb, nl, arith::NegFOp::create(nb, nl, r));
          r = arith::DivFOp::create(
              nb, nl, r,
              arith::AddFOp::create(nb, nl, scalarConst(nb, nl, f32, 1), e));
        }
        return convertScalar(nb, nl, r, elt);
      });
  // The state after: the last k - 1 positions of the padded input.
  Value present =
      taps == 1
          ? emptyLike(b, loc, stateType)
          : tensor::ExtractSliceOp::create(
                b, loc, stateType, padded,
                ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                       b.getIndexAttr(length)},
                ArrayRef<OpFoldResult>{b.getIndexAttr(batch),
                                       b.getIndexAttr(channels),
                                       b.getIndexAttr(taps - 1)},
                ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                       b.getIndexAttr(1)})
                .getResult();
  return SmallVector<Value>{y, present};
}

FailureOr<SmallVector<Value>> lowerTensorScatter(OpBuilder &b,
                                                 TensorScatterOp op) {
  Location loc = op.getLoc();
  StringRef mode = op.getMode();
  if (mode != "linear" && mode != "circular")
    return op.emitOpError("mode '")
               << mode << "' is not one of linear and circular",
           failure();
  Value cache = op.getPastCache(), update = op.getUpdate(),
        indices = op.getWriteIndices();
  auto ct = cast<RankedTensorType>(cache.getType());
  auto ut = cast<RankedTensorType>(update.getType());
  int64_t rank = ct.getRank();
  FailureOr<int64_t> axisOr = normalizeAxis(op, op.getAxis(), rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  if (axis == 0)
    return op.emitOpError("axis 0 is the batch; the sequence axis must be "
                          "another"),
           failure();
  bool shapesAgree = ut.getRank() == rank;
  for (int64_t i = 0; shapesAgree && i < rank; ++i)
    shapesAgree = i == axis ? ut.getDimSize(i) <= ct.getDimSize(i)
                            : ut.getDimSize(i) == ct.getDimSize(i);
  if (!shapesAgree)
    return op.emitOpError("needs an update of the cache's shape but for at "
                          "most its length along axis ")
               << axis,
           failure();
  if (indices && cast<RankedTensorType>(indices.getType()).getShape() !=
                     ArrayRef<int64_t>{ct.getDimSize(0)})
    return op.emitOpError("needs write_indices [B]"), failure();
  int64_t maxLen = ct.getDimSize(axis), len = ut.getDimSize(axis);
  bool circular = mode == "circular";
  SmallVector<AffineExpr> id;
  for (int64_t i = 0; i < rank; ++i)
    id.push_back(b.getAffineDimExpr(i));
  SmallVector<Value> inputs = {cache};
  SmallVector<SmallVector<AffineExpr>> maps = {id};
  if (indices) {
    inputs.push_back(indices);
    maps.push_back({b.getAffineDimExpr(0)});
  }
  maps.push_back(id);
  Value r = generic(
      b, loc, emptyLike(b, loc, ct), inputs, rank, maps,
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Type i64 = nb.getI64Type();
        Value p = arith::IndexCastOp::create(
            nb, nl, i64, linalg::IndexOp::create(nb, nl, axis));
        Value start = indices ? convertScalar(nb, nl, a[1], i64)
                              : scalarConst(nb, nl, i64, 0);
        // The update's position written here: p - start, modulo the
        // cache length in circular mode.
        Value rel = arith::SubIOp::create(nb, nl, p, start);
        if (circular) {
          Value m = scalarConst(nb, nl, i64, maxLen);
          rel = arith::RemSIOp::create(
              nb, nl,
              arith::AddIOp::create(nb, nl,
                                    arith::RemSIOp::create(nb, nl, rel, m), m),
              m);
        }
        Value inside = arith::AndIOp::create(
            nb, nl,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, rel,
                                  scalarConst(nb, nl, i64, 0)),
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, rel,
                                  scalarConst(nb, nl, i64, len)));
        // Read the update inside the window (at 0 outside it, unused).
        Value at = arith::IndexCastOp::create(
            nb, nl, nb.getIndexType(),
            arith::SelectOp::create(nb, nl, inside, rel,
                                    scalarConst(nb, nl, i64, 0)));
        SmallVector<Value> idx;
        for (int64_t i = 0; i < rank; ++i)
          idx.push_back(i == axis ? at : linalg::IndexOp::create(nb, nl, i));
        Value u = tensor::ExtractOp::create(nb, nl, update, idx);
        return arith::SelectOp::create(nb, nl, inside, u, a[0]);
      });
  return SmallVector<Value>{r};
}

} // namespace

LoweringResult lowerStateOp(OpBuilder &b, Operation *op) {
  if (auto l = dyn_cast<LinearAttentionOp>(op))
    return lowerLinearAttention(b, l);
  if (auto c = dyn_cast<CausalConvWithStateOp>(op))
    return lowerCausalConvWithState(b, c);
  if (auto s = dyn_cast<TensorScatterOp>(op))
    return lowerTensorScatter(b, s);
  return std::nullopt;
}

} // namespace kiln::lowering
