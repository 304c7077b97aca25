//===- DepthwiseConv.cpp - depthwise convolutions as vector rows ---------===//
//
// A depthwise 2-D convolution in NCHW (one input and one output channel per
// group: MobileNet's 3x3 and ConvNeXt's 7x7) has K = KH x KW products per
// output, too few for a GEMM; as a generic it runs as scalar loops (the
// innermost one the window's 3 taps) behind a copy of its input padded
// with zeros. Here every plane is one iteration of an scf.forall over
// (n, c), and each output row is a few vectors along its width, all in
// registers while the taps are summed:
//
//   for each window row kh: the input row ih = oh * sh + kh * dh - pad_top
//     is loaded as whole vectors (lanes past its end read as zero; a row
//     above or below the input is all zeros: selected, not branched);
//   for each tap kw: every output vector's inputs, x[ih, ow * sw + kw * dw -
//     pad_left] for its lanes, are a static lane permutation of those row
//     vectors and zeros (one shuffle at stride 1, two at stride 2), times
//     the tap's weight broadcast, added with an FMA.
//
// So the padded copy is never written: the padding is the zeros the
// shuffles take lanes from. The accumulators start from the bias; an
// elementwise op after the convolution (Clip, Relu) is applied to them
// before they are stored. The same kernel sums in int32 lanes (multiply and
// add) for a quantized depthwise QLinearConv, whose lowering gives the
// generic int32 operands with the zero points already subtracted (so its
// padding is zeros too).
//
// Next to a convolution that kiln-conv-to-gemm computes channels-last
// (MobileNetV2's pointwise expansions and projections on small planes), an
// NCHW kernel would have its input transposed out of that layout and its
// result back into it. Such a depthwise convolution is computed
// channels-last instead: vectors along the channels, each output position
// the sum of its taps' input vectors times the taps' weight vectors, with
// transposes around it that cancel against the neighbours'.
//
//===----------------------------------------------------------------------===//

#include "../ConvLayout.h"
#include "../GemmDims.h"
#include "Epilogue.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-cpu-depthwise-conv"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUDEPTHWISECONV
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A matched depthwise convolution.
struct Depthwise {
  linalg::GenericOp op;
  Value input;   ///< [N, C, H, W], unpadded.
  Value weights; ///< [C, 1, KH, KW].
  int64_t n, c, h, w, oh, ow, kh, kw;
  int64_t sh, sw, dh, dw, padTop = 0, padLeft = 0;
  /// Where the accumulators start: a per-channel bias [C], a scalar (a
  /// fill), or else the init tensor itself, read.
  Value bias, scalar;
  /// A max pooling window instead (`weights` unused): the maximum op of
  /// its body (maximumf or maxnumf), and the input's padding value (null:
  /// no padding, -inf serves).
  std::optional<OperationName> maxName;
  Value padValue;
};

/// The coefficients of d_a and d_b in `e`, when `e` is exactly
/// d_a * ca + d_b * cb (ca, cb > 0) over `numDims` dims.
std::optional<std::pair<int64_t, int64_t>>
twoTermCoefficients(AffineExpr e, unsigned numDims, unsigned a, unsigned b) {
  MLIRContext *ctx = e.getContext();
  AffineMap map = AffineMap::get(numDims, 0, e);
  auto valueAt = [&](int64_t dim) -> std::optional<int64_t> {
    SmallVector<Attribute> point(numDims,
                                 IntegerAttr::get(IndexType::get(ctx), 0));
    if (dim >= 0)
      point[dim] = IntegerAttr::get(IndexType::get(ctx), 1);
    SmallVector<Attribute> folded;
    if (failed(map.constantFold(point, folded)) || folded.size() != 1)
      return std::nullopt;
    return cast<IntegerAttr>(folded[0]).getInt();
  };
  std::optional<int64_t> base = valueAt(-1), ca = valueAt(a), cb = valueAt(b);
  if (!base || !ca || !cb || *base != 0 || *ca <= 0 || *cb <= 0)
    return std::nullopt;
  AffineExpr expected =
      getAffineDimExpr(a, ctx) * *ca + getAffineDimExpr(b, ctx) * *cb;
  if (simplifyAffineExpr(e - expected, numDims, 0) !=
      getAffineConstantExpr(0, ctx))
    return std::nullopt;
  return std::make_pair(*ca, *cb);
}

