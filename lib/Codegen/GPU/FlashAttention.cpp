//===- FlashAttention.cpp - one kernel per attention ----------------------===//
//
// The Attention lowering writes softmax(Q K^T * scale + mask) V as a chain
// of bufferized linalg ops: a contraction into the scores S, elementwise
// ops in place on S (scale, softcap, masks), the softmax (a row maximum, an
// exp of the difference in place, a row sum, a division rounded to the
// half type into the probabilities P) and a contraction of P with V into
// O, maybe followed by an elementwise op on O (the rounding of the output).
// Unfused, S makes a round trip through memory between five kernels.
//
// This pass replaces such a chain, with f16 or bf16 Q, K and V, by one
// `gpu.launch` (flash attention, FlashAttention-2's order of work): a
// block of 4 warps owns 64 rows of queries of one batch index, each warp
// 16 of them, whose Q fragments it keeps in registers; the block walks the
// keys 64 at a time, staging K and V (V transposed) in shared memory, and
// each warp
//  * computes its 16x64 scores with `mma.sync` m16n8k16 (f32 accumulators),
//  * applies the elementwise ops' bodies to each score (their other
//    inputs, such as the mask, read at the score's indices; keys past the
//    end are -inf),
//  * keeps a running maximum m and sum l per row (a row's values lie in
//    the 4 threads of a quad: shuffles combine them), rescales its output
//    accumulators by exp(m_old - m_new), and
//  * multiplies the probabilities exp(s - m), rounded to the half type, by
//    V: the score accumulators of two 8-key tiles are the A fragment of
//    one m16n8k16 step, so P never leaves registers.
// At the end each row is divided by its sum and stored (through the
// elementwise op after the chain, when there is one). A row whose scores
// are all -inf gives 0/0 = NaN, as the unfused softmax does.
//
// The probabilities are rounded before normalization, not after: the
// products differ from the unfused chain's by the rounding of P (about
// 2^-11 relative in f16).
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/CostModel.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <limits>

namespace kiln {
#define GEN_PASS_DEF_KILNGPUFLASHATTENTION
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using kiln::AttentionChain;

namespace {

constexpr int64_t kRowsPerBlock = 64, kKeysPerTile = 64, kThreads = 128;

/// The op after `op` that touches memory (views, constants and
/// allocations skipped), or null.
Operation *nextMemoryOp(Operation *op) {
  Operation *next = op->getNextNode();
  while (next && (isMemoryEffectFree(next) || isa<memref::AllocOp>(next)))
    next = next->getNextNode();
  return next;
}
Operation *previousMemoryOp(Operation *op) {
  Operation *prev = op->getPrevNode();
  while (prev && (isMemoryEffectFree(prev) || isa<memref::AllocOp>(prev)))
    prev = prev->getPrevNode();
  return prev;
}

/// The map (d0, ..., d{n-1}) -> (d0, ..., d{r-1}) for r <= n.
AffineMap leading(MLIRContext *ctx, unsigned n, unsigned r) {
  return AffineMap::getMinorIdentityMap(n, n, ctx).getSubMap(
      llvm::to_vector(llvm::seq<unsigned>(0, r)));
}

bool allParallel(linalg::GenericOp g) {
  return llvm::all_of(g.getIteratorTypesArray(), [](utils::IteratorType it) {
    return it == utils::IteratorType::parallel;
  });
}
/// Parallel loops then one reduction loop, `n` loops in all.
bool parallelThenReduction(linalg::GenericOp g, unsigned n) {
  auto its = g.getIteratorTypesArray();
  if (its.size() != n)
    return false;
  for (unsigned i = 0; i + 1 < n; ++i)
    if (its[i] != utils::IteratorType::parallel)
      return false;
  return its[n - 1] == utils::IteratorType::reduction;
}

Operation *yielded(linalg::GenericOp g) {
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  if (yield.getNumOperands() != 1)
    return nullptr;
  return yield.getOperand(0).getDefiningOp();
}
bool isArg(Value v, linalg::GenericOp g, unsigned i) {
  return v == g.getBody()->getArgument(i);
}

/// out + ext(a) * ext(b), a and b of one half type, out f32.
bool isHalfProduct(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 2 || g.getNumDpsInits() != 1)
    return false;
  auto add = dyn_cast_or_null<arith::AddFOp>(yielded(g));
  if (!add)
    return false;
  Value other;
  if (isArg(add.getLhs(), g, 2))
    other = add.getRhs();
  else if (isArg(add.getRhs(), g, 2))
    other = add.getLhs();
  else
    return false;
  auto mul = other.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  auto x = mul.getLhs().getDefiningOp<arith::ExtFOp>();
  auto y = mul.getRhs().getDefiningOp<arith::ExtFOp>();
  if (!x || !y)
    return false;
  bool direct = isArg(x.getIn(), g, 0) && isArg(y.getIn(), g, 1);
  bool swapped = isArg(x.getIn(), g, 1) && isArg(y.getIn(), g, 0);
  if (!direct && !swapped)
    return false;
  Type a = g.getBody()->getArgument(0).getType();
  Type b = g.getBody()->getArgument(1).getType();
  return a == b && (a.isF16() || a.isBF16()) &&
         g.getBody()->getArgument(2).getType().isF32();
}

/// yield(op(in, out)) for a reduction's combiner.
template <typename... Ops> bool isCombiner(linalg::GenericOp g) {
  Operation *op = yielded(g);
  if (!op || !isa<Ops...>(op) || g.getNumDpsInputs() != 1)
    return false;
  return (isArg(op->getOperand(0), g, 0) && isArg(op->getOperand(1), g, 1)) ||
         (isArg(op->getOperand(0), g, 1) && isArg(op->getOperand(1), g, 0));
}

bool isFillOf(Operation *op, Value buffer, function_ref<bool(APFloat)> ok) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  if (!fill || fill.getDpsInits()[0] != buffer)
    return false;
  APFloat v(0.0f);
  return matchPattern(fill.getInputs()[0], m_ConstantFloat(&v)) && ok(v);
}
bool isZero(APFloat v) { return v.isZero() && !v.isNegative(); }
bool isMaxIdentity(APFloat v) {
  return v.isNaN() || (v.isInfinity() && v.isNegative());
}

