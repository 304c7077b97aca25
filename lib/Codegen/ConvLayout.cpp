//===- ConvLayout.cpp - channels-last operands of 2-D convolutions --------===//
//
// Shared by kiln-conv-to-gemm (the CPU's channels-last GEMMs) and
// kiln-gpu-channels-last.
//
//===----------------------------------------------------------------------===//

#include "ConvLayout.h"

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;

Value kiln::transposed(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, v, empty, perm).getResult()[0];
}

std::optional<kiln::PlanePad> kiln::planePad(Value x, bool zeroOnly) {
  auto pad = x.getDefiningOp<tensor::PadOp>();
  if (!pad)
    return std::nullopt;
  Value padValue = pad.getConstantPaddingValue();
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  if (!padValue || !matchPattern(padValue, m_Constant()) ||
      (zeroOnly && !(matchPattern(padValue, m_AnyZeroFloat()) ||
                     matchPattern(padValue, m_Zero()))) ||
      ShapedType::isDynamicShape(low) || ShapedType::isDynamicShape(high) ||
      low.size() != 4 || low[0] != 0 || low[1] != 0 || high[0] != 0 ||
      high[1] != 0 || !pad.getSourceType().hasStaticShape())
    return std::nullopt;
  return PlanePad{pad.getSource(), low[2], low[3]};
}

std::optional<kiln::StaticConv> kiln::staticConv(linalg::LinalgOp conv) {
  StaticConv c{conv.getDpsInputs()[0],
               conv.getDpsInputs()[1],
               conv.getDpsInits()[0],
               {},
               {},
               {}};
  c.xt = dyn_cast<RankedTensorType>(c.x.getType());
  c.wt = dyn_cast<RankedTensorType>(c.w.getType());
  c.ot = dyn_cast<RankedTensorType>(c.init.getType());
  if (!c.xt || !c.wt || !c.ot || !c.xt.hasStaticShape() ||
      !c.wt.hasStaticShape() || !c.ot.hasStaticShape())
    return std::nullopt;
  return c;
}

Value kiln::nhwcInput(RewriterBase &b, Location loc, Value x,
                      int64_t channels) {
  auto xt = cast<RankedTensorType>(x.getType());
  std::optional<PlanePad> pad = planePad(x, /*zeroOnly=*/false);
  Value src = pad ? pad->source : x;
  auto st = cast<RankedTensorType>(src.getType());
  Type elt = st.getElementType();
  const int64_t toNhwc[] = {0, 2, 3, 1};
  SmallVector<int64_t> shape;
  for (int64_t d : toNhwc)
    shape.push_back(st.getDimSize(d));
  Value t;
  if (channels <= shape[3]) {
    t = transposed(b, loc, src, toNhwc);
  } else {
    // The channels widened with zeros: written whole, so that the pad of
    // the plane below stays a pad of the plane alone. The transpose is a
    // copy through a permuted map, into which kiln-fuse-elementwise can
    // fuse the op that produced `x` (the input's rounding to half).
    MLIRContext *ctx = b.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    t = linalg::GenericOp::create(
            b, loc, TypeRange{RankedTensorType::get(shape, elt)},
            ValueRange{src},
            ValueRange{tensor::EmptyOp::create(b, loc, shape, elt)},
            {AffineMap::get(4, 0, {d(0), d(3), d(1), d(2)}, ctx),
             AffineMap::getMultiDimIdentityMap(4, ctx)},
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [](OpBuilder &nb, Location nl, ValueRange a) {
              linalg::YieldOp::create(nb, nl, a[0]);
            })
            .getResult(0);
    SmallVector<int64_t> wide = shape;
    wide[3] = channels;
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
    Value filled = linalg::FillOp::create(
                       b, loc, zero,
                       tensor::EmptyOp::create(b, loc, wide, elt).getResult())
                       .getResult(0);
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0)), sizes,
        strides(4, b.getIndexAttr(1));
    for (int64_t d : shape)
      sizes.push_back(b.getIndexAttr(d));
    t = tensor::InsertSliceOp::create(b, loc, t, filled, offsets, sizes,
                                      strides);
    shape = wide;
  }
  if (!pad)
    return t;
  SmallVector<OpFoldResult> low(4, b.getIndexAttr(0)),
      high(4, b.getIndexAttr(0));
  low[1] = b.getIndexAttr(pad->top);
  low[2] = b.getIndexAttr(pad->left);
  high[1] = b.getIndexAttr(xt.getDimSize(2) - st.getDimSize(2) - pad->top);
  high[2] = b.getIndexAttr(xt.getDimSize(3) - st.getDimSize(3) - pad->left);
  shape[1] = xt.getDimSize(2);
  shape[2] = xt.getDimSize(3);
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, elt), t, low, high,
      x.getDefiningOp<tensor::PadOp>().getConstantPaddingValue());
}

