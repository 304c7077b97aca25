//===- Sparsify.cpp - 2:4 structured sparsity of contraction weights ------===//
//
// Finds the contractions (float MatMul and Gemm; the int8 QLinearMatMul
// and MatMulInteger with zero weight zero points; float 2-D convolutions)
// whose constant weights are 2:4 sparse along the reduction dim K (in every
// group of four consecutive k for one output column n, at most two
// non-zeros: what 2:4 pruning in PyTorch and NVIDIA's ASP leave in a Linear
// layer's [N, K] weight; for a convolution's [F, C, KH, KW] weight, groups
// of four input channels c at each output channel and window tap, as ASP
// prunes convolutions) and marks them
// `kiln.sparsity = "2:4"`, which the lowering carries to the contraction
// and the target's code generation turns into a sparse kernel. With
// mode=force it first prunes the other eligible weights to 2:4 by
// magnitude. Every contraction is recorded in the module's
// `kiln.sparsity_layers` (sparse or dense, and why), which
// `kiln-compile --report` prints.
//
// The weights stay dense here: their compressed form is the kernel's
// (the CPU's expand-load layout, the GPU's mma.sp metadata), written
// where the kernel is.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "kiln/Dialect/Kiln/Transforms/ConstantValues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

#define DEBUG_TYPE "kiln-sparsify"

namespace kiln {
#define GEN_PASS_DEF_KILNSPARSIFY
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// A contraction's weight as the kernel reads it: the constant, and
/// whether it is stored [N, K] (a Gemm's transB, a transposed constant)
/// rather than [K, N].
struct Weight {
  ConstantOp constant;
  TransposeOp transpose; // Between the constant and the op, if any.
  bool nk = false;
  unsigned index = 1; // The op's ONNX input that is the weight.
  int64_t k = 0, n = 0;
  /// A convolution's window taps (KH * KW): its [F, C, KH, KW] weight is
  /// read as n = F * taps columns (f, tap) by k = C channels.
  int64_t taps = 0;
};

/// The position in the constant of `wt`'s element at column `n`, row `k`.
int64_t elementIndex(const Weight &wt, int64_t n, int64_t k) {
  if (wt.taps)
    return ((n / wt.taps) * wt.k + k) * wt.taps + n % wt.taps;
  return wt.nk ? n * wt.k + k : k * wt.n + n;
}

/// The number of groups of four along K (for each n) with more than two
/// non-zeros in `w`, read as [K, N] or [N, K]; `alongN` counts groups
/// along N instead (to say when a weight is 2:4 on the wrong axis).
int64_t denseGroups(ArrayRef<float> w, const Weight &wt, bool alongN) {
  int64_t outer = alongN ? wt.k : wt.n, inner = alongN ? wt.n : wt.k;
  auto at = [&](int64_t o, int64_t i) {
    int64_t kk = alongN ? o : i, nn = alongN ? i : o;
    return w[elementIndex(wt, nn, kk)];
  };
  int64_t bad = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g + 4 <= inner; g += 4) {
      int nz = 0;
      for (int64_t j = 0; j < 4; ++j)
        nz += at(o, g + j) != 0.0f;
      bad += nz > 2;
    }
  return bad;
}

struct SparsifyPass : public kiln::impl::KilnSparsifyBase<SparsifyPass> {
  using KilnSparsifyBase::KilnSparsifyBase;

