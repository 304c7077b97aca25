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

/// Applies `epilogue`'s body to `acc`, a vector of final values: each op
/// again at the vector type, scalars from outside broadcast.
mlir::Value applyEpilogue(mlir::OpBuilder &b, mlir::linalg::GenericOp epilogue,
                          mlir::Value acc);

} // namespace kiln::cpu

#endif // KILN_LIB_CODEGEN_CPU_EPILOGUE_H
