//===- PackWeights.cpp - constant right-hand sides in register panels -----===//
//
// A contraction's vectorized operand (the one that holds the output's
// contiguous dim n) is read one register tile of nr elements at a time,
// walking k: with a row-major [K, N] weight every step of k jumps a whole
// row, so the register tile's loads hit a new cache line each time, and
// with a transposed [N, K] weight (Gemm with transB) they are gathers.
// When that operand is a constant, this pass rewrites it at compile time
// into panels,
//
//   packed[n / nr, ..., k, n % nr] = b[..., k, n]
//
// so that one panel (K x nr) is contiguous and the contraction streams it
// front to back. The contraction gets the split n as two loops (n / nr, and
// n % nr last) and writes an [..., N / nr, nr] view of its output, which is
// the same buffer. A transpose or reshape between the constant and the
// contraction is folded into the packing.
//
//===----------------------------------------------------------------------===//

#include "../GemmDims.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>

#define DEBUG_TYPE "kiln-pack-weights"

namespace kiln {
#define GEN_PASS_DEF_KILNPACKWEIGHTS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Weights of at least this many bytes whose n no register tile divides are
/// padded to whole panels (about an L2 cache: below it the unpacked rows
/// stay cached between steps of k).
constexpr int64_t kPadWeightsFromBytes = 1 << 20;

/// A constant seen through the ops that only reorder its elements: its
/// bytes, its shape as the transpose sees it, and `perm` (the constant's
/// dim that each dim of the contraction's operand reads).
struct ConstantView {
  ArrayRef<char> bytes;
  SmallVector<int64_t> shape;
  SmallVector<int64_t> perm;
  int64_t eltBytes = 0;
};

/// `v` as a constant, possibly behind one transpose and reshapes (which
/// keep the row-major element order).
std::optional<ConstantView> viewConstant(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  SmallVector<int64_t> perm =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  SmallVector<int64_t> shape(type.getShape());
  if (auto tr = v.getDefiningOp<linalg::TransposeOp>()) {
    perm = SmallVector<int64_t>(tr.getPermutation());
    v = tr.getInput();
    shape = SmallVector<int64_t>(cast<ShapedType>(v.getType()).getShape());
  }
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return std::nullopt;
  std::optional<ArrayRef<char>> bytes = kiln::rawConstantBytes(cst.getValue());
  int64_t eltBytes = type.getElementTypeBitWidth() / 8;
  if (!bytes || (int64_t)bytes->size() != type.getNumElements() * eltBytes)
    return std::nullopt;
  return ConstantView{*bytes, shape, perm, eltBytes};
}

/// `view` with its dim `dim` extended to `extent` by zeros.
std::vector<char> zeroExtended(const ConstantView &view, int64_t dim,
                               int64_t extent) {
  int64_t outer = 1, inner = view.eltBytes;
  for (int64_t d = 0; d < dim; ++d)
    outer *= view.shape[d];
  for (int64_t d = dim + 1; d < (int64_t)view.shape.size(); ++d)
    inner *= view.shape[d];
  int64_t from = view.shape[dim] * inner, to = extent * inner;
  std::vector<char> data(outer * to, 0);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(data.data() + o * to, view.bytes.data() + o * from, from);
  return data;
}

/// Rewrites `op` to read its constant operand `b` (index 1 or 0) in panels
/// of `nr` along dim `jn`. When `nr` does not divide n, the weight is
/// padded with zero columns to `paddedN` (a multiple of `nr`), the
/// contraction computes that many outputs into a padded accumulator, and
/// the first n are its result.
void pack(RewriterBase &rewriter, linalg::LinalgOp op, unsigned bIndex,
          ConstantView view, int64_t jn, int64_t nr, int64_t paddedN) {
  MLIRContext *ctx = op.getContext();
  unsigned numDims = op.getNumLoops();
  unsigned ji = numDims; // The new innermost dim: n % nr; jn becomes n / nr.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  OpOperand *bOperand = op.getDpsInputOperand(bIndex);
  AffineMap bMap = op.getMatchingIndexingMap(bOperand);
  Value oldB = bOperand->get();
  int64_t n = ranges[jn];
  std::vector<char> paddedBytes;
  if (paddedN != n) {
    std::optional<unsigned> nPos =
        bMap.getResultPosition(getAffineDimExpr(jn, ctx));
    int64_t constDim = view.perm[*nPos];
    paddedBytes = zeroExtended(view, constDim, paddedN);
    view.bytes = paddedBytes;
    view.shape[constDim] = paddedN;
    ranges[jn] = paddedN;
  }

  // The packed operand's dims (loop dims) in order: the operand's dims
  // without jn, n / nr just before the first reduction dim, n % nr last.
  SmallVector<unsigned> packedDims;
  bool placed = false;
  for (AffineExpr e : bMap.getResults()) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    if (d == jn)
      continue;
    if (!placed && iters[d] == utils::IteratorType::reduction) {
      packedDims.push_back(jn);
      placed = true;
    }
    packedDims.push_back(d);
  }
  if (!placed)
    packedDims.push_back(jn);
  packedDims.push_back(ji);

