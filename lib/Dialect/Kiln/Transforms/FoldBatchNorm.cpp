//===- FoldBatchNorm.cpp - BatchNormalization into the Conv before it -----===//

#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "kiln/Dialect/Kiln/Transforms/ConstantValues.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

#define DEBUG_TYPE "kiln-fold-batch-norm"

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDBATCHNORM
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

struct FoldBatchNormPass
    : public kiln::impl::KilnFoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    SmallVector<BatchNormalizationOp> bns;
    getOperation()->walk([&](BatchNormalizationOp bn) { bns.push_back(bn); });
    for (BatchNormalizationOp bn : bns)
      fold(bn);
  }

  void fold(BatchNormalizationOp bn) {
    if (bn.getTrainingMode() || bn->getNumResults() != 1)
      return;
    auto conv = bn.getX().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse())
      return;
    auto wType = dyn_cast<RankedTensorType>(conv.getW().getType());
    if (!wType || !wType.hasStaticShape() || !wType.getElementType().isF32())
      return;
    auto w = constFloats(conv.getW());
    auto gamma = constFloats(bn.getScale()), beta = constFloats(bn.getB());
    auto mean = constFloats(bn.getInputMean());
    auto var = constFloats(bn.getInputVar());
    if (!w || !gamma || !beta || !mean || !var)
      return;
    int64_t f = wType.getDimSize(0);
    SmallVector<float> bias(f, 0.0f);
    if (conv.getB()) {
      auto b = constFloats(conv.getB());
      if (!b || static_cast<int64_t>(b->size()) != f)
        return;
      bias = *b;
    }
    if (static_cast<int64_t>(gamma->size()) != f ||
        static_cast<int64_t>(beta->size()) != f ||
        static_cast<int64_t>(mean->size()) != f ||
        static_cast<int64_t>(var->size()) != f)
      return;
    float eps = bn.getEpsilon().convertToFloat();
    int64_t perFilter = wType.getNumElements() / f;
    SmallVector<float> newW(*w), newB(f);
    for (int64_t i = 0; i < f; ++i) {
      float s = (*gamma)[i] / std::sqrt((*var)[i] + eps);
      for (int64_t j = 0; j < perFilter; ++j)
        newW[i * perFilter + j] *= s;
      newB[i] = (bias[i] - (*mean)[i]) * s + (*beta)[i];
    }
    OpBuilder b(conv);
    Location loc = conv.getLoc();
    Value wc = floatConstant(b, loc, wType, newW, "folded_bn_weight");
    Value bc = floatConstant(b, loc, RankedTensorType::get({f}, b.getF32Type()),
                             newB, "folded_bn_bias");
    conv->setOperand(1, wc);
    if (conv.getB()) {
      conv->setOperand(2, bc);
    } else {
      conv->insertOperands(2, bc);
    }
    bn.getY().replaceAllUsesWith(conv.getY());
    conv.getY().setType(bn.getY().getType());
    bn.erase();
  }
};

} // namespace
