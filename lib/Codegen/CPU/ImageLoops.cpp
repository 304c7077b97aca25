//===- ImageLoops.cpp - convolution chains one image at a time ------------===//
//
// kiln-conv-to-gemm computes a convolution on a wide plane over an im2col
// panel written whole before its GEMM reads it. At batch 8 a ResNet-50
// 56x56 3x3 convolution's panel is 58 MB, past a 32 MiB L3: written to
// memory and read back, as are the activations between the convolutions.
// Tiled along the batch, with its producers fused, each chain of
// convolutions and elementwise ops runs one image at a time on
// cache-resident tensors. The tiling and fusion are upstream's
// (scf::tileConsumerAndFuseProducersUsingSCF); this pass picks the chains.
//
//===----------------------------------------------------------------------===//

#include "Canonicalize.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-cpu-image-loops"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUIMAGELOOPS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The static batch of `op`: the size of its first loop when that loop is
/// parallel and indexes the first dim of each result. Else nullopt.
std::optional<int64_t> batchOf(linalg::LinalgOp op) {
  if (op.getNumLoops() == 0 || op->getNumResults() == 0 ||
      !op.hasPureTensorSemantics() ||
      op.getIteratorTypesArray()[0] != utils::IteratorType::parallel)
    return std::nullopt;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (map.getNumResults() == 0 ||
        map.getResult(0) != getAffineDimExpr(0, op.getContext()))
      return std::nullopt;
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[0]))
    return std::nullopt;
  return ranges[0];
}

/// Whether no input of `op` depends on its batch loop: a fill, or the
/// broadcast of a bias. Copies of it in the loop cost no more than it.
bool batchInvariantInputs(linalg::LinalgOp op) {
  for (OpOperand *in : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(in).isFunctionOfDim(0))
      return false;
  return true;
}

/// Widens the slice of one image that tiled convolution `conv` reads back
/// to the source's whole plane when tiling cut it to the rows and columns
/// the windows reach (a stride-2 1x1 convolution of a 56x56 plane reads
/// 55x55): a view of the whole plane is contiguous, and
/// kiln-conv-to-gemm's panel packing reads it in place instead of from a
/// copy. The rows and columns past the windows are not read.
void widenPlaneSlice(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv) {
  auto slice = conv.getInputs()[0].getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice)
    return;
  RankedTensorType src = slice.getSourceType();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  if (!src.hasStaticShape() || src.getRank() != 4 || sizes.size() != 4 ||
      !slice.hasUnitStride() || sizes[0] != 1 ||
      sizes[1] != src.getDimSize(1) || offsets[1] != 0 || offsets[2] != 0 ||
      offsets[3] != 0 ||
      (sizes[2] == src.getDimSize(2) && sizes[3] == src.getDimSize(3)))
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(slice);
  SmallVector<OpFoldResult> newSizes = {
      rewriter.getIndexAttr(1), rewriter.getIndexAttr(src.getDimSize(1)),
      rewriter.getIndexAttr(src.getDimSize(2)),
      rewriter.getIndexAttr(src.getDimSize(3))};
  Value whole = tensor::ExtractSliceOp::create(
      rewriter, slice.getLoc(), slice.getSource(), slice.getMixedOffsets(),
      newSizes, slice.getMixedStrides());
  rewriter.modifyOpInPlace(conv, [&] { conv->setOperand(0, whole); });
}

