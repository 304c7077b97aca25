//===- CloneSharedInits.cpp - one initial value per written destination ---===//
//
// CSE merges identical fills and broadcasts: two MatMuls with the same
// output shape share one zero fill, and convolutions whose (folded) biases
// are equal share one bias broadcast. Each of them writes its result into
// that init, so bufferization gives all but one a copy of it: a scalar
// memref.copy of the whole output before the contraction runs. This pass
// gives every op that writes into such a shared init its own clone of the
// cheap op that computes it instead, tagged so that CSE does not merge
// them again.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#define DEBUG_TYPE "kiln-clone-shared-inits"

namespace kiln {
#define GEN_PASS_DEF_KILNCLONESHAREDINITS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kCloneTag = "kiln.init_clone";

/// A fill, or a linalg op that only reads constants (a broadcast of a
/// bias), into a tensor.empty: cheaper to recompute than to copy.
bool isRecomputable(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      !linalgOp.getDpsInitOperand(0)->get().getDefiningOp<tensor::EmptyOp>())
    return false;
  return llvm::all_of(linalgOp.getDpsInputOperands(), [](OpOperand *in) {
    Operation *def = in->get().getDefiningOp();
    return !isa<ShapedType>(in->get().getType()) ||
           (def && def->hasTrait<OpTrait::ConstantLike>());
  });
}

/// Whether `use` is written into: a DPS init, directly or through
/// reshapes.
bool isWritten(OpOperand &use) {
  Operation *owner = use.getOwner();
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(owner))
    return llvm::any_of(owner->getResult(0).getUses(),
                        [](OpOperand &u) { return isWritten(u); });
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(owner))
    return dps.isDpsInit(&use);
  return false;
}

struct CloneSharedInitsPass
    : public kiln::impl::KilnCloneSharedInitsBase<CloneSharedInitsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> shared;
    getOperation().walk([&](Operation *op) {
      if (isRecomputable(op) && op->getNumResults() == 1 &&
          !op->getResult(0).use_empty() && !op->getResult(0).hasOneUse())
        shared.push_back(op);
    });
    OpBuilder b(&getContext());
    int64_t next = 0;
    for (Operation *op : shared) {
      SmallVector<OpOperand *> written;
      int64_t uses = 0;
      for (OpOperand &use : op->getResult(0).getUses()) {
        ++uses;
        if (isWritten(use))
          written.push_back(&use);
      }
      // With only writers, the first keeps the original; with readers
      // too, every writer gets a clone and the readers the original.
      bool keepOne = (int64_t)written.size() == uses;
      Value empty =
          cast<DestinationStyleOpInterface>(op).getDpsInitOperand(0)->get();
      b.setInsertionPoint(op);
      for (OpOperand *use : llvm::drop_begin(written, keepOne ? 1 : 0)) {
        IRMapping map;
        map.map(empty, b.clone(*empty.getDefiningOp())->getResult(0));
        Operation *clone = b.clone(*op, map);
        clone->setAttr(kCloneTag, b.getI64IntegerAttr(next++));
        use->set(clone->getResult(0));
      }
    }
  }
};

} // namespace
