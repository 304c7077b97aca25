//===- Canonicalize.h - canonicalizations for CPU passes --------*- C++ -*-===//
//
// Internal to the codegen library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CODEGEN_CPU_CANONICALIZE_H
#define KILN_LIB_CODEGEN_CPU_CANONICALIZE_H

#include "mlir/IR/PatternMatch.h"

namespace kiln::cpu {

/// The canonicalization patterns of every loaded dialect and registered op,
/// what the `canonicalize` pass applies, for a pass to apply to the IR it
/// just rewrote (the bounds and slice sizes of tiled loops fold to
/// constants).
void addCanonicalizations(mlir::MLIRContext *ctx,
                          mlir::RewritePatternSet &patterns);

} // namespace kiln::cpu

#endif // KILN_LIB_CODEGEN_CPU_CANONICALIZE_H
