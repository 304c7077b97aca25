//===- LowerSamplingOps.cpp - GridSample, RoiAlign, MaxUnpool, DeformConv -===//
//
// Part of convert-kiln-to-linalg (see KilnToLinalg.cpp). Each op becomes one
// linalg.generic over its output whose body computes where to read and
// gathers with tensor.extract, so no two iterations write the same element
// (DeformConv: one over its sampled columns, then a contraction).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

using namespace mlir;
using namespace kiln;

namespace kiln::lowering {

namespace {

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// An `index` value as a float of type `t`.
Value indexToFloat(OpBuilder &b, Location loc, Value i, Type t) {
  return arith::SIToFPOp::create(
      b, loc, t, arith::IndexCastOp::create(b, loc, b.getI64Type(), i));
}

/// `x` clamped into [lo, hi]; a NaN becomes one of the bounds, so that the
/// result always converts to a valid index.
Value clampFloat(OpBuilder &b, Location loc, Value x, double lo, double hi) {
  Type t = x.getType();
  Value r = arith::MaxNumFOp::create(b, loc, x, scalarConst(b, loc, t, lo));
  return arith::MinNumFOp::create(b, loc, r, scalarConst(b, loc, t, hi));
}

/// An integral float in [0, extent) (after clamping) as an `index`.
Value floatToIndex(OpBuilder &b, Location loc, Value x, int64_t extent) {
  Value c = clampFloat(b, loc, x, 0, extent - 1);
  return arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      arith::FPToSIOp::create(b, loc, b.getI64Type(), c));
}

/// `x pred c` for a float constant `c`.
Value compare(OpBuilder &b, Location loc, arith::CmpFPredicate pred, Value x,
              double c) {
  return arith::CmpFOp::create(b, loc, pred, x,
                               scalarConst(b, loc, x.getType(), c));
}

/// Whether `x` lies outside [lo, hi] (false for NaN).
Value outside(OpBuilder &b, Location loc, Value x, double lo, double hi) {
  Value below = compare(b, loc, arith::CmpFPredicate::OLT, x, lo);
  Value above = compare(b, loc, arith::CmpFPredicate::OGT, x, hi);
  return arith::OrIOp::create(b, loc, below, above);
}

/// `x` mirrored at the bounds of [lo, hi] until it lies inside (as many
/// times as needed).
Value reflect(OpBuilder &b, Location loc, Value x, double lo, double hi) {
  Type t = x.getType();
  auto fc = [&](double v) { return scalarConst(b, loc, t, v); };
  if (hi == lo)
    return fc(lo);
  // u: the distance from lo modulo one period (two spans), in [0, 2*span).
  double span = hi - lo;
  Value u = arith::SubFOp::create(b, loc, x, fc(lo));
  Value periods = math::FloorOp::create(
      b, loc, arith::DivFOp::create(b, loc, u, fc(2 * span)));
  u = arith::SubFOp::create(
      b, loc, u, arith::MulFOp::create(b, loc, periods, fc(2 * span)));
  Value back = compare(b, loc, arith::CmpFPredicate::OGT, u, span);
  Value folded = arith::SelectOp::create(
      b, loc, back, arith::SubFOp::create(b, loc, fc(2 * span), u), u);
  return arith::AddFOp::create(b, loc, folded, fc(lo));
}

/// The four weights of Keys' cubic convolution (coefficient -0.75) for the
/// taps at -1, 0, 1, 2 of a point `t` in [0, 1) past tap 0.
SmallVector<Value> cubicWeights(OpBuilder &b, Location loc, Value t) {
  Type ty = t.getType();
  auto fc = [&](double v) { return scalarConst(b, loc, ty, v); };
  constexpr double a = -0.75;
  auto mul = [&](Value x, Value y) {
    return arith::MulFOp::create(b, loc, x, y).getResult();
  };
  auto add = [&](Value x, double c) {
    return arith::AddFOp::create(b, loc, x, fc(c)).getResult();
  };
  // Distance 1..2: ((a d - 5a) d + 8a) d - 4a.
  auto far = [&](Value d) {
    return add(mul(add(mul(add(mul(fc(a), d), -5 * a), d), 8 * a), d), -4 * a);
  };
  // Distance 0..1: ((a + 2) d - (a + 3)) d d + 1.
  auto near = [&](Value d) {
    return add(mul(mul(add(mul(fc(a + 2), d), -(a + 3)), d), d), 1);
  };
  Value oneMinusT = arith::SubFOp::create(b, loc, fc(1), t);
  return {far(add(t, 1)), near(t), near(oneMinusT),
          far(arith::SubFOp::create(b, loc, fc(2), t))};
}

/// GridSample (opsets 16 and 20): output (n, c, o...) samples X[n, c] at
/// the point grid[n, o...] names, normalized to [-1, 1] per spatial dim
/// and listed innermost dim first, by nearest (ties to even), N-linear or
/// N-cubic interpolation. Each tap outside X reads, by `padding_mode`, zero,
/// the nearest edge element, or its mirror image at the border (the corner
/// elements' centres with align_corners, else their outer edges). This is
/// what PyTorch and ONNX Runtime compute; the ONNX reference, which clamps
/// or reflects the point before it takes the taps, agrees except for cubic
/// with border padding, where it clamps the point too.
FailureOr<Value> lowerGridSample(OpBuilder &b, GridSampleOp op) {
  Location loc = op.getLoc();
  Value x = op.getX(), grid = op.getGrid();
  auto xt = cast<RankedTensorType>(x.getType());
  auto gt = cast<RankedTensorType>(grid.getType());
  auto rt = cast<RankedTensorType>(op.getY().getType());
  StringRef mode = op.getMode(), padding = op.getPaddingMode();
  // Opset 16 spells the interpolating modes bilinear and bicubic.
  if (mode == "bilinear")
    mode = "linear";
  else if (mode == "bicubic")
    mode = "cubic";
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return op.emitOpError("mode '") << op.getMode() << "' is not supported",
           failure();
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return op.emitOpError("padding_mode '") << padding << "' is not supported",
           failure();
  int64_t r = xt.getRank() - 2;
  if (r < 1 || gt.getRank() != r + 2 || gt.getDimSize(r + 1) != r)
    return op.emitOpError("needs a grid of shape (N, D1, ..., Dr, r) for an "
                          "input of r spatial dims"),
           failure();
  if (!isFloat(gt))
    return op.emitOpError("needs a float grid"), failure();
  Type elt = rt.getElementType();
  if (!isFloat(elt) && mode != "nearest")
    return op.emitOpError("interpolating integers is not lowered yet"),
           failure();
  bool align = op.getAlignCorners() != 0;
  // Coordinates and sums in f32, or f64 where an operand is f64.
  Type ct = elt.isF64() || gt.getElementType().isF64() ? b.getF64Type()
                                                       : b.getF32Type();
  return elementwise(
      b, loc, rt, ValueRange{},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        auto fc = [&](double v) { return scalarConst(nb, nl, ct, v); };
        Value n = linalg::IndexOp::create(nb, nl, 0);
        SmallVector<Value> gridIdx = {n};
        for (int64_t d = 0; d < r; ++d)
          gridIdx.push_back(linalg::IndexOp::create(nb, nl, 2 + d));
        gridIdx.push_back(Value());
        // Per spatial dim: the index, weight and (zeros) inside flag of
        // each tap.
        SmallVector<SmallVector<Value>> tapIdx(r), tapW(r), tapIn(r);
        for (int64_t d = 0; d < r; ++d) {
          int64_t len = xt.getDimSize(2 + d);
          double lo = align ? 0 : -0.5, hi = align ? len - 1 : len - 0.5;
          gridIdx.back() = indexConst(nb, nl, r - 1 - d);
          Value g = convertScalar(
              nb, nl, tensor::ExtractOp::create(nb, nl, grid, gridIdx), ct);
          // From [-1, 1] to the element grid: the corner elements' centres
          // (align_corners) or their outer edges.
          Value g1 = arith::AddFOp::create(nb, nl, g, fc(1));
          Value pos =
              align
                  ? arith::MulFOp::create(
                        nb, nl, arith::MulFOp::create(nb, nl, g1, fc(0.5)),
                        fc(len - 1))
                        .getResult()
                  : arith::MulFOp::create(
                        nb, nl,
                        arith::SubFOp::create(
                            nb, nl, arith::MulFOp::create(nb, nl, g1, fc(len)),
                            fc(1)),
                        fc(0.5))
                        .getResult();
          if (mode == "nearest")
            pos = math::RoundEvenOp::create(nb, nl, pos);
          SmallVector<Value> taps;
          if (mode == "nearest") {
            taps = {pos};
          } else {
            Value base = math::FloorOp::create(nb, nl, pos);
            Value t = arith::SubFOp::create(nb, nl, pos, base);
            int first = mode == "cubic" ? -1 : 0,
                count = mode == "cubic" ? 4 : 2;
            for (int k = 0; k < count; ++k)
              taps.push_back(
                  arith::AddFOp::create(nb, nl, base, fc(first + k)));
            if (mode == "cubic")
              tapW[d] = cubicWeights(nb, nl, t);
            else
              tapW[d] = {arith::SubFOp::create(nb, nl, fc(1), t), t};
          }
          for (Value p : taps) {
            if (padding == "reflection")
              p = reflect(nb, nl, p, lo, hi);
            if (padding == "zeros") {
              Value fromStart =
                  compare(nb, nl, arith::CmpFPredicate::OGE, p, 0);
              Value toEnd =
                  compare(nb, nl, arith::CmpFPredicate::OLE, p, len - 1);
              tapIn[d].push_back(
                  arith::AndIOp::create(nb, nl, fromStart, toEnd));
            }
            tapIdx[d].push_back(floatToIndex(nb, nl, p, len));
          }
        }
        // Sum over every combination of the dims' taps.
        int64_t taps = tapIdx[0].size(), combos = 1;
        for (int64_t d = 0; d < r; ++d)
          combos *= taps;
        Value zero = scalarConst(nb, nl, elt, 0);
        Value acc = fc(0);
        for (int64_t k = 0; k < combos; ++k) {
          SmallVector<Value> coords = {n, linalg::IndexOp::create(nb, nl, 1)};
          Value w, in;
          for (int64_t d = 0, rest = k; d < r; ++d, rest /= taps) {
            int64_t t = rest % taps;
            coords.push_back(tapIdx[d][t]);
            if (!tapW[d].empty())
              w = w ? arith::MulFOp::create(nb, nl, w, tapW[d][t]).getResult()
                    : tapW[d][t];
            if (!tapIn[d].empty())
              in = in ? arith::AndIOp::create(nb, nl, in, tapIn[d][t])
                            .getResult()
                      : tapIn[d][t];
          }
          Value v = tensor::ExtractOp::create(nb, nl, x, coords);
          if (in)
            v = arith::SelectOp::create(nb, nl, in, v, zero);
          if (mode == "nearest")
            return v;
          acc = arith::AddFOp::create(
              nb, nl, acc,
              arith::MulFOp::create(nb, nl, convertScalar(nb, nl, v, ct), w));
        }
        return convertScalar(nb, nl, acc, elt);
      });
}

