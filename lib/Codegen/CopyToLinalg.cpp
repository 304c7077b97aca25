//===- CopyToLinalg.cpp - memref.copy to linalg.copy ----------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-copy-to-linalg"

namespace kiln {
#define GEN_PASS_DEF_KILNCOPYTOLINALG
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// `v` without the reshapes that view it (expand_shape, collapse_shape):
/// they relabel its elements without moving them.
Value throughReshapes(Value v) {
  while (isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(
      v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return v;
}

struct CopyToLinalgPass
    : public kiln::impl::KilnCopyToLinalgBase<CopyToLinalgPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](memref::CopyOp copy) {
      // A copy of a buffer onto itself, its source a reshaped view of its
      // target of the same type (what bufferization leaves where an image
      // loop's result slice is computed in place through reshapes).
      if (copy.getSource().getType() == copy.getTarget().getType() &&
          throughReshapes(copy.getSource()) ==
              throughReshapes(copy.getTarget())) {
        rewriter.eraseOp(copy);
        return;
      }
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
    });
  }
};
} // namespace
