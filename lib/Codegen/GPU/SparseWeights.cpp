//===- SparseWeights.cpp - 2:4 weights compressed for mma.sp --------------===//
//
// A half-precision or int8 contraction `out[..., m, n] += a[..., m, k] *
// w[k, n]` (or w[n, k]) that kiln-sparsify marked 2:4 and whose weight `w`
// is a constant with at most two non-zeros in every group of four
// consecutive k of a column n gets `w` compressed in the layout the sparse
// tensor cores read (`mma.sp`, the weight as its A operand: rows are n, the
// reduction k). f16 and bf16 weights take m16n8k32, int8 ones (signed
// products into s32) m16n8k64; with S that K step (32 or 64) and K rounded
// up to Kp, a multiple of S:
//
//   kiln_sparse_values [N][Kp / 2]           f16, bf16 or i8
//     per row, the two kept values of each group of four k, in k order;
//   kiln_sparse_meta   [ceil(N / 16)][Kp / S][W]   i32
//     per 16 rows and S k, the W metadata words of one mma.sp, in the
//     order of the lanes that give them. Each group's code is 4 bits: the
//     position within its group of the first kept value in the low two
//     bits, the second's in the high two (always in increasing order).
//     m16n8k32 (W = 16, selector 0): word (g, h), the register of lane
//     4g + h, holds in bits 16r + 4c to 16r + 4c + 3 the code of row
//     g + 8r, group 4h + c. m16n8k64 (W = 32, every lane): word 4g + t
//     holds in bits 4q to 4q + 3 the code of row g + 8 (t % 2), group
//     8 (t / 2) + q (PTX ISA, the metadata figures of sparse
//     mma.m16n8k64 with .u8/.s8).
//
// A 2-D convolution marked 2:4 (along its input channels) is taken by a
// second run of the pass (`convolutions`), after kiln-gpu-channels-last
// has made it a `linalg.conv_2d_nhwc_fhwc` with a constant [F, KH, KW, C]
// weight: that is the [N, K] weight above with N = F and K = (kh, kw, c),
// the order in which kiln-gpu-contractions walks the implicit GEMM's
// reduction, so each group of four consecutive k is four input channels
// of one window tap. A convolution left NCHW walks K as (c, kh, kw) and
// stays dense.
//
// A group with fewer than two non-zeros keeps zeros to make two; rows and
// groups past N and K are zero. That is 56.25% of the dense bytes for
// f16/bf16 (half the values plus 4 bits per group of four), 62.5% for
// int8.
//
// The weight itself becomes a private memref global whose attributes
// name the two compressed globals (`kiln.sparse_values`,
// `kiln.sparse_meta`), the weight dim that is k (`kiln.sparse_k_dim`)
// and N and K; the contraction reads it through `bufferization.to_tensor`.
// The mark survives the fusions that rebuild the contraction after this
// pass: `kiln-gpu-contractions` finds the global behind the operand and
// builds the sparse kernel, which reads only the compressed globals (the
// dense weight stays in the IR for every other reader, and is not packed
// into the module when nothing reads it). Every marked contraction is
// recorded in the module's `kiln.sparse_kernels` (sparse, or dense and
// why) for `kiln-compile --report`.
//
//===----------------------------------------------------------------------===//

#include "../GemmDims.h"
#include "../SparseKernels.h"
#include "kiln/Codegen/Passes.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>

namespace kiln {
#define GEN_PASS_DEF_KILNGPUSPARSEWEIGHTS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A marked contraction's weight: the constant (possibly behind a 2-D
/// transpose) and its values as [n][k] bits (int8: the byte, zero-extended).
struct SparseWeight {
  linalg::LinalgOp op;
  arith::ConstantOp constant;
  OpOperand *use = nullptr; // where the constant is read
  bool nk = false;          // the constant is [N, K]
  int64_t n = 0, k = 0;
  Type elt;
  std::vector<uint16_t> w; // [n][k]