/// Whether `body` computes out + in0 * in1 (in either order), in floats
/// or in integers.
bool isMultiplyAccumulate(Block &body) {
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *add = yield.getOperand(0).getDefiningOp();
  // Half inputs summed in f32 (--precision=fp16|bf16) are widened first:
  // two arith.extf more.
  int64_t widened = llvm::count_if(body.without_terminator(), [](Operation &o) {
    return isa<arith::ExtFOp>(o);
  });
  if (!isa_and_nonnull<arith::AddFOp, arith::AddIOp>(add) ||
      (widened != 0 && widened != 2) ||
      (int64_t)body.getOperations().size() != 3 + widened)
    return false;
  Value acc = body.getArgument(2);
  Value lhs = add->getOperand(0), rhs = add->getOperand(1);
  if (lhs != acc && rhs != acc)
    return false;
  Operation *mul = (lhs == acc ? rhs : lhs).getDefiningOp();
  if (!mul || !(isa<arith::AddFOp>(add) ? isa<arith::MulFOp>(mul)
                                        : isa<arith::MulIOp>(mul)))
    return false;
  Value x = body.getArgument(0), y = body.getArgument(1);
  auto unwidened = [](Value v) {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    return ext ? ext.getIn() : v;
  };
  Value p = unwidened(mul->getOperand(0)), q = unwidened(mul->getOperand(1));
  return (p == x && q == y) || (p == y && q == x);
}

/// The maximum op of `body` when it computes max(in0, out) (in either
/// order) and ignores its second input (a pooling window's shape).
std::optional<OperationName> windowMaximum(Block &body) {
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *max = yield.getOperand(0).getDefiningOp();
  if (!isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp>(max) ||
      body.getOperations().size() != 2)
    return std::nullopt;
  Value x = body.getArgument(0), acc = body.getArgument(2);
  if (!((max->getOperand(0) == x && max->getOperand(1) == acc) ||
        (max->getOperand(0) == acc && max->getOperand(1) == x)))
    return std::nullopt;
  return max->getName();
}

std::optional<Depthwise> match(linalg::GenericOp op, int64_t lanes) {
  if (op.getNumLoops() != 6 || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumResults() != 1 ||
      !op.hasPureTensorSemantics())
    return std::nullopt;
  using IT = utils::IteratorType;
  SmallVector<IT> iters = op.getIteratorTypesArray();
  if (!llvm::equal(iters,
                   ArrayRef<IT>{IT::parallel, IT::parallel, IT::parallel,
                                IT::parallel, IT::reduction, IT::reduction}))
    return std::nullopt;
  auto xt = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto wt = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto ot = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  if (!xt || !wt || !ot || !xt.hasStaticShape() || !wt.hasStaticShape() ||
      !ot.hasStaticShape() || xt.getRank() != 4 || ot.getRank() != 4 ||
      !(ot.getElementType().isF32() || ot.getElementType().isInteger(32)) ||
      !kiln::widensInto(xt.getElementType(), ot.getElementType()))
    return std::nullopt;
  // A convolution's weights [C, 1, KH, KW] (the input's type: f16/bf16
  // ones are widened into f32 sums), or a max pooling's window shape
  // [KH, KW] (its values unread).
  std::optional<OperationName> maxName;
  if (isMultiplyAccumulate(op.getRegion().front())) {
    if (wt.getRank() != 4 || wt.getElementType() != xt.getElementType())
      return std::nullopt;
  } else if ((maxName = windowMaximum(op.getRegion().front()))) {
    if (wt.getRank() != 2 || !ot.getElementType().isF32() ||
        xt.getElementType() != ot.getElementType())
      return std::nullopt;
  } else {
    return std::nullopt;
  }

  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap in = maps[0];
  if (in.getNumResults() != 4 || in.getResult(0) != d(0) ||
      in.getResult(1) != d(1))
    return std::nullopt;
  auto rows = twoTermCoefficients(in.getResult(2), 6, 2, 4);
  auto cols = twoTermCoefficients(in.getResult(3), 6, 3, 5);
  if (!rows || !cols)
    return std::nullopt;
  AffineMap wExpected =
      maxName
          ? AffineMap::get(6, 0, {d(4), d(5)}, ctx)
          : AffineMap::get(
                6, 0, {d(1), getAffineConstantExpr(0, ctx), d(4), d(5)}, ctx);
  if (maps[1] != wExpected ||
      maps[2] != AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx))
    return std::nullopt;

  Depthwise dw;
  dw.op = op;
  dw.weights = op.getDpsInputs()[1];
  std::tie(dw.sh, dw.dh) = *rows;
  std::tie(dw.sw, dw.dw) = *cols;
  dw.n = ot.getDimSize(0);
  dw.c = ot.getDimSize(1);
  dw.oh = ot.getDimSize(2);
  dw.ow = ot.getDimSize(3);
  dw.maxName = maxName;
  dw.kh = wt.getDimSize(wt.getRank() - 2);
  dw.kw = wt.getDimSize(wt.getRank() - 1);
  if (!maxName && (wt.getDimSize(0) != dw.c || wt.getDimSize(1) != 1))
    return std::nullopt;

  // The input, seen through a pad of its spatial dims: with zeros for a
  // convolution, with any constant for a maximum (-inf from MaxPool).
  dw.input = op.getDpsInputs()[0];
  if (std::optional<kiln::PlanePad> pad =
          kiln::planePad(dw.input, /*zeroOnly=*/!maxName)) {
    dw.padTop = pad->top;
    dw.padLeft = pad->left;
    if (maxName)
      dw.padValue =
          dw.input.getDefiningOp<tensor::PadOp>().getConstantPaddingValue();
    dw.input = pad->source;
  }
  auto st = cast<RankedTensorType>(dw.input.getType());
  dw.h = st.getDimSize(2);
  dw.w = st.getDimSize(3);
  if (st.getDimSize(0) != dw.n || st.getDimSize(1) != dw.c)
    return std::nullopt;

  // Larger windows or strides stay generic.
  if (dw.kh * dw.kw > 81 || dw.sw > 4)
    return std::nullopt;

  // Where the accumulators start.
  Value init = op.getDpsInits()[0];
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    dw.scalar = fill.getInputs()[0];
  } else if (auto g = init.getDefiningOp<linalg::GenericOp>()) {
    AffineMap chan = AffineMap::get(4, 0, {d(1)}, ctx);
    Block &body = g.getRegion().front();
    if (g.getNumDpsInputs() == 1 && g.getNumDpsInits() == 1 &&
        g->getNumResults() == 1 && g.getNumLoops() == 4 &&
        g.getIndexingMapsArray()[0] == chan &&
        g.getIndexingMapsArray()[1].isIdentity() &&
        body.getOperations().size() == 1 &&
        body.getTerminator()->getOperand(0) == body.getArgument(0) &&
        g.getDpsInputs()[0].getType() ==
            RankedTensorType::get({dw.c}, ot.getElementType()))
      dw.bias = g.getDpsInputs()[0];
  }
  return dw;
}

