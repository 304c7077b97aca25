//===- LowerDataDependentOps.cpp - NonZero, Compress, Unique, NMS, Slice --===//
//
// Part of convert-kiln-to-linalg (see KilnToLinalg.cpp). NonMaxSuppression,
// NonZero, Compress, Unique and a Slice with run-time starts or ends (the
// elements of a sequence split or indexed at run time) have results whose
// extent along one dim depends on the values of their inputs. Each is computed
// into a tensor of the static upper bound of that extent, by scf.for loops that
// carry the tensors, together with the count of valid entries along the dim
// (the entries past it are unspecified). The pass returns both from the
// function (such results may only be graph outputs) and the runtime reports the
// valid part.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/Matchers.h"

#include <array>

using namespace mlir;
using namespace kiln;

namespace kiln::lowering {

namespace {

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// An `index` value as i64.
Value toI64(OpBuilder &b, Location loc, Value i) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), i);
}

/// The i1 `c` as an `index` 0 or 1.
Value boolToIndex(OpBuilder &b, Location loc, Value c) {
  return arith::SelectOp::create(b, loc, c, indexConst(b, loc, 1),
                                 indexConst(b, loc, 0));
}

Value extract(OpBuilder &b, Location loc, Value t, ValueRange indices) {
  return tensor::ExtractOp::create(b, loc, t, indices);
}

Value insert(OpBuilder &b, Location loc, Value v, Value t, ValueRange indices) {
  return tensor::InsertOp::create(b, loc, v, t, indices);
}

/// The only element of a tensor of one element (rank 0 or 1).
Value scalarOf(OpBuilder &b, Location loc, Value t) {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  return extract(b, loc, t, SmallVector<Value>(rank, indexConst(b, loc, 0)));
}

using LoopBody =
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>;

/// An `scf.for` from `lb` to `ub` carrying `inits` through `body`; its
/// results.
SmallVector<Value> loop(OpBuilder &b, Location loc, Value lb, Value ub,
                        ValueRange inits, LoopBody body) {
  auto forOp = scf::ForOp::create(
      b, loc, lb, ub, indexConst(b, loc, 1), inits,
      [&](OpBuilder &nb, Location nl, Value iv, ValueRange args) {
        scf::YieldOp::create(nb, nl, body(nb, nl, iv, args));
      });
  return SmallVector<Value>(forOp.getResults());
}

/// `x < y` on scalars of a float or signless integer type (booleans:
/// false < true).
Value less(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, y);
  return arith::CmpIOp::create(b, loc,
                               x.getType().isInteger(1)
                                   ? arith::CmpIPredicate::ult
                                   : arith::CmpIPredicate::slt,
                               x, y);
}

Value andI(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}

Value notI(OpBuilder &b, Location loc, Value x) {
  return arith::XOrIOp::create(b, loc, x,
                               scalarConst(b, loc, b.getI1Type(), 1));
}

/// A rank-0 tensor<i64> holding the `index` value `count`.
Value countTensor(OpBuilder &b, Location loc, Value count) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, b.getI64Type()),
      ValueRange{toI64(b, loc, count)});
}

/// Offsets, sizes and unit strides of the slice at `pos` along `dim` of a
/// tensor of `shape` (extent 1 along `dim`).
struct SliceSpec {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};
SliceSpec sliceAt(OpBuilder &b, ArrayRef<int64_t> shape, int64_t dim,
                  Value pos) {
  SliceSpec s;
  for (auto [d, extent] : llvm::enumerate(shape)) {
    s.offsets.push_back((int64_t)d == dim ? OpFoldResult(pos)
                                          : OpFoldResult(b.getIndexAttr(0)));
    s.sizes.push_back(b.getIndexAttr((int64_t)d == dim ? 1 : extent));
    s.strides.push_back(b.getIndexAttr(1));
  }
  return s;
}