  void runOnOperation() override {
    if (mode != "on" && mode != "force") {
      getOperation().emitError("kiln-sparsify: mode must be on or force, not '")
          << mode << "'";
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    SmallVector<Attribute> layers;
    getOperation().walk([&](Operation *op) {
      if (!isa<MatMulOp, GemmOp, ConvOp, ConvTransposeOp, MatMulIntegerOp,
               QLinearMatMulOp, ConvIntegerOp, QLinearConvOp>(op))
        return;
      NamedAttrList entry;
      entry.append("name", StringAttr::get(ctx, onnxNodeName(op->getLoc())));
      entry.append("op",
                   StringAttr::get(ctx, op->getName().stripDialect().str()));
      std::string reason = visit(op, entry);
      entry.append("sparse", BoolAttr::get(ctx, reason.empty()));
      entry.append("reason", StringAttr::get(ctx, reason));
      layers.push_back(entry.getDictionary(ctx));
    });
    getOperation()->setAttr("kiln.sparsity_layers",
                            ArrayAttr::get(ctx, layers));
  }

  /// Marks `op` 2:4 (pruning its weight first with mode=force) and returns
  /// "", or returns why it stays dense.
  std::string visit(Operation *op, NamedAttrList &entry) {
    // A QDQ Gemm becomes a 1x1 integer convolution of 1x1 planes
    // (kiln-fold-qdq), which the lowering computes as its product: its
    // [F, C, 1, 1] weight is an [N, K] matrix.
    bool pointwise = isPointwiseGemm(op);
    if (isa<ConvTransposeOp>(op))
      return "a transposed convolution: no sparse kernels for it";
    if (isa<ConvOp, ConvIntegerOp, QLinearConvOp>(op) && !pointwise) {
      if (!convolutions)
        return "a convolution: this target runs convolutions dense (the "
               "GPU's mma.sp kernels take them)";
      return visitConv(op, entry);
    }
    // The integer products (a QDQ model's, or --precision=int8's after
    // kiln-fold-qdq): the weight is ONNX input 3 of the QLinear forms, 1
    // of the Integer ones; its zero point input 5 or 3.
    bool integer = isa<MatMulIntegerOp, QLinearMatMulOp>(op) || pointwise;
    bool qlinear = isa<QLinearMatMulOp, QLinearConvOp>(op);
    unsigned wIndex = qlinear ? 3 : 1;
    Value b = getOnnxInput(op, wIndex);
    auto type = dyn_cast<RankedTensorType>(b.getType());
    if (!type || !type.hasStaticShape())
      return "the weight's shape is not static";
    Type elt = type.getElementType();
    if (integer) {
      if (std::string why = integerWeightReason(op, elt); !why.empty())
        return why;
    } else if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      // float32 (the CPU's sparse kernels; the GPU's after --precision),
      // or a model's own f16/bf16 (the GPU's).
      return "the weight is not f32, f16 or bf16";
    }
    if (type.getRank() != 2 && !pointwise)
      return "the weight is not a matrix (rank " +
             std::to_string(type.getRank()) + ")";
    Weight w;
    w.nk = pointwise;
    w.index = wIndex;
    if (auto gemm = dyn_cast<GemmOp>(op))
      w.nk = gemm.getTransB() != 0;
    Value src = b;
    // (A pointwise Gemm's 4-D weight is read as stored.)
    if (auto tr = pointwise ? TransposeOp() : b.getDefiningOp<TransposeOp>()) {
      auto perm = tr.getPerm();
      if (!perm || (*perm)[0] == 1) {
        w.transpose = tr;
        w.nk = !w.nk;
        src = tr.getData();
      }
    }
    w.constant = src.getDefiningOp<ConstantOp>();
    if (!w.constant)
      return "the weight is not a constant";
    std::optional<SmallVector<float>> values = weightValues(src, integer);
    if (!values)
      return "the weight's values cannot be read";
    auto st = cast<RankedTensorType>(src.getType());
    w.k = w.nk ? st.getDimSize(1) : st.getDimSize(0);
    w.n = w.nk ? st.getDimSize(0) : st.getDimSize(1);
    return check(op, w, *values, elt, entry);
  }