/// RoiAlign: output (r, c, ph, pw) pools bin (ph, pw)
/// of region rois[r] (x1, y1, x2, y2, scaled by spatial_scale) of
/// X[batch_indices[r], c] over a grid of bilinearly interpolated samples:
/// sampling_ratio per side, or ceil(bin size) when 0 (adaptive: an
/// scf.for per side bounded at run time). `max` takes the largest of the
/// weighted corner values of each sample, as ONNX Runtime and the ONNX
/// reference do.
FailureOr<Value> lowerRoiAlign(OpBuilder &b, RoiAlignOp op) {
  Location loc = op.getLoc();
  Value x = op.getX(), rois = op.getRois(), batchIndices = op.getBatchIndices();
  auto xt = cast<RankedTensorType>(x.getType());
  auto roisT = cast<RankedTensorType>(rois.getType());
  auto rt = cast<RankedTensorType>(op.getY().getType());
  StringRef mode = op.getMode(), ctm = op.getCoordinateTransformationMode();
  if (mode != "avg" && mode != "max")
    return op.emitOpError("mode '") << mode << "' is not supported", failure();
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return op.emitOpError("coordinate_transformation_mode '")
               << ctm << "' is not supported",
           failure();
  if (xt.getRank() != 4 || roisT.getRank() != 2 || roisT.getDimSize(1) != 4 ||
      rt.getRank() != 4)
    return op.emitOpError("needs a 4-D input and rois of shape (R, 4)"),
           failure();
  Type elt = rt.getElementType();
  if (!isFloat(elt) || !isFloat(roisT))
    return op.emitOpError("needs float input and rois"), failure();
  bool halfPixel = ctm == "half_pixel", isMax = mode == "max";
  auto samplingRatio = static_cast<int64_t>(op.getSamplingRatio());
  double scale = op.getSpatialScale().convertToDouble();
  int64_t batch = xt.getDimSize(0), height = xt.getDimSize(2),
          width = xt.getDimSize(3);
  int64_t pooledH = rt.getDimSize(2), pooledW = rt.getDimSize(3);
  Type ct = elt.isF64() ? b.getF64Type() : b.getF32Type();
  return elementwise(
      b, loc, rt, ValueRange{},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        auto fc = [&](double v) { return scalarConst(nb, nl, ct, v); };
        auto add = [&](Value p, Value q) {
          return arith::AddFOp::create(nb, nl, p, q).getResult();
        };
        auto mul = [&](Value p, Value q) {
          return arith::MulFOp::create(nb, nl, p, q).getResult();
        };
        auto div = [&](Value p, Value q) {
          return arith::DivFOp::create(nb, nl, p, q).getResult();
        };
        Value roi = linalg::IndexOp::create(nb, nl, 0);
        Value c = linalg::IndexOp::create(nb, nl, 1);
        // The region's corners in X's coordinates.
        SmallVector<Value> corner;
        for (int64_t k = 0; k < 4; ++k) {
          Value v = tensor::ExtractOp::create(
              nb, nl, rois, ValueRange{roi, indexConst(nb, nl, k)});
          corner.push_back(arith::SubFOp::create(
              nb, nl, mul(convertScalar(nb, nl, v, ct), fc(scale)),
              fc(halfPixel ? 0.5 : 0)));
        }
        Value roiW = arith::SubFOp::create(nb, nl, corner[2], corner[0]);
        Value roiH = arith::SubFOp::create(nb, nl, corner[3], corner[1]);
        if (!halfPixel) {
          // Malformed regions are made 1x1.
          roiW = arith::MaxNumFOp::create(nb, nl, roiW, fc(1));
          roiH = arith::MaxNumFOp::create(nb, nl, roiH, fc(1));
        }
        Value binH = div(roiH, fc(pooledH)), binW = div(roiW, fc(pooledW));
        // Samples per bin side; adaptive counts are clamped to keep the
        // conversion defined (a NaN or negative size gives none).
        auto samples = [&](Value bin) -> Value {
          if (samplingRatio > 0)
            return indexConst(nb, nl, samplingRatio);
          Value n = clampFloat(nb, nl, math::CeilOp::create(nb, nl, bin), 0,
                               double(1 << 30));
          return arith::IndexCastOp::create(
              nb, nl, nb.getIndexType(),
              arith::FPToSIOp::create(nb, nl, nb.getI64Type(), n));
        };
        Value gridH = samples(binH), gridW = samples(binW);
        Value gridHF = indexToFloat(nb, nl, gridH, ct);
        Value gridWF = indexToFloat(nb, nl, gridW, ct);
        Value n = arith::IndexCastOp::create(
            nb, nl, nb.getIndexType(),
            tensor::ExtractOp::create(nb, nl, batchIndices, ValueRange{roi}));
        n = arith::MinSIOp::create(
            nb, nl, arith::MaxSIOp::create(nb, nl, n, indexConst(nb, nl, 0)),
            indexConst(nb, nl, batch - 1));
        Value startH = add(
            corner[1],
            mul(indexToFloat(nb, nl, linalg::IndexOp::create(nb, nl, 2), ct),
                binH));
        Value startW = add(
            corner[0],
            mul(indexToFloat(nb, nl, linalg::IndexOp::create(nb, nl, 3), ct),
                binW));
        // One side of a sample at step `i` of `gridF`: its two neighbour
        // indices, their weights, and whether it lies outside the map.
        struct Side {
          Value lowIdx, highIdx, lowW, highW, out;
        };
        auto side = [&](OpBuilder &sb, Location sl, Value i, Value start,
                        Value bin, Value gridF, int64_t extent) -> Side {
          auto sc = [&](double v) { return scalarConst(sb, sl, ct, v); };
          Value off = arith::AddFOp::create(sb, sl, indexToFloat(sb, sl, i, ct),
                                            sc(0.5));
          Value p = arith::AddFOp::create(
              sb, sl, start,
              arith::DivFOp::create(
                  sb, sl, arith::MulFOp::create(sb, sl, off, bin), gridF));
          Value out = outside(sb, sl, p, -1, extent);
          p = arith::MaxNumFOp::create(sb, sl, p, sc(0));
          Value low = math::FloorOp::create(sb, sl, p);
          Value last =
              compare(sb, sl, arith::CmpFPredicate::OGE, low, extent - 1);
          low = arith::SelectOp::create(sb, sl, last, sc(extent - 1), low);
          p = arith::SelectOp::create(sb, sl, last, low, p);
          Value high = arith::SelectOp::create(
              sb, sl, last, low, arith::AddFOp::create(sb, sl, low, sc(1)));
          Value highW = arith::SubFOp::create(sb, sl, p, low);
          Value lowW = arith::SubFOp::create(sb, sl, sc(1), highW);
          return {floatToIndex(sb, sl, low, extent),
                  floatToIndex(sb, sl, high, extent), lowW, highW, out};
        };
        Value zeroIdx = indexConst(nb, nl, 0), oneIdx = indexConst(nb, nl, 1);
        Value init = isMax ? extremum(nb, nl, ct, /*lowest=*/true) : fc(0);
        auto rows = scf::ForOp::create(
            nb, nl, zeroIdx, gridH, oneIdx, ValueRange{init},
            [&](OpBuilder &rb, Location rl, Value iy, ValueRange rowAcc) {
              Side y = side(rb, rl, iy, startH, binH, gridHF, height);
              auto cols = scf::ForOp::create(
                  rb, rl, zeroIdx, gridW, oneIdx, rowAcc,
                  [&](OpBuilder &cb, Location cl, Value ix, ValueRange colAcc) {
                    Side xs = side(cb, cl, ix, startW, binW, gridWF, width);
                    Value out = arith::OrIOp::create(cb, cl, y.out, xs.out);
                    Value zero = scalarConst(cb, cl, ct, 0);
                    SmallVector<Value> terms;
                    for (auto [yi, yw] : {std::pair(y.lowIdx, y.lowW),
                                          std::pair(y.highIdx, y.highW)})
                      for (auto [xi, xw] : {std::pair(xs.lowIdx, xs.lowW),
                                            std::pair(xs.highIdx, xs.highW)}) {
                        Value w = arith::SelectOp::create(
                            cb, cl, out, zero,
                            arith::MulFOp::create(cb, cl, yw, xw));
                        Value v = tensor::ExtractOp::create(
                            cb, cl, x, ValueRange{n, c, yi, xi});
                        terms.push_back(arith::MulFOp::create(
                            cb, cl, w, convertScalar(cb, cl, v, ct)));
                      }
                    Value r = colAcc[0];
                    if (isMax) {
                      Value m = terms[0];
                      for (Value t : ArrayRef(terms).drop_front())
                        m = arith::MaximumFOp::create(cb, cl, m, t);
                      r = arith::MaximumFOp::create(cb, cl, r, m);
                    } else {
                      Value s = terms[0];
                      for (Value t : ArrayRef(terms).drop_front())
                        s = arith::AddFOp::create(cb, cl, s, t);
                      r = arith::AddFOp::create(cb, cl, r, s);
                    }
                    scf::YieldOp::create(cb, cl, r);
                  });
              scf::YieldOp::create(rb, rl, cols.getResult(0));
            });
        Value total = rows.getResult(0);
        Value count = arith::MulIOp::create(nb, nl, gridH, gridW);
        if (isMax) {
          // No sample: zero rather than the identity.
          Value none = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                             count, zeroIdx);
          total = arith::SelectOp::create(nb, nl, none, fc(0), total);
        } else {
          count = arith::MaxSIOp::create(nb, nl, count, oneIdx);
          total = div(total, indexToFloat(nb, nl, count, ct));
        }
        return convertScalar(nb, nl, total, elt);
      });
}

