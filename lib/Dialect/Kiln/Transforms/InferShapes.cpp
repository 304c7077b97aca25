//===- InferShapes.cpp - refine result types through the graph ------------===//

#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#define DEBUG_TYPE "kiln-infer-shapes"

namespace kiln {
#define GEN_PASS_DEF_KILNINFERSHAPES
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {
struct InferShapesPass
    : public kiln::impl::KilnInferShapesBase<InferShapesPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](InferResultTypesOpInterface op) {
      SmallVector<Type> inferred;
      if (failed(op.inferResultTypes(inferred))) {
        failedAny = true;
        return;
      }
      for (auto [result, want] : llvm::zip(op->getResults(), inferred)) {
        if (!areCompatibleTypes(want, result.getType())) {
          op->emitOpError("result #")
              << result.getResultNumber() << " has type " << result.getType()
              << " but its operands imply " << want;
          failedAny = true;
          return;
        }
        result.setType(refineType(result.getType(), want));
      }
    });
    if (failedAny)
      return signalPassFailure();
    // Function results follow the refined values they return.
    getOperation()->walk([](FunctionOpInterface fn) {
      if (fn.isExternal())
        return;
      Operation *term = fn.getFunctionBody().back().getTerminator();
      auto type = cast<FunctionType>(fn.getFunctionType());
      fn.setType(FunctionType::get(fn->getContext(), type.getInputs(),
                                   term->getOperandTypes()));
    });
  }
};
} // namespace