  /// Why the weight (of element type `elt`) of the integer product or
  /// convolution `op` cannot be checked on its stored bytes, or "": the
  /// sparse int8 kernels multiply those bytes, signed ones, whose zeros
  /// are the weight's zeros where its zero point (ONNX input 5 of the
  /// QLinear forms, 3 of the Integer ones) is 0.
  static std::string integerWeightReason(Operation *op, Type elt) {
    if (!elt.isSignlessInteger(8))
      return "the integer weight is not int8";
    bool qlinear = isa<QLinearMatMulOp, QLinearConvOp>(op);
    if (Value zp = getOnnxInput(op, qlinear ? 5 : 3)) {
      std::optional<SmallVector<int64_t>> z = constInts(zp);
      if (!z || llvm::any_of(*z, [](int64_t v) { return v != 0; }))
        return "the weight's zero point is not a constant 0";
    }
    return "";
  }

  /// The values of the constant weight `src` as floats (int8 ones are
  /// exact as floats), or nothing where they cannot be read.
  static std::optional<SmallVector<float>> weightValues(Value src,
                                                        bool integer) {
    if (!integer)
      return constFloatsWidened(src);
    if (std::optional<SmallVector<int64_t>> ints = constInts(src))
      return llvm::map_to_vector(*ints, [](int64_t v) { return float(v); });
    return std::nullopt;
  }

  /// Records `w`'s K, N and bytes in `entry`; marks `op` 2:4 where its
  /// `values` are (pruning them first with mode=force) and returns "", or
  /// returns why it stays dense.
  std::string check(Operation *op, Weight &w, SmallVector<float> &values,
                    Type elt, NamedAttrList &entry) {
    MLIRContext *ctx = op->getContext();
    auto i64 = [&](int64_t v) {
      return IntegerAttr::get(IntegerType::get(ctx, 64), v);
    };
    // A convolution's product: K = C x taps, N = F.
    int64_t taps = std::max<int64_t>(w.taps, 1);
    entry.append("k", i64(w.k * taps));
    entry.append("n", i64(w.n / taps));
    entry.append("weight_bytes",
                 i64(w.k * w.n * elt.getIntOrFloatBitWidth() / 8));
    if (w.k % 4 != 0)
      return (w.taps ? llvm::formatv(
                           "C = {0} input channels is not a multiple of 4", w.k)
                     : llvm::formatv("K = {0} is not a multiple of 4", w.k))
          .str();
    int64_t groups = w.k / 4 * w.n;
    int64_t bad = denseGroups(values, w, false);
    if (bad > 0 && mode != "force") {
      std::string why =
          llvm::formatv("not 2:4 along {0}: {1} of {2} groups of four have "
                        "more than two non-zeros",
                        w.taps ? "the input channels" : "K", bad, groups)
              .str();
      if (!w.taps && w.n % 4 == 0 && denseGroups(values, w, true) == 0)
        why += " (it is 2:4 along N, which is not the reduction dim)";
      return why;
    }
    if (bad > 0)
      prune(op, w, values, entry);
    op->setAttr("kiln.sparsity", StringAttr::get(ctx, "2:4"));
    return "";
  }