Value idx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Whether input index `i` lies in [0, extent), and `i` clamped into it
/// (the index to read at; its value is selected away when outside).
std::pair<Value, Value> insideAndClamped(OpBuilder &b, Location loc, Value i,
                                         int64_t extent) {
  Value zero = idx(b, loc, 0);
  Value inside = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                            idx(b, loc, extent)));
  Value clamped = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, i, zero), idx(b, loc, extent - 1));
  return {inside, clamped};
}

/// The vector whose lane l is element `elems[l]` of a row held as
/// `row` (vector i: elements [i * lanes, (i + 1) * lanes)), zero where
/// the element is outside them, anything where `elems[l]` is nullopt.
/// Built from lane permutations of two vectors at a time.
Value gatherLanes(OpBuilder &b, Location loc, ArrayRef<Value> row, Value zero,
                  ArrayRef<std::optional<int64_t>> elems) {
  int64_t lanes = elems.size();
  int64_t total = static_cast<int64_t>(row.size()) * lanes;
  // Each lane's source vector (an index into `sources`) and lane there.
  SmallVector<Value> sources;
  SmallVector<int64_t> src(lanes, -1), lane(lanes, 0);
  auto sourceIndex = [&](Value v) -> int64_t {
    auto it = llvm::find(sources, v);
    if (it != sources.end())
      return it - sources.begin();
    sources.push_back(v);
    return sources.size() - 1;
  };
  for (int64_t l = 0; l < lanes; ++l) {
    if (!elems[l])
      continue;
    int64_t e = *elems[l];
    if (e < 0 || e >= total) {
      src[l] = sourceIndex(zero);
      lane[l] = 0;
    } else {
      src[l] = sourceIndex(row[e / lanes]);
      lane[l] = e % lanes;
    }
  }
  if (sources.empty())
    return zero;
  // Don't-care lanes: from the first source, in place.
  for (int64_t l = 0; l < lanes; ++l)
    if (src[l] < 0) {
      src[l] = 0;
      lane[l] = l;
    }
  bool identity = sources.size() == 1;
  for (int64_t l = 0; identity && l < lanes; ++l)
    identity = lane[l] == l;
  if (identity)
    return sources[0];
  Type vt = zero.getType();
  // Fold the sources in one at a time: after step s, lanes from sources
  // 0..s sit at their final positions.
  Value cur = sources[0];
  SmallVector<int64_t> curLane(lane.begin(), lane.end());
  if (sources.size() == 1) {
    return vector::ShuffleOp::create(b, loc, vt, cur, cur, curLane);
  }
  for (int64_t s = 1; s < static_cast<int64_t>(sources.size()); ++s) {
    SmallVector<int64_t> mask(lanes);
    for (int64_t l = 0; l < lanes; ++l) {
      if (src[l] < s)
        mask[l] = curLane[l];
      else if (src[l] == s)
        mask[l] = lanes + lane[l];
      else
        mask[l] = l; // Set by a later step.
    }
    cur = vector::ShuffleOp::create(b, loc, vt, cur, sources[s], mask);
    for (int64_t l = 0; l < lanes; ++l)
      curLane[l] = l;
  }
  return cur;
}

