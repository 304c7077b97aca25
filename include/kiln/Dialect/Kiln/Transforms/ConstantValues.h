//===- ConstantValues.h - reading kiln constants in graph passes -*- C++
//-*-===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_CONSTANTVALUES_H
#define KILN_DIALECT_KILN_TRANSFORMS_CONSTANTVALUES_H

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
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

/// The values of an integer elements attribute (inline, or a resource of
/// 8-, 16-, 32- or 64-bit elements), read as unsigned when `isUnsigned`.
inline std::optional<llvm::SmallVector<int64_t>>
intElements(mlir::ElementsAttr elements, bool isUnsigned) {
  auto it = llvm::dyn_cast<mlir::IntegerType>(elements.getElementType());
  if (!it)
    return std::nullopt;
  llvm::SmallVector<int64_t> out;
  if (auto dense = llvm::dyn_cast<mlir::DenseIntElementsAttr>(elements)) {
    for (const llvm::APInt &x : dense.getValues<llvm::APInt>())
      out.push_back(isUnsigned ? (int64_t)x.getZExtValue() : x.getSExtValue());
    return out;
  }
  auto res = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(elements);
  mlir::AsmResourceBlob *blob = res ? res.getRawHandle().getBlob() : nullptr;
  unsigned bytes = it.getWidth() / 8;
  if (!blob || it.getWidth() % 8 != 0 || bytes > 8)
    return std::nullopt;
  llvm::ArrayRef<char> data = blob->getData();
  int64_t n = llvm::cast<mlir::ShapedType>(res.getType()).getNumElements();
  if ((int64_t)data.size() != n * bytes)
    return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t raw = 0;
    std::memcpy(&raw, data.data() + i * bytes, bytes); // little-endian
    llvm::APInt x(it.getWidth(), raw);
    out.push_back(isUnsigned ? (int64_t)x.getZExtValue() : x.getSExtValue());
  }
  return out;
}

/// The values of a constant integer operand (unsigned types read as
/// unsigned), if it is one.
inline std::optional<llvm::SmallVector<int64_t>> constInts(mlir::Value v) {
  auto cst = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  auto it =
      cst ? llvm::dyn_cast<mlir::IntegerType>(cst.getValue().getElementType())
          : mlir::IntegerType();
  if (!it)
    return std::nullopt;
  return intElements(cst.getValue(), it.isUnsigned());
}

/// A kiln constant holding `values`: inline when small, else a dense
/// resource named `name`.
inline mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::RankedTensorType type,
                                 llvm::ArrayRef<float> values,
                                 llvm::StringRef name) {
  mlir::ElementsAttr attr;
  if (values.size() <= 8)
    attr = mlir::DenseElementsAttr::get(type, values);
  else
    attr = mlir::DenseResourceElementsAttr::get(
        type, name,
        mlir::HeapAsmResourceBlob::allocateAndCopyInferAlign(values));
  return ConstantOp::create(b, loc, type, attr);
}

} // namespace kiln

#endif // KILN_DIALECT_KILN_TRANSFORMS_CONSTANTVALUES_H
