//===- TileAndVectorize.cpp - contractions to register-tiled vector code -===//
//
// Every static float contraction (MatMul, Gemm, and the convolutions that
// kiln-conv-to-gemm rewrote) is tiled twice with upstream's TilingInterface
// and vectorized with the linalg vectorizer:
//
//  1. scf.forall over blocks of the output's contiguous dim (sized so that
//     the right-hand panel, K x tile, fits in half the L2 cache) and over
//     the batch dims; these are the loops that may run in parallel.
//  2. scf.for over an Mr x Nr register tile of the output, the reduction
//     dims innermost with tile 1, so each step of the k loop is one outer
//     product: Mr broadcasts, Nr/lanes vector loads, Mr*Nr/lanes FMAs.
//
// The register tile is then a `vector.contract`; the accumulator's
// transfer_read / transfer_write pair is hoisted out of the k loops, so it
// stays in registers for the whole reduction. Register loops that do not
// divide their dim are peeled, so every tile is static and needs no masks.
// Other large ops get only the scf.forall, for threads.
//
//===----------------------------------------------------------------------===//

#include "../GemmDims.h"
#include "Canonicalize.h"
#include "Epilogue.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#define DEBUG_TYPE "kiln-cpu-tile-and-vectorize"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUTILEANDVECTORIZE
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

void kiln::cpu::addCanonicalizations(MLIRContext *ctx,
                                     RewritePatternSet &patterns) {
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
}

namespace {

/// Tile sizes per loop of a contraction, in the op's loop order.
struct ContractionPlan {
  SmallVector<int64_t> outer;       ///< scf.forall tiles; 0 = not tiled.
  SmallVector<int64_t> inner;       ///< scf.for register tiles.
  SmallVector<int64_t> interchange; ///< Inner loop order: reductions last.
  SmallVector<int64_t> peel;        ///< Inner loops (dims) to peel.
  /// The reduction dim swept in chunks of `kChunk` around the register
  /// tiles (-1: none): each chunk of the weight panel is then read from
  /// memory once and from L1 by every row tile of the block.
  int64_t kDim = -1, kChunk = 0;
};

/// Marks the register tiles (the op's tiled clones) until they are
/// vectorized.
constexpr llvm::StringLiteral kRegisterTile = "kiln.register_tile";
/// Marks the reduction loops of a contraction with an epilogue: the index
/// of the epilogue in the pass's list.
constexpr llvm::StringLiteral kEpilogue = "kiln.epilogue";
/// Marks the reduction loops of a contraction whose accumulators start
/// from a broadcast value instead of a read of its init: the index of the
/// contraction in the pass's list.
constexpr llvm::StringLiteral kStart = "kiln.accumulator_start";

/// An index as a sum of init dims' indices times strides: the position in
/// a broadcast bias of an init element (one dim; or two and more where a
/// reshape split the bias dim, as a channels-last convolution's output
/// channels in blocks of the register tile's width).
using DimSum = SmallVector<std::pair<int64_t, int64_t>>; // (init dim, stride)

/// Where a contraction's sums start, when its init is a value broadcast
/// (seen through reshapes and transposes): a fill's scalar, or a 1-D
/// `bias` read at `index` (a convolution's or Gemm's bias). `chain`
/// holds the ops that compute the init, each used only by the next.
struct AccumulatorStart {
  Value scalar, bias;
  DimSum index;
  SmallVector<Operation *> chain;
};

/// The start of `init`'s values, traced through reshapes and transposes to
/// a `linalg.fill` or a broadcast of a 1-D tensor along one dim; which
/// init dims index that one follows the dims on the way: kept by a
/// transpose, split by an expand_shape (a sum of its group's dims), kept
/// by a collapse_shape only where the group's other dims are 1.
std::optional<AccumulatorStart> findAccumulatorStart(Value init) {
  auto type = dyn_cast<RankedTensorType>(init.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  // dims[j]: dim j of `v`'s index in init dims (empty where unknown).
  SmallVector<DimSum> dims;
  for (int64_t j = 0; j < type.getRank(); ++j)
    dims.push_back({{j, 1}});
  AccumulatorStart start;
  Value v = init;
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!def || !v.hasOneUse())
      return std::nullopt;
    start.chain.push_back(def);
    if (auto fill = dyn_cast<linalg::FillOp>(def)) {
      start.scalar = fill.getInputs()[0];
      return start;
    }
    if (auto g = dyn_cast<linalg::GenericOp>(def)) {
      if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
          g.getNumParallelLoops() != g.getNumLoops())
        return std::nullopt;
      auto bt = dyn_cast<RankedTensorType>(g.getDpsInputs()[0].getType());
      AffineMap in = g.getIndexingMapsArray()[0];
      Block &body = g.getRegion().front();
      if (!bt || bt.getRank() != 1 || bt.isDynamicDim(0) ||
          !g.getIndexingMapsArray()[1].isIdentity() ||
          in.getNumResults() != 1 || !isa<AffineDimExpr>(in.getResult(0)) ||
          body.getOperations().size() != 1 ||
          body.getTerminator()->getOperand(0) != body.getArgument(0))
        return std::nullopt;
      const DimSum &d =
          dims[cast<AffineDimExpr>(in.getResult(0)).getPosition()];
      int64_t extent = 1;
      for (auto [dim, stride] : d)
        extent *= type.getDimSize(dim);
      if (d.empty() || extent != bt.getDimSize(0))
        return std::nullopt;
      // A bias computed by a linalg op may be that op's result no more
      // once this pass has tiled it (read after tiling).
      if (isa_and_nonnull<linalg::LinalgOp>(
              g.getDpsInputs()[0].getDefiningOp()))
        return std::nullopt;
      start.bias = g.getDpsInputs()[0];
      start.index = d;
      return start;
    }
    auto shapeOf = [](Value x) {
      return cast<RankedTensorType>(x.getType()).getShape();
    };
    if (auto t = dyn_cast<linalg::TransposeOp>(def)) {
      // result dim i is input dim perm[i].
      SmallVector<DimSum> next(dims.size());
      for (auto [i, p] : llvm::enumerate(t.getPermutation()))
        next[p] = dims[i];
      dims = next;
      v = t.getInput();
      continue;
    }
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      // An expanded dim is the sum of its group's dims times their
      // strides; a collapsed group keeps its index in the one member that
      // is not 1 (unknown with two).
      Value src = def->getOperand(0);
      bool expand = isa<tensor::ExpandShapeOp>(def);
      SmallVector<ReassociationIndices> groups =
          expand ? cast<tensor::ExpandShapeOp>(def).getReassociationIndices()
                 : cast<tensor::CollapseShapeOp>(def).getReassociationIndices();
      ArrayRef<int64_t> big = expand ? shapeOf(v) : shapeOf(src);
      ArrayRef<int64_t> small = expand ? shapeOf(src) : shapeOf(v);
      SmallVector<DimSum> next(shapeOf(src).size());
      for (auto [g, group] : llvm::enumerate(groups)) {
        if (expand) {
          int64_t stride = 1;
          for (int64_t j : llvm::reverse(group)) {
            if (big[j] != 1) {
              if (dims[j].empty()) {
                next[g].clear();
                break;
              }
              for (auto [d, s] : dims[j])
                next[g].push_back({d, s * stride});
            }
            stride *= big[j];
          }
          continue;
        }
        int64_t member = -1;
        for (int64_t j : group) {
          if (big[j] == small[g] && member < 0)
            member = j;
          else if (big[j] != 1)
            member = -2;
        }
        if (member >= 0)
          next[member] = dims[g];
      }
      dims = next;
      v = src;
      continue;
    }
    return std::nullopt;
  }
}

