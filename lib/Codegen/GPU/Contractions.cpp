//===- Contractions.cpp - tiled GEMM kernels for contractions -------------===//
//
// A bufferized contraction (a linalg op computing
// out[b.., m.., n..] += A[b.., m.., k..] * B[b.., k.., n..]) becomes one
// `gpu.launch` of a tiled GEMM over the flattened M, N and K. The output is
// indexed by a projected permutation; the inputs by any affine expressions,
// so a convolution (named or generic, grouped or not) is an implicit GEMM
// that reads its input in place: K = (channel, kernel window), N = (image,
// output position), M = output channel. Each block owns a 64x64 tile of
// the output of one batch index and walks K in steps of BK; per step its
// threads stage the A and B tiles in shared memory (zero outside the
// operands; 16 bytes per load where an operand's layout keeps them
// contiguous and aligned, see loadWidth), synchronize, and accumulate in
// registers:
//
//  * f32 operands, `tf32=false`: 128 threads, each an 8x4 register tile
//    (rows tid/16 + 8i, columns tid%16 + 16j) of f32 multiply-adds;
//  * f32 operands, `tf32=true`: 4 warps, each a 32x32 warp tile of
//    `nvgpu.mma.sync` m16n8k8 with tf32 inputs and f32 accumulators;
//  * f16 operands: m16n8k16 (f32 accumulators); bf16 operands with
//    `nvvm.mma.sync` m16n8k16 directly (upstream's nvgpu.mma.sync has no
//    bf16 lowering). Their tiles take the `half-tile` shape (block tile,
//    step of K, warp tile; 64x64x32 with 32x32 warps by default), or
//    `wide-tile` (128x128x32, 64x64 warps) where that still gives
//    `wide-min-blocks` blocks; each shared tile keeps its operand's
//    contiguous side contiguous, `stages` buffers deep: the next tiles
//    arrive by cp.async (16-byte groups, zero-filled past the operand)
//    while this step's fragments are read with ldmatrix and multiplied.
//    On an H200 the 4096^3 f16 product went from 85 to 242 TFLOP/s
//    (docs/performance-gpu.md).
//
// An input that is a zero-padded copy of another buffer (a padded
// convolution's input) is read from that buffer, zero outside it, and the
// fill and copy are erased (see matchPaddedInput).
//
// The epilogue adds each accumulator to the output element it belongs to
// (the output holds the contraction's initial value: a zero fill or a
// bias), so what the tile computed is exactly `out + sum_k A*B`. A value
// only a row's or a column's indices pick (a per-channel bias or scale)
// is loaded once a thread; the other loads (a residual) come a group of
// elements at a time before their stores, which may alias them and would
// otherwise hold each load back until the store before it.
//
//===----------------------------------------------------------------------===//

#include "../SparseKernels.h"
#include "kiln/Codegen/CostModel.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"

#include <map>

namespace kiln {
#define GEN_PASS_DEF_KILNGPUCONTRACTIONS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

enum class TileKind { Simt, Tf32, Half, BFloat, Int8, Fp8 };

/// Planted bugs for the emulator's mutation tests (`test-mutation`).
enum class Mutation {
  None,
  SwapBFragment,
  SkipLastKTile,
  SwapSparseMeta,
  SwapWgmmaStrides,
  EarlySplitSum,
  KeepSplitCounters
};

/// A contraction input that is a zero-padded copy of another buffer (a
/// convolution's padded input: a zero fill of the buffer, then a copy of
/// `source` into its interior at offsets `low`): the tile reads `source`
/// instead, zero outside it, and the fill and the copy go.
struct PaddedInput {
  Value source;
  SmallVector<int64_t> low;
  SmallVector<Operation *> ops; // the fill, the copy and its subview
};

/// The op right before a contraction that gives its output the initial
/// value (a fill with a constant, or a broadcast of a bias): the epilogue
/// adds the accumulators to that value instead of to the output it would
/// have written, and the op goes.
struct InitValue {
  Operation *op = nullptr;
  Value scalar; // a fill's constant
  Value source; // a broadcast's input, read through `map` of the output
  AffineMap map;
};

/// A contraction the tiled kernel computes. Its loop dimensions fall in
/// four groups: batch (in both inputs and the output), m (in input `a` and
/// the output), n (in input `b` and the output) and k (in both inputs, a
/// reduction). The kernel sees one M, N and K: each group flattened, its
/// dimensions in loop order, the last one fastest. A group of several
/// dimensions, and inputs indexed by affine expressions of them, give an
/// implicit GEMM: a convolution's input is read in place, its (channel,
/// kernel window) pairs forming K and its output positions N.
struct Contraction {
  linalg::LinalgOp op;
  SmallVector<AffineMap> maps;          // inputs 0 and 1, then the output
  std::optional<PaddedInput> padded[2]; // by input operand
  std::optional<InitValue> init;
  /// An elementwise op right after the contraction that reads its output
  /// element by element (a bias add, a residual add, an activation): the
  /// epilogue applies it to each result and stores into its output.
  linalg::GenericOp consumer;
  /// A split product of kiln-gpu-split-k (its output the partials, loop
  /// dim `splitDim` the split, a batch dim) whose sum of the partials
  /// (with the bias, residual and activation fused into it) the last
  /// block of each tile to finish runs, counting the tile's finished
  /// blocks in `counters` (see matchSplitSum).
  linalg::GenericOp splitSum;
  unsigned splitDim = 0;
  memref::GlobalOp counters;
  unsigned a = 0, b = 1; // the input operands that hold M and N
  SmallVector<unsigned> batch, m, n, k;
  /// Input `a` is a 2:4 weight that kiln-gpu-sparse-weights compressed
  /// (its global, which names the kept values and the metadata): the
  /// kernel reads those with mma.sp instead of the dense weight.
  memref::GlobalOp sparse;
  SmallVector<int64_t> sizes; // static loop ranges
  Type inType, outType;       // operand and output element types
  /// The operands are float8 e4m3 held as bytes (inType i8), bitcast and
  /// extended to f32 in the body.
  bool fp8 = false;

  int64_t extent(ArrayRef<unsigned> dims) const {
    int64_t e = 1;
    for (unsigned d : dims)
      e *= sizes[d];
    return e;
  }
};

/// Looks through an `arith.extf` or `arith.extsi` to the block argument
/// it extends, and through an `arith.bitcast` of bytes to float8 e4m3
/// under an `arith.extf` (a float8 operand held as its bytes; `fp8`);
/// counts the ops passed in `depth`.
Value throughExt(Value v, unsigned &depth, bool &fp8) {
  fp8 = false;
  if (auto ext = v.getDefiningOp<arith::ExtFOp>()) {
    ++depth;
    v = ext.getIn();
    if (auto cast = v.getDefiningOp<arith::BitcastOp>();
        cast && isa<Float8E4M3FNType>(cast.getType()) &&
        cast.getIn().getType().isInteger(8)) {
      ++depth;
      fp8 = true;
      v = cast.getIn();
    }
    return v;
  }
  if (auto ext = v.getDefiningOp<arith::ExtSIOp>()) {
    ++depth;
    return ext.getIn();
  }
  return v;
}

/// Whether `map` reads loop dimension `d` in any of its results.
bool uses(AffineMap map, unsigned d) {
  return llvm::any_of(map.getResults(),
                      [&](AffineExpr e) { return e.isFunctionOfDim(d); });
}

/// Whether `op` is a static contraction the tiled kernel computes (float,
/// or 8-bit integers into i32); fills `c`. Only ops on buffers, unless
/// `onTensors`.
LogicalResult matchContraction(linalg::LinalgOp op, Contraction &c,
                               bool onTensors = false) {
  if ((!onTensors && !op.hasPureBufferSemantics()) ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || !op.getBlock()) {
    return failure();
  }
  c.maps = op.getIndexingMapsArray();
  ArrayRef<AffineMap> maps = c.maps;
  // The output is written element by element: a projected permutation.
  if (!maps[2].isProjectedPermutation() || maps[0].getNumSymbols() ||
      maps[1].getNumSymbols()) {
    return failure();
  }
  c.op = op;
  c.sizes = op.getStaticLoopRanges();
  if (llvm::any_of(c.sizes, ShapedType::isDynamic)) {
    return failure();
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> only0, only1;
  for (unsigned d = 0; d < op.getNumLoops(); ++d) {
    bool in0 = uses(maps[0], d), in1 = uses(maps[1], d),
         inOut = uses(maps[2], d);
    bool reduction = iterators[d] == utils::IteratorType::reduction;
    if (in0 && in1 && !inOut && reduction)
      c.k.push_back(d);
    else if (reduction)
      return failure();
    else if (in0 && in1 && inOut)
      c.batch.push_back(d);
    else if (in0 && inOut)
      only0.push_back(d);
    else if (in1 && inOut)
      only1.push_back(d);
    else
      return failure(); // a broadcast, or a dimension no input reads
  }
  if (c.k.empty() || only0.empty() || only1.empty()) {
    return failure();
  }
  // N runs along the output's innermost dimension where it can: the
  // tiles' columns are what consecutive threads store.
  unsigned outInner =
      cast<AffineDimExpr>(maps[2].getResults().back()).getPosition();
  c.m = only0;
  c.n = only1;
  if (llvm::is_contained(only0, outInner)) {
    std::swap(c.a, c.b);
    std::swap(c.m, c.n);
  }
  // The body: yield(out + A' * B'), A' and B' the inputs, possibly
  // extended: floats (f32, f16, bf16; arith.extf), or 8-bit integers
  // sign-extended to an i32 accumulator (the integer contractions of
  // quantized models).
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  Operation *add = yield ? yield.getOperand(0).getDefiningOp() : nullptr;
  bool integer = isa_and_nonnull<arith::AddIOp>(add);
  if (!add || add->getBlock() != body ||
      !(integer || isa<arith::AddFOp>(add))) {
    return failure();
  }
  Value out = body->getArgument(2);
  Value product = add->getOperand(0) == out   ? add->getOperand(1)
                  : add->getOperand(1) == out ? add->getOperand(0)
                                              : Value();
  Operation *mul = product ? product.getDefiningOp() : nullptr;
  if (!mul || mul->getBlock() != body ||
      !(integer ? isa<arith::MulIOp>(mul) : isa<arith::MulFOp>(mul))) {
    return failure();
  }
  Value lhs = mul->getOperand(0), rhs = mul->getOperand(1);
  unsigned depth = 0;
  bool fp8x, fp8y;
  Value x = throughExt(lhs, depth, fp8x), y = throughExt(rhs, depth, fp8y);
  Value a = body->getArgument(0), bArg = body->getArgument(1);
  if (!((x == a && y == bArg) || (x == bArg && y == a))) {
    return failure();
  }
  // Nothing else in the body.
  unsigned expected = 3 + depth;
  if (std::distance(body->begin(), body->end()) != expected) {
    return failure();
  }
  c.inType = a.getType();
  c.outType = out.getType();
  if (bArg.getType() != c.inType)
    return failure();
  c.fp8 = fp8x && fp8y;
  if (fp8x != fp8y)
    return failure();
  if (c.fp8) // float8 e4m3 bytes into an f32 accumulator: the fp8 tiles.
    return success(c.inType.isInteger(8) && c.outType.isF32());
  if (integer) {
    // s8 x s8 -> s32, both operands sign-extended.
    return success(c.inType.isInteger(8) && c.outType.isInteger(32) &&
                   lhs.getDefiningOp<arith::ExtSIOp>() &&
                   rhs.getDefiningOp<arith::ExtSIOp>());
  }
  if (!isa<FloatType>(c.outType) ||
      !(c.inType.isF32() || c.inType.isF16() || c.inType.isBF16()) ||
      !(c.outType.isF32() || c.outType.isF16() || c.outType.isBF16())) {
    return failure();
  }
  return success();
}

/// Whether input `operand` of `op` is a zero-padded copy that the tile can
/// read through (see PaddedInput): the padded buffer has no other use, and
/// nothing from the copy to `op` (`op`'s output included) writes where
/// the source lies, which the memory plan allowed once the copy had read
/// it.
std::optional<PaddedInput> matchPaddedInput(linalg::LinalgOp op,
                                            unsigned operand) {
  Value padded = op.getDpsInputs()[operand];
  auto paddedType = dyn_cast<MemRefType>(padded.getType());
  if (!paddedType || !paddedType.hasStaticShape() ||
      !paddedType.getLayout().isIdentity())
    return std::nullopt;
  Operation *fill = nullptr;
  linalg::CopyOp copy;
  memref::SubViewOp interior;
  for (Operation *user : padded.getUsers()) {
    if (user == op.getOperation())
      continue;
    if (auto sub = dyn_cast<memref::SubViewOp>(user);
        sub && !interior && sub->hasOneUse()) {
      interior = sub;
      copy = dyn_cast<linalg::CopyOp>(*sub->getUsers().begin());
      if (!copy || copy.getDpsInits()[0] != sub.getResult())
        return std::nullopt;
      continue;
    }
    auto zero = [](Value v) {
      return matchPattern(v, m_AnyZeroFloat()) || matchPattern(v, m_Zero());
    };
    if (auto f = dyn_cast<linalg::FillOp>(user);
        f && !fill && f.getDpsInits()[0] == padded && zero(f.value())) {
      fill = f;
      continue;
    }
    if (auto map = dyn_cast<linalg::MapOp>(user);
        map && !fill && map.getInputs().empty() && map.getInit() == padded) {
      auto yield = cast<linalg::YieldOp>(map.getBody()->getTerminator());
      if (zero(yield.getOperand(0))) {
        fill = map;
        continue;
      }
    }
    return std::nullopt;
  }
  if (!fill || !copy || fill->getBlock() != op->getBlock() ||
      copy->getBlock() != op->getBlock() || !fill->isBeforeInBlock(copy) ||
      !copy->isBeforeInBlock(op))
    return std::nullopt;
  // The interior: static offsets, unit strides, the source's shape.
  Value source = copy.getDpsInputs()[0];
  auto sourceType = dyn_cast<MemRefType>(source.getType());
  if (!sourceType || !sourceType.hasStaticShape() ||
      sourceType.getElementType() != paddedType.getElementType() ||
      interior.getSourceType().getRank() != sourceType.getRank() ||
      interior.getStaticSizes() != sourceType.getShape() ||
      llvm::any_of(interior.getStaticStrides(),
                   [](int64_t s) { return s != 1; }) ||
      llvm::any_of(interior.getStaticOffsets(), ShapedType::isDynamic))
    return std::nullopt;
  FailureOr<kiln::BufferBytes> sourceBytes = kiln::bufferBytes(source);
  if (failed(sourceBytes))
    return std::nullopt;
  for (Operation *o = copy->getNextNode(); o; o = o->getNextNode()) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(o)) {
      for (Value init : linalgOp.getDpsInits()) {
        FailureOr<kiln::BufferBytes> written = kiln::bufferBytes(init);
        if (failed(written) || written->overlaps(*sourceBytes))
          return std::nullopt;
      }
    } else if (!isMemoryEffectFree(o)) {
      return std::nullopt;
    }
    if (o == op.getOperation())
      break;
  }
  PaddedInput p;
  p.source = source;
  p.low.assign(interior.getStaticOffsets().begin(),
               interior.getStaticOffsets().end());
  p.ops = {fill, copy, interior};
  return p;
}