/// The input row's vectors [v0, v1) that output vectors [j0, j1) of a
/// row read (empty where they read only padding).
std::pair<int64_t, int64_t> inputSpan(const Depthwise &dw, int64_t lanes,
                                      int64_t j0, int64_t j1) {
  int64_t first = j0 * lanes * dw.sw - dw.padLeft;
  int64_t last = (std::min(j1 * lanes, dw.ow) - 1) * dw.sw +
                 (dw.kw - 1) * dw.dw - dw.padLeft;
  first = std::max<int64_t>(first, 0);
  last = std::min(last, dw.w - 1);
  if (first > last)
    return {0, 0};
  return {first / lanes, last / lanes + 1};
}

/// A row's output vectors in chunks [j0, j1) of at most 8, each reading
/// at most 16 input vectors: the registers a chunk takes. Empty where one
/// output vector alone reads more.
SmallVector<std::pair<int64_t, int64_t>> rowChunks(const Depthwise &dw,
                                                   int64_t lanes) {
  int64_t outVectors = llvm::divideCeil(dw.ow, lanes);
  SmallVector<std::pair<int64_t, int64_t>> chunks;
  auto fits = [&](int64_t j0, int64_t j1) {
    auto [v0, v1] = inputSpan(dw, lanes, j0, j1);
    return j1 - j0 <= 8 && v1 - v0 <= 16;
  };
  for (int64_t j0 = 0; j0 < outVectors;) {
    if (!fits(j0, j0 + 1))
      return {};
    int64_t j1 = j0 + 1;
    while (j1 < outVectors && fits(j0, j1 + 1))
      ++j1;
    chunks.push_back({j0, j1});
    j0 = j1;
  }
  return chunks;
}

/// Stores the sums `accs` (`epilogue` applied, if any) into the row
/// `row` of `out` ([rows, width]) one vector after the other from vector
/// `first`, the last masked where it passes `width`.
Value storeSums(OpBuilder &b, Location loc, linalg::GenericOp epilogue,
                ArrayRef<Value> accs, Value out, Value row, int64_t width,
                int64_t first = 0) {
  int64_t lanes = cast<VectorType>(accs[0].getType()).getNumElements();
  for (auto [j, acc] : llvm::enumerate(accs)) {
    Value v = epilogue ? kiln::cpu::applyEpilogue(b, epilogue, acc) : acc;
    int64_t start = (first + static_cast<int64_t>(j)) * lanes;
    out = vector::TransferWriteOp::create(
              b, loc, v, out, ValueRange{row, idx(b, loc, start)},
              ArrayRef<bool>{start + lanes <= width})
              .getResult();
  }
  return out;
}

