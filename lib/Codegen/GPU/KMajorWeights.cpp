//===- KMajorWeights.cpp - 8-bit constant operands stored K-major ---------===//
//
// The GPU's 8-bit tensor-core tiles (mma.sync m16n8k32 and wgmma k32, s8
// or e4m3) take both operands K-major: there is no transposing ldmatrix
// or wgmma layout for 8-bit elements. An operand whose innermost index is
// not the reduction (a MatMul's [K, N] weight) is then transposed as it
// is staged, element by element, with no cp.async. Where that operand is
// a constant, its bytes are reordered now so that the reduction dims come
// innermost, and the generic reads the copy through the permuted map: the
// same values at the same loop indices, whatever the body.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUKMAJORWEIGHTS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The order of `map`'s results (a projected permutation) that puts those
/// of reduction dims last, each group in its current order; nothing where
/// the reduction dims are innermost already or `map` is not such a map.
std::optional<SmallVector<int64_t>>
kMajorOrder(AffineMap map, ArrayRef<utils::IteratorType> iterators) {
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
    return std::nullopt;
  SmallVector<int64_t> outer, inner;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    unsigned d = cast<AffineDimExpr>(e).getPosition();
    (iterators[d] == utils::IteratorType::reduction ? inner : outer)
        .push_back(i);
  }
  if (inner.empty() || outer.empty())
    return std::nullopt;
  SmallVector<int64_t> order = outer;
  order.append(inner);
  if (llvm::equal(order, llvm::seq<int64_t>(0, order.size())))
    return std::nullopt;
  return order;
}

struct GpuKMajorWeights
    : public kiln::impl::KilnGpuKMajorWeightsBase<GpuKMajorWeights> {
  void runOnOperation() override {
    // One reordered copy per constant and order.
    DenseMap<std::pair<Operation *, Attribute>, Value> copies;
    getOperation().walk([&](linalg::GenericOp g) {
      if (!g.hasPureTensorSemantics() || g.getNumReductionLoops() == 0)
        return;
      SmallVector<AffineMap> maps = g.getIndexingMapsArray();
      bool changed = false;
      for (OpOperand *in : g.getDpsInputOperands()) {
        auto cst = in->get().getDefiningOp<arith::ConstantOp>();
        Type elt = cst ? getElementTypeOrSelf(cst.getType()) : Type();
        if (!elt || !elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() != 8)
          continue;
        unsigned i = in->getOperandNumber();
        std::optional<SmallVector<int64_t>> order =
            kMajorOrder(maps[i], g.getIteratorTypesArray());
        if (!order)
          continue;
        Value &copy = copies[{cst, OpBuilder(g).getDenseI64ArrayAttr(*order)}];
        if (!copy) {
          OpBuilder b(cst);
          copy = kiln::permutedConstant(b, cst, *order, "kiln_k_major");
        }
        if (!copy)
          continue;
        SmallVector<AffineExpr> results;
        for (int64_t d : *order)
          results.push_back(maps[i].getResult(d));
        maps[i] =
            AffineMap::get(maps[i].getNumDims(), 0, results, &getContext());
        in->set(copy);
        changed = true;
      }
      if (changed)
        g.setIndexingMapsAttr(OpBuilder(g).getAffineMapArrayAttr(maps));
    });
  }
};

} // namespace