  // Element strides in the constant of each operand dim, then of each
  // packed dim.
  SmallVector<int64_t> constStrides(view.shape.size(), 1);
  for (int64_t i = (int64_t)view.shape.size() - 2; i >= 0; --i)
    constStrides[i] = constStrides[i + 1] * view.shape[i + 1];
  auto strideOfDim = [&](unsigned d) -> int64_t {
    for (auto [pos, e] : llvm::enumerate(bMap.getResults()))
      if (cast<AffineDimExpr>(e).getPosition() == d)
        return constStrides[view.perm[pos]];
    llvm_unreachable("dim not in the operand's map");
  };
  SmallVector<int64_t> packedShape, packedStrides;
  for (unsigned d : packedDims) {
    if (d == ji) {
      packedShape.push_back(nr);
      packedStrides.push_back(strideOfDim(jn));
    } else if (d == jn) {
      packedShape.push_back(ranges[jn] / nr);
      packedStrides.push_back(nr * strideOfDim(jn));
    } else {
      packedShape.push_back(ranges[d]);
      packedStrides.push_back(strideOfDim(d));
    }
  }

  // Gather the panels: an odometer over the packed shape, the innermost dim
  // unrolled into a strided copy.
  Type elt = getElementTypeOrSelf(oldB.getType());
  auto packedType = RankedTensorType::get(packedShape, elt);
  std::vector<char> data =
      kiln::gatherBytes(view.bytes, view.eltBytes, packedShape, packedStrides);

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(data), alignof(std::max_align_t));
  Value packed = arith::ConstantOp::create(
      rewriter, loc, packedType,
      DenseResourceElementsAttr::get(packedType, "kiln_packed",
                                     std::move(blob)));

  // The loops with n split: jn keeps its place as n / nr, ji is appended.
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, ctx); };
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  for (OpOperand *in : op.getDpsInputOperands()) {
    if (in == bOperand) {
      SmallVector<AffineExpr> r =
          llvm::map_to_vector(packedDims, [&](unsigned d) { return dim(d); });
      maps.push_back(AffineMap::get(numDims + 1, 0, r, ctx));
      inputs.push_back(packed);
    } else {
      AffineMap m = op.getMatchingIndexingMap(in);
      maps.push_back(AffineMap::get(numDims + 1, 0, m.getResults(), ctx));
      inputs.push_back(in->get());
    }
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  SmallVector<AffineExpr> outResults(outMap.getResults());
  outResults.push_back(dim(ji));
  maps.push_back(AffineMap::get(numDims + 1, 0, outResults, ctx));
  iters.push_back(utils::IteratorType::parallel);

  Location initLoc = loc;
  Value initValue = init->get();
  auto resultType = cast<RankedTensorType>(initValue.getType());
  int64_t rank = resultType.getRank();
  if (paddedN != n) {
    // The padded columns' accumulators start anywhere: they are dropped.
    SmallVector<OpFoldResult> low(rank, rewriter.getIndexAttr(0)),
        high(rank, rewriter.getIndexAttr(0));
    high.back() = rewriter.getIndexAttr(paddedN - n);
    Value zero = arith::ConstantOp::create(
        rewriter, initLoc, rewriter.getZeroAttr(resultType.getElementType()));
    initValue = tensor::PadOp::create(rewriter, initLoc,
                                      RankedTensorType::get(
                                          [&] {
                                            SmallVector<int64_t> shape(
                                                resultType.getShape());
                                            shape.back() = paddedN;
                                            return shape;
                                          }(),
                                          resultType.getElementType()),
                                      initValue, low, high, zero);
  }
  auto initType = cast<RankedTensorType>(initValue.getType());
  SmallVector<int64_t> expandedShape(initType.getShape());
  expandedShape.back() /= nr;
  expandedShape.push_back(nr);
  SmallVector<ReassociationIndices> assoc;
  for (int64_t i = 0; i + 1 < rank; ++i)
    assoc.push_back({i});
  assoc.push_back({rank - 1, rank});
  auto expandedType =
      RankedTensorType::get(expandedShape, initType.getElementType());
  Value expandedInit = tensor::ExpandShapeOp::create(
      rewriter, loc, expandedType, initValue, assoc);
  auto generic =
      linalg::GenericOp::create(rewriter, loc, TypeRange{expandedType}, inputs,
                                ValueRange{expandedInit}, maps, iters);
  rewriter.cloneRegionBefore(op->getRegion(0), generic.getRegion(),
                             generic.getRegion().begin());
  Value result = tensor::CollapseShapeOp::create(rewriter, loc, initType,
                                                 generic.getResult(0), assoc);
  if (paddedN != n) {
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)), sizes,
        unit(rank, rewriter.getIndexAttr(1));
    for (int64_t d : resultType.getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    result = tensor::ExtractSliceOp::create(rewriter, loc, resultType, result,
                                            offsets, sizes, unit);
  }
  rewriter.replaceOp(op, result);
  // The unpacked weight and the ops that only reordered it, once unused.
  for (Operation *def = oldB.getDefiningOp();
       def && def->use_empty() && isMemoryEffectFree(def);) {
    Operation *next =
        def->getNumOperands() ? def->getOperand(0).getDefiningOp() : nullptr;
    rewriter.eraseOp(def);
    def = next;
  }
}