/// Copies the slice at `from` along `dim` of `src` to `to` along `dim` of
/// `dst` (both of the same shape but along `dim`).
Value copySlice(OpBuilder &b, Location loc, Value src, Value from, Value dst,
                Value to, int64_t dim) {
  auto shape = cast<RankedTensorType>(src.getType()).getShape();
  SliceSpec in = sliceAt(b, shape, dim, from);
  Value slice = tensor::ExtractSliceOp::create(b, loc, src, in.offsets,
                                               in.sizes, in.strides);
  SliceSpec out = sliceAt(b, shape, dim, to);
  return tensor::InsertSliceOp::create(b, loc, slice, dst, out.offsets,
                                       out.sizes, out.strides);
}

/// Y = NonZero(X): the coordinates of the nonzero elements of X, one column
/// each, in row-major order.
FailureOr<SmallVector<Value>> lowerNonZero(OpBuilder &b, NonZeroOp op) {
  Location loc = op.getLoc();
  auto xt = cast<RankedTensorType>(op.getX().getType());
  auto rt = cast<RankedTensorType>(op.getY().getType());
  if (xt.getRank() == 0)
    return op.emitOpError("of a scalar is not supported by the lowering"),
           failure();
  int64_t n = xt.getNumElements();
  Type elt = xt.getElementType();
  Value flat = reshapeTo(b, loc, op.getX(), RankedTensorType::get({n}, elt));
  Value zero = scalarConst(b, loc, elt, 0);
  Value init = filled(b, loc, rt, scalarConst(b, loc, b.getI64Type(), 0));
  Value c0 = indexConst(b, loc, 0);
  // Every element writes its coordinates at column `count` (in bounds, as
  // count <= i), which a nonzero one then keeps by advancing `count`.
  SmallVector<Value> r = loop(
      b, loc, c0, indexConst(b, loc, n), {init, c0},
      [&](OpBuilder &nb, Location nl, Value i, ValueRange acc) {
        Value v = extract(nb, nl, flat, i);
        Value nz = isFloat(elt)
                       ? arith::CmpFOp::create(
                             nb, nl, arith::CmpFPredicate::UNE, v, zero)
                             .getResult()
                       : arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne,
                                               v, zero)
                             .getResult();
        Value out = acc[0], count = acc[1], rest = i;
        for (int64_t d = xt.getRank() - 1; d >= 0; --d) {
          Value extent = indexConst(nb, nl, xt.getDimSize(d));
          Value coord = arith::RemUIOp::create(nb, nl, rest, extent);
          rest = arith::DivUIOp::create(nb, nl, rest, extent);
          out = insert(nb, nl, toI64(nb, nl, coord), out,
                       {indexConst(nb, nl, d), count});
        }
        count = arith::AddIOp::create(nb, nl, count, boolToIndex(nb, nl, nz));
        return SmallVector<Value>{out, count};
      });
  return SmallVector<Value>{r[0], r[1]};
}

/// The axis of Compress (0 of the flattened input when absent) and the
/// input reshaped to match.
std::pair<Value, int64_t> compressInput(OpBuilder &b, Location loc,
                                        CompressOp op) {
  auto xt = cast<RankedTensorType>(op.getInput().getType());
  auto axis = op->getAttrOfType<IntegerAttr>("axis");
  if (!axis)
    return {reshapeTo(b, loc, op.getInput(),
                      RankedTensorType::get({xt.getNumElements()},
                                            xt.getElementType())),
            0};
  int64_t a = axis.getInt();
  return {op.getInput(), a < 0 ? a + xt.getRank() : a};
}

/// output = Compress(input, condition): the slices along the axis whose
/// condition is true.
FailureOr<SmallVector<Value>> lowerCompress(OpBuilder &b, CompressOp op) {
  Location loc = op.getLoc();
  auto rt = cast<RankedTensorType>(op.getOutput().getType());
  auto [x, axis] = compressInput(b, loc, op);
  Value init = filled(b, loc, rt, scalarConst(b, loc, rt.getElementType(), 0));
  Value c0 = indexConst(b, loc, 0);
  // Slice i is copied to position `count` (in bounds, as count <= i) and
  // kept by advancing `count` where its condition holds.
  SmallVector<Value> r =
      loop(b, loc, c0, indexConst(b, loc, rt.getDimSize(axis)), {init, c0},
           [&](OpBuilder &nb, Location nl, Value i, ValueRange acc) {
             Value keep = extract(nb, nl, op.getCondition(), i);
             Value out = copySlice(nb, nl, x, i, acc[0], acc[1], axis);
             Value count = arith::AddIOp::create(nb, nl, acc[1],
                                                 boolToIndex(nb, nl, keep));
             return SmallVector<Value>{out, count};
           });
  return SmallVector<Value>{r[0], r[1]};
}