/// A buffer whose contents only the chain reads: made in the function (a
/// view of the arena or an allocation), used by the chain, by ops before
/// it (CSE shares a view among the tensors that reuse its bytes), and
/// after it only once some op has overwritten it whole without reading
/// it (deallocations aside).
bool privateTo(Value buffer, const llvm::DenseSet<Operation *> &chain,
               Operation *first, Operation *last) {
  if (!buffer.getDefiningOp<memref::ViewOp>() &&
      !buffer.getDefiningOp<memref::AllocOp>())
    return false;
  Block *block = first->getBlock();
  Operation *nextUser = nullptr;
  for (Operation *use : buffer.getUsers()) {
    Operation *user = block->findAncestorOpInBlock(*use);
    if (!user)
      return false;
    if (chain.contains(user) || isa<memref::DeallocOp>(user) ||
        user->isBeforeInBlock(first))
      continue;
    if (!last->isBeforeInBlock(user))
      return false; // inside the chain's span, not one of its ops
    if (!nextUser || user->isBeforeInBlock(nextUser))
      nextUser = user;
  }
  if (!nextUser)
    return true;
  auto overwrite = dyn_cast<linalg::LinalgOp>(nextUser);
  if (!overwrite || llvm::is_contained(overwrite.getDpsInputs(), buffer) ||
      !llvm::is_contained(overwrite.getDpsInits(), buffer) ||
      llvm::any_of(buffer.getUsers(),
                   [&](Operation *u) { return nextUser->isProperAncestor(u); }))
    return false;
  for (OpOperand &init : overwrite.getDpsInitsMutable())
    if (init.get() == buffer && overwrite.payloadUsesValueFromOperand(&init))
      return false;
  return true;
}

bool pureBody(linalg::GenericOp g) {
  return llvm::all_of(g.getBody()->without_terminator(), [](Operation &op) {
    return isMemoryEffectFree(&op) && op.getNumRegions() == 0;
  });
}

} // namespace

SmallVector<Operation *> AttentionChain::ops() const {
  SmallVector<Operation *> all = {scoreFill, scores};
  llvm::append_range(all, scoreOps);
  llvm::append_range(all, fills);
  all.append({rowMax, exps, rowSum, normalize, context});
  if (consumer)
    all.push_back(consumer);
  return all;
}

