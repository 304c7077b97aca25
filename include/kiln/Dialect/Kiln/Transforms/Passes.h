//===- Passes.h - kiln graph passes ------------------------------*- C++
//-*-===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_PASSES_H
#define KILN_DIALECT_KILN_TRANSFORMS_PASSES_H

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {
#define GEN_PASS_DECL
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

#endif // KILN_DIALECT_KILN_TRANSFORMS_PASSES_H