struct PackWeightsPass
    : public kiln::impl::KilnPackWeightsBase<PackWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      // AMX tile products have their own packed layout.
      if (op->hasAttr(kiln::kAmxTilesAttr) ||
          !linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2 ||
          op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics() ||
          llvm::any_of(op.getIndexingMapsArray(), [](AffineMap m) {
            return !m.isProjectedPermutation(/*allowZeroInResults=*/false);
          }))
        continue;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::any_of(ranges, ShapedType::isDynamic))
        continue;
      auto elt = dyn_cast<FloatType>(
          getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()));
      if (!elt)
        continue;
      AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
      if (outMap.getNumResults() == 0)
        continue;
      int64_t jn =
          cast<AffineDimExpr>(outMap.getResults().back()).getPosition();
      // The operand that holds n (exactly one does, in a contraction).
      std::optional<unsigned> bIndex;
      for (unsigned i = 0; i < 2; ++i)
        if (op.getMatchingIndexingMap(op.getDpsInputOperand(i))
                .isFunctionOfDim(jn))
          bIndex = i;
      if (!bIndex)
        continue;
      Value b = op.getDpsInputOperand(*bIndex)->get();
      if (!kiln::widensInto(getElementTypeOrSelf(b.getType()), elt))
        continue;
      int64_t lanes = std::max<int64_t>(1, vectorBits / elt.getWidth());
      int64_t n = ranges[jn];
      int64_t nr = kiln::cpuRegisterTileWidth(n, lanes);
      if (nr == n)
        continue; // One register tile wide already.
      std::optional<ConstantView> view = viewConstant(b);
      if (!view)
        continue;
      // No whole vector divides n and the constant holds n outside its
      // innermost dim (Gemm's transB), so unpacked it would be gathered a
      // lane at a time: panels of half or a quarter of a vector (at least
      // 128 bits) when one divides n (a 1000-wide classifier on AVX-512
      // reads 8-lane panels).
      AffineMap bMap =
          op.getMatchingIndexingMap(op.getDpsInputOperand(*bIndex));
      std::optional<unsigned> nPos =
          bMap.getResultPosition(rewriter.getAffineDimExpr(jn));
      bool nInnermost =
          nPos && view->perm[*nPos] == (int64_t)view->shape.size() - 1;
      // Two-vector tiles over whole vectors with one left over (a
      // 1000-class weight with 8 lanes): panels padded to the tile,
      // whatever the weight's size.
      bool wholeVectors = n % nr != 0 && n % lanes == 0;
      int64_t minLanes = std::max<int64_t>(lanes / 4, 128 / elt.getWidth());
      for (int64_t w = lanes / 2;
           n % nr != 0 && !wholeVectors && !nInnermost && w >= minLanes; w /= 2)
        if (n % w == 0)
          nr = w;
      // No width divides n (an 8210-word vocabulary, a prime class
      // count): a weight past the caches gets the panels of the widest
      // register tile, the last one padded with zero columns. Unpacked,
      // each step of k would jump a whole row (or gather a lane at a time)
      // through memory; a small weight stays in cache and keeps its
      // peeled remainder.
      int64_t paddedN = n;
      if (n % nr != 0) {
        int64_t weightBytes = view->eltBytes;
        for (int64_t d : view->shape)
          weightBytes *= d;
        if (weightBytes < kPadWeightsFromBytes && !wholeVectors)
          continue;
        nr = kiln::cpuRegisterTileWidth(n, lanes);
        paddedN = llvm::alignTo(n, nr);
      }
      pack(rewriter, op, *bIndex, *view, jn, nr, paddedN);
    }
  }
};

} // namespace

