//===- ConstantEvaluator.h - evaluating kiln ops on constants ---*- C++ -*-===//
//
// Evaluates a kiln op whose operands are all constants (inline or dense
// resources, of any size up to a limit) into constants of its static result
// types: the ops that compute weights in exported graphs (ConstantOfShape,
// Transpose, Reshape, Slice with any steps, Concat, Expand, Tile, Gather,
// Cast, DequantizeLinear, and float elementwise arithmetic). The per-op
// folders in KilnFolders.cpp fold small shape computations as MLIR folds;
// this serves what they leave, at weight sizes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_CONSTANTEVALUATOR_H
#define KILN_DIALECT_KILN_TRANSFORMS_CONSTANTEVALUATOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace kiln {

struct ConstantEvaluationOptions {
  /// The most bytes one evaluated result may have.
  int64_t maxResultBytes = int64_t(1) << 30;
  /// Whether DequantizeLinear is evaluated (off while a QDQ model's
  /// quantized groups are still to be recognized).
  bool dequantize = true;
};

/// The values of `op`'s results when every operand is a kiln constant, each
/// result has a static shape and the op is one the evaluator knows; nullopt
/// otherwise. Results larger than the inline limit are dense resources.
std::optional<llvm::SmallVector<mlir::ElementsAttr>>
evaluateConstantOp(mlir::Operation *op,
                   const ConstantEvaluationOptions &options = {});

/// The elements of a splat constant `value` written out one by one (a
/// dense resource), so that code that lays weights out at compile time
/// reads it as it reads a stored weight; nullopt for anything else.
std::optional<mlir::ElementsAttr> expandSplat(mlir::Value value);

} // namespace kiln

#endif // KILN_DIALECT_KILN_TRANSFORMS_CONSTANTEVALUATOR_H
