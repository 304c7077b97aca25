//===- SplitK.cpp - split long reductions of small GPU contractions -------===//
//
// A contraction `kiln-gpu-contractions` tiles gets one block per 64x64
// output tile; when the output has fewer tiles than the GPU has
// multiprocessors and the reduction is long, its longest reduction dim is
// split in S parts: S partial contractions (one more batch dim of the tiled
// kernel) and an elementwise sum of them with the initial value. See the
// pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "../GemmDims.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUSPLITK
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Whether `v` is a softmax's probabilities as the Attention lowering
/// writes them: an elementwise generic that divides by a row sum (a
/// reduction's result) and rounds to a half type.
bool isProbabilities(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInits() != 1)
    return false;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  auto trunc = yield.getOperand(0).getDefiningOp<arith::TruncFOp>();
  if (!trunc)
    return false;
  Value d = trunc.getIn();
  if (auto select = d.getDefiningOp<arith::SelectOp>())
    d = select.getFalseValue();
  if (!d.getDefiningOp<arith::DivFOp>())
    return false;
  return llvm::any_of(g.getDpsInputs(), [](Value in) {
    auto sum = in.getDefiningOp<linalg::GenericOp>();
    return sum && sum.getNumReductionLoops() > 0;
  });
}

/// `v` with dim `j` (of extent S * E/S) expanded into [S, E/S]. A
/// zero-padded tensor that is not padded along `j` is rebuilt as the
/// padding of its expanded source, so that the tiled kernel still reads
/// that source in place.
Value expandDim(OpBuilder &b, Location loc, Value v, int64_t j, int64_t s) {
  auto type = cast<RankedTensorType>(v.getType());
  auto expandedShape = [&](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> out(shape.begin(), shape.begin() + j);
    out.push_back(s);
    out.push_back(shape[j] / s);
    out.append(shape.begin() + j + 1, shape.end());
    return out;
  };
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0, r = type.getRank(); i < r; ++i) {
    if (i < j)
      groups.push_back({i});
    else if (i == j)
      groups.push_back({i, i + 1});
    else
      groups.push_back({i + 1});
  }
  auto expand = [&](Value x) -> Value {
    auto t = cast<RankedTensorType>(x.getType());
    return tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get(expandedShape(t.getShape()), t.getElementType()),
        x, groups);
  };
  if (auto pad = v.getDefiningOp<tensor::PadOp>()) {
    Attribute padAttr;
    Value padValue = pad.getConstantPaddingValue();
    SmallVector<int64_t> low(pad.getStaticLow()), high(pad.getStaticHigh());
    auto srcType = pad.getSourceType();
    if (padValue && matchPattern(padValue, m_Constant(&padAttr)) &&
        low[j] == 0 && high[j] == 0 && srcType.hasStaticShape() &&
        llvm::none_of(low, ShapedType::isDynamic) &&
        llvm::none_of(high, ShapedType::isDynamic)) {
      Value source = expand(pad.getSource());
      low.insert(low.begin() + j, 0);
      high.insert(high.begin() + j, 0);
      auto resultType = RankedTensorType::get(expandedShape(type.getShape()),
                                              type.getElementType());
      // The value may be a constant inside the pad's body.
      padValue = arith::ConstantOp::create(b, loc, cast<TypedAttr>(padAttr));
      return tensor::PadOp::create(b, loc, resultType, source,
                                   getAsIndexOpFoldResult(b.getContext(), low),
                                   getAsIndexOpFoldResult(b.getContext(), high),
                                   padValue, pad.getNofold());
    }
  }
  return expand(v);
}

struct GpuSplitKPass : public kiln::impl::KilnGpuSplitKBase<GpuSplitKPass> {
  using Base::Base;