/// The one axis a Slice with run-time starts or ends cuts at run time, for
/// a static input and a single constant axis of step 1: the shape of its
/// result along it depends on the values of the starts and ends.
std::optional<int64_t> runTimeSliceAxis(SliceOp op) {
  auto xt = dyn_cast<RankedTensorType>(op.getData().getType());
  if (!xt || !xt.hasStaticShape() || xt.getRank() == 0)
    return std::nullopt;
  if (getConstantInts(op.getStarts()) && getConstantInts(op.getEnds()))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> axes =
      op.getAxes()
          ? getConstantInts(op.getAxes())
          : std::optional<SmallVector<int64_t>>(SmallVector<int64_t>{0});
  if (!axes || axes->size() != 1 || (!op.getAxes() && xt.getRank() != 1))
    return std::nullopt;
  if (op.getSteps()) {
    std::optional<SmallVector<int64_t>> steps = getConstantInts(op.getSteps());
    if (!steps || steps->size() != 1 || (*steps)[0] != 1)
      return std::nullopt;
  }
  int64_t a = (*axes)[0] < 0 ? (*axes)[0] + xt.getRank() : (*axes)[0];
  if (a < 0 || a >= xt.getRank())
    return std::nullopt;
  return a;
}

/// output = Slice(data, starts, ends, [axis]) with run-time starts or
/// ends: the slices along the axis from the start (negative: from the
/// end; clamped to the extent) to the end, copied to the front of a tensor
/// of the input's shape.
FailureOr<SmallVector<Value>> lowerRunTimeSlice(OpBuilder &b, SliceOp op,
                                                int64_t axis) {
  Location loc = op.getLoc();
  auto rt = cast<RankedTensorType>(op.getOutput().getType());
  auto xt = cast<RankedTensorType>(op.getData().getType());
  Type i64 = b.getI64Type();
  Value dim = scalarConst(b, loc, i64, xt.getDimSize(axis));
  Value zero = scalarConst(b, loc, i64, 0);
  auto bound = [&](Value t) {
    Value v = scalarOf(b, loc, t);
    if (v.getType() != i64)
      v = arith::ExtSIOp::create(b, loc, i64, v);
    Value negative = less(b, loc, v, zero);
    v = arith::SelectOp::create(b, loc, negative,
                                arith::AddIOp::create(b, loc, v, dim), v);
    v = arith::MaxSIOp::create(b, loc, v, zero);
    return arith::MinSIOp::create(b, loc, v, dim).getResult();
  };
  Value start = bound(op.getStarts()), end = bound(op.getEnds());
  Value count = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, end, start), zero);
  auto toIndex = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v).getResult();
  };
  Value from = toIndex(start);
  Value init = filled(b, loc, rt, scalarConst(b, loc, rt.getElementType(), 0));
  Value c0 = indexConst(b, loc, 0);
  Value out = loop(b, loc, c0, toIndex(count), {init},
                   [&](OpBuilder &nb, Location nl, Value i, ValueRange acc) {
                     Value src = arith::AddIOp::create(nb, nl, from, i);
                     return SmallVector<Value>{
                         copySlice(nb, nl, op.getData(), src, acc[0], i, axis)};
                   })[0];
  return SmallVector<Value>{out, toIndex(count)};
}