  bool int8() const { return elt.isInteger(8); }
  int64_t elementBytes() const { return int8() ? 1 : 2; }
  /// The k of one mma.sp and its metadata words (kiln::sparseMmaK).
  int64_t kStep() const { return kiln::sparseMmaK(elementBytes()); }
  int64_t metaWords() const { return kiln::sparseMetaWords(elementBytes()); }
  int64_t paddedK() const { return (k + kStep() - 1) / kStep() * kStep(); }
  int64_t denseBytes() const { return n * k * elementBytes(); }
  /// Kept values [N][Kp / 2] and metadata words per 16 rows and mma.sp
  /// step (see compress).
  int64_t sparseBytes() const {
    return n * paddedK() / 2 * elementBytes() +
           (n + 15) / 16 * (paddedK() / kStep()) * metaWords() * 4;
  }
  bool isZero(uint16_t bits) const {
    return int8() ? bits == 0 : (bits & 0x7fff) == 0; // f16/bf16: +-0
  }
  StringRef typeName() const {
    return int8() ? "int8" : elt.isF16() ? "f16" : "bf16";
  }
};

/// Why a float32 `what` stays dense.
std::string float32Reason(StringRef what) {
  return ("a float32 " + what +
          ": the sparse tensor-core kernels are f16, bf16 and int8 "
          "(--precision=fp16, bf16 or int8; --keep-precision?)")
      .str();
}

/// Reads `s.constant` (a splat, or raw bytes laid out [N, K] when `s.nk`,
/// else [K, N]) into `s.w`; fails with `why` where it has no constant or
/// its values cannot be read.
LogicalResult readBits(SparseWeight &s, std::string &why) {
  if (!s.constant) {
    why = "the weight is not a constant";
    return failure();
  }
  s.w.resize(s.n * s.k);
  // A splat (all zeros, say) is the same value everywhere.
  auto dense = dyn_cast<DenseElementsAttr>(s.constant.getValue());
  if (dense && dense.isSplat()) {
    APInt bits = s.int8() ? dense.getSplatValue<APInt>()
                          : dense.getSplatValue<APFloat>().bitcastToAPInt();
    std::fill(s.w.begin(), s.w.end(),
              static_cast<uint16_t>(bits.getZExtValue()));
    return success();
  }
  int64_t eb = s.elementBytes();
  std::optional<ArrayRef<char>> bytes =
      kiln::rawConstantBytes(s.constant.getValue());
  if (!bytes || static_cast<int64_t>(bytes->size()) != s.n * s.k * eb) {
    why = "the weight's values cannot be read";
    return failure();
  }
  const char *src = bytes->data();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k) {
      uint16_t bits = 0;
      std::memcpy(&bits, src + eb * (s.nk ? n * s.k + k : k * s.n + n), eb);
      s.w[n * s.k + k] = bits;
    }
  return success();
}

/// Whether `t` is a weight type the sparse kernels take.
bool sparseElementType(Type t) {
  return t.isF16() || t.isBF16() || t.isSignlessInteger(8);
}

/// `op`, cloned for `use` (which then reads the clone) where another op
/// reads it too: a view of the weight that this product alone reads, so
/// that the compressed global can replace its source.
Operation *ownedBy(Operation *op, OpOperand *use) {
  if (op->hasOneUse())
    return op;
  OpBuilder ob(op);
  Operation *clone = ob.clone(*op);
  use->set(clone->getResult(0));
  return clone;
}