/// MaxUnpool: scatters X into zeros at the flat indices I gives (over
/// (N, C) and the unpooled shape (in - 1) * stride - pads + kernel, whose
/// result is zero-extended to `output_shape` if given, as the ONNX
/// reference does). Written as a gather: output element p reads the
/// elements of X whose pooling windows cover it, in its own (n, c) plane,
/// and takes the last one (in X's order) whose index is p. Indices are
/// thus taken to point into their element's window, as MaxPool's Indices
/// output does (with the same kernel, strides and pads); any other index
/// writes nothing.
FailureOr<Value> lowerMaxUnpool(OpBuilder &b, MaxUnpoolOp op) {
  Location loc = op.getLoc();
  Value x = op.getX(), indices = op.getI();
  auto xt = cast<RankedTensorType>(x.getType());
  auto it = cast<RankedTensorType>(indices.getType());
  auto rt = cast<RankedTensorType>(op.getOutput().getType());
  int64_t rank = xt.getRank(), n = rank - 2;
  SmallVector<int64_t> kernel(op.getKernelShape());
  SmallVector<int64_t> strides(
      op.getStrides().value_or(SmallVector<int64_t>(n, 1)));
  SmallVector<int64_t> pads(
      op.getPads().value_or(SmallVector<int64_t>(2 * n, 0)));
  if (n < 1 || rt.getRank() != rank || it.getShape() != xt.getShape() ||
      !isa<IntegerType>(it.getElementType()))
    return op.emitOpError("needs X and integer indices I of one shape with "
                          "spatial dims"),
           failure();
  if ((int64_t)kernel.size() != n || (int64_t)strides.size() != n ||
      (int64_t)pads.size() != 2 * n ||
      llvm::any_of(kernel, [](int64_t v) { return v < 1; }) ||
      llvm::any_of(strides, [](int64_t v) { return v < 1; }) ||
      llvm::any_of(pads, [](int64_t v) { return v < 0; }))
    return op.emitOpError("needs a positive kernel_shape and strides and "
                          "non-negative pads for each of the ")
               << n << " spatial dims",
           failure();
  SmallVector<int64_t> unpooled = {xt.getDimSize(0), xt.getDimSize(1)};
  for (int64_t d = 0; d < n; ++d)
    unpooled.push_back((xt.getDimSize(2 + d) - 1) * strides[d] - pads[d] -
                       pads[n + d] + kernel[d]);
  // output_shape only sets the result shape, which is static: a constant
  // one must agree with it, one known only at run time is taken to.
  if (Value shape = op.getOutputShape()) {
    auto given = getConstantInts(shape);
    if (given && ArrayRef<int64_t>(*given) != rt.getShape())
      return op.emitOpError("output_shape does not match the result type"),
             failure();
  }
  for (int64_t d = 0; d < rank; ++d)
    if (d < 2 ? rt.getDimSize(d) != unpooled[d]
              : rt.getDimSize(d) < unpooled[d])
      return op.emitOpError("output shape [")
                 << rt.getShape() << "] cannot hold the unpooled shape ["
                 << ArrayRef<int64_t>(unpooled)
                 << "] (it may only extend the spatial dims)",
             failure();
  Type elt = rt.getElementType();
  // Candidates per dim: the windows o covering p are the ceil(k / s)
  // steps back from floor((p + pad) / s).
  SmallVector<int64_t> steps;
  int64_t combos = 1;
  for (int64_t d = 0; d < n; ++d) {
    steps.push_back((kernel[d] + strides[d] - 1) / strides[d]);
    combos *= steps.back();
  }
  return elementwise(
      b, loc, rt, ValueRange{},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        auto ic = [&](int64_t v) { return indexConst(nb, nl, v); };
        auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) {
          return arith::CmpIOp::create(nb, nl, p, l, r).getResult();
        };
        auto both = [&](Value l, Value r) {
          return arith::AndIOp::create(nb, nl, l, r).getResult();
        };
        SmallVector<Value> p;
        for (int64_t d = 0; d < rank; ++d)
          p.push_back(linalg::IndexOp::create(nb, nl, d));
        // p's flat index in the unpooled shape, and whether p lies in it.
        Value flat = ic(0);
        Value inUnpooled = scalarConst(nb, nl, nb.getI1Type(), 1);
        for (int64_t d = 0; d < rank; ++d) {
          flat = arith::AddIOp::create(
              nb, nl, arith::MulIOp::create(nb, nl, flat, ic(unpooled[d])),
              p[d]);
          if (rt.getDimSize(d) > unpooled[d])
            inUnpooled = both(inUnpooled, cmp(arith::CmpIPredicate::ult, p[d],
                                              ic(unpooled[d])));
        }
        flat = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), flat);
        SmallVector<Value> base, rem;
        for (int64_t d = 0; d < n; ++d) {
          Value shifted = arith::AddIOp::create(nb, nl, p[2 + d], ic(pads[d]));
          base.push_back(
              arith::DivUIOp::create(nb, nl, shifted, ic(strides[d])));
          rem.push_back(
              arith::RemUIOp::create(nb, nl, shifted, ic(strides[d])));
        }
        Value acc = scalarConst(nb, nl, elt, 0);
        // Candidates in X's order, so a later one overrides.
        for (int64_t k = 0; k < combos; ++k) {
          SmallVector<Value> coords = {p[0], p[1]};
          Value ok = inUnpooled;
          SmallVector<int64_t> back(n);
          for (int64_t d = n - 1, rest = k; d >= 0; rest /= steps[d], --d)
            back[d] = steps[d] - 1 - rest % steps[d];
          for (int64_t d = 0; d < n; ++d) {
            // o = base - back; below zero it wraps, failing the unsigned
            // bound check.
            Value o = arith::SubIOp::create(nb, nl, base[d], ic(back[d]));
            Value inX =
                cmp(arith::CmpIPredicate::ult, o, ic(xt.getDimSize(2 + d)));
            ok = both(ok, inX);
            int64_t reach = kernel[d] - back[d] * strides[d];
            if (reach < strides[d])
              ok = both(ok, cmp(arith::CmpIPredicate::ult, rem[d], ic(reach)));
            coords.push_back(arith::SelectOp::create(nb, nl, inX, o, ic(0)));
          }
          Value target = convertScalar(
              nb, nl, tensor::ExtractOp::create(nb, nl, indices, coords),
              nb.getI64Type());
          Value hit = both(ok, cmp(arith::CmpIPredicate::eq, target, flat));
          acc = arith::SelectOp::create(
              nb, nl, hit, tensor::ExtractOp::create(nb, nl, x, coords), acc);
        }
        return acc;
      });
}

