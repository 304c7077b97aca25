//===- PlanMemory.cpp - intermediate buffers into one arena ---------------===//

#include "kiln/Codegen/MemoryPlan.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#define DEBUG_TYPE "kiln-plan-memory"

namespace kiln {
#define GEN_PASS_DEF_KILNPLANMEMORY
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The buffer `v` views (through subviews and other views), or `v`.
Value viewedBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view || isa<memref::ViewOp>(def))
      break;
    v = view.getViewSource();
  }
  return v;
}

/// The last top-level program point at which `root` or a view of it is
/// used; nullopt if the buffer escapes the function. With `padSources`, a
/// copy of it into a subview of another buffer uses it as long as that
/// buffer is used.
std::optional<int64_t> lastUse(Value root, Block &body,
                               const DenseMap<Operation *, int64_t> &index,
                               bool padSources) {
  int64_t last = -1;
  SmallVector<Value> work = {root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::DeallocOp>(user))
        continue; // Freeing is not a use; the plan replaces it.
      if (isa<func::ReturnOp>(user))
        return std::nullopt;
      if (isa<memref::StoreOp>(user) && use.getOperandNumber() == 0)
        return std::nullopt; // Stored as a value: escapes.
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top)
        return std::nullopt;
      last = std::max(last, index.lookup(top));
      Value target;
      if (auto copy = dyn_cast<memref::CopyOp>(user);
          copy && copy.getSource() == v)
        target = copy.getTarget();
      if (auto copy = dyn_cast<linalg::CopyOp>(user);
          copy && copy.getInputs()[0] == v)
        target = copy.getOutputs()[0];
      if (padSources && target && target.getDefiningOp<memref::SubViewOp>()) {
        Value padded = viewedBuffer(target);
        if (padded.getDefiningOp<memref::AllocOp>()) {
          std::optional<int64_t> paddedEnd =
              lastUse(padded, body, index, /*padSources=*/false);
          if (!paddedEnd)
            return std::nullopt;
          last = std::max(last, *paddedEnd);
        }
      }
      if (isa<ViewLikeOpInterface, memref::ReshapeOp, memref::CastOp>(user))
        for (Value r : user->getResults())
          if (isa<MemRefType>(r.getType()))
            work.push_back(r);
    }
  }
  return last;
}

/// A buffer that the function copies whole into an output argument, which
/// nothing else uses (what buffer-results-to-out-params leaves for a
/// returned allocation), becomes that argument: the result is computed in
/// the caller's buffer, without the copy, and takes no arena space.
void computeOutputsInPlace(Block &body) {
  SmallVector<memref::CopyOp> copies;
  for (Operation &op : body)
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      copies.push_back(copy);
  for (memref::CopyOp copy : copies) {
    auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
    auto arg = dyn_cast<BlockArgument>(copy.getTarget());
    if (!alloc || !arg || arg.getOwner() != &body || !arg.hasOneUse() ||
        alloc->getBlock() != &body || alloc.getType() != arg.getType() ||
        !alloc.getType().getLayout().isIdentity())
      continue;
    // Every other use of the buffer comes before the copy, or is another
    // copy out of it (a value returned twice) or its release.
    bool ok = llvm::all_of(alloc->getUses(), [&](OpOperand &use) {
      Operation *top = body.findAncestorOpInBlock(*use.getOwner());
      return top && (top == copy || top->isBeforeInBlock(copy) ||
                     isa<memref::CopyOp, memref::DeallocOp>(top));
    });
    if (!ok)
      continue;
    copy.erase();
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.getResult().replaceAllUsesWith(arg);
    alloc.erase();
  }
}

/// The op after top-level op `op` that reads what `op` writes (through
/// views), when `op` is a linalg op and the first op after it that reads
/// or writes memory (allocations aside) is that reader; else null.
Operation *epilogueOf(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp)
    return nullptr;
  Operation *next = op->getNextNode();
  while (next && (isMemoryEffectFree(next) || isa<memref::AllocOp>(next)))
    next = next->getNextNode();
  auto consumer = dyn_cast_or_null<linalg::LinalgOp>(next);
  if (!consumer)
    return nullptr;
  for (Value init : linalgOp.getDpsInits())
    for (Value input : consumer.getDpsInputs())
      if (viewedBuffer(input) == viewedBuffer(init))
        return next;
  return nullptr;
}

/// Whether buffer `v` (or a view of it) is yielded, carried by a loop,
/// returned or stored: it may outlive the loop iteration that allocates it.
bool mayEscape(Value v) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<scf::YieldOp, scf::ForOp, scf::WhileOp, func::ReturnOp>(user) ||
        (isa<memref::StoreOp>(user) && use.getOperandNumber() == 0))
      return true;
    if (isa<ViewLikeOpInterface, memref::ReshapeOp, memref::CastOp>(user))
      for (Value r : user->getResults())
        if (isa<MemRefType>(r.getType()) && mayEscape(r))
          return true;
  }
  return false;
}

