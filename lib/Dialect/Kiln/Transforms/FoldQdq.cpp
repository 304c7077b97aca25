//===- FoldQdq.cpp - QDQ contractions into integer contractions -----------===//
//
// A quantized (QDQ) model, as onnxruntime's quantize_static or a QAT export
// writes it, computes each Conv and MatMul in float between
// DequantizeLinear ops on its quantized operands and a QuantizeLinear on
// its result. This pass replaces each such group by the integer op that
// computes the same: QLinearConv or QLinearMatMul (int32 accumulation,
// one requantization); a Gemm (a classifier's, an MLP's) becomes the 1x1
// QLinearConv it is, so that its int32 bias is added before the
// requantization as ONNX Runtime's QGemm does.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "kiln/Dialect/Kiln/Transforms/ConstantEvaluator.h"
#include "kiln/Dialect/Kiln/Transforms/ConstantValues.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

#define DEBUG_TYPE "kiln-fold-qdq"

namespace kiln {
#define GEN_PASS_DEF_KILNFOLDQDQ
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

int64_t numElements(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() ? t.getNumElements() : -1;
}

bool isInt(Value v, unsigned width) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getElementType().isInteger(width);
}

/// Whether the integer constant `v` is all zeros (an absent zero point is).
bool zeroPoint(Value v) {
  if (!v)
    return true;
  auto values = constInts(v);
  return values && llvm::all_of(*values, [](int64_t x) { return x == 0; });
}

/// A DequantizeLinear of an 8-bit tensor whose scale is one value
/// (`perSliceDim` < 0) or, when `perSliceDim` is a dim of the input, one
/// value per slice along it (axis that dim, as the ONNX attribute says),
/// with a zero point of the same shape.
DequantizeLinearOp dequantized(Value v, int64_t perSliceDim) {
  auto dq = v.getDefiningOp<DequantizeLinearOp>();
  if (!dq || dq.getBlockSize() != 0 || !dq.getXZeroPoint())
    return {};
  if (!isInt(dq.getX(), 8))
    return {};
  int64_t n = numElements(dq.getXScale());
  if (n == 1 && numElements(dq.getXZeroPoint()) == 1)
    return dq;
  auto xt = cast<RankedTensorType>(dq.getX().getType());
  // The attribute is signed (-1: the last dim); its getter is unsigned.
  int64_t axis = static_cast<int64_t>(dq.getAxis());
  if (axis < 0)
    axis += xt.getRank();
  if (perSliceDim < 0 || axis != perSliceDim ||
      n != xt.getDimSize(perSliceDim) || numElements(dq.getXZeroPoint()) != n)
    return {};
  return dq;
}

struct FoldQdqPass : public kiln::impl::KilnFoldQdqBase<FoldQdqPass> {
  void runOnOperation() override {
    SmallVector<QuantizeLinearOp> qs;
    getOperation()->walk([&](QuantizeLinearOp q) { qs.push_back(q); });
    for (QuantizeLinearOp q : qs)
      fold(q);
    // What stays quantized in float (a Gemm, say) reads its constant
    // weights dequantized once, here, not at every run.
    SmallVector<DequantizeLinearOp> dqs;
    getOperation()->walk([&](DequantizeLinearOp dq) { dqs.push_back(dq); });
    for (DequantizeLinearOp dq : dqs)
      evaluate(dq);
  }

  /// Replaces a DequantizeLinear of constants (per tensor, per axis or per
  /// block along the axis) by the float32 constant it computes.
  void evaluate(DequantizeLinearOp dq) {
    std::optional<SmallVector<ElementsAttr>> values = evaluateConstantOp(dq);
    if (!values)
      return;
    OpBuilder b(dq);
    dq.getY().replaceAllUsesWith(ConstantOp::create(
        b, dq.getLoc(), dq.getY().getType(), values->front()));
    dq->erase();
  }

