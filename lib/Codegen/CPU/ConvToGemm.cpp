//===- ConvToGemm.cpp - 2-D convolutions as GEMMs over im2col copies ------===//
//
// linalg.conv_2d_nchw_fchw on static float tensors becomes
//
//   col[n, c, kh, kw, oh, ow] = x[n, c, oh*sh + kh*dh, ow*sw + kw*dw]
//   out[n, f, p]             += w[f, k] * col[n, k, p]
//
// with k = (c, kh, kw) and p = (oh, ow) collapsed. The copy's innermost
// loop walks `ow`, contiguous in both tensors at stride 1; the GEMM is a
// contraction whose output is contiguous along p, which is what the CPU
// tiling and vectorization want. A 1x1 convolution at stride 1 needs no
// copy: x itself, collapsed, is the right-hand side.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "../ConvLayout.h"
#include "../GemmDims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>

#define DEBUG_TYPE "kiln-conv-to-gemm"

namespace kiln {
#define GEN_PASS_DEF_KILNCONVTOGEMM
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

std::optional<kiln::PlanePad> kiln::zeroPlanePad(Value x) {
  return kiln::planePad(x, /*zeroOnly=*/true);
}

/// Whether `x` is computed, through elementwise generics and reshapes
/// (kiln-collapse-elementwise's), from a transpose
/// (a channels-last result brought back to NCHW), which
/// kiln-sink-transposes cancels against a consumer's transpose to
/// channels-last when that consumer reads `x` whole.
static bool fedByTransposes(Value x, int depth = 8) {
  Operation *def = x.getDefiningOp();
  if (!def || depth == 0)
    return false;
  if (isa<linalg::TransposeOp>(def))
    return true;
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
    return fedByTransposes(def->getOperand(0), depth - 1);
  auto g = dyn_cast<linalg::GenericOp>(def);
  if (!g || g.getNumLoops() != g.getNumParallelLoops())
    return false;
  for (OpOperand *in : g.getDpsInputOperands()) {
    AffineMap map = g.getMatchingIndexingMap(in);
    if ((map.isPermutation() && !map.isIdentity()) ||
        fedByTransposes(in->get(), depth - 1))
      return true;
  }
  return false;
}

/// Whether register tiles `nr` wide split the plane `p` into whole
/// packed panels.
static bool tilesDividePlane(int64_t p, int64_t nr) {
  return nr < p && p % nr == 0;
}

bool kiln::convToGemmChannelsLast(linalg::Conv2DNchwFchwOp conv,
                                  unsigned vectorBits,
                                  int64_t channelsLastBelow, bool packPanels) {
  auto wt = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto ot = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
  if (!wt || !ot || !wt.hasStaticShape() || !ot.hasStaticShape() ||
      !isa<FloatType>(ot.getElementType()) || channelsLastBelow <= 0)
    return false;
  int64_t lanes = std::max<int64_t>(
      1, vectorBits / cast<FloatType>(ot.getElementType()).getWidth());
  int64_t f = wt.getDimSize(0), p = ot.getDimSize(2) * ot.getDimSize(3);
  int64_t nr = kiln::cpuRegisterTileWidth(p, lanes);
  // A plane whose tile width is one vector (28x28 = 49 x 16 with AVX-512
  // f32) would run 8 x 16 tiles, 8 accumulators, a broadcast per FMA;
  // channels-last its tiles are two vectors of output channels wide.
  bool packable = packPanels && tilesDividePlane(p, nr) && nr >= 2 * lanes;
  // Output channels in whole vectors and two-vector register tiles: a
  // multiple of two vectors, or eight vectors or more with the last tile
  // half used (SqueezeNet's 1000-class 1x1 classifier with 8 lanes; the
  // weight is packed padded). Weight-left, its 13x13 plane would run 4 x 16
  // tiles and a peeled 9-wide remainder at 44 GFLOP/s. Channels that no
  // vector divides stay NCHW.
  return f % lanes == 0 && kiln::cpuRegisterTileWidth(f, lanes) == 2 * lanes &&
         (p < channelsLastBelow || (packPanels && !packable && p > 2 * lanes));
}

namespace {

/// The packed im2col panel `[n, p / nr, c, kh, kw, nr]` of input `x` (f32,
/// bf16 or f16; an NCHW tensor, or a zero `tensor.pad` of its plane, whose
/// padding is then read as the lanes that fall outside the plane) as vector
/// code: an scf.forall over (batch, block of nr output positions), each block's
/// panel written whole by one thread; for each input channel and window
/// tap, each vector of `lanes` positions is one `vector.gather` from the
/// flat input (indices from the positions' rows and columns, computed once
/// per block), masked where the window leaves the plane. Null where it
/// does not apply (another element type, nr not whole vectors, indices
/// past int32).
Value packWindowsGathered(RewriterBase &b, Location loc, Value x, int64_t oh,
                          int64_t ow, int64_t kh, int64_t kw,
                          ArrayRef<int64_t> s, ArrayRef<int64_t> d, int64_t nr,
                          int64_t lanes) {
  int64_t padTop = 0, padLeft = 0;
  Value src = x;
  if (std::optional<kiln::PlanePad> pad = kiln::zeroPlanePad(x)) {
    src = pad->source;
    padTop = pad->top;
    padLeft = pad->left;
  }
  auto st = cast<RankedTensorType>(src.getType());
  // f32, or the half types a bf16/f16 model's convolutions read (each
  // vector then holds `lanes` half values, widened where they are used).
  Type elt = st.getElementType();
  if (!(elt.isF32() || elt.isBF16() || elt.isF16()) || lanes < 2 ||
      nr % lanes != 0 || st.getNumElements() >= (int64_t(1) << 31))
    return nullptr;
  int64_t n = st.getDimSize(0), c = st.getDimSize(1), h = st.getDimSize(2),
          w = st.getDimSize(3);
  int64_t blocks = oh * ow / nr, nv = nr / lanes;
  bool contiguous = kh == 1 && kw == 1 && s[0] == 1 && s[1] == 1 &&
                    padTop == 0 && padLeft == 0 && oh == h && ow == w;
  Type i32 = b.getI32Type();
  auto iv = VectorType::get({lanes}, i32);
  auto fv = VectorType::get({lanes}, elt);
  auto splat = [&](OpBuilder &nb, int64_t v) -> Value {
    return arith::ConstantOp::create(
        nb, loc, iv, DenseElementsAttr::get(iv, nb.getI32IntegerAttr(v)));
  };
  auto toI32 = [&](OpBuilder &nb, Value index) -> Value {
    return arith::IndexCastOp::create(nb, loc, i32, index);
  };
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({n * c * h * w}, elt), src,
      SmallVector<ReassociationIndices>{{0, 1, 2, 3}});
  auto colType = RankedTensorType::get({n, blocks, c, kh, kw, nr}, elt);
  Value empty = tensor::EmptyOp::create(b, loc, colType.getShape(), elt);
  auto forall = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(n), b.getIndexAttr(blocks)},
      ValueRange{empty}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value ni = forall.getInductionVar(0), pb = forall.getInductionVar(1);
  Value shared = forall.getRegionIterArgs()[0];
  // Each vector's output rows and columns, as the input's row and column
  // of the window's first tap (not needed for a contiguous window).
  SmallVector<int32_t> iota;
  for (int64_t l = 0; l < lanes; ++l)
    iota.push_back(l);
  Value lane = arith::ConstantOp::create(
      b, loc, iv, DenseElementsAttr::get(iv, ArrayRef<int32_t>(iota)));
  Value p0 = arith::MulIOp::create(
      b, loc, toI32(b, pb), arith::ConstantIntOp::create(b, loc, i32, nr));
  SmallVector<Value> rows, cols;
  for (int64_t v = 0; v < nv && !contiguous; ++v) {
    Value p = arith::AddIOp::create(
        b, loc,
        vector::BroadcastOp::create(
            b, loc, iv,
            arith::AddIOp::create(
                b, loc, p0,
                arith::ConstantIntOp::create(b, loc, i32, v * lanes))),
        lane);
    Value r = arith::DivUIOp::create(b, loc, p, splat(b, ow));
    Value col = arith::SubIOp::create(
        b, loc, p, arith::MulIOp::create(b, loc, r, splat(b, ow)));
    rows.push_back(arith::SubIOp::create(
        b, loc, arith::MulIOp::create(b, loc, r, splat(b, s[0])),
        splat(b, padTop)));
    cols.push_back(arith::SubIOp::create(
        b, loc, arith::MulIOp::create(b, loc, col, splat(b, s[1])),
        splat(b, padLeft)));
  }
  // At stride 1 along the row, a vector whose positions lie in one output
  // row reads, for each tap, a run of `lanes` consecutive input elements:
  // where that run is inside the plane, one plain vector load replaces the
  // gather. At stride 2 the run is every other element of 2 x `lanes`:
  // two loads and one shuffle of their even lanes.
  int64_t sw = s[1];
  bool runs =
      (sw == 1 || sw == 2) && lanes <= ow && sw * lanes <= w && !contiguous;
  auto cst = [&](int64_t x) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, x);
  };
  // Per tap (i, j) and vector v, at [(i * kw + j) * nv + v], computed once
  // per block outside the channel loop: whether the run lies inside the
  // plane, and its first element's offset in the channel's plane.
  SmallVector<Value> inside(runs ? kh * kw * nv : 0), runOffset(inside.size());
  for (int64_t v = 0; v < nv && runs; ++v) {
    // The vector's first position: whether its lanes share an output row,
    // and the input row and column of its window's first tap.
    Value p = arith::AddIOp::create(b, loc, p0, cst(v * lanes));
    Value r = arith::DivUIOp::create(b, loc, p, cst(ow));
    Value col = arith::SubIOp::create(
        b, loc, p, arith::MulIOp::create(b, loc, r, cst(ow)));
    Value oneRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, col,
                                         cst(ow - lanes));
    Value row0 = arith::SubIOp::create(
        b, loc, arith::MulIOp::create(b, loc, r, cst(s[0])), cst(padTop));
    Value col0 = arith::SubIOp::create(
        b, loc, arith::MulIOp::create(b, loc, col, cst(sw)), cst(padLeft));
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        Value ri = arith::AddIOp::create(b, loc, row0, cst(i * d[0]));
        Value qj = arith::AddIOp::create(b, loc, col0, cst(j * d[1]));
        // 0 <= ri < h and 0 <= qj <= w - sw * lanes (the loads stay in
        // the row), as unsigned compares.
        Value ok = arith::AndIOp::create(
            b, loc, oneRow,
            arith::AndIOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ri,
                                      cst(h)),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, qj,
                                      cst(w - sw * lanes))));
        int64_t at = (i * kw + j) * nv + v;
        inside[at] = ok;
        runOffset[at] = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, ri, cst(w)), qj);
      }
  }
  auto panelType = RankedTensorType::get({c, kh, kw, nr}, elt);
  SmallVector<OpFoldResult> offsets = {ni,
                                       pb,
                                       b.getIndexAttr(0),
                                       b.getIndexAttr(0),
                                       b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),  b.getIndexAttr(1),
                                     b.getIndexAttr(c),  b.getIndexAttr(kh),
                                     b.getIndexAttr(kw), b.getIndexAttr(nr)};
  SmallVector<OpFoldResult> ones(6, b.getIndexAttr(1));
  Value panel = tensor::ExtractSliceOp::create(b, loc, panelType, shared,
                                               offsets, sizes, ones);
  Value zero = arith::ConstantOp::create(
      b, loc, fv, DenseElementsAttr::get(fv, b.getFloatAttr(elt, 0)));
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  auto channels = scf::ForOp::create(
      b, loc, c0, arith::ConstantIndexOp::create(b, loc, c),
      arith::ConstantIndexOp::create(b, loc, 1), ValueRange{panel},
      [&](OpBuilder &cb, Location, Value ci, ValueRange iter) {
        // The channel's plane in the flat input.
        Value plane = arith::MulIOp::create(
            cb, loc,
            arith::AddIOp::create(
                cb, loc,
                arith::MulIOp::create(
                    cb, loc, toI32(cb, ni),
                    arith::ConstantIntOp::create(cb, loc, i32, c)),
                toI32(cb, ci)),
            arith::ConstantIntOp::create(cb, loc, i32, h * w));
        Value t = iter[0];
        if (contiguous) {
          // A 1x1 stride-1 window of an unpadded plane: the block's
          // positions are nr consecutive elements of the channel's plane.
          Value start = arith::IndexCastOp::create(
              cb, loc, cb.getIndexType(),
              arith::AddIOp::create(cb, loc, plane, p0));
          for (int64_t v = 0; v < nv; ++v) {
            Value at = arith::AddIOp::create(
                cb, loc, start,
                arith::ConstantIndexOp::create(cb, loc, v * lanes));
            Value x = vector::TransferReadOp::create(
                cb, loc, fv, flat, ValueRange{at},
                arith::ConstantOp::create(cb, loc, cb.getFloatAttr(elt, 0)),
                ArrayRef<bool>{true});
            t = vector::TransferWriteOp::create(
                    cb, loc, x, t,
                    ValueRange{
                        ci, c0, c0,
                        arith::ConstantIndexOp::create(cb, loc, v * lanes)},
                    ArrayRef<bool>{true})
                    .getResult();
          }
          scf::YieldOp::create(cb, loc, t);
          return;
        }
        Value planeV = vector::BroadcastOp::create(cb, loc, iv, plane);
        // The channel's kh x kw x nr panel is gathered into one vector
        // value and written once: a chain of kh * kw * nv writes into the
        // tensor (98 for a 7x7 window of 16 positions) made one-shot
        // bufferization's in-place analysis cubic in its length (5 s for a
        // ResNet stem). Written whole, the fully unrolled transfer lowering
        // gives back one store per vector.
        auto accType = VectorType::get({kh, kw, nv, lanes}, elt);
        Value acc = arith::ConstantOp::create(
            cb, loc, accType,
            DenseElementsAttr::get(accType, cb.getFloatAttr(elt, 0)));
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j)
            for (int64_t v = 0; v < nv; ++v) {
              Value r =
                  arith::AddIOp::create(cb, loc, rows[v], splat(cb, i * d[0]));
              Value q =
                  arith::AddIOp::create(cb, loc, cols[v], splat(cb, j * d[1]));
              auto inRange = [&](Value x, int64_t size) -> Value {
                // 0 <= x < size, as one unsigned compare.
                return arith::CmpIOp::create(cb, loc, arith::CmpIPredicate::ult,
                                             x, splat(cb, size));
              };
              Value mask =
                  arith::AndIOp::create(cb, loc, inRange(r, h), inRange(q, w));
              auto gather = [&](OpBuilder &gb, Location gl) -> Value {
                Value index = arith::AddIOp::create(
                    gb, gl, planeV,
                    arith::AddIOp::create(
                        gb, gl, arith::MulIOp::create(gb, gl, r, splat(gb, w)),
                        q));
                return vector::GatherOp::create(
                    gb, gl, fv, flat, ValueRange{c0}, index, mask, zero);
              };
              Value g;
              if (inside.empty()) {
                g = gather(cb, loc);
              } else {
                int64_t at = (i * kw + j) * nv + v;
                g = scf::IfOp::create(
                        cb, loc, inside[at],
                        [&](OpBuilder &tb, Location tl) {
                          Value start = arith::IndexCastOp::create(
                              tb, tl, tb.getIndexType(),
                              arith::AddIOp::create(tb, tl, plane,
                                                    runOffset[at]));
                          Value pad = arith::ConstantOp::create(
                              tb, tl, tb.getFloatAttr(elt, 0));
                          SmallVector<Value> parts;
                          for (int64_t k = 0; k < sw; ++k)
                            parts.push_back(vector::TransferReadOp::create(
                                tb, tl, fv, flat,
                                ValueRange{arith::AddIOp::create(
                                    tb, tl, start,
                                    arith::ConstantIndexOp::create(tb, tl,
                                                                   k * lanes))},
                                pad, ArrayRef<bool>{true}));
                          Value run = parts[0];
                          if (sw == 2) {
                            SmallVector<int64_t> even;
                            for (int64_t l = 0; l < lanes; ++l)
                              even.push_back(2 * l);
                            run = vector::ShuffleOp::create(tb, tl, parts[0],
                                                            parts[1], even);
                          }
                          scf::YieldOp::create(tb, tl, run);
                        },
                        [&](OpBuilder &eb, Location el) {
                          scf::YieldOp::create(eb, el, gather(eb, el));
                        })
                        .getResult(0);
              }
              acc = vector::InsertOp::create(cb, loc, g, acc,
                                             ArrayRef<int64_t>{i, j, v});
            }
        SmallVector<ReassociationIndices> split = {{0}, {1}, {2}, {3, 4}};
        Value lanesView = tensor::ExpandShapeOp::create(
            cb, loc, RankedTensorType::get({c, kh, kw, nv, lanes}, elt), t,
            split);
        Value written =
            vector::TransferWriteOp::create(cb, loc, acc, lanesView,
                                            ValueRange{ci, c0, c0, c0, c0},
                                            SmallVector<bool>(4, true))
                .getResult();
        scf::YieldOp::create(cb, loc,
                             tensor::CollapseShapeOp::create(
                                 cb, loc, t.getType(), written, split)
                                 .getResult());
      });
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, channels.getResult(0), shared,
                                        offsets, sizes, ones);
  return forall.getResult(0);
}

