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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "kiln-conv-to-gemm"

namespace kiln {
#define GEN_PASS_DEF_KILNCONVTOGEMM
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// `init` (an [N, F, OH, OW] accumulator) in the layout [N, OH, OW, F]: a
/// fill or an elementwise broadcast (the bias) is rebuilt in that layout,
/// anything else transposed.
Value channelsLastInit(RewriterBase &b, Location loc, Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  const int64_t perm[] = {0, 2, 3, 1}; // new dim i is old dim perm[i]
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  Type elt = type.getElementType();
  Value empty = tensor::EmptyOp::create(b, loc, shape, elt);
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return linalg::FillOp::create(b, loc, fill.getInputs()[0], empty)
        .getResult(0);
  auto g = init.getDefiningOp<linalg::GenericOp>();
  if (g && g.getNumDpsInits() == 1 && g.getNumLoops() == 4 &&
      g.getNumParallelLoops() == 4 &&
      g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() &&
      g.getRegion().front().getArgument(g.getNumDpsInputs()).use_empty()) {
    // The old loops (n, f, oh, ow) in terms of the new (n, oh, ow, f).
    MLIRContext *ctx = b.getContext();
    AffineMap oldOfNew =
        AffineMap::get(4, 0,
                       {getAffineDimExpr(0, ctx), getAffineDimExpr(3, ctx),
                        getAffineDimExpr(1, ctx), getAffineDimExpr(2, ctx)},
                       ctx);
    SmallVector<AffineMap> maps;
    for (OpOperand *in : g.getDpsInputOperands())
      maps.push_back(g.getMatchingIndexingMap(in).compose(oldOfNew));
    maps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
    auto rebuilt = linalg::GenericOp::create(
        b, loc, TypeRange{empty.getType()}, g.getDpsInputs(), ValueRange{empty},
        maps, g.getIteratorTypesArray());
    b.cloneRegionBefore(g.getRegion(), rebuilt.getRegion(),
                        rebuilt.getRegion().begin());
    return rebuilt.getResult(0);
  }
  return linalg::TransposeOp::create(b, loc, init, empty, perm).getResult()[0];
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
  Value x = conv.getInputs()[0], w = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  auto wt = dyn_cast<RankedTensorType>(w.getType());
  auto ot = dyn_cast<RankedTensorType>(init.getType());
  if (!xt || !wt || !ot || !xt.hasStaticShape() || !wt.hasStaticShape() ||
      !ot.hasStaticShape())
    return failure();
  Type elt = ot.getElementType();
  if (!isa<FloatType>(elt) || xt.getElementType() != elt ||
      wt.getElementType() != elt)
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
  // copy's loops reading x at `in` (n, c, h, w) and writing the copy at
  // `out` (default: the loops in the copy's dim order).
  auto copyWindows = [&](ArrayRef<int64_t> shape, ArrayRef<AffineExpr> in,
                         ArrayRef<AffineExpr> out = {}) -> Value {
    auto type = RankedTensorType::get(shape, elt);
    Value empty = tensor::EmptyOp::create(b, loc, shape, elt);
    unsigned rank = shape.size();
    return linalg::GenericOp::create(
               b, loc, TypeRange{type}, ValueRange{x}, ValueRange{empty},
               {AffineMap::get(rank, 0, in, ctx),
                out.empty() ? AffineMap::getMultiDimIdentityMap(rank, ctx)
                            : AffineMap::get(rank, 0, out, ctx)},
               SmallVector<IT>(rank, IT::parallel),
               [](OpBuilder &nb, Location nl, ValueRange a) {
                 linalg::YieldOp::create(nb, nl, a[0]);
               })
        .getResult(0);
  };
  auto multiplyAdd = [](OpBuilder &nb, Location nl, ValueRange a) {
    Value prod = arith::MulFOp::create(nb, nl, a[0], a[1]);
    linalg::YieldOp::create(
        nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], prod)});
  };

  int64_t lanes =
      std::max<int64_t>(1, vectorBits / cast<FloatType>(elt).getWidth());
  // nr: the register tile's width along the plane, were it vectorized so.
  int64_t nr = kiln::cpuRegisterTileWidth(p, lanes);
  bool packable = packPanels && nr < p && p % nr == 0;
  if (channelsLastBelow > 0 && f % (2 * lanes) == 0 &&
      (p < channelsLastBelow || (packPanels && !packable && p > 2 * lanes))) {
    // out[n, p, f] += col[n, p, k] * w[f, k], back to NCHW at the end.
    Value lhs = weights();
    Value cols; // [n, p, k]
    auto colsType = RankedTensorType::get({n, p, k}, elt);
    if (pointwise) {
      Value empty = tensor::EmptyOp::create(b, loc, {n, oh, ow, c}, elt);
      Value xT = linalg::TransposeOp::create(b, loc, x, empty,
                                             ArrayRef<int64_t>{0, 2, 3, 1})
                     .getResult()[0];
      cols = tensor::CollapseShapeOp::create(
          b, loc, colsType, xT,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
    } else {
      // Loops (n, oh, ow, c, kh, kw).
      Value col = copyWindows({n, oh, ow, c, kh, kw},
                              {dim(0), dim(3), dim(1) * s[0] + dim(4) * d[0],
                               dim(2) * s[1] + dim(5) * d[1]});
      cols = tensor::CollapseShapeOp::create(
          b, loc, colsType, col,
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
    }
    SmallVector<ReassociationIndices> assoc = {{0}, {1, 2}, {3}};
    auto accType = RankedTensorType::get({n, p, f}, elt);
    Value acc = tensor::CollapseShapeOp::create(
        b, loc, accType, channelsLastInit(b, loc, init), assoc);
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
        b, loc, RankedTensorType::get({n, oh, ow, f}, elt), gemm, assoc);
    Value empty = tensor::EmptyOp::create(b, loc, ot.getShape(), elt);
    b.replaceOp(conv, linalg::TransposeOp::create(b, loc, nhwc, empty,
                                                  ArrayRef<int64_t>{0, 3, 1, 2})
                          .getResult()[0]);
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
    Value col =
        copyWindows({n, blocks, c, kh, kw, nr},
                    {dim(0), dim(1), pos.floorDiv(ow) * s[0] + dim(2) * d[0],
                     (pos % ow) * s[1] + dim(3) * d[1]},
                    {dim(0), dim(4), dim(1), dim(2), dim(3), dim(5)});
    Value rhs = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({n, blocks, k, nr}, elt), col,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3, 4}, {5}});
    SmallVector<ReassociationIndices> planeAssoc = {{0}, {1}, {2, 3}};
    auto flatType = RankedTensorType::get({n, f, p}, elt);
    auto accType = RankedTensorType::get({n, f, blocks, nr}, elt);
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
  auto accType = RankedTensorType::get({n, f, p}, elt);
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

struct ConvToGemmPass : public kiln::impl::KilnConvToGemmBase<ConvToGemmPass> {
  using Base::Base;
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk(
        [&](linalg::Conv2DNchwFchwOp conv) { convs.push_back(conv); });
    for (auto conv : convs)
      (void)convToGemm(rewriter, conv, vectorBits, channelsLastBelow,
                       packPanels);
  }
};

} // namespace
