//===- SinkTransposes.cpp - layout transposes moved until they cancel -----===//
//
// kiln-conv-to-gemm computes a small-plane convolution channels-last and
// transposes its result back to NCHW, and transposes a 1x1 convolution's
// NCHW input to channels-last. Between two such convolutions sit
// elementwise ops (ResNet's Relu, its residual Add + Relu, a quantized
// model's per-channel requantization), so every block transposes each
// tensor out and back in again. An elementwise op whose tensor operands
// are all transposes of the same permutation (but for broadcasts) is
// computed in its operands' layout instead and its result transposed:
// the transpose moves past it, and when it meets the next convolution's
// transpose back, upstream's folding of a transpose of a transpose drops
// both.
//
//===----------------------------------------------------------------------===//

#include "ConvLayout.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "kiln-sink-transposes"

namespace kiln {
#define GEN_PASS_DEF_KILNSINKTRANSPOSES
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A transposed value as an elementwise op reads it: `transpose(source)`,
/// or that collapsed to one dim (kiln-collapse-elementwise's form).
struct Transposed {
  Value source;
  ArrayRef<int64_t> perm;
  bool flat = false;
};

std::optional<Transposed> asTransposed(Value v) {
  bool flat = false;
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>()) {
    if (collapse.getResultType().getRank() != 1)
      return std::nullopt;
    v = collapse.getSrc();
    flat = true;
  }
  auto t = v.getDefiningOp<linalg::TransposeOp>();
  if (!t || !t.getInput().getType().hasStaticShape())
    return std::nullopt;
  return Transposed{t.getInput(), t.getPermutation(), flat};
}

/// The whole of a static tensor as one dim.
SmallVector<ReassociationIndices> allDims(Value v) {
  ReassociationIndices all;
  for (int64_t d = 0; d < cast<RankedTensorType>(v.getType()).getRank(); ++d)
    all.push_back(d);
  return {all};
}

/// An elementwise generic (one result, no index ops) whose tensor
/// operands read -- its init only where the body reads it -- are all
/// transposes of tensors of one shape by one permutation, but for
/// broadcasts (a per-channel scale or bias, a scalar tensor), becomes the
/// same op over those tensors, its result transposed back; a broadcast is
/// read through the permutation.
struct SinkThroughElementwise : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp g,
                                PatternRewriter &rewriter) const override {
    if (!g.hasPureTensorSemantics() || g.getNumDpsInits() != 1 ||
        g.getNumResults() != 1 || g.getNumReductionLoops() != 0 ||
        g.hasIndexSemantics() ||
        !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() ||
        !llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isProjectedPermutation(); }))
      return rewriter.notifyMatchFailure(g, "not elementwise");
    OpOperand *init = g.getDpsInitOperand(0);
    bool initRead = g.payloadUsesValueFromOperand(init);
    std::optional<Transposed> common;
    // Per operand, its source (null: not a tensor, or a broadcast: kept
    // as it is).
    SmallVector<Value> sources;
    SmallVector<OpOperand *> broadcasts;
    for (OpOperand &operand : g->getOpOperands()) {
      if (!isa<ShapedType>(operand.get().getType()) ||
          (&operand == init && !initRead)) {
        sources.push_back(nullptr);
        continue;
      }
      if (!g.getMatchingIndexingMap(&operand).isIdentity()) {
        broadcasts.push_back(&operand);
        sources.push_back(nullptr);
        continue;
      }
      std::optional<Transposed> t = asTransposed(operand.get());
      if (!t)
        return rewriter.notifyMatchFailure(g, "an operand is not transposed");
      if (common && (common->perm != t->perm || common->flat != t->flat ||
                     common->source.getType() != t->source.getType()))
        return rewriter.notifyMatchFailure(g, "operands transposed unlike");
      common = t;
      sources.push_back(t->source);
    }
    if (!common)
      return rewriter.notifyMatchFailure(g, "no transposed operand");
    // The op over the sources' dims: old dim i is source dim perm[i]. (A
    // collapsed op's only broadcasts are scalars.)
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    if (!common->flat) {
      AffineMap toOld =
          AffineMap::getPermutationMap(common->perm, g.getContext());
      for (OpOperand *b : broadcasts)
        maps[b->getOperandNumber()] =
            maps[b->getOperandNumber()].compose(toOld);
    }

    Location loc = g.getLoc();
    auto sourceType = cast<RankedTensorType>(common->source.getType());
    auto asRead = [&](Value source) -> Value {
      if (!common->flat)
        return source;
      return tensor::CollapseShapeOp::create(rewriter, loc, source,
                                             allDims(source));
    };
    SmallVector<Value> inputs;
    for (auto [i, in] : llvm::enumerate(g.getDpsInputs()))
      inputs.push_back(sources[i] ? asRead(sources[i]) : in);
    auto resultType = cast<RankedTensorType>(g.getResult(0).getType());
    Value newInit =
        initRead ? asRead(sources.back())
                 : tensor::EmptyOp::create(
                       rewriter, loc,
                       common->flat ? ArrayRef<int64_t>(resultType.getShape())
                                    : sourceType.getShape(),
                       resultType.getElementType())
                       .getResult();
    auto moved = linalg::GenericOp::create(
        rewriter, loc, TypeRange{newInit.getType()}, inputs,
        ValueRange{newInit}, maps, g.getIteratorTypesArray());
    rewriter.cloneRegionBefore(g.getRegion(), moved.getRegion(),
                               moved.getRegion().begin());
    moved->setDiscardableAttrs(g->getDiscardableAttrDictionary());

    // The result in the source layout, transposed back as before.
    Value result = moved.getResult(0);
    if (common->flat)
      result = tensor::ExpandShapeOp::create(
          rewriter, loc, sourceType.clone(resultType.getElementType()), result,
          allDims(common->source));
    Value back = kiln::transposed(rewriter, loc, result, common->perm);
    if (common->flat)
      back =
          tensor::CollapseShapeOp::create(rewriter, loc, back, allDims(back));
    rewriter.replaceOp(g, back);
    return success();
  }
};

struct SinkTransposesPass
    : public kiln::impl::KilnSinkTransposesBase<SinkTransposesPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<SinkThroughElementwise>(ctx);
    linalg::TransposeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
