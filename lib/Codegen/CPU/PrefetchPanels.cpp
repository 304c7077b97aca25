//===- PrefetchPanels.cpp - the next block's weight panel into L2 ---------===//
//
// A register-tiled contraction with a constant weight (kiln-pack-weights'
// panels) runs as an scf.forall over blocks, each a contiguous region of
// the weight (one K x nr panel), and in each block a loop over row tiles
// that all sweep that region along k. When the weights do not stay in
// the caches between runs (ResNet-50's late layers hold 9.4 MB per
// convolution), the first row tile of each block streams its region from
// DRAM at the rate the FMAs consume it (128 bytes per k step with AVX-512,
// more than a core's share of the memory bandwidth) and stalls, while the
// other row tiles read it from L2 and leave the memory idle.
//
// This pass spreads the next block's region over the row tiles after the
// first: in each step of their k loops, one `memref.prefetch` (prefetcht1:
// into L2) of a line of the region that follows the block's own, the
// lines advancing evenly over the steps of those tiles, so the next block
// finds its weights in L2 while the memory is read at an even rate. The
// k loop is first unrolled by up to `unroll` steps (a factor that divides
// its trip count), and each unrolled step issues the group's prefetches
// once: the address arithmetic (a multiply, a shift, a clamp, a select)
// per k step cost as much as the prefetch saved on planes that stay in
// the caches (a 1x1 convolution of 512 to 1008 channels on a 13x13 plane,
// 2 Zen 3 cores: docs/performance.md, 2026-12-07 (fifth)). With
// a static OpenMP schedule a thread's blocks are consecutive, so the
// region after a block's is the thread's next one (at the end of a
// thread's range it is the next thread's first, which that thread has
// read by then: a wasted prefetch, no more).
//
// It runs after bufferization, on the loops kiln-cpu-tile-and-vectorize
// wrote: an innermost scf.for (the k loop) directly in an scf.for of at
// least two iterations (the row tiles), inside an scf.forall, reading a
// vector from a view of a constant global whose block, sliced in the
// forall, is a contiguous region of at least `min-bytes`. Prefetches
// never change results.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#define DEBUG_TYPE "kiln-cpu-prefetch-panels"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUPREFETCHPANELS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

constexpr int64_t kLineBytes = 64;

/// The constant trip count of `loop` (upstream's), 0 where it is not
/// constant.
int64_t tripCount(scf::ForOp loop) {
  std::optional<APInt> n = loop.getStaticTripCount();
  return n ? n->getSExtValue() : 0;
}

/// Whether `v` is a view (reshapes and casts) of a constant global.
bool viewsConstantGlobal(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          def, get.getNameAttr());
      return global && global.getConstant();
    }
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
            def))
      return false;
    v = def->getOperand(0);
  }
  return false;
}

/// The block of a constant weight that a read of `base` reads in `forall`: the
/// subview, made in the forall, of a view of a constant global made outside
/// it, through the subviews between them; null where the read is of
/// something else or the block is not one contiguous region of the view.
memref::SubViewOp weightBlock(Value base, scf::ForallOp forall) {
  Value v = base;
  while (auto sv = v.getDefiningOp<memref::SubViewOp>()) {
    Value src = sv.getSource();
    Operation *srcOp = src.getDefiningOp();
    if (!srcOp)
      srcOp = cast<BlockArgument>(src).getOwner()->getParentOp();
    if (!forall->isAncestor(srcOp)) {
      // `sv` slices a value defined outside the forall: the block.
      auto srcType = dyn_cast<MemRefType>(src.getType());
      auto type = sv.getType();
      if (!srcType || !srcType.hasStaticShape() ||
          !srcType.getLayout().isIdentity() || !viewsConstantGlobal(src) ||
          srcType.getRank() != type.getRank() || !sv.hasUnitStride() ||
          !type.hasStaticShape())
        return nullptr;
      // Contiguous: every dim after the first whole.
      for (int64_t d = 1; d < type.getRank(); ++d)
        if (type.getDimSize(d) != srcType.getDimSize(d))
          return nullptr;
      return sv;
    }
    v = src;
  }
  return nullptr;
}