/// DeformConv (2-D): a Conv each of whose taps reads X at its window
/// position moved by a learned offset (per offset group, tap and output
/// position), bilinearly with zeros outside the input, times the
/// optional mask, as the ONNX reference (GridSample, align_corners) and
/// torchvision's deform_conv2d do. Two generics: the sampled columns
/// S[n, c, kh, kw, oh, ow], then their contraction with W per group
/// (S and W expanded to [.., G, C / G, ..]), plus the bias.
FailureOr<Value> lowerDeformConv(OpBuilder &b, DeformConvOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op.getX(), w = op.getW(), offset = op.getOffset(), bias = op.getB(),
        mask = op.getMask();
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(w.getType());
  auto ot = cast<RankedTensorType>(offset.getType());
  auto rt = cast<RankedTensorType>(op.getY().getType());
  if (xt.getRank() != 4 || wt.getRank() != 4 || ot.getRank() != 4 ||
      rt.getRank() != 4)
    return op.emitOpError("only the 2-D form (4-D input, weight and "
                          "offset) is lowered"),
           failure();
  Type elt = rt.getElementType();
  if (!isFloat(elt) || !isFloat(wt) || !isFloat(ot))
    return op.emitOpError("needs float input, weight and offset"), failure();
  int64_t batch = xt.getDimSize(0), channels = xt.getDimSize(1),
          height = xt.getDimSize(2), width = xt.getDimSize(3);
  int64_t filters = wt.getDimSize(0), groupChannels = wt.getDimSize(1),
          kh = wt.getDimSize(2), kw = wt.getDimSize(3);
  int64_t outH = rt.getDimSize(2), outW = rt.getDimSize(3);
  int64_t group = op.getGroup(), offsetGroup = op.getOffsetGroup();
  if (group <= 0 || offsetGroup <= 0 || channels != groupChannels * group ||
      filters % group || channels % offsetGroup)
    return op.emitOpError("needs C = C/group of W times group (")
               << channels << " vs " << groupChannels << " x " << group
               << "), output channels divisible by group and C by "
                  "offset_group ("
               << offsetGroup << ")",
           failure();
  if (auto ks = op.getKernelShape();
      ks && (ks->size() != 2 || (*ks)[0] != kh || (*ks)[1] != kw))
    return op.emitOpError("kernel_shape does not match the weight's"),
           failure();
  int64_t taps = kh * kw;
  if (ot.getShape() !=
      ArrayRef<int64_t>{batch, offsetGroup * 2 * taps, outH, outW})
    return op.emitOpError("needs an offset of shape [")
               << batch << ", " << offsetGroup * 2 * taps << ", " << outH
               << ", " << outW << "], got " << ot,
           failure();
  if (mask && cast<RankedTensorType>(mask.getType()).getShape() !=
                  ArrayRef<int64_t>{batch, offsetGroup * taps, outH, outW})
    return op.emitOpError("needs a mask of shape [")
               << batch << ", " << offsetGroup * taps << ", " << outH << ", "
               << outW << "]",
           failure();
  if (bias &&
      cast<RankedTensorType>(bias.getType()).getNumElements() != filters)
    return op.emitOpError("needs a bias of ") << filters << " values",
           failure();
  auto ints = [](std::optional<ArrayRef<int64_t>> a, size_t n, int64_t dflt) {
    SmallVector<int64_t> v =
        a ? SmallVector<int64_t>(*a) : SmallVector<int64_t>(n, dflt);
    return v.size() == n ? v : SmallVector<int64_t>();
  };
  SmallVector<int64_t> strides = ints(op.getStrides(), 2, 1),
                       dilations = ints(op.getDilations(), 2, 1),
                       pads = ints(op.getPads(), 4, 0);
  if (strides.empty() || dilations.empty() || pads.empty())
    return op.emitOpError("needs 2 strides, 2 dilations and 4 pads"), failure();
  Type ct = elt.isF64() ? b.getF64Type() : b.getF32Type();
  int64_t perOffsetGroup = channels / offsetGroup;
  auto colsType =
      RankedTensorType::get({batch, channels, kh, kw, outH, outW}, ct);
  Value cols = elementwise(
      b, loc, colsType, ValueRange{},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        auto fc = [&](double v) { return scalarConst(nb, nl, ct, v); };
        auto ic = [&](int64_t v) { return indexConst(nb, nl, v); };
        SmallVector<Value> idx;
        for (int64_t d = 0; d < 6; ++d)
          idx.push_back(linalg::IndexOp::create(nb, nl, d));
        Value n = idx[0], c = idx[1], oh = idx[4], ow = idx[5];
        Value g = arith::DivUIOp::create(nb, nl, c, ic(perOffsetGroup));
        Value tap = arith::AddIOp::create(
            nb, nl, arith::MulIOp::create(nb, nl, idx[2], ic(kw)), idx[3]);
        Value gTap = arith::AddIOp::create(
            nb, nl, arith::MulIOp::create(nb, nl, g, ic(taps)), tap);
        // The sample's position along dim k (0: rows, 1: columns): the
        // window's tap plus its offset, channel 2 * (g * taps + tap) + k.
        auto position = [&](int64_t k) -> Value {
          Value ch = arith::AddIOp::create(
              nb, nl, arith::MulIOp::create(nb, nl, gTap, ic(2)), ic(k));
          Value off =
              convertScalar(nb, nl,
                            tensor::ExtractOp::create(
                                nb, nl, offset, ValueRange{n, ch, oh, ow}),
                            ct);
          Value base = indexToFloat(nb, nl, k ? ow : oh, ct);
          Value p = arith::AddFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, base, fc(strides[k])),
              fc(-pads[k]));
          p = arith::AddFOp::create(
              nb, nl, p,
              arith::MulFOp::create(nb, nl,
                                    indexToFloat(nb, nl, idx[2 + k], ct),
                                    fc(dilations[k])));
          return arith::AddFOp::create(nb, nl, p, off);
        };
        Value py = position(0), px = position(1);
        Value y0 = math::FloorOp::create(nb, nl, py);
        Value x0 = math::FloorOp::create(nb, nl, px);
        Value fy = arith::SubFOp::create(nb, nl, py, y0);
        Value fx = arith::SubFOp::create(nb, nl, px, x0);
        // Sum of the four corners, each zero outside the input.
        Value acc = fc(0);
        for (int64_t dy = 0; dy < 2; ++dy)
          for (int64_t dx = 0; dx < 2; ++dx) {
            Value yy =
                dy ? arith::AddFOp::create(nb, nl, y0, fc(1)).getResult() : y0;
            Value xx =
                dx ? arith::AddFOp::create(nb, nl, x0, fc(1)).getResult() : x0;
            Value wy = dy ? fy : arith::SubFOp::create(nb, nl, fc(1), fy);
            Value wx = dx ? fx : arith::SubFOp::create(nb, nl, fc(1), fx);
            Value out =
                arith::OrIOp::create(nb, nl, outside(nb, nl, yy, 0, height - 1),
                                     outside(nb, nl, xx, 0, width - 1));
            // NaN positions read nothing either.
            Value nan = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO,
                                              yy, xx);
            out = arith::OrIOp::create(nb, nl, out, nan);
            Value v = convertScalar(
                nb, nl,
                tensor::ExtractOp::create(
                    nb, nl, x,
                    ValueRange{n, c, floatToIndex(nb, nl, yy, height),
                               floatToIndex(nb, nl, xx, width)}),
                ct);
            Value term = arith::MulFOp::create(
                nb, nl, v, arith::MulFOp::create(nb, nl, wy, wx));
            acc = arith::AddFOp::create(
                nb, nl, acc, arith::SelectOp::create(nb, nl, out, fc(0), term));
          }
        if (mask)
          acc = arith::MulFOp::create(
              nb, nl, acc,
              convertScalar(nb, nl,
                            tensor::ExtractOp::create(
                                nb, nl, mask, ValueRange{n, gTap, oh, ow}),
                            ct));
        return acc;
      });
  // Y[n, g, f, oh, ow] = sum over (c, i, j) of S[n, g, c, i, j, oh, ow] *
  // W[g, f, c, i, j].
  int64_t perGroup = filters / group;
  auto colsG = RankedTensorType::get(
      {batch, group, groupChannels, kh, kw, outH, outW}, ct);
  auto wG = RankedTensorType::get({group, perGroup, groupChannels, kh, kw},
                                  wt.getElementType());
  auto yG = RankedTensorType::get({batch, group, perGroup, outH, outW}, ct);
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, ctx); };
  // Dims: n g f oh ow | c i j.
  AffineMap colsMap = AffineMap::get(
      8, 0, {dim(0), dim(1), dim(5), dim(6), dim(7), dim(3), dim(4)}, ctx);
  AffineMap wMap =
      AffineMap::get(8, 0, {dim(1), dim(2), dim(5), dim(6), dim(7)}, ctx);
  AffineMap yMap =
      AffineMap::get(8, 0, {dim(0), dim(1), dim(2), dim(3), dim(4)}, ctx);
  using IT = utils::IteratorType;
  SmallVector<IT> iters(5, IT::parallel);
  iters.append(3, IT::reduction);
  Value y =
      linalg::GenericOp::create(
          b, loc, TypeRange{yG},
          ValueRange{reshapeTo(b, loc, cols, colsG), reshapeTo(b, loc, w, wG)},
          ValueRange{filled(b, loc, yG, scalarConst(b, loc, ct, 0))},
          ArrayRef<AffineMap>{colsMap, wMap, yMap}, iters,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value prod = arith::MulFOp::create(nb, nl, a[0],
                                               convertScalar(nb, nl, a[1], ct));
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], prod)});
          })
          .getResult(0);
  y = reshapeTo(b, loc, y, RankedTensorType::get(rt.getShape(), ct));
  AffineMap ident = AffineMap::getMultiDimIdentityMap(4, ctx);
  SmallVector<Value> ins{y};
  SmallVector<AffineMap> maps{ident};
  if (bias) {
    ins.push_back(bias);
    maps.push_back(AffineMap::get(4, 0, {dim(1)}, ctx));
  }
  return elementwise(
      b, loc, rt, ins,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value v = a[0];
        if (a.size() > 1)
          v = arith::AddFOp::create(nb, nl, v, convertScalar(nb, nl, a[1], ct));
        return convertScalar(nb, nl, v, elt);
      },
      maps);
}

} // namespace

LoweringResult lowerSamplingOp(OpBuilder &b, Operation *op) {
  FailureOr<Value> result = failure();
  if (auto gs = dyn_cast<GridSampleOp>(op))
    result = lowerGridSample(b, gs);
  else if (auto ra = dyn_cast<RoiAlignOp>(op))
    result = lowerRoiAlign(b, ra);
  else if (auto mu = dyn_cast<MaxUnpoolOp>(op))
    result = lowerMaxUnpool(b, mu);
  else if (auto dc = dyn_cast<DeformConvOp>(op))
    result = lowerDeformConv(b, dc);
  else
    return std::nullopt;
  if (failed(result))
    return FailureOr<SmallVector<Value>>(failure());
  return FailureOr<SmallVector<Value>>(SmallVector<Value>{*result});
}

} // namespace kiln::lowering
