//===- FormKernels.cpp - the graph function's work into gpu.launch ops ----===//
//
// After bufferization and `convert-linalg-to-parallel-loops`, @main is a
// sequence of loop nests over views. Each becomes a `gpu.launch`: parallel
// loops with one thread per iteration, everything else in a one-thread
// launch. What stays on the host is bookkeeping only (constants, globals,
// views), so the launch plan can be read off the function statically.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/CostModel.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

#include <deque>

namespace kiln {
#define GEN_PASS_DEF_KILNGPUFORMKERNELS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

bool kiln::isBufferView(Operation *op) {
  return isa<memref::ViewOp, memref::SubViewOp, memref::ExpandShapeOp,
             memref::CollapseShapeOp, memref::ReshapeOp,
             memref::ReinterpretCastOp, memref::CastOp>(op);
}

FailureOr<kiln::BufferBytes> kiln::bufferBytes(Value v) {
  while (true) {
    if (isa<BlockArgument>(v))
      return BufferBytes{v};
    Operation *def = v.getDefiningOp();
    if (auto global = dyn_cast<memref::GetGlobalOp>(def))
      return BufferBytes{global.getResult()};
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      auto type = cast<MemRefType>(view.getType());
      std::optional<int64_t> offset = getConstantIntValue(view.getByteShift());
      if (!offset || !type.hasStaticShape() ||
          !isa<BlockArgument>(view.getSource()))
        return failure();
      int64_t size =
          type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
      return BufferBytes{view.getSource(), *offset, *offset + size};
    }
    if (isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
            memref::ReshapeOp, memref::CastOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    return failure();
  }
}

namespace {

/// The ONNX node of `loc` made into an identifier (at most 32 characters);
/// empty if there is none.
std::string nameFromLoc(Location loc) {
  std::string out;
  for (char c : kiln::onnxNodeName(loc)) {
    if (out.size() >= 32)
      break;
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out;
}

/// The constant lower bound, step and trip count of a loop dimension, or
/// failure when any bound is not a constant or the step is not positive.
LogicalResult constantTrips(Value lb, Value ub, Value step, int64_t &lo,
                            int64_t &st, int64_t &trips) {
  APInt l, u, s;
  if (!matchPattern(lb, m_ConstantInt(&l)) ||
      !matchPattern(ub, m_ConstantInt(&u)) ||
      !matchPattern(step, m_ConstantInt(&s)) || s.getSExtValue() <= 0)
    return failure();
  lo = l.getSExtValue();
  st = s.getSExtValue();
  int64_t hi = u.getSExtValue();
  trips = hi > lo ? (hi - lo + st - 1) / st : 0;
  return success();
}

/// Constant bounds and steps of a parallel loop without reductions, or
/// failure.
LogicalResult getConstantBounds(scf::ParallelOp loop,
                                SmallVectorImpl<int64_t> &lbs,
                                SmallVectorImpl<int64_t> &trips,
                                SmallVectorImpl<int64_t> &steps) {
  if (loop.getNumResults() != 0 || !loop.getInitVals().empty())
    return failure();
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    int64_t lo, st, n;
    if (failed(constantTrips(lb, ub, step, lo, st, n)))
      return failure();
    lbs.push_back(lo);
    steps.push_back(st);
    trips.push_back(n);
  }
  return success();
}

/// Rewrites `loop` (no reductions) as a nest of scf.for.
LogicalResult parallelToFor(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError(
        "with reductions inside a GPU kernel is not supported");
  OpBuilder b(loop);
  scf::buildLoopNest(
      b, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), [&](OpBuilder &nb, Location, ValueRange ivs) {
        IRMapping map;
        map.map(loop.getInductionVars(), ivs);
        for (Operation &op : loop.getBody()->without_terminator())
          nb.clone(op, map);
      });
  loop.erase();
  return success();
}

/// A parallel loop whose body is a perfect nest of sequential loops that
/// accumulate into one element per parallel iteration:
///   scf.parallel (ivs) { scf.for (ks...) {
///     ...; %acc = load %out[I]; %r = combine(%v, %acc); store %r, %out[I] } }
/// with I independent of the ks and everything else in the body free of
/// writes. One block per element reduces it cooperatively.
struct RowReduction {
  SmallVector<scf::ForOp> fors;
  SmallVector<int64_t> lbs, trips, steps;
  int64_t size = 1; // iterations of the nest
  // Op handles (mutable: their accessors are not const).
  mutable memref::LoadOp accLoad;
  Operation *combiner = nullptr;
  mutable memref::StoreOp store;

