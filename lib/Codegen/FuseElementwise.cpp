//===- FuseElementwise.cpp - elementwise fusion without recomputation -----===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-fuse-elementwise"

namespace kiln {
#define GEN_PASS_DEF_KILNFUSEELEMENTWISE
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Fuse only a single-use producer that the consumer reads through a
/// permutation of all its loops: each produced element is then computed
/// exactly once in the fused loop nest.
bool fusesWithoutRecomputation(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (!consumer)
    return false;
  return consumer.getMatchingIndexingMap(fused).isPermutation();
}

/// Whether `op` only moves data: all loops parallel, one input, and a body
/// that yields the input element (a transpose or broadcast, generalized).
bool isPureCopy(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  return llvm::hasSingleElement(*body) &&
         yield.getOperand(0) == body->getArgument(0);
}

/// Whether the producer's and the consumer's bodies, fused, hold at most
/// `cap` operations (each counted up to the cap, so the check is O(cap)).
bool fusedBodyWithin(OpOperand *fused, int64_t cap) {
  auto producer =
      dyn_cast_or_null<linalg::LinalgOp>(fused->get().getDefiningOp());
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (!producer || !consumer || cap < 0)
    return true;
  Block *a = producer.getBlock(), *b = consumer.getBlock();
  if (!a || !b)
    return true;
  int64_t inA = 0;
  for (auto it = a->begin(); it != a->end() && inA <= cap; ++it)
    ++inA;
  return inA <= cap && llvm::hasNItemsOrLess(*b, cap - inA);
}

struct FuseElementwisePass
    : public kiln::impl::KilnFuseElementwiseBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // Transposes as generics, so that their single consumer reads their
    // input through the permuted map instead of a transposed copy.
    if (foldTransposes) {
      IRRewriter rewriter(ctx);
      SmallVector<linalg::TransposeOp> transposes;
      getOperation()->walk(
          [&](linalg::TransposeOp t) { transposes.push_back(t); });
      for (linalg::TransposeOp t : transposes) {
        rewriter.setInsertionPoint(t);
        (void)linalg::generalizeNamedOp(rewriter, t);
      }
    }
    auto control = [this](OpOperand *fused) {
      if (!fusedBodyWithin(fused, maxFusedOps))
        return false;
      if (fusesWithoutRecomputation(fused))
        return true;
      Operation *producer = fused->get().getDefiningOp();
      return foldTransposes && producer && producer->hasOneUse() &&
             isPureCopy(producer) && isa<linalg::GenericOp>(fused->getOwner());
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [this](OpOperand *fused) {
          return fusedBodyWithin(fused, maxFusedOps) &&
                 fusesWithoutRecomputation(fused);
        });
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
