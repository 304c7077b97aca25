//===- CloneSharedInits.cpp - one initial value per written destination ---===//
//
// CSE merges identical fills and broadcasts: two MatMuls with the same
// output shape share one zero fill, and convolutions whose (folded) biases
// are equal share one bias broadcast. Each of them writes its result into
// that init, so bufferization gives all but one a copy of it: a scalar
// memref.copy of the whole output before the contraction runs. This pass
// gives every op that writes into such a shared init its own clone of the
// cheap op that computes it instead, tagged so that CSE does not merge
// them again. Each clone goes right before the op that takes it, so that
// its buffer lives no longer than that op needs it (eleven convolutions
// sharing one bias would otherwise hold eleven outputs at once).
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

/// Whether `init` is a tensor.empty, or a static-shaped reshape of one
/// (kiln-collapse-elementwise collapses a broadcast's empty so).
bool isEmptyInit(Value init) {
  if (init.getDefiningOp<tensor::EmptyOp>())
    return true;
  Operation *def = init.getDefiningOp();
  return isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def) &&
         cast<RankedTensorType>(init.getType()).hasStaticShape() &&
         isEmptyInit(def->getOperand(0));
}

/// A fill, or a linalg op that only reads constants (a broadcast of a
/// bias), into a tensor.empty: cheaper to recompute than to copy.
bool isRecomputable(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInits() != 1 ||
      !isEmptyInit(linalgOp.getDpsInitOperand(0)->get()))
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

/// Where the clone for `user` goes: right before it, or before the
/// `tensor.pad` that computes one of its inputs (a padded convolution's),
/// so that the clone's buffer is live while the pad copies its source and
/// the memory plan cannot give it the source's bytes: the GPU path then
/// reads the source in place (kiln-gpu-contractions' padding fold). Both
/// are dominated by `shared`, so by everything the clone reads.
Operation *insertionPoint(Operation *shared, Operation *user) {
  Operation *at = user;
  auto dps = dyn_cast<DestinationStyleOpInterface>(user);
  if (!dps || shared->getBlock() != user->getBlock())
    return at;
  for (OpOperand *in : dps.getDpsInputOperands())
    if (auto pad = in->get().getDefiningOp<tensor::PadOp>();
        pad && pad->getBlock() == user->getBlock() &&
        shared->isBeforeInBlock(pad) && pad->isBeforeInBlock(at))
      at = pad;
  return at;
}

/// Whether `op` is an elementwise op that reads the result of a
/// contraction (a linalg op with reduction loops) one of whose inputs is a
/// `tensor.pad`: the epilogue candidate of a tiled convolution that reads
/// the pad's source in place.
bool afterPaddedContraction(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() != 0)
    return false;
  return llvm::any_of(generic.getDpsInputs(), [](Value in) {
    auto producer = in.getDefiningOp<linalg::LinalgOp>();
    return producer && producer.getNumReductionLoops() > 0 &&
           llvm::any_of(producer.getDpsInputs(), [](Value v) {
             return v.getDefiningOp<tensor::PadOp>() != nullptr;
           });
  });
}

/// Gives every reshape of `v` (and of those reshapes, transitively) one
/// use: CSE merges the reshapes too, so the convolutions that share a bias
/// broadcast share the one `tensor.expand_shape` of it (and a collapse of
/// that) as their init, and the broadcast itself has a single use. Each
/// use after the first gets a clone of the reshape right before its owner;
/// reshapes are views, cloning them costs nothing.
void unshareReshapes(OpBuilder &b, Value v) {
  SmallVector<Operation *> reshapes;
  for (Operation *user : v.getUsers())
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user) &&
        !llvm::is_contained(reshapes, user))
      reshapes.push_back(user);
  for (Operation *reshape : reshapes) {
    SmallVector<Operation *> copies = {reshape};
    SmallVector<OpOperand *> uses = llvm::map_to_vector(
        reshape->getResult(0).getUses(), [](OpOperand &u) { return &u; });
    // The first in program order keeps the original (use lists are not in
    // program order).
    if (llvm::all_of(uses, [&](OpOperand *u) {
          return u->getOwner()->getBlock() == reshape->getBlock();
        }))
      llvm::stable_sort(uses, [](OpOperand *x, OpOperand *y) {
        return x->getOwner()->isBeforeInBlock(y->getOwner());
      });
    for (OpOperand *use : llvm::drop_begin(uses)) {
      b.setInsertionPoint(use->getOwner());
      Operation *copy = b.clone(*reshape);
      use->set(copy->getResult(0));
      copies.push_back(copy);
    }
    for (Operation *copy : copies)
      unshareReshapes(b, copy->getResult(0));
  }
}