Value kiln::channelsLastInit(RewriterBase &b, Location loc, Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  const int64_t perm[] = {0, 2, 3, 1}; // new dim i is old dim perm[i]
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  Type elt = type.getElementType();
  Value empty = tensor::EmptyOp::create(b, loc, shape, elt);
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return linalg::FillOp::create(b, loc, fill.getInputs()[0], empty)
        .getResult(0);
  auto g = init.getDefiningOp<linalg::GenericOp>();
  if (g && g.getNumDpsInits() == 1 && g.getNumLoops() == 4 &&
      g.getNumParallelLoops() == 4 &&
      g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() &&
      g.getRegion().front().getArgument(g.getNumDpsInputs()).use_empty()) {
    // The old loops (n, f, oh, ow) in terms of the new (n, oh, ow, f).
    MLIRContext *ctx = b.getContext();
    AffineMap oldOfNew =
        AffineMap::get(4, 0,
                       {getAffineDimExpr(0, ctx), getAffineDimExpr(3, ctx),
                        getAffineDimExpr(1, ctx), getAffineDimExpr(2, ctx)},
                       ctx);
    SmallVector<AffineMap> maps;
    for (OpOperand *in : g.getDpsInputOperands())
      maps.push_back(g.getMatchingIndexingMap(in).compose(oldOfNew));
    maps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
    auto rebuilt = linalg::GenericOp::create(
        b, loc, TypeRange{empty.getType()}, g.getDpsInputs(), ValueRange{empty},
        maps, g.getIteratorTypesArray());
    b.cloneRegionBefore(g.getRegion(), rebuilt.getRegion(),
                        rebuilt.getRegion().begin());
    return rebuilt.getResult(0);
  }
  // A broadcast of a 1-D tensor (the bias) that kiln-collapse-elementwise
  // collapsed to [N, F, OH * OW] and expanded back: a broadcast along the
  // same dim of the new layout.
  if (auto expand = init.getDefiningOp<tensor::ExpandShapeOp>()) {
    auto src = expand.getSrc().getDefiningOp<linalg::GenericOp>();
    if (src && src.getNumDpsInputs() == 1 && src.getNumDpsInits() == 1 &&
        src.getNumParallelLoops() == src.getNumLoops() &&
        src.getMatchingIndexingMap(src.getDpsInitOperand(0)).isIdentity()) {
      auto bias = dyn_cast<RankedTensorType>(src.getDpsInputs()[0].getType());
      AffineMap in = src.getMatchingIndexingMap(src.getDpsInputOperand(0));
      Block &body = src.getRegion().front();
      SmallVector<ReassociationIndices> assoc =
          expand.getReassociationIndices();
      if (bias && bias.getRank() == 1 && in.getNumResults() == 1 &&
          isa<AffineDimExpr>(in.getResult(0)) &&
          body.getOperations().size() == 1 &&
          body.getTerminator()->getOperand(0) == body.getArgument(0)) {
        unsigned j = cast<AffineDimExpr>(in.getResult(0)).getPosition();
        if (assoc[j].size() == 1) {
          int64_t old = assoc[j][0];
          int64_t pos = llvm::find(perm, old) - std::begin(perm);
          MLIRContext *ctx = b.getContext();
          return linalg::GenericOp::create(
                     b, loc, TypeRange{empty.getType()},
                     ValueRange{src.getDpsInputs()[0]}, ValueRange{empty},
                     {AffineMap::get(4, 0, getAffineDimExpr(pos, ctx)),
                      AffineMap::getMultiDimIdentityMap(4, ctx)},
                     SmallVector<utils::IteratorType>(
                         4, utils::IteratorType::parallel),
                     [](OpBuilder &nb, Location nl, ValueRange a) {
                       linalg::YieldOp::create(nb, nl, a[0]);
                     })
              .getResult(0);
        }
      }
    }
  }
  return linalg::TransposeOp::create(b, loc, init, empty, perm).getResult()[0];
}