std::optional<AttentionChain>
kiln::matchAttentionChain(linalg::GenericOp scores) {
  MLIRContext *ctx = scores.getContext();
  AttentionChain c;
  c.scores = scores;
  if (!isHalfProduct(scores) || !scores.hasPureBufferSemantics())
    return std::nullopt;
  unsigned loops = scores.getNumLoops();
  if (loops < 3 || !parallelThenReduction(scores, loops))
    return std::nullopt;
  unsigned rank = loops - 1; // of S
  unsigned mDim = rank - 2, nDim = rank - 1, kDim = rank;
  Value s = scores.getDpsInits()[0];
  auto sType = dyn_cast<MemRefType>(s.getType());
  if (!sType || !sType.hasStaticShape() ||
      scores.getIndexingMapsArray()[2] != leading(ctx, loops, rank))
    return std::nullopt;
  // Q reads m and not n, K n and not m; both read k.
  AffineMap m0 = scores.getIndexingMapsArray()[0];
  AffineMap m1 = scores.getIndexingMapsArray()[1];
  auto usesDim = [](AffineMap map, unsigned d) {
    return map.isFunctionOfDim(d);
  };
  unsigned q = usesDim(m0, mDim) ? 0 : 1;
  AffineMap qMap = q == 0 ? m0 : m1, kMap = q == 0 ? m1 : m0;
  if (!usesDim(qMap, mDim) || usesDim(qMap, nDim) || !usesDim(kMap, nDim) ||
      usesDim(kMap, mDim) || !usesDim(qMap, kDim) || !usesDim(kMap, kDim))
    return std::nullopt;
  c.q = scores.getDpsInputs()[q];
  c.k = scores.getDpsInputs()[1 - q];
  c.qMap = qMap;
  c.kMap = kMap;
  c.scoreFill = previousMemoryOp(scores);
  if (!isFillOf(c.scoreFill, s, isZero))
    return std::nullopt;

  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap rowMap = leading(ctx, rank, rank - 1);
  Operation *op = nextMemoryOp(scores);
  // Elementwise ops in place on S.
  while (auto g = dyn_cast_or_null<linalg::GenericOp>(op)) {
    if (!allParallel(g) || g.getNumLoops() != rank || g.getNumDpsInits() != 1 ||
        g.getDpsInits()[0] != s ||
        g.getIndexingMapsArray().back() != identity || !pureBody(g) ||
        !g.hasPureBufferSemantics())
      break;
    bool readsS = false;
    for (OpOperand *in : g.getDpsInputOperands()) {
      if (in->get() == s) {
        if (g.getMatchingIndexingMap(in) != identity)
          return std::nullopt;
        readsS = true;
      }
    }
    if (!readsS)
      break;
    c.scoreOps.push_back(g);
    op = nextMemoryOp(g);
  }
  // The softmax, fills of its row buffers and of O among its ops.
  auto takeFills = [&]() {
    while (auto fill = dyn_cast_or_null<linalg::FillOp>(op)) {
      c.fills.push_back(fill);
      op = nextMemoryOp(fill);
    }
  };
  takeFills();
  auto rowMax = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!rowMax || !parallelThenReduction(rowMax, rank) ||
      !isCombiner<arith::MaxNumFOp, arith::MaximumFOp>(rowMax) ||
      rowMax.getDpsInputs()[0] != s ||
      rowMax.getIndexingMapsArray() != SmallVector<AffineMap>{identity, rowMap})
    return std::nullopt;
  c.rowMax = rowMax;
  Value rMax = rowMax.getDpsInits()[0];
  op = nextMemoryOp(rowMax);
  // An elementwise op of S and a row buffer, each score with its row's
  // value.
  auto rowwise = [&](Operation *o, Value row) -> linalg::GenericOp {
    auto g = dyn_cast_or_null<linalg::GenericOp>(o);
    if (!g || !allParallel(g) || g.getNumLoops() != rank ||
        g.getNumDpsInputs() != 2 || g.getDpsInputs()[0] != s ||
        g.getDpsInputs()[1] != row ||
        g.getIndexingMapsArray() !=
            SmallVector<AffineMap>{identity, rowMap, identity})
      return {};
    return g;
  };
  linalg::GenericOp exps = rowwise(op, rMax);
  if (!exps || exps.getDpsInits()[0] != s)
    return std::nullopt;
  {
    auto exp = dyn_cast_or_null<math::ExpOp>(yielded(exps));
    auto sub = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
    if (!sub || !isArg(sub.getLhs(), exps, 0) || !isArg(sub.getRhs(), exps, 1))
      return std::nullopt;
  }
  c.exps = exps;
  op = nextMemoryOp(exps);
  takeFills();
  auto rowSum = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!rowSum || !parallelThenReduction(rowSum, rank) ||
      !isCombiner<arith::AddFOp>(rowSum) || rowSum.getDpsInputs()[0] != s ||
      rowSum.getIndexingMapsArray() != SmallVector<AffineMap>{identity, rowMap})
    return std::nullopt;
  c.rowSum = rowSum;
  Value rSum = rowSum.getDpsInits()[0];
  op = nextMemoryOp(rowSum);
  linalg::GenericOp normalize = rowwise(op, rSum);
  if (!normalize)
    return std::nullopt;
  {
    // trunc(s / sum), or with the NaN guard of SDPA's exports
    // (kiln.zero_nan_rows): trunc(isnan(d) ? 0 : d).
    auto trunc = dyn_cast_or_null<arith::TruncFOp>(yielded(normalize));
    Value d = trunc ? trunc.getIn() : Value();
    if (auto select = d ? d.getDefiningOp<arith::SelectOp>() : nullptr) {
      auto isNan = select.getCondition().getDefiningOp<arith::CmpFOp>();
      APFloat zero(0.0f);
      if (!isNan || isNan.getPredicate() != arith::CmpFPredicate::UNO ||
          isNan.getLhs() != isNan.getRhs() ||
          isNan.getLhs() != select.getFalseValue() ||
          !matchPattern(select.getTrueValue(), m_ConstantFloat(&zero)) ||
          !isZero(zero))
        return std::nullopt;
      c.zeroNanRows = true;
      d = select.getFalseValue();
    }
    auto div = d ? d.getDefiningOp<arith::DivFOp>() : nullptr;
    if (!div || !isArg(div.getLhs(), normalize, 0) ||
        !isArg(div.getRhs(), normalize, 1))
      return std::nullopt;
  }
  c.normalize = normalize;
  Value p = normalize.getDpsInits()[0];
  op = nextMemoryOp(normalize);
  takeFills();
  auto context = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!context || !isHalfProduct(context) ||
      !parallelThenReduction(context, loops) ||
      !context.hasPureBufferSemantics())
    return std::nullopt;
  // P read at (batch..., m, key), V at key and the head dim e, not m; O
  // written at (batch..., m, e).
  unsigned pIdx = context.getDpsInputs()[0] == p ? 0 : 1;
  if (context.getDpsInputs()[pIdx] != p ||
      context.getDpsInputs()[1 - pIdx] == p)
    return std::nullopt;
  SmallVector<unsigned> pDims = llvm::to_vector(llvm::seq<unsigned>(0, rank));
  pDims.back() = kDim;
  AffineMap pMap = AffineMap::getMultiDimMapWithTargets(loops, pDims, ctx);
  AffineMap vMap = context.getIndexingMapsArray()[1 - pIdx];
  if (context.getIndexingMapsArray()[pIdx] != pMap ||
      context.getIndexingMapsArray()[2] != leading(ctx, loops, rank) ||
      !vMap.isFunctionOfDim(kDim) || !vMap.isFunctionOfDim(nDim) ||
      vMap.isFunctionOfDim(mDim))
    return std::nullopt;
  c.context = context;
  c.v = context.getDpsInputs()[1 - pIdx];
  c.vMap = vMap;
  c.out = context.getDpsInits()[0];
  Type half = scores.getBody()->getArgument(0).getType();
  if (context.getBody()->getArgument(0).getType() != half ||
      cast<MemRefType>(p.getType()).getElementType() != half)
    return std::nullopt;

  // Each fill writes a row buffer or O with the value its reduction or
  // product starts from; O is filled with zeros once.
  bool outFilled = false;
  for (Operation *fill : c.fills) {
    Value target = cast<linalg::FillOp>(fill).getDpsInits()[0];
    bool beforeMax = fill->isBeforeInBlock(rowMax);
    bool beforeSum = fill->isBeforeInBlock(rowSum);
    if (target == c.out && isFillOf(fill, target, isZero)) {
      if (outFilled)
        return std::nullopt;
      outFilled = true;
    } else if (beforeMax && target == rMax &&
               isFillOf(fill, target, isMaxIdentity)) {
    } else if (!beforeMax && beforeSum && target == rSum &&
               isFillOf(fill, target, isZero)) {
    } else {
      return std::nullopt;
    }
  }
  if (!outFilled)
    return std::nullopt;
  // Each reduction starts from its own fill: the last write of its buffer
  // before it.
  auto lastFillBefore = [&](Value buffer, Operation *before) -> Operation * {
    Operation *last = nullptr;
    for (Operation *fill : c.fills)
      if (cast<linalg::FillOp>(fill).getDpsInits()[0] == buffer &&
          fill->isBeforeInBlock(before))
        last = fill;
    return last;
  };
  if (!lastFillBefore(rMax, rowMax) || !lastFillBefore(rSum, rowSum))
    return std::nullopt;

  // An elementwise op on O right after (the output's rounding).
  if (auto g = dyn_cast_or_null<linalg::GenericOp>(nextMemoryOp(context))) {
    bool ok = allParallel(g) && g.getNumLoops() == rank &&
              g.getNumDpsInits() == 1 && pureBody(g) &&
              g.hasPureBufferSemantics() &&
              g.getIndexingMapsArray().back().isPermutation();
    bool readsOut = false;
    for (OpOperand *in : g.getDpsInputOperands())
      if (in->get() == c.out) {
        // At most one read of O, through a permutation (a head
        // transpose): each element of O gives one of the op's points.
        ok &= !readsOut && g.getMatchingIndexingMap(in).isPermutation();
        c.consumerOutMap = g.getMatchingIndexingMap(in);
        readsOut = true;
      }
    Value target = g.getDpsInits()[0];
    if (target != c.out) {
      // O itself is then not written: nothing else may read it, and the
      // body may not read the old value of its own output.
      ok &= !g.getBody()->getArgument(g.getNumDpsInputs()).use_empty() ? false
                                                                       : true;
      llvm::DenseSet<Operation *> users = {context, g};
      users.insert(c.fills.begin(), c.fills.end());
      ok &= privateTo(c.out, users, c.scoreFill, g);
    } else {
      ok &= g.getIndexingMapsArray().back() == c.consumerOutMap;
    }
    if (ok && readsOut)
      c.consumer = g;
  }

  // S, the row buffers and P are the chain's own.
  SmallVector<Operation *> all = c.ops();
  llvm::DenseSet<Operation *> chain(all.begin(), all.end());
  c.last = c.consumer ? c.consumer.getOperation() : context.getOperation();
  for (Value buffer : {s, rMax, rSum, p})
    if (!privateTo(buffer, chain, c.scoreFill, c.last))
      return std::nullopt;
  // What the kernel reads is none of them, nor O.
  SmallVector<Value> reads = c.reads();
  for (Value r : reads)
    if (r == s || r == rMax || r == rSum || r == p || r == c.out)
      return std::nullopt;
  return c;
}