/// The op that writes the initial value of `c`'s output right before it
/// (see InitValue), skipping views, constants and the ops of a padded
/// input that goes: a fill of the output with a constant, or a generic
/// that copies a buffer into the output through a projected permutation
/// (a bias broadcast) whose bytes the output does not share.
std::optional<InitValue> matchInit(const Contraction &c) {
  linalg::LinalgOp op = c.op;
  Value out = op.getDpsInits()[0];
  auto folded = [&](Operation *o) {
    for (const std::optional<PaddedInput> &p : c.padded)
      if (p && llvm::is_contained(p->ops, o))
        return true;
    return false;
  };
  Operation *prev = op->getPrevNode();
  while (prev && (isMemoryEffectFree(prev) || folded(prev)))
    prev = prev->getPrevNode();
  if (!prev)
    return std::nullopt;
  if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
    if (fill.getDpsInits()[0] != out ||
        !matchPattern(fill.value(), m_Constant()))
      return std::nullopt;
    return InitValue{fill, fill.value(), {}, {}};
  }
  auto generic = dyn_cast<linalg::GenericOp>(prev);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInits() != 1 || generic.getDpsInits()[0] != out ||
      generic.getNumReductionLoops() != 0)
    return std::nullopt;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  // A fill written as a generic: no input, a constant yielded everywhere.
  if (generic.getNumDpsInputs() == 0) {
    Value v = yield.getOperand(0);
    if (!llvm::hasSingleElement(*body) || !matchPattern(v, m_Constant()) ||
        !maps[0].isIdentity())
      return std::nullopt;
    return InitValue{generic, v, {}, {}};
  }
  if (generic.getNumDpsInputs() != 1)
    return std::nullopt;
  Value source = generic.getDpsInputs()[0];
  if (!maps[1].isIdentity() || !maps[0].isProjectedPermutation() ||
      !llvm::hasSingleElement(*body) ||
      yield.getOperand(0) != body->getArgument(0) ||
      cast<MemRefType>(source.getType()).getElementType() != c.outType)
    return std::nullopt;
  FailureOr<kiln::BufferBytes> sourceBytes = kiln::bufferBytes(source),
                               outBytes = kiln::bufferBytes(out);
  if (failed(sourceBytes) || failed(outBytes) ||
      sourceBytes->overlaps(*outBytes))
    return std::nullopt;
  return InitValue{generic, {}, source, maps[0]};
}

/// The next op with memory effects after `c` when it is a generic of
/// `loops` parallel loops, not `claimed`, that writes one output through a
/// permutation and does not read it; else null.
linalg::GenericOp nextEpilogue(const Contraction &c, unsigned loops,
                               const llvm::DenseSet<Operation *> &claimed) {
  Operation *next = c.op->getNextNode();
  while (next && isMemoryEffectFree(next))
    next = next->getNextNode();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!generic || claimed.contains(generic) ||
      !generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 || generic.getNumLoops() != loops ||
      !generic.getIndexingMapsArray().back().isPermutation() ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
    return {};
  return generic;
}

/// Whether `generic`, run in `c`'s epilogue, writes no byte that a block
/// may still read: nothing the tiles read, nor `alsoRead`, nor (but as
/// that output read element by element) its other inputs than `c`'s
/// output.
bool writesApart(const Contraction &c, linalg::GenericOp generic,
                 Value alsoRead) {
  Value result = generic.getDpsInits()[0];
  FailureOr<kiln::BufferBytes> resultBytes = kiln::bufferBytes(result);
  if (failed(resultBytes))
    return false;
  auto overlaps = [&](Value v) {
    FailureOr<kiln::BufferBytes> bytes = kiln::bufferBytes(v);
    return failed(bytes) || bytes->overlaps(*resultBytes);
  };
  linalg::LinalgOp op = c.op;
  SmallVector<Value> tileReads = {op.getDpsInputs()[0], op.getDpsInputs()[1]};
  for (const std::optional<PaddedInput> &p : c.padded)
    if (p)
      tileReads.push_back(p->source);
  if (c.init && c.init->source)
    tileReads.push_back(c.init->source);
  if (alsoRead)
    tileReads.push_back(alsoRead);
  if (llvm::any_of(tileReads, overlaps))
    return false;
  Value out = op.getDpsInits()[0];
  AffineMap resultMap = generic.getIndexingMapsArray().back();
  for (OpOperand *in : generic.getDpsInputOperands())
    if (in->get() != out && overlaps(in->get()) &&
        !(in->get() == result &&
          generic.getMatchingIndexingMap(in) == resultMap))
      return false;
  return true;
}

/// The elementwise op that may run in `c`'s epilogue (see
/// Contraction::consumer): the next op with memory effects after `c`, a
/// generic of parallel loops over `c`'s output (read once, through a
/// permutation: a bias add may write its result transposed) with one
/// output written through a permutation. `c`'s output
/// must be read by nothing else: it is not written when the consumer
/// writes elsewhere (an arena view used by `c`, its initial value and the
/// consumer only). The consumer's output may not share bytes with
/// anything the tile reads (other blocks may still read it), and another
/// input may share them only by being that output read element by element.
linalg::GenericOp matchConsumer(const Contraction &c,
                                const llvm::DenseSet<Operation *> &claimed) {
  linalg::LinalgOp op = c.op;
  Value out = op.getDpsInits()[0];
  linalg::GenericOp generic =
      nextEpilogue(c, cast<MemRefType>(out.getType()).getRank(), claimed);
  if (!generic)
    return {};
  Value result = generic.getDpsInits()[0];
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  unsigned reads = 0;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    if (in->get() != out)
      continue;
    if (!maps[in->getOperandNumber()].isPermutation())
      return {};
    ++reads;
  }
  if (reads != 1)
    return {};
  if (result != out) {
    // The product's own buffer holds nothing anyone reads afterwards: an
    // arena view (or an output argument used as scratch) whose next user
    // after the consumer overwrites it whole
    // (the memory plan hands the bytes on; CSE shares the view with the
    // tensors before and after in the same bytes).
    bool argument = isa<BlockArgument>(out);
    if (!argument && !out.getDefiningOp<memref::ViewOp>())
      return {};
    Operation *nextUser = nullptr;
    for (Operation *use : out.getUsers()) {
      // A use nested in another op (a load in a loop) counts as that op's.
      Operation *user = generic->getBlock()->findAncestorOpInBlock(*use);
      if (!user)
        return {};
      if (user == op.getOperation() || user == generic.getOperation() ||
          (c.init && user == c.init->op))
        continue;
      // An earlier tensor in the same bytes.
      if (user->isBeforeInBlock(op))
        continue;
      if (!generic->isBeforeInBlock(user))
        return {};
      if (!nextUser || user->isBeforeInBlock(nextUser))
        nextUser = user;
    }
    // A function argument (an output the graph also uses as scratch) must
    // be overwritten: else the caller reads it.
    if (argument && !nextUser)
      return {};
    if (nextUser) {
      auto overwrite = dyn_cast<linalg::LinalgOp>(nextUser);
      if (!overwrite || llvm::is_contained(overwrite.getDpsInputs(), out) ||
          !llvm::is_contained(overwrite.getDpsInits(), out) ||
          llvm::any_of(out.getUsers(), [&](Operation *u) {
            return nextUser->isProperAncestor(u);
          }))
        return {};
      for (OpOperand &init : overwrite.getDpsInitsMutable())
        if (init.get() == out && overwrite.payloadUsesValueFromOperand(&init))
          return {};
    }
  }
  if (!writesApart(c, generic, result != out ? out : Value()))
    return {};
  return generic;
}

/// The sum of `c`'s partials, when `c` is a split product of
/// kiln-gpu-split-k whose last block per tile can run it (see
/// Contraction::splitSum); sets `c.splitDim`. The next op with memory
/// effects after `c` must be a generic of parallel loops that reads the
/// partials [S, out...] exactly S times, the i-th time at split i and
/// the rest of the output through the same permutation of its loops, and
/// writes one output through a permutation. Its output may share no bytes
/// with anything the tiles read (other blocks may still read them, and
/// the partials), and its other inputs may share them only by being that
/// output read element by element.
linalg::GenericOp matchSplitSum(Contraction &c,
                                const llvm::DenseSet<Operation *> &claimed) {
  linalg::LinalgOp op = c.op;
  Value out = op.getDpsInits()[0];
  auto outType = cast<MemRefType>(out.getType());
  auto first = dyn_cast<AffineDimExpr>(c.maps[2].getResult(0));
  if (!c.outType.isF32() || !first ||
      !llvm::is_contained(c.batch, first.getPosition()))
    return {};
  unsigned splitDim = first.getPosition();
  int64_t s = c.sizes[splitDim];
  linalg::GenericOp generic = nextEpilogue(c, outType.getRank() - 1, claimed);
  if (!generic)
    return {};
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  llvm::SmallBitVector seen(s);
  AffineMap rest;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    if (in->get() != out)
      continue;
    AffineMap map = maps[in->getOperandNumber()];
    auto split = dyn_cast<AffineConstantExpr>(map.getResult(0));
    if (!split || split.getValue() < 0 || split.getValue() >= s ||
        seen.test(split.getValue()))
      return {};
    seen.set(split.getValue());
    AffineMap tail = map.dropResult(0);
    if (!tail.isPermutation() || (rest && tail != rest))
      return {};
    rest = tail;
  }
  if (!seen.all() || !writesApart(c, generic, out))
    return {};
  c.splitDim = splitDim;
  return generic;
}

/// Where one input of `c` is a 2:4 weight compressed by
/// kiln-gpu-sparse-weights, makes it input `a` (M its rows, the weight's
/// one non-k dim) and returns true; false where there is none, or (with
/// `why`) where the kernel cannot read it compressed: the product keeps
/// the dense weight.
bool useSparseWeight(Contraction &c, std::string &why) {
  for (unsigned i = 0; i < 2; ++i) {
    memref::GlobalOp g = kiln::sparseWeightGlobal(c.op.getDpsInputs()[i]);
    if (!g)
      continue;
    auto attr = [&](StringRef name) {
      auto a = g->getAttrOfType<IntegerAttr>(name);
      return a ? a.getInt() : -1;
    };
    int64_t kDim = attr("kiln.sparse_k_dim");
    AffineMap map = c.maps[i];
    // The weight is read [K, N] or [N, K] (kDim 0 or 1); with several
    // reduction dims (a channels-last convolution's (kh, kw, c)), [N, K...]
    // with its K dims those of the product, in order: the flattened K
    // that the compressed rows hold.
    bool multiK = c.k.size() > 1;
    if (!c.batch.empty() || kDim < 0 || kDim > 1 ||
        map.getNumResults() != 1 + c.k.size() || (multiK && kDim != 1)) {
      why = "the product has batch dims, or reads the weight with other "
            "dims than its rows and K";
      return false;
    }
    auto nExpr = dyn_cast<AffineDimExpr>(map.getResult(kDim == 1 ? 0 : 1));
    bool alongK = true;
    for (auto [j, kd] : llvm::enumerate(c.k)) {
      auto kExpr =
          dyn_cast<AffineDimExpr>(map.getResult(kDim == 1 ? 1 + j : 0));
      alongK &= kExpr && kExpr.getPosition() == kd;
    }
    if (!nExpr || !alongK) {
      why = "the weight is not read along the product's K";
      return false;
    }
    unsigned nd = nExpr.getPosition();
    ArrayRef<unsigned> rows = c.a == i ? c.m : c.n;
    if (rows.size() != 1 || rows.front() != nd ||
        c.sizes[nd] != attr("kiln.sparse_n") ||
        c.extent(c.k) != attr("kiln.sparse_k")) {
      why = "the product's M and K are not the weight's";
      return false;
    }
    if (c.a != i) {
      std::swap(c.a, c.b);
      std::swap(c.m, c.n);
    }
    c.sparse = g;
    return true;
  }
  return false;
}

/// A block's output tile (m x n, k per step) and its warps' tiles (warpM x
/// warpN each, a grid of them covering the block's).
struct TileShape {
  int64_t m = 64, n = 64, k = 32, warpM = 32, warpN = 32;
  int64_t threads() const { return 32 * (m / warpM) * (n / warpN); }
};

/// The `count` positive sizes of `spec`, separated by 'x' except for a
/// '/' after the third; an empty vector where it is not that.
SmallVector<int64_t> parseSizes(StringRef spec, int count) {
  SmallVector<int64_t> v;
  StringRef rest = spec;
  for (int i = 0; i < count; ++i) {
    auto [head, tail] = rest.split(i == 2 ? '/' : 'x');
    int64_t x;
    if (head.getAsInteger(10, x) || x <= 0)
      return {};
    v.push_back(x);
    rest = tail;
  }
  if (!rest.empty())
    return {};
  return v;
}

/// Parses "MxNxK/WMxWN" (the block's and each warp's tile); checks what
/// the tile builder needs: powers of two, warp tiles of whole 16x16 mma
/// pairs dividing the block's, K a multiple of 16, 64 to 1024 threads,
/// and every tile side and operand tile at least covered by the threads.
FailureOr<TileShape> parseTileShape(StringRef spec, std::string &error) {
  SmallVector<int64_t> v = parseSizes(spec, 5);
  if (v.empty()) {
    error = "expected MxNxK/WMxWN (e.g. 64x64x32/32x32)";
    return failure();
  }
  TileShape t{v[0], v[1], v[2], v[3], v[4]};
  for (int64_t x : v)
    if (!llvm::isPowerOf2_64(x)) {
      error = "every size must be a power of two";
      return failure();
    }
  if (t.warpM < 16 || t.warpN < 16 || t.k < 16 || t.m % t.warpM ||
      t.n % t.warpN) {
    error = "warp tiles are at least 16x16, divide the block's tile, and "
            "K is at least 16";
    return failure();
  }
  int64_t threads = t.threads();
  if (threads < 64 || threads > 1024 || t.m > threads || t.n > threads ||
      t.k > threads || t.m * t.k < threads || t.n * t.k < threads) {
    error = "the tile needs 64 to 1024 threads, and no more tile elements "
            "along a side than threads (" +
            std::to_string(threads) + " here)";
    return failure();
  }
  return t;
}

/// The most shared memory a block may opt in to on sm_90 (227 KiB); the
/// tiles that need more than the 48 KiB of static shared memory take it
/// as dynamic shared memory.
constexpr int64_t kMaxSharedBytes = 232448;
constexpr int64_t kStaticSharedBytes = 48 * 1024;

/// Parses a wgmma tile "MxNxK": M rows in warpgroups of 64 (64 to 256),
/// N a multiple of 64 up to 256 (wgmma's n; M- and N-major operands are
/// stored in atoms of 64 elements), K 32 or 64 (a K-major operand's row
/// of 64 or 128 bytes is one swizzled row).
FailureOr<TileShape> parseWgmmaTile(StringRef spec, std::string &error) {
  SmallVector<int64_t> v = parseSizes(spec, 3);
  if (v.empty()) {
    error = "expected MxNxK (e.g. 128x128x64)";
    return failure();
  }
  if (v[0] % 64 || v[0] > 256 || v[1] % 64 || v[1] > 256 ||
      (v[2] != 32 && v[2] != 64)) {
    error = "M is 64, 128, 192 or 256 (warpgroups of 64 rows), N a "
            "multiple of 64 up to 256, K 32 or 64";
    return failure();
  }
  return TileShape{v[0], v[1], v[2], 64, v[1]};
}