/// Whether convolution `sc` is a float GEMM: its input and weights of one
/// float type, summed in that type or (f16/bf16) in f32.
bool floatGemmTypes(const kiln::StaticConv &sc) {
  Type elt = sc.xt.getElementType(), accElt = sc.ot.getElementType();
  return isa<FloatType>(accElt) && sc.wt.getElementType() == elt &&
         kiln::widensInto(elt, accElt);
}

/// A GEMM's body: the accumulator plus the product of the two inputs,
/// each widened to `accElt`.
void multiplyAddBody(OpBuilder &nb, Location nl, ValueRange a, Type accElt) {
  auto widen = [&](Value v) -> Value {
    return v.getType() == accElt ? v : arith::ExtFOp::create(nb, nl, accElt, v);
  };
  Value prod = arith::MulFOp::create(nb, nl, widen(a[0]), widen(a[1]));
  linalg::YieldOp::create(
      nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], prod)});
}

/// Rewrites one convolution; fails (leaving it alone) when it is not a
/// static float convolution. Planes under `channelsLastBelow` elements
/// with output channels a multiple of two vectors of `vectorBits` become
/// the GEMM vectorized along the channels; with `packPanels`, so do wider
/// planes that no register tile width divides, and a plane one divides
/// reads its im2col panel packed in tiles of that width.
LogicalResult convToGemm(RewriterBase &b, linalg::Conv2DNchwFchwOp conv,
                         unsigned vectorBits, int64_t channelsLastBelow,
                         bool packPanels) {
  std::optional<kiln::StaticConv> sc = kiln::staticConv(conv);
  if (!sc)
    return failure();
  Value x = sc->x, w = sc->w, init = sc->init;
  RankedTensorType xt = sc->xt, wt = sc->wt, ot = sc->ot;
  // elt: the input's and the weights' type, accElt the output's (f32 for
  // f16/bf16 inputs, whose products are summed in f32).
  Type elt = xt.getElementType(), accElt = ot.getElementType();
  if (!floatGemmTypes(*sc))
    return failure();
  SmallVector<int64_t> s(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> d(conv.getDilations().getValues<int64_t>());
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), f = wt.getDimSize(0);
  int64_t kh = wt.getDimSize(2), kw = wt.getDimSize(3);
  int64_t oh = ot.getDimSize(2), ow = ot.getDimSize(3);
  int64_t k = c * kh * kw, p = oh * ow;

  Location loc = conv.getLoc();
  MLIRContext *ctx = b.getContext();
  b.setInsertionPoint(conv);
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };

  bool pointwise = kh == 1 && kw == 1 && s[0] == 1 && s[1] == 1 &&
                   xt.getDimSize(2) == oh && xt.getDimSize(3) == ow;
  auto weights = [&] { // [f, k]
    return tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({f, k}, elt), w,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  };
  using IT = utils::IteratorType;
  // The input's windows copied into a tensor of `shape`, element i of the
  // copy's loops reading `from` (default x) at `in` (n, c, h, w for x) and
  // writing the copy at `out` (default: the loops in the copy's dim order).
  auto copyWindows = [&](ArrayRef<int64_t> shape, ArrayRef<AffineExpr> in,
                         ArrayRef<AffineExpr> out = {},
                         Value from = nullptr) -> Value {
    auto type = RankedTensorType::get(shape, elt);
    Value empty = tensor::EmptyOp::create(b, loc, shape, elt);
    unsigned rank = shape.size();
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{from ? from : x},
               ValueRange{empty},
               {AffineMap::get(rank, 0, in, ctx),
                out.empty() ? AffineMap::getMultiDimIdentityMap(rank, ctx)
                            : AffineMap::get(rank, 0, out, ctx)},
               SmallVector<IT>(rank, IT::parallel),
               [](OpBuilder &nb, Location nl, ValueRange a) {
                 linalg::YieldOp::create(nb, nl, a[0]);
               })
        .getResult(0);
  };
  auto multiplyAdd = [accElt](OpBuilder &nb, Location nl, ValueRange a) {
    multiplyAddBody(nb, nl, a, accElt);
  };

  int64_t lanes =
      std::max<int64_t>(1, vectorBits / cast<FloatType>(accElt).getWidth());
  // nr: the register tile's width along the plane, were it vectorized so.
  int64_t nr = kiln::cpuRegisterTileWidth(p, lanes);
  bool packable = packPanels && tilesDividePlane(p, nr);
  if (kiln::convToGemmChannelsLast(conv, vectorBits, channelsLastBelow,
                                   packPanels)) {
    // out[n, p, f] += col[n, p, k] * w[f, k], back to NCHW at the end.
    // A strided 1x1 convolution (ResNet's downsamples) of an NCHW input
    // that no transpose computes copies the positions it reads straight
    // from NCHW (below, kh = kw = 1), a quarter of the input at stride 2,
    // instead of transposing all of it to channels-last first (layer2.0's
    // 56x56x256 input on ResNet-50). One that a transpose feeds keeps the
    // whole-input transpose, which kiln-sink-transposes cancels.
    bool stridedPointwise = kh == 1 && kw == 1 && !pointwise &&
                            !kiln::zeroPlanePad(x) && !fedByTransposes(x);
    Value wTaps = pointwise || stridedPointwise
                      ? nullptr
                      : kiln::tapsMajorWeights(b, loc, w);
    Value lhs;  // [f, k]
    Value cols; // [n, p, k]
    auto colsType = RankedTensorType::get({n, p, k}, elt);
    if (pointwise) {
      lhs = weights();
      Value xT = kiln::transposed(b, loc, x, {0, 2, 3, 1});
      cols = tensor::CollapseShapeOp::create(
          b, loc, colsType, xT,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
    } else if (wTaps) {
      // The windows of the input transposed to [n, h, w, c] (a zero pad of
      // its plane applied after the transpose), k = (kh, kw, c): each
      // window tap copies a run of c elements, contiguous in both tensors
      // (from NCHW, the copy's innermost loop is kw, 3 elements long), and
      // the transpose cancels against the one that kiln-sink-transposes
      // moves down from a channels-last convolution before it. The
      // constant weights were reordered to [f, kh, kw, c] to match.
      Value srcT = kiln::nhwcInput(b, loc, x);
      // Loops (n, oh, ow, kh, kw, c).
      Value col = copyWindows({n, oh, ow, kh, kw, c},
                              {dim(0), dim(1) * s[0] + dim(3) * d[0],
                               dim(2) * s[1] + dim(4) * d[1], dim(5)},
                              {}, srcT);
      cols = tensor::CollapseShapeOp::create(
          b, loc, colsType, col,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
      lhs = tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get({f, k}, elt), wTaps,
          SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    } else {
      lhs = weights();
      // Loops (n, oh, ow, c, kh, kw).
      Value col = copyWindows({n, oh, ow, c, kh, kw},
                              {dim(0), dim(3), dim(1) * s[0] + dim(4) * d[0],
                               dim(2) * s[1] + dim(5) * d[1]});
      cols = tensor::CollapseShapeOp::create(
          b, loc, colsType, col,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
    }
    SmallVector<ReassociationIndices> assoc = {{0}, {1, 2}, {3}};
    auto accType = RankedTensorType::get({n, p, f}, accElt);
    Value acc = tensor::CollapseShapeOp::create(
        b, loc, accType, kiln::channelsLastInit(b, loc, init), assoc);
    // Loops (n, p, f, k).
    Value gemm =
        linalg::GenericOp::create(
            b, loc, TypeRange{accType}, ValueRange{cols, lhs}, ValueRange{acc},
            {AffineMap::get(4, 0, {dim(0), dim(1), dim(3)}, ctx),
             AffineMap::get(4, 0, {dim(2), dim(3)}, ctx),
             AffineMap::get(4, 0, {dim(0), dim(1), dim(2)}, ctx)},
            {IT::parallel, IT::parallel, IT::parallel, IT::reduction},
            multiplyAdd)
            .getResult(0);
    Value nhwc = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({n, oh, ow, f}, accElt), gemm, assoc);
    b.replaceOp(conv, kiln::transposed(b, loc, nhwc, {0, 3, 1, 2}));
    // The NCHW init, when it was rebuilt and nothing else reads it.
    if (Operation *old = init.getDefiningOp();
        old && old->use_empty() && isMemoryEffectFree(old))
      b.eraseOp(old);
    return success();
  }

  // The im2col panel packed as it is written: [n, p / nr, k, nr], nr the
  // register tile's width along p, so that each K x nr panel that a
  // register tile reads while k advances is contiguous (the layout
  // kiln-pack-weights gives constant weights) instead of one row of the
  // panel per step of k. A 1x1 convolution's input is copied so too.
  if (packable) {
    int64_t blocks = p / nr;
    // Loops (n, c, kh, kw, pb, pi); the output position is pb * nr + pi.
    // The batch and channel loops come first: they index the input
    // directly, so that splitting them among threads gives exact slices
    // (a split of pb would slice the input through a floordiv and a mod).
    AffineExpr pos = dim(4) * nr + dim(5);
    Value col = packWindowsGathered(b, loc, x, oh, ow, kh, kw, s, d, nr, lanes);
    if (!col)
      col =
          copyWindows({n, blocks, c, kh, kw, nr},
                      {dim(0), dim(1), pos.floorDiv(ow) * s[0] + dim(2) * d[0],
                       (pos % ow) * s[1] + dim(3) * d[1]},
                      {dim(0), dim(4), dim(1), dim(2), dim(3), dim(5)});
    Value rhs = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({n, blocks, k, nr}, elt), col,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3, 4}, {5}});
    SmallVector<ReassociationIndices> planeAssoc = {{0}, {1}, {2, 3}};
    auto flatType = RankedTensorType::get({n, f, p}, accElt);
    auto accType = RankedTensorType::get({n, f, blocks, nr}, accElt);
    Value acc = tensor::ExpandShapeOp::create(
        b, loc, accType,
        tensor::CollapseShapeOp::create(b, loc, flatType, init, planeAssoc),
        planeAssoc);
    // Loops (n, f, pb, pi, k).
    Value gemm =
        linalg::GenericOp::create(
            b, loc, TypeRange{accType}, ValueRange{weights(), rhs},
            ValueRange{acc},
            {AffineMap::get(5, 0, {dim(1), dim(4)}, ctx),
             AffineMap::get(5, 0, {dim(0), dim(2), dim(4), dim(3)}, ctx),
             AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)},
            {IT::parallel, IT::parallel, IT::parallel, IT::parallel,
             IT::reduction},
            multiplyAdd)
            .getResult(0);
    Value flat =
        tensor::CollapseShapeOp::create(b, loc, flatType, gemm, planeAssoc);
    b.replaceOpWithNewOp<tensor::ExpandShapeOp>(conv, ot, flat, planeAssoc);
    return success();
  }

  Value rhs; // [n, k, p]
  auto rhsType = RankedTensorType::get({n, k, p}, elt);
  if (pointwise) {
    rhs = tensor::CollapseShapeOp::create(
        b, loc, rhsType, x,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  } else {
    // Loops (n, c, kh, kw, oh, ow).
    Value col = copyWindows({n, c, kh, kw, oh, ow},
                            {dim(0), dim(1), dim(4) * s[0] + dim(2) * d[0],
                             dim(5) * s[1] + dim(3) * d[1]});
    rhs = tensor::CollapseShapeOp::create(
        b, loc, rhsType, col,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  }
  Value lhs = weights();
  SmallVector<ReassociationIndices> outAssoc = {{0}, {1}, {2, 3}};
  auto accType = RankedTensorType::get({n, f, p}, accElt);
  Value acc = tensor::CollapseShapeOp::create(b, loc, accType, init, outAssoc);
  // Loops (n, f, p, k).
  Value gemm =
      linalg::GenericOp::create(
          b, loc, TypeRange{accType}, ValueRange{lhs, rhs}, ValueRange{acc},
          {AffineMap::get(4, 0, {dim(1), dim(3)}, ctx),
           AffineMap::get(4, 0, {dim(0), dim(3), dim(2)}, ctx),
           AffineMap::get(4, 0, {dim(0), dim(1), dim(2)}, ctx)},
          {IT::parallel, IT::parallel, IT::parallel, IT::reduction},
          multiplyAdd)
          .getResult(0);
  b.replaceOpWithNewOp<tensor::ExpandShapeOp>(conv, ot, gemm, outAssoc);
  return success();
}

/// Rewrites a grouped convolution (more groups than the lowering splits
/// into one convolution each: ResNeXt's 32, RegNet's 8-channel groups) as
/// one batched GEMM over the groups:
///
///   col[n, g, c, kh, kw, oh, ow] = x[n, g, c, oh*sh + kh*dh, ow*sw + kw*dw]
///   out[n, g, f, p]             += w[g, f, k] * col[n, g, k, p]
///
/// the groups a batch dim of the contraction, which kiln-cpu-tile-and-
/// vectorize tiles like any other (blocks of groups among the threads,
/// register tiles within a group). Fails on non-float or dynamic shapes.
LogicalResult groupedConvToGemm(RewriterBase &b,
                                linalg::Conv2DNgchwGfchwOp conv) {
  std::optional<kiln::StaticConv> sc = kiln::staticConv(conv);
  if (!sc || !floatGemmTypes(*sc))
    return failure();
  Value x = sc->x, w = sc->w, init = sc->init;
  RankedTensorType xt = sc->xt, wt = sc->wt, ot = sc->ot;
  Type elt = xt.getElementType(), accElt = ot.getElementType();
  SmallVector<int64_t> s(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> d(conv.getDilations().getValues<int64_t>());
  // x [n, g, c, h, w], w [g, f, c, kh, kw], out [n, g, f, oh, ow].
  ArrayRef<int64_t> xs = xt.getShape(), ws = wt.getShape(), os = ot.getShape();
  int64_t n = xs[0], g = xs[1], c = xs[2], f = ws[1], kh = ws[3], kw = ws[4];
  int64_t oh = os[3], ow = os[4], k = c * kh * kw, p = oh * ow;
  Location loc = conv.getLoc();
  MLIRContext *ctx = b.getContext();
  b.setInsertionPoint(conv);
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  using IT = utils::IteratorType;
  // Loops (n, g, c, kh, kw, oh, ow): the innermost walks an output row and
  // an input row at the stride.
  SmallVector<int64_t> colShape = {n, g, c, kh, kw, oh, ow};
  Value col = linalg::GenericOp::create(
                  b, loc, TypeRange{RankedTensorType::get(colShape, elt)},
                  ValueRange{x},
                  ValueRange{tensor::EmptyOp::create(b, loc, colShape, elt)},
                  {AffineMap::get(7, 0,
                                  {dim(0), dim(1), dim(2),
                                   dim(5) * s[0] + dim(3) * d[0],
                                   dim(6) * s[1] + dim(4) * d[1]},
                                  ctx),
                   AffineMap::getMultiDimIdentityMap(7, ctx)},
                  SmallVector<IT>(7, IT::parallel),
                  [](OpBuilder &nb, Location nl, ValueRange a) {
                    linalg::YieldOp::create(nb, nl, a[0]);
                  })
                  .getResult(0);
  Value rhs = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({n, g, k, p}, elt), col,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3, 4}, {5, 6}});
  Value lhs = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({g, f, k}, elt), w,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3, 4}});
  SmallVector<ReassociationIndices> outAssoc = {{0}, {1}, {2}, {3, 4}};
  auto accType = RankedTensorType::get({n, g, f, p}, accElt);
  Value acc = tensor::CollapseShapeOp::create(b, loc, accType, init, outAssoc);
  // Loops (n, g, f, p, k).
  Value gemm =
      linalg::GenericOp::create(
          b, loc, TypeRange{accType}, ValueRange{lhs, rhs}, ValueRange{acc},
          {AffineMap::get(5, 0, {dim(1), dim(2), dim(4)}, ctx),
           AffineMap::get(5, 0, {dim(0), dim(1), dim(4), dim(3)}, ctx),
           AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)},
          {IT::parallel, IT::parallel, IT::parallel, IT::parallel,
           IT::reduction},
          [accElt](OpBuilder &nb, Location nl, ValueRange a) {
            multiplyAddBody(nb, nl, a, accElt);
          })
          .getResult(0);
  b.replaceOpWithNewOp<tensor::ExpandShapeOp>(conv, ot, gemm, outAssoc);
  return success();
}

struct ConvToGemmPass : public kiln::impl::KilnConvToGemmBase<ConvToGemmPass> {
  using Base::Base;
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    SmallVector<linalg::Conv2DNgchwGfchwOp> grouped;
    getOperation().walk([&](Operation *op) {
      if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op))
        convs.push_back(conv);
      else if (auto conv = dyn_cast<linalg::Conv2DNgchwGfchwOp>(op))
        grouped.push_back(conv);
    });
    for (auto conv : convs)
      (void)convToGemm(rewriter, conv, vectorBits, channelsLastBelow,
                       packPanels);
    for (auto conv : grouped)
      (void)groupedConvToGemm(rewriter, conv);
  }
};

} // namespace