struct PrefetchPanelsPass
    : public kiln::impl::KilnCpuPrefetchPanelsBase<PrefetchPanelsPass> {
  using Base::Base;

  void runOnOperation() override {
    // Per k loop, the weight blocks it reads (one prefetch stream each).
    llvm::MapVector<Operation *, SmallVector<memref::SubViewOp>> work;
    getOperation().walk([&](scf::ForOp kLoop) {
      if (!kLoop.getBody()->getOps<scf::ForOp>().empty() ||
          tripCount(kLoop) < 1)
        return;
      auto rows = dyn_cast<scf::ForOp>(kLoop->getParentOp());
      auto forall = kLoop->getParentOfType<scf::ForallOp>();
      if (!rows || !forall || tripCount(rows) < 2)
        return;
      for (Operation &op : kLoop.getBody()->without_terminator()) {
        Value base;
        if (auto r = dyn_cast<vector::TransferReadOp>(op))
          base = r.getBase();
        else if (auto l = dyn_cast<vector::LoadOp>(op))
          base = l.getBase();
        if (!base || !isa<MemRefType>(base.getType()))
          continue;
        memref::SubViewOp block = weightBlock(base, forall);
        if (!block)
          continue;
        MemRefType type = block.getType();
        int64_t bytes = type.getNumElements() *
                        llvm::divideCeil(type.getElementTypeBitWidth(), 8);
        if (bytes < minBytes)
          continue;
        auto &blocks = work[kLoop];
        if (!llvm::is_contained(blocks, block))
          blocks.push_back(block);
      }
    });
    for (auto &[op, blocks] : work)
      for (memref::SubViewOp block : blocks)
        prefetch(cast<scf::ForOp>(op), block);
  }

  /// Row tile t >= 1 of `rows`, at the group of u steps of `kLoop` that
  /// starts at step i, prefetches the lines [j, j + perStep) of the region
  /// after `block`, j = s * lines / steps (s = (t - 1) * K + i, steps =
  /// (tiles - 1) * K, as fixed point; perStep enough lines for u steps);
  /// row tile 0 prefetches its own block's first line (an L1 hit).
  void prefetch(scf::ForOp kLoop, memref::SubViewOp block) {
    auto rows = cast<scf::ForOp>(kLoop->getParentOp());
    MemRefType type = block.getType();
    auto srcType = cast<MemRefType>(block.getSource().getType());
    int64_t eltBytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    int64_t lineElts = std::max<int64_t>(1, kLineBytes / eltBytes);
    int64_t region = type.getNumElements();
    int64_t total = srcType.getNumElements();
    int64_t lines = llvm::divideCeil(region, lineElts);
    int64_t k = tripCount(kLoop), tiles = tripCount(rows);
    int64_t steps = (tiles - 1) * k;
    // u: k steps per group of prefetches, the loop unrolled by it.
    int64_t u = 1;
    for (int64_t f = std::max<int64_t>(1, unroll); f > 1; --f)
      if (k % f == 0) {
        u = f;
        break;
      }
    if (u > 1 && failed(loopUnrollByFactor(kLoop, u)))
      u = 1;
    int64_t perStep =
        std::min<int64_t>(maxPerStep * u, llvm::divideCeil(lines * u, steps));
    // Lines advanced per step, 16-bit fixed point, rounded up: the last
    // step reaches the region's last line (or near it, with perStep lines
    // per step capped).
    int64_t rate = llvm::divideCeil(lines << 16, steps);

    Location loc = block.getLoc();
    OpBuilder b(block->getContext());
    b.setInsertionPointAfter(block);
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, block);
    Value flat = memref::ReinterpretCastOp::create(
        b, loc, MemRefType::get({total}, type.getElementType()),
        meta.getBaseBuffer(), /*offset=*/0, ArrayRef<int64_t>{total},
        ArrayRef<int64_t>{1});
    // Constants at the function's entry.
    auto func = kLoop->getParentOfType<func::FuncOp>();
    OpBuilder cb = OpBuilder::atBlockBegin(&func.getBody().front());
    auto cst = [&](int64_t v) {
      return arith::ConstantIndexOp::create(cb, loc, v).getResult();
    };
    // The iteration's index, at the start of `loop`'s body.
    auto iteration = [&](scf::ForOp loop) -> Value {
      b.setInsertionPointToStart(loop.getBody());
      Value from = arith::SubIOp::create(b, loc, loop.getInductionVar(),
                                         loop.getLowerBound());
      return arith::DivUIOp::create(b, loc, from, loop.getStep());
    };
    // In the row loop (invariant in the k loop): the tile's index, and
    // where its stream starts.
    Value t = iteration(rows);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, cst(0));
    Value start = arith::MulIOp::create(
        b, loc, arith::SubIOp::create(b, loc, t, cst(1)), cst(k));
    Value next = arith::AddIOp::create(b, loc, meta.getOffset(), cst(region));
    Value last = cst(total - 1);
    // The group's first step: the unrolled loop's iteration times u.
    Value i = iteration(kLoop);
    if (u > 1)
      i = arith::MulIOp::create(b, loc, i, cst(u));
    Value s = arith::AddIOp::create(b, loc, start, i);
    Value j = arith::ShRUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, s, cst(rate)), cst(16));
    for (int64_t l = 0; l < perStep; ++l) {
      Value line = l ? arith::AddIOp::create(b, loc, j, cst(l)).getResult() : j;
      Value at = arith::AddIOp::create(
          b, loc, next, arith::MulIOp::create(b, loc, line, cst(lineElts)));
      at = arith::MinUIOp::create(b, loc, at, last);
      at = arith::SelectOp::create(b, loc, first, meta.getOffset(), at);
      memref::PrefetchOp::create(b, loc, flat, ValueRange{at},
                                 /*isWrite=*/false, /*localityHint=*/2,
                                 /*isDataCache=*/true);
    }
  }
};

} // namespace
