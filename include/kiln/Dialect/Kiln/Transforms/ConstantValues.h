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

/// The values of a constant operand of f32, f16 or bf16 (inline, splat or
/// a resource), widened to float (exactly), if it is one.
inline std::optional<llvm::SmallVector<float>>
constFloatsWidened(mlir::Value v) {
  if (auto f32 = constFloats(v))
    return f32;
  auto cst = v ? v.getDefiningOp<ConstantOp>() : ConstantOp();
  auto ft =
      cst ? llvm::dyn_cast<mlir::FloatType>(cst.getValue().getElementType())
          : mlir::FloatType();
  if (!ft || !(ft.isF16() || ft.isBF16()))
    return std::nullopt;
  auto widen = [&](uint64_t bits) {
    llvm::APFloat x(ft.getFloatSemantics(), llvm::APInt(16, bits));
    bool lost;
    x.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    return x.convertToFloat();
  };
  mlir::ElementsAttr elements = cst.getValue();
  llvm::SmallVector<float> out;
  if (auto dense = llvm::dyn_cast<mlir::DenseFPElementsAttr>(elements)) {
    for (const llvm::APFloat &x : dense.getValues<llvm::APFloat>())
      out.push_back(widen(x.bitcastToAPInt().getZExtValue()));
    return out;
  }
  auto res = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(elements);
  mlir::AsmResourceBlob *blob = res ? res.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return std::nullopt;
  llvm::ArrayRef<char> data = blob->getData();
  int64_t n = llvm::cast<mlir::ShapedType>(res.getType()).getNumElements();
  if ((int64_t)data.size() != n * 2)
    return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t bits;
    std::memcpy(&bits, data.data() + 2 * i, 2);
    out.push_back(widen(bits));
  }
  return out;
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
  // f16 and bf16: each value rounded to the type (exact for values read
  // from one).
  if (auto ft = llvm::dyn_cast<mlir::FloatType>(type.getElementType());
      ft && (ft.isF16() || ft.isBF16())) {
    llvm::SmallVector<uint16_t> bits;
    for (float v : values) {
      llvm::APFloat x(v);
      bool lost;
      x.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      bits.push_back(static_cast<uint16_t>(x.bitcastToAPInt().getZExtValue()));
    }
    llvm::ArrayRef<char> raw(reinterpret_cast<const char *>(bits.data()),
                             bits.size() * 2);
    if (values.size() <= 8)
      attr = mlir::DenseElementsAttr::getFromRawBuffer(type, raw);
    else
      attr = mlir::DenseResourceElementsAttr::get(
          type, name,
          mlir::HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, 64));
    return ConstantOp::create(b, loc, type, attr);
  }
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
