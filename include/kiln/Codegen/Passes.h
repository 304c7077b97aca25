//===- Passes.h - Kiln codegen passes ----------------------------*- C++
//-*-===//

#ifndef KILN_CODEGEN_PASSES_H
#define KILN_CODEGEN_PASSES_H

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

#include <limits>
#include <vector>

namespace kiln {
#define GEN_PASS_DECL
#include "kiln/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Codegen/Passes.h.inc"

/// The mark (a unit attribute) of the 8-bit tile products that
/// kiln-cpu-int8-gemm{amx} writes and kiln-cpu-amx-tiles runs on AMX; it
/// promises that the product's rows and columns are multiples of 16.
inline constexpr llvm::StringLiteral kAmxTilesAttr = "kiln.amx_tiles";

/// The raw bytes of a non-splat constant (inline or a dense resource), or
/// nothing: what kiln-pack-weights and kiln-cpu-int8-gemm repack.
std::optional<llvm::ArrayRef<char>> rawConstantBytes(mlir::Attribute value);

/// The elements of `bytes` (each `eltBytes` long) that a row-major walk of
/// `shape` reaches, element idx at offset sum(idx[d] * strides[d]) (in
/// elements): a permuted or packed copy of a constant.
std::vector<char> gatherBytes(llvm::ArrayRef<char> bytes, int64_t eltBytes,
                              llvm::ArrayRef<int64_t> shape,
                              llvm::ArrayRef<int64_t> strides);

/// Constant `cst` (a static tensor of whole-byte elements whose bytes
/// rawConstantBytes reads) transposed by `perm` (new dim i is old dim
/// perm[i]): a dense resource constant `name` made at `b`'s insertion
/// point; null where `cst` is not such a constant.
mlir::Value permutedConstant(mlir::OpBuilder &b, mlir::Value cst,
                             llvm::ArrayRef<int64_t> perm,
                             llvm::StringRef name);

/// `x` seen through a `tensor.pad` of only its last two dims (an NCHW
/// plane) with a constant zero, static: the pad's source and its top and
/// left padding. Nothing for other values.
struct PlanePad {
  mlir::Value source;
  int64_t top = 0, left = 0;
};
std::optional<PlanePad> zeroPlanePad(mlir::Value x);

/// Ops whose result views their source's buffer (memref.view, subview,
/// expand/collapse_shape, reshape, reinterpret_cast, cast): on the host of
/// a GPU module they only compute a pointer and a layout.
bool isBufferView(mlir::Operation *op);

/// The bytes of a function argument (the arena, an input, an output) or a
/// weight that a buffer views: a constant-offset `memref.view` of the
/// argument (or the whole argument or global), seen through subviews and
/// reshapes (as their whole source). Two buffers whose bytes do not overlap
/// never alias.
struct BufferBytes {
  mlir::Value base;
  int64_t begin = 0, end = std::numeric_limits<int64_t>::max();
  bool overlaps(const BufferBytes &o) const {
    return base == o.base && begin < o.end && o.begin < end;
  }
};
/// The bytes `v` views, or failure where they are not known statically.
mlir::FailureOr<BufferBytes> bufferBytes(mlir::Value v);

/// Whether `kiln-gpu-contractions` makes a tiled GEMM kernel of `op` (on
/// tensors or buffers: the op's maps and body qualify), which reads a
/// zero-padded input through in its own tile loads.
bool isGpuTiledContraction(mlir::linalg::LinalgOp op);

/// The loop dims of a contraction `kiln-gpu-contractions` tiles, by group
/// (batch, M, N, K; see that pass), with the static loop ranges.
struct GpuContractionDims {
  llvm::SmallVector<unsigned> batch, m, n, k;
  llvm::SmallVector<int64_t> sizes;
  int64_t extent(llvm::ArrayRef<unsigned> dims) const {
    int64_t e = 1;
    for (unsigned d : dims)
      e *= sizes[d];
    return e;
  }
};
/// `op`'s dims when `kiln-gpu-contractions` tiles it (on tensors or
/// buffers), else nullopt.
std::optional<GpuContractionDims>
matchGpuTiledContraction(mlir::linalg::LinalgOp op);
/// The weight global `kiln-gpu-sparse-weights` made of a 2:4 weight (it
/// names the compressed values and metadata) that `v` reads, through
/// `bufferization.to_tensor` and buffer views; null for any other value.
mlir::memref::GlobalOp sparseWeightGlobal(mlir::Value v);

/// An attention as the Attention lowering writes it, bufferized: the
/// scores S = Q K^T (a zero-filled contraction of half operands into f32),
/// elementwise ops in place on S, softmax (row maximum, exp of the
/// difference in place, row sum, division rounded to the half type into
/// P), O = P V (zero-filled), and maybe an elementwise op on O right
/// after. S, the row buffers and P are used by the chain only.
/// `kiln-gpu-flash-attention` runs it as one kernel; `kiln-plan-memory`'s
/// `attention-inputs-live` keeps what it reads live to its end.
struct AttentionChain {
  mlir::linalg::GenericOp scores, rowMax, exps, rowSum, normalize, context;
  mlir::linalg::GenericOp consumer; // or null
  llvm::SmallVector<mlir::linalg::GenericOp> scoreOps;
  mlir::Operation *scoreFill = nullptr;
  llvm::SmallVector<mlir::Operation *> fills; // row buffers' and O's
  mlir::Operation *last = nullptr;            // context or consumer
  mlir::Value q, k, v, out;
  mlir::AffineMap qMap, kMap, vMap; // in the loops of scores / context
  mlir::AffineMap consumerOutMap;   // how the consumer reads O
  /// The probabilities are zero where NaN (SDPA's guard of rows that a
  /// mask may hide whole): such rows of O are zeros.
  bool zeroNanRows = false;
  /// Every op of the chain, in order.
  llvm::SmallVector<mlir::Operation *> ops() const;
  /// The buffers the fused kernel reads: Q, K, V and the other inputs of
  /// the elementwise ops.
  llvm::SmallVector<mlir::Value> reads() const;
};
/// The chain that starts at `scores`, if it is one.
std::optional<AttentionChain>
matchAttentionChain(mlir::linalg::GenericOp scores);

/// The output tile of one block of that kernel: M x N.
inline constexpr int64_t kGpuContractionTileM = 64, kGpuContractionTileN = 64;

/// The module's i32 counters with which a split product of
/// `kiln-gpu-split-k` sums its partials in the last block of each tile to
/// finish (`kiln-gpu-contractions`), zero between kernels.
inline constexpr llvm::StringLiteral kSplitKCounters = "kiln_split_k_counters";

/// The number of streaming multiprocessors the GPU of `chip` (sm_80, ...)
/// has in its usual data-center part (A100 108, H100 SXM 132), the grid
/// `kiln-gpu-split-k` fills.
int64_t gpuMultiprocessors(llvm::StringRef chip);

/// The width of the CPU register tile along a contraction's vectorized
/// output dim of `n` elements, with `lanes` elements per vector: `n` itself
/// up to two vectors, else two vectors, or one when only one divides `n`
/// and `n` is under eight vectors (a remainder is peeled; from eight
/// vectors up, two-vector tiles and one vector left over, e.g. a 1000-class
/// product with 8 lanes, as `kiln-pack-weights` pads constant panels).
/// `kiln-pack-weights` packs panels of this width for
/// `kiln-cpu-tile-and-vectorize` to read.
int64_t cpuRegisterTileWidth(int64_t n, int64_t lanes);

/// Whether `kiln-conv-to-gemm` (with these options) computes `conv` as the
/// GEMM vectorized along its output channels, channels-last, rather than
/// along its output plane over an NCHW im2col panel.
bool convToGemmChannelsLast(mlir::linalg::Conv2DNchwFchwOp conv,
                            unsigned vectorBits, int64_t channelsLastBelow,
                            bool packPanels);
} // namespace kiln

#endif // KILN_CODEGEN_PASSES_H