  /// The body of the innermost reduction loop.
  Block *innermost() const {
    scf::ForOp last = fors.back();
    return last.getBody();
  }
  /// The combiner's operand that is not the running value.
  Value contribution() const {
    Value acc = accLoad.getResult();
    return combiner->getOperand(0) == acc ? combiner->getOperand(1)
                                          : combiner->getOperand(0);
  }
  /// A copy of the combiner applied to `acc` and `v`.
  Value combine(OpBuilder &b, Value acc, Value v) const {
    IRMapping m;
    m.map(accLoad.getResult(), acc);
    m.map(contribution(), v);
    return b.clone(*combiner, m)->getResult(0);
  }
};

/// The identity of `combiner`'s reduction, or null. Unlike
/// arith::getNeutralElement, a sum starts from -0.0 so that a sum of
/// negative zeros stays -0.0.
TypedAttr reductionIdentity(Operation *combiner) {
  Type t = combiner->getResult(0).getType();
  Builder b(combiner->getContext());
  if (auto ft = dyn_cast<FloatType>(t)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    if (isa<arith::AddFOp>(combiner))
      return b.getFloatAttr(ft, llvm::APFloat::getZero(sem, /*Negative=*/true));
    if (isa<arith::MulFOp>(combiner))
      return b.getFloatAttr(ft, 1.0);
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
      return b.getFloatAttr(ft, llvm::APFloat::getInf(sem, /*Negative=*/true));
    if (isa<arith::MinimumFOp, arith::MinNumFOp>(combiner))
      return b.getFloatAttr(ft, llvm::APFloat::getInf(sem, /*Negative=*/false));
    return {};
  }
  if (auto it = dyn_cast<IntegerType>(t)) {
    unsigned w = it.getWidth();
    if (isa<arith::AddIOp, arith::OrIOp, arith::XOrIOp>(combiner))
      return b.getIntegerAttr(it, 0);
    if (isa<arith::MulIOp>(combiner))
      return b.getIntegerAttr(it, 1);
    if (isa<arith::MaxSIOp>(combiner))
      return b.getIntegerAttr(it, APInt::getSignedMinValue(w));
    if (isa<arith::MinSIOp>(combiner))
      return b.getIntegerAttr(it, APInt::getSignedMaxValue(w));
    if (isa<arith::AndIOp>(combiner))
      return b.getIntegerAttr(it, APInt::getAllOnes(w));
  }
  return {};
}

std::optional<RowReduction> matchRowReduction(scf::ParallelOp loop) {
  RowReduction r;
  Block *body = loop.getBody();
  auto single = [](Block *b) -> Operation * {
    auto ops = b->without_terminator();
    return std::distance(ops.begin(), ops.end()) == 1 ? &*ops.begin() : nullptr;
  };
  auto first = dyn_cast_or_null<scf::ForOp>(single(body));
  if (!first)
    return std::nullopt;
  for (scf::ForOp f = first; f;) {
    if (f.getNumResults() != 0)
      return std::nullopt;
    int64_t lo, st, n;
    if (failed(constantTrips(f.getLowerBound(), f.getUpperBound(), f.getStep(),
                             lo, st, n)))
      return std::nullopt;
    r.fors.push_back(f);
    r.lbs.push_back(lo);
    r.steps.push_back(st);
    r.trips.push_back(n);
    r.size *= n;
    f = dyn_cast_or_null<scf::ForOp>(single(f.getBody()));
  }
  Block *inner = r.fors.back().getBody();
  auto ops = inner->without_terminator();
  if (ops.empty())
    return std::nullopt;
  r.store = dyn_cast<memref::StoreOp>(&*std::prev(ops.end()));
  if (!r.store)
    return std::nullopt;
  r.combiner = r.store.getValueToStore().getDefiningOp();
  if (!r.combiner || r.combiner->getBlock() != inner ||
      r.combiner->getNumOperands() != 2 || !r.combiner->hasOneUse() ||
      !reductionIdentity(r.combiner))
    return std::nullopt;
  for (Value operand : r.combiner->getOperands())
    if (auto l = operand.getDefiningOp<memref::LoadOp>();
        l && l->getBlock() == inner && l.getMemRef() == r.store.getMemRef() &&
        l.getIndices() == r.store.getIndices() && l->hasOneUse())
      r.accLoad = l;
  if (!r.accLoad)
    return std::nullopt;
  // The element does not move with the reduction loops.
  for (Value idx : r.store.getIndices())
    if (r.fors.front()->isAncestor(idx.getParentBlock()->getParentOp()) ||
        (idx.getDefiningOp() &&
         r.fors.front()->isAncestor(idx.getDefiningOp())))
      return std::nullopt;
  // Nothing else writes memory.
  for (Operation &op : ops)
    if (&op != r.store.getOperation() && !isa<memref::LoadOp>(op) &&
        !isMemoryEffectFree(&op))
      return std::nullopt;
  return r;
}

/// Planted bugs for the emulator's mutation tests (`test-mutation`).
enum class Mutation { None, DropBarrier, ShortReduction, ShuffleUp };

/// Folds elements start, start + step, ... < end of reduction `r` (linear
/// positions in its loop nest) into a register value from the identity;
/// `map` maps the parallel loop's ivs.
template <typename ConstFn, typename DelinearizeFn>
Value foldReduction(OpBuilder &b, Location loc, const RowReduction &r,
                    const IRMapping &map, Value start, int64_t end,
                    int64_t step, ConstFn kcst, DelinearizeFn delinearize) {
  Value identity =
      arith::ConstantOp::create(b, loc, reductionIdentity(r.combiner));
  Value accValue = r.accLoad.getResult();
  SmallVector<Value> forIvs;
  for (scf::ForOp f : r.fors)
    forIvs.push_back(f.getInductionVar());
  auto loop = scf::ForOp::create(
      b, loc, start, kcst(end), kcst(step), ValueRange{identity},
      [&](OpBuilder &nb, Location, Value k, ValueRange args) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        IRMapping inner = map;
        delinearize(k, r.trips, r.lbs, r.steps, forIvs, inner);
        for (Operation &op : r.innermost()->without_terminator())
          if (&op != r.accLoad.getOperation() && &op != r.combiner &&
              &op != r.store.getOperation())
            b.clone(op, inner);
        inner.map(accValue, args[0]);
        Value next = b.clone(*r.combiner, inner)->getResult(0);
        scf::YieldOp::create(b, loc, next);
      });
  return loop.getResult(0);
}

/// Combines `total` into the output element of reduction `r`.
void storeReduction(OpBuilder &b, const RowReduction &r, const IRMapping &map,
                    Value total) {
  IRMapping m = map;
  Value old = b.clone(*r.accLoad, m)->getResult(0);
  m.map(r.combiner->getResult(0), r.combine(b, old, total));
  b.clone(*r.store, m);
}