/// Whether box `j` of batch `batch` is suppressed by box `i`: their
/// intersection over union exceeds `threshold`. As in ONNX's reference, boxes
/// without area or overlap suppress nothing.
Value suppresses(OpBuilder &b, Location loc, Value boxes, Value batch, Value i,
                 Value j, Value threshold, bool centerPoint) {
  Type t = threshold.getType();
  auto sub = [&](Value x, Value y) -> Value {
    return arith::SubFOp::create(b, loc, x, y);
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(b, loc, x, y);
  };
  auto gt = [&](Value x, Value y) -> Value {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
  };
  Value zero = scalarConst(b, loc, t, 0), half = scalarConst(b, loc, t, 0.5);
  // xmin, xmax, ymin, ymax of a box.
  auto corners = [&](Value k) {
    std::array<Value, 4> c;
    for (int64_t e = 0; e < 4; ++e)
      c[e] = extract(b, loc, boxes, {batch, k, indexConst(b, loc, e)});
    if (centerPoint) {
      // [x_center, y_center, width, height]
      Value hw = mul(c[2], half), hh = mul(c[3], half);
      return std::array<Value, 4>{
          sub(c[0], hw), arith::AddFOp::create(b, loc, c[0], hw), sub(c[1], hh),
          arith::AddFOp::create(b, loc, c[1], hh)};
    }
    // [y1, x1, y2, x2], either corner first.
    return std::array<Value, 4>{arith::MinimumFOp::create(b, loc, c[1], c[3]),
                                arith::MaximumFOp::create(b, loc, c[1], c[3]),
                                arith::MinimumFOp::create(b, loc, c[0], c[2]),
                                arith::MaximumFOp::create(b, loc, c[0], c[2])};
  };
  std::array<Value, 4> p = corners(i), q = corners(j);
  Value x0 = arith::MaximumFOp::create(b, loc, p[0], q[0]);
  Value x1 = arith::MinimumFOp::create(b, loc, p[1], q[1]);
  Value y0 = arith::MaximumFOp::create(b, loc, p[2], q[2]);
  Value y1 = arith::MinimumFOp::create(b, loc, p[3], q[3]);
  Value inter = mul(sub(x1, x0), sub(y1, y0));
  Value areaP = mul(sub(p[1], p[0]), sub(p[3], p[2]));
  Value areaQ = mul(sub(q[1], q[0]), sub(q[3], q[2]));
  Value uni = sub(arith::AddFOp::create(b, loc, areaP, areaQ), inter);
  Value valid = andI(b, loc, gt(x1, x0), gt(y1, y0));
  valid = andI(b, loc, valid, gt(inter, zero));
  valid = andI(b, loc, valid, gt(areaP, zero));
  valid = andI(b, loc, valid, gt(areaQ, zero));
  valid = andI(b, loc, valid, gt(uni, zero));
  Value iou = arith::DivFOp::create(b, loc, inter, uni);
  return andI(b, loc, valid, gt(iou, threshold));
}

