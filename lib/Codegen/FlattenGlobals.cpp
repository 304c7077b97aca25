//===- FlattenGlobals.cpp - 1-D constant memref globals -------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-flatten-globals"

namespace kiln {
#define GEN_PASS_DEF_KILNFLATTENGLOBALS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The initial value of a global over `flat` instead of its own type, or
/// null if it is of a kind this pass does not know.
Attribute flatValue(Attribute value, RankedTensorType flat) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.reshape(flat);
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value))
    return DenseResourceElementsAttr::get(flat, res.getRawHandle());
  return {};
}

struct FlattenGlobalsPass
    : public kiln::impl::KilnFlattenGlobalsBase<FlattenGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<MemRefType> flattened;
    for (auto global : module.getOps<memref::GlobalOp>()) {
      MemRefType type = global.getType();
      if (type.getRank() < 2 || !type.hasStaticShape() ||
          !type.getLayout().isIdentity() || !global.getInitialValue())
        continue;
      auto flatType =
          MemRefType::get({type.getNumElements()}, type.getElementType(),
                          AffineMap(), type.getMemorySpace());
      Attribute value = flatValue(
          *global.getInitialValue(),
          RankedTensorType::get(flatType.getShape(), type.getElementType()));
      if (!value)
        continue;
      global.setType(flatType);
      global.setInitialValueAttr(value);
      flattened[global.getSymName()] = type;
    }
    IRRewriter rewriter(&getContext());
    module.walk([&](memref::GetGlobalOp get) {
      auto it = flattened.find(get.getName());
      if (it == flattened.end())
        return;
      MemRefType original = it->second;
      rewriter.setInsertionPoint(get);
      auto flatType = MemRefType::get({original.getNumElements()},
                                      original.getElementType(), AffineMap(),
                                      original.getMemorySpace());
      Value flat = memref::GetGlobalOp::create(rewriter, get.getLoc(), flatType,
                                               get.getName());
      ReassociationIndices all;
      for (int64_t d = 0; d < original.getRank(); ++d)
        all.push_back(d);
      rewriter.replaceOpWithNewOp<memref::ExpandShapeOp>(
          get, original, flat, ArrayRef<ReassociationIndices>{all});
    });
  }
};

} // namespace