  void fold(QuantizeLinearOp q) {
    // The result's quantization: one scale and an 8-bit zero point.
    if (q.getBlockSize() != 0 || q.getOutputDtype() != 0 ||
        q.getSaturate() != 1 || !q.getYZeroPoint() ||
        numElements(q.getYScale()) != 1 ||
        numElements(q.getYZeroPoint()) != 1 || !isInt(q.getY(), 8))
      return;
    Operation *def = q.getX().getDefiningOp();
    if (!def || !def->hasOneUse() ||
        !isa<RankedTensorType>(q.getX().getType()) ||
        !cast<RankedTensorType>(q.getX().getType()).getElementType().isF32())
      return;
    OpBuilder b(q);
    Value folded;
    // Integer kernels are fast for constant weights (packed at compile
    // time); a product of two activations (attention's) stays in float.
    auto constant = [](DequantizeLinearOp dq) {
      return dq && dq.getX().getDefiningOp<ConstantOp>();
    };
    if (auto conv = dyn_cast<ConvOp>(def)) {
      auto x = dequantized(conv.getX(), -1);
      auto w = dequantized(conv.getW(), 0);
      if (!x || !constant(w))
        return;
      Value bias;
      if (conv.getB() && !(bias = integerBias(conv.getB(), x, w)))
        return;
      SmallVector<Value> operands = {x.getX(),          x.getXScale(),
                                     x.getXZeroPoint(), w.getX(),
                                     w.getXScale(),     w.getXZeroPoint(),
                                     q.getYScale(),     q.getYZeroPoint()};
      if (bias)
        operands.push_back(bias);
      OperationState state(conv.getLoc(), QLinearConvOp::getOperationName());
      state.addOperands(operands);
      state.addTypes(q.getY().getType());
      // Conv's attributes are QLinearConv's (auto_pad, dilations, group,
      // kernel_shape, pads, strides).
      state.addAttributes(conv->getAttrs());
      folded = b.create(state)->getResult(0);
    } else if (auto mm = dyn_cast<MatMulOp>(def)) {
      auto at = dyn_cast<RankedTensorType>(mm.getA().getType());
      auto bt = dyn_cast<RankedTensorType>(mm.getB().getType());
      if (!at || !bt || bt.getRank() != 2)
        return;
      auto a = dequantized(mm.getA(), -1);
      auto w = dequantized(mm.getB(), 1);
      if (!a || !constant(w))
        return;
      folded = QLinearMatMulOp::create(
          b, mm.getLoc(), q.getY().getType(), a.getX(), a.getXScale(),
          a.getXZeroPoint(), w.getX(), w.getXScale(), w.getXZeroPoint(),
          q.getYScale(), q.getYZeroPoint());
    } else if (auto gemm = dyn_cast<GemmOp>(def)) {
      if (!(folded = gemmAsConv(b, gemm, q)))
        return;
    } else {
      return;
    }
    q.replaceAllUsesWith(folded);
    q->erase();
    def->erase();
  }

