//===- ChannelsLast.cpp - GPU convolutions computed channels-last ---------===//
//
// kiln-gpu-contractions computes a convolution as an implicit GEMM that
// reads its input in place. In NCHW its K runs over (c, kh, kw), and a
// tile's 16-byte group of K is strided along all three: each thread
// gathers element by element. Channels-last (NHWC input, weights
// [f, kh, kw, c]) K runs over (kh, kw, c) with c contiguous, and a group
// of channels is one aligned 16-byte copy (cp.async), inside or outside
// the zero padding as a whole. This pass rewrites each such NCHW
// convolution as linalg.conv_2d_nhwc_fhwc between transposes; the
// transposes then move past the elementwise ops between convolutions and
// cancel (kiln-sink-transposes). A stem's few channels are widened to one
// 16-byte run with zeros.
//
//===----------------------------------------------------------------------===//

#include "../ConvLayout.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "kiln-gpu-channels-last"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUCHANNELSLAST
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Rewrites one convolution channels-last; fails (leaving it alone) where
/// it is not static and float or int8, or its input or output channels are not
/// a whole number of `groupBytes` runs.
LogicalResult toChannelsLast(RewriterBase &b, linalg::Conv2DNchwFchwOp conv,
                             int64_t groupBytes) {
  std::optional<kiln::StaticConv> sc = kiln::staticConv(conv);
  if (!sc)
    return failure();
  Value x = sc->x, w = sc->w, init = sc->init;
  RankedTensorType xt = sc->xt, wt = sc->wt, ot = sc->ot;
  // Float convolutions, and 8-bit integer ones into i32 (quantized
  // models: the int8 tiles read both operands k-contiguous).
  bool floats = isa<FloatType>(xt.getElementType()) &&
                isa<FloatType>(wt.getElementType()) &&
                isa<FloatType>(ot.getElementType());
  bool int8 = xt.getElementType().isInteger(8) &&
              wt.getElementType().isInteger(8) &&
              ot.getElementType().isInteger(32);
  if (!floats && !int8)
    return failure();
  // Both the input and the output channels in whole runs: the output
  // channels are the GEMM's N, narrow ones a loop kernel that a
  // channels-last output only makes slower. Fewer input channels than one
  // run (an RGB stem) are widened to one with zeros, where the weights are
  // constants to widen too: the tile multiplies the zeros, and copies
  // whole runs.
  int64_t inBytes = xt.getElementTypeBitWidth() / 8,
          wBytes = wt.getElementTypeBitWidth() / 8;
  int64_t c = xt.getDimSize(1);
  if (inBytes == 0 || wBytes == 0 ||
      (wt.getDimSize(0) * wBytes) % groupBytes != 0 || groupBytes % inBytes)
    return failure();
  int64_t channels = c;
  if (c * inBytes < groupBytes)
    channels = groupBytes / inBytes;
  else if ((c * inBytes) % groupBytes != 0)
    return failure();

  Location loc = conv.getLoc();
  b.setInsertionPoint(conv);
  const int64_t toNhwc[] = {0, 2, 3, 1}, toNchw[] = {0, 3, 1, 2};
  // Constant weights are reordered here; others at run time.
  Value filter = kiln::tapsMajorWeights(b, loc, w, channels);
  if (!filter && channels != c)
    return failure();
  if (!filter)
    filter = kiln::transposed(b, loc, w, toNhwc);
  // The input: a pad of its plane (zero, or a zero point) applied after the
  // transpose, which
  // then cancels against the one a channels-last convolution before it
  // leaves.
  Value input = kiln::nhwcInput(b, loc, x, channels);
  Value acc = kiln::channelsLastInit(b, loc, init);
  auto nhwc = linalg::Conv2DNhwcFhwcOp::create(
      b, loc, TypeRange{acc.getType()}, ValueRange{input, filter},
      ValueRange{acc}, conv.getStrides(), conv.getDilations());
  // kiln-sparsify's mark, for kiln-gpu-sparse-weights{convolutions}: the
  // reordered weight's K is (kh, kw, c).
  if (Attribute sparsity = conv->getAttr("kiln.sparsity"))
    nhwc->setAttr("kiln.sparsity", sparsity);
  b.replaceOp(conv, kiln::transposed(b, loc, nhwc.getResult(0), toNchw));
  if (auto padOp = x.getDefiningOp<tensor::PadOp>();
      padOp && padOp->use_empty())
    b.eraseOp(padOp);
  // The NCHW init, when it was rebuilt and nothing else reads it.
  if (Operation *old = init.getDefiningOp();
      old && old->use_empty() && isMemoryEffectFree(old))
    b.eraseOp(old);
  return success();
}

struct ChannelsLastPass
    : public kiln::impl::KilnGpuChannelsLastBase<ChannelsLastPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk(
        [&](linalg::Conv2DNchwFchwOp conv) { convs.push_back(conv); });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNchwFchwOp conv : convs)
      (void)toChannelsLast(rewriter, conv, groupBytes);
  }
};

} // namespace
