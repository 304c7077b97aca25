//===- ReductionsInnermost.cpp - reduction loops after parallel ones ------===//
//
// A generic whose reduction loops are not its innermost ones lowers to a
// parallel loop around a sequential one around another parallel loop,
// which a GPU kernel can only run in one thread. Interchanging its loops
// so that the reductions come last gives one parallel loop over the
// outputs around the reduction, which `kiln-gpu-form-kernels` maps to a
// thread or a block per output.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUREDUCTIONSINNERMOST
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

#define DEBUG_TYPE "kiln-gpu-reductions-innermost"

using namespace mlir;

namespace {
struct ReductionsInnermostPass
    : public kiln::impl::KilnGpuReductionsInnermostBase<
          ReductionsInnermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) { generics.push_back(g); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp g : generics) {
      SmallVector<unsigned> parallel, reduction;
      for (auto [d, it] : llvm::enumerate(g.getIteratorTypesArray()))
        (linalg::isParallelIterator(it) ? parallel : reduction).push_back(d);
      if (reduction.empty() || parallel.empty() ||
          reduction.front() > parallel.back())
        continue;
      SmallVector<unsigned> order(parallel);
      order.append(reduction);
      rewriter.setInsertionPoint(g);
      if (failed(linalg::interchangeGenericOp(rewriter, g, order))) {
        g.emitOpError("could not put its reduction loops innermost");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