/// Walks from `v`, a register tile's slice, up to its contraction's whole
/// init: through rank-preserving unit-stride slices (each passed to
/// `onSlice`), inserts of earlier tiles (a loop of one iteration, folded:
/// their region is not this tile's) and the tiled loops' carried tensors
/// (to the operand each starts from, which still holds the init's values
/// at a tile not yet written). Gives the outermost loop operand passed
/// (null if none); failure where the chain is not such slices and loops.
FailureOr<OpOperand *>
walkTileSlices(Value v, function_ref<void(tensor::ExtractSliceOp)> onSlice) {
  OpOperand *rootUse = nullptr;
  while (true) {
    if (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
      if (slice.getSourceType().getRank() != slice.getType().getRank() ||
          !slice.hasUnitStride())
        return failure();
      onSlice(slice);
      v = slice.getSource();
      continue;
    }
    if (auto insert = v.getDefiningOp<tensor::InsertSliceOp>()) {
      v = insert.getDest();
      continue;
    }
    OpOperand *use = nullptr;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *parent = arg.getOwner()->getParentOp();
      if (auto loop = dyn_cast<scf::ForOp>(parent)) {
        if (arg.getArgNumber() == 0)
          return failure();
        use = &loop.getInitArgsMutable()[arg.getArgNumber() - 1];
      } else if (auto forall = dyn_cast<scf::ForallOp>(parent)) {
        auto outs = forall.getRegionIterArgs();
        auto it = llvm::find(outs, arg);
        if (it == outs.end())
          return failure();
        use = &forall.getOutputsMutable()[it - outs.begin()];
      }
    } else if (auto res = dyn_cast<OpResult>(v)) {
      if (auto loop = dyn_cast<scf::ForOp>(res.getOwner()))
        use = &loop.getInitArgsMutable()[res.getResultNumber()];
      else if (auto forall = dyn_cast<scf::ForallOp>(res.getOwner()))
        use = &forall.getOutputsMutable()[res.getResultNumber()];
    }
    if (!use)
      return rootUse; // The init itself (an op's result or an argument).
    rootUse = use;
    v = use->get();
  }
}

/// The value that `read`, a register tile's accumulator read from a slice
/// of its contraction's init, would give, built from `start`: the tile's
/// offset along the start's dim is summed from the slices between the read
/// and the init (through the tiled loops' carried tensors, which still
/// hold the init's values at a tile not yet written, and the results of
/// earlier loops and tiles, peeled). `rootUse` is set to the outermost loop's
/// operand that takes the whole init. Null where the chain is not such
/// slices and loops.
Value startValue(OpBuilder &b, vector::TransferReadOp read,
                 const AccumulatorStart &start, OpOperand *&rootUse) {
  auto vt = read.getVectorType();
  Location loc = read.getLoc();
  // Per init dim of the start's index, the tile's offsets along it.
  SmallVector<SmallVector<Value>> offsets(start.index.size());
  AffineMap map = read.getPermutationMap();
  for (auto [i, ds] : llvm::enumerate(start.index))
    offsets[i].push_back(read.getIndices()[ds.first]);
  FailureOr<OpOperand *> root =
      walkTileSlices(read.getBase(), [&](tensor::ExtractSliceOp slice) {
        for (auto [i, ds] : llvm::enumerate(start.index))
          offsets[i].push_back(getValueOrCreateConstantIndexOp(
              b, loc, slice.getMixedOffsets()[ds.first]));
      });
  rootUse = succeeded(root) ? *root : nullptr;
  if (!rootUse)
    return nullptr;
  if (start.scalar)
    return vector::BroadcastOp::create(b, loc, vt, start.scalar);
  // The vector dim along the start's dim of stride 1, if any (else one
  // bias value); the vector must be one element along its other dims.
  int64_t lane = -1;
  for (auto [j, e] : llvm::enumerate(map.getResults())) {
    auto de = dyn_cast<AffineDimExpr>(e);
    if (!de)
      continue;
    for (auto [d, stride] : start.index)
      if (de.getPosition() == static_cast<unsigned>(d)) {
        if (stride == 1)
          lane = j;
        else if (vt.getDimSize(j) != 1)
          return nullptr;
      }
  }
  Value offset;
  for (auto [i, ds] : llvm::enumerate(start.index)) {
    Value sum = offsets[i].front();
    for (Value o : ArrayRef<Value>(offsets[i]).drop_front())
      sum = arith::AddIOp::create(b, loc, sum, o);
    if (ds.second != 1)
      sum = arith::MulIOp::create(
          b, loc, sum, arith::ConstantIndexOp::create(b, loc, ds.second));
    offset = offset ? arith::AddIOp::create(b, loc, offset, sum) : sum;
  }
  Type elt = vt.getElementType();
  if (lane < 0)
    return vector::BroadcastOp::create(
        b, loc, vt, tensor::ExtractOp::create(b, loc, start.bias, offset));
  int64_t n = vt.getDimSize(lane);
  Value pad = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  Value values = vector::TransferReadOp::create(
      b, loc, VectorType::get({n}, elt), start.bias, ValueRange{offset}, pad,
      ArrayRef<bool>{true});
  SmallVector<int64_t> shape(vt.getRank(), 1);
  shape[lane] = n;
  values =
      vector::ShapeCastOp::create(b, loc, VectorType::get(shape, elt), values);
  return vector::BroadcastOp::create(b, loc, vt, values);
}

/// The first candidate that divides `size`, else the first candidate.
int64_t pickDividing(int64_t size, ArrayRef<int64_t> candidates) {
  for (int64_t c : candidates)
    if (size % c == 0)
      return c;
  return candidates.front();
}
} // namespace

int64_t kiln::cpuRegisterTileWidth(int64_t n, int64_t lanes) {
  if (n <= 2 * lanes)
    return n;
  // Eight vectors or more that one vector divides but two do not (1000
  // classes, 72 or 120 channels with 8 lanes): two-vector tiles, the last
  // one half used, rather than one-vector tiles whose every FMA takes a
  // broadcast (a 1x1 convolution of 512 to 1000 channels on a 13x13
  // plane, 2 Zen 3 cores: see docs/performance.md).
  if (n >= 8 * lanes && n % lanes == 0)
    return 2 * lanes;
  return pickDividing(n, {2 * lanes, lanes});
}

namespace {

std::optional<ContractionPlan>
planContraction(linalg::LinalgOp op, unsigned vectorBits, int64_t registerTileM,
                int64_t panelBytes, int64_t chunks, bool bf16Dot,
                int64_t kChunkBytes) {
  // AMX tile products run on kiln-cpu-amx-tiles.
  if (op->hasAttr(kiln::kAmxTilesAttr) ||
      !linalg::isaContractionOpInterface(op) || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  auto elt = dyn_cast<FloatType>(
      getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()));
  if (!elt || llvm::any_of(op.getDpsInputs(), [&](Value v) {
        return !kiln::widensInto(getElementTypeOrSelf(v.getType()), elt);
      }))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return std::nullopt;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() == 0)
    return std::nullopt;
  auto lastExpr = dyn_cast<AffineDimExpr>(outMap.getResults().back());
  if (!lastExpr)
    return std::nullopt;
  // jn: the output's contiguous dim, vectorized; jm: the other output dim
  // of the register tile, from the other operand.
  int64_t jn = lastExpr.getPosition();
  bool inM = llvm::is_contained(dims->m, jn);
  if (!inM && !llvm::is_contained(dims->n, jn))
    return std::nullopt;
  // jm: the largest such dim, the innermost among equals. A MatMul of an
  // [S, 1, K] activation by a 2-D weight has two: the register tile must
  // run along S, not along the unit dim (with S in the scf.forall, every
  // block would read the whole weight for one row).
  ArrayRef<unsigned> others = inM ? dims->n : dims->m;
  int64_t jm = -1;
  for (AffineExpr e : llvm::reverse(outMap.getResults()))
    if (auto de = dyn_cast<AffineDimExpr>(e))
      if (llvm::is_contained(others, de.getPosition()) &&
          (jm < 0 || ranges[de.getPosition()] > ranges[jm]))
        jm = de.getPosition();