/// Rewrites `dw` (and its epilogue, if any) as vector rows; returns the
/// value that replaces the last of them.
Value rewrite(RewriterBase &rewriter, Depthwise dw, linalg::GenericOp epilogue,
              int64_t lanes) {
  linalg::GenericOp op = dw.op;
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  rewriter.setInsertionPoint(epilogue ? epilogue.getOperation()
                                      : op.getOperation());
  auto ot = cast<RankedTensorType>(op.getResult(0).getType());
  Type elt = ot.getElementType();
  auto vt = VectorType::get({lanes}, elt);
  Value init = op.getDpsInits()[0];
  Value empty = tensor::EmptyOp::create(b, loc, ot.getShape(), elt);

  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(dw.n), b.getIndexAttr(dw.c)},
      ValueRange{empty}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value n = forall.getInductionVar(0), c = forall.getInductionVar(1);
  Value shared = forall.getRegionIterArgs()[0];
  // What lies outside the input: zeros for a convolution, the padding
  // value (or -inf) for a maximum.
  Value zeroF =
      dw.padValue ? dw.padValue
      : dw.maxName
          ? arith::ConstantOp::create(
                b, loc,
                b.getFloatAttr(elt, -std::numeric_limits<double>::infinity()))
                .getResult()
          : arith::ConstantOp::create(b, loc, b.getZeroAttr(elt)).getResult();
  Attribute outside;
  Value zero = matchPattern(zeroF, m_Constant(&outside))
                   ? arith::ConstantOp::create(
                         b, loc, vt,
                         DenseElementsAttr::get(vt, cast<TypedAttr>(outside)))
                         .getResult()
                   : vector::BroadcastOp::create(b, loc, vt, zeroF).getResult();
  // The input's type: f16/bf16 values are widened to `elt` (f32) as they
  // are loaded; the padding read past a row's end is their zero.
  Type inElt = getElementTypeOrSelf(dw.input.getType());
  auto inVt = VectorType::get({lanes}, inElt);
  Value inZeroF =
      inElt == elt
          ? zeroF
          : arith::ConstantOp::create(b, loc, b.getZeroAttr(inElt)).getResult();
  auto widen = [&](OpBuilder &wb, Value v) -> Value {
    if (inElt == elt)
      return v;
    Type to = isa<VectorType>(v.getType()) ? Type(vt) : elt;
    return arith::ExtFOp::create(wb, loc, to, v);
  };
  Value idx0 = idx(b, loc, 0);
  // The taps' weights, broadcast, and where the sums start.
  SmallVector<Value> taps;
  for (int64_t i = 0; i < dw.kh && !dw.maxName; ++i)
    for (int64_t j = 0; j < dw.kw; ++j) {
      Value wv = tensor::ExtractOp::create(
          b, loc, dw.weights,
          ValueRange{c, idx0, idx(b, loc, i), idx(b, loc, j)});
      taps.push_back(vector::BroadcastOp::create(b, loc, vt, widen(b, wv)));
    }
  Value start;
  if (dw.bias)
    start = vector::BroadcastOp::create(
        b, loc, vt, tensor::ExtractOp::create(b, loc, dw.bias, c));
  else if (dw.scalar)
    start = vector::BroadcastOp::create(b, loc, vt, dw.scalar);
  auto planeType = RankedTensorType::get({dw.oh, dw.ow}, elt);
  SmallVector<OpFoldResult> offsets = {n, c, b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(dw.oh),
                                     b.getIndexAttr(dw.ow)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  Value plane = tensor::ExtractSliceOp::create(b, loc, planeType, shared,
                                               offsets, sizes, strides);

  auto rowLoop = scf::ForOp::create(
      b, loc, idx0, idx(b, loc, dw.oh), idx(b, loc, 1), ValueRange{plane},
      [&](OpBuilder &rb, Location, Value oh, ValueRange iter) {
        Value out = iter[0];
        // A chunk of the row's output vectors at a time, its accumulators
        // in registers while the taps are summed.
        for (auto [j0, j1] : rowChunks(dw, lanes)) {
          SmallVector<Value> accs;
          for (int64_t j = j0; j < j1; ++j) {
            if (start) {
              accs.push_back(start);
              continue;
            }
            accs.push_back(vector::TransferReadOp::create(
                rb, loc, vt, init,
                ValueRange{n, c, oh, idx(rb, loc, j * lanes)}, zeroF,
                ArrayRef<bool>{(j + 1) * lanes <= dw.ow}));
          }
          auto [v0, v1] = inputSpan(dw, lanes, j0, j1);
          AffineExpr d0 = getAffineDimExpr(0, rb.getContext());
          for (int64_t i = 0; i < dw.kh; ++i) {
            // Input row ih, zeros when it is in the padding.
            Value ih = affine::AffineApplyOp::create(
                rb, loc, d0 * dw.sh + (i * dw.dh - dw.padTop), oh);
            auto [inside, clamped] = insideAndClamped(rb, loc, ih, dw.h);
            // The row's vectors the chunk reads (the others stay null).
            SmallVector<Value> row(llvm::divideCeil(dw.w, lanes));
            for (int64_t v = v0; v < v1; ++v) {
              Value x = vector::TransferReadOp::create(
                  rb, loc, inVt, dw.input,
                  ValueRange{n, c, clamped, idx(rb, loc, v * lanes)}, inZeroF,
                  ArrayRef<bool>{(v + 1) * lanes <= dw.w});
              row[v] =
                  arith::SelectOp::create(rb, loc, inside, widen(rb, x), zero);
            }
            for (int64_t k = 0; k < dw.kw; ++k) {
              int64_t offset = k * dw.dw - dw.padLeft;
              for (int64_t j = j0; j < j1; ++j) {
                SmallVector<std::optional<int64_t>> elems;
                for (int64_t l = 0; l < lanes; ++l) {
                  int64_t o = j * lanes + l;
                  if (o < dw.ow)
                    elems.push_back(o * dw.sw + offset);
                  else
                    elems.push_back(std::nullopt);
                }
                Value x = gatherLanes(rb, loc, row, zero, elems);
                Value &acc = accs[j - j0];
                if (dw.maxName) {
                  OperationState state(loc, *dw.maxName, {acc, x}, {vt});
                  acc = rb.create(state)->getResult(0);
                  continue;
                }
                Value w = taps[i * dw.kw + k];
                acc =
                    isa<FloatType>(elt)
                        ? vector::FMAOp::create(rb, loc, w, x, acc).getResult()
                        : arith::AddIOp::create(
                              rb, loc, acc,
                              arith::MulIOp::create(rb, loc, w, x))
                              .getResult();
              }
            }
          }
          out = storeSums(rb, loc, epilogue, accs, out, oh, dw.ow, j0);
        }
        scf::YieldOp::create(rb, loc, out);
      });
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, rowLoop.getResult(0), shared,
                                        offsets, sizes, strides);
  return forall.getResult(0);
}

