//===- Epilogue.h - elementwise epilogues of CPU kernels --------*- C++ -*-===//
//
// An elementwise op after a kernel (an activation after a convolution or a
// GEMM) applied to the kernel's vectors before they are written, instead
// of in a pass of its own. Internal to the codegen library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CODEGEN_CPU_EPILOGUE_H
#define KILN_LIB_CODEGEN_CPU_EPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace kiln::cpu {

/// The elementwise op that is the only consumer of `op`'s single result
/// (through reshapes and transposes), when its body can be applied to the
/// result's vectors: one input read elementwise, its own init unread, every
/// body op elementwise and free of memory effects, operands from the block
/// argument or scalars defined outside. Activations (Relu, Clip, ...) are
/// such. Null otherwise.
mlir::linalg::GenericOp findEpilogue(mlir::linalg::LinalgOp op);

/// An elementwise op after a contraction that also reads a second tensor
/// of the same shape element by element: a residual Add (+ Relu) after a
/// ResNet block's last convolution.
struct ResidualEpilogue {
  mlir::linalg::GenericOp op;
  /// The input that the contraction's result is; the other is the
  /// residual.
  unsigned accInput;
  /// The reshapes from the contraction's result to input `accInput`, in
  /// order (the residual is read through their inverses): each an expand
  /// or a collapse from `source` by `groups`.
  struct Reshape {
    bool expand;
    mlir::RankedTensorType source;
    llvm::SmallVector<mlir::ReassociationIndices> groups;
  };
  llvm::SmallVector<Reshape> reshapes;
};

/// The residual epilogue of `op` (see ResidualEpilogue): the only consumer
/// of its result through expand/collapse reshapes, a generic of parallel
/// loops with identity maps, two inputs of the same type, its init unread,
/// its body elementwise as for findEpilogue; the residual must be defined
/// before `op` (each register tile reads it). Nothing otherwise.
std::optional<ResidualEpilogue> findResidualEpilogue(mlir::linalg::LinalgOp op);

/// The residual of `e` in the shape of the contraction's result: its
/// reshapes undone, right after the residual is defined.
mlir::Value residualAsResult(mlir::OpBuilder &b, const ResidualEpilogue &e);

/// Applies `epilogue`'s body to `acc`, a vector of final values: each op
/// again at the vector type, scalars from outside broadcast. With a
/// residual epilogue, input `accInput` is `acc` and the other `residual`,
/// a vector of the same shape.
mlir::Value applyEpilogue(mlir::OpBuilder &b, mlir::linalg::GenericOp epilogue,
                          mlir::Value acc, unsigned accInput = 0,
                          mlir::Value residual = {});

/// Applies `epilogue`'s body with its inputs' block arguments as `inputs`
/// (vectors of one shape, one per input): each op again at that vector
/// type, scalars from outside broadcast.
mlir::Value applyEpilogueTo(mlir::OpBuilder &b,
                            mlir::linalg::GenericOp epilogue,
                            mlir::ValueRange inputs);

/// Whether every op of `body` (but the terminator) can run on vectors:
/// elementwise, free of memory effects, one result, operands from the
/// body or scalars from outside.
bool isElementwiseBody(mlir::Block &body);

/// Whether `body` (of a contraction of inputs 0 and 1 into init 2) is
/// exactly yield(out + ext(in0) * ext(in1)), each ext an extsi or extui of
/// its own block argument (integers; sets each side's signedness) or an
/// extf (floats, both sides then signed).
bool isExtendedProductBody(mlir::Block &body, bool &signed0, bool &signed1);

/// The mark of a signed dot product's last add for kiln-cpu-avx2-dot.
constexpr llvm::StringLiteral kAvx2DotAttr = "kiln.avx2_dot";

/// int32 lanes of the 512-bit dot products below.
constexpr int64_t kDotLanes = 16;

/// acc + the sums of four products per lane: `u` (unsigned bytes) times
/// `s` (signed bytes), both vector<64xi8>; acc vector<16xi32>. Plain
/// vector ops (kiln-cpu-vnni-dot turns them into vpdpbusd where the CPU
/// has it). With `signedU`, `u` is read as signed bytes too and the last
/// add is marked for kiln-cpu-avx2-dot (`s` must hold no -128).
mlir::Value dot4(mlir::OpBuilder &b, mlir::Location loc, mlir::Value acc,
                 mlir::Value u, mlir::Value s, bool signedU = false);

/// Rows of an AMX tile, and 32-bit columns of an accumulator tile.
constexpr int64_t kAmxTile = 16;

/// The indexing maps of an AMX tile product (kiln::kAmxTilesAttr), over
/// (i, j, kq, kr): x[i, kq, kr], y[j floordiv 16, kq, j mod 16, kr], c[i,
/// j]. kiln-cpu-int8-gemm writes them, kiln-cpu-amx-tiles matches them.
llvm::SmallVector<mlir::AffineMap> amxTileMaps(mlir::MLIRContext *ctx);

} // namespace kiln::cpu

#endif // KILN_LIB_CODEGEN_CPU_EPILOGUE_H