  int64_t lanes = std::max<int64_t>(1, vectorBits / elt.getWidth());
  int64_t nSize = ranges[jn];
  int64_t nr = kiln::cpuRegisterTileWidth(nSize, lanes);
  // mr: the full register tile, its remainder peeled (a 6-row tile keeps
  // 12 accumulators in flight, enough to cover the FMA latency; a 4-row
  // one that divides the dim ran 20% slower). mrDividing: the tile size
  // that divides the dim, for when the rows are split among threads.
  int64_t mr = 1, mrDividing = 1;
  if (jm >= 0) {
    int64_t mSize = ranges[jm];
    mr = std::min(mSize, registerTileM);
    mrDividing =
        mSize <= registerTileM
            ? mSize
            : pickDividing(mSize,
                           {registerTileM, registerTileM - 2, registerTileM + 2,
                            registerTileM - 1, registerTileM + 1});
  }
  int64_t k = 1;
  for (unsigned d : dims->k)
    k *= ranges[d];

  // The outer tile of jn: the largest multiple of nr within the panel
  // budget, preferring one that divides the dim.
  int64_t budget = std::max<int64_t>(
      nr, panelBytes / std::max<int64_t>(1, k * elt.getWidth() / 8));
  int64_t tileN = 0;
  if (nSize > budget) {
    int64_t best = 0;
    for (int64_t t = (budget / nr) * nr; t >= nr; t -= nr)
      if (nSize % t == 0) {
        best = t;
        break;
      }
    tileN = best; // A partial block would make the inner tiles dynamic.
  }

  ContractionPlan plan;
  int64_t rank = ranges.size();
  plan.outer.assign(rank, 0);
  plan.inner.assign(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    bool reduction = llvm::is_contained(dims->k, d);
    if (!reduction && d != jm && d != jn)
      plan.outer[d] = 1;
  }
  plan.outer[jn] = tileN;
  plan.inner[jn] = nr;
  if (jm >= 0)
    plan.inner[jm] = mr;
  // Too few blocks for the threads (a small output plane, batch 1): split
  // the register tile's other dim too, in blocks of whole register tiles
  // that divide it, so that every block stays static.
  int64_t blocks = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (plan.outer[d] != 0)
      blocks *= llvm::divideCeil(ranges[d], plan.outer[d]);
  if (jm >= 0 && chunks > 1 && blocks < chunks) {
    int64_t mSize = ranges[jm];
    int64_t want = llvm::divideCeil(chunks, blocks);
    for (int64_t t = (mSize / want / mrDividing) * mrDividing; t >= mrDividing;
         t -= mrDividing)
      if (mSize % t == 0) {
        plan.outer[jm] = t;
        plan.inner[jm] = mrDividing;
        break;
      }
  }
  // bf16 products summed by vdpbf16ps take two consecutive k per lane: a
  // single even reduction dim steps by two (Bf16DotContract below).
  if (bf16Dot && dims->k.size() == 1 && ranges[dims->k[0]] % 2 == 0 &&
      llvm::all_of(op.getDpsInputs(), [](Value v) {
        return getElementTypeOrSelf(v.getType()).isBF16();
      }))
    plan.inner[dims->k[0]] = 2;
  // k in chunks whose nr-wide panel slice takes `kChunkBytes` (L1-sized):
  // where the whole panel does not fit them and the block has several row
  // tiles, each chunk of the panel is read once from memory (the weights
  // of a late ResNet layer stream from DRAM) and then from L1 by every row
  // tile, instead of every row tile sweeping the whole panel. At least two
  // chunks; the last takes the remainder. Not in the loops of
  // kiln-cpu-image-loops, whose tiles write into the loop's result.
  //
  // Automatic (kChunkBytes < 0): 16 KiB chunks only where the panel is an
  // operand read in place, its rows wider than the register tile (a
  // weight-left MatMul's activation, [K, N] with N > nr): each k then
  // touches a row's slice across two cache lines, and the block's slice
  // of the panel, past `panelBytes`, would come from L3 or memory for
  // every one of at least 8 row tiles (a MatMul of a [512, 4608] weight by
  // a [4608, 49] activation: 1.40-1.48x ONNX Runtime's time against
  // 1.54-1.81x in one sweep on 2 Zen 3 cores). Packed panels (a constant weight
  // laid out [N / nr, K, nr]) are read contiguously and stay one sweep: chunks
  // were 1.0-1.3x slower there (docs/performance.md).
  if (dims->k.size() == 1 && jm >= 0 && !op->getParentOfType<scf::ForOp>()) {
    int64_t kd = dims->k[0], kSize = ranges[kd];
    int64_t rows = plan.outer[jm] ? plan.outer[jm] : ranges[jm];
    auto widePanelPastBudget = [&](OpOperand *in) {
      auto type = dyn_cast<ShapedType>(in->get().getType());
      AffineMap map = op.getMatchingIndexingMap(in);
      if (!type || !type.hasStaticShape() || map.getNumResults() == 0 ||
          map.getResults().back() != outMap.getResults().back())
        return false;
      int64_t eltBytes =
          std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      int64_t rowBytes = type.getShape().back() * eltBytes;
      int64_t sliceBytes = nr * eltBytes;
      int64_t touched = std::min<int64_t>(
          rowBytes, int64_t(llvm::alignTo(sliceBytes, 64)) + 64);
      return rowBytes > sliceBytes && k * touched > panelBytes;
    };
    int64_t chunkBytes =
        kChunkBytes >= 0 ? kChunkBytes
        : rows >= 8 * plan.inner[jm] &&
                llvm::any_of(op.getDpsInputOperands(), widePanelPastBudget)
            ? 16384
            : 0;
    int64_t inBytes = 4;
    for (Value v : op.getDpsInputs())
      inBytes = std::min<int64_t>(
          inBytes,
          getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth() / 8);
    int64_t kc = (chunkBytes / (nr * std::max<int64_t>(1, inBytes))) & ~1;
    if (kc >= 16 && kSize >= 2 * kc && rows > plan.inner[jm]) {
      plan.kDim = kd;
      plan.kChunk = kc;
    }
  }
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims->k, d))
      plan.interchange.push_back(d);
  for (unsigned d : dims->k)
    plan.interchange.push_back(d);
  plan.peel.push_back(jn);
  if (jm >= 0)
    plan.peel.push_back(jm);
  return plan;
}

SmallVector<OpFoldResult> asIndexAttrs(OpBuilder &b, ArrayRef<int64_t> v) {
  return llvm::map_to_vector(
      v, [&](int64_t x) -> OpFoldResult { return b.getIndexAttr(x); });
}

/// Tiles `op` into an scf.forall with `sizes` (0: not tiled); returns the
/// tiled op inside it.
FailureOr<Operation *> tileWithForall(RewriterBase &rewriter, Operation *op,
                                      ArrayRef<int64_t> sizes) {
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
      .setTileSizes(asIndexAttrs(rewriter, sizes));
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  return tiled->tiledOps.front();
}

/// An elementwise generic whose body is a long chain of scalar ops (a
/// quantized model's QuantizeLinear/DequantizeLinear pairs around each op
/// of a GELU, say): each element's chain is latency-bound, and LLVM's
/// vectorizer interleaves one vector at a time. Its innermost loop is
/// tiled by `kChainVectors` vectors and vectorized at that width, so each
/// op of the chain is that many independent vector ops in a row.
///
/// Copies too (a `linalg.transpose`, `linalg.copy` or generic that yields
/// an input) whose innermost loop runs along the input's last dim, or not
/// at all (a broadcast): the head split of attention, [b, s, h, d] to
/// [b, h, s, d]. As loops, LLVM unrolls each d-long row copy whole into
/// scalar loads and stores (it cannot vectorize them: source and
/// destination are views of one arena at offsets it cannot tell apart),
/// and loop strength reduction then takes about 0.15 s on each: 7 of
/// BERT-base's 40 s of compile time. Vectorized here, each row is a few
/// vector loads and stores; the width is the largest of 4, 2 or 1 vectors
/// that divides the row.
constexpr int64_t kChainVectors = 4;
constexpr int64_t kChainOps = 12;