struct ImageLoopsPass
    : public kiln::impl::KilnCpuImageLoopsBase<ImageLoopsPass> {
  using Base::Base;

  /// A convolution that kiln-conv-to-gemm computes over an NCHW panel.
  bool panelConv(Operation *op) const {
    auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op);
    if (!conv || !conv.hasPureTensorSemantics())
      return false;
    for (Value v : conv->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || !t.hasStaticShape() || !isa<FloatType>(t.getElementType()))
        return false;
    }
    return !kiln::convToGemmChannelsLast(conv, vectorBits, channelsLastBelow,
                                         packPanels);
  }

  /// Whether one op of `chain` (the root and the producers fused so far,
  /// still in place while `loop` is built) reads `op`, and nothing else
  /// but slices in that loop. A value two ops of the chain read would be
  /// computed twice in the loop, once for each.
  static bool onlyChainUse(Operation *op, Operation *loop,
                           const llvm::DenseSet<Operation *> &chain) {
    int64_t readers = 0;
    for (OpOperand &use : op->getUses()) {
      Operation *user = use.getOwner();
      if (loop && isa<tensor::ExtractSliceOp>(user) &&
          loop->isProperAncestor(user))
        continue;
      if (!chain.contains(user))
        return false;
      ++readers;
    }
    return readers == 1;
  }

  /// Whether the producer `op` of a value the chain reads over `batch`
  /// images moves into the image loop; before tiling (no loop yet), `chain`
  /// holds the op that reads it.
  bool fusible(Operation *op, int64_t batch, Operation *loop,
               const llvm::DenseSet<Operation *> &chain) const {
    if (auto pad = dyn_cast<tensor::PadOp>(op))
      return onlyChainUse(op, loop, chain) && pad.getStaticLow().size() > 1 &&
             pad.getStaticLow()[0] == 0 && pad.getStaticHigh()[0] == 0 &&
             pad.getSourceType().hasStaticShape();
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || linalgOp->getNumResults() != 1 ||
        batchOf(linalgOp) != batch)
      return false;
    if (isa<linalg::Conv2DNchwFchwOp>(op))
      return panelConv(op) && onlyChainUse(op, loop, chain);
    if (!isa<linalg::GenericOp, linalg::FillOp>(op))
      return false;
    return onlyChainUse(op, loop, chain) || batchInvariantInputs(linalgOp);
  }

  /// Whether moving `op`'s producers into an image loop would take a panel
  /// convolution with them.
  bool reachesPanelConv(Operation *op, int64_t batch,
                        llvm::DenseMap<Operation *, bool> &memo) const {
    if (auto it = memo.find(op); it != memo.end())
      return it->second;
    memo[op] = false;
    bool reaches = false;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || !fusible(def, batch, nullptr, {op}))
        continue;
      if (panelConv(def) || reachesPanelConv(def, batch, memo)) {
        reaches = true;
        break;
      }
    }
    return memo[op] = reaches;
  }

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    Block &body = fn.getBody().front();
    SmallVector<Operation *> order;
    for (Operation &op : body)
      order.push_back(&op);
    llvm::DenseSet<Operation *> erased;
    llvm::DenseMap<Operation *, bool> memo;
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> loops;
    // The last op of each chain first: its producers go into its loop.
    for (Operation *op : llvm::reverse(order)) {
      if (erased.contains(op))
        continue;
      auto root = dyn_cast<linalg::LinalgOp>(op);
      if (!root || !isa<TilingInterface>(op))
        continue;
      std::optional<int64_t> batch = batchOf(root);
      if (!batch || *batch <= 1)
        continue;
      // A channels-last convolution keeps the batch in its GEMM's rows,
      // even where it reads a panel convolution's result.
      if (isa<linalg::ConvolutionOpInterface>(op) && !panelConv(op))
        continue;
      if (!panelConv(op) && !reachesPanelConv(op, *batch, memo))
        continue;

      SmallVector<OpFoldResult> tileSizes(root.getNumLoops(),
                                          rewriter.getIndexAttr(0));
      tileSizes[0] = rewriter.getIndexAttr(1);
      scf::SCFTileAndFuseOptions options;
      options.tilingOptions.setTileSizes(tileSizes);
      int64_t n = *batch;
      llvm::DenseSet<Operation *> chain = {op};
      options.setFusionControlFn(
          [&, n](tensor::ExtractSliceOp slice, OpResult producer, bool)
              -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
            if (!fusible(producer.getOwner(), n, slice->getParentOp(), chain))
              return std::nullopt;
            chain.insert(producer.getOwner());
            return scf::SCFTileAndFuseOptions::ControlFnResult{};
          });
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTileAndFuseResult> tiled =
          scf::tileConsumerAndFuseProducersUsingSCF(
              rewriter, cast<TilingInterface>(op), options);
      if (failed(tiled)) {
        LLVM_DEBUG(llvm::dbgs() << "not tiled: " << *op << "\n");
        continue;
      }
      for (OpResult r : op->getResults())
        if (Value v = tiled->replacements.lookup(r))
          rewriter.replaceAllUsesWith(r, v);
      for (Operation *t : tiled->tiledAndFusedOps)
        if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(t))
          widenPlaneSlice(rewriter, conv);
      // The slices of the fused producers' results that the fusion left.
      Operation *loop = tiled->loops.front();
      loops.push_back(loop);
      SmallVector<Operation *> inLoop;
      loop->walk([&](Operation *inner) { inLoop.push_back(inner); });
      for (Operation *inner : llvm::reverse(inLoop))
        if (inner != loop && isOpTriviallyDead(inner))
          rewriter.eraseOp(inner);
      // The root and the producers now computed in the loop, once nothing
      // outside it reads them.
      SmallVector<Operation *> dead = {op};
      llvm::append_range(dead, tiled->fusedProducers);
      for (bool changed = true; changed;) {
        changed = false;
        for (Operation *d : dead) {
          if (erased.contains(d) || !d->use_empty())
            continue;
          erased.insert(d);
          rewriter.eraseOp(d);
          changed = true;
        }
      }
      memo.clear();
    }
    // Fold what the tiling left in the loops: the zero-size guards of the
    // pads, whole-tensor slices of the weights, slices of empty tensors.
    RewritePatternSet patterns(&getContext());
    kiln::cpu::addCanonicalizations(&getContext(), patterns);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (Operation *loop : loops)
      (void)applyPatternsGreedily(loop->getRegion(0), frozen);
  }
};

} // namespace