/// The body of a block-per-output reduction: each thread folds a strided
/// share of the reduction into a partial value, the block combines the
/// partials in shared memory (a tree, halving the active threads after each
/// barrier), and thread 0 combines the result into the output element.
template <typename ConstFn, typename DelinearizeFn>
void buildRowReduction(OpBuilder &b, Location loc, gpu::LaunchOp launch,
                       const IRMapping &map, const RowReduction &r,
                       int64_t block, ConstFn kcst, DelinearizeFn delinearize,
                       Mutation mutation) {
  Value tid = launch.getThreadIds().x;
  Value smem = launch.getWorkgroupAttributions()[0];
  auto combine = [&](Value acc, Value v) { return r.combine(b, acc, v); };
  int64_t end = r.size - (mutation == Mutation::ShortReduction ? 1 : 0);
  Value partial =
      foldReduction(b, loc, r, map, tid, end, block, kcst, delinearize);
  memref::StoreOp::create(b, loc, partial, smem, tid);
  if (mutation != Mutation::DropBarrier)
    gpu::BarrierOp::create(b, loc);
  // 32-bit values finish within warp 0 by shuffles, once the tree has
  // brought the partials down to 32; others finish the tree.
  Type elt = r.combiner->getResult(0).getType();
  bool shuffles = elt.isF32() || elt.isInteger(32);
  int64_t stop = shuffles ? 32 : 1;
  for (int64_t half = block / 2; half >= stop; half /= 2) {
    Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                                         kcst(half));
    auto ifOp = scf::IfOp::create(b, loc, active, false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value other = arith::AddIOp::create(b, loc, tid, kcst(half));
      Value mine = memref::LoadOp::create(b, loc, smem, tid);
      Value theirs = memref::LoadOp::create(b, loc, smem, other);
      memref::StoreOp::create(b, loc, combine(mine, theirs), smem, tid);
    }
    gpu::BarrierOp::create(b, loc);
  }
  // Thread 0 combines the block's total into the output element.
  auto finish = [&](Value blockResult) {
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, kcst(0));
    auto ifOp = scf::IfOp::create(b, loc, first, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    storeReduction(b, r, map, blockResult);
  };
  if (!shuffles) {
    finish(memref::LoadOp::create(b, loc, smem, kcst(0)));
    return;
  }
  Value warp0 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid, kcst(32));
  auto ifOp = scf::IfOp::create(b, loc, warp0, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value v = memref::LoadOp::create(b, loc, smem, tid);
  for (int32_t offset = 16; offset >= 1; offset /= 2) {
    auto shuffle = gpu::ShuffleOp::create(b, loc, v, offset, /*width=*/32,
                                          mutation == Mutation::ShuffleUp
                                              ? gpu::ShuffleMode::UP
                                              : gpu::ShuffleMode::XOR);
    v = combine(v, shuffle.getShuffleResult());
  }
  finish(v);
}

/// Clones the constants `launch` uses into it, so that kernels take
/// buffers only (pattern rewrites between passes hoist them out; the
/// wgmma tiles' zero accumulators are `llvm.mlir.zero`).
void sinkConstants(gpu::LaunchOp launch) {
  (void)sinkOperationsIntoLaunchOp(launch, [](Operation *op) {
    return op->hasTrait<OpTrait::ConstantLike>();
  });
}

/// A memory access of a loop nest: the buffer, the indices, whether it
/// writes, and the top-level parallel loop it is in.
struct Access {
  Value memref;
  SmallVector<Value> indices;
  bool write;
  scf::ParallelOp loop;
};