/// What an elementwise generic with one tensor input (an activation, a
/// cast) reads; null for any other op.
Value elementwiseSource(Operation *op) {
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 || !g.hasPureTensorSemantics() ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  return g.getDpsInputs()[0];
}

/// Whether the depthwise convolution `dw` (its result `result`: the
/// epilogue's where one is fused) reads from, or feeds, a convolution that
/// kiln-conv-to-gemm will compute channels-last, through elementwise ops
/// and a pad of the plane.
bool nextToChannelsLast(const Depthwise &dw, Value result, unsigned bits,
                        int64_t below) {
  auto channelsLast = [&](Operation *op) {
    auto conv = dyn_cast_or_null<linalg::Conv2DNchwFchwOp>(op);
    return conv && kiln::staticConv(conv) &&
           kiln::convToGemmChannelsLast(conv, bits, below,
                                        /*packPanels=*/true);
  };
  Value v = dw.input;
  for (int step = 0; step < 4 && v; ++step) {
    if (channelsLast(v.getDefiningOp()))
      return true;
    v = elementwiseSource(v.getDefiningOp());
  }
  v = result;
  for (int step = 0; step < 4; ++step) {
    if (!v.hasOneUse())
      return false;
    OpOperand &use = *v.getUses().begin();
    Operation *user = use.getOwner();
    if (isa<linalg::Conv2DNchwFchwOp>(user))
      return use.getOperandNumber() == 0 && channelsLast(user);
    if (!isa<tensor::PadOp>(user) && elementwiseSource(user) != v)
      return false;
    v = user->getResult(0);
  }
  return false;
}