/// Builds the kernel of one contraction.
class TileBuilder {
public:
  TileBuilder(Contraction c, TileKind kind, Mutation mutation,
              int64_t vectorBytes, int64_t stages, const TileShape &halfTile,
              const TileShape &wideTile, int64_t wideMinBlocks, bool wgmma,
              ArrayRef<TileShape> wgmmaTiles, int64_t wgmmaStages)
      : c(std::move(c)), kind(kind), mutation(mutation),
        vectorBytes(vectorBytes), loc(this->c.op.getLoc()),
        ctx(this->c.op.getContext()) {
    half = kind == TileKind::Half || kind == TileKind::BFloat;
    int8 = kind == TileKind::Int8;
    fp8 = kind == TileKind::Fp8;
    bytes = int8 || fp8;
    ldsm = half || bytes;
    bk = half ? 32 : 16;
    // 16-bit products take `halfTile`, or `wideTile` where it still gives
    // at least `wideMinBlocks` blocks (a sweep of ten shapes on an H200:
    // 128x128 with 64x64 warps was fastest from 2048^3 up, 244 TFLOP/s at
    // 4096^3 against 167 for 64x64; small products need the blocks).
    const Contraction &cc = this->c;
    auto blocks = [&](const TileShape &t) {
      return (cc.extent(cc.m) + t.m - 1) / t.m *
             ((cc.extent(cc.n) + t.n - 1) / t.n) * cc.extent(cc.batch);
    };
    // 8-bit products take the same tiles with twice the k a step (the
    // same bytes a shared row).
    // float8 products keep the smaller tile: their epilogue rounds to
    // float8 in software (kiln-expand-float8), and with 64 accumulators a
    // thread ResNet-50's fp8 convolutions spilled (255 registers, up to
    // 416 bytes).
    if (ldsm) {
      const TileShape &t =
          wideMinBlocks > 0 && !fp8 && blocks(wideTile) >= wideMinBlocks
              ? wideTile
              : halfTile;
      bm = t.m;
      bn = t.n;
      bk = t.k;
      warpM = t.warpM;
      warpN = t.warpN;
      // Twice the k where that is still at most the threads (a thread
      // stages at least one k of a row; tile shapes keep their k within
      // the threads), else the shape's own k, which is then at least 64:
      // a multiple of the mma's 32.
      if (bytes && 2 * bk <= threads())
        bk *= 2;
    }
    // Hopper (sm_90a): a tile of warpgroups, each a 64-row wgmma
    // accumulator, in place of the wide tile: the first of `wgmmaTiles`
    // of which the product gets at least `wideMinBlocks`, unless the
    // weight is 2:4.
    //
    // Convolutions (an input indexed by sums of loop dims, or zero-padded)
    // compute each staged group's indices from several dims, and keep
    // them in registers across the steps: they take only tiles of at most
    // 64 accumulators a thread (N 128) and steps of 32 k. (A padded 3x3
    // convolution spilled in 128x256x64; took 252 registers in 128x128x64
    // and 189 in 128x128x32.)
    bool im2col =
        llvm::any_of(cc.padded,
                     [](const std::optional<PaddedInput> &p) { return p; }) ||
        llvm::any_of(std::array<unsigned, 2>{cc.a, cc.b}, [&](unsigned i) {
          return llvm::any_of(cc.maps[i].getResults(), [](AffineExpr e) {
            return !isa<AffineDimExpr>(e);
          });
        });
    auto fits = [&](const TileShape &t) {
      return (half || bytes) && wgmma && !cc.sparse && wideMinBlocks > 0 &&
             blocks(t) >= wideMinBlocks && !(im2col && (t.n > 128 || t.k > 32));
    };
    // The outputs the tiles cover, overhang included: a tile is passed
    // over for a later one that covers fewer (a product of N 128 in
    // 128x256 tiles would compute twice its outputs).
    auto covered = [&](const TileShape &t) { return blocks(t) * t.m * t.n; };
    for (size_t i = 0; i < wgmmaTiles.size(); ++i) {
      const TileShape &t = wgmmaTiles[i];
      if (!fits(t) || llvm::any_of(llvm::drop_begin(wgmmaTiles, i + 1),
                                   [&](const TileShape &u) {
                                     return fits(u) && covered(u) < covered(t);
                                   }))
        continue;
      wg = true;
      bm = t.m;
      bn = t.n;
      // 8-bit products take twice the k (the same bytes a shared row).
      bk = bytes ? 2 * t.k : t.k;
      warpM = 64;
      warpN = bn;
      break;
    }
    // Shared-memory rows padded so that the fragment loads of the
    // tensor-core tiles (lanes g + 8-row groups; ldmatrix's eight 16-byte
    // rows) and the stores of the SIMT tile hit distinct banks.
    pad = kind == TileKind::Simt ? 1 : wg ? 0 : bytes ? 16 : 8;
    // 16-bit tiles keep each operand's contiguous side contiguous in
    // shared memory (cp.async copies of 16-byte groups; ldmatrix, with
    // .trans where that side is m or n); the others are stored [k][m] and
    // [k][n] and staged synchronously (tf32 rounds each element).
    this->stages = wg     ? std::max<int64_t>(wgmmaStages, 1)
                   : ldsm ? std::max<int64_t>(stages, 1)
                          : 1;
    // A 2:4 weight's kept values are staged [m][k / 2]; its K is padded
    // to a multiple of one mma.sp step (sparseK: 32, 8-bit 64), which the
    // step along K must be and divide.
    sparse = (half || int8) && this->c.sparse;
    if (sparse) {
      int64_t sk = sparseK();
      kp = (this->c.extent(this->c.k) + sk - 1) / sk * sk;
      if (bk < sk || bk % sk || kp % bk)
        bk = sk;
    }
    // 8-bit fragments have no transposing ldmatrix: both tiles are
    // k-contiguous, an operand whose fast side is m or n transposed as it
    // is stored.
    kContiguous[0] = bytes || (half && (sparse || colsFastest(/*isA=*/true)));
    kContiguous[1] = bytes || (half && !colsFastest(/*isA=*/false));
    // Static shared memory stops at 48 KiB, and the dynamic shared memory
    // of wgmma tiles at 227 KiB: fewer stages where they would not fit.
    while (this->stages > 1 && this->stages * stageBytes() > maxSharedBytes())
      --this->stages;
  }

  /// The most shared memory the kernel may take: wgmma tiles (sm_90a)
  /// take theirs as dynamic shared memory where they need more than the
  /// 48 KiB of static shared memory.
  int64_t maxSharedBytes() const {
    return wg ? kMaxSharedBytes : kStaticSharedBytes;
  }
  bool dynamicShared() const { return sharedBytes() > kStaticSharedBytes; }

  /// Bytes of one element of the operands.
  int64_t elementBytes() const { return c.inType.getIntOrFloatBitWidth() / 8; }
  /// Shared-memory bytes of one stage's A and B tiles.
  int64_t stageBytes() const {
    int64_t bytes = elementBytes();
    if (wg)
      return bytes * (bm + bn) * bk;
    auto tile = [&](bool kCont, int64_t mn) {
      return kCont ? mn * (bk + pad) : bk * (mn + pad);
    };
    int64_t aTile = sparse ? bm * (bk / 2 + pad) : tile(kContiguous[0], bm);
    return bytes * (aTile + tile(kContiguous[1], bn));
  }

  gpu::LaunchOp build(OpBuilder &b);
  /// The output tiles of a split product (Contraction::splitSum), each
  /// split's block of a tile counted once: the counters its sum takes.
  int64_t splitTiles() const {
    return c.extent(c.batch) / c.sizes[c.splitDim] *
           ((c.extent(c.m) + bm - 1) / bm) * ((c.extent(c.n) + bn - 1) / bn);
  }
  /// Leaves the split's sum to a kernel of its own.
  void dropSplitSum() { c.splitSum = nullptr; }
  /// Loads of partials a thread of the last block has in flight at once.
  void setSplitSumLoads(int64_t loads) { splitSumLoads = loads; }
  /// The loop over K of the kernel `build` made.
  scf::ForOp loopOverK() const { return kLoop; }

  /// Shared memory the kernel needs, and its tile as MxNxK/WMxWN.
  int64_t sharedBytes() const { return stages * stageBytes(); }
  /// Whether the kernel reads a 2:4 weight compressed (see Contraction),
  /// and whether its tile can: every thread copies the same number of
  /// 16-byte groups of kept values, at least one, and the B tile (its
  /// step along K possibly lowered to 32) still gives every thread a
  /// group of up to 16 bytes.
  bool isSparse() const { return sparse; }
  bool sparseFits() const {
    int64_t groups = bm * bk / 2 * elementBytes() / 16;
    return groups >= threads() && groups % threads() == 0 &&
           bk * bn * elementBytes() >= threads() * 16;
  }
  std::string tileName() const {
    return std::to_string(bm) + "x" + std::to_string(bn) + "x" +
           std::to_string(bk) + "/" + std::to_string(warpM) + "x" +
           std::to_string(warpN);
  }

private:
  /// The block's output tile; its warps form a grid of bn / warpN columns,
  /// each warp a warpM x warpN tile of 16x8 mma tiles (the SIMT tile's 128
  /// threads own 8x4 elements each instead).
  int64_t bm = kiln::kGpuContractionTileM, bn = kiln::kGpuContractionTileN,
          warpM = 32, warpN = 32;
  int64_t threads() const {
    return wg ? 128 * (bm / 64) : 32 * (bm / warpM) * (bn / warpN);
  }
  int64_t miCount() const { return warpM / 16; }
  int64_t niCount() const { return warpN / 8; }
  Contraction c;
  TileKind kind;
  Mutation mutation;
  int64_t vectorBytes;
  int64_t splitSumLoads = 64;
  Location loc;
  MLIRContext *ctx;
  int64_t bk, pad;
  /// 16-bit operands: ldmatrix fragments, cp.async copies; 8-bit ones
  /// (`bytes`: `int8`, m16n8k32 s8 products into i32, or `fp8`, m16n8k32
  /// e4m3 into f32): the same, k-contiguous (`ldsm`: any of them).
  bool half, int8, fp8, bytes, ldsm;
  /// Hopper warpgroup products (wgmma) read from shared memory through
  /// descriptors (see sharedIndex and wgmmaCompute).
  bool wg = false;
  /// A 2:4 compressed A (see Contraction::sparse): its K padded to `kp`,
  /// its kept values and metadata (1-D globals), and the word of a 16-row
  /// block's metadata that this lane reads (`metaLane`).
  bool sparse = false;
  int64_t kp = 0;
  /// The k of one mma.sp and its metadata words (kiln::sparseMmaK).
  int64_t sparseK() const { return kiln::sparseMmaK(elementBytes()); }
  int64_t sparseMetaWords() const {
    return kiln::sparseMetaWords(elementBytes());
  }
  Value sparseValues, sparseMeta, metaLane;
  /// Shared-memory buffers of each operand's tile: with more than one,
  /// the tiles of the next `stages - 1` steps of K are copied (cp.async
  /// where 16-byte groups allow) while this step's products run.
  int64_t stages;
  /// By operand (A, B): its shared tile is [m or n][k] (k contiguous)
  /// rather than [k][m or n].
  bool kContiguous[2];
  DenseMap<int64_t, Value> constants;
  Block *entry = nullptr;
  Value aShared, bShared;

  /// Whether consecutive elements of the operand's innermost index run
  /// along its tile's columns (k for A, n for B): consecutive threads load
  /// along that side, so global loads coalesce.
  bool colsFastest(bool isA) const {
    ArrayRef<unsigned> rowDims = isA ? c.m : c.k, colDims = isA ? c.k : c.n;
    AffineExpr inner = c.maps[isA ? c.a : c.b].getResults().back();
    return inner.isFunctionOfDim(colDims.back()) ||
           !inner.isFunctionOfDim(rowDims.back());
  }

  /// The shared-memory indices of element (k, mn) of an operand's tile in
  /// buffer `stage` (null: the only one).
  ///
  /// wgmma tiles share one buffer per stage, A's tile then B's (each
  /// 1024-byte aligned), each in one of wgmma's swizzled layouts. K-major
  /// operands (k contiguous, every 8-bit one): row mn at byte R mn (R =
  /// bk * element bytes), swizzled by its width, 64 bytes (the 16-byte
  /// chunk index, bits 4-5 of the address, XOR bits 7-8) or 128 (bits 4-6
  /// XOR bits 7-9). MN-major (16-bit) ones: atoms of 8 k rows of 64 mn
  /// (128 bytes), the atoms of 8 k at (k / 8) * (MN / 64) * 1024 and along
  /// MN at (mn / 64) * 1024, 128-byte swizzling (bits 4-6 XOR bits 7-9).
  /// A warp's 16-byte copies then fill whole 32-byte sectors and hit
  /// distinct banks.
  SmallVector<Value> sharedIndex(OpBuilder &b, bool isA, Value stage, Value k,
                                 Value mn) {
    SmallVector<Value> idx;
    if (stage)
      idx.push_back(stage);
    bool kCont = kContiguous[isA ? 0 : 1];
    if (wg) {
      int64_t tile = isA ? bm : bn;
      int64_t eb = elementBytes();
      Value byte;
      if (kCont) {
        byte = add(b, mul(b, mn, eb * bk), mul(b, k, eb));
      } else {
        Value atoms = add(b, mul(b, div(b, k, 8), tile / 64 * 1024),
                          mul(b, div(b, mn, 64), 1024));
        byte =
            add(b, atoms,
                add(b, mul(b, rem(b, k, 8), 128), mul(b, rem(b, mn, 64), 2)));
      }
      // The 16-byte chunks of a swizzled row: a K-major row's bk elements
      // (64 or 128 bytes), an M/N-major one's 128.
      int64_t bits = kCont ? eb * bk / 16 - 1 : 7;
      Value chunkXor = mul(b, rem(b, div(b, byte, 128), bits + 1), 16);
      Value swizzled = arith::XOrIOp::create(b, loc, byte, chunkXor);
      idx.push_back(add(b, div(b, swizzled, eb), isA ? 0 : bm * bk));
      return idx;
    }
    if (kCont)
      idx.append({mn, k});
    else
      idx.append({k, mn});
    return idx;
  }

