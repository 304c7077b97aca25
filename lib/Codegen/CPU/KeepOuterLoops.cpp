//===- KeepOuterLoops.cpp - no unrolling of loops around long loops -------===//
//
// LLVM fully unrolls a short loop whose body, before vectorization, looks
// small even when it holds a long loop; each copy of the inner loop is
// then vectorized on its own. Such outer loops are marked not to unroll.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUKEEPOUTERLOOPS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Whether LLVM keeps `op` a loop: a `scf.while`, or a `scf.for` of
/// unknown trip count or of at least `minTrips` iterations.
bool isLongLoop(Operation *op, int64_t minTrips) {
  if (isa<scf::WhileOp>(op))
    return true;
  auto loop = dyn_cast<scf::ForOp>(op);
  if (!loop)
    return false;
  std::optional<APInt> trips = loop.getStaticTripCount();
  return !trips || trips->getSExtValue() >= minTrips;
}

struct KeepOuterLoopsPass
    : public kiln::impl::KilnCpuKeepOuterLoopsBase<KeepOuterLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto unroll = LLVM::LoopUnrollAttr::get(
        ctx, /*disable=*/BoolAttr::get(ctx, true), /*count=*/{},
        /*runtimeDisable=*/{}, /*full=*/{}, /*followupUnrolled=*/{},
        /*followupRemainder=*/{}, /*followupAll=*/{});
    auto annotation = LLVM::LoopAnnotationAttr::get(
        ctx, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{},
        unroll, /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{},
        /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
        /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
        /*parallelAccesses=*/{});
    getOperation().walk([&](scf::ForOp loop) {
      bool holdsLongLoop = loop.getBody()
                               ->walk([&](Operation *op) {
                                 return isLongLoop(op, minInnerTrips)
                                            ? WalkResult::interrupt()
                                            : WalkResult::advance();
                               })
                               .wasInterrupted();
      if (holdsLongLoop)
        loop->setAttr("loop_annotation", annotation);
    });
  }
};

} // namespace