/// Whether `op`'s body only yields an input that its innermost loop reads
/// contiguously (the input's last dim) or not at all.
bool isRowCopy(linalg::LinalgOp op) {
  Block &body = op->getRegion(0).front();
  if (!body.without_terminator().empty())
    return false;
  auto arg = dyn_cast<BlockArgument>(body.getTerminator()->getOperand(0));
  if (!arg || arg.getOwner() != &body ||
      arg.getArgNumber() >= op.getNumDpsInputs())
    return false;
  AffineMap map =
      op.getMatchingIndexingMap(op.getDpsInputOperand(arg.getArgNumber()));
  unsigned last = op.getNumLoops() - 1;
  if (map.getNumResults() == 0)
    return true;
  if (map.getResults().back() == getAffineDimExpr(last, op.getContext()))
    return true;
  return !map.isFunctionOfDim(last);
}

/// Whether `init` is a fresh tensor (an empty one, or a block of an
/// scf.forall's output, through slices): not a loop-carried value, which
/// a copy overwrites in place (an LSTM's state) and whose tiled loops
/// bufferization could no longer prove in place.
bool freshDestination(Value init) {
  while (auto slice = init.getDefiningOp<tensor::ExtractSliceOp>())
    init = slice.getSource();
  if (init.getDefiningOp<tensor::EmptyOp>())
    return true;
  auto arg = dyn_cast<BlockArgument>(init);
  return arg && isa<scf::ForallOp>(arg.getOwner()->getParentOp());
}

void vectorizeChain(RewriterBase &rewriter, Operation *target,
                    unsigned vectorBits) {
  auto op = dyn_cast<linalg::LinalgOp>(target);
  if (!op ||
      !isa<linalg::GenericOp, linalg::TransposeOp, linalg::CopyOp>(target) ||
      !op.hasPureTensorSemantics() || op.hasIndexSemantics() ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumLoops() == 0 ||
      op->getNumResults() != 1 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isProjectedPermutation(); }))
    return;
  Block &body = op->getRegion(0).front();
  int64_t ops = 0, widest = 8;
  for (Operation &inner : body.without_terminator()) {
    if (inner.getNumRegions() || !isMemoryEffectFree(&inner))
      return;
    ++ops;
    for (Type t : inner.getResultTypes())
      if (t.isIntOrFloat())
        widest = std::max<int64_t>(widest, t.getIntOrFloatBitWidth());
  }
  bool copy = isRowCopy(op);
  if (copy) {
    if (!freshDestination(op.getDpsInits()[0]))
      return;
    Type elt = getElementTypeOrSelf(op->getResult(0).getType());
    if (!elt.isIntOrFloat())
      return;
    widest = std::max<int64_t>(8, elt.getIntOrFloatBitWidth());
  } else if (ops < kChainOps ||
             !body.getArgument(op.getNumDpsInputs()).use_empty()) {
    return;
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return;
  int64_t lanes = std::max<int64_t>(1, vectorBits / widest);
  int64_t width = kChainVectors * lanes;
  if (copy)
    while (width > lanes && ranges.back() % width)
      width /= 2;
  if (ranges.back() % width)
    return;
  SmallVector<int64_t> sizes(ranges.size(), 1);
  sizes.back() = width;
  rewriter.setInsertionPoint(op);
  scf::SCFTilingOptions options;
  options.setTileSizes(asIndexAttrs(rewriter, sizes));
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return;
  rewriter.replaceOp(op, tiled->replacements);
  auto tile = cast<linalg::LinalgOp>(tiled->tiledOps.front());
  rewriter.setInsertionPoint(tile);
  FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
      rewriter, tile, sizes, SmallVector<bool>(sizes.size(), false));
  if (succeeded(vectorized))
    rewriter.replaceOp(tile, vectorized->replacements);
}

/// A copy that transposes (a `linalg.transpose`, or a generic that yields
/// its one input) whose innermost loop reads the input across its rows
/// (a channels-last result brought back to NCHW, [n, h, w, c] to
/// [n, c, h, w]): as loops in the output's order, each step of the
/// innermost loop reads another cache line, and a block of the threads'
/// split (8 channels of a 111x111 plane, a 788 KB stride through a 3.2 MB
/// input) is swept once per channel, out of L2 every time. Its loops are
/// interchanged to run along the input's contiguous dim innermost (the
/// other dims keep their order), so each line read is used whole and the
/// writes advance along a few rows of the output at once. Returns the
/// rewritten op, or `target` where it does not apply.
Operation *interchangeStridedCopy(RewriterBase &rewriter, Operation *target) {
  auto op = dyn_cast<linalg::LinalgOp>(target);
  if (!op || !isa<linalg::GenericOp, linalg::TransposeOp>(target) ||
      !op.hasPureTensorSemantics() || op.hasIndexSemantics() ||
      op.getNumDpsInputs() != 1 || op->getNumResults() != 1 ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumLoops() < 2)
    return target;
  Block &body = op->getRegion(0).front();
  auto arg = dyn_cast<BlockArgument>(body.getTerminator()->getOperand(0));
  if (!body.without_terminator().empty() || !arg || arg.getArgNumber() != 0)
    return target;
  AffineMap in = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (!in.isPermutation() || !out.isIdentity() ||
      llvm::any_of(ranges, ShapedType::isDynamic))
    return target;
  // The input's innermost dim of more than one element.
  int64_t q = -1;
  for (AffineExpr e : llvm::reverse(in.getResults())) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (ranges[d] > 1) {
      q = d;
      break;
    }
  }
  unsigned last = op.getNumLoops() - 1;
  while (last > 0 && ranges[last] == 1)
    --last;
  if (q < 0 || q == (int64_t)last)
    return target;
  SmallVector<unsigned> order;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (d != q)
      order.push_back(d);
  order.push_back(q);
  rewriter.setInsertionPoint(target);
  linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(target);
  if (!generic) {
    FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
    if (failed(g))
      return target;
    generic = *g;
  }
  FailureOr<linalg::GenericOp> swapped =
      linalg::interchangeGenericOp(rewriter, generic, order);
  return succeeded(swapped) ? swapped->getOperation() : generic.getOperation();
}

/// A part of a contraction split along its reduction dim, and whether it
/// computes the first or the last of the reduction.
struct ReductionPart {
  Operation *op;
  bool first, last;
};

/// Splits `op` along its reduction dim `kDim` into chunks of `kc`: the
/// first chunk (summing into op's init), an scf.for over the middle ones
/// (each summing into the sums so far), and the last, which takes the
/// remainder (kc to 2 kc - 1 of k). Each part is op's tiled implementation
/// on its chunk, so its operands are static slices.
FailureOr<SmallVector<ReductionPart>> splitReduction(RewriterBase &rewriter,
                                                     Operation *op,
                                                     int64_t kDim, int64_t kc) {
  auto ti = cast<TilingInterface>(op);
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Range> domain = ti.getIterationDomain(rewriter);
  SmallVector<OpFoldResult> offsets, sizes;
  for (const Range &r : domain) {
    offsets.push_back(r.offset);
    sizes.push_back(r.size);
  }
  std::optional<int64_t> kSize = getConstantIntValue(domain[kDim].size);
  if (!kSize || *kSize < 2 * kc)
    return failure();
  int64_t lastOffset = (*kSize / kc - 1) * kc;
  // The tiled implementation at k in [offset, offset + size), summing into
  // `init` instead of a slice of op's init (all of it: k is not an output
  // dim).
  auto chunkAt = [&](OpFoldResult offset, int64_t size,
                     Value init) -> Operation * {
    offsets[kDim] = offset;
    sizes[kDim] = rewriter.getIndexAttr(size);
    FailureOr<TilingResult> t =
        ti.getTiledImplementation(rewriter, offsets, sizes);
    if (failed(t) || t->tiledOps.size() != 1 ||
        t->tiledOps.front()->getNumResults() != 1 ||
        t->tiledOps.front()->getResult(0).getType() != init.getType())
      return nullptr;
    Operation *tiled = t->tiledOps.front();
    cast<DestinationStyleOpInterface>(tiled).getDpsInitsMutable()[0].set(init);
    return tiled;
  };
  SmallVector<ReductionPart> parts;
  Operation *first =
      chunkAt(rewriter.getIndexAttr(0), kc,
              cast<DestinationStyleOpInterface>(op).getDpsInits()[0]);
  if (!first)
    return failure();
  parts.push_back({first, true, false});
  Value sums = first->getResult(0);
  if (lastOffset > kc) {
    bool ok = true;
    Operation *middle = nullptr;
    auto loop = scf::ForOp::create(
        rewriter, loc, arith::ConstantIndexOp::create(rewriter, loc, kc),
        arith::ConstantIndexOp::create(rewriter, loc, lastOffset),
        arith::ConstantIndexOp::create(rewriter, loc, kc), ValueRange{sums},
        [&](OpBuilder &nb, Location nl, Value k, ValueRange iter) {
          OpBuilder::InsertionGuard guard(rewriter);
          rewriter.setInsertionPointToEnd(nb.getInsertionBlock());
          middle = chunkAt(k, kc, iter[0]);
          ok = middle != nullptr;
          scf::YieldOp::create(rewriter, nl,
                               ok ? middle->getResult(0) : iter[0]);
        });
    if (!ok)
      return failure();
    parts.push_back({middle, false, false});
    sums = loop.getResult(0);
    rewriter.setInsertionPointAfter(loop);
  }
  Operation *last =
      chunkAt(rewriter.getIndexAttr(lastOffset), *kSize - lastOffset, sums);
  if (!last)
    return failure();
  parts.push_back({last, false, true});
  rewriter.replaceOp(op, last->getResults());
  return parts;
}

