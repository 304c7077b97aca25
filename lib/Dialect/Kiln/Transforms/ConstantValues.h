//===- ConstantValues.h - reading kiln constants in graph passes -*- C++
//-*-===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_CONSTANTVALUES_H
#define KILN_DIALECT_KILN_TRANSFORMS_CONSTANTVALUES_H

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <optional>

namespace kiln {

/// The float32 values of a constant operand (inline or a resource), if it
/// is one.
inline std::optional<llvm::SmallVector<float>> constFloats(mlir::Value v) {
  auto cst = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  if (!cst || !cst.getValue().getElementType().isF32())
    return std::nullopt;
  mlir::ElementsAttr elements = cst.getValue();
  if (auto resource =
          llvm::dyn_cast<mlir::DenseF32ResourceElementsAttr>(elements)) {
    auto data = resource.tryGetAsArrayRef();
    if (!data)
      return std::nullopt;
    return llvm::SmallVector<float>(data->begin(), data->end());
  }
  auto values = elements.tryGetValues<float>();
  if (!values)
    return std::nullopt;
  return llvm::SmallVector<float>(values->begin(), values->end());
}

} // namespace kiln

#endif // KILN_DIALECT_KILN_TRANSFORMS_CONSTANTVALUES_H