SmallVector<Value> AttentionChain::reads() const {
  SmallVector<Value> r = {q, k, v};
  Value s = linalg::GenericOp(scores).getDpsInits()[0];
  for (linalg::GenericOp g : scoreOps)
    for (Value in : g.getDpsInputs())
      if (in != s)
        r.push_back(in);
  if (linalg::GenericOp g = consumer)
    for (Value in : g.getDpsInputs())
      if (in != out)
        r.push_back(in);
  return r;
}

namespace {

/// Builds the fused kernel of one chain.
class FlashBuilder {
public:
  FlashBuilder(AttentionChain c, bool skipRescale)
      : c(c), loc(c.scores.getLoc()), ctx(c.scores.getContext()),
        skipRescale(skipRescale) {
    auto sType = cast<MemRefType>(c.scores.getDpsInits()[0].getType());
    rank = sType.getRank();
    for (int64_t i = 0; i + 2 < rank; ++i)
      batchSizes.push_back(sType.getDimSize(i));
    rows = sType.getDimSize(rank - 2);
    keys = sType.getDimSize(rank - 1);
    headK = c.scores.getStaticLoopRanges()[rank];
    headV = c.context.getStaticLoopRanges()[rank - 1];
    half = c.scores.getBody()->getArgument(0).getType();
  }

  /// Whether the kernel supports these sizes: head sizes that whole mma
  /// steps cover, and registers enough for the output accumulators.
  bool supported(std::string &why) const {
    if (headK % 16 != 0 || headK > 128) {
      why = "the head size of Q and K is not a multiple of 16 up to 128";
      return false;
    }
    if (headV % 8 != 0 || headV > 128) {
      why = "the head size of V is not a multiple of 8 up to 128";
      return false;
    }
    return true;
  }

  gpu::LaunchOp build(OpBuilder &b);