  int64_t size(unsigned dim) const { return c.sizes[dim]; }
  Value cst(OpBuilder &b, int64_t v) {
    Value &slot = constants[v];
    if (!slot) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(entry);
      slot = arith::ConstantIndexOp::create(b, loc, v);
    }
    return slot;
  }
  /// An i64 constant (wgmma descriptors are 64-bit).
  Value cst64(OpBuilder &b, int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }
  Value add(OpBuilder &b, Value x, int64_t y) {
    return y ? arith::AddIOp::create(b, loc, x, cst(b, y)).getResult() : x;
  }
  Value add(OpBuilder &b, Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value mul(OpBuilder &b, Value x, int64_t y) {
    return y == 1 ? x : arith::MulIOp::create(b, loc, x, cst(b, y)).getResult();
  }
  Value div(OpBuilder &b, Value x, int64_t y) {
    return y == 1 ? x
                  : arith::DivUIOp::create(b, loc, x, cst(b, y)).getResult();
  }
  Value rem(OpBuilder &b, Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, cst(b, y));
  }
  Value less(OpBuilder &b, Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 cst(b, y));
  }

  /// The indices of operand `operand` at the loop positions `at` (loop
  /// dimensions the operand does not read may be absent).
  SmallVector<Value> indices(OpBuilder &b, unsigned operand,
                             const DenseMap<unsigned, Value> &at) {
    AffineMap map = c.maps[operand];
    SmallVector<Value> dims;
    for (unsigned d = 0; d < map.getNumDims(); ++d) {
      Value v = at.lookup(d);
      dims.push_back(v ? v : cst(b, 0));
    }
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults())
      idx.push_back(affine::expandAffineExpr(b, loc, e, dims, {}));
    return idx;
  }

  /// `inside` and `ok` (either may be null: true).
  Value conjoin(OpBuilder &b, Value inside, Value ok) {
    return inside && ok ? arith::AndIOp::create(b, loc, inside, ok).getResult()
                        : (inside ? inside : ok);
  }

  /// `load`'s value where `inside` (null: always), else zeros of `type`.
  Value loadOrZero(OpBuilder &b, Value inside, Type type,
                   function_ref<Value(OpBuilder &)> load) {
    if (!inside)
      return load(b);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, inside,
                                  /*withElseRegion=*/true);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    scf::YieldOp::create(tb, loc, load(tb));
    OpBuilder eb = ifOp.getElseBodyBuilder();
    scf::YieldOp::create(eb, loc,
                         arith::ConstantOp::create(
                             eb, loc, cast<TypedAttr>(eb.getZeroAttr(type)))
                             .getResult());
    return ifOp.getResult(0);
  }

  /// `flat` < `extent` where tiles of `tile` overhang it; else null.
  Value guard(OpBuilder &b, Value flat, int64_t extent, int64_t tile) {
    return extent % tile ? less(b, flat, extent) : Value();
  }

  /// Adds to `at` the indices of the dimensions `dims` (outer to inner)
  /// whose flattened index is `flat`.
  void decompose(OpBuilder &b, Value flat, ArrayRef<unsigned> dims,
                 DenseMap<unsigned, Value> &at) {
    for (size_t i = dims.size() - 1; i > 0; --i) {
      at[dims[i]] = rem(b, flat, size(dims[i]));
      flat = div(b, flat, size(dims[i]));
    }
    at[dims.front()] = flat;
  }

  /// How many consecutive elements along the fast dims `fastDims` of
  /// `operand`'s tile (`fast` of them in a tile of `tileElems`) each
  /// thread loads at once: `vectorBytes` worth where every such group is
  /// contiguous and aligned in the buffer, else 1.
  int64_t loadWidth(unsigned operand, ArrayRef<unsigned> fastDims, int64_t fast,
                    int64_t tileElems);

  /// Stages the A (rows m, columns k) or B (rows k, columns n) tile at
  /// (row0, col0) in shared-memory buffer `stage` (null: the only one),
  /// laid out as sharedIndex says; elements outside the operand, and all
  /// of them where `valid` (if not null) is false, are zero. With several
  /// stages, 16-bit groups go by cp.async, whose tokens are added to
  /// `tokens`.
  void stageTile(OpBuilder &b, bool isA, Value tid,
                 const DenseMap<unsigned, Value> &batchAt, Value m0orK0,
                 Value k0orN0, Value stage, Value valid,
                 SmallVectorImpl<Value> &tokens);
  /// Stages the kept values of a 2:4 A's tile of rows m0.. for step `kt`
  /// ([m][k / 2] in shared memory, rows past M zero) as 16-byte groups:
  /// by cp.async with several stages, else loaded and stored.
  void stageSparseTile(OpBuilder &b, Value tid, Value m0, Value kt, Value stage,
                       Value valid, SmallVectorImpl<Value> &tokens);

  /// `v` (f32) rounded to the nearest tf32 value (ties away from zero,
  /// as cvt.rna.tf32.f32): the tensor cores drop the low 13 mantissa
  /// bits, and rounding first halves that error and unbiases it. NaNs
  /// stay NaNs.
  Value roundToTf32(OpBuilder &b, Value v) {
    auto i32 = b.getI32Type();
    Value bits = arith::BitcastOp::create(b, loc, i32, v);
    Value half = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0x1000));
    Value mask = arith::ConstantOp::create(
        b, loc, b.getI32IntegerAttr(static_cast<int32_t>(0xffffe000u)));
    Value rounded = arith::AndIOp::create(
        b, loc, arith::AddIOp::create(b, loc, bits, half), mask);
    Value r = arith::BitcastOp::create(b, loc, b.getF32Type(), rounded);
    Value isNan =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
    return arith::SelectOp::create(b, loc, isNan, v, r);
  }

  /// Where the thread's accumulators lie in the tile, computed once at
  /// the kernel's start: SIMT threads own rows tRow + 8i and columns
  /// tCol + 16j; in the tensor-core tiles, with g = lane / 4 and
  /// t = lane % 4 (the PTX ISA's "groupID" and "threadID_in_group"), a
  /// lane's A rows are aRow (+ 8, + 16 mi), its B columns bCol (+ 8 ni) and
  /// its accumulator columns cCol (+ 1, + 8 ni), and its fragments' k
  /// offsets start at kLane (tf32: t, t + 4; f16 pairs: 2t and 2t + 8).
  ///
  /// 16-bit tiles load fragments with ldmatrix .x4, each lane giving the
  /// address of one 8-element row of one of four 8x8 matrices (lanes 8q to
  /// 8q + 7: matrix q): an A fragment's matrices are (rows 0-7, k 0-7),
  /// (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15); a pair of
  /// B fragments' are (columns 0-7, k 0-7), (0-7, k 8-15), (8-15, k 0-7),
  /// (8-15, k 8-15). The lane's row starts at (ldK[op], ldMN[op]) from the
  /// fragment's corner; with k contiguous in shared memory the rows run
  /// along k and the load is plain, else along m or n and it transposes.
  void locateThread(OpBuilder &b, Value tid);
  Value tRow, tCol, aRow, bCol, cCol, kLane, warpRow, warpCol;
  Value ldK[2], ldMN[2];

  /// One step of K's products into the accumulators `acc`.
  void simtCompute(OpBuilder &b, SmallVectorImpl<Value> &acc);
  void mmaCompute(OpBuilder &b, SmallVectorImpl<Value> &acc, Value stage);
  /// One step of K's products with a 2:4 A: per sparseK() k, one mma.sp
  /// (m16n8k32, 8-bit: m16n8k64) with the A fragment's kept values, two
  /// ldmatrix halves of B and the metadata word of the tile's 16-row
  /// block, step `kt` of K.
  void sparseCompute(OpBuilder &b, SmallVectorImpl<Value> &acc, Value stage,
                     Value kt);
  Value mmaSp(OpBuilder &b, ArrayRef<Value> aRegs, ArrayRef<Value> bRegs,
              Value meta, Value acc);
  /// One step of K's products on a wgmma tile: per 32 bytes of k (16
  /// 16-bit or 32 8-bit elements), one `wgmma.mma_async` m64nNk16 (k32)
  /// of the warpgroup's 64 rows into its accumulator struct `acc` (N / 2
  /// f32 or, for s8, i32 a thread), committed as a group;
  /// then a wait until at most `pending` groups are in flight.
  Value wgmmaCompute(OpBuilder &b, Value acc, Value stage, int64_t pending);
  /// The wgmma matrix descriptor of operand A or B at 32-byte k slice `slice`
  /// of the stage at byte offset `stageBytesAt` (i64): the start address
  /// and the strides between core matrices along K (the "leading
  /// dimension byte offset") and along M or N (the "stride dimension byte
  /// offset"), each in 16-byte units, no swizzling.
  Value wgmmaDescriptor(OpBuilder &b, bool isA, Value stageBytesAt,
                        int64_t slice);
  /// A wgmma tile's operand layout (see sharedIndex) as its descriptors
  /// give it: the leading and stride dimension byte offsets, the swizzle
  /// mode (1: 128-byte, 2: 64-byte), the bytes from one product's 32-byte
  /// slice of k to the next, and from one 64-row block of A to the next.
  /// K-major: 8 rows of R = bk * element bytes per swizzle atom, atoms
  /// 8 R bytes apart (the stride dimension); the leading dimension is
  /// unused (a product's k fit in an atom's row). MN-major: atoms 1024 bytes
  /// apart along MN (the leading dimension) and (MN / 64) * 1024 along K (the
  /// stride dimension).
  struct WgLayout {
    int64_t lbo, sbo, mode, slice, rows64;
  };
  WgLayout wgLayout(bool isA) const {
    int64_t tile = isA ? bm : bn;
    int64_t row = elementBytes() * bk;
    if (kContiguous[isA ? 0 : 1])
      return {16, 8 * row, row == 128 ? 1 : 2, 32, 8 * 8 * row};
    return {1024, tile / 64 * 1024, 1, 2 * (tile / 64 * 1024), 1024};
  }
  /// wgmma tiles: the address of each operand's tile in the first stage
  /// (i64; A's at the thread's warpgroup's 64 rows).
  Value wgBase[2];
  /// The block's first row (m) in the output.
  Value mTile0;
  /// The loop over K (set by build).
  scf::ForOp kLoop;
  /// acc = a * b + acc on one 16x8 tile: `nvgpu.mma.sync`, or for bf16
  /// `nvvm.mma.sync` on the fragments' registers (two bf16 per i32).
  Value mma(OpBuilder &b, Value aFrag, Value bFrag, Value acc);
  /// One `ldmatrix` .x4 of operand A or B in buffer `stage` at k `k`
  /// and m or n `mn` (each lane's row from ldK/ldMN, see locateThread).
  Value ldmatrixX4(OpBuilder &b, bool isA, Value stage, Value k, Value mn) {
    unsigned op = isA ? 0 : 1;
    SmallVector<Value> idx =
        sharedIndex(b, isA, stage, add(b, k, ldK[op]), add(b, mn, ldMN[op]));
    return nvgpu::LdMatrixOp::create(
        b, loc, VectorType::get({4, perRegister()}, c.inType),
        isA ? aShared : bShared, idx,
        /*transpose=*/!kContiguous[op], /*numTiles=*/4);
  }
  /// The k of one mma.sync of the 16- and 8-bit tiles, in 16s.
  int64_t kStep() const { return bytes ? 2 : 1; }
  /// Elements of the operands in one 32-bit fragment register.
  int64_t perRegister() const { return 32 / c.inType.getIntOrFloatBitWidth(); }
  /// A 32-bit fragment row (two bf16, four e4m3 bytes) as the i32 register
  /// nvvm's mma ops take.
  Value fragmentRegister(OpBuilder &b, Value row) {
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), row);
    return vector::ExtractOp::create(b, loc, word, 0);
  }
  /// The four f32 registers of an mma tile's vector<2x2xf32> accumulator
  /// (register 2r + e is element [r][e]), and the accumulator of an mma's
  /// result struct `d`.
  SmallVector<Value> accumulatorRegs(OpBuilder &b, Value acc) {
    SmallVector<Value> regs;
    for (int64_t i = 0; i < 4; ++i)
      regs.push_back(vector::ExtractOp::create(
          b, loc, acc, ArrayRef<int64_t>{i / 2, i % 2}));
    return regs;
  }
  Value accumulatorFrom(OpBuilder &b, Value d, Value acc) {
    for (int64_t i = 0; i < 4; ++i) {
      Value v = LLVM::ExtractValueOp::create(b, loc, d, i);
      acc = vector::InsertOp::create(b, loc, v, acc,
                                     ArrayRef<int64_t>{i / 2, i % 2});
    }
    return acc;
  }
};

