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

#define DEBUG_TYPE "kiln-conv-to-gemm"

namespace kiln {
#define GEN_PASS_DEF_KILNCONVTOGEMM
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Rewrites one convolution; fails (leaving it alone) when it is not a
/// static float convolution.
LogicalResult convToGemm(RewriterBase &b, linalg::Conv2DNchwFchwOp conv) {
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

  Value rhs; // [n, k, p]
  auto rhsType = RankedTensorType::get({n, k, p}, elt);
  if (kh == 1 && kw == 1 && s[0] == 1 && s[1] == 1 && xt.getDimSize(2) == oh &&
      xt.getDimSize(3) == ow) {
    rhs = tensor::CollapseShapeOp::create(
        b, loc, rhsType, x,
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  } else {
    auto colType = RankedTensorType::get({n, c, kh, kw, oh, ow}, elt);
    Value empty = tensor::EmptyOp::create(b, loc, colType.getShape(), elt);
    AffineMap in =
        AffineMap::get(6, 0,
                       {dim(0), dim(1), dim(4) * s[0] + dim(2) * d[0],
                        dim(5) * s[1] + dim(3) * d[1]},
                       ctx);
    SmallVector<utils::IteratorType> iters(6, utils::IteratorType::parallel);
    Value col =
        linalg::GenericOp::create(
            b, loc, TypeRange{colType}, ValueRange{x}, ValueRange{empty},
            {in, AffineMap::getMultiDimIdentityMap(6, ctx)}, iters,
            [](OpBuilder &nb, Location nl, ValueRange a) {
              linalg::YieldOp::create(nb, nl, a[0]);
            })
            .getResult(0);
    rhs = tensor::CollapseShapeOp::create(
        b, loc, rhsType, col,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  }
  Value lhs = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({f, k}, elt), w,
      SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  SmallVector<ReassociationIndices> outAssoc = {{0}, {1}, {2, 3}};
  auto accType = RankedTensorType::get({n, f, p}, elt);
  Value acc = tensor::CollapseShapeOp::create(b, loc, accType, init, outAssoc);
  // Loops (n, f, p, k).
  using IT = utils::IteratorType;
  Value gemm =
      linalg::GenericOp::create(
          b, loc, TypeRange{accType}, ValueRange{lhs, rhs}, ValueRange{acc},
          {AffineMap::get(4, 0, {dim(1), dim(3)}, ctx),
           AffineMap::get(4, 0, {dim(0), dim(3), dim(2)}, ctx),
           AffineMap::get(4, 0, {dim(0), dim(1), dim(2)}, ctx)},
          {IT::parallel, IT::parallel, IT::parallel, IT::reduction},
          [](OpBuilder &nb, Location nl, ValueRange a) {
            Value prod = arith::MulFOp::create(nb, nl, a[0], a[1]);
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], prod)});
          })
          .getResult(0);
  b.replaceOpWithNewOp<tensor::ExpandShapeOp>(conv, ot, gemm, outAssoc);
  return success();
}

struct ConvToGemmPass : public kiln::impl::KilnConvToGemmBase<ConvToGemmPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk(
        [&](linalg::Conv2DNchwFchwOp conv) { convs.push_back(conv); });
    for (auto conv : convs)
      (void)convToGemm(rewriter, conv);
  }
};

} // namespace