  int64_t batches() const {
    int64_t n = 1;
    for (int64_t s : batchSizes)
      n *= s;
    return n;
  }
  kiln::ComputeCost cost() {
    kiln::ComputeCost cost;
    cost.flops = 2 * batches() * rows * keys * (headK + headV) +
                 6 * batches() * rows * keys;
    auto bytes = [](Value v) {
      auto t = cast<MemRefType>(v.getType());
      return t.getNumElements() * t.getElementTypeBitWidth() / 8;
    };
    for (Value r : c.reads())
      cost.bytes += bytes(r);
    cost.bytes += bytes(c.consumer ? c.consumer.getDpsInits()[0] : c.out);
    return cost;
  }

private:
  Value cst(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value f32(OpBuilder &b, float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(OpBuilder &b, Value x, int64_t y) {
    return y == 0 ? x : arith::AddIOp::create(b, loc, x, cst(b, y));
  }
  /// Indices of a buffer read through `map` at loop values `at`.
  SmallVector<Value> indices(OpBuilder &b, AffineMap map, ArrayRef<Value> at) {
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e)) {
        idx.push_back(at[d.getPosition()]);
        continue;
      }
      idx.push_back(affine::AffineApplyOp::create(
          b, loc, AffineMap::get(map.getNumDims(), 0, e), at));
    }
    return idx;
  }
  Value load(OpBuilder &b, Value buffer, AffineMap map, ArrayRef<Value> at) {
    return memref::LoadOp::create(b, loc, buffer, indices(b, map, at));
  }
  /// `g`'s body applied at loop values `at`: the operands in `given` take
  /// those values, the others are loaded through their maps.
  Value apply(OpBuilder &b, linalg::GenericOp g, ArrayRef<Value> at,
              const DenseMap<Value, Value> &given, Value outValue) {
    IRMapping map;
    Block *body = g.getBody();
    for (OpOperand *in : g.getDpsInputOperands()) {
      Value arg = body->getArgument(in->getOperandNumber());
      if (arg.use_empty())
        continue;
      auto it = given.find(in->get());
      map.map(arg, it != given.end()
                       ? it->second
                       : load(b, in->get(), g.getMatchingIndexingMap(in), at));
    }
    if (outValue)
      map.map(body->getArgument(g.getNumDpsInputs()), outValue);
    for (Operation &op : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(op)) {
        map.map(index.getResult(), at[index.getDim()]);
        continue;
      }
      b.clone(op, map);
    }
    return map.lookup(body->getTerminator()->getOperand(0));
  }
  /// One m16n8k16 product: A as 4 registers of 2 half values, B as 2.
  Value mma(OpBuilder &b, ArrayRef<Value> a, ArrayRef<Value> bRegs, Value acc) {
    if (half.isF16()) {
      auto frag = [&](ArrayRef<Value> rowsOf) {
        auto ty = VectorType::get({(int64_t)rowsOf.size(), 2}, half);
        Value v = arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(ty, b.getZeroAttr(half)));
        for (auto [i, r] : llvm::enumerate(rowsOf))
          v = vector::InsertOp::create(b, loc, r, v,
                                       ArrayRef<int64_t>{(int64_t)i});
        return v;
      };
      return nvgpu::MmaSyncOp::create(b, loc, frag(a), frag(bRegs), acc,
                                      ArrayRef<int64_t>{16, 8, 16},
                                      /*tf32Enabled=*/false);
    }
    // bf16: the NVVM op on i32 registers (nvgpu.mma.sync has no bf16
    // lowering).
    auto reg = [&](Value pair) -> Value {
      Value word = vector::BitCastOp::create(
          b, loc, VectorType::get({1}, b.getI32Type()), pair);
      return vector::ExtractOp::create(b, loc, word, 0);
    };
    SmallVector<Value> aRegs, bR, cRegs;
    for (Value v : a)
      aRegs.push_back(reg(v));
    for (Value v : bRegs)
      bR.push_back(reg(v));
    for (int64_t i = 0; i < 4; ++i)
      cRegs.push_back(vector::ExtractOp::create(
          b, loc, acc, ArrayRef<int64_t>{i / 2, i % 2}));
    Type f = b.getF32Type();
    auto resultTy = LLVM::LLVMStructType::getLiteral(ctx, {f, f, f, f});
    Value d = NVVM::MmaOp::create(
        b, loc, resultTy, aRegs, bR, cRegs, ArrayRef<int64_t>{16, 8, 16},
        std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    for (int64_t i = 0; i < 4; ++i)
      acc = vector::InsertOp::create(b, loc,
                                     LLVM::ExtractValueOp::create(b, loc, d, i),
                                     acc, ArrayRef<int64_t>{i / 2, i % 2});
    return acc;
  }
  /// The value combined over the 4 threads of a quad (one row's threads).
  Value quad(OpBuilder &b, Value v, bool isMax) {
    for (int32_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, v, offset, /*width=*/32,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      v = isMax ? arith::MaxNumFOp::create(b, loc, v, other).getResult()
                : arith::AddFOp::create(b, loc, v, other).getResult();
    }
    return v;
  }

  AttentionChain c;
  Location loc;
  MLIRContext *ctx;
  bool skipRescale;
  int64_t rank;
  SmallVector<int64_t> batchSizes;
  int64_t rows, keys, headK, headV;
  Type half;
};

