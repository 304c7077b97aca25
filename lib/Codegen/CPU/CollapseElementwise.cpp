//===- CollapseElementwise.cpp - short innermost loops made long ----------===//
//
// An elementwise op over an NCHW tensor with a small plane (ResNet's 14x14
// and 7x7) runs its innermost loop over 14 or 7 elements, which LLVM's
// loop vectorizer, working in whole vectors of 16 floats, leaves scalar.
// Where the trailing dims are contiguous in every operand (identity maps,
// and broadcasts that do not read them, such as a per-channel scale), they
// are collapsed into one loop (upstream's collapseOpIterationDims, which
// collapses the operands and expands the results), so the plane is one
// loop of 196 or 49 elements.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-collapse-elementwise"

namespace kiln {
#define GEN_PASS_DEF_KILNCOLLAPSEELEMENTWISE
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct CollapseElementwisePass
    : public kiln::impl::KilnCollapseElementwiseBase<CollapseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    int64_t below = shortBelow;
    RewritePatternSet patterns(&getContext());
    linalg::populateCollapseDimensions(patterns, [below](linalg::LinalgOp op) {
      SmallVector<ReassociationIndices> none;
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic || !generic.hasPureTensorSemantics() ||
          generic.getNumLoops() < 2 ||
          generic.getNumParallelLoops() != generic.getNumLoops())
        return none;
      SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
      if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges.back() >= below)
        return none;
      // The longest run of trailing dims contiguous in every map
      // (projected permutations only: a map with a constant result, a
      // broadcast of a size-1 dim, is not collapsed).
      SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
      if (!llvm::all_of(maps,
                        [](AffineMap m) { return m.isProjectedPermutation(); }))
        return none;
      int64_t rank = ranges.size();
      ReassociationIndices best;
      for (int64_t first = rank - 2; first >= 0; --first) {
        ReassociationIndices dims;
        for (int64_t d = first; d < rank; ++d)
          dims.push_back(d);
        if (!linalg::areDimSequencesPreserved(maps, {dims}))
          break;
        best = dims;
      }
      if (best.empty())
        return none;
      return SmallVector<ReassociationIndices>{best};
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