  /// A QDQ Gemm (A [M, K] per tensor, B constant per output column,
  /// alpha = beta = 1, A not transposed, the bias absent or the int32 one
  /// quantizers write) as the 1x1 QLinearConv it is: A as [M, K, 1, 1],
  /// B as [N, K, 1, 1], the result [M, N, 1, 1] reshaped back. Null where
  /// it is not such a Gemm.
  Value gemmAsConv(OpBuilder &b, GemmOp gemm, QuantizeLinearOp q) {
    auto at = dyn_cast<RankedTensorType>(gemm.getA().getType());
    auto bt = dyn_cast<RankedTensorType>(gemm.getB().getType());
    auto yt = dyn_cast<RankedTensorType>(q.getY().getType());
    if (gemm.getAlpha().convertToDouble() != 1.0 ||
        gemm.getBeta().convertToDouble() != 1.0 || gemm.getTransA() != 0 ||
        !at || !bt || !yt || at.getRank() != 2 || bt.getRank() != 2 ||
        !at.hasStaticShape() || !bt.hasStaticShape() || !yt.hasStaticShape())
      return {};
    bool trans = gemm.getTransB() != 0;
    auto a = dequantized(gemm.getA(), -1);
    auto w = dequantized(gemm.getB(), trans ? 0 : 1);
    if (!a || !w || !w.getX().getDefiningOp<ConstantOp>())
      return {};
    auto wv = constInts(w.getX());
    if (!wv)
      return {};
    Value bias;
    if (gemm.getC() && (numElements(gemm.getC()) != yt.getDimSize(1) ||
                        !(bias = integerBias(gemm.getC(), a, w))))
      return {};
    int64_t m = at.getDimSize(0), k = at.getDimSize(1);
    int64_t n = trans ? bt.getDimSize(0) : bt.getDimSize(1);
    Location loc = gemm.getLoc();
    auto shape = [&](ArrayRef<int64_t> dims) -> Value {
      auto st = RankedTensorType::get({(int64_t)dims.size()}, b.getI64Type());
      return ConstantOp::create(b, loc, st,
                                DenseIntElementsAttr::get(st, dims));
    };
    auto a4Type = RankedTensorType::get(
        {m, k, 1, 1},
        cast<RankedTensorType>(a.getX().getType()).getElementType());
    Value a4 = ReshapeOp::create(b, loc, a4Type, a.getX(), shape({m, k, 1, 1}));
    // The weights [N, K] (transB's layout) as QLinearConv's [N, K, 1, 1].
    Type we = cast<RankedTensorType>(w.getX().getType()).getElementType();
    SmallVector<APInt> nk;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j)
        nk.push_back(APInt(8, trans ? (*wv)[i * k + j] : (*wv)[j * n + i],
                           /*isSigned=*/true));
    auto w4Type = RankedTensorType::get({n, k, 1, 1}, we);
    Value w4 = ConstantOp::create(b, loc, w4Type,
                                  DenseIntElementsAttr::get(w4Type, nk));
    SmallVector<Value> operands = {a4,
                                   a.getXScale(),
                                   a.getXZeroPoint(),
                                   w4,
                                   w.getXScale(),
                                   w.getXZeroPoint(),
                                   q.getYScale(),
                                   q.getYZeroPoint()};
    if (bias)
      operands.push_back(bias);
    OperationState state(loc, QLinearConvOp::getOperationName());
    state.addOperands(operands);
    state.addTypes(RankedTensorType::get({m, n, 1, 1}, yt.getElementType()));
    Value y4 = b.create(state)->getResult(0);
    return ReshapeOp::create(b, loc, yt, y4, shape({m, n}));
  }

  /// The int32 bias QLinearConv takes, when `bias` is the dequantized
  /// int32 bias quantizers write: zero point 0 and scale x_scale *
  /// w_scale (per output channel), within float rounding, or all zeros.
  Value integerBias(Value bias, DequantizeLinearOp x, DequantizeLinearOp w) {
    auto dq = bias.getDefiningOp<DequantizeLinearOp>();
    if (!dq || !isInt(dq.getX(), 32) || !zeroPoint(dq.getXZeroPoint()) ||
        dq.getBlockSize() != 0)
      return {};
    // A zero bias is zero at any scale (quantizers share one zero bias
    // among convolutions with different input scales).
    if (zeroPoint(dq.getX()))
      return dq.getX();
    auto bs = constFloats(dq.getXScale());
    auto xs = constFloats(x.getXScale());
    auto ws = constFloats(w.getXScale());
    int64_t n = numElements(dq.getX());
    if (!bs || !xs || !ws || n < 1 || xs->size() != 1 ||
        (bs->size() != 1 && int64_t(bs->size()) != n) ||
        (ws->size() != 1 && int64_t(ws->size()) != n))
      return {};
    for (int64_t c = 0; c < n; ++c) {
      float want = (*xs)[0] * (*ws)[ws->size() == 1 ? 0 : c];
      float have = (*bs)[bs->size() == 1 ? 0 : c];
      if (!(std::fabs(have - want) <= 1e-6f * std::fabs(want)))
        return {};
    }
    return dq.getX();
  }
};

} // namespace