/// selected_indices = NonMaxSuppression(boxes, scores, ...): per batch and
/// class, greedily the best-scoring box left (ties: the lowest index) while
/// fewer than max_output_boxes_per_class are selected, each suppressing
/// the boxes it overlaps by more than iou_threshold; boxes scoring at most
/// score_threshold are never candidates.
FailureOr<SmallVector<Value>> lowerNonMaxSuppression(OpBuilder &b,
                                                     NonMaxSuppressionOp op) {
  Location loc = op.getLoc();
  Value boxes = op.getBoxes(), scores = op.getScores();
  auto st = cast<RankedTensorType>(scores.getType());
  auto rt = cast<RankedTensorType>(op.getSelectedIndices().getType());
  Type ft = st.getElementType(), i64 = b.getI64Type();
  if (!isFloat(ft) || getElementTypeOrSelf(boxes.getType()) != ft)
    return op.emitOpError("needs float boxes and scores of one type"),
           failure();
  int64_t numBoxes = st.getDimSize(2);
  bool centerPoint = op.getCenterPointBox() == 1;
  Value c0 = indexConst(b, loc, 0), noBox = indexConst(b, loc, numBoxes);
  Value numBoxesV = noBox;
  // max_output_boxes_per_class clamped to [0, num_boxes].
  Value maxOut = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      arith::MaxSIOp::create(
          b, loc,
          arith::MinSIOp::create(
              b, loc, scalarOf(b, loc, op.getMaxOutputBoxesPerClass()),
              scalarConst(b, loc, i64, numBoxes)),
          scalarConst(b, loc, i64, 0)));
  Value iouThreshold = op.getIouThreshold()
                           ? scalarOf(b, loc, op.getIouThreshold())
                           : scalarConst(b, loc, ft, 0);
  Value scoreThreshold = op.getScoreThreshold()
                             ? scalarOf(b, loc, op.getScoreThreshold())
                             : Value();
  auto boolType = RankedTensorType::get({numBoxes}, b.getI1Type());
  Value out = filled(b, loc, rt, scalarConst(b, loc, i64, 0));

  auto perClass = [&](OpBuilder &b, Location loc, Value batch, Value cls,
                      Value out, Value count) {
    auto score = [&](OpBuilder &b, Location loc, Value k) {
      return extract(b, loc, scores, {batch, cls, k});
    };
    // The candidates: boxes scoring above the threshold.
    Value candidates = emptyLike(b, loc, boolType);
    candidates =
        loop(b, loc, c0, numBoxesV, {candidates},
             [&](OpBuilder &nb, Location nl, Value k, ValueRange acc) {
               Value ok = scoreThreshold
                              ? arith::CmpFOp::create(
                                    nb, nl, arith::CmpFPredicate::OGT,
                                    score(nb, nl, k), scoreThreshold)
                                    .getResult()
                              : scalarConst(nb, nl, nb.getI1Type(), 1);
               return SmallVector<Value>{insert(nb, nl, ok, acc[0], k)};
             })[0];
    return loop(
        b, loc, c0, maxOut, {out, count, candidates},
        [&](OpBuilder &nb, Location nl, Value, ValueRange acc) {
          // The best candidate left, `noBox` when none is.
          Value best = loop(
              nb, nl, c0, numBoxesV, {noBox, scalarConst(nb, nl, ft, 0)},
              [&](OpBuilder &lb, Location ll, Value k, ValueRange bestAcc) {
                Value s = score(lb, ll, k);
                Value none = arith::CmpIOp::create(
                    lb, ll, arith::CmpIPredicate::eq, bestAcc[0], noBox);
                Value higher = arith::CmpFOp::create(
                    lb, ll, arith::CmpFPredicate::OGT, s, bestAcc[1]);
                Value better = andI(lb, ll, extract(lb, ll, acc[2], k),
                                    arith::OrIOp::create(lb, ll, none, higher));
                return SmallVector<Value>{
                    arith::SelectOp::create(lb, ll, better, k, bestAcc[0]),
                    arith::SelectOp::create(lb, ll, better, s, bestAcc[1])};
              })[0];
          Value found = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne,
                                              best, noBox);
          auto ifOp = scf::IfOp::create(
              nb, nl, found,
              [&](OpBuilder &tb, Location tl) {
                Value sel = acc[0];
                Value row[3] = {batch, cls, best};
                for (int64_t e = 0; e < 3; ++e)
                  sel = insert(tb, tl, toI64(tb, tl, row[e]), sel,
                               {acc[1], indexConst(tb, tl, e)});
                Value next = arith::AddIOp::create(tb, tl, acc[1],
                                                   indexConst(tb, tl, 1));
                Value left = loop(
                    tb, tl, c0, numBoxesV, {acc[2]},
                    [&](OpBuilder &lb, Location ll, Value k, ValueRange cand) {
                      Value gone = arith::OrIOp::create(
                          lb, ll,
                          arith::CmpIOp::create(
                              lb, ll, arith::CmpIPredicate::eq, k, best),
                          suppresses(lb, ll, boxes, batch, best, k,
                                     iouThreshold, centerPoint));
                      Value keep = andI(lb, ll, extract(lb, ll, cand[0], k),
                                        notI(lb, ll, gone));
                      return SmallVector<Value>{
                          insert(lb, ll, keep, cand[0], k)};
                    })[0];
                scf::YieldOp::create(tb, tl, ValueRange{sel, next, left});
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, acc);
              });
          return SmallVector<Value>(ifOp.getResults().take_front(3));
        });
  };
  SmallVector<Value> r =
      loop(b, loc, c0, indexConst(b, loc, st.getDimSize(0)), {out, c0},
           [&](OpBuilder &nb, Location nl, Value batch, ValueRange acc) {
             return loop(
                 nb, nl, c0, indexConst(nb, nl, st.getDimSize(1)), acc,
                 [&](OpBuilder &cb, Location cl, Value cls, ValueRange clsAcc) {
                   SmallVector<Value> res =
                       perClass(cb, cl, batch, cls, clsAcc[0], clsAcc[1]);
                   res.resize(2);
                   return res;
                 });
           });
  return SmallVector<Value>{r[0], r[1]};
}