/// A constant of `type` holding the bytes `data`, as a resource blob.
static Value resourceConstant(OpBuilder &b, Location loc, RankedTensorType type,
                              ArrayRef<char> data, StringRef name) {
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      data, alignof(std::max_align_t));
  return arith::ConstantOp::create(
      b, loc, type,
      DenseResourceElementsAttr::get(type, name, std::move(blob)));
}

Value kiln::tapsMajorWeights(RewriterBase &b, Location loc, Value w,
                             int64_t channels) {
  auto cst = w.getDefiningOp<arith::ConstantOp>();
  auto type = cast<RankedTensorType>(w.getType());
  if (!cst || type.getElementTypeBitWidth() % 8 != 0)
    return nullptr;
  std::optional<ArrayRef<char>> bytes = kiln::rawConstantBytes(cst.getValue());
  int64_t eb = type.getElementTypeBitWidth() / 8;
  if (!bytes || (int64_t)bytes->size() != type.getNumElements() * eb)
    return nullptr;
  int64_t f = type.getDimSize(0), c = type.getDimSize(1),
          kh = type.getDimSize(2), kw = type.getDimSize(3);
  int64_t cp = std::max(c, channels);
  // Zero bytes: +0.0 in the padded channels.
  std::vector<char> data(f * kh * kw * cp * eb, 0);
  for (int64_t fi = 0; fi < f; ++fi)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          std::memcpy(&data[(((fi * kh + i) * kw + j) * cp + ci) * eb],
                      bytes->data() + (((fi * c + ci) * kh + i) * kw + j) * eb,
                      eb);
  return resourceConstant(
      b, loc, RankedTensorType::get({f, kh, kw, cp}, type.getElementType()),
      data, "kiln_taps_major");
}

Value kiln::transposedConstant(RewriterBase &b, Location loc, Value w,
                               ArrayRef<int64_t> perm) {
  auto cst = w.getDefiningOp<arith::ConstantOp>();
  auto type = cast<RankedTensorType>(w.getType());
  if (!cst || !type.hasStaticShape() || type.getElementTypeBitWidth() % 8 ||
      (int64_t)perm.size() != type.getRank())
    return nullptr;
  std::optional<ArrayRef<char>> bytes = kiln::rawConstantBytes(cst.getValue());
  int64_t eb = type.getElementTypeBitWidth() / 8, n = type.getNumElements();
  if (!bytes || (int64_t)bytes->size() != n * eb)
    return nullptr;
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape, oldStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    oldStrides[d] = oldStrides[d + 1] * type.getDimSize(d + 1);
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  std::vector<char> data(n * eb);
  // Walk the new layout in order, its index as a counter over `shape`.
  SmallVector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d)
      from += index[d] * oldStrides[perm[d]];
    std::memcpy(&data[i * eb], bytes->data() + from * eb, eb);
    for (int64_t d = rank - 1; d >= 0 && ++index[d] == shape[d]; --d)
      index[d] = 0;
  }
  return resourceConstant(b, loc,
                          RankedTensorType::get(shape, type.getElementType()),
                          data, "kiln_transposed");
}