/// Moves each statically shaped allocation in the body of sequential
/// `scf.for` loops (kiln-cpu-image-loops' loops over the images) to the
/// function's top level, before its outermost loop, so that it is planned
/// like the others and one buffer serves every iteration: each iteration
/// writes it before reading it, and nothing of it outlives the iteration.
/// Allocations in parallel loops (one per thread) stay.
void hoistLoopAllocs(Block &body) {
  SmallVector<memref::AllocOp> allocs;
  for (Operation &top : body)
    if (isa<scf::ForOp>(top))
      top.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  for (memref::AllocOp alloc : allocs) {
    if (!alloc.getType().hasStaticShape() || !alloc->getOperands().empty() ||
        mayEscape(alloc.getResult()))
      continue;
    Operation *outer = alloc;
    bool sequential = true;
    while (outer->getBlock() != &body) {
      outer = outer->getParentOp();
      sequential &= isa<scf::ForOp>(outer);
    }
    if (sequential)
      alloc->moveBefore(outer);
  }
}

struct PlanMemoryPass : public kiln::impl::KilnPlanMemoryBase<PlanMemoryPass> {
  using KilnPlanMemoryBase::KilnPlanMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>("main");
    if (!fn || fn.isExternal())
      return;
    Block &body = fn.getBody().front();
    hoistLoopAllocs(body);
    computeOutputsInPlace(body);
    DenseMap<Operation *, int64_t> index;
    int64_t i = 0;
    SmallVector<Operation *> ops;
    for (Operation &op : body) {
      index[&op] = i++;
      ops.push_back(&op);
    }

    // With attention-inputs-live: each op of an attention chain, the
    // index of the chain's last op.
    DenseMap<Operation *, int64_t> chainEnd;
    if (attentionInputsLive)
      for (Operation *op : ops)
        if (auto g = dyn_cast<linalg::GenericOp>(op); g && !chainEnd.count(op))
          if (std::optional<kiln::AttentionChain> chain =
                  kiln::matchAttentionChain(g))
            for (Operation *member : chain->ops())
              chainEnd[member] = index[chain->last];

    SmallVector<memref::AllocOp> allocs;
    std::vector<kiln::LiveRange> ranges;
    for (Operation &op : body) {
      auto alloc = dyn_cast<memref::AllocOp>(&op);
      if (!alloc)
        continue;
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          type.getMemorySpace() || !type.getElementType().isIntOrFloat())
        continue;
      auto end = lastUse(alloc.getResult(), body, index, padSourcesLive);
      if (!end)
        continue;
      if (epilogueInputsLive && *end >= 0)
        if (Operation *consumer = epilogueOf(ops[*end]))
          end = index[consumer];
      if (*end >= 0)
        if (auto it = chainEnd.find(ops[*end]); it != chainEnd.end())
          end = std::max(*end, it->second);
      unsigned bits = type.getElementType().getIntOrFloatBitWidth();
      int64_t bytes = type.getNumElements() * std::max(1u, (bits + 7) / 8);
      allocs.push_back(alloc);
      ranges.push_back({index[alloc], std::max(*end, index[alloc]), bytes});
    }
    kiln::MemoryPlan plan = kiln::planMemory(ranges, /*alignment=*/64);

    OpBuilder b(&getContext());
    if (!allocs.empty()) {
      auto arenaType = MemRefType::get({plan.arenaBytes}, b.getI8Type());
      unsigned argIndex = fn.getNumArguments();
      if (failed(fn.insertArgument(argIndex, arenaType, {}, fn.getLoc())))
        return signalPassFailure();
      Value arena = fn.getArgument(argIndex);
      for (auto [alloc, offset] : llvm::zip(allocs, plan.offsets)) {
        b.setInsertionPoint(alloc);
        Value off = arith::ConstantIndexOp::create(b, alloc.getLoc(), offset);
        Value view = memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(),
                                            arena, off, ValueRange{});
        // Deallocations of planned buffers go away with the buffers.
        for (Operation *user :
             llvm::make_early_inc_range(alloc.getResult().getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
        alloc.getResult().replaceAllUsesWith(view);
        alloc.erase();
      }
    }
    module->setAttr(
        "kiln.memory_plan",
        b.getDictionaryAttr(
            {b.getNamedAttr("arena_bytes",
                            b.getI64IntegerAttr(plan.arenaBytes)),
             b.getNamedAttr("unplanned_bytes",
                            b.getI64IntegerAttr(plan.unplannedBytes)),
             b.getNamedAttr("lower_bound_bytes",
                            b.getI64IntegerAttr(plan.lowerBoundBytes)),
             b.getNamedAttr("buffers", b.getI64IntegerAttr(ranges.size()))}));
  }
};

} // namespace