gpu::LaunchOp FlashBuilder::build(OpBuilder &b) {
  int64_t rowTiles = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  int64_t keyTiles = (keys + kKeysPerTile - 1) / kKeysPerTile;
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  // K's tile [key][d] and V's transposed [e][key], rows padded by 8
  // elements (16 bytes): a fragment's 8 rows x 4 words fall in 32 banks.
  auto kTileType = MemRefType::get({kKeysPerTile, headK + 8}, half,
                                   MemRefLayoutAttrInterface(), space);
  auto vTileType = MemRefType::get({headV, kKeysPerTile + 8}, half,
                                   MemRefLayoutAttrInterface(), space);
  Value one = cst(b, 1);
  auto launch = gpu::LaunchOp::create(
      b, loc, cst(b, rowTiles * batches()), one, one, cst(b, kThreads), one,
      one, /*dynamicSharedMemorySize=*/Value(), /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange{kTileType, vTileType});
  Block *entry = &launch.getBody().front();
  OpBuilder kb = OpBuilder::atBlockBegin(entry);
  Value kTile = launch.getWorkgroupAttributions()[0];
  Value vTile = launch.getWorkgroupAttributions()[1];
  Value tid = launch.getThreadIds().x, bid = launch.getBlockIds().x;
  auto div = [&](OpBuilder &ob, Value x, int64_t y) -> Value {
    return arith::DivUIOp::create(ob, loc, x, cst(ob, y));
  };
  auto rem = [&](OpBuilder &ob, Value x, int64_t y) -> Value {
    return arith::RemUIOp::create(ob, loc, x, cst(ob, y));
  };
  auto minIdx = [&](OpBuilder &ob, Value x, int64_t y) -> Value {
    return arith::MinUIOp::create(ob, loc, x, cst(ob, y));
  };
  auto ult = [&](OpBuilder &ob, Value x, int64_t y) -> Value {
    return arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ult, x,
                                 cst(ob, y));
  };
  // Batch indices, the last fastest, then the row tile.
  Value rowTile = rem(kb, bid, rowTiles);
  Value batch = div(kb, bid, rowTiles);
  SmallVector<Value> batchAt(batchSizes.size());
  for (int64_t i = batchSizes.size() - 1; i >= 0; --i) {
    batchAt[i] = rem(kb, batch, batchSizes[i]);
    batch = div(kb, batch, batchSizes[i]);
  }
  Value warp = div(kb, tid, 32), lane = rem(kb, tid, 32);
  Value g = div(kb, lane, 4), t = rem(kb, lane, 4);
  Value t2 = arith::MulIOp::create(kb, loc, t, cst(kb, 2));
  Value row0 = arith::AddIOp::create(
      kb, loc, arith::MulIOp::create(kb, loc, rowTile, cst(kb, kRowsPerBlock)),
      arith::AddIOp::create(
          kb, loc, arith::MulIOp::create(kb, loc, warp, cst(kb, 16)), g));
  Value rowAt[2] = {row0, add(kb, row0, 8)};
  // Rows past the end compute on the last row and are not stored.
  Value rowLoad[2] = {minIdx(kb, rowAt[0], rows - 1),
                      minIdx(kb, rowAt[1], rows - 1)};
  // Loop values of the scores' contraction: batch..., m, n, k; of the
  // context's: batch..., m, e, key.
  auto loopAt = [&](Value m, Value n, Value k) {
    SmallVector<Value> at(batchAt);
    at.append({m, n, k});
    return at;
  };
  Value zeroIdx = cst(kb, 0);
  // Q's fragments, kept for every key tile: per 16 of the head, rows g and
  // g + 8 at columns 2t, 2t + 1 and 8 more.
  auto pairOf = [&](OpBuilder &ob, Value x, Value y) -> Value {
    return vector::FromElementsOp::create(ob, loc, VectorType::get({2}, half),
                                          ValueRange{x, y});
  };
  SmallVector<SmallVector<Value>> qFrag;
  for (int64_t ks = 0; ks < headK / 16; ++ks) {
    SmallVector<Value> regs;
    for (int64_t r = 0; r < 4; ++r) {
      Value row = rowLoad[r % 2];
      Value col = add(kb, t2, 16 * ks + 8 * (r / 2));
      Value x = load(kb, c.q, c.qMap, loopAt(row, zeroIdx, col));
      Value y = load(kb, c.q, c.qMap, loopAt(row, zeroIdx, add(kb, col, 1)));
      regs.push_back(pairOf(kb, x, y));
    }
    qFrag.push_back(regs);
  }

  Type f32Type = kb.getF32Type();
  auto accType = VectorType::get({2, 2}, f32Type);
  Value zeroAcc = arith::ConstantOp::create(
      kb, loc, DenseElementsAttr::get(accType, kb.getF32FloatAttr(0)));
  float negInf = -std::numeric_limits<float>::infinity();
  int64_t outTiles = headV / 8;
  SmallVector<Value> init(outTiles, zeroAcc);
  init.append({f32(kb, negInf), f32(kb, negInf), f32(kb, 0), f32(kb, 0)});
  auto keyLoop = scf::ForOp::create(kb, loc, cst(kb, 0), cst(kb, keyTiles),
                                    cst(kb, 1), init);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(keyLoop.getBody());
    Value kt = keyLoop.getInductionVar();
    SmallVector<Value> carried(keyLoop.getRegionIterArgs());
    Value key0 = arith::MulIOp::create(lb, loc, kt, cst(lb, kKeysPerTile));
    gpu::BarrierOp::create(lb, loc);
    // Stage K [key][d] and V transposed [e][key]; keys past the end are
    // zeros (V's must be: their probabilities are 0, and 0 * inf is NaN).
    auto stage = [&](Value src, AffineMap map, int64_t head, Value tile,
                     bool isV) {
      int64_t perThread = kKeysPerTile * head / kThreads;
      auto loop = scf::ForOp::create(lb, loc, cst(lb, 0), cst(lb, perThread),
                                     cst(lb, 1));
      OpBuilder sb = OpBuilder::atBlockBegin(loop.getBody());
      Value e = arith::AddIOp::create(
          sb, loc,
          arith::MulIOp::create(sb, loc, loop.getInductionVar(),
                                cst(sb, kThreads)),
          tid);
      Value key = div(sb, e, head), d = rem(sb, e, head);
      Value keyAt = arith::AddIOp::create(sb, loc, key0, key);
      Value valid = ult(sb, keyAt, keys);
      Value keyLoad = minIdx(sb, keyAt, keys - 1);
      // K is read at (batch..., n = key, k = d); V at (..., e = d, key).
      SmallVector<Value> at =
          isV ? loopAt(zeroIdx, d, keyLoad) : loopAt(zeroIdx, keyLoad, d);
      Value x = load(sb, src, map, at);
      x = arith::SelectOp::create(
          sb, loc, valid, x,
          arith::ConstantOp::create(sb, loc, sb.getZeroAttr(half)));
      if (isV)
        memref::StoreOp::create(sb, loc, x, tile, ValueRange{d, key});
      else
        memref::StoreOp::create(sb, loc, x, tile, ValueRange{key, d});
    };
    stage(c.k, c.kMap, headK, kTile, /*isV=*/false);
    stage(c.v, c.vMap, headV, vTile, /*isV=*/true);
    gpu::BarrierOp::create(lb, loc);

    // Scores: 8 tiles of 8 keys, each 16 rows x 8 keys.
    // Two scalar loads: the GPU lowering converts no vector.load of
    // workgroup memory (the backend pairs them).
    auto pairAt = [&](Value tile, Value r, Value col) -> Value {
      Value x = memref::LoadOp::create(lb, loc, tile, ValueRange{r, col});
      Value y =
          memref::LoadOp::create(lb, loc, tile, ValueRange{r, add(lb, col, 1)});
      return pairOf(lb, x, y);
    };
    int64_t nTiles = kKeysPerTile / 8;
    SmallVector<Value> sAcc;
    for (int64_t j = 0; j < nTiles; ++j) {
      Value acc = zeroAcc;
      Value keyRow = add(lb, g, 8 * j);
      for (int64_t ks = 0; ks < headK / 16; ++ks) {
        Value b0 = pairAt(kTile, keyRow, add(lb, t2, 16 * ks));
        Value b1 = pairAt(kTile, keyRow, add(lb, t2, 16 * ks + 8));
        acc = mma(lb, qFrag[ks], {b0, b1}, acc);
      }
      sAcc.push_back(acc);
    }
    // The elementwise ops on each score, -inf past the last key.
    Value s = c.scores.getDpsInits()[0];
    Value ninf = f32(lb, negInf);
    // score[j][r][e]: tile j, row r (g or g + 8), key 2t + e.
    SmallVector<Value> score(nTiles * 4);
    Value rowMax[2] = {ninf, ninf};
    for (int64_t j = 0; j < nTiles; ++j)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e) {
          Value v = vector::ExtractOp::create(lb, loc, sAcc[j],
                                              ArrayRef<int64_t>{r, e});
          Value keyAt =
              arith::AddIOp::create(lb, loc, key0, add(lb, t2, 8 * j + e));
          SmallVector<Value> at(batchAt);
          at.append({rowLoad[r], minIdx(lb, keyAt, keys - 1)});
          for (linalg::GenericOp op : c.scoreOps)
            v = apply(lb, op, at, {{s, v}}, v);
          if (keys % kKeysPerTile != 0)
            v = arith::SelectOp::create(lb, loc, ult(lb, keyAt, keys), v, ninf);
          score[j * 4 + r * 2 + e] = v;
          rowMax[r] = arith::MaxNumFOp::create(lb, loc, rowMax[r], v);
        }
    // Online softmax per row.
    Value zero = f32(lb, 0);
    Value scaleBy[2], newMax[2], newSum[2];
    Value maxUsed[2];
    for (int64_t r = 0; r < 2; ++r) {
      Value m = quad(lb, rowMax[r], /*isMax=*/true);
      newMax[r] = arith::MaxNumFOp::create(lb, loc, carried[outTiles + r], m);
      // A row with no finite score yet subtracts 0 (its exps are 0).
      Value isInf = arith::CmpFOp::create(lb, loc, arith::CmpFPredicate::OEQ,
                                          newMax[r], ninf);
      maxUsed[r] = arith::SelectOp::create(lb, loc, isInf, zero, newMax[r]);
      scaleBy[r] = math::ExpOp::create(
          lb, loc,
          arith::SubFOp::create(lb, loc, carried[outTiles + r], maxUsed[r]));
      if (skipRescale)
        scaleBy[r] = f32(lb, 1);
      newSum[r] =
          arith::MulFOp::create(lb, loc, carried[outTiles + 2 + r], scaleBy[r]);
    }
    SmallVector<Value> prob(nTiles * 4);
    for (int64_t j = 0; j < nTiles; ++j)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e) {
          int64_t i = j * 4 + r * 2 + e;
          Value p = math::ExpOp::create(
              lb, loc, arith::SubFOp::create(lb, loc, score[i], maxUsed[r]));
          newSum[r] = arith::AddFOp::create(lb, loc, newSum[r], p);
          prob[i] = arith::TruncFOp::create(lb, loc, half, p);
        }
    // Rescale the output and add P V: A fragments of 16 keys are the
    // score tiles 2kk and 2kk + 1.
    SmallVector<Value> outAcc;
    for (int64_t jj = 0; jj < outTiles; ++jj) {
      Value acc = carried[jj];
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e) {
          Value x =
              vector::ExtractOp::create(lb, loc, acc, ArrayRef<int64_t>{r, e});
          x = arith::MulFOp::create(lb, loc, x, scaleBy[r]);
          acc = vector::InsertOp::create(lb, loc, x, acc,
                                         ArrayRef<int64_t>{r, e});
        }
      outAcc.push_back(acc);
    }
    for (int64_t kk = 0; kk < nTiles / 2; ++kk) {
      SmallVector<Value> a;
      for (int64_t reg = 0; reg < 4; ++reg) {
        int64_t j = 2 * kk + reg / 2, r = reg % 2;
        a.push_back(pairOf(lb, prob[j * 4 + r * 2], prob[j * 4 + r * 2 + 1]));
      }
      for (int64_t jj = 0; jj < outTiles; ++jj) {
        Value eRow = add(lb, g, 8 * jj);
        Value b0 = pairAt(vTile, eRow, add(lb, t2, 16 * kk));
        Value b1 = pairAt(vTile, eRow, add(lb, t2, 16 * kk + 8));
        outAcc[jj] = mma(lb, a, {b0, b1}, outAcc[jj]);
      }
    }
    SmallVector<Value> yield(outAcc);
    yield.append({newMax[0], newMax[1], newSum[0], newSum[1]});
    scf::YieldOp::create(lb, loc, yield);
  }
  kb.setInsertionPointAfter(keyLoop);
  // Each row divided by its sum, stored where it is in range.
  Value sum[2];
  // With the NaN guard, a row whose sum is not positive (every score
  // -inf, or a NaN among them: each of its probabilities would be NaN) is
  // zeros.
  Value positive[2];
  for (int64_t r = 0; r < 2; ++r) {
    sum[r] = quad(kb, keyLoop.getResult(outTiles + 2 + r), /*isMax=*/false);
    positive[r] = arith::CmpFOp::create(kb, loc, arith::CmpFPredicate::OGT,
                                        sum[r], f32(kb, 0));
  }
  for (int64_t r = 0; r < 2; ++r) {
    auto inRange = scf::IfOp::create(kb, loc, ult(kb, rowAt[r], rows), false);
    OpBuilder sb = OpBuilder::atBlockBegin(inRange.thenBlock());
    for (int64_t jj = 0; jj < outTiles; ++jj)
      for (int64_t e = 0; e < 2; ++e) {
        Value x = vector::ExtractOp::create(sb, loc, keyLoop.getResult(jj),
                                            ArrayRef<int64_t>{r, e});
        x = arith::DivFOp::create(sb, loc, x, sum[r]);
        if (c.zeroNanRows)
          x = arith::SelectOp::create(sb, loc, positive[r], x, f32(sb, 0));
        SmallVector<Value> at(batchAt);
        at.append({rowAt[r], add(sb, t2, 8 * jj + e)});
        if (c.consumer) {
          // The op's loop values: O's indices through the inverse of the
          // permutation it reads O with.
          AffineMap toLoops = inversePermutation(c.consumerOutMap);
          SmallVector<Value> loopsAt;
          for (AffineExpr e : toLoops.getResults())
            loopsAt.push_back(at[cast<AffineDimExpr>(e).getPosition()]);
          at = loopsAt;
          x = apply(sb, c.consumer, at, {{c.out, x}}, x);
          Value target = c.consumer.getDpsInits()[0];
          memref::StoreOp::create(
              sb, loc, x, target,
              indices(sb, c.consumer.getIndexingMapsArray().back(), at));
        } else {
          memref::StoreOp::create(sb, loc, x, c.out, at);
        }
      }
  }
  gpu::TerminatorOp::create(kb, loc);
  return launch;
}