/// Rewrites convolution `dw` (and its epilogue, if any) channels-last: its
/// input transposed to NHWC, an scf.forall over (n, oh, block of channels)
/// writing an NHWC result, transposed back to NCHW. Null where it does not
/// apply (a max pooling, channels that are not whole vectors, weights
/// that are not [C, 1, KH, KW]).
Value rewriteChannelsLast(RewriterBase &rewriter, Depthwise dw,
                          linalg::GenericOp epilogue, int64_t lanes) {
  linalg::GenericOp op = dw.op;
  auto ot = cast<RankedTensorType>(op.getResult(0).getType());
  Type elt = ot.getElementType();
  if (dw.maxName || !isa<FloatType>(elt) || dw.c % lanes != 0)
    return nullptr;
  // Channels a block: one 64-byte line where they divide into lines.
  int64_t vectors = std::max<int64_t>(1, 512 / (lanes * 32));
  if (dw.c % (lanes * vectors) != 0)
    vectors = 1;
  int64_t block = lanes * vectors;
  Location loc = op.getLoc();
  OpBuilder &b = rewriter;
  rewriter.setInsertionPoint(epilogue ? epilogue.getOperation()
                                      : op.getOperation());
  // The taps' weights as [KH, KW, 1, C]: channel vectors.
  Value weights =
      kiln::transposedConstant(rewriter, loc, dw.weights, {2, 3, 1, 0});
  if (!weights)
    weights = kiln::transposed(b, loc, dw.weights, {2, 3, 1, 0});
  Value input = kiln::transposed(b, loc, dw.input, {0, 2, 3, 1});
  Value init = op.getDpsInits()[0];
  Value initNhwc = dw.bias || dw.scalar
                       ? nullptr
                       : kiln::transposed(b, loc, init, {0, 2, 3, 1});
  Type inElt = getElementTypeOrSelf(input.getType());
  auto vt = VectorType::get({lanes}, elt);
  auto inVt = VectorType::get({lanes}, inElt);
  auto outType = RankedTensorType::get({dw.n, dw.oh, dw.ow, dw.c}, elt);
  Value empty = tensor::EmptyOp::create(b, loc, outType.getShape(), elt);

  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{b.getIndexAttr(dw.n), b.getIndexAttr(dw.oh),
                             b.getIndexAttr(dw.c / block)},
      ValueRange{empty}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value n = forall.getInductionVar(0), oh = forall.getInductionVar(1);
  Value c0 = affine::AffineApplyOp::create(
      b, loc, getAffineDimExpr(0, b.getContext()) * block,
      forall.getInductionVar(2));
  Value shared = forall.getRegionIterArgs()[0];
  Value idx0 = idx(b, loc, 0);
  Value zero = arith::ConstantOp::create(
      b, loc, vt, DenseElementsAttr::get(vt, b.getZeroAttr(elt)));
  Value inZero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(inElt)).getResult();
  auto widen = [&](OpBuilder &wb, Value v) -> Value {
    return inElt == elt ? v : arith::ExtFOp::create(wb, loc, vt, v);
  };
  // Each vector's first channel, once per block.
  SmallVector<Value> channels;
  for (int64_t v = 0; v < vectors; ++v)
    channels.push_back(affine::AffineApplyOp::create(
        b, loc, getAffineDimExpr(0, b.getContext()) + v * lanes, c0));
  // The taps' weight vectors and where the sums start, once per block.
  SmallVector<Value> taps; // [(i * kw + j) * vectors + v]
  for (int64_t i = 0; i < dw.kh; ++i)
    for (int64_t j = 0; j < dw.kw; ++j)
      for (int64_t v = 0; v < vectors; ++v)
        taps.push_back(widen(b, vector::TransferReadOp::create(
                                    b, loc, inVt, weights,
                                    ValueRange{idx(b, loc, i), idx(b, loc, j),
                                               idx0, channels[v]},
                                    inZero, ArrayRef<bool>{true})));
  SmallVector<Value> starts;
  for (int64_t v = 0; v < vectors && (dw.bias || dw.scalar); ++v)
    starts.push_back(
        dw.bias
            ? vector::TransferReadOp::create(
                  b, loc, vt, dw.bias, ValueRange{channels[v]},
                  arith::ConstantOp::create(b, loc, b.getZeroAttr(elt)),
                  ArrayRef<bool>{true})
                  .getResult()
            : vector::BroadcastOp::create(b, loc, vt, dw.scalar).getResult());
  // The window's input rows, clamped into the input, and whether each is
  // inside it.
  AffineExpr d0 = getAffineDimExpr(0, b.getContext());
  SmallVector<Value> rows, rowInside;
  for (int64_t i = 0; i < dw.kh; ++i) {
    Value ih = affine::AffineApplyOp::create(
        b, loc, d0 * dw.sh + (i * dw.dh - dw.padTop), oh);
    auto [inside, clamped] = insideAndClamped(b, loc, ih, dw.h);
    rowInside.push_back(inside);
    rows.push_back(clamped);
  }
  // Whether every row of the window is inside the input.
  Value interiorRows = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (Value inside : rowInside)
    interiorRows = arith::AndIOp::create(b, loc, interiorRows, inside);
  auto rowType = RankedTensorType::get({dw.ow, block}, elt);
  SmallVector<OpFoldResult> offsets = {n, oh, b.getIndexAttr(0), c0};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(dw.ow),
                                     b.getIndexAttr(block)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  Value outRow = tensor::ExtractSliceOp::create(b, loc, rowType, shared,
                                                offsets, sizes, strides);

  // One output position's sums, stored into `out`: rows checked (selected
  // to zero outside the input) with `checkRows`, columns with `checkCols`.
  auto position = [&](OpBuilder &pb, Value ow, Value out, bool checkRows,
                      bool checkCols) -> Value {
    SmallVector<Value> accs;
    for (int64_t v = 0; v < vectors; ++v)
      accs.push_back(
          starts.empty()
              ? vector::TransferReadOp::create(
                    pb, loc, vt, initNhwc, ValueRange{n, oh, ow, channels[v]},
                    arith::ConstantOp::create(pb, loc, pb.getZeroAttr(elt)),
                    ArrayRef<bool>{true})
                    .getResult()
              : starts[v]);
    for (int64_t j = 0; j < dw.kw; ++j) {
      Value iw = affine::AffineApplyOp::create(
          pb, loc, d0 * dw.sw + (j * dw.dw - dw.padLeft), ow);
      Value col = iw, colInside;
      if (checkCols)
        std::tie(colInside, col) = insideAndClamped(pb, loc, iw, dw.w);
      for (int64_t i = 0; i < dw.kh; ++i) {
        Value inside = checkRows ? rowInside[i] : nullptr;
        if (colInside)
          inside = inside ? arith::AndIOp::create(pb, loc, inside, colInside)
                                .getResult()
                          : colInside;
        for (int64_t v = 0; v < vectors; ++v) {
          Value x = widen(pb, vector::TransferReadOp::create(
                                  pb, loc, inVt, input,
                                  ValueRange{n, rows[i], col, channels[v]},
                                  inZero, ArrayRef<bool>{true}));
          if (inside)
            x = arith::SelectOp::create(pb, loc, inside, x, zero);
          accs[v] = vector::FMAOp::create(
              pb, loc, taps[(i * dw.kw + j) * vectors + v], x, accs[v]);
        }
      }
    }
    return storeSums(pb, loc, epilogue, accs, out, ow, block);
  };
  // A loop over output columns [lo, hi).
  auto columns = [&](OpBuilder &lb, Value out, int64_t lo, int64_t hi,
                     bool checkRows, bool checkCols) -> Value {
    if (lo >= hi)
      return out;
    return scf::ForOp::create(
               lb, loc, idx(lb, loc, lo), idx(lb, loc, hi), idx(lb, loc, 1),
               ValueRange{out},
               [&](OpBuilder &fb, Location, Value ow, ValueRange iter) {
                 scf::YieldOp::create(
                     fb, loc, position(fb, ow, iter[0], checkRows, checkCols));
               })
        .getResult(0);
  };
  // The columns whose whole window lies inside the input: ow * sw -
  // padLeft >= 0 and ow * sw + (kw - 1) * dw - padLeft < w.
  int64_t colLo = std::min<int64_t>(dw.ow, llvm::divideCeil(dw.padLeft, dw.sw));
  int64_t lastIn = dw.w - 1 - (dw.kw - 1) * dw.dw + dw.padLeft;
  int64_t colHi = lastIn < 0
                      ? colLo
                      : std::clamp<int64_t>(lastIn / dw.sw + 1, colLo, dw.ow);
  auto ifOp = scf::IfOp::create(
      b, loc, interiorRows,
      [&](OpBuilder &tb, Location) {
        Value out = columns(tb, outRow, 0, colLo, false, true);
        out = columns(tb, out, colLo, colHi, false, false);
        out = columns(tb, out, colHi, dw.ow, false, true);
        scf::YieldOp::create(tb, loc, out);
      },
      [&](OpBuilder &eb, Location) {
        scf::YieldOp::create(eb, loc,
                             columns(eb, outRow, 0, dw.ow, true, true));
      });
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, ifOp.getResult(0), shared,
                                        offsets, sizes, strides);
  b.setInsertionPointAfter(forall);
  return kiln::transposed(b, loc, forall.getResult(0), {0, 3, 1, 2});
}

