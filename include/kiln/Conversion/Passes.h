//===- Passes.h - Kiln lowering passes ---------------------------*- C++
//-*-===//

#ifndef KILN_CONVERSION_PASSES_H
#define KILN_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace kiln {
#define GEN_PASS_DECL
#include "kiln/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

#endif // KILN_CONVERSION_PASSES_H