/// Tiles `op` for the cache, then (with `plan.kChunk`) splits it into
/// chunks of its reduction, then tiles each part for registers, and peels
/// the register loops that do not divide their dims, so that every
/// register tile has a static shape (the peeled remainder is one smaller
/// static tile). The register tiles are marked with `kRegisterTile`; those
/// of the first part start from `start`, those of the last apply the
/// epilogue.
LogicalResult tile(RewriterBase &rewriter, linalg::LinalgOp op,
                   const ContractionPlan &plan, std::optional<int64_t> epilogue,
                   std::optional<int64_t> start) {
  op->setAttr(kRegisterTile, rewriter.getUnitAttr());
  if (start) // Its tiles, counted: each must start from it.
    op->setAttr(kStart, rewriter.getI64IntegerAttr(*start));
  Operation *current = op;
  if (llvm::any_of(plan.outer, [](int64_t t) { return t != 0; })) {
    FailureOr<Operation *> tiled = tileWithForall(rewriter, op, plan.outer);
    if (failed(tiled))
      return failure();
    current = *tiled;
  }
  SmallVector<ReductionPart> parts = {{current, true, true}};
  if (plan.kChunk > 0) {
    FailureOr<SmallVector<ReductionPart>> split =
        splitReduction(rewriter, current, plan.kDim, plan.kChunk);
    if (failed(split))
      return failure();
    parts = std::move(*split);
  }
  for (const ReductionPart &part : parts) {
    if (!part.first)
      part.op->removeAttr(kStart);
    scf::SCFTilingOptions inner;
    inner.setTileSizes(asIndexAttrs(rewriter, plan.inner))
        .setInterchange(plan.interchange);
    rewriter.setInsertionPoint(part.op);
    FailureOr<scf::SCFTilingResult> tiled =
        scf::tileUsingSCF(rewriter, cast<TilingInterface>(part.op), inner);
    if (failed(tiled))
      return failure();
    rewriter.replaceOp(part.op, tiled->replacements);
    if (tiled->loops.size() != plan.interchange.size())
      continue; // Nothing to peel.
    // The reduction loop is innermost (one reduction dim: checked by the
    // caller); peeling clones it with its mark.
    if (epilogue && part.last)
      tiled->loops.back()->setAttr(kEpilogue,
                                   rewriter.getI64IntegerAttr(*epilogue));
    if (start && part.first)
      tiled->loops.back()->setAttr(kStart, rewriter.getI64IntegerAttr(*start));
    // Innermost first: peeling an outer loop clones the inner ones, peeled.
    for (int64_t i = plan.interchange.size() - 1; i >= 0; --i) {
      if (!llvm::is_contained(plan.peel, plan.interchange[i]))
        continue;
      auto loop = dyn_cast<scf::ForOp>(tiled->loops[i].getOperation());
      scf::ForOp partial;
      if (loop)
        (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial);
    }
  }
  return success();
}

/// The forall tiles that split one parallel loop of `op` into `chunks`
/// blocks: the outermost parallel loop with at least two iterations. None
/// for small or dynamic ops. Fills are split too: one of -inf (MaxPool's
/// start) is a loop of stores, not a memset.
std::optional<SmallVector<int64_t>>
planParallel(linalg::LinalgOp op, int64_t chunks, int64_t minIterations) {
  if (chunks < 2 || !op.hasPureTensorSemantics() ||
      op->getParentOfType<scf::ForallOp>())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  int64_t total = 1;
  for (int64_t r : ranges)
    total *= r;
  if (total < minIterations)
    return std::nullopt;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  // Dims that an indexing map reads through a floordiv or a mod: the slice
  // of a block of them is not the span of its ends, so they are not split.
  llvm::SmallBitVector nonlinear(ranges.size());
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr e : map.getResults())
      e.walk([&](AffineExpr sub) {
        auto bin = dyn_cast<AffineBinaryOpExpr>(sub);
        if (!bin || bin.getKind() == AffineExprKind::Add ||
            bin.getKind() == AffineExprKind::Mul)
          return;
        bin.walk([&](AffineExpr leaf) {
          if (auto de = dyn_cast<AffineDimExpr>(leaf))
            nonlinear.set(de.getPosition());
        });
      });
  for (auto [d, r] : llvm::enumerate(ranges)) {
    if (iters[d] != utils::IteratorType::parallel || r < 2 || nonlinear.test(d))
      continue;
    SmallVector<int64_t> tiles(ranges.size(), 0);
    tiles[d] = llvm::divideCeil(r, std::min(r, chunks));
    return tiles;
  }
  return std::nullopt;
}

/// The indices in a tiled contraction's whole result of element
/// `indices` of `base`, a register tile's slice: the offsets of the slices
/// between them summed (walkTileSlices). Nothing where the chain is not
/// such slices and loops.
std::optional<SmallVector<Value>> resultIndices(OpBuilder &b, Value base,
                                                ValueRange indices) {
  SmallVector<Value> idx(indices.begin(), indices.end());
  Location loc = base.getLoc();
  if (failed(walkTileSlices(base, [&](tensor::ExtractSliceOp slice) {
        for (auto [d, offset] : llvm::enumerate(slice.getMixedOffsets()))
          if (!isConstantIntValue(offset, 0))
            idx[d] = arith::AddIOp::create(
                b, loc, idx[d],
                getValueOrCreateConstantIndexOp(b, loc, offset));
      })))
    return std::nullopt;
  return idx;
}