struct FlashAttentionPass
    : public kiln::impl::KilnGpuFlashAttentionBase<FlashAttentionPass> {
  using KilnGpuFlashAttentionBase::KilnGpuFlashAttentionBase;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!testMutation.empty() && testMutation != "skip-rescale") {
      fn.emitError("kiln-gpu-flash-attention: unknown test-mutation '")
          << testMutation << "'";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> candidates;
    for (Operation &op : fn.getBody().front())
      if (auto g = dyn_cast<linalg::GenericOp>(op))
        candidates.push_back(g);
    llvm::DenseSet<Operation *> erased;
    for (linalg::GenericOp g : candidates) {
      if (erased.contains(g))
        continue;
      std::optional<AttentionChain> chain = kiln::matchAttentionChain(g);
      if (!chain)
        continue;
      FlashBuilder builder(*chain, testMutation == "skip-rescale");
      std::string why;
      if (!builder.supported(why)) {
        emitRemark(g.getLoc(),
                   "kiln-gpu-flash-attention: the attention of node '")
            << kiln::onnxNodeName(g.getLoc()) << "' stays unfused: " << why;
        continue;
      }
      // The kernel reads its inputs while it writes its output: they may
      // not share bytes (kiln-plan-memory's attention-inputs-live keeps
      // them apart).
      Value written =
          chain->consumer ? chain->consumer.getDpsInits()[0] : chain->out;
      FailureOr<kiln::BufferBytes> w = kiln::bufferBytes(written);
      bool apart = succeeded(w);
      for (Value r : chain->reads()) {
        FailureOr<kiln::BufferBytes> rb = kiln::bufferBytes(r);
        apart &= succeeded(rb) && succeeded(w) && !rb->overlaps(*w);
      }
      if (!apart) {
        emitRemark(g.getLoc(),
                   "kiln-gpu-flash-attention: the attention of node '")
            << kiln::onnxNodeName(g.getLoc())
            << "' stays unfused: its output may share memory with an input";
        continue;
      }
      OpBuilder b(chain->last);
      kiln::ComputeCost cost = builder.cost();
      gpu::LaunchOp launch = builder.build(b);
      launch->setAttr(
          "kiln.cost",
          DenseI64ArrayAttr::get(&getContext(), {cost.flops, cost.bytes}));
      SmallVector<Operation *> ops = chain->ops();
      for (Operation *op : llvm::reverse(ops)) {
        erased.insert(op);
        op->erase();
      }
    }
  }
};

} // namespace
