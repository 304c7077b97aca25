//===- SplitEmptyTensors.cpp - one tensor.empty per use -------------------===//
//
// CSE merges equal tensor.empty ops; a merged one with many uses makes
// one-shot bufferization's in-place analysis quadratic in its uses. Each
// further use gets a clone of its own before bufferization.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln {
#define GEN_PASS_DEF_KILNSPLITEMPTYTENSORS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct SplitEmptyTensorsPass
    : public kiln::impl::KilnSplitEmptyTensorsBase<SplitEmptyTensorsPass> {
  void runOnOperation() override {
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp op) { empties.push_back(op); });
    for (tensor::EmptyOp op : empties) {
      // In program order (use lists are not), each use placed by the op of
      // the empty's block that holds it: the original keeps the first.
      Block *block = op->getBlock();
      SmallVector<std::pair<Operation *, OpOperand *>> uses;
      for (OpOperand &use : op->getUses())
        uses.push_back({block->findAncestorOpInBlock(*use.getOwner()), &use});
      llvm::stable_sort(uses, [](const auto &x, const auto &y) {
        return x.first != y.first && x.first->isBeforeInBlock(y.first);
      });
      // The clones sit after the original, in the uses' order (not at their
      // users, which may be in a loop): one buffer each, allocated where
      // the original is.
      OpBuilder b(op);
      b.setInsertionPointAfter(op);
      for (auto [owner, use] : llvm::drop_begin(uses)) {
        Operation *clone = b.clone(*op);
        use->set(clone->getResult(0));
        b.setInsertionPointAfter(clone);
      }
    }
  }
};

} // namespace
