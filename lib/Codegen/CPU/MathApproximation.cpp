//===- MathApproximation.cpp - polynomial math for vectorizable loops -----===//
//
// math.exp, math.erf, math.tanh and their kin become calls to libm's
// scalar functions, which keep LLVM from vectorizing the loop around them
// (GELU's erf, Softmax's exp, Tanh). Upstream's polynomial approximations
// compute them with arith and math.fma instead, so those loops vectorize;
// this pass applies them to the f32 ops it is told to. Powers with small
// constant exponents (x^3 in GPT-2's GELU) become multiplications first,
// with upstream's algebraic simplifications.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "kiln-math-approximation"

namespace kiln {
#define GEN_PASS_DEF_KILNMATHAPPROXIMATION
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

struct MathApproximationPass
    : public kiln::impl::KilnMathApproximationBase<MathApproximationPass> {
  using Base::Base;
  void runOnOperation() override {
    llvm::StringSet<> names;
    for (const std::string &op : ops)
      names.insert("math." + op);
    RewritePatternSet patterns(&getContext());
    // x^c for small constant integer and half-integer c as products and
    // square roots (GPT-2's GELU cubes its input with Pow).
    populateMathAlgebraicSimplificationPatterns(patterns);
    populateMathPolynomialApproximationPatterns(
        patterns, [&](StringRef name) { return names.contains(name); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