/// `op`'s weight, or why it has none the sparse kernel takes.
FailureOr<SparseWeight> match(linalg::GenericOp op, std::string &why) {
  std::optional<kiln::GemmTypes> types = kiln::staticGemmTypes(op);
  std::optional<kiln::GemmDims> dims = kiln::gemmDims(op);
  if (!types || !dims || !kiln::isGpuTiledContraction(op)) {
    why = "not a static product [..., m, k] x [k, n] the tiled kernels take";
    return failure();
  }
  Type elt = types->b.getElementType();
  if (elt.isF32()) {
    why = float32Reason("product");
    return failure();
  }
  if (!sparseElementType(elt) || types->a.getElementType() != elt) {
    why = "the product's operands are not both f16, bf16 or int8";
    return failure();
  }
  SparseWeight s;
  s.op = op;
  s.elt = elt;
  s.nk = dims->nk;
  s.use = op.getDpsInputOperand(1);
  Value b = s.use->get();
  if (auto tr = b.getDefiningOp<linalg::TransposeOp>()) {
    if (tr.getPermutation().size() == 2 && tr.getPermutation()[0] == 1 &&
        tr.getInput().getDefiningOp<arith::ConstantOp>()) {
      // A transpose that another op reads too: this product gets its own,
      // which kiln-fuse-elementwise folds into it (one with two readers
      // stays a kernel, and the product would not see the weight).
      tr = cast<linalg::TransposeOp>(ownedBy(tr, s.use));
      s.nk = !s.nk;
      s.use = &tr.getInputMutable();
      b = tr.getInput();
    }
  }
  // A reshape of the constant (a QDQ Gemm's [F, C, 1, 1] weight collapsed
  // to [F, C], where the constant is a resource that does not fold): the
  // same bytes in the same order, so the global replaces the reshape's
  // source and the kernel finds it through the view.
  if (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
          b.getDefiningOp()) &&
      b.getDefiningOp()->getOperand(0).getDefiningOp<arith::ConstantOp>()) {
    Operation *reshape = ownedBy(b.getDefiningOp(), s.use);
    s.use = &reshape->getOpOperand(0);
    b = reshape->getOperand(0);
  }
  s.constant = b.getDefiningOp<arith::ConstantOp>();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  s.n = ranges[dims->n];
  s.k = ranges[dims->k];
  if (failed(readBits(s, why)))
    return failure();
  return s;
}

/// A channels-last convolution's weight (what kiln-gpu-channels-last
/// writes: a constant [F, KH, KW, C] read at (f, kh, kw, c)), as the
/// product's [N, K] with N = F and K = (kh, kw, c), the order in which
/// kiln-gpu-contractions walks the convolution's reduction; or why the
/// sparse kernel cannot take it.
FailureOr<SparseWeight> matchConv(linalg::Conv2DNhwcFhwcOp op,
                                  std::string &why) {
  auto xt = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto wt = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  if (!xt || !wt || !xt.hasStaticShape() || !wt.hasStaticShape() ||
      !op.hasPureTensorSemantics()) {
    why = "not a static convolution on tensors";
    return failure();
  }
  Type elt = wt.getElementType();
  if (elt.isF32()) {
    why = float32Reason("convolution");
    return failure();
  }
  if (!sparseElementType(elt) || xt.getElementType() != elt) {
    why = "the convolution's operands are not both f16, bf16 or int8";
    return failure();
  }
  SparseWeight s;
  s.op = op;
  s.elt = elt;
  s.nk = true;
  s.use = op.getDpsInputOperand(1);
  s.constant = s.use->get().getDefiningOp<arith::ConstantOp>();
  s.n = wt.getDimSize(0);
  s.k = wt.getDimSize(1) * wt.getDimSize(2) * wt.getDimSize(3);
  if (failed(readBits(s, why)))
    return failure();
  return s;
}

/// Groups of four along k with more than two non-zeros.
int64_t denseGroups(const SparseWeight &s) {
  int64_t bad = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; k += 4) {
      int nz = 0;
      for (int64_t j = k; j < std::min(k + 4, s.k); ++j)
        nz += !s.isZero(s.w[n * s.k + j]);
      bad += nz > 2;
    }
  return bad;
}