/// The accesses of `loop` to buffers defined outside it, or failure where
/// it touches memory in another way (a copy, a call).
LogicalResult collectAccesses(scf::ParallelOp loop,
                              SmallVectorImpl<Access> &out) {
  auto outside = [&](Value v) {
    return !loop->isAncestor(v.getParentBlock()->getParentOp());
  };
  WalkResult r = loop.getBody()->walk([&](Operation *op) {
    Value memref;
    ValueRange indices;
    bool write = false;
    if (auto l = dyn_cast<memref::LoadOp>(op)) {
      memref = l.getMemRef();
      indices = l.getIndices();
    } else if (auto st = dyn_cast<memref::StoreOp>(op)) {
      memref = st.getMemRef();
      indices = st.getIndices();
      write = true;
    } else if (auto l = dyn_cast<vector::LoadOp>(op)) {
      memref = l.getBase();
      indices = l.getIndices();
    } else if (auto st = dyn_cast<vector::StoreOp>(op)) {
      memref = st.getBase();
      indices = st.getIndices();
      write = true;
    } else if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op) ||
               op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
               isMemoryEffectFree(op)) {
      return WalkResult::advance();
    } else {
      return WalkResult::interrupt();
    }
    if (outside(memref))
      out.push_back({memref, SmallVector<Value>(indices), write, loop});
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

/// Where `indices` are the induction variables `ivs`, each once, in some
/// order: the position in `ivs` of each index; else nullopt.
std::optional<SmallVector<int64_t>> ivPermutation(ArrayRef<Value> indices,
                                                  ArrayRef<Value> ivs) {
  if (indices.size() != ivs.size())
    return std::nullopt;
  SmallVector<int64_t> perm;
  for (Value x : indices) {
    int64_t pos = llvm::find(ivs, x) - ivs.begin();
    if (pos == static_cast<int64_t>(ivs.size()) ||
        llvm::is_contained(perm, pos))
      return std::nullopt;
    perm.push_back(pos);
  }
  return perm;
}

/// Whether `loops`, run one after another by one block per row (row r of
/// every loop: the iterations whose first `rank` induction variables are
/// r), compute what they compute in sequence: every buffer one of them
/// writes is indexed by the row in its leading `rank` indices, in every
/// access of every loop, through one view, whose rows do not share
/// elements; and no other buffer the loops touch shares bytes with it.
/// Then a block touches only its own row of what the group writes.
/// `pointwise` (a thread per point of loops over one space, `rank` all
/// their dimensions): a written buffer may be indexed by any permutation
/// of the point's induction variables (a transposed store), the same in
/// every access.
bool rowLocal(ArrayRef<scf::ParallelOp> loops, unsigned rank,
              bool pointwise = false) {
  SmallVector<Access> accesses;
  for (scf::ParallelOp loop : loops)
    if (failed(collectAccesses(loop, accesses)))
      return false;
  llvm::SetVector<Value> written, touched;
  for (const Access &a : accesses) {
    touched.insert(a.memref);
    if (a.write)
      written.insert(a.memref);
  }
  DenseMap<Value, SmallVector<int64_t>> order;
  for (const Access &a : accesses) {
    if (!written.contains(a.memref))
      continue;
    if (a.indices.size() < rank)
      return false;
    scf::ParallelOp loop = a.loop;
    SmallVector<Value> ivs = loop.getInductionVars();
    if (pointwise) {
      std::optional<SmallVector<int64_t>> perm = ivPermutation(a.indices, ivs);
      if (!perm)
        return false;
      auto [it, inserted] = order.try_emplace(a.memref, *perm);
      if (!inserted && it->second != *perm)
        return false;
      continue;
    }
    for (unsigned d = 0; d < rank; ++d)
      if (a.indices[d] != ivs[d])
        return false;
  }
  for (Value w : written) {
    auto type = cast<MemRefType>(w.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        llvm::any_of(ArrayRef<int64_t>(strides).take_front(rank),
                     [](int64_t s) { return s == 0; }))
      return false;
  }
  DenseMap<Value, kiln::BufferBytes> bytes;
  for (Value m : touched) {
    FailureOr<kiln::BufferBytes> b = kiln::bufferBytes(m);
    if (failed(b))
      return false;
    bytes[m] = *b;
  }
  for (Value w : written)
    for (Value m : touched)
      if (m != w && bytes[w].overlaps(bytes[m]))
        return false;
  return true;
}

/// Host bookkeeping between the device work: constants, weights, views.
bool isHostOp(Operation *op) {
  return op->hasTrait<OpTrait::ConstantLike>() ||
         isa<memref::GetGlobalOp>(op) || kiln::isBufferView(op);
}

/// The bytes of the buffers defined outside `op` that `op` (and the ops
/// in it) may touch, and of those it may write (an operand of an op
/// without declared effects counts as written); failure where some bytes
/// are not known.
LogicalResult touchedBytes(Operation *op,
                           SmallVectorImpl<kiln::BufferBytes> &touched,
                           SmallVectorImpl<kiln::BufferBytes> &written) {
  WalkResult r = op->walk([&](Operation *inner) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
    for (Value v : inner->getOperands()) {
      if (!isa<MemRefType>(v.getType()) ||
          op->isAncestor(v.getParentBlock()->getParentOp()))
        continue;
      FailureOr<kiln::BufferBytes> b = kiln::bufferBytes(v);
      if (failed(b))
        return WalkResult::interrupt();
      touched.push_back(*b);
      if (!effects || effects.getEffectOnValue<MemoryEffects::Write>(v))
        written.push_back(*b);
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

/// Whether some of `touched` may share bytes with some of `bytes`.
bool anyOverlap(ArrayRef<kiln::BufferBytes> touched,
                ArrayRef<kiln::BufferBytes> bytes) {
  return llvm::any_of(touched, [&](const kiln::BufferBytes &t) {
    return llvm::any_of(
        bytes, [&](const kiln::BufferBytes &b) { return b.overlaps(t); });
  });
}

/// Moves each top-level parallel loop that reads nothing an earlier op
/// writes (a fill, a bias broadcast from the weights, a transpose of a
/// graph input) down to right before the first op that touches the bytes
/// it writes, past work that touches none of them: next to the loop that
/// reads or accumulates into what it writes, with which it can then share
/// a kernel. (Bufferization may leave a depthwise convolution's bias
/// broadcast before the convolution that makes its input, and a padded
/// stem's fill between the input's transpose and its copy into the
/// padding.) Such a loop has no producer it could share a kernel with.
void sinkInits(Block &body) {
  // The last first: a loop moved right before its reader is not then
  // separated from it by an earlier loop moved down to the same reader.
  SmallVector<scf::ParallelOp> loops(body.getOps<scf::ParallelOp>());
  for (scf::ParallelOp loop : llvm::reverse(loops)) {
    SmallVector<Access> accesses;
    if (loop.getNumResults() || failed(collectAccesses(loop, accesses)))
      continue;
    SmallVector<kiln::BufferBytes> writes, reads;
    bool known = true;
    for (const Access &a : accesses) {
      FailureOr<kiln::BufferBytes> b = kiln::bufferBytes(a.memref);
      known &= succeeded(b);
      if (succeeded(b))
        (a.write ? writes : reads).push_back(*b);
    }
    if (!known || writes.empty())
      continue;
    bool produced = false;
    for (Operation *prev = loop->getPrevNode(); prev && !produced;
         prev = prev->getPrevNode()) {
      if (isHostOp(prev))
        continue;
      SmallVector<kiln::BufferBytes> touched, written;
      produced = failed(touchedBytes(prev, touched, written)) ||
                 anyOverlap(written, reads);
    }
    if (produced)
      continue;
    Operation *stop = nullptr;
    for (Operation *next = loop->getNextNode(); next;
         next = next->getNextNode()) {
      if (next->hasTrait<OpTrait::IsTerminator>())
        break;
      if (isHostOp(next))
        continue;
      // Work past which the loop moves may not touch what it writes, nor
      // write what it reads.
      SmallVector<kiln::BufferBytes> touched, written;
      if (failed(touchedBytes(next, touched, written)) ||
          anyOverlap(touched, writes) || anyOverlap(written, reads)) {
        stop = next;
        break;
      }
    }
    if (stop && stop != loop->getNextNode())
      loop->moveBefore(stop);
  }
}

/// Renames the induction variables of each top-level parallel loop whose
/// bounds permute those of the parallel loop before it (only host ops
/// between), where it reads a buffer that loop writes at its own point
/// through a permutation of its induction variables (an activation that
/// writes its result transposed, channels-last, after a depthwise
/// convolution): the dimensions reordered so that it reads that buffer at
/// the same point as the loop before writes it, and the two can run as
/// one kernel of a thread per point. A parallel loop's iterations are
/// unordered: the loop computes what it did.
void alignToProducers(Block &body) {
  scf::ParallelOp prev;
  for (Operation &op : llvm::make_early_inc_range(body)) {
    auto loop = dyn_cast<scf::ParallelOp>(&op);
    if (!loop) {
      if (!isHostOp(&op))
        prev = {};
      continue;
    }
    scf::ParallelOp producer = prev;
    prev = loop;
    SmallVector<int64_t> plbs, ptrips, psteps, lbs, trips, steps;
    SmallVector<Access> produced, read;
    if (!producer || producer.getNumLoops() != loop.getNumLoops() ||
        loop.getNumResults() ||
        failed(getConstantBounds(producer, plbs, ptrips, psteps)) ||
        failed(getConstantBounds(loop, lbs, trips, steps)) ||
        failed(collectAccesses(producer, produced)) ||
        failed(collectAccesses(loop, read)))
      continue;
    // A buffer the producer writes, every access of it at its point, that
    // the loop reads through one permutation of its point.
    SmallVector<Value> pivs = producer.getInductionVars();
    SmallVector<Value> ivs = loop.getInductionVars();
    std::optional<SmallVector<int64_t>> perm;
    for (const Access &w : produced) {
      if (!w.write || llvm::any_of(produced, [&](const Access &a) {
            return a.memref == w.memref && !llvm::equal(a.indices, pivs);
          }))
        continue;
      std::optional<SmallVector<int64_t>> p;
      bool same = true;
      for (const Access &a : read)
        if (a.memref == w.memref) {
          std::optional<SmallVector<int64_t>> q = ivPermutation(a.indices, ivs);
          same &= q && (!p || *p == *q);
          p = q;
        }
      if (p && same) {
        perm = p;
        break;
      }
    }
    if (!perm)
      continue;
    bool identity = true, fits = true;
    for (auto [k, d] : llvm::enumerate(*perm)) {
      identity &= d == static_cast<int64_t>(k);
      fits &=
          plbs[k] == lbs[d] && ptrips[k] == trips[d] && psteps[k] == steps[d];
    }
    if (identity || !fits)
      continue;
    OpBuilder b(loop);
    SmallVector<Value> newLbs, newUbs, newSteps;
    for (int64_t d : *perm) {
      newLbs.push_back(loop.getLowerBound()[d]);
      newUbs.push_back(loop.getUpperBound()[d]);
      newSteps.push_back(loop.getStep()[d]);
    }
    auto aligned =
        scf::ParallelOp::create(b, loop.getLoc(), newLbs, newUbs, newSteps);
    IRMapping map;
    for (auto [k, d] : llvm::enumerate(*perm))
      map.map(ivs[d], aligned.getInductionVars()[k]);
    OpBuilder nb = OpBuilder::atBlockTerminator(aligned.getBody());
    for (Operation &inner : loop.getBody()->without_terminator())
      nb.clone(inner, map);
    aligned->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
    loop->erase();
    prev = aligned;
  }
}

/// Loop nests that run as one kernel of a block per row (see rowLocal):
/// groups `first` to `last` of the pass, whose loops share their leading
/// `rank` dimensions (bounds `lbs`, `trips`, `steps`).
struct RowGroup {
  SmallVector<scf::ParallelOp> loops;
  unsigned rank = 0;
  SmallVector<int64_t> lbs, trips, steps;
  unsigned first = 0, last = 0;
  /// Loops over one and the same space, a thread per point (no barriers):
  /// each thread touches only its own point of what the group writes.
  bool pointwise = false;
};

struct FormKernelsPass
    : public kiln::impl::KilnGpuFormKernelsBase<FormKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    if (blockSize <= 0 || blockSize % 32 != 0 || blockSize > 1024) {
      fn.emitError("kiln-gpu-form-kernels: block-size must be a multiple "
                   "of 32 from 32 to 1024");
      return signalPassFailure();
    }
    if (!llvm::hasSingleElement(fn.getBody())) {
      fn.emitError("a GPU graph function must be one block");
      return signalPassFailure();
    }
    Block &body = fn.front();
    Mutation mutation = Mutation::None;
    if (testMutation == "drop-barrier")
      mutation = Mutation::DropBarrier;
    else if (testMutation == "short-reduction")
      mutation = Mutation::ShortReduction;
    else if (testMutation == "shuffle-up")
      mutation = Mutation::ShuffleUp;
    else if (!testMutation.empty()) {
      fn.emitError("kiln-gpu-form-kernels: unknown test-mutation '")
          << testMutation << "'";
      return signalPassFailure();
    }

    // Deallocations: the runtime owns every buffer.
    for (Operation &op : llvm::make_early_inc_range(body))
      if (isa<memref::DeallocOp>(op))
        op.erase();
    if (rowGroupsOption) {
      sinkInits(body);
      alignToProducers(body);
    }

    // Which top-level ops are device work, and the range of ops each must
    // share a launch with (up to the last use of its results).
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    DenseMap<Operation *, unsigned> index;
    for (auto [i, op] : llvm::enumerate(ops))
      index[op] = i;
    llvm::DenseSet<Value> deviceValues;
    SmallVector<bool> isDevice(ops.size(), false);
    SmallVector<unsigned> reach(ops.size());
    for (auto [i, op] : llvm::enumerate(ops)) {
      reach[i] = i;
      bool usesDevice = false;
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          usesDevice |= deviceValues.contains(v);
      });
      bool host = !usesDevice && isHostOp(op);
      if (isa<memref::AllocOp, memref::AllocaOp>(op) && !usesDevice) {
        op->emitOpError("allocates a buffer the memory plan does not place "
                        "(dynamic shape?); GPU modules need every "
                        "intermediate buffer in the arena");
        return signalPassFailure();
      }
      if (host)
        continue;
      isDevice[i] = true;
      for (Value r : op->getResults()) {
        deviceValues.insert(r);
        for (Operation *user : r.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          if (top == body.getTerminator()) {
            op->emitOpError("computes a value the graph function returns; "
                            "GPU graph functions return through "
                            "out-parameters");
            return signalPassFailure();
          }
          reach[i] = std::max(reach[i], index.lookup(top));
        }
      }
    }

    // Groups: maximal ranges of ops closed under `reach`.
    struct Group {
      unsigned begin, end; // inclusive
    };
    SmallVector<Group> groups;
    for (unsigned i = 0; i < ops.size(); ++i) {
      if (!isDevice[i])
        continue;
      if (!groups.empty() && i <= groups.back().end) {
        groups.back().end = std::max(groups.back().end, reach[i]);
        continue;
      }
      groups.push_back({i, reach[i]});
    }

    // Row groups: runs of consecutive groups, each one parallel loop, that
    // share their leading (row) dimensions with a reduction that gets a
    // block per output and touch only their own row of what they write
    // (see rowLocal): they become one kernel of a block per row, the loops
    // one after another with a barrier between (a normalization's or a
    // softmax's reductions and elementwise passes, with the elementwise
    // producers before and consumers after them).
    auto memberLoop = [&](const Group &g) -> scf::ParallelOp {
      scf::ParallelOp loop;
      for (unsigned i = g.begin; i <= g.end; ++i) {
        if (!isDevice[i])
          continue;
        if (loop)
          return {};
        loop = dyn_cast<scf::ParallelOp>(ops[i]);
        if (!loop)
          return {};
      }
      return loop;
    };
    struct Bounds {
      SmallVector<int64_t> lbs, trips, steps;
    };
    auto boundsOf = [](scf::ParallelOp loop) -> std::optional<Bounds> {
      Bounds bounds;
      if (!loop ||
          failed(getConstantBounds(loop, bounds.lbs, bounds.trips,
                                   bounds.steps)) ||
          llvm::is_contained(bounds.trips, 0))
        return std::nullopt;
      return bounds;
    };
    std::vector<RowGroup> rowGroups;
    SmallVector<int> rowGroupOf(groups.size(), -1);
    // Grows a run of groups around `a` (its loop `anchor`) while `fits`
    // accepts the neighbour and the run stays row-local over `rank`
    // dimensions; records it when it has more than one loop.
    auto grow = [&](unsigned a, scf::ParallelOp anchor, const Bounds &bounds,
                    unsigned rank, bool pointwise,
                    function_ref<bool(unsigned)> fits) {
      std::deque<scf::ParallelOp> loops = {anchor};
      auto tryAdd = [&](unsigned j, bool front) {
        if (rowGroupOf[j] >= 0 || !fits(j))
          return false;
        scf::ParallelOp loop = memberLoop(groups[j]);
        SmallVector<scf::ParallelOp> trial(loops.begin(), loops.end());
        trial.insert(front ? trial.begin() : trial.end(), loop);
        if (!rowLocal(trial, rank, pointwise))
          return false;
        if (front)
          loops.push_front(loop);
        else
          loops.push_back(loop);
        return true;
      };
      unsigned lo = a, hi = a;
      while (lo > 0 && tryAdd(lo - 1, /*front=*/true))
        --lo;
      while (hi + 1 < groups.size() && tryAdd(hi + 1, /*front=*/false))
        ++hi;
      if (lo == hi)
        return;
      RowGroup rg;
      rg.loops.assign(loops.begin(), loops.end());
      rg.rank = rank;
      rg.lbs = bounds.lbs;
      rg.trips = bounds.trips;
      rg.steps = bounds.steps;
      rg.first = lo;
      rg.last = hi;
      rg.pointwise = pointwise;
      for (unsigned j = lo; j <= hi; ++j)
        rowGroupOf[j] = rowGroups.size();
      rowGroups.push_back(std::move(rg));
    };
    for (unsigned a = 0;
         a < groups.size() && rowGroupsOption && reductionMinSize > 0; ++a) {
      scf::ParallelOp anchor = memberLoop(groups[a]);
      std::optional<Bounds> anchorBounds = boundsOf(anchor);
      if (rowGroupOf[a] >= 0 || !anchorBounds)
        continue;
      std::optional<RowReduction> r = matchRowReduction(anchor);
      int64_t rows = 1;
      for (int64_t t : anchorBounds->trips)
        rows *= t;
      if (!r || r->size < reductionMinSize || rows > 65536)
        continue;
      unsigned rank = anchor.getNumLoops();
      Type elt = r->combiner->getResult(0).getType();
      grow(a, anchor, *anchorBounds, rank, /*pointwise=*/false,
           [&](unsigned j) {
             scf::ParallelOp loop = memberLoop(groups[j]);
             std::optional<Bounds> bounds = boundsOf(loop);
             if (!bounds || loop.getNumLoops() < rank)
               return false;
             for (unsigned d = 0; d < rank; ++d)
               if (bounds->lbs[d] != anchorBounds->lbs[d] ||
                   bounds->trips[d] != anchorBounds->trips[d] ||
                   bounds->steps[d] != anchorBounds->steps[d])
                 return false;
             // Reductions a block shares need one element type (one
             // shared-memory buffer).
             if (loop.getNumLoops() == rank)
               if (std::optional<RowReduction> other = matchRowReduction(loop))
                 if (other->combiner->getResult(0).getType() != elt)
                   return false;
             return true;
           });
    }
    // Pointwise groups: runs of loops over the same space (all their
    // dimensions) that each write only their own point of what the run
    // writes (rowLocal over every dimension): a bias broadcast, the
    // short accumulation into it (a depthwise convolution's window, a
    // pooling window) and the activation after it run as one kernel of a
    // thread per point. Reductions that get a block per output stay out.
    auto blockWorthy = [&](scf::ParallelOp loop, const Bounds &bounds) {
      std::optional<RowReduction> r = matchRowReduction(loop);
      int64_t outputs = 1;
      for (int64_t t : bounds.trips)
        outputs *= t;
      return r && reductionMinSize > 0 && r->size >= reductionMinSize &&
             outputs <= 65536;
    };
    for (unsigned a = 0; a < groups.size() && rowGroupsOption; ++a) {
      scf::ParallelOp anchor = memberLoop(groups[a]);
      std::optional<Bounds> anchorBounds = boundsOf(anchor);
      if (rowGroupOf[a] >= 0 || !anchorBounds ||
          blockWorthy(anchor, *anchorBounds))
        continue;
      grow(a, anchor, *anchorBounds, anchor.getNumLoops(), /*pointwise=*/true,
           [&](unsigned j) {
             scf::ParallelOp loop = memberLoop(groups[j]);
             std::optional<Bounds> bounds = boundsOf(loop);
             return bounds && loop.getNumLoops() == anchor.getNumLoops() &&
                    bounds->lbs == anchorBounds->lbs &&
                    bounds->trips == anchorBounds->trips &&
                    bounds->steps == anchorBounds->steps &&
                    !blockWorthy(loop, *bounds);
           });
    }

    MLIRContext *ctx = &getContext();
    auto moduleSym = FlatSymbolRefAttr::get(ctx, "kiln_kernels");
    unsigned kernelCount = 0;
    SmallVector<NamedAttribute> kernelCosts;
    llvm::scope_exit recordCosts([&] {
      getOperation()->setAttr("kiln.kernel_costs",
                              DictionaryAttr::get(ctx, kernelCosts));
    });
    for (unsigned gi = 0; gi < groups.size(); ++gi) {
      Group g = groups[gi];
      SmallVector<Operation *> members;
      RowGroup *rowGroup = nullptr;
      if (rowGroupOf[gi] >= 0) {
        rowGroup = &rowGroups[rowGroupOf[gi]];
        for (scf::ParallelOp loop : rowGroup->loops)
          members.push_back(loop);
        g = groups[rowGroup->last];
        gi = rowGroup->last;
      } else {
        for (unsigned i = g.begin; i <= g.end; ++i)
          if (isDevice[i])
            members.push_back(ops[i]);
      }
      Operation *first = members.front();
      std::string name = "k" + std::to_string(kernelCount++);
      if (std::string n = nameFromLoc(first->getLoc()); !n.empty())
        name += "_" + n;
      auto funcSym = FlatSymbolRefAttr::get(ctx, name);

      // A kernel already formed (a tiled contraction): named and costed
      // here like the others, its body kept.
      if (auto formed = dyn_cast<gpu::LaunchOp>(first)) {
        if (members.size() != 1) {
          formed.emitOpError("shares a kernel with other work (a value "
                             "computed on the device crosses it)");
          return signalPassFailure();
        }
        sinkConstants(formed);
        formed.setModuleAttr(moduleSym);
        formed.setFunctionAttr(funcSym);
        auto cost = formed->getAttrOfType<DenseI64ArrayAttr>("kiln.cost");
        formed->removeAttr("kiln.cost");
        kernelCosts.push_back(NamedAttribute(
            StringAttr::get(ctx, name),
            cost ? cost : DenseI64ArrayAttr::get(ctx, {-1, -1})));
        continue;
      }

      OpBuilder b(ctx);
      b.setInsertionPointAfter(ops[g.end]);
      Location loc = first->getLoc();
      auto cst = [&](int64_t v) {
        return arith::ConstantIndexOp::create(b, loc, v).getResult();
      };

      auto loop = dyn_cast<scf::ParallelOp>(first);
      SmallVector<int64_t> lbs, trips, steps;
      bool parallel = !rowGroup && members.size() == 1 && loop &&
                      succeeded(getConstantBounds(loop, lbs, trips, steps));
      int64_t total = 1;
      for (int64_t t : trips)
        total *= t;
      if (parallel && total == 0) {
        first->erase();
        continue;
      }
      // Reductions of at least `reduction-min-size` elements per output
      // get a block per output, as long as there are not so many outputs
      // that a thread per output fills the GPU anyway.
      std::optional<RowReduction> accumulation;
      if (parallel)
        accumulation = matchRowReduction(loop);
      bool blockPerOutput = accumulation && reductionMinSize > 0 &&
                            accumulation->size >= reductionMinSize &&
                            total <= 65536;
      int64_t block = 1, grid = 1;
      SmallVector<Type> workgroup;
      if (rowGroup && rowGroup->pointwise) {
        int64_t points = 1;
        for (int64_t t : rowGroup->trips)
          points *= t;
        block = std::min<int64_t>(blockSize, (points + 31) / 32 * 32);
        grid = (points + block - 1) / block;
      } else if (rowGroup) {
        // Enough threads for the widest loop of a row.
        int64_t widest = 1;
        Type sharedType;
        for (scf::ParallelOp l : rowGroup->loops) {
          SmallVector<int64_t> ls, ts, ss;
          (void)getConstantBounds(l, ls, ts, ss);
          int64_t inner = 1;
          for (int64_t t : ArrayRef<int64_t>(ts).drop_front(rowGroup->rank))
            inner *= t;
          if (ts.size() == rowGroup->rank)
            if (std::optional<RowReduction> r = matchRowReduction(l)) {
              inner = r->size;
              sharedType = r->combiner->getResult(0).getType();
            }
          widest = std::max(widest, inner);
        }
        block = 32;
        while (block < blockSize && block < widest)
          block *= 2;
        grid = 1;
        for (int64_t t : rowGroup->trips)
          grid *= t;
        if (sharedType)
          workgroup.push_back(MemRefType::get(
              {block}, sharedType, MemRefLayoutAttrInterface(),
              gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
      } else if (blockPerOutput) {
        block = 32;
        while (block < blockSize && block < accumulation->size)
          block *= 2;
        grid = total;
        Type elt = accumulation->combiner->getResult(0).getType();
        workgroup.push_back(MemRefType::get(
            {block}, elt, MemRefLayoutAttrInterface(),
            gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));
      } else if (parallel) {
        block = std::min<int64_t>(blockSize, (total + 31) / 32 * 32);
        grid = (total + block - 1) / block;
      }
      // What the kernel computes and moves, for the profiler's roofline.
      kiln::ComputeCost cost = kiln::estimateCost(members);
      kernelCosts.push_back(NamedAttribute(
          StringAttr::get(ctx, name),
          DenseI64ArrayAttr::get(ctx, {cost.flops, cost.bytes})));
      Value gridSize = cst(grid), blockSize = cst(block), c1 = cst(1);
      auto launch = gpu::LaunchOp::create(
          b, loc, gridSize, c1, c1, blockSize, c1, c1,
          /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
          /*asyncDependencies=*/{}, workgroup,
          /*privateAttributions=*/{}, nullptr, nullptr, nullptr, moduleSym,
          funcSym);
      Block &kb = launch.getBody().front();
      b.setInsertionPointToStart(&kb);
      // Index constants of the kernel, once each, at its start.
      DenseMap<int64_t, Value> kernelConstants;
      auto kcst = [&](int64_t v) {
        Value &c = kernelConstants[v];
        if (!c) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&kb);
          c = arith::ConstantIndexOp::create(b, loc, v);
        }
        return c;
      };
      // Delinearizes `linear` over `trips` (innermost fastest) into
      // lb + pos * step for each of `ivs`.
      auto delinearize = [&](Value linear, ArrayRef<int64_t> trips,
                             ArrayRef<int64_t> lbs, ArrayRef<int64_t> steps,
                             ValueRange ivs, IRMapping &map) {
        Value rest = linear;
        for (int d = static_cast<int>(trips.size()) - 1; d >= 0; --d) {
          Value pos = d == 0
                          ? rest
                          : arith::RemUIOp::create(b, loc, rest, kcst(trips[d]))
                                .getResult();
          if (d > 0)
            rest = arith::DivUIOp::create(b, loc, rest, kcst(trips[d]));
          Value iv = pos;
          if (steps[d] != 1)
            iv = arith::MulIOp::create(b, loc, iv, kcst(steps[d]));
          if (lbs[d] != 0)
            iv = arith::AddIOp::create(b, loc, iv, kcst(lbs[d]));
          map.map(ivs[d], iv);
        }
      };
      // id = blockIdx.x * blockDim.x + threadIdx.x; the insertion point
      // moves into a guard id < limit.
      auto guardedThreadId = [&](int64_t limit) {
        Value id = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, launch.getBlockIds().x, kcst(block)),
            launch.getThreadIds().x);
        Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              id, kcst(limit));
        auto guard = scf::IfOp::create(b, loc, inRange, false);
        b.setInsertionPointToStart(guard.thenBlock());
        return id;
      };
      // One point of `l` (ivs in `map`): an accumulation into one element
      // per point keeps its running value in a register and stores once.
      auto emitPoint = [&](scf::ParallelOp l, IRMapping &map,
                           const std::optional<RowReduction> &acc) {
        if (acc) {
          Value sum = foldReduction(b, loc, *acc, map, kcst(0), acc->size, 1,
                                    kcst, delinearize);
          storeReduction(b, *acc, map, sum);
        } else {
          for (Operation &op : l.getBody()->without_terminator())
            b.clone(op, map);
        }
      };
      if (rowGroup && rowGroup->pointwise) {
        // Thread id runs point id of every loop, one after another.
        int64_t points = 1;
        for (int64_t t : rowGroup->trips)
          points *= t;
        Value id = guardedThreadId(points);
        for (scf::ParallelOp l : rowGroup->loops) {
          IRMapping map;
          delinearize(id, rowGroup->trips, rowGroup->lbs, rowGroup->steps,
                      l.getInductionVars(), map);
          emitPoint(l, map, matchRowReduction(l));
        }
        b.setInsertionPointToEnd(&kb);
      } else if (rowGroup) {
        // Block b runs row b of every loop, a barrier between loops.
        Value tid = launch.getThreadIds().x;
        unsigned rank = rowGroup->rank;
        for (auto [li, l] : llvm::enumerate(rowGroup->loops)) {
          SmallVector<int64_t> ls, ts, ss;
          (void)getConstantBounds(l, ls, ts, ss);
          SmallVector<Value> ivVector = l.getInductionVars();
          ValueRange ivs = ivVector;
          IRMapping map;
          delinearize(launch.getBlockIds().x, rowGroup->trips, rowGroup->lbs,
                      rowGroup->steps, ivs.take_front(rank), map);
          std::optional<RowReduction> acc = matchRowReduction(l);
          if (ts.size() == rank && acc) {
            // The row's reduction: the block's threads together.
            buildRowReduction(b, loc, launch, map, *acc, block, kcst,
                              delinearize, mutation);
          } else if (ts.size() == rank) {
            // Work of the row alone: its first thread.
            Value first = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::eq, tid, kcst(0));
            auto ifOp = scf::IfOp::create(b, loc, first, false);
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(ifOp.thenBlock());
            for (Operation &op : l.getBody()->without_terminator())
              b.clone(op, map);
          } else {
            // The row's elements: strided over the threads.
            ArrayRef<int64_t> innerTrips =
                ArrayRef<int64_t>(ts).drop_front(rank);
            int64_t inner = 1;
            for (int64_t t : innerTrips)
              inner *= t;
            scf::ForOp::create(
                b, loc, tid, kcst(inner), kcst(block), ValueRange{},
                [&](OpBuilder &nb, Location, Value lin, ValueRange) {
                  OpBuilder::InsertionGuard guard(b);
                  b.setInsertionPoint(nb.getInsertionBlock(),
                                      nb.getInsertionPoint());
                  IRMapping m = map;
                  delinearize(lin, innerTrips,
                              ArrayRef<int64_t>(ls).drop_front(rank),
                              ArrayRef<int64_t>(ss).drop_front(rank),
                              ivs.drop_front(rank), m);
                  emitPoint(l, m, acc);
                  scf::YieldOp::create(b, loc);
                });
          }
          if (li + 1 < rowGroup->loops.size())
            gpu::BarrierOp::create(b, loc);
        }
        b.setInsertionPointToEnd(&kb);
      } else if (blockPerOutput) {
        IRMapping map;
        delinearize(launch.getBlockIds().x, trips, lbs, steps,
                    loop.getInductionVars(), map);
        buildRowReduction(b, loc, launch, map, *accumulation, block, kcst,
                          delinearize, mutation);
        b.setInsertionPointToEnd(&kb);
      } else if (parallel) {
        // The guarded thread id, delinearized (innermost dim fastest)
        // into the loop's ivs.
        Value id = guardedThreadId(total);
        IRMapping map;
        delinearize(id, trips, lbs, steps, loop.getInductionVars(), map);
        emitPoint(loop, map, accumulation);
        b.setInsertionPointToEnd(&kb);
      } else {
        IRMapping map;
        for (Operation *op : members)
          b.clone(*op, map);
      }
      gpu::TerminatorOp::create(b, loc);
      for (Operation *op : llvm::reverse(members))
        op->erase();

      sinkConstants(launch);

      // Inside the kernel: nested parallel loops run sequentially per
      // thread, static allocations are per-thread.
      SmallVector<scf::ParallelOp> nested;
      launch.getBody().walk([&](scf::ParallelOp p) { nested.push_back(p); });
      for (scf::ParallelOp p : nested)
        if (failed(parallelToFor(p)))
          return signalPassFailure();
      WalkResult r = launch.getBody().walk([&](Operation *op) {
        if (isa<memref::DeallocOp>(op)) {
          op->erase();
          return WalkResult::skip();
        }
        if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
          if (!alloc.getType().hasStaticShape()) {
            alloc.emitOpError("of a dynamic shape inside a GPU kernel is "
                              "not supported");
            return WalkResult::interrupt();
          }
          OpBuilder ab(alloc);
          auto alloca =
              memref::AllocaOp::create(ab, alloc.getLoc(), alloc.getType());
          alloc.replaceAllUsesWith(alloca.getResult());
          alloc.erase();
          return WalkResult::skip();
        }
        return WalkResult::advance();
      });
      if (r.wasInterrupted())
        return signalPassFailure();
    }
  }
};
} // namespace
