//===- Vectorize.cpp - 16-byte accesses for the GPU's loop kernels --------===//
//
// A loop kernel gives each thread one element. Where an elementwise linalg
// op's innermost loop runs along the innermost, contiguous dimension of
// every operand it indexes (the others are read once per thread, a
// broadcast), each thread can take W consecutive elements instead, W the
// number that fills 16 bytes for the widest element type: the op is tiled
// into a parallel loop with step W along that dimension (upstream's linalg
// tiling), the 1x..xW tile is vectorized (upstream's linalg vectorizer),
// and its transfers become `vector.load` / `vector.store` marked with the
// alignment the operands' layouts guarantee, so that the NVPTX backend
// emits `ld.global.v4` / `st.global.v4`: a quarter of the load and store
// instructions and of the index arithmetic per element.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUVECTORIZE
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Bytes of one element of `t`, or 0 where it is not a whole number of
/// bytes (i1).
int64_t elementBytes(Type t) {
  unsigned bits = t.getIntOrFloatBitWidth();
  return bits % 8 ? 0 : bits / 8;
}

/// The number of consecutive elements each thread of `op` takes along its
/// innermost loop (at most `maxBytes` for the widest operand), or 0 where
/// `op` stays one element per thread.
int64_t vectorWidth(linalg::LinalgOp op, int64_t maxBytes) {
  if (!isa<func::FuncOp>(op->getParentOp()) || !op.hasPureBufferSemantics() ||
      op.getNumLoops() == 0 || op.getNumReductionLoops() != 0 ||
      op.hasIndexSemantics()) // index vectors do not lower in kernels
    return 0;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return 0;
  int64_t widest = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    Type t = getElementTypeOrSelf(operand.get().getType());
    if (!t.isIntOrFloat() || elementBytes(t) == 0)
      return 0;
    widest = std::max(widest, elementBytes(t));
  }
  int64_t width = maxBytes / widest;
  unsigned inner = op.getNumLoops() - 1;
  if (width < 2 || sizes[inner] % width)
    return 0;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue; // a fill's value
    AffineMap map = op.getMatchingIndexingMap(&operand);
    ArrayRef<AffineExpr> results = map.getResults();
    bool reads = llvm::any_of(
        results, [&](AffineExpr e) { return e.isFunctionOfDim(inner); });
    if (!reads) {
      // A broadcast along the innermost loop: the output never is one.
      if (op.isDpsInit(&operand))
        return 0;
      continue;
    }
    // The innermost loop walks the operand's innermost dimension, which
    // is contiguous; W-element groups start W-aligned (offset and outer
    // strides multiples of W), so each is one aligned access.
    auto last = dyn_cast<AffineDimExpr>(results.back());
    if (!last || last.getPosition() != inner ||
        llvm::any_of(results.drop_back(),
                     [&](AffineExpr e) { return e.isFunctionOfDim(inner); }))
      return 0;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset) || offset % width || strides.back() != 1)
      return 0;
    for (int64_t s : ArrayRef<int64_t>(strides).drop_back())
      if (ShapedType::isDynamic(s) || s % width)
        return 0;
  }
  if (failed(linalg::vectorizeOpPrecondition(op)))
    return 0;
  return width;
}

struct GpuVectorize : public kiln::impl::KilnGpuVectorizeBase<GpuVectorize> {
  using KilnGpuVectorizeBase::KilnGpuVectorizeBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    if (maxBytes <= 0)
      return;
    // A reduction's result buffer is walked one element (one row) per
    // iteration: ops over exactly that buffer (its fill, the mean or
    // inverse deviation computed from it) stay scalar, so that
    // `kiln-gpu-form-kernels` can run them with the reduction, a block
    // per row, instead of vectors spanning rows.
    llvm::DenseSet<Value> reduced;
    for (Operation &op : func.getBody().getOps())
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op))
        if (linalgOp.getNumReductionLoops() != 0)
          for (Value init : linalgOp.getDpsInits())
            reduced.insert(init);
    auto overReduced = [&](linalg::LinalgOp op) {
      return llvm::any_of(op->getOperands(), [&](Value v) {
        auto type = dyn_cast<MemRefType>(v.getType());
        return type && reduced.contains(v) &&
               type.getRank() == static_cast<int64_t>(op.getNumLoops());
      });
    };
    SmallVector<std::pair<linalg::LinalgOp, int64_t>> todo;
    for (Operation &op : func.getBody().getOps())
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op))
        if (int64_t w = vectorWidth(linalgOp, maxBytes);
            w && !overReduced(linalgOp))
          todo.push_back({linalgOp, w});

    IRRewriter rewriter(ctx);
    SmallVector<std::pair<Operation *, int64_t>> loops; // and their W
    for (auto [op, width] : todo) {
      SmallVector<int64_t> tile(op.getNumLoops(), 1);
      tile.back() = width;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::TiledLinalgOp> tiled = linalg::tileLinalgOp(
          rewriter, op,
          linalg::LinalgTilingOptions().setTileSizes(tile).setLoopType(
              linalg::LinalgTilingLoopType::ParallelLoops));
      // One scf.parallel over every loop (listed once per dimension).
      if (failed(tiled) || tiled->loops.empty() ||
          !isa<scf::ParallelOp>(tiled->loops.front()) ||
          llvm::any_of(tiled->loops, [&](Operation *l) {
            return l != tiled->loops.front();
          })) {
        op->emitOpError("could not be tiled for vector accesses");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      rewriter.setInsertionPoint(tiled->op);
      if (failed(linalg::vectorize(rewriter, tiled->op))) {
        tiled->op->emitOpError("could not be vectorized");
        return signalPassFailure();
      }
      rewriter.eraseOp(tiled->op);
      loops.push_back({tiled->loops.front(), width});
    }
    if (loops.empty())
      return;

    // 1x..xW transfers on 1x..xW subviews -> W-element loads and stores
    // on the operands themselves; broadcasts -> a scalar load.
    RewritePatternSet patterns(ctx);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateVectorTransferDropUnitDimsPatterns(patterns);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    memref::populateFoldMemRefAliasOpPatterns(patterns);
    vector::BroadcastOp::getCanonicalizationPatterns(patterns, ctx);
    vector::ExtractOp::getCanonicalizationPatterns(patterns, ctx);
    vector::ShapeCastOp::getCanonicalizationPatterns(patterns, ctx);
    vector::TransposeOp::getCanonicalizationPatterns(patterns, ctx);
    memref::SubViewOp::getCanonicalizationPatterns(patterns, ctx);
    // (On the whole function: the driver also drops the constants the
    // tiling left unused.)
    if (failed(applyPatternsGreedily(func, std::move(patterns)))) {
      func.emitOpError("vector accesses did not simplify");
      return signalPassFailure();
    }

    // The accesses of W elements are W-aligned (vectorWidth checked the
    // layouts; the memory plan and the runtime align buffers to 16 bytes).
    for (auto [loop, width] : loops) {
      auto align = [&](auto access, VectorType type) {
        if (type.getRank() == 1 && type.getNumElements() == width)
          access.setAlignment(width * elementBytes(type.getElementType()));
      };
      loop->walk([&](Operation *op) {
        if (auto load = dyn_cast<vector::LoadOp>(op))
          align(load, load.getVectorType());
        else if (auto store = dyn_cast<vector::StoreOp>(op))
          align(store, store.getVectorType());
      });
    }
  }
};

} // namespace