/// The compressed values (raw bytes) and metadata of `s` (see the file
/// comment).
void compress(const SparseWeight &s, std::vector<char> &values,
              std::vector<uint32_t> &meta) {
  int64_t kp = s.paddedK(), groups = kp / 4, eb = s.elementBytes();
  int64_t blocks = (s.n + 15) / 16, steps = kp / s.kStep();
  values.assign(s.n * kp / 2 * eb, 0);
  // The 4-bit code of each group of each row (16-row blocks: past N, the
  // code of a zero group).
  std::vector<uint8_t> codes(blocks * 16 * groups, 0x4);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t q = 0; q < groups; ++q) {
      int pos[2], kept = 0;
      for (int j = 0; j < 4; ++j) {
        int64_t k = 4 * q + j;
        if (k < s.k && !s.isZero(s.w[n * s.k + k]))
          pos[kept++] = j;
      }
      // Fewer than two non-zeros: zeros at the first free positions.
      for (int j = 0; j < 4 && kept < 2; ++j)
        if (kept == 0 || pos[0] != j)
          pos[kept++] = j;
      if (pos[0] > pos[1])
        std::swap(pos[0], pos[1]);
      for (int i = 0; i < 2; ++i) {
        int64_t k = 4 * q + pos[i];
        uint16_t bits = k < s.k ? s.w[n * s.k + k] : 0;
        std::memcpy(&values[(n * kp / 2 + 2 * q + i) * eb], &bits, eb);
      }
      codes[n * groups + q] = static_cast<uint8_t>(pos[0] | pos[1] << 2);
    }
  int64_t words = s.metaWords();
  meta.assign(blocks * steps * words, 0);
  auto code = [&](int64_t row, int64_t group) -> uint32_t {
    return codes[row * groups + group];
  };
  // The row and group of nibble q of word w (of block blk, step st).
  auto nibble = [&](int64_t blk, int64_t st, int64_t w, int64_t q) {
    if (s.int8()) {
      // m16n8k64, lane w = 4g + t: row g + 8 (t % 2), group 8 (t / 2) + q.
      int64_t g = w / 4, t = w % 4;
      return std::pair(16 * blk + g + 8 * (t % 2), 16 * st + 8 * (t / 2) + q);
    }
    // m16n8k32, word w = 2g + h (lane 4g + h), q = 4r + c: row g + 8r,
    // group 4h + c.
    int64_t g = w / 2, h = w % 2;
    return std::pair(16 * blk + g + 8 * (q / 4), 8 * st + 4 * h + q % 4);
  };
  for (int64_t blk = 0; blk < blocks; ++blk)
    for (int64_t st = 0; st < steps; ++st)
      for (int64_t w = 0; w < words; ++w)
        for (int64_t q = 0; q < 8; ++q) {
          auto [row, group] = nibble(blk, st, w, q);
          meta[(blk * steps + st) * words + w] |= code(row, group) << 4 * q;
        }
}

/// `data` as the elements of `type`: inline up to 4 KiB (readable in the
/// IR), else a dense resource named `name` (big weights are not uniqued
/// in the context).
ElementsAttr raw(RankedTensorType type, StringRef name, ArrayRef<char> data) {
  if (data.size() <= 4096)
    return DenseElementsAttr::getFromRawBuffer(type, data);
  return DenseResourceElementsAttr::get(
      type, name, HeapAsmResourceBlob::allocateAndCopyWithAlign(data, 64));
}