/// Y, indices, inverse_indices, counts = Unique(X): the distinct slices of
/// X along the axis (its elements when there is none) in order of first
/// occurrence, or sorted (lexicographically, as numpy.unique). Quadratic in
/// the number of slices: every slice is compared with the distinct ones
/// found before it.
FailureOr<SmallVector<Value>> lowerUnique(OpBuilder &b, UniqueOp op) {
  Location loc = op.getLoc();
  auto xt = cast<RankedTensorType>(op.getX().getType());
  Type elt = xt.getElementType(), i64 = b.getI64Type();
  // X as [outer, m, inner]: m slices along the axis.
  int64_t outer = 1, m = xt.getNumElements(), inner = 1;
  if (auto axisAttr = op->getAttrOfType<IntegerAttr>("axis")) {
    int64_t axis = axisAttr.getInt();
    if (axis < 0)
      axis += xt.getRank();
    for (int64_t d = 0; d < xt.getRank(); ++d)
      (d < axis ? outer : d > axis ? inner : m) *= xt.getDimSize(d);
    m = xt.getDimSize(axis);
  }
  auto sliceType = RankedTensorType::get({outer, m, inner}, elt);
  auto listType = RankedTensorType::get({m}, i64);
  Value x = reshapeTo(b, loc, op.getX(), sliceType);
  Value c0 = indexConst(b, loc, 0);
  Value sliceSize = indexConst(b, loc, outer * inner);
  Value innerV = indexConst(b, loc, inner);

  // Compares slice ja of `a` with slice jb of `c` lexicographically (in
  // row-major order of the slice): whether they are equal and whether the
  // first is less.
  auto compare = [&](OpBuilder &b, Location loc, Value a, Value ja, Value c,
                     Value jb) {
    Value f = scalarConst(b, loc, b.getI1Type(), 0);
    SmallVector<Value> r =
        loop(b, loc, c0, sliceSize, {f, f},
             [&](OpBuilder &nb, Location nl, Value e, ValueRange acc) {
               Value o = arith::DivUIOp::create(nb, nl, e, innerV);
               Value in = arith::RemUIOp::create(nb, nl, e, innerV);
               Value va = extract(nb, nl, a, {o, ja, in});
               Value vc = extract(nb, nl, c, {o, jb, in});
               Value lt = less(nb, nl, va, vc), gt = less(nb, nl, vc, va);
               Value decided = arith::OrIOp::create(
                   nb, nl, acc[0], arith::OrIOp::create(nb, nl, lt, gt));
               Value isLess =
                   arith::SelectOp::create(nb, nl, acc[0], acc[1], lt);
               return SmallVector<Value>{decided, isLess};
             });
    return std::make_pair(notI(b, loc, r[0]), r[1]);
  };

  Value zeroList = filled(b, loc, listType, scalarConst(b, loc, i64, 0));
  Value y = filled(b, loc, sliceType, scalarConst(b, loc, elt, 0));
  // First pass, in order of first occurrence. Slice i is always copied to
  // position `count` (in bounds, as count <= i), which a new one keeps by
  // advancing `count`.
  SmallVector<Value> r = loop(
      b, loc, c0, indexConst(b, loc, m), {y, zeroList, zeroList, zeroList, c0},
      [&](OpBuilder &nb, Location nl, Value i, ValueRange acc) {
        Value yAcc = acc[0], first = acc[1], inverse = acc[2], counts = acc[3],
              count = acc[4];
        Value seen =
            loop(nb, nl, c0, count, {count},
                 [&](OpBuilder &lb, Location ll, Value j, ValueRange f) {
                   Value same = compare(lb, ll, yAcc, j, x, i).first;
                   Value firstMatch =
                       andI(lb, ll, same,
                            arith::CmpIOp::create(
                                lb, ll, arith::CmpIPredicate::eq, f[0], count));
                   return SmallVector<Value>{
                       arith::SelectOp::create(lb, ll, firstMatch, j, f[0])};
                 })[0];
        Value isNew = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                            seen, count);
        yAcc = copySlice(nb, nl, x, i, yAcc, count, 1);
        first = insert(nb, nl, toI64(nb, nl, i), first, count);
        inverse = insert(nb, nl, toI64(nb, nl, seen), inverse, i);
        Value n = extract(nb, nl, counts, seen);
        n = arith::SelectOp::create(
            nb, nl, isNew, scalarConst(nb, nl, i64, 1),
            arith::AddIOp::create(nb, nl, n, scalarConst(nb, nl, i64, 1)));
        counts = insert(nb, nl, n, counts, seen);
        count =
            arith::AddIOp::create(nb, nl, count, boolToIndex(nb, nl, isNew));
        return SmallVector<Value>{yAcc, first, inverse, counts, count};
      });
  Value count = r[4];
  if (intAttr(op, "sorted", 1)) {
    // The rank of each distinct slice is the number of distinct slices less
    // than it; scatter every list to the ranks and renumber the inverse.
    SmallVector<Value> s =
        loop(b, loc, c0, count,
             {emptyLike(b, loc, sliceType), zeroList, zeroList, zeroList},
             [&](OpBuilder &nb, Location nl, Value j, ValueRange acc) {
               Value rank =
                   loop(nb, nl, c0, count, {c0},
                        [&](OpBuilder &lb, Location ll, Value k, ValueRange n) {
                          Value lt = compare(lb, ll, r[0], k, r[0], j).second;
                          return SmallVector<Value>{arith::AddIOp::create(
                              lb, ll, n[0], boolToIndex(lb, ll, lt))};
                        })[0];
               return SmallVector<Value>{
                   copySlice(nb, nl, r[0], j, acc[0], rank, 1),
                   insert(nb, nl, extract(nb, nl, r[1], j), acc[1], rank),
                   insert(nb, nl, extract(nb, nl, r[3], j), acc[2], rank),
                   insert(nb, nl, toI64(nb, nl, rank), acc[3], j)};
             });
    Value ranks = s[3];
    Value inverse =
        loop(b, loc, c0, indexConst(b, loc, m), {r[2]},
             [&](OpBuilder &nb, Location nl, Value i, ValueRange acc) {
               Value old = arith::IndexCastOp::create(
                   nb, nl, nb.getIndexType(), extract(nb, nl, acc[0], i));
               return SmallVector<Value>{
                   insert(nb, nl, extract(nb, nl, ranks, old), acc[0], i)};
             })[0];
    r = {s[0], s[1], inverse, s[2]};
  }
  SmallVector<Value> results;
  auto yType = cast<RankedTensorType>(op.getY().getType());
  results.push_back(reshapeTo(b, loc, r[0], yType));
  if (op.getIndices())
    results.push_back(r[1]);
  if (op.getInverseIndices())
    results.push_back(r[2]);
  if (op.getCounts())
    results.push_back(r[3]);
  results.push_back(count);
  return results;
}

} // namespace