int64_t TileBuilder::loadWidth(unsigned operand, ArrayRef<unsigned> fastDims,
                               int64_t fast, int64_t tileElems) {
  int64_t width = vectorBytes / (c.inType.getIntOrFloatBitWidth() / 8);
  if (width < 2 || fast % width || threads() % (fast / width) ||
      tileElems % (threads() * width))
    return 1;
  // A padded input is read from its source, at its indices less the
  // padding (see stageTile).
  const std::optional<PaddedInput> &padded = c.padded[operand];
  Value operandBuffer = c.op.getDpsInputs()[operand];
  auto type =
      cast<MemRefType>((padded ? padded->source : operandBuffer).getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return 1;
  // The element offset in the buffer as a linear function of the loop
  // dims: the innermost fast dim that varies must step it by 1 and have a
  // multiple of `width` values (a group, which starts at a multiple of
  // `width`, then varies only that dim), and every other term be a
  // multiple of `width` (the group starts aligned).
  AffineMap map = c.maps[operand];
  AffineExpr addr = getAffineConstantExpr(offset, ctx);
  for (auto [i, e, stride] : llvm::enumerate(map.getResults(), strides))
    addr = addr + (e - (padded ? padded->low[i] : 0)) * stride;
  SmallVector<int64_t> coeffs;
  if (failed(getFlattenedAffineExpr(addr, map.getNumDims(), 0, &coeffs)) ||
      coeffs.size() != map.getNumDims() + 1) // mod or floordiv terms
    return 1;
  auto inner = llvm::find_if(llvm::reverse(fastDims),
                             [&](unsigned d) { return size(d) > 1; });
  if (inner == llvm::reverse(fastDims).end() || coeffs[*inner] != 1 ||
      size(*inner) % width || coeffs.back() % width)
    return 1;
  // A padded input's group lies inside or outside the source as a whole
  // where the dim it varies indexes only unpadded dims of the source (the
  // channels of a channels-last convolution; in NCHW, the row runs across
  // the padding).
  if (padded) {
    ArrayRef<int64_t> sourceShape = type.getShape();
    ArrayRef<int64_t> paddedShape =
        cast<MemRefType>(operandBuffer.getType()).getShape();
    for (auto [i, e] : llvm::enumerate(map.getResults()))
      if (e.isFunctionOfDim(*inner) &&
          (padded->low[i] != 0 || sourceShape[i] != paddedShape[i]))
        return 1;
  }
  for (unsigned d = 0; d < map.getNumDims(); ++d)
    if (d != *inner && size(d) > 1 && coeffs[d] % width)
      return 1;
  return width;
}

void TileBuilder::stageTile(OpBuilder &b, bool isA, Value tid,
                            const DenseMap<unsigned, Value> &batchAt,
                            Value rowBase, Value colBase, Value stage,
                            Value valid, SmallVectorImpl<Value> &tokens) {
  // A's tile is (m: bm) x (k: bk); B's is (k: bk) x (n: bn).
  ArrayRef<unsigned> rowDims = isA ? c.m : c.k, colDims = isA ? c.k : c.n;
  int64_t rows = isA ? bm : bk, cols = isA ? bk : bn;
  Value shared = isA ? aShared : bShared;
  unsigned operand = isA ? c.a : c.b;
  // Consecutive threads take consecutive elements along the dimension the
  // operand's innermost index follows, so global loads coalesce.
  bool colsFastest = this->colsFastest(isA);
  const std::optional<PaddedInput> &padded = c.padded[operand];
  Value bufferOperand = padded ? padded->source : c.op.getDpsInputs()[operand];
  // Each thread loads `width` consecutive elements along the fast side at
  // a time (one 16-byte load where the buffer allows), groups tid +
  // r * threads of the tile: the fast index is the same for every r (the
  // groups across the fast side divide the thread count), so its loop
  // indices are computed once.
  int64_t fast = colsFastest ? cols : rows;
  ArrayRef<unsigned> fastDims = colsFastest ? colDims : rowDims;
  int64_t width = loadWidth(operand, fastDims, fast, rows * cols);
  int64_t lanes = fast / width; // threads across the fast side
  int64_t threads = this->threads();
  assert(threads % lanes == 0 && "tile sides divide the thread count");
  Value fastAt = mul(b, rem(b, tid, lanes), width), slowAt = div(b, tid, lanes);
  Value gFast = add(b, colsFastest ? colBase : rowBase, fastAt);
  ArrayRef<unsigned> slowDims = colsFastest ? rowDims : colDims;
  int64_t slowTile = colsFastest ? rows : cols;
  DenseMap<unsigned, Value> fastIdx = batchAt;
  decompose(b, gFast, fastDims, fastIdx);
  // Guards only where the tiles overhang the operand.
  Value fastInside =
      conjoin(b, guard(b, gFast, c.extent(fastDims), fast), valid);
  ArrayRef<int64_t> sourceShape =
      cast<MemRefType>(bufferOperand.getType()).getShape();
  ArrayRef<int64_t> paddedShape =
      cast<MemRefType>(c.op.getDpsInputs()[operand].getType()).getShape();
  // A group of `width` elements: a vector (one aligned load) or a scalar;
  // zero outside the operand. 16-bit tiles keep the fast side contiguous
  // in shared memory (see kContiguous): with several stages a group is one
  // cp.async copy. (A vector.store into workgroup memory would reach
  // convert-vector-to-llvm, which cannot convert its memory space.)
  Type group = width > 1 ? Type(VectorType::get({width}, c.inType)) : c.inType;
  int64_t groupBytes = width * (c.inType.getIntOrFloatBitWidth() / 8);
  // (A group along the side that is not contiguous in shared memory, an
  // 8-bit operand's m or n, is stored element by element.)
  bool sharedFast =
      kContiguous[isA ? 0 : 1] == (isA ? colsFastest : !colsFastest);
  bool asyncCopy = ldsm && sharedFast && stages > 1 && width > 1 &&
                   (groupBytes == 4 || groupBytes == 8 || groupBytes == 16);
  for (int64_t r = 0; r < rows * cols / (threads * width); ++r) {
    Value slow = add(b, slowAt, r * (threads / lanes));
    Value gSlow = add(b, colsFastest ? rowBase : colBase, slow);
    DenseMap<unsigned, Value> at = fastIdx;
    decompose(b, gSlow, slowDims, at);
    Value inside =
        conjoin(b, fastInside, guard(b, gSlow, c.extent(slowDims), slowTile));
    SmallVector<Value> idx = indices(b, operand, at);
    if (padded) {
      // Zero padding: read the source at idx - low, zero outside it (an
      // index below low wraps around to a large unsigned value).
      for (auto [d, low] : llvm::enumerate(padded->low)) {
        if (low == 0 && sourceShape[d] == paddedShape[d])
          continue;
        if (low)
          idx[d] = arith::SubIOp::create(b, loc, idx[d], cst(b, low));
        inside = conjoin(b, inside, less(b, idx[d], sourceShape[d]));
      }
    }
    // The group's first element in shared memory.
    auto sharedAt = [&](int64_t e) {
      Value at = add(b, fastAt, e);
      Value row = colsFastest ? slow : at;
      Value col = colsFastest ? at : slow;
      return isA ? sharedIndex(b, isA, stage, col, row)
                 : sharedIndex(b, isA, stage, row, col);
    };
    if (asyncCopy) {
      // cp.async of the group, zero-filled (no bytes read) outside the
      // operand, where the indices are clamped to the buffer's start.
      Value srcElements;
      if (inside) {
        srcElements =
            arith::SelectOp::create(b, loc, inside, cst(b, width), cst(b, 0));
        for (Value &i : idx)
          i = arith::SelectOp::create(b, loc, inside, i, cst(b, 0));
      }
      auto copy = nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), shared, sharedAt(0),
          bufferOperand, idx, b.getIndexAttr(width), srcElements,
          groupBytes == 16 ? b.getUnitAttr() : UnitAttr());
      tokens.push_back(copy.getAsyncToken());
      continue;
    }
    auto load = [&](OpBuilder &lb) -> Value {
      if (width == 1)
        return memref::LoadOp::create(lb, loc, bufferOperand, idx);
      auto vload = vector::LoadOp::create(lb, loc, cast<VectorType>(group),
                                          bufferOperand, idx);
      vload.setAlignment(groupBytes);
      return vload;
    };
    Value v = loadOrZero(b, inside, group, load);
    for (int64_t e = 0; e < width; ++e) {
      Value x =
          width > 1 ? vector::ExtractOp::create(b, loc, v, e).getResult() : v;
      if (kind == TileKind::Tf32)
        x = roundToTf32(b, x);
      memref::StoreOp::create(b, loc, x, shared, sharedAt(e));
    }
  }
}

void TileBuilder::locateThread(OpBuilder &b, Value tid) {
  if (wg) {
    // Warpgroup w / 4 owns rows 64 (w / 4) of the tile, all 128 columns;
    // its warp w % 4 holds the accumulators of 16 of those rows: with
    // g = lane / 4 and t = lane % 4, rows g and g + 8, columns 2t and
    // 2t + 1 of each 8 (wgmma's accumulator layout).
    Value warp = div(b, tid, 32), lane = rem(b, tid, 32);
    Value group = div(b, warp, 4);
    warpRow = mul(b, group, 64);
    aRow =
        add(b, add(b, warpRow, mul(b, rem(b, warp, 4), 16)), div(b, lane, 4));
    cCol = mul(b, rem(b, lane, 4), 2);
    // The shared buffer's address, which descriptors hold.
    auto i64 = b.getI64Type();
    Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, aShared);
    Value addr = arith::IndexCastOp::create(b, loc, i64, ptr);
    Value rows = arith::IndexCastOp::create(
        b, loc, i64, mul(b, group, wgLayout(/*isA=*/true).rows64));
    wgBase[0] = arith::AddIOp::create(b, loc, addr, rows);
    int64_t bytes = c.inType.getIntOrFloatBitWidth() / 8;
    wgBase[1] = arith::AddIOp::create(b, loc, addr, cst64(b, bm * bk * bytes));
    return;
  }
  if (kind == TileKind::Simt) {
    tRow = div(b, tid, 16);
    tCol = rem(b, tid, 16);
    return;
  }
  // Warp w owns rows warpM * (w / W) and columns warpN * (w % W) of the
  // tile, W = bn / warpN warps across: miCount x niCount mma tiles of 16x8.
  Value warp = div(b, tid, 32), lane = rem(b, tid, 32);
  Value rowBase = mul(b, div(b, warp, bn / warpN), warpM);
  Value colBase = mul(b, rem(b, warp, bn / warpN), warpN);
  Value g = div(b, lane, 4), t = rem(b, lane, 4);
  warpRow = rowBase;
  warpCol = colBase;
  aRow = add(b, rowBase, g);
  bCol = add(b, colBase, g);
  cCol = add(b, colBase, mul(b, t, 2));
  kLane = kind == TileKind::Tf32 ? t : mul(b, t, 2);
  if (!ldsm)
    return;
  // mma.sp m16n8k32's selector 0: lanes 4g and 4g + 1 give the metadata
  // of rows g and g + 8 for k 0-15 and 16-31 (word 2g + h of a block's 16);
  // the other two lanes' registers are not read. m16n8k64 (8-bit): every
  // lane gives its word (lane 4g + t: row g + 8 (t % 2), k 32 (t / 2) to
  // 32 (t / 2) + 31), word `lane` of a block's 32.
  if (sparse && bytes) {
    metaLane = mutation == Mutation::SwapSparseMeta
                   ? arith::XOrIOp::create(b, loc, lane, cst(b, 2)).getResult()
                   : lane;
  } else if (sparse) {
    Value h = rem(b, lane, 2);
    if (mutation == Mutation::SwapSparseMeta)
      h = arith::SubIOp::create(b, loc, cst(b, 1), h);
    metaLane = add(b, mul(b, g, 2), h);
  }
  // Matrix q = lane / 8, row r = lane % 8 of it. A matrix row is 16
  // bytes: 8 elements of 16 bits, or 16 of 8 bits along k (k-contiguous).
  Value lo16 = rem(b, lane, 16), hi8 = mul(b, div(b, lane, 16), 8);
  Value lo8 = rem(b, lane, 8), mid8 = mul(b, rem(b, div(b, lane, 8), 2), 8);
  if (bytes) {
    ldMN[0] = lo16;
    ldK[0] = mul(b, div(b, lane, 16), 16);
    ldMN[1] = add(b, hi8, lo8);
    ldK[1] = mul(b, rem(b, div(b, lane, 8), 2), 16);
    return;
  }
  // A: matrix q covers rows 8 (q % 2) and k 8 (q / 2).
  if (kContiguous[0]) {
    ldMN[0] = lo16; // row r + 8 (q % 2)
    ldK[0] = hi8;
  } else {
    ldK[0] = add(b, hi8, lo8); // k row 8 (q / 2) + r
    ldMN[0] = mid8;
  }
  // B pair: matrix q covers columns 8 (q / 2) and k 8 (q % 2).
  if (kContiguous[1]) {
    ldMN[1] = add(b, hi8, lo8); // column 8 (q / 2) + r
    ldK[1] = mid8;
  } else {
    ldK[1] = lo16; // k row 8 (q % 2) + r
    ldMN[1] = hi8;
  }
}

void TileBuilder::simtCompute(OpBuilder &b, SmallVectorImpl<Value> &acc) {
  // f32 operands only: f16 and bf16 take the tensor-core tiles.
  auto load = [&](Value shared, Value k, Value mn) -> Value {
    return memref::LoadOp::create(b, loc, shared, ValueRange{k, mn});
  };
  for (int64_t kk = 0; kk < bk; ++kk) {
    SmallVector<Value> av, bv;
    for (int64_t i = 0; i < 8; ++i)
      av.push_back(load(aShared, cst(b, kk), add(b, tRow, 8 * i)));
    for (int64_t j = 0; j < 4; ++j)
      bv.push_back(load(bShared, cst(b, kk), add(b, tCol, 16 * j)));
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        Value p = arith::MulFOp::create(b, loc, av[i], bv[j]);
        acc[i * 4 + j] = arith::AddFOp::create(b, loc, acc[i * 4 + j], p);
      }
  }
}

Value TileBuilder::mma(OpBuilder &b, Value aFrag, Value bFrag, Value acc) {
  if (kind != TileKind::BFloat && !fp8)
    return nvgpu::MmaSyncOp::create(
        b, loc, aFrag, bFrag, acc,
        ArrayRef<int64_t>{16, 8, kind == TileKind::Tf32 ? 8 : 16 * kStep()},
        /*tf32Enabled=*/kind == TileKind::Tf32);
  // bf16 and float8 e4m3 have no nvgpu.mma.sync lowering: the NVVM op (bf16)
  // or, as NVVM's mma op lists no dense e4m3 shape, the NVPTX intrinsic
  // itself (PTX ISA 8.4, sm_89 and later), on registers: row i of a
  // fragment (two bf16 or four e4m3, the first in the low bits) is
  // register i, and the four f32 accumulator registers move in and out of
  // the vector<2x2xf32> the other tiles carry (register 2r + e is element
  // [r][e]).
  auto regs = [&](Value frag) {
    SmallVector<Value> out;
    auto type = cast<VectorType>(frag.getType());
    for (int64_t i = 0; i < type.getDimSize(0); ++i)
      out.push_back(
          fragmentRegister(b, vector::ExtractOp::create(b, loc, frag, i)));
    return out;
  };
  auto f32 = b.getF32Type();
  auto resultTy = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  SmallVector<Value> aRegs = regs(aFrag), bRegs = regs(bFrag);
  SmallVector<Value> cRegs = accumulatorRegs(b, acc);
  Value d;
  if (fp8) {
    SmallVector<Value> args = aRegs;
    llvm::append_range(args, bRegs);
    llvm::append_range(args, cRegs);
    d = LLVM::CallIntrinsicOp::create(
            b, loc, resultTy,
            b.getStringAttr("llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32"),
            args)
            .getResult(0);
  } else {
    d = NVVM::MmaOp::create(b, loc, resultTy, aRegs, bRegs, cRegs,
                            ArrayRef<int64_t>{16, 8, 16}, std::nullopt,
                            std::nullopt,
                            std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                                          NVVM::MMATypes::bf16},
                            std::array<NVVM::MMALayout, 2>{
                                NVVM::MMALayout::row, NVVM::MMALayout::col});
  }
  return accumulatorFrom(b, d, acc);
}

void TileBuilder::mmaCompute(OpBuilder &b, SmallVectorImpl<Value> &acc,
                             Value stage) {
  // Rows of a 2-D fragment (the GPU lowering has no n-D
  // vector.from_elements).
  auto fragment = [&](VectorType ty, ArrayRef<Value> rows) -> Value {
    Value v = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(ty, b.getZeroAttr(c.inType)));
    for (auto [i, row] : llvm::enumerate(rows))
      v = vector::InsertOp::create(b, loc, row, v,
                                   ArrayRef<int64_t>{static_cast<int64_t>(i)});
    return v;
  };
  if (ldsm) {
    // Per k step of 16 (8-bit: 32): one ldmatrix .x4 per A fragment (a
    // 16x16 tile) and per pair of B fragments (16 x 16 columns); see
    // locateThread.
    VectorType bTy = VectorType::get({2, perRegister()}, c.inType);
    auto ldmatrix = [&](bool isA, Value k, Value mn) {
      return ldmatrixX4(b, isA, stage, k, mn);
    };
    for (int64_t k0 = 0; k0 < bk; k0 += 16 * kStep()) {
      SmallVector<Value> aFrag, bFrag;
      for (int64_t mi = 0; mi < miCount(); ++mi)
        aFrag.push_back(ldmatrix(true, cst(b, k0), add(b, warpRow, 16 * mi)));
      for (int64_t pair = 0; pair < niCount() / 2; ++pair) {
        Value regs = ldmatrix(false, cst(b, k0), add(b, warpCol, 16 * pair));
        for (int64_t f = 0; f < 2; ++f) {
          SmallVector<Value> rows;
          for (int64_t r = 0; r < 2; ++r) {
            int64_t rr = mutation == Mutation::SwapBFragment ? 1 - r : r;
            rows.push_back(vector::ExtractOp::create(b, loc, regs, 2 * f + rr));
          }
          bFrag.push_back(fragment(bTy, rows));
        }
      }
      for (int64_t mi = 0; mi < miCount(); ++mi)
        for (int64_t ni = 0; ni < niCount(); ++ni) {
          Value &a = acc[mi * niCount() + ni];
          a = mma(b, aFrag[mi], bFrag[ni], a);
        }
    }
    return;
  }
  // tf32: fragments element by element from the [k][m] and [k][n] tiles.
  auto load = [&](Value shared, Value k, Value mn) -> Value {
    return memref::LoadOp::create(b, loc, shared, ValueRange{k, mn});
  };
  VectorType aTy = VectorType::get({4, 1}, c.inType);
  VectorType bTy = VectorType::get({2, 1}, c.inType);
  auto column = [&](VectorType ty, ArrayRef<Value> elems) -> Value {
    Value v = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(ty, b.getZeroAttr(c.inType)));
    for (auto [i, e] : llvm::enumerate(elems))
      v = vector::InsertOp::create(
          b, loc, e, v, ArrayRef<int64_t>{static_cast<int64_t>(i), 0});
    return v;
  };
  for (int64_t k0 = 0; k0 < bk; k0 += 8) {
    SmallVector<Value> aFrag, bFrag;
    for (int64_t mi = 0; mi < 2; ++mi) {
      // Register r: row g + 8 (r % 2), k offset 4 (r / 2).
      Value row = add(b, aRow, 16 * mi);
      SmallVector<Value> elems;
      for (int64_t r = 0; r < 4; ++r)
        elems.push_back(load(aShared, add(b, kLane, k0 + 4 * (r / 2)),
                             add(b, row, 8 * (r % 2))));
      aFrag.push_back(column(aTy, elems));
    }
    for (int64_t ni = 0; ni < 4; ++ni) {
      // Register r: column g, k offset 4 r.
      Value col = add(b, bCol, 8 * ni);
      SmallVector<Value> elems;
      for (int64_t r = 0; r < 2; ++r) {
        int64_t rr = mutation == Mutation::SwapBFragment ? 1 - r : r;
        elems.push_back(load(bShared, add(b, kLane, k0 + 4 * rr), col));
      }
      bFrag.push_back(column(bTy, elems));
    }
    for (int64_t mi = 0; mi < 2; ++mi)
      for (int64_t ni = 0; ni < 4; ++ni)
        acc[mi * 4 + ni] = mma(b, aFrag[mi], bFrag[ni], acc[mi * 4 + ni]);
  }
}