struct GpuSparseWeightsPass
    : public kiln::impl::KilnGpuSparseWeightsBase<GpuSparseWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // The products; with `convolutions` (after kiln-gpu-channels-last),
    // the convolutions, which are marked as named ops.
    SmallVector<linalg::LinalgOp> marked;
    if (!convolutions) {
      for (linalg::GenericOp op : kiln::sparsityMarked(module))
        marked.push_back(op);
    } else {
      module.walk([&](linalg::LinalgOp op) {
        if (op->hasAttr("kiln.sparsity") &&
            isa<linalg::Conv2DNhwcFhwcOp, linalg::Conv2DNchwFchwOp>(op))
          marked.push_back(op);
      });
    }
    if (marked.empty())
      return;
    SymbolTable symbols(module);
    OpBuilder b(ctx);
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    SmallVector<Attribute> kernels;
    // A constant that several products read the same way is compressed
    // once: its weight global, by (constant, k is the constant's dim 1).
    DenseMap<std::pair<Operation *, unsigned>, memref::GlobalOp> done;
    for (linalg::LinalgOp op : marked) {
      NamedAttrList entry;
      entry.append("name",
                   StringAttr::get(ctx, kiln::onnxNodeName(op.getLoc())));
      std::string why;
      FailureOr<SparseWeight> s = failure();
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
        s = match(generic, why);
      else if (auto conv =
                   dyn_cast<linalg::Conv2DNhwcFhwcOp>(op.getOperation()))
        s = matchConv(conv, why);
      else
        why = "an NCHW convolution (channels not in whole 16-byte runs, or "
              "--gpu-channels-last=false): its kernel walks K as (c, kh, "
              "kw), where the 2:4 groups of input channels are not "
              "consecutive";
      if (succeeded(s)) {
        entry.append("dense_bytes", i64(s->denseBytes()));
        if (int64_t bad = denseGroups(*s))
          why = llvm::formatv("not 2:4 along K in {0}: {1} groups of four "
                              "have more than two non-zeros",
                              s->typeName(), bad)
                    .str();
        else if (s->sparseBytes() >= s->denseBytes())
          // A short K padded to one mma.sp step: the kernel would read
          // more bytes than the dense one.
          why = llvm::formatv("K = {0} pads to {1}: the compressed weight "
                              "({2} bytes) is not smaller than the dense one",
                              s->k, s->paddedK(), s->sparseBytes())
                    .str();
      }
      op->removeAttr("kiln.sparsity");
      if (failed(s) || !why.empty()) {
        entry.append("kernel", StringAttr::get(ctx, "dense"));
        entry.append("reason", StringAttr::get(ctx, why));
        kernels.push_back(entry.getDictionary(ctx));
        continue;
      }
      Location loc = op.getLoc();
      auto weightType = cast<RankedTensorType>(s->constant.getType());
      memref::GlobalOp &weight = done[{s->constant, s->nk ? 1u : 0u}];
      entry.append("sparse_bytes", i64(s->sparseBytes()));
      entry.append("kernel", StringAttr::get(ctx, "sparse"));
      kernels.push_back(entry.getDictionary(ctx));
      if (!weight) {
        std::vector<char> values;
        std::vector<uint32_t> meta;
        compress(*s, values, meta);
        weight = compressedWeight(b, module, symbols, *s, values, meta);
      }
      b.setInsertionPoint(s->use->getOwner());
      Value memref = memref::GetGlobalOp::create(b, loc, weight.getType(),
                                                 weight.getSymName());
      Value tensor = bufferization::ToTensorOp::create(
          b, loc, weightType, memref, /*restrict=*/true, /*writable=*/false);
      s->use->set(tensor);
      if (s->constant->use_empty())
        s->constant->erase();
    }
    kiln::recordSparseKernels(module, kernels);
  }

  /// The globals of `s`'s compressed weight (`values`, `meta`), and the
  /// weight global that names them.
  memref::GlobalOp compressedWeight(OpBuilder &b, ModuleOp module,
                                    SymbolTable &symbols, SparseWeight &s,
                                    ArrayRef<char> values,
                                    ArrayRef<uint32_t> meta) {
    Location loc = s.op.getLoc();
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    auto global = [&](StringRef name, Type elt, ArrayRef<char> data,
                      int64_t count) {
      auto type = RankedTensorType::get({count}, elt);
      return kiln::addConstantGlobal(b, module, symbols, loc, name,
                                     MemRefType::get({count}, elt),
                                     raw(type, name, data));
    };
    memref::GlobalOp valuesGlobal =
        global("kiln_sparse_values", s.elt, values,
               static_cast<int64_t>(values.size()) / s.elementBytes());
    memref::GlobalOp metaGlobal =
        global("kiln_sparse_meta", b.getI32Type(),
               ArrayRef<char>(reinterpret_cast<const char *>(meta.data()),
                              meta.size() * 4),
               meta.size());
    // The dense weight as a global that names its compressed form.
    auto weightType = cast<RankedTensorType>(s.constant.getType());
    memref::GlobalOp weight = kiln::addConstantGlobal(
        b, module, symbols, loc, "kiln_sparse_weight",
        MemRefType::get(weightType.getShape(), weightType.getElementType()),
        cast<ElementsAttr>(s.constant.getValue()));
    weight->setAttr("kiln.sparse_values",
                    FlatSymbolRefAttr::get(valuesGlobal.getSymNameAttr()));
    weight->setAttr("kiln.sparse_meta",
                    FlatSymbolRefAttr::get(metaGlobal.getSymNameAttr()));
    weight->setAttr("kiln.sparse_k_dim", i64(s.nk ? 1 : 0));
    weight->setAttr("kiln.sparse_n", i64(s.n));
    weight->setAttr("kiln.sparse_k", i64(s.k));
    return weight;
  }
};

} // namespace

memref::GlobalOp kiln::sparseWeightGlobal(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(def)) {
      v = toTensor.getBuffer();
      continue;
    }
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      auto g = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          get, get.getNameAttr());
      return g && g->hasAttr("kiln.sparse_values") &&
                     g->hasAttr("kiln.sparse_meta")
                 ? g
                 : memref::GlobalOp();
    }
    if (!isBufferView(def) || def->getNumOperands() < 1)
      return {};
    v = def->getOperand(0);
  }
  return {};
}