SmallVector<DataDependentResult> dataDependentResults(Operation *op) {
  auto staticType = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.hasStaticShape() ? t : RankedTensorType();
  };
  auto rankOf = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t ? t.getRank() : -1;
  };
  SmallVector<DataDependentResult> r;
  if (std::optional<int64_t> bound = loopScanBound(op)) {
    unsigned carried = cast<LoopOp>(op).getVInitial().size();
    for (unsigned i = carried; i < op->getNumResults(); ++i)
      if (rankOf(op->getResult(i)) >= 1)
        r.push_back({i, 0, *bound});
    if (r.size() != op->getNumResults() - carried)
      r.clear();
    return r;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    // Data-dependent where inference left the cut axis unknown.
    std::optional<int64_t> axis = runTimeSliceAxis(slice);
    auto rt = dyn_cast<RankedTensorType>(slice.getOutput().getType());
    if (axis && rt && rt.getRank() == rankOf(slice.getData()) &&
        rt.isDynamicDim(*axis) && rt.getNumDynamicDims() == 1)
      r.push_back({0, *axis, staticType(slice.getData()).getDimSize(*axis)});
  } else if (auto nz = dyn_cast<NonZeroOp>(op)) {
    if (auto xt = staticType(nz.getX()); xt && rankOf(nz.getY()) == 2)
      r.push_back({0, 1, xt.getNumElements()});
  } else if (auto c = dyn_cast<CompressOp>(op)) {
    auto xt = staticType(c.getInput()), ct = staticType(c.getCondition());
    if (!xt || !ct || ct.getRank() != 1)
      return r;
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    int64_t a = axis ? axis.getInt() : 0;
    if (a < 0)
      a += xt.getRank();
    int64_t extent = axis ? xt.getDimSize(a) : xt.getNumElements();
    if (rankOf(c.getOutput()) == (axis ? xt.getRank() : 1))
      r.push_back({0, a, std::min(extent, ct.getDimSize(0))});
  } else if (auto nms = dyn_cast<NonMaxSuppressionOp>(op)) {
    auto st = staticType(nms.getScores());
    if (!st || st.getRank() != 3 || !staticType(nms.getBoxes()) ||
        rankOf(nms.getSelectedIndices()) != 2)
      return r;
    // At most min(max_output_boxes_per_class, num_boxes) per batch and
    // class: num_boxes unless the maximum is a constant.
    int64_t perClass = st.getDimSize(2);
    DenseIntElementsAttr maxOut;
    if (!nms.getMaxOutputBoxesPerClass())
      perClass = 0;
    else if (matchPattern(nms.getMaxOutputBoxesPerClass(),
                          m_Constant(&maxOut)) &&
             maxOut.getNumElements() == 1)
      perClass = std::clamp<int64_t>(
          (*maxOut.value_begin<APInt>()).getSExtValue(), 0, perClass);
    r.push_back({0, 0, perClass * st.getDimSize(0) * st.getDimSize(1)});
  } else if (auto u = dyn_cast<UniqueOp>(op)) {
    auto xt = staticType(u.getX());
    if (!xt)
      return r;
    auto axis = op->getAttrOfType<IntegerAttr>("axis");
    int64_t a = axis ? axis.getInt() : 0;
    if (a < 0)
      a += xt.getRank();
    int64_t m = axis ? xt.getDimSize(a) : xt.getNumElements();
    if (rankOf(u.getY()) != (axis ? xt.getRank() : 1))
      return r;
    for (OpResult res : op->getResults()) {
      if (res == u.getY())
        r.push_back({res.getResultNumber(), a, m});
      else if (res != u.getInverseIndices() && rankOf(res) == 1)
        r.push_back({res.getResultNumber(), 0, m});
    }
  }
  return r;
}

LoweringResult
lowerDataDependentOp(OpBuilder &b, Operation *op,
                     ArrayRef<DataDependentResult> dataDependent) {
  FailureOr<SmallVector<Value>> r = failure();
  if (auto slice = dyn_cast<SliceOp>(op))
    r = lowerRunTimeSlice(b, slice, dataDependent.front().dim);
  else if (auto nz = dyn_cast<NonZeroOp>(op))
    r = lowerNonZero(b, nz);
  else if (auto c = dyn_cast<CompressOp>(op))
    r = lowerCompress(b, c);
  else if (auto nms = dyn_cast<NonMaxSuppressionOp>(op))
    r = lowerNonMaxSuppression(b, nms);
  else if (auto u = dyn_cast<UniqueOp>(op))
    r = lowerUnique(b, u);
  else
    return std::nullopt;
  if (failed(r))
    return r;
  // The lowerings give the results and then the valid extent, the same for
  // every data-dependent result: one count tensor per such result.
  Value count = r->pop_back_val();
  for (size_t i = 0, e = dataDependent.size(); i < e; ++i)
    r->push_back(countTensor(b, op->getLoc(), count));
  return r;
}

} // namespace kiln::lowering