std::vector<char> kiln::gatherBytes(ArrayRef<char> bytes, int64_t eltBytes,
                                    ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> strides) {
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  std::vector<char> data(total * eltBytes);
  if (shape.empty()) {
    std::memcpy(data.data(), bytes.data(), eltBytes);
    return data;
  }
  // An odometer over `shape`, the innermost dim a strided copy.
  int64_t rank = shape.size();
  SmallVector<int64_t> idx(rank, 0);
  int64_t inner = shape.back(), innerStride = strides.back();
  char *out = data.data();
  int64_t offset = 0; // In `bytes`, elements; of idx (inner at 0).
  for (int64_t done = 0; done < total; done += inner) {
    for (int64_t i = 0; i < inner; ++i, out += eltBytes)
      std::memcpy(out, bytes.data() + (offset + i * innerStride) * eltBytes,
                  eltBytes);
    for (int64_t q = rank - 2; q >= 0; --q) {
      offset += strides[q];
      if (++idx[q] < shape[q])
        break;
      offset -= strides[q] * shape[q];
      idx[q] = 0;
    }
  }
  return data;
}

std::optional<ArrayRef<char>> kiln::rawConstantBytes(Attribute value) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return std::nullopt;
    return dense.getRawData();
  }
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    return blob->getData();
  }
  return std::nullopt;
}

Value kiln::permutedConstant(OpBuilder &b, Value cst, ArrayRef<int64_t> perm,
                             StringRef name) {
  auto def = cst.getDefiningOp<arith::ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(cst.getType());
  if (!def || !type || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() % 8)
    return {};
  int64_t eltBytes = type.getElementType().getIntOrFloatBitWidth() / 8;
  std::optional<ArrayRef<char>> bytes = rawConstantBytes(def.getValue());
  if (!bytes || (int64_t)bytes->size() != type.getNumElements() * eltBytes)
    return {};
  int64_t rank = type.getRank();
  SmallVector<int64_t> oldStrides(rank, 1), shape, strides;
  for (int64_t d = rank - 2; d >= 0; --d)
    oldStrides[d] = oldStrides[d + 1] * type.getDimSize(d + 1);
  for (int64_t d : perm) {
    shape.push_back(type.getDimSize(d));
    strides.push_back(oldStrides[d]);
  }
  std::vector<char> out = gatherBytes(*bytes, eltBytes, shape, strides);
  auto permuted = RankedTensorType::get(shape, type.getElementType());
  return arith::ConstantOp::create(
      b, def.getLoc(), permuted,
      DenseResourceElementsAttr::get(
          permuted, name,
          HeapAsmResourceBlob::allocateAndCopyInferAlign(
              ArrayRef<char>(out.data(), out.size()))));
}