void TileBuilder::stageSparseTile(OpBuilder &b, Value tid, Value m0, Value kt,
                                  Value stage, Value valid,
                                  SmallVectorImpl<Value> &tokens) {
  // Groups of 16 bytes of kept values (8 16-bit or 16 8-bit ones):
  // `perRow` per tile row, each thread the groups tid + r * threads
  // (sparseFits: whole rounds).
  int64_t width = 16 / elementBytes();
  int64_t cols = bk / 2, perRow = cols / width, rowLength = kp / 2;
  int64_t rows = c.extent(c.m), groups = bm * perRow;
  auto group = VectorType::get({width}, c.inType);
  for (int64_t r = 0; r < groups / threads(); ++r) {
    Value gi = add(b, tid, r * threads());
    Value row = div(b, gi, perRow), col = mul(b, rem(b, gi, perRow), width);
    Value gRow = add(b, m0, row);
    Value inside = conjoin(b, guard(b, gRow, rows, bm), valid);
    Value src = add(b, mul(b, gRow, rowLength), add(b, mul(b, kt, cols), col));
    SmallVector<Value> dst = sharedIndex(b, /*isA=*/true, stage, col, row);
    if (stages > 1) {
      // Zero-filled (no bytes read, the index clamped) outside.
      Value srcElements;
      if (inside) {
        srcElements =
            arith::SelectOp::create(b, loc, inside, cst(b, width), cst(b, 0));
        src = arith::SelectOp::create(b, loc, inside, src, cst(b, 0));
      }
      auto copy = nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(ctx), aShared, dst,
          sparseValues, ValueRange{src}, b.getIndexAttr(width), srcElements,
          b.getUnitAttr());
      tokens.push_back(copy.getAsyncToken());
      continue;
    }
    auto load = [&](OpBuilder &lb) -> Value {
      auto v =
          vector::LoadOp::create(lb, loc, group, sparseValues, ValueRange{src});
      v.setAlignment(16);
      return v;
    };
    Value v = loadOrZero(b, inside, group, load);
    for (int64_t e = 0; e < width; ++e)
      memref::StoreOp::create(
          b, loc, vector::ExtractOp::create(b, loc, v, e), aShared,
          sharedIndex(b, /*isA=*/true, stage, add(b, col, e), row));
  }
}

Value TileBuilder::mmaSp(OpBuilder &b, ArrayRef<Value> aRegs,
                         ArrayRef<Value> bRegs, Value meta, Value acc) {
  // f16 registers go as vector<2xf16>; bf16 and s8 ones as i32 with their
  // PTX type named (as for nvvm.mma.sync). s8 products (m16n8k64) sum into
  // s32 accumulators, clamped as the dense tiles' mma.sync are.
  bool asWords = kind == TileKind::BFloat || int8;
  auto reg = [&](Value row) {
    return asWords ? fragmentRegister(b, row) : row;
  };
  SmallVector<Value> a, bb;
  for (Value r : aRegs)
    a.push_back(reg(r));
  for (Value r : bRegs)
    bb.push_back(reg(r));
  SmallVector<Value> cRegs = accumulatorRegs(b, acc);
  Type accElt = int8 ? Type(b.getI32Type()) : Type(b.getF32Type());
  auto resultTy =
      LLVM::LLVMStructType::getLiteral(ctx, {accElt, accElt, accElt, accElt});
  Value selector = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(0));
  std::optional<std::array<NVVM::MMATypes, 2>> types;
  std::optional<NVVM::MMAIntOverflow> overflow;
  if (kind == TileKind::BFloat)
    types = std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                          NVVM::MMATypes::bf16};
  if (int8) {
    types =
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::s8, NVVM::MMATypes::s8};
    overflow = NVVM::MMAIntOverflow::satfinite;
  }
  Value d = NVVM::MmaSpOp::create(b, loc, resultTy, a, bb, cRegs, meta,
                                  selector, ArrayRef<int64_t>{16, 8, sparseK()},
                                  overflow, types);
  return accumulatorFrom(b, d, acc);
}

void TileBuilder::sparseCompute(OpBuilder &b, SmallVectorImpl<Value> &acc,
                                Value stage, Value kt) {
  auto ldmatrix = [&](bool isA, Value k, Value mn) {
    return ldmatrixX4(b, isA, stage, k, mn);
  };
  auto rowsOf = [&](Value regs, ArrayRef<int64_t> which) {
    SmallVector<Value> out;
    for (int64_t i : which)
      out.push_back(vector::ExtractOp::create(b, loc, regs, i));
    return out;
  };
  // The metadata of 16-row block `blk` at mma.sp step `step` (sk k, kept
  // values sk / 2): word metaLane of its sparseMetaWords(). Blocks past M
  // (a tile overhanging it) read the last block's: their kept values are
  // zeros.
  int64_t sk = sparseK(), words = sparseMetaWords();
  int64_t blocks = (c.extent(c.m) + 15) / 16, steps = kp / sk;
  for (int64_t ks = 0; ks < bk / sk; ++ks) {
    SmallVector<SmallVector<Value>> aFrag, bFrag;
    SmallVector<Value> meta;
    for (int64_t mi = 0; mi < miCount(); ++mi) {
      // The kept values of 16 rows and sk k: a tile of 16 rows of 32
      // bytes, loaded as a dense A fragment (registers 0-3 of ldmatrix
      // .x4).
      Value regs =
          ldmatrix(true, cst(b, sk / 2 * ks), add(b, warpRow, 16 * mi));
      aFrag.push_back(rowsOf(regs, {0, 1, 2, 3}));
      Value blk = div(b, add(b, add(b, mTile0, warpRow), 16 * mi), 16);
      if (c.extent(c.m) % bm)
        blk = arith::MinUIOp::create(b, loc, blk, cst(b, blocks - 1));
      Value step = add(b, mul(b, kt, bk / sk), ks);
      Value at =
          add(b, mul(b, add(b, mul(b, blk, steps), step), words), metaLane);
      meta.push_back(memref::LoadOp::create(b, loc, sparseMeta, at));
    }
    // B: sk k of 8 columns in four registers, each a quarter of them
    // (16-bit: k 8j + 2t and the next; 8-bit: 16j + 4t to 16j + 4t + 3).
    for (int64_t pair = 0; pair < niCount() / 2; ++pair) {
      Value col = add(b, warpCol, 16 * pair);
      Value lo = ldmatrix(false, cst(b, sk * ks), col);
      Value hi = ldmatrix(false, cst(b, sk * ks + sk / 2), col);
      for (int64_t f = 0; f < 2; ++f) {
        SmallVector<Value> regs = rowsOf(lo, {2 * f, 2 * f + 1});
        regs.append(rowsOf(hi, {2 * f, 2 * f + 1}));
        bFrag.push_back(regs);
      }
    }
    for (int64_t mi = 0; mi < miCount(); ++mi)
      for (int64_t ni = 0; ni < niCount(); ++ni) {
        Value &a = acc[mi * niCount() + ni];
        a = mmaSp(b, aFrag[mi], bFrag[ni], meta[mi], a);
      }
  }
}

Value TileBuilder::wgmmaDescriptor(OpBuilder &b, bool isA, Value stageBytesAt,
                                   int64_t slice) {
  WgLayout l = wgLayout(isA);
  Value addr = arith::AddIOp::create(b, loc, wgBase[isA ? 0 : 1], stageBytesAt);
  if (slice)
    addr = arith::AddIOp::create(b, loc, addr, cst64(b, slice * l.slice));
  int64_t lbo = l.lbo, sbo = l.sbo;
  if (mutation == Mutation::SwapWgmmaStrides)
    std::swap(lbo, sbo);
  Value start = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, addr, cst64(b, 4)),
      cst64(b, 0x3fff));
  uint64_t fields = static_cast<uint64_t>(lbo >> 4) << 16 |
                    static_cast<uint64_t>(sbo >> 4) << 32 |
                    static_cast<uint64_t>(l.mode) << 62;
  return arith::OrIOp::create(b, loc, start,
                              cst64(b, static_cast<int64_t>(fields)));
}

Value TileBuilder::wgmmaCompute(OpBuilder &b, Value acc, Value stage,
                                int64_t pending) {
  Value at = cst64(b, 0);
  if (stage)
    at = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                    mul(b, stage, stageBytes()));
  auto type = int8                       ? NVVM::WGMMATypes::s8
              : fp8                      ? NVVM::WGMMATypes::e4m3
              : kind == TileKind::BFloat ? NVVM::WGMMATypes::bf16
                                         : NVVM::WGMMATypes::f16;
  // A K-major A is "row" (no transpose), a K-major B "col" (8-bit
  // operands are always K-major).
  auto layoutA = kContiguous[0] ? NVVM::MMALayout::row : NVVM::MMALayout::col;
  auto layoutB = kContiguous[1] ? NVVM::MMALayout::col : NVVM::MMALayout::row;
  // One product per 32 bytes of k: m64nNk16 of 16-bit operands, m64nNk32
  // of 8-bit ones (s8 into s32 accumulators, clamped as mma.sync's are;
  // e4m3 into f32).
  int64_t kStep = 32 / elementBytes();
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t s = 0; s < bk / kStep; ++s) {
    Value descA = wgmmaDescriptor(b, /*isA=*/true, at, s);
    Value descB = wgmmaDescriptor(b, /*isA=*/false, at, s);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, acc.getType(), acc, descA, descB,
        NVVM::MMAShapeAttr::get(ctx, 64, static_cast<int>(bn),
                                static_cast<int>(kStep)),
        type, type, int8 ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32,
        NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
        NVVM::WGMMAScaleIn::one, layoutA, layoutB,
        int8 ? NVVM::MMAIntOverflowAttr::get(ctx,
                                             NVVM::MMAIntOverflow::satfinite)
             : NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
  return acc;
}

