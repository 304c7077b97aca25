//===- HardSwish.cpp - an example pass plugin for Kiln --------------------===//
//
// `kiln-example-hard-swish`: exporters of older opsets (and models written
// before HardSwish-14) spell MobileNetV3's activation as
// `Mul(x, HardSigmoid(x))` with alpha 1/6 and beta 0.5. This pass turns it
// into the one `kiln.hard_swish` op, which Kiln lowers as a single
// elementwise computation.
//
// It is built outside Kiln's tree against the installed package
// (find_package(Kiln), target Kiln::KilnPlugin) and loaded at run time:
//
//   kiln-opt --load-pass-plugin=KilnHardSwishPlugin.so \
//     --pass-pipeline='builtin.module(func.func(kiln-example-hard-swish))'
//     m.onnx
//   kiln-compile --load-pass-plugin=KilnHardSwishPlugin.so \
//     --pipeline-after=graph:'func.func(kiln-example-hard-swish)' m.onnx -o
//     m.kmod
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;

namespace {

/// Mul(x, HardSigmoid(x)) (either order) with alpha 1/6 and beta 1/2, the
/// HardSigmoid used only there: HardSwish(x).
struct MulOfHardSigmoid : public OpRewritePattern<kiln::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(kiln::MulOp mul,
                                PatternRewriter &rewriter) const override {
    for (int i = 0; i < 2; ++i) {
      Value x = mul->getOperand(i);
      auto hs = mul->getOperand(1 - i).getDefiningOp<kiln::HardSigmoidOp>();
      if (!hs || hs.getX() != x || !hs->hasOneUse())
        continue;
      if (std::fabs(hs.getAlpha().convertToFloat() - 1.0f / 6.0f) > 1e-6f ||
          hs.getBeta().convertToFloat() != 0.5f)
        return rewriter.notifyMatchFailure(mul, "not HardSwish's constants");
      // No broadcasting: x has the product's type.
      if (x.getType() != mul.getType())
        return rewriter.notifyMatchFailure(mul, "broadcasts");
      rewriter.replaceOpWithNewOp<kiln::HardSwishOp>(mul, mul.getType(), x);
      return success();
    }
    return failure();
  }
};

struct HardSwishPass
    : public PassWrapper<HardSwishPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(HardSwishPass)

  StringRef getArgument() const final { return "kiln-example-hard-swish"; }
  StringRef getDescription() const final {
    return "Turns Mul(x, HardSigmoid(x)) (alpha 1/6, beta 1/2) into "
           "HardSwish(x) (an example pass plugin)";
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MulOfHardSigmoid>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

/// The entry point kiln-opt and kiln-compile look for in a pass plugin.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "KilnHardSwish", LLVM_VERSION_STRING,
          [] { PassRegistration<HardSwishPass>(); }};
}
