//===- FoldConstants.cpp - ops of constants into constants ----------------===//

#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/ConstantEvaluator.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "kiln-fold-constants"

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDCONSTANTS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct FoldConstantsPass
    : public kiln::impl::KilnFoldConstantsBase<FoldConstantsPass> {
  using KilnFoldConstantsBase::KilnFoldConstantsBase;

  void runOnOperation() override {
    ConstantEvaluationOptions options;
    options.maxResultBytes = maxResultBytes;
    // Pre-order: an op's operands are defined before it, so a chain of
    // ops folds from its first op on in one walk.
    SmallVector<Operation *> dead;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      std::optional<SmallVector<ElementsAttr>> values =
          evaluateConstantOp(op, options);
      if (!values)
        return WalkResult::advance();
      OpBuilder b(op);
      for (auto [result, value] : llvm::zip(op->getResults(), *values))
        result.replaceAllUsesWith(
            ConstantOp::create(b, op->getLoc(), result.getType(), value));
      dead.push_back(op);
      return WalkResult::skip();
    });
    // The folded ops, then the constants only they read.
    SetVector<Operation *> inputs;
    for (Operation *op : dead) {
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp())
          inputs.insert(def);
      op->erase();
    }
    for (Operation *def : inputs)
      if (def->use_empty() && !llvm::is_contained(dead, def))
        def->erase();
    // A weight that is one value repeated (a ConstantOfShape that its
    // folder made a splat) is written out like a stored weight, so that
    // the code generator packs it as it packs those.
    getOperation()->walk([&](ConstantOp cst) {
      if (cst->use_empty() ||
          !llvm::all_of(cst->getUsers(), [](Operation *user) {
            return isa<ConvOp, ConvTransposeOp, GemmOp, MatMulOp>(user);
          }))
        return;
      if (std::optional<ElementsAttr> bytes = expandSplat(cst.getResult()))
        cst.setValueAttr(*bytes);
    });
  }
};

} // namespace
