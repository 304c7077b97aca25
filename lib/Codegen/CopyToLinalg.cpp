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
struct CopyToLinalgPass
    : public kiln::impl::KilnCopyToLinalgBase<CopyToLinalgPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](memref::CopyOp copy) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
    });
  }
};
} // namespace