  /// A 2-D convolution (float, or the int8 ConvInteger and QLinearConv of
  /// a QDQ model or --precision=int8): its constant [F, C, KH, KW] weight
  /// 2:4 along C at each (f, kh, kw), the groups of four consecutive k of
  /// the GEMM a channels-last kernel runs (K = (kh, kw, c)). An int8
  /// weight is checked on its stored bytes, whose zeros are the weight's
  /// zeros where its zero point is 0.
  std::string visitConv(Operation *op, NamedAttrList &entry) {
    int64_t group = 1;
    if (auto conv = dyn_cast<ConvOp>(op))
      group = conv.getGroup();
    else if (auto conv = dyn_cast<ConvIntegerOp>(op))
      group = conv.getGroup();
    else if (auto conv = dyn_cast<QLinearConvOp>(op))
      group = conv.getGroup();
    if (group != 1)
      return "a grouped convolution (group " + std::to_string(group) + ")";
    bool integer = !isa<ConvOp>(op);
    Weight w;
    w.nk = true;
    w.index = isa<QLinearConvOp>(op) ? 3 : 1;
    Value b = getOnnxInput(op, w.index);
    auto type = dyn_cast<RankedTensorType>(b.getType());
    if (!type || !type.hasStaticShape())
      return "the weight's shape is not static";
    if (type.getRank() != 4)
      return "not a 2-D convolution (a rank-" + std::to_string(type.getRank()) +
             " weight)";
    Type elt = type.getElementType();
    if (integer) {
      if (std::string why = integerWeightReason(op, elt); !why.empty())
        return why;
    } else if (!elt.isF32() && !elt.isF16() && !elt.isBF16()) {
      return "the weight is not f32, f16 or bf16";
    }
    w.constant = b.getDefiningOp<ConstantOp>();
    if (!w.constant)
      return "the weight is not a constant";
    std::optional<SmallVector<float>> values = weightValues(b, integer);
    if (!values)
      return "the weight's values cannot be read";
    w.taps = type.getDimSize(2) * type.getDimSize(3);
    w.n = type.getDimSize(0) * w.taps;
    w.k = type.getDimSize(1);
    return check(op, w, *values, elt, entry);
  }

  /// mode=force: keeps the two largest magnitudes of each group of four
  /// along K (the first on ties) and gives `op` the pruned constant.
  void prune(Operation *op, Weight w, SmallVector<float> &values,
             NamedAttrList &entry) {
    double removed = 0, total = 0;
    int64_t zeroed = 0;
    for (float v : values)
      total += double(v) * v;
    for (int64_t n = 0; n < w.n; ++n)
      for (int64_t g = 0; g < w.k; g += 4) {
        int64_t idx[4];
        for (int64_t j = 0; j < 4; ++j)
          idx[j] = elementIndex(w, n, g + j);
        std::stable_sort(idx, idx + 4, [&](int64_t a, int64_t b) {
          return std::fabs(values[a]) > std::fabs(values[b]);
        });
        for (int j = 2; j < 4; ++j)
          if (values[idx[j]] != 0.0f) {
            removed += double(values[idx[j]]) * values[idx[j]];
            values[idx[j]] = 0.0f;
            ++zeroed;
          }
      }
    OpBuilder b(op);
    auto type = cast<RankedTensorType>(w.constant.getType());
    std::string name = onnxNodeName(op->getLoc());
    std::string prunedName = (name.empty() ? "weight" : name) + "_2to4";
    Value pruned;
    if (isa<IntegerType>(type.getElementType())) {
      // int8: the kept bytes as they were (pruning by the stored values'
      // magnitude is pruning by the weight's: one scale per column).
      SmallVector<int8_t> bytes =
          llvm::map_to_vector(values, [](float v) { return int8_t(v); });
      ArrayRef<char> raw(reinterpret_cast<const char *>(bytes.data()),
                         bytes.size());
      ElementsAttr attr =
          bytes.size() <= 8
              ? ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, raw))
              : ElementsAttr(DenseResourceElementsAttr::get(
                    type, prunedName,
                    HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, 64)));
      pruned = ConstantOp::create(b, w.constant.getLoc(), type, attr);
    } else {
      pruned = floatConstant(b, w.constant.getLoc(), type, values, prunedName);
    }
    if (w.transpose) {
      Operation *tr = w.transpose;
      if (!tr->hasOneUse()) {
        tr = b.clone(*tr);
        op->setOperand(w.index, tr->getResult(0));
      }
      tr->setOperand(0, pruned);
    } else {
      op->setOperand(w.index, pruned);
    }
    MLIRContext *ctx = op->getContext();
    entry.append("pruned", IntegerAttr::get(IntegerType::get(ctx, 64), zeroed));
    entry.append("pruned_norm",
                 FloatAttr::get(Float64Type::get(ctx),
                                total > 0 ? std::sqrt(removed / total) : 0.0));
  }
};

} // namespace
