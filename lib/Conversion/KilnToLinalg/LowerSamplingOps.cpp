//===- LowerSamplingOps.cpp - GridSample, RoiAlign, MaxUnpool to linalg --===//
//
// Part of convert-kiln-to-linalg (see KilnToLinalg.cpp).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

using namespace mlir;
using namespace kiln;

namespace kiln::lowering {

LoweringResult lowerSamplingOp(OpBuilder &b, Operation *op) {
  (void)b;
  (void)op;
  return std::nullopt;
}

} // namespace kiln::lowering
