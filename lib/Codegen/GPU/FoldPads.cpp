//===- FoldPads.cpp - read padded inputs of GPU loop kernels in place -----===//
//
// A padded input (a depthwise convolution's, a pooling window's) becomes,
// once bufferized, a fill of a buffer with the padding value and a copy of
// the source into its interior: two kernels and a buffer that only the
// consumer reads. Before bufferization, each linalg op that reads a
// `tensor.pad` (and is not a contraction `kiln-gpu-contractions` tiles,
// which reads a zero-padded input through in its own tile loads) becomes
// a generic that reads the pad's source itself, inside its body: at the
// index less the low padding, clamped into the source, with the padding
// value selected outside it. The pad goes; the memory plan then sees the
// source live until the consumer and no padded buffer at all.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "llvm/ADT/SmallBitVector.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUFOLDPADS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A pad the consumer can read through: static padding, a static source
/// and a constant padding value.
bool foldable(tensor::PadOp pad) {
  return pad && pad.getResult().hasOneUse() && pad.getConstantPaddingValue() &&
         pad.getSourceType().hasStaticShape() &&
         pad.getResultType().hasStaticShape() &&
         llvm::none_of(pad.getStaticLow(), ShapedType::isDynamic) &&
         pad.getConstantPaddingValue().getDefiningOp() &&
         pad.getConstantPaddingValue().getParentRegion() != &pad.getRegion();
}

/// The element of `pad` at position `at` (one index per dim), read from
/// its source: the index less the low padding, clamped into the source,
/// and the padding value where it falls outside. Selects, no control flow,
/// so that a reduction's body stays a straight line.
Value readThrough(OpBuilder &b, Location loc, tensor::PadOp pad,
                  ArrayRef<Value> at) {
  RankedTensorType sourceType = pad.getSourceType();
  Value inside, zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> indices;
  for (auto [d, idx] : llvm::enumerate(at)) {
    int64_t low = pad.getStaticLow()[d];
    int64_t size = sourceType.getDimSize(d);
    if (low == 0 && size == pad.getResultType().getDimSize(d)) {
      indices.push_back(idx);
      continue;
    }
    Value pos = idx;
    if (low != 0)
      pos = arith::SubIOp::create(b, loc, idx,
                                  arith::ConstantIndexOp::create(b, loc, low));
    // Unsigned: a position before the source wraps past its end.
    Value ok =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, pos,
                              arith::ConstantIndexOp::create(b, loc, size));
    inside = inside ? arith::AndIOp::create(b, loc, inside, ok) : ok;
    indices.push_back(arith::SelectOp::create(b, loc, ok, pos, zero));
  }
  Value read = tensor::ExtractOp::create(b, loc, pad.getSource(), indices);
  if (!inside)
    return read;
  return arith::SelectOp::create(b, loc, inside, read,
                                 pad.getConstantPaddingValue());
}

struct GpuFoldPads : public kiln::impl::KilnGpuFoldPadsBase<GpuFoldPads> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && !kiln::isGpuTiledContraction(op) &&
          llvm::any_of(op.getDpsInputs(), [](Value v) {
            return foldable(v.getDefiningOp<tensor::PadOp>());
          }))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : candidates) {
      rewriter.setInsertionPoint(op);
      linalg::GenericOp generic =
          dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> g =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(g))
          continue;
        generic = *g;
      }
      // The inputs that stay, and the pads read through.
      SmallVector<Value> inputs;
      SmallVector<AffineMap> maps;
      SmallVector<std::pair<unsigned, tensor::PadOp>> folded;
      for (OpOperand &operand : generic->getOpOperands()) {
        auto pad = operand.get().getDefiningOp<tensor::PadOp>();
        if (generic.isDpsInput(&operand) && foldable(pad)) {
          folded.push_back({operand.getOperandNumber(), pad});
          continue;
        }
        if (generic.isDpsInput(&operand))
          inputs.push_back(operand.get());
        maps.push_back(generic.getMatchingIndexingMap(&operand));
      }
      // Each loop's bounds come from an operand that indexes by it: a
      // reduction whose only input is the pad (a ReduceSum of a padded
      // tensor) keeps it, else its reduced loop would be in no operand.
      llvm::SmallBitVector spanned(generic.getNumLoops());
      for (AffineMap map : maps)
        for (AffineExpr e : map.getResults())
          if (auto d = dyn_cast<AffineDimExpr>(e))
            spanned.set(d.getPosition());
      if (!spanned.all())
        continue;
      auto replacement = linalg::GenericOp::create(
          rewriter, generic.getLoc(), generic->getResultTypes(), inputs,
          generic.getDpsInits(), maps, generic.getIteratorTypesArray());
      rewriter.inlineRegionBefore(generic.getRegion(), replacement.getRegion(),
                                  replacement.getRegion().end());
      Block &body = replacement.getRegion().front();
      rewriter.setInsertionPointToStart(&body);
      Location loc = generic.getLoc();
      SmallVector<Value> ivs;
      for (unsigned d = 0; d < generic.getNumLoops(); ++d)
        ivs.push_back(linalg::IndexOp::create(rewriter, loc, d));
      for (auto [number, pad] : llvm::reverse(folded)) {
        AffineMap map = generic.getIndexingMapsArray()[number];
        SmallVector<Value> at;
        for (unsigned r = 0; r < map.getNumResults(); ++r)
          at.push_back(affine::AffineApplyOp::create(rewriter, loc,
                                                     map.getSubMap({r}), ivs));
        Value element = readThrough(rewriter, loc, pad, at);
        rewriter.replaceAllUsesWith(body.getArgument(number), element);
        body.eraseArgument(number);
      }
      rewriter.replaceOp(generic, replacement->getResults());
      for (auto [number, pad] : folded)
        if (pad->use_empty())
          rewriter.eraseOp(pad);
    }
  }
};
} // namespace