gpu::LaunchOp TileBuilder::build(OpBuilder &b) {
  int64_t mSize = c.extent(c.m), nSize = c.extent(c.n), kSize = c.extent(c.k);
  int64_t mTiles = (mSize + bm - 1) / bm, nTiles = (nSize + bn - 1) / bn;
  int64_t kTiles = (kSize + bk - 1) / bk;
  int64_t batches = c.extent(c.batch);
  // [stage][k][m or n], or [stage][m or n][k] (see kContiguous); no stage
  // dimension with one stage.
  auto shared = [&](bool isA) {
    int64_t mn = isA ? bm : bn;
    SmallVector<int64_t> shape;
    if (stages > 1)
      shape.push_back(stages);
    if (wg)
      shape.push_back((bm + bn) * bk);
    else if (isA && sparse)
      shape.append({mn, bk / 2 + pad});
    else if (kContiguous[isA ? 0 : 1])
      shape.append({mn, bk + pad});
    else
      shape.append({bk, mn + pad});
    return MemRefType::get(
        shape, c.inType, MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
  };
  auto hostCst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value one = hostCst(1);
  Value counters;
  if (c.splitSum)
    counters = memref::GetGlobalOp::create(b, loc, c.counters.getType(),
                                           c.counters.getSymName());
  if (sparse) {
    // The compressed globals, read by the kernel in place of the weight.
    auto get = [&](StringRef name) -> Value {
      auto sym = c.sparse->getAttrOfType<FlatSymbolRefAttr>(name);
      auto g = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          c.op, sym.getAttr());
      return memref::GetGlobalOp::create(b, loc, g.getType(), g.getSymName());
    };
    sparseValues = get("kiln.sparse_values");
    sparseMeta = get("kiln.sparse_meta");
  }
  // wgmma tiles: one buffer, A's tile then B's in each stage; past 48 KiB
  // it is the launch's dynamic shared memory, viewed as that buffer.
  SmallVector<Type> attributions;
  if (!dynamicShared()) {
    attributions.push_back(shared(true));
    if (!wg)
      attributions.push_back(shared(false));
  }
  auto launch = gpu::LaunchOp::create(
      b, loc, hostCst(batches * mTiles * nTiles), one, one, hostCst(threads()),
      one, one,
      /*dynamicSharedMemorySize=*/
      dynamicShared() ? arith::ConstantOp::create(
                            b, loc, b.getI32IntegerAttr(sharedBytes()))
                            .getResult()
                      : Value(),
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{}, attributions);
  entry = &launch.getBody().front();
  OpBuilder kb = OpBuilder::atBlockBegin(entry);
  if (dynamicShared()) {
    auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    Value bytes = gpu::DynamicSharedMemoryOp::create(
        kb, loc,
        MemRefType::get({ShapedType::kDynamic}, kb.getI8Type(),
                        MemRefLayoutAttrInterface(), space));
    aShared = bShared = memref::ViewOp::create(kb, loc, shared(true), bytes,
                                               cst(kb, 0), ValueRange{});
  } else {
    aShared = launch.getWorkgroupAttributions()[0];
    bShared = launch.getWorkgroupAttributions()[wg ? 0 : 1];
  }
  Value tid = launch.getThreadIds().x;
  // Block id: n tile fastest, then m tile, then the batch indices.
  Value bid = launch.getBlockIds().x;
  Value m0 = mul(kb, rem(kb, div(kb, bid, nTiles), mTiles), bm);
  mTile0 = m0;
  Value n0 = mul(kb, rem(kb, bid, nTiles), bn);
  DenseMap<unsigned, Value> batchAt;
  if (!c.batch.empty())
    decompose(kb, div(kb, bid, nTiles * mTiles), c.batch, batchAt);

  locateThread(kb, tid);
  // Accumulators.
  SmallVector<Value> init;
  if (wg) {
    // wgmma's accumulators: the struct of the thread's N / 2 f32 (s8
    // products: i32) registers.
    SmallVector<Type> regs(bn / 2, int8 ? Type(kb.getI32Type())
                                        : Type(kb.getF32Type()));
    auto accTy = LLVM::LLVMStructType::getLiteral(ctx, regs);
    init.push_back(LLVM::ZeroOp::create(kb, loc, accTy));
  } else if (kind == TileKind::Simt) {
    Value zero = arith::ConstantOp::create(kb, loc, kb.getF32FloatAttr(0));
    init.assign(32, zero);
  } else {
    // f32 accumulators; i32 for 8-bit products.
    Type accElt = int8 ? Type(kb.getI32Type()) : Type(kb.getF32Type());
    auto accTy = VectorType::get({2, 2}, accElt);
    Value zero = arith::ConstantOp::create(
        kb, loc, DenseElementsAttr::get(accTy, kb.getZeroAttr(accElt)));
    init.assign(miCount() * niCount(), zero);
  }
  int64_t kLoopTiles =
      mutation == Mutation::SkipLastKTile ? kTiles - 1 : kTiles;
  // Tile kt's A and B into buffer `stage`, as one cp.async group when
  // there are several stages (the group's token, else null).
  auto stageStep = [&](OpBuilder &lb, Value kt, Value stage,
                       Value valid) -> Value {
    Value k0 = mul(lb, kt, bk);
    SmallVector<Value> tokens;
    if (sparse)
      stageSparseTile(lb, tid, m0, kt, stage, valid, tokens);
    else
      stageTile(lb, /*isA=*/true, tid, batchAt, m0, k0, stage, valid, tokens);
    stageTile(lb, /*isA=*/false, tid, batchAt, k0, n0, stage, valid, tokens);
    if (tokens.empty())
      return Value();
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        lb, loc, nvgpu::DeviceAsyncTokenType::get(ctx), tokens);
  };
  auto compute = [&](OpBuilder &lb, SmallVectorImpl<Value> &acc, Value stage,
                     Value kt) {
    if (wg)
      acc[0] = wgmmaCompute(lb, acc[0], stage, 0);
    else if (kind == TileKind::Simt)
      simtCompute(lb, acc);
    else if (sparse)
      sparseCompute(lb, acc, stage, kt);
    else
      mmaCompute(lb, acc, stage);
  };
  // wgmma reads shared memory through the async proxy: the tiles this
  // thread wrote (stores or cp.async copies, which it has waited for) are
  // made visible to it before the barrier.
  auto proxyFence = [&](OpBuilder &lb) {
    if (wg)
      NVVM::FenceProxyOp::create(
          lb, loc, NVVM::ProxyKind::async_shared,
          NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
  };
  if (wg && stages >= 3) {
    // wgmma with its products in flight across steps: step kt waits for
    // tile kt's copies, makes them visible to the async proxy and
    // synchronizes; issues tile kt's products and waits until only they
    // are in flight (step kt - 1's are done); synchronizes again (every
    // warpgroup is done with tile kt - 1's buffer) and starts copying tile
    // kt + stages - 1 into it. The tensor cores work on step kt while the
    // threads wait, fence, synchronize and issue step kt + 1.
    Value token;
    Value never = arith::ConstantOp::create(kb, loc, kb.getBoolAttr(false));
    for (int64_t s = 0; s + 1 < stages; ++s)
      token =
          stageStep(kb, cst(kb, s), cst(kb, s), s < kTiles ? Value() : never);
    kLoop = scf::ForOp::create(
        kb, loc, cst(kb, 0), cst(kb, kLoopTiles), cst(kb, 1), init,
        [&](OpBuilder &lb, Location, Value kt, ValueRange args) {
          // (Tiles stored synchronously, a padded input's, have no
          // copies to wait for.)
          if (token)
            nvgpu::DeviceAsyncWaitOp::create(lb, loc, token,
                                             lb.getI32IntegerAttr(stages - 2));
          proxyFence(lb);
          gpu::BarrierOp::create(lb, loc);
          Value acc = wgmmaCompute(lb, args[0], rem(lb, kt, stages), 1);
          gpu::BarrierOp::create(lb, loc);
          Value next = add(lb, kt, stages - 1);
          Value valid = arith::CmpIOp::create(
              lb, loc, arith::CmpIPredicate::ult, next, cst(lb, kTiles));
          stageStep(lb, next, rem(lb, next, stages), valid);
          scf::YieldOp::create(lb, loc, acc);
        });
    // The last products land, and no copy outlives the kernel.
    NVVM::WgmmaWaitGroupSyncOp::create(kb, loc, 0);
    if (token)
      nvgpu::DeviceAsyncWaitOp::create(kb, loc, token, kb.getI32IntegerAttr(0));
  } else if (stages == 1) {
    kLoop = scf::ForOp::create(
        kb, loc, cst(kb, 0), cst(kb, kLoopTiles), cst(kb, 1), init,
        [&](OpBuilder &lb, Location, Value kt, ValueRange args) {
          stageStep(lb, kt, Value(), Value());
          proxyFence(lb);
          gpu::BarrierOp::create(lb, loc);
          SmallVector<Value> acc(args.begin(), args.end());
          compute(lb, acc, Value(), kt);
          gpu::BarrierOp::create(lb, loc);
          scf::YieldOp::create(lb, loc, acc);
        });
  } else {
    // A pipeline of `stages` buffers: the first stages - 1 tiles are
    // copied before the loop; step kt starts copying tile kt + stages - 1
    // into the buffer step kt - 1 read, multiplies tile kt, then waits
    // until at most stages - 2 copy groups are in flight (tile kt + 1 has
    // landed) and synchronizes, which also ends every thread's reads of
    // tile kt. Copies past the last tile fill unread buffers with zeros,
    // so that every step commits one group.
    auto wait = [&](OpBuilder &lb, Value token, int64_t pending) {
      if (token)
        nvgpu::DeviceAsyncWaitOp::create(lb, loc, token,
                                         lb.getI32IntegerAttr(pending));
    };
    Value token;
    Value never = arith::ConstantOp::create(kb, loc, kb.getBoolAttr(false));
    for (int64_t s = 0; s + 1 < stages; ++s)
      token =
          stageStep(kb, cst(kb, s), cst(kb, s), s < kTiles ? Value() : never);
    wait(kb, token, stages - 2);
    proxyFence(kb);
    gpu::BarrierOp::create(kb, loc);
    kLoop = scf::ForOp::create(
        kb, loc, cst(kb, 0), cst(kb, kLoopTiles), cst(kb, 1), init,
        [&](OpBuilder &lb, Location, Value kt, ValueRange args) {
          Value next = add(lb, kt, stages - 1);
          Value valid = arith::CmpIOp::create(
              lb, loc, arith::CmpIPredicate::ult, next, cst(lb, kTiles));
          Value step = stageStep(lb, next, rem(lb, next, stages), valid);
          SmallVector<Value> acc(args.begin(), args.end());
          compute(lb, acc, rem(lb, kt, stages), kt);
          wait(lb, step, stages - 2);
          proxyFence(lb);
          gpu::BarrierOp::create(lb, loc);
          scf::YieldOp::create(lb, loc, acc);
        });
    // No copy outlives the kernel.
    wait(kb, token, 0);
  }

  // Epilogue: out[row, col] += accumulator, inside the output only. Each
  // of the thread's rows and columns is split into loop indices once.
  struct Line {
    Value inside; // null: always inside
    DenseMap<unsigned, Value> at;
  };
  auto line = [&](Value base, Value local, ArrayRef<unsigned> dims,
                  int64_t tile) {
    Line l;
    Value global = add(kb, base, local);
    l.inside = guard(kb, global, c.extent(dims), tile);
    decompose(kb, global, dims, l.at);
    return l;
  };
  Value out = c.op.getDpsInits()[0];
  SmallVector<Line> rows, cols;
  // The thread's accumulators: the rows and columns (lines) they lie on.
  struct Element {
    unsigned row, col;
    Value v;
  };
  SmallVector<Element> elements;
  // What an element's store needs from memory, loaded before the stores
  // of its group (below).
  struct Prepared {
    Value inside;
    SmallVector<Value> idx, dims; // the output's, the consumer's loop dims
    Value old;                    // the initial value
    SmallVector<Value> ins;       // the consumer's other inputs
  };
  // A value that only a row's or only a column's indices pick (a
  // per-channel bias or scale, a scalar) is loaded once for the epilogue,
  // guarded by that line alone.
  std::map<std::vector<const void *>, Value> loaded;
  auto load = [&](const Line &row, const Line &col, Value inside, Value buffer,
                  ArrayRef<Value> at) -> Value {
    auto on = [](const Line &l, Value v) {
      return llvm::any_of(l.at, [&](auto &kv) { return kv.second == v; });
    };
    bool byRow = false, byCol = false, other = false;
    for (Value v : at) {
      if (on(row, v))
        byRow = true;
      else if (on(col, v))
        byCol = true;
      else if (!matchPattern(v, m_Constant()) &&
               !llvm::any_of(batchAt, [&](auto &kv) { return kv.second == v; }))
        other = true;
    }
    std::vector<const void *> key;
    bool once = !other && !(byRow && byCol);
    if (once) {
      key.push_back(buffer.getAsOpaquePointer());
      for (Value v : at)
        key.push_back(v.getAsOpaquePointer());
      if (Value v = loaded[key])
        return v;
    }
    Value guardBy = !once   ? inside
                    : byRow ? row.inside
                    : byCol ? col.inside
                            : Value();
    Value v = loadOrZero(kb, guardBy,
                         cast<MemRefType>(buffer.getType()).getElementType(),
                         [&](OpBuilder &lb) -> Value {
                           return memref::LoadOp::create(lb, loc, buffer, at);
                         });
    if (once)
      loaded[key] = v;
    return v;
  };
  // An element's output indices, and where it lies inside the output.
  auto locate = [&](const Element &e) {
    const Line &row = rows[e.row], &col = cols[e.col];
    Prepared p;
    p.inside = conjoin(kb, row.inside, col.inside);
    DenseMap<unsigned, Value> at = batchAt;
    at.insert(row.at.begin(), row.at.end());
    at.insert(col.at.begin(), col.at.end());
    p.idx = indices(kb, 2, at);
    return p;
  };
  // Generic `g`'s inputs at loop dims `p.dims` into `p.ins`, but for
  // reads of the output in `skip` (null).
  auto loadInputs = [&](const Element &e, linalg::GenericOp g, Prepared &p,
                        Value skip) {
    for (OpOperand *in : g.getDpsInputOperands()) {
      if (in->get() == skip) {
        p.ins.push_back(Value());
        continue;
      }
      SmallVector<Value> where;
      for (AffineExpr x : g.getMatchingIndexingMap(in).getResults())
        where.push_back(affine::expandAffineExpr(kb, loc, x, p.dims, {}));
      p.ins.push_back(
          load(rows[e.row], cols[e.col], p.inside, in->get(), where));
    }
  };
  // Generic `g`'s body on `p.ins` (`value` for the skipped reads), stored
  // into its output at `p.dims`; inside the output only.
  auto storeBody = [&](linalg::GenericOp g, const Prepared &p, Value value) {
    IRMapping m;
    Block *body = g.getBody();
    for (auto [in, loadedIn] : llvm::zip(g.getDpsInputOperands(), p.ins))
      m.map(body->getArgument(in->getOperandNumber()),
            loadedIn ? loadedIn : value);
    for (Operation &o : body->without_terminator()) {
      // A loop index (a causal mask's) is the element's loop value.
      if (auto index = dyn_cast<linalg::IndexOp>(o)) {
        m.map(index.getResult(), p.dims[index.getDim()]);
        continue;
      }
      kb.clone(o, m);
    }
    Value r = m.lookupOrDefault(body->getTerminator()->getOperand(0));
    SmallVector<Value> where;
    for (AffineExpr x : g.getIndexingMapsArray().back().getResults())
      where.push_back(affine::expandAffineExpr(kb, loc, x, p.dims, {}));
    memref::StoreOp::create(kb, loc, r, g.getDpsInits()[0], where);
  };
  auto prepare = [&](const Element &e) {
    const Line &row = rows[e.row], &col = cols[e.col];
    Prepared p = locate(e);
    if (c.init && c.init->scalar) {
      p.old = c.init->scalar;
    } else if (c.init) {
      SmallVector<Value> from;
      for (AffineExpr x : c.init->map.getResults())
        from.push_back(p.idx[cast<AffineDimExpr>(x).getPosition()]);
      p.old = load(row, col, p.inside, c.init->source, from);
    } else {
      p.old = load(row, col, p.inside, out, p.idx);
    }
    if (!c.consumer)
      return p;
    // The consumer reads the output through a permutation, which gives
    // its loop dims from the output's indices.
    linalg::GenericOp g = c.consumer;
    p.dims.resize(p.idx.size());
    for (OpOperand *in : g.getDpsInputOperands())
      if (in->get() == out)
        for (auto [r, x] :
             llvm::enumerate(g.getMatchingIndexingMap(in).getResults()))
          p.dims[cast<AffineDimExpr>(x).getPosition()] = p.idx[r];
    loadInputs(e, g, p, out);
    return p;
  };
  auto accumulate = [&](const Element &e, const Prepared &p) {
    OpBuilder::InsertionGuard insertion(kb);
    if (p.inside) {
      auto ifOp = scf::IfOp::create(kb, loc, p.inside, false);
      kb.setInsertionPointToStart(ifOp.thenBlock());
    }
    Value old = p.old, v = e.v;
    Value sum;
    if (int8) {
      sum = arith::AddIOp::create(kb, loc, old, v);
    } else if (c.outType.isF32()) {
      sum = arith::AddFOp::create(kb, loc, old, v);
    } else {
      Value wide = arith::ExtFOp::create(kb, loc, kb.getF32Type(), old);
      sum = arith::TruncFOp::create(kb, loc, c.outType,
                                    arith::AddFOp::create(kb, loc, wide, v));
    }
    if (!c.consumer) {
      memref::StoreOp::create(kb, loc, sum, out, p.idx);
      return;
    }
    // The consumer's body on this element.
    storeBody(c.consumer, p, sum);
  };
  if (wg) {
    // Register 4i + 2r + e of the struct: row g + 8r, column 8i + 2t + e.
    for (int64_t r = 0; r < 2; ++r)
      rows.push_back(line(m0, add(kb, aRow, 8 * r), c.m, bm));
    for (int64_t j = 0; j < bn / 4; ++j)
      cols.push_back(line(n0, add(kb, cCol, 8 * (j / 2) + j % 2), c.n, bn));
    Value acc = kLoop.getResult(0);
    for (int64_t j = 0; j < bn / 2; ++j) {
      Value v = LLVM::ExtractValueOp::create(kb, loc, acc, j);
      elements.push_back(
          {unsigned((j % 4) / 2), unsigned(2 * (j / 4) + j % 2), v});
    }
  } else if (kind == TileKind::Simt) {
    for (int64_t i = 0; i < 8; ++i)
      rows.push_back(line(m0, add(kb, tRow, 8 * i), c.m, bm));
    for (int64_t j = 0; j < 4; ++j)
      cols.push_back(line(n0, add(kb, tCol, 16 * j), c.n, bn));
    for (int64_t i = 0; i < 8; ++i)
      for (int64_t j = 0; j < 4; ++j)
        elements.push_back(
            {unsigned(i), unsigned(j), kLoop.getResult(i * 4 + j)});
  } else {
    // Element [r][e] of mma tile (mi, ni): row g + 16 mi + 8 r, column
    // 2t + 8 ni + e.
    for (int64_t i = 0; i < 2 * miCount(); ++i)
      rows.push_back(line(m0, add(kb, aRow, 8 * i), c.m, bm));
    for (int64_t j = 0; j < 2 * niCount(); ++j)
      cols.push_back(line(n0, add(kb, cCol, 8 * (j / 2) + j % 2), c.n, bn));
    for (int64_t mi = 0; mi < miCount(); ++mi)
      for (int64_t ni = 0; ni < niCount(); ++ni) {
        Value acc = kLoop.getResult(mi * niCount() + ni);
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t e = 0; e < 2; ++e) {
            Value v = vector::ExtractOp::create(kb, loc, acc,
                                                ArrayRef<int64_t>{r, e});
            elements.push_back({unsigned(2 * mi + r), unsigned(2 * ni + e), v});
          }
      }
  }
  // A group of elements at a time: every load first, then the stores, so
  // that the loads' latencies overlap (an element's loads, as a residual,
  // would otherwise wait for the stores before them, which may alias).
  constexpr size_t group = 16;
  auto inGroups =
      [&](size_t size, function_ref<Prepared(const Element &)> load,
          function_ref<void(const Element &, const Prepared &)> store) {
        for (size_t first = 0; first < elements.size(); first += size) {
          ArrayRef<Element> some = ArrayRef(elements).slice(
              first, std::min(size, elements.size() - first));
          SmallVector<Prepared> prepared;
          for (const Element &e : some)
            prepared.push_back(load(e));
          for (auto [e, p] : llvm::zip(some, prepared))
            store(e, p);
        }
      };
  inGroups(group, prepare, accumulate);
  if (c.splitSum) {
    // The partial tile is stored; the tile's counter counts the splits'
    // blocks that are done, and the last of them sums the partials. Every
    // thread's stores are made visible to the GPU before one thread
    // counts; the last block sees the other blocks' partials after its
    // own fence.
    int64_t s = c.sizes[c.splitDim];
    NVVM::MembarOp::create(kb, loc, NVVM::MemScopeKind::GPU);
    gpu::BarrierOp::create(kb, loc);
    Value other = cst(kb, 0);
    for (unsigned d : c.batch)
      if (d != c.splitDim)
        other = add(kb, mul(kb, other, size(d)), batchAt.lookup(d));
    Value tile = add(
        kb, mul(kb, add(kb, mul(kb, other, mTiles), div(kb, m0, bm)), nTiles),
        div(kb, n0, bn));
    auto i32 = [&](OpBuilder &ob, int64_t v) -> Value {
      return arith::ConstantOp::create(ob, loc, ob.getI32IntegerAttr(v));
    };
    // The block's verdict goes through the first element of A's shared
    // tile, unused once the products are done.
    SmallVector<Value> flagAt(cast<MemRefType>(aShared.getType()).getRank(),
                              cst(kb, 0));
    auto flagValue = [&](OpBuilder &ob, int64_t v) -> Value {
      Type t = c.inType;
      return arith::ConstantOp::create(
          ob, loc,
          isa<FloatType>(t) ? TypedAttr(ob.getFloatAttr(t, double(v)))
                            : TypedAttr(ob.getIntegerAttr(t, v)));
    };
    Value counts = arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::eq, tid,
                                         cst(kb, 0));
    auto counting = scf::IfOp::create(kb, loc, counts, false);
    {
      OpBuilder tb = counting.getThenBodyBuilder();
      Value done = memref::AtomicRMWOp::create(
          tb, loc, arith::AtomicRMWKind::addi, i32(tb, 1), counters, tile);
      Value last = arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::eq,
                                         done, i32(tb, s - 1));
      Value sums =
          mutation == Mutation::EarlySplitSum
              ? arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::eq, done,
                                      i32(tb, 0))
                    .getResult()
              : last;
      Value flag = arith::SelectOp::create(tb, loc, sums, flagValue(tb, 1),
                                           flagValue(tb, 0));
      memref::StoreOp::create(tb, loc, flag, aShared, flagAt);
      // Zero again for the next kernel that splits.
      if (mutation != Mutation::KeepSplitCounters) {
        auto reset = scf::IfOp::create(tb, loc, last, false);
        OpBuilder rb = reset.getThenBodyBuilder();
        memref::StoreOp::create(rb, loc, i32(rb, 0), counters, tile);
      }
    }
    gpu::BarrierOp::create(kb, loc);
    Value flag = memref::LoadOp::create(kb, loc, aShared, flagAt);
    Value isLast =
        isa<FloatType>(c.inType)
            ? arith::CmpFOp::create(kb, loc, arith::CmpFPredicate::UNE, flag,
                                    flagValue(kb, 0))
                  .getResult()
            : arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ne, flag,
                                    flagValue(kb, 0))
                  .getResult();
    auto summing = scf::IfOp::create(kb, loc, isLast, false);
    OpBuilder::InsertionGuard insertion(kb);
    kb.setInsertionPoint(summing.thenBlock()->getTerminator());
    NVVM::MembarOp::create(kb, loc, NVVM::MemScopeKind::GPU);
    // The sum reads the partials coalesced: consecutive threads take
    // consecutive columns of a row. (In the accumulators' layout a warp's
    // load touches 8 rows, a quarter of each sector it fetches; on an H200
    // the last blocks then took longer than a sum kernel of its own.)
    int64_t t = threads(), across = std::min(bn, t);
    if (bn % across == 0 && t % across == 0 && bm % (t / across) == 0) {
      int64_t down = t / across;
      Value rowLocal = div(kb, tid, across), colLocal = rem(kb, tid, across);
      rows.clear();
      cols.clear();
      elements.clear();
      for (int64_t i = 0; i < bm / down; ++i)
        rows.push_back(line(m0, add(kb, rowLocal, down * i), c.m, bm));
      for (int64_t j = 0; j < bn / across; ++j)
        cols.push_back(line(n0, add(kb, colLocal, across * j), c.n, bn));
      for (int64_t i = 0; i < bm / down; ++i)
        for (int64_t j = 0; j < bn / across; ++j)
          elements.push_back({unsigned(i), unsigned(j), Value()});
    }
    // Each of the thread's elements: the sum's body on its S partials
    // (loaded, in split order, as the sum kernel would read them) and its
    // other inputs, stored into the sum's output.
    linalg::GenericOp g = c.splitSum;
    auto prepareSum = [&](const Element &e) {
      Prepared p = locate(e);
      p.dims.resize(g.getNumLoops());
      for (OpOperand *in : g.getDpsInputOperands())
        if (in->get() == out) {
          for (auto [r, x] : llvm::enumerate(
                   g.getMatchingIndexingMap(in).getResults().drop_front()))
            p.dims[cast<AffineDimExpr>(x).getPosition()] = p.idx[r + 1];
          break;
        }
      loadInputs(e, g, p, Value());
      return p;
    };
    auto storeSum = [&](const Element &, const Prepared &p) {
      OpBuilder::InsertionGuard inside(kb);
      if (p.inside) {
        auto ifOp = scf::IfOp::create(kb, loc, p.inside, false);
        kb.setInsertionPointToStart(ifOp.thenBlock());
      }
      storeBody(g, p, Value());
    };
    // Groups of about `splitSumLoads` loads of partials, every load of a
    // group before its stores.
    inGroups(std::max<int64_t>(1, splitSumLoads / s), prepareSum, storeSum);
  }
  gpu::TerminatorOp::create(kb, loc);
  return launch;
}