  /// The number of splits of `op`'s reduction dim `d`, or 1.
  int64_t chooseSplits(const kiln::GpuContractionDims &dims, unsigned d) {
    int64_t blocks = dims.extent(dims.batch) *
                     ceilDiv(dims.extent(dims.m), kiln::kGpuContractionTileM) *
                     ceilDiv(dims.extent(dims.n), kiln::kGpuContractionTileN);
    if (targetBlocks <= 0 || blocks >= targetBlocks)
      return 1;
    int64_t want = ceilDiv(targetBlocks, blocks);
    int64_t e = dims.sizes[d], k = dims.extent(dims.k);
    int64_t best = 1;
    for (int64_t s = 2; s <= std::min<int64_t>(maxSplits, e); ++s) {
      if (e % s || k / s < minK)
        continue;
      best = s;
      if (s >= want)
        break;
    }
    return best;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!testMutation.empty() && testMutation != "skip-last-split") {
      module.emitError("kiln-gpu-split-k: unknown test-mutation '")
          << testMutation << "'";
      return signalPassFailure();
    }
    int64_t counters = 0;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      SmallVector<linalg::LinalgOp> candidates;
      for (Operation &op : fn.getBody().front())
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
          if (linalgOp.hasPureTensorSemantics() &&
              linalgOp->getNumResults() == 1)
            candidates.push_back(linalgOp);
      for (linalg::LinalgOp op : candidates)
        counters = std::max(counters, split(op));
    }
    if (lastBlockSum && counters > 0)
      addCounters(module, counters);
  }

  /// @kiln_split_k_counters with at least `n` zero counters.
  void addCounters(ModuleOp module, int64_t n) {
    SymbolTable symbols(module);
    if (auto old = symbols.lookup<memref::GlobalOp>(kiln::kSplitKCounters)) {
      if (old.getType().getNumElements() >= n)
        return;
      symbols.erase(old);
    }
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto type = MemRefType::get({n}, b.getI32Type());
    auto global = memref::GlobalOp::create(
        b, module.getLoc(), kiln::kSplitKCounters, b.getStringAttr("private"),
        type,
        DenseElementsAttr::get(RankedTensorType::get({n}, b.getI32Type()),
                               b.getI32IntegerAttr(0)),
        /*constant=*/false, /*alignment=*/nullptr);
    symbols.insert(global);
  }

  /// Splits `op` where it should be; returns the counters its sum in the
  /// last block would take (a tile of 16x16 per counter), or 0.
  int64_t split(linalg::LinalgOp op) {
    std::optional<kiln::GpuContractionDims> dims =
        kiln::matchGpuTiledContraction(op);
    if (!dims || dims->extent(dims->m) < minSize ||
        dims->extent(dims->n) < minSize)
      return 0;
    // An attention's context (probabilities times V) stays whole for
    // kiln-gpu-flash-attention.
    if (keepAttention && llvm::any_of(op.getDpsInputs(), isProbabilities))
      return 0;
    // A 2:4 weight's compressed layout follows its own K: not split.
    if (kiln::sparseWeightGlobal(op.getDpsInputs()[0]) ||
        kiln::sparseWeightGlobal(op.getDpsInputs()[1]))
      return 0;
    Value init = op.getDpsInits()[0];
    auto outType = cast<RankedTensorType>(init.getType());
    if (!outType.getElementType().isF32() || !outType.hasStaticShape())
      return 0;
    // The longest reduction dim, read as itself by one result of each
    // input.
    unsigned d = dims->k.front();
    for (unsigned k : dims->k)
      if (dims->sizes[k] > dims->sizes[d])
        d = k;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    int64_t pos[2] = {kiln::pureDimResult(maps[0], d),
                      kiln::pureDimResult(maps[1], d)};
    if (pos[0] < 0 || pos[1] < 0)
      return 0;
    int64_t s = chooseSplits(*dims, d);
    if (s <= 1)
      return 0;

    OpBuilder b(op);
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    unsigned loops = op.getNumLoops();
    AffineExpr sDim = getAffineDimExpr(loops, ctx);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> newMaps;
    for (unsigned i = 0; i < 2; ++i) {
      inputs.push_back(expandDim(b, loc, op.getDpsInputs()[i], pos[i], s));
      SmallVector<AffineExpr> results;
      for (auto [r, e] : llvm::enumerate(maps[i].getResults())) {
        if (static_cast<int64_t>(r) == pos[i])
          results.push_back(sDim);
        results.push_back(e);
      }
      newMaps.push_back(AffineMap::get(loops + 1, 0, results, ctx));
    }
    SmallVector<AffineExpr> outResults = {sDim};
    llvm::append_range(outResults, maps[2].getResults());
    newMaps.push_back(AffineMap::get(loops + 1, 0, outResults, ctx));

    // The partials: [S, out...], zero-filled.
    SmallVector<int64_t> partialShape = {s};
    llvm::append_range(partialShape, outType.getShape());
    Type f32 = outType.getElementType();
    Value empty = tensor::EmptyOp::create(b, loc, partialShape, f32);
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(f32));
    Value partialInit =
        linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    iterators.push_back(utils::IteratorType::parallel);
    // The original body, with the reduction dim now ranging over E/S.
    auto partial = linalg::GenericOp::create(
        b, loc, TypeRange{partialInit.getType()}, inputs,
        ValueRange{partialInit}, newMaps, iterators,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          IRMapping mapping;
          Block *body = op.getBlock();
          mapping.map(body->getArguments(), args);
          for (Operation &inner : body->without_terminator())
            nb.clone(inner, mapping);
          SmallVector<Value> yielded;
          for (Value v : body->getTerminator()->getOperands())
            yielded.push_back(mapping.lookupOrDefault(v));
          linalg::YieldOp::create(nb, nloc, yielded);
        });

    // init + p[0] + ... + p[S-1], elementwise. The initial value is an
    // input (or the fill's constant), not the sum's output, so that once
    // kiln-fuse-elementwise has fused the sum into its consumer the
    // init's buffer is neither written nor, for a fill, read.
    unsigned rank = outType.getRank();
    SmallVector<AffineMap> sumMaps;
    for (int64_t i = 0; i < s; ++i) {
      SmallVector<AffineExpr> results = {getAffineConstantExpr(i, ctx)};
      for (unsigned r = 0; r < rank; ++r)
        results.push_back(getAffineDimExpr(r, ctx));
      sumMaps.push_back(AffineMap::get(rank, 0, results, ctx));
    }
    SmallVector<Value> sumInputs(s, partial.getResult(0));
    Attribute initConstant;
    auto fill = init.getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.value(), m_Constant(&initConstant))) {
      initConstant = {};
      sumInputs.push_back(init);
      sumMaps.push_back(b.getMultiDimIdentityMap(rank));
    }
    sumMaps.push_back(b.getMultiDimIdentityMap(rank));
    Value sumInit = tensor::EmptyOp::create(b, loc, outType.getShape(), f32);
    auto sum = linalg::GenericOp::create(
        b, loc, TypeRange{outType}, sumInputs, ValueRange{sumInit}, sumMaps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          ValueRange parts = args.take_front(s);
          Value acc;
          if (!initConstant)
            acc = args[s];
          else if (!matchPattern(initConstant, m_AnyZeroFloat()))
            acc = arith::ConstantOp::create(nb, nloc,
                                            cast<TypedAttr>(initConstant));
          if (testMutation == "skip-last-split")
            parts = parts.drop_back();
          for (Value p : parts)
            acc = acc ? arith::AddFOp::create(nb, nloc, acc, p) : p;
          linalg::YieldOp::create(nb, nloc, acc);
        });
    op->getResult(0).replaceAllUsesWith(sum.getResult(0));
    SmallVector<Value> oldInputs = op.getDpsInputs();
    op->erase();
    // A padding rebuilt around the expanded source leaves the old one
    // unused.
    for (Value v : oldInputs)
      if (auto pad = v.getDefiningOp<tensor::PadOp>(); pad && pad->use_empty())
        pad->erase();
    return dims->extent(dims->batch) * ceilDiv(dims->extent(dims->m), 16) *
           ceilDiv(dims->extent(dims->n), 16);
  }
};
} // namespace