/// Where the input that holds the output's contiguous dim (the register
/// tile's vectors) is computed at run time and has another dim innermost
/// (attention's K, read as K^T), each vector of a register tile would be
/// gathered element by element at every step of k: the input is copied
/// once with that dim innermost instead, by a `linalg.transpose` (composed
/// with the transpose that made it, if any: attention's head split), and
/// read so. Only where each copied element is then read at least
/// `minReuse` times. Constant inputs are kiln-pack-weights' to reorder.
void relayoutVectorOperand(RewriterBase &rewriter, linalg::GenericOp op,
                           int64_t minReuse) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.back().getNumResults() == 0)
    return;
  auto last = dyn_cast<AffineDimExpr>(maps.back().getResults().back());
  if (!last)
    return;
  unsigned jn = last.getPosition();
  int64_t which = -1;
  for (unsigned i = 0; i < 2; ++i)
    if (maps[i].isFunctionOfDim(jn)) {
      if (which >= 0)
        return;
      which = i;
    }
  if (which < 0)
    return;
  AffineMap map = maps[which];
  int64_t pos = kiln::pureDimResult(map, jn);
  int64_t rank = map.getNumResults();
  if (pos < 0 || pos == rank - 1)
    return;
  Value input = op.getDpsInputs()[which];
  if (matchPattern(input, m_Constant()))
    return;
  auto type = cast<RankedTensorType>(input.getType());
  int64_t iterations = 1;
  for (int64_t r : ranges)
    iterations *= r;
  if (iterations < minReuse * type.getNumElements())
    return;

  // The input's dims, `pos` moved last; through the transpose that made
  // the input, when nothing else reads it, from that one's source.
  SmallVector<int64_t> perm;
  for (int64_t r = 0; r < rank; ++r)
    if (r != pos)
      perm.push_back(r);
  perm.push_back(pos);
  Value source = input;
  SmallVector<int64_t> sourcePerm = perm;
  auto producer = input.getDefiningOp<linalg::TransposeOp>();
  if (producer && input.hasOneUse()) {
    source = producer.getInput();
    ArrayRef<int64_t> inner = producer.getPermutation();
    for (int64_t r = 0; r < rank; ++r)
      sourcePerm[r] = inner[perm[r]];
  }
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> results;
  for (int64_t r : perm) {
    shape.push_back(type.getDimSize(r));
    results.push_back(map.getResult(r));
  }
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  auto copy =
      linalg::TransposeOp::create(rewriter, loc, source, empty, sourcePerm);
  maps[which] = AffineMap::get(map.getNumDims(), 0, results, op.getContext());
  rewriter.modifyOpInPlace(op, [&] {
    op->setOperand(which, copy->getResult(0));
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
  if (producer && producer->use_empty())
    rewriter.eraseOp(producer);
}

/// A register tile's `vector.contract` of bf16 values (widened to f32 by
/// `arith.extf`, or not) into f32 accumulators, over one reduction dim of
/// two -- what a bf16 contraction stepping k by two vectorizes to -- as
/// AVX-512 BF16 dot products (`x86vector.avx512.dot`, vdpbf16ps: per f32
/// lane, the products of two bf16 pairs added to it). The operands, unit
/// dims aside: the vectorized one over (k, n), the other over (m, k), the
/// accumulator over (m, n), n a multiple of the lanes. The two rows of the
/// vectorized operand are interleaved (one shuffle per vector of lanes)
/// and each row's pair of the other is broadcast as one 32-bit value; per
/// row and vector, one dot product. The sum differs from two f32 FMAs only
/// in rounding: vdpbf16ps rounds to nearest even after each product's add
/// and flushes denormals; each product of two bf16 values is exact in f32.
struct Bf16DotContract : public OpRewritePattern<vector::ContractionOp> {
  Bf16DotContract(MLIRContext *ctx, int64_t lanes)
      : OpRewritePattern(ctx), lanes(lanes) {}
  int64_t lanes;

  /// `v` before its widening from bf16, or null.
  static Value bf16Source(Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      v = ext.getIn();
    auto t = dyn_cast<VectorType>(v.getType());
    return t && t.getElementType().isBF16() ? v : Value();
  }

  /// The dims of `map`'s results that are not unit dims (`bounds` 1).
  static SmallVector<unsigned> nonUnitDims(AffineMap map,
                                           ArrayRef<int64_t> bounds) {
    SmallVector<unsigned> dims;
    for (AffineExpr e : map.getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      if (bounds[d] != 1)
        dims.push_back(d);
    }
    return dims;
  }

  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (op.getKind() != vector::CombiningKind::ADD || !accType ||
        !accType.getElementType().isF32())
      return failure();
    Value lhs = bf16Source(op.getLhs()), rhs = bf16Source(op.getRhs());
    if (!lhs || !rhs)
      return failure();
    SmallVector<int64_t> bounds;
    op.getIterationBounds(bounds);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<vector::IteratorType> iters = op.getIteratorTypesArray();
    // k: the one reduction dim of two; the others are unit dims.
    int64_t k = -1;
    for (auto [d, it] : llvm::enumerate(iters)) {
      if (it != vector::IteratorType::reduction || bounds[d] == 1)
        continue;
      if (k >= 0 || bounds[d] != 2)
        return failure();
      k = d;
    }
    SmallVector<unsigned> acc = nonUnitDims(maps[2], bounds);
    if (k < 0 || acc.empty() || acc.size() > 2)
      return failure();
    unsigned n = acc.back();
    std::optional<unsigned> m;
    if (acc.size() == 2)
      m = acc.front();
    int64_t nSize = bounds[n], mSize = m ? bounds[*m] : 1;
    if (nSize % lanes != 0)
      return failure();
    // vec: the operand over (k, n); bcast: the one over (m, k) or (k).
    SmallVector<unsigned> l = nonUnitDims(maps[0], bounds),
                          r = nonUnitDims(maps[1], bounds);
    SmallVector<unsigned> kn = {(unsigned)k, n};
    SmallVector<unsigned> mk = {(unsigned)k};
    if (m)
      mk.insert(mk.begin(), *m);
    Value vec, bcast;
    if (r == kn && l == mk) {
      vec = rhs;
      bcast = lhs;
    } else if (l == kn && r == mk) {
      vec = lhs;
      bcast = rhs;
    } else {
      return failure();
    }

    Location loc = op.getLoc();
    Type bf16 = rewriter.getBF16Type(), f32 = rewriter.getF32Type();
    Value rows = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({2, nSize}, bf16), vec);
    Value row0 = vector::ExtractOp::create(rewriter, loc, rows, 0);
    Value row1 = vector::ExtractOp::create(rewriter, loc, rows, 1);
    // Per vector of lanes: its columns' two k interleaved.
    SmallVector<Value> pairs;
    for (int64_t c = 0; c < nSize / lanes; ++c) {
      SmallVector<int64_t> mask;
      for (int64_t i = 0; i < lanes; ++i) {
        mask.push_back(c * lanes + i);
        mask.push_back(nSize + c * lanes + i);
      }
      pairs.push_back(
          vector::ShuffleOp::create(rewriter, loc, row0, row1, mask));
    }
    Value left = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({mSize, 2}, bf16), bcast);
    Value sums = vector::ShapeCastOp::create(
        rewriter, loc, VectorType::get({mSize, nSize}, f32), op.getAcc());
    auto pairType = VectorType::get({2 * lanes}, bf16);
    auto laneType = VectorType::get({lanes}, f32);
    for (int64_t i = 0; i < mSize; ++i) {
      Value pair = vector::ExtractOp::create(rewriter, loc, left, i);
      Value word = vector::BitCastOp::create(
          rewriter, loc, VectorType::get({1}, rewriter.getI32Type()), pair);
      Value words = vector::BroadcastOp::create(
          rewriter, loc, VectorType::get({lanes}, rewriter.getI32Type()), word);
      Value a = vector::BitCastOp::create(rewriter, loc, pairType, words);
      Value row = vector::ExtractOp::create(rewriter, loc, sums, i);
      for (int64_t c = 0; c < nSize / lanes; ++c) {
        Value part = vector::ExtractStridedSliceOp::create(
            rewriter, loc, row, ArrayRef<int64_t>{c * lanes},
            ArrayRef<int64_t>{lanes}, ArrayRef<int64_t>{1});
        Value dot = x86vector::DotBF16Op::create(rewriter, loc, laneType, part,
                                                 a, pairs[c]);
        row = vector::InsertStridedSliceOp::create(rewriter, loc, dot, row,
                                                   ArrayRef<int64_t>{c * lanes},
                                                   ArrayRef<int64_t>{1});
      }
      sums = vector::InsertOp::create(rewriter, loc, row, sums, i);
    }
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(op, accType, sums);
    return success();
  }
};