struct CloneSharedInitsPass
    : public kiln::impl::KilnCloneSharedInitsBase<CloneSharedInitsPass> {
  using Base::Base;
  void runOnOperation() override {
    OpBuilder b(&getContext());
    SmallVector<Operation *> recomputable;
    getOperation().walk([&](Operation *op) {
      if (isRecomputable(op) && op->getNumResults() == 1)
        recomputable.push_back(op);
    });
    for (Operation *op : recomputable)
      unshareReshapes(b, op->getResult(0));
    SmallVector<Operation *> shared;
    for (Operation *op : recomputable)
      if (!op->getResult(0).use_empty() && !op->getResult(0).hasOneUse())
        shared.push_back(op);
    int64_t next = 0;
    for (Operation *op : shared) {
      SmallVector<OpOperand *> written;
      int64_t uses = 0;
      for (OpOperand &use : op->getResult(0).getUses()) {
        ++uses;
        if (isWritten(use))
          written.push_back(&use);
      }
      // In program order (use lists are not): the original, computed
      // before them all, goes to the first.
      if (llvm::all_of(written, [&](OpOperand *u) {
            return u->getOwner()->getBlock() == op->getBlock();
          }))
        llvm::stable_sort(written, [](OpOperand *x, OpOperand *y) {
          return x->getOwner()->isBeforeInBlock(y->getOwner());
        });
      // With only writers, the first keeps the original; with readers
      // too, every writer gets a clone and the readers the original.
      bool keepOne = (int64_t)written.size() == uses;
      Value empty =
          cast<DestinationStyleOpInterface>(op).getDpsInitOperand(0)->get();
      for (OpOperand *use : llvm::drop_begin(written, keepOne ? 1 : 0)) {
        b.setInsertionPoint(insertionPoint(op, use->getOwner()));
        IRMapping map;
        if (empty.getDefiningOp<tensor::EmptyOp>()) {
          map.map(empty, b.clone(*empty.getDefiningOp())->getResult(0));
        } else { // a reshaped empty: an empty of the reshaped type
          auto type = cast<RankedTensorType>(empty.getType());
          map.map(empty,
                  tensor::EmptyOp::create(b, op->getLoc(), type.getShape(),
                                          type.getElementType()));
        }
        Operation *clone = b.clone(*op, map);
        clone->setAttr(kCloneTag, b.getI64IntegerAttr(next++));
        use->set(clone->getResult(0));
      }
    }
    if (!empties)
      return;
    // A tensor.empty that several ops write into (CSE merges them) would
    // give them one buffer, reused whenever tensor semantics allow. On the
    // GPU that can be a buffer a tiled contraction still reads in place (a
    // padded input's source) when the elementwise op after it writes there,
    // which keeps that op out of the contraction's epilogue. Such an op
    // gets its own tensor.empty, and the memory plan, which knows those
    // reads, shares the bytes. (Not every writer: one that writes in place
    // into what it reads keeps its epilogue that way.)
    SmallVector<tensor::EmptyOp> emptyOps;
    getOperation().walk([&](tensor::EmptyOp e) {
      if (!e->hasOneUse() && !e->use_empty())
        emptyOps.push_back(e);
    });
    for (tensor::EmptyOp e : emptyOps) {
      SmallVector<OpOperand *> written;
      for (OpOperand &use : e->getUses())
        if (isWritten(use) && use.getOwner()->getBlock() == e->getBlock() &&
            afterPaddedContraction(use.getOwner()))
          written.push_back(&use);
      for (OpOperand *use : written) {
        b.setInsertionPoint(insertionPoint(e, use->getOwner()));
        Operation *clone = b.clone(*e);
        clone->setAttr(kCloneTag, b.getI64IntegerAttr(next++));
        use->set(clone->getResult(0));
      }
    }
  }
};

} // namespace
