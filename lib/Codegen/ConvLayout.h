//===- ConvLayout.h - channels-last convolution operands -------*- C++ -*-===//
//
// Helpers of the passes that compute NCHW convolutions channels-last
// (kiln-conv-to-gemm on the CPU, kiln-gpu-channels-last).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CODEGEN_CONVLAYOUT_H
#define KILN_LIB_CODEGEN_CONVLAYOUT_H

#include "kiln/Codegen/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace kiln {

/// `v` transposed by `perm` (new dim i is old dim perm[i]) into a new
/// tensor.
mlir::Value transposed(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       llvm::ArrayRef<int64_t> perm);

/// `x` as a pad of the plane of an NCHW tensor with a constant (with
/// `zeroOnly`, zero: kiln::zeroPlanePad): its source and low pads.
std::optional<PlanePad> planePad(mlir::Value x, bool zeroOnly);

/// A convolution's operands on static tensors.
struct StaticConv {
  mlir::Value x, w, init;
  mlir::RankedTensorType xt, wt, ot;
};
std::optional<StaticConv> staticConv(mlir::linalg::LinalgOp conv);

/// NCHW input `x` transposed to NHWC. Where `x` is a pad of its plane with
/// a constant (planePad: zero, or an 8-bit input's zero point), its source
/// is transposed and the pad applied after, so that the transpose can cancel
/// against one a channels-last producer leaves. With `channels` above x's, the
/// channels are widened to that many with zeros (before the pad of the plane).
mlir::Value nhwcInput(mlir::RewriterBase &b, mlir::Location loc, mlir::Value x,
                      int64_t channels = 0);

/// `init` (an [N, F, OH, OW] accumulator) in the layout [N, OH, OW, F]: a
/// fill or an elementwise broadcast (the bias, also in its collapsed form)
/// is rebuilt in that layout, anything else transposed.
mlir::Value channelsLastInit(mlir::RewriterBase &b, mlir::Location loc,
                             mlir::Value init);

/// The constant weights `w` ([f, c, kh, kw]) reordered to [f, kh, kw, c]
/// as a new constant; null where `w` is not a constant with its bytes at
/// hand. With `channels` above c: [f, kh, kw, channels], the channels
/// past c zero.
mlir::Value tapsMajorWeights(mlir::RewriterBase &b, mlir::Location loc,
                             mlir::Value w, int64_t channels = 0);

/// The constant `w` transposed by `perm` (new dim i is old dim perm[i])
/// as a new constant; null where `w` is not a constant with its bytes at
/// hand.
mlir::Value transposedConstant(mlir::RewriterBase &b, mlir::Location loc,
                               mlir::Value w, llvm::ArrayRef<int64_t> perm);

} // namespace kiln

#endif // KILN_LIB_CODEGEN_CONVLAYOUT_H