struct TileAndVectorizePass
    : public kiln::impl::KilnCpuTileAndVectorizeBase<TileAndVectorizePass> {
  using Base::Base;
  void runOnOperation() override {
    std::vector<std::pair<linalg::LinalgOp, ContractionPlan>> work;
    SmallVector<std::pair<linalg::LinalgOp, SmallVector<int64_t>>> spread;
    // Elementwise consumers computed on the register tiles of their
    // contraction (work[i] has epilogue epilogues[i], or null).
    SmallVector<linalg::GenericOp> epilogues;
    // Where epilogues[i] is a residual Add (+ Relu): what it reads besides
    // the contraction.
    SmallVector<std::optional<kiln::cpu::ResidualEpilogue>> residuals;
    // Ops that the contractions take (themselves, their epilogues, the ops
    // computing their starts): not spread over threads on their own.
    llvm::SmallPtrSet<Operation *, 8> taken;
    // Where each contraction's sums start (work[i]'s in starts[i]), when
    // its init is a broadcast value: computed in registers, the init then
    // not written at all.
    SmallVector<std::optional<AccumulatorStart>> starts;
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    SmallVector<linalg::LinalgOp> chains;
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      relayoutVectorOperand(rewriter, op, /*minReuse=*/4);
    getOperation().walk([&](linalg::LinalgOp op) {
      auto plan = planContraction(op, vectorBits, registerTileM, panelBytes,
                                  parallelChunks, bf16Dot, kChunkBytes);
      if (!plan)
        return;
      work.emplace_back(op, std::move(*plan));
      taken.insert(op);
      linalg::GenericOp e = op.getNumReductionLoops() == 1
                                ? kiln::cpu::findEpilogue(op)
                                : nullptr;
      residuals.push_back(std::nullopt);
      if (!e && op.getNumReductionLoops() == 1 && fuseResiduals)
        if ((residuals.back() = kiln::cpu::findResidualEpilogue(op)))
          e = residuals.back()->op;
      // A fused residual is read where the tiles write, found through
      // slices of the whole result: not through a chunked reduction's.
      if (residuals.back())
        work.back().second.kChunk = 0;
      epilogues.push_back(e);
      if (e)
        taken.insert(e);
      starts.push_back(op.getNumReductionLoops() == 1
                           ? findAccumulatorStart(op.getDpsInits()[0])
                           : std::nullopt);
      if (starts.back())
        for (Operation *c : starts.back()->chain)
          taken.insert(c); // Likely dead once the tiles start in registers.
    });
    getOperation().walk([&](linalg::LinalgOp op) {
      if (taken.contains(op))
        return;
      if (auto tiles = planParallel(op, parallelChunks, 1 << 14))
        spread.emplace_back(op, std::move(*tiles));
    });
    // Other ops: their loops stay scalar (LLVM vectorizes the innermost),
    // but the blocks of one parallel loop may run on different threads.
    // Long elementwise chains are vectorized here, several vectors a step.
    for (auto &[op, tiles] : spread) {
      FailureOr<Operation *> tiled = tileWithForall(rewriter, op, tiles);
      if (succeeded(tiled))
        vectorizeChain(rewriter, interchangeStridedCopy(rewriter, *tiled),
                       vectorBits);
    }
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!taken.contains(op) && !op->getParentOfType<scf::ForallOp>())
        chains.push_back(op);
    });
    for (linalg::LinalgOp op : chains)
      vectorizeChain(rewriter, op, vectorBits);
    for (auto [i, item] : llvm::enumerate(work)) {
      auto &[op, plan] = item;
      std::optional<int64_t> epilogue, start;
      if (epilogues[i])
        epilogue = i;
      if (starts[i])
        start = i;
      if (failed(tile(rewriter, op, plan, epilogue, start))) {
        op->emitOpError("could not be tiled for registers");
        return signalPassFailure();
      }
    }
    if (work.empty())
      return;
    {
      RewritePatternSet patterns(ctx);
      kiln::cpu::addCanonicalizations(ctx, patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }

    // Vectorize each register tile at its (now static) shape. A tile that
    // is still dynamic stays scalar: correct, only slower.
    SmallVector<linalg::LinalgOp> tiles;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kRegisterTile))
        tiles.push_back(op);
    });
    SmallVector<int64_t> tilesOf(work.size(), 0);
    for (linalg::LinalgOp op : tiles) {
      op->removeAttr(kRegisterTile);
      if (auto mark = op->getAttrOfType<IntegerAttr>(kStart)) {
        ++tilesOf[mark.getInt()];
        op->removeAttr(kStart);
      }
      SmallVector<int64_t> sizes = op.getStaticLoopRanges();
      if (llvm::any_of(sizes, ShapedType::isDynamic))
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::VectorizationResult> vectorized = linalg::vectorize(
          rewriter, op, sizes, SmallVector<bool>(sizes.size(), false));
      if (succeeded(vectorized))
        rewriter.replaceOp(op, vectorized->replacements);
    }

    // The vectorizer reads operands with broadcasting transfers and reduces
    // their product; fold that into vector.contract (an outer product per
    // step of k once lowered).
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorReductionToContractPatterns(patterns);
      // A half-precision tile widens its operands after broadcasting them
      // to the tile's shape: widening first lets the broadcasts fold into
      // the contraction, which then reads the loaded vectors.
      vector::populateSinkVectorOpsPatterns(patterns);
      kiln::cpu::addCanonicalizations(ctx, patterns);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }
    if (bf16Dot) {
      RewritePatternSet patterns(ctx);
      patterns.add<Bf16DotContract>(ctx, vectorBits / 32);
      if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
        return signalPassFailure();
    }

    // Keep each accumulator in registers across its reduction loop: hoist
    // the loop-invariant slice, then the transfer pair on it (inner loops
    // first).
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      LoopLikeOpInterface l = loop;
      for (int i = 0; i < 2; ++i)
        l = hoistLoopInvariantSubsets(rewriter, l);
    }
    startAccumulators(rewriter, starts, tilesOf);
    fuseEpilogues(rewriter, epilogues, residuals);
  }

  /// Starts the accumulators of each contraction with a start from it, in
  /// registers, instead of reading them from the init; when every register
  /// tile of the contraction did, the init is not needed and the loops
  /// write into an empty tensor (no pass to broadcast the bias, no reads
  /// of it). A tile whose accumulator is not held in registers across its
  /// reduction loop keeps the whole contraction's init.
  void startAccumulators(RewriterBase &rewriter,
                         ArrayRef<std::optional<AccumulatorStart>> starts,
                         ArrayRef<int64_t> tilesOf) {
    SmallVector<int64_t> marked(starts.size(), 0), started(starts.size(), 0);
    // The loop operands that take each contraction's whole init.
    SmallVector<llvm::SmallPtrSet<OpOperand *, 2>> rootUses(starts.size());
    getOperation().walk([&](scf::ForOp loop) {
      auto mark = loop->getAttrOfType<IntegerAttr>(kStart);
      if (!mark)
        return;
      loop->removeAttr(kStart);
      int64_t i = mark.getInt();
      ++marked[i];
      // The accumulators: the loop's vectors, read before it (a tile not
      // hoisted carries only its tensor).
      bool ok = true;
      SmallVector<std::pair<vector::TransferReadOp, Value>> reads;
      for (Value init : loop.getInitArgs()) {
        if (!isa<VectorType>(init.getType()))
          continue; // The tensors it carries unchanged.
        auto read = init.getDefiningOp<vector::TransferReadOp>();
        if (!read || !isa<RankedTensorType>(read.getBase().getType())) {
          ok = false;
          break;
        }
        rewriter.setInsertionPoint(read);
        OpOperand *rootUse = nullptr;
        Value v = startValue(rewriter, read, *starts[i], rootUse);
        if (!v) {
          ok = false;
          break;
        }
        reads.emplace_back(read, v);
        rootUses[i].insert(rootUse);
      }
      if (!ok || reads.empty())
        return;
      for (auto [read, v] : reads)
        rewriter.replaceAllUsesWith(read.getResult(), v);
      ++started[i];
    });
    for (auto [i, uses] : llvm::enumerate(rootUses)) {
      // Each register tile in a reduction loop of its own, each started
      // (a tile whose loop was folded away would read the init).
      if (!starts[i] || tilesOf[i] == 0 || marked[i] != tilesOf[i] ||
          started[i] != marked[i])
        continue;
      // Every tile starts in registers: the init's values are not read.
      // The op that computes them (a fill, a bias broadcast, a transpose
      // of one), seen through reshapes, is replaced by its own
      // destination, so the loops write where it would have (a reshape of
      // the buffer that the results take).
      for (OpOperand *use : uses) {
        Value v = use->get();
        while (v.hasOneUse()) {
          Operation *def = v.getDefiningOp();
          if (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
                  def)) {
            v = def->getOperand(0);
            continue;
          }
          auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(def);
          if (dps && dps.getNumDpsInits() == 1 && def->getNumResults() == 1 &&
              isa<linalg::LinalgOp>(def)) {
            rewriter.replaceAllUsesWith(v, dps.getDpsInits()[0]);
            v = nullptr;
          }
          break;
        }
        if (!v)
          continue;
        // Shared with other users: a new empty tensor.
        auto type = cast<RankedTensorType>(use->get().getType());
        rewriter.setInsertionPoint(use->getOwner());
        Value empty =
            tensor::EmptyOp::create(rewriter, use->getOwner()->getLoc(),
                                    type.getShape(), type.getElementType());
        rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(empty); });
      }
    }
  }

  /// Applies each epilogue to the accumulators of its contraction's
  /// register tiles, where they are written after their reduction loop,
  /// and drops the separate pass over the result. A contraction with a
  /// register tile whose accumulator is not held in registers across the
  /// loop keeps its epilogue as a separate op.
  void fuseEpilogues(
      RewriterBase &rewriter, ArrayRef<linalg::GenericOp> epilogues,
      ArrayRef<std::optional<kiln::cpu::ResidualEpilogue>> residuals) {
    DenseMap<int64_t, SmallVector<vector::TransferWriteOp>> writes;
    DenseSet<int64_t> unfusable;
    getOperation().walk([&](scf::ForOp loop) {
      auto mark = loop->getAttrOfType<IntegerAttr>(kEpilogue);
      if (!mark)
        return;
      loop->removeAttr(kEpilogue);
      int64_t i = mark.getInt();
      vector::TransferWriteOp write;
      int vectors = 0;
      for (Value r : loop.getResults()) {
        if (!isa<VectorType>(r.getType()))
          continue;
        ++vectors;
        if (r.hasOneUse())
          write = dyn_cast<vector::TransferWriteOp>(*r.getUsers().begin());
      }
      if (vectors != 1 || !write)
        unfusable.insert(i);
      else
        writes[i].push_back(write);
    });
    for (auto &[i, list] : writes) {
      if (unfusable.contains(i))
        continue;
      linalg::GenericOp e = epilogues[i];
      // A residual is read where each tile writes: its indices in the
      // contraction's result, summed through the slices of the tiled
      // loops. All tiles must find theirs, or none is fused.
      SmallVector<Value> residualReads(list.size());
      if (residuals[i]) {
        Value view = kiln::cpu::residualAsResult(rewriter, *residuals[i]);
        bool all = true;
        for (auto [w, write] : llvm::enumerate(list)) {
          rewriter.setInsertionPoint(write);
          std::optional<SmallVector<Value>> idx =
              resultIndices(rewriter, write.getBase(), write.getIndices());
          if (!idx) {
            all = false;
            break;
          }
          Type elt = write.getVectorType().getElementType();
          Value pad = arith::ConstantOp::create(rewriter, write.getLoc(),
                                                rewriter.getZeroAttr(elt));
          residualReads[w] = vector::TransferReadOp::create(
              rewriter, write.getLoc(), write.getVectorType(), view, *idx, pad,
              write.getPermutationMap(), write.getInBoundsValues());
        }
        if (!all)
          continue; // The reads made are dead.
      }
      unsigned accInput = residuals[i] ? residuals[i]->accInput : 0;
      for (auto [w, write] : llvm::enumerate(list)) {
        rewriter.setInsertionPoint(write);
        Value v = kiln::cpu::applyEpilogue(rewriter, e, write.getVector(),
                                           accInput, residualReads[w]);
        rewriter.modifyOpInPlace(
            write, [&] { write.getValueToStoreMutable().assign(v); });
      }
      Value result = e.getDpsInputOperand(accInput)->get();
      Value dest = e.getDpsInits()[0];
      rewriter.replaceOp(e, result);
      writeInPlace(rewriter, result, dest);
    }
  }

  /// Makes the contraction whose result (through reshapes) is `result`
  /// write into `dest`, the init of its fused epilogue, where it wrote into
  /// an empty tensor (its accumulators start in registers): in an image
  /// loop of kiln-cpu-image-loops `dest` is the slice of the loop's result
  /// that the epilogue wrote, and the tiles so land there instead of in a
  /// buffer copied into it afterwards.
  void writeInPlace(RewriterBase &rewriter, Value result, Value dest) {
    Operation *destDef = dest.getDefiningOp();
    if (!destDef || isa<tensor::EmptyOp>(destDef))
      return;
    auto throughReshapes = [](Value v) {
      while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
          v.getDefiningOp()))
        v = v.getDefiningOp()->getOperand(0);
      return v;
    };
    auto forall = dyn_cast_or_null<scf::ForallOp>(
        throughReshapes(result).getDefiningOp());
    if (!forall || forall->getNumResults() != 1)
      return;
    // The uses of `v` by ops that are not dead (the broadcast that the
    // accumulators' start replaced is).
    auto liveUses = [](Value v) {
      return llvm::count_if(v.getUses(), [](OpOperand &u) {
        return !isOpTriviallyDead(u.getOwner());
      });
    };
    // The operand of the reshape chain into the loop that the empty
    // tensor fills.
    OpOperand *use = &forall.getOutputsMutable()[0];
    while (auto *def = use->get().getDefiningOp()) {
      if (isa<tensor::EmptyOp>(def))
        break;
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def) ||
          liveUses(use->get()) != 1)
        return;
      use = &def->getOpOperand(0);
    }
    auto empty = use->get().getDefiningOp<tensor::EmptyOp>();
    auto et = cast<RankedTensorType>(use->get().getType());
    auto dt = dyn_cast<RankedTensorType>(dest.getType());
    if (!empty || !dt || !et.hasStaticShape() || !dt.hasStaticShape() ||
        et.getNumElements() != dt.getNumElements() ||
        et.getElementType() != dt.getElementType())
      return;
    // `dest` (a slice of the image loop's carried tensor, maybe reshaped)
    // is computed after the contraction: it moves before it, with the ops
    // it is computed from, where they are pure and in the same block.
    Operation *user = use->getOwner();
    DominanceInfo dominance(getOperation());
    SmallVector<Operation *> toMove;
    std::function<bool(Operation *, int)> collect = [&](Operation *op,
                                                        int depth) {
      if (dominance.properlyDominates(op, user))
        return true;
      if (depth > 4 || op->getBlock() != user->getBlock() ||
          op->getNumRegions() != 0 || !isMemoryEffectFree(op))
        return false;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp()) {
          if (!collect(def, depth + 1))
            return false;
        } else if (!dominance.properlyDominates(v, user)) {
          return false;
        }
      if (!llvm::is_contained(toMove, op))
        toMove.push_back(op); // After the ops it reads.
      return true;
    };
    if (!collect(destDef, 0))
      return;
    for (Operation *op : toMove)
      rewriter.moveOpBefore(op, user);
    rewriter.setInsertionPoint(user);
    Location loc = dest.getLoc();
    // All dims of a rank-`rank` tensor in one group.
    auto allDims = [](int64_t rank) {
      return SmallVector<ReassociationIndices>{
          llvm::to_vector(llvm::seq<int64_t>(0, rank))};
    };
    Value v = dest;
    if (dt.getRank() != 1)
      v = tensor::CollapseShapeOp::create(
          rewriter, loc,
          RankedTensorType::get({dt.getNumElements()}, dt.getElementType()), v,
          allDims(dt.getRank()));
    if (et.getRank() != 1)
      v = tensor::ExpandShapeOp::create(rewriter, loc, et, v,
                                        allDims(et.getRank()));
    rewriter.modifyOpInPlace(user, [&] { use->set(v); });
  }
};

} // namespace
