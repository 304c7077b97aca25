//===- InferShapes.cpp - refine result types through the graph ------------===//

#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/FoldUtils.h"

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
    // One pass in program order: each op's types are refined from its
    // operands, then the op is folded if its operands are constants, so
    // that shape computations (Shape -> Gather -> Concat -> Reshape, and
    // their Equal/Where/ConstantOfShape variants in exported graphs)
    // become constants before the ops that consume them are inferred.
    SmallVector<Operation *> ops;
    getOperation()->walk(
        [&](InferResultTypesOpInterface op) { ops.push_back(op); });
    OperationFolder folder(&getContext());
    for (Operation *op : ops) {
      SmallVector<Type> inferred;
      if (failed(
              cast<InferResultTypesOpInterface>(op).inferResultTypes(inferred)))
        return signalPassFailure();
      for (auto [result, want] : llvm::zip(op->getResults(), inferred)) {
        if (!areCompatibleTypes(want, result.getType())) {
          op->emitOpError("result #")
              << result.getResultNumber() << " has type " << result.getType()
              << " but its operands imply " << want;
          return signalPassFailure();
        }
        result.setType(refineType(result.getType(), want));
      }
      (void)folder.tryToFold(op);
    }
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