struct DepthwiseConvPass
    : public kiln::impl::KilnCpuDepthwiseConvBase<DepthwiseConvPass> {
  using Base::Base;
  void runOnOperation() override {
    int64_t lanes = std::max<int64_t>(1, vectorBits / 32);
    SmallVector<linalg::GenericOp> found;
    getOperation().walk([&](linalg::GenericOp op) {
      if (match(op, lanes))
        found.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : found) {
      // Matched again: a convolution that reads another one's result reads
      // it from that one's rewrite.
      std::optional<Depthwise> matched = match(op, lanes);
      if (!matched)
        continue;
      Depthwise &dw = *matched;
      linalg::GenericOp epilogue = kiln::cpu::findEpilogue(dw.op);
      // Only directly: through a reshape the epilogue's type differs.
      if (epilogue &&
          epilogue.getDpsInputOperand(0)->get() != dw.op.getResult(0))
        epilogue = nullptr;
      // Channels-last next to channels-last convolutions. (Not for a row
      // too wide for the NCHW kernel's registers, which takes it in
      // chunks: channels-last between NCHW neighbours, MobileNetV2's 32
      // planes of 112x112 on AVX2 took 0.90 ms, two transposes of 1.6 MB
      // among them, against 0.32 ms as generic loops.)
      Value result;
      if (channelsLastBelow > 0 &&
          nextToChannelsLast(
              dw, epilogue ? epilogue.getResult(0) : dw.op.getResult(0),
              vectorBits, channelsLastBelow))
        result = rewriteChannelsLast(rewriter, dw, epilogue, lanes);
      if (!result && !rowChunks(dw, lanes).empty())
        result = rewrite(rewriter, dw, epilogue, lanes);
      if (!result)
        continue;
      if (epilogue) {
        rewriter.replaceOp(epilogue, result);
        rewriter.eraseOp(dw.op);
      } else {
        rewriter.replaceOp(dw.op, result);
      }
    }
  }
};

} // namespace