struct GpuContractionsPass
    : public kiln::impl::KilnGpuContractionsBase<GpuContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    std::string error;
    FailureOr<TileShape> halfShape = parseTileShape(halfTile, error);
    if (failed(halfShape)) {
      fn.emitError("kiln-gpu-contractions: half-tile '")
          << halfTile << "': " << error;
      return signalPassFailure();
    }
    FailureOr<TileShape> wideShape = parseTileShape(wideTile, error);
    if (failed(wideShape)) {
      fn.emitError("kiln-gpu-contractions: wide-tile '")
          << wideTile << "': " << error;
      return signalPassFailure();
    }
    SmallVector<TileShape> wgmmaShapes;
    SmallVector<StringRef> wgmmaSpecs;
    StringRef(wgmmaTile).split(wgmmaSpecs, ',');
    for (StringRef spec : wgmmaSpecs) {
      FailureOr<TileShape> shape = parseWgmmaTile(spec, error);
      if (failed(shape)) {
        fn.emitError("kiln-gpu-contractions: wgmma-tile '")
            << spec << "': " << error;
        return signalPassFailure();
      }
      wgmmaShapes.push_back(*shape);
    }
    Mutation mutation = Mutation::None;
    if (testMutation == "swap-b-fragment")
      mutation = Mutation::SwapBFragment;
    else if (testMutation == "skip-last-k-tile")
      mutation = Mutation::SkipLastKTile;
    else if (testMutation == "swap-sparse-meta")
      mutation = Mutation::SwapSparseMeta;
    else if (testMutation == "swap-wgmma-strides")
      mutation = Mutation::SwapWgmmaStrides;
    else if (testMutation == "early-split-sum")
      mutation = Mutation::EarlySplitSum;
    else if (testMutation == "keep-split-counters")
      mutation = Mutation::KeepSplitCounters;
    else if (!testMutation.empty()) {
      fn.emitError("kiln-gpu-contractions: unknown test-mutation '")
          << testMutation << "'";
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> candidates;
    for (Operation &op : fn.getBody().front())
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
        candidates.push_back(linalgOp);
    // Every contraction is matched (padded inputs included) before any
    // becomes a launch, whose writes the padding check cannot see.
    std::vector<Contraction> contractions;
    llvm::DenseSet<Operation *> claimed; // ops folded into a tile
    for (linalg::LinalgOp op : candidates) {
      Contraction c;
      if (failed(matchContraction(op, c)))
        continue;
      std::string why;
      if (!useSparseWeight(c, why) && !why.empty())
        op->emitWarning("kiln-gpu-contractions: the 2:4 weight of node '")
            << kiln::onnxNodeName(op.getLoc()) << "' is read dense: " << why;
      // Narrow products are better served by a thread (or block) per
      // output than by 64x64 tiles that are mostly empty (a 2:4 weight is
      // only read compressed by the tiles).
      if (!c.sparse && (c.extent(c.m) < minSize || c.extent(c.n) < minSize))
        continue;
      // float8 products need the fp8 tensor cores (`fp8`); else they stay
      // loops.
      if (c.fp8 && !fp8)
        continue;
      if (foldPadding)
        for (unsigned i = 0; i < 2; ++i)
          c.padded[i] = matchPaddedInput(op, i);
      if (foldInit)
        c.init = matchInit(c);
      if (c.init)
        claimed.insert(c.init->op);
      contractions.push_back(std::move(c));
    }
    auto counters = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        fn, StringAttr::get(&getContext(), kiln::kSplitKCounters));
    if (fuseEpilogue)
      for (Contraction &c : contractions) {
        if ((c.consumer = matchConsumer(c, claimed)))
          claimed.insert(c.consumer);
        else if (counters && (c.splitSum = matchSplitSum(c, claimed))) {
          c.counters = counters;
          claimed.insert(c.splitSum);
        }
      }
    for (Contraction &c : contractions) {
      linalg::LinalgOp op = c.op;
      TileKind kind = c.fp8                      ? TileKind::Fp8
                      : c.inType.isF16()         ? TileKind::Half
                      : c.inType.isBF16()        ? TileKind::BFloat
                      : c.inType.isInteger(8)    ? TileKind::Int8
                      : c.inType.isF32() && tf32 ? TileKind::Tf32
                                                 : TileKind::Simt;
      // A 2:4 weight is read compressed: its kept values and metadata
      // instead of its dense bytes.
      auto globalBytes = [&](StringRef attr) -> int64_t {
        auto sym = c.sparse->getAttrOfType<FlatSymbolRefAttr>(attr);
        auto g = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            op, sym.getAttr());
        MemRefType t = g.getType();
        return t.getNumElements() * t.getElementTypeBitWidth() / 8;
      };
      TileBuilder builder(c, kind, mutation, vectorBytes, stages, *halfShape,
                          *wideShape, wideMinBlocks, wgmma, wgmmaShapes,
                          wgmmaStages);
      if (builder.isSparse() && !builder.sparseFits()) {
        op->emitWarning("kiln-gpu-contractions: the 2:4 weight of node '")
            << kiln::onnxNodeName(op.getLoc()) << "' is read dense: the tile "
            << builder.tileName()
            << " does not give each thread whole 16-byte groups of kept "
               "values and of the other operand";
        c.sparse = nullptr;
        builder = TileBuilder(c, kind, mutation, vectorBytes, stages,
                              *halfShape, *wideShape, wideMinBlocks, wgmma,
                              wgmmaShapes, wgmmaStages);
      }
      builder.setSplitSumLoads(splitSumLoads);
      // A split whose tiles outnumber the counters keeps its sum kernel
      // (the tile does not depend on it).
      if (c.splitSum &&
          builder.splitTiles() > c.counters.getType().getNumElements()) {
        c.splitSum = nullptr;
        builder.dropSplitSum();
      }
      SmallVector<Operation *> computed = {op.getOperation()};
      if (c.consumer)
        computed.push_back(c.consumer);
      if (c.splitSum)
        computed.push_back(c.splitSum);
      kiln::ComputeCost cost = kiln::estimateCost(computed);
      if (c.sparse)
        cost.bytes += globalBytes("kiln.sparse_values") +
                      globalBytes("kiln.sparse_meta") -
                      c.extent(c.m) * c.extent(c.k) *
                          c.inType.getIntOrFloatBitWidth() / 8;
      // With a consumer or a split's sum, the kernel takes its place (the
      // buffers it reads are defined by then; only views and constants lie
      // between).
      Operation *last = c.consumer   ? c.consumer.getOperation()
                        : c.splitSum ? c.splitSum.getOperation()
                                     : op.getOperation();
      OpBuilder b(last);
      if (builder.sharedBytes() > builder.maxSharedBytes()) {
        op->emitError("kiln-gpu-contractions: the tile ")
            << builder.tileName() << " needs " << builder.sharedBytes()
            << " bytes of shared memory even with one stage; at most "
            << builder.maxSharedBytes() / 1024
            << " KiB (choose a smaller --gpu-half-tile or --gpu-wide-tile)";
        return signalPassFailure();
      }
      gpu::LaunchOp launch = builder.build(b);
      // 8-bit tiles are not unrolled: unrolled, ResNet-50's 128x128 int8
      // tiles with a requantization epilogue spilled (255 registers, 80
      // and 112 bytes; 218 and none without).
      if (!unrollKLoop || kind == TileKind::Int8 || kind == TileKind::Fp8)
        builder.loopOverK()->setAttr(
            "llvm.loop_annotation",
            LLVM::LoopAnnotationAttr::get(
                &getContext(), {}, {}, {},
                LLVM::LoopUnrollAttr::get(&getContext(),
                                          BoolAttr::get(&getContext(), true),
                                          {}, {}, {}, {}, {}, {}),
                {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}));
      launch->setAttr(
          "kiln.cost",
          DenseI64ArrayAttr::get(&getContext(), {cost.flops, cost.bytes}));
      op->erase();
      for (const std::optional<PaddedInput> &p : c.padded)
        if (p)
          for (Operation *o : p->ops)
            o->erase();
      if (c.init)
        c.init->op->erase();
      if (c.consumer)
        c.consumer->erase();
      if (c.splitSum)
        c.splitSum->erase();
    }
  }
};
} // namespace

bool kiln::isGpuTiledContraction(linalg::LinalgOp op) {
  Contraction c;
  return succeeded(matchContraction(op, c, /*onTensors=*/true));
}

std::optional<kiln::GpuContractionDims>
kiln::matchGpuTiledContraction(linalg::LinalgOp op) {
  Contraction c;
  if (failed(matchContraction(op, c, /*onTensors=*/true)))
    return std::nullopt;
  GpuContractionDims dims;
  dims.batch = c.batch;
  dims.m = c.m;
  dims.n = c.n;
  dims.k = c.k;
  dims.sizes = c.sizes;
  return dims;
}
