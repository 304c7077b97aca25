//===- LowerMiscOps.cpp - Einsum, LRN, MVN, TfIdfVectorizer, ... to linalg ===//
//
// Part of convert-kiln-to-linalg (see KilnToLinalg.cpp).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "llvm/ADT/StringSet.h"

#include <map>

using namespace mlir;
using namespace kiln;

namespace kiln::lowering {
namespace {

using Term = EinsumTerm;

/// Einsum as one linalg.generic: a loop per label (and per ellipsis dim),
/// reduction over the labels absent from the output, the product of the
/// inputs accumulated into the output.
FailureOr<SmallVector<Value>> lowerEinsum(OpBuilder &b, EinsumOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  auto rt = cast<RankedTensorType>(op.getResult().getType());
  SmallVector<Term> terms;
  Term out;
  std::string error;
  if (failed(parseEinsum(op.getEquation(), op.getInputs().size(), terms, out,
                         error)))
    return op.emitOpError("equation '") << op.getEquation() << "' " << error,
           failure();
  // The ellipsis covers the same number of trailing-aligned dims in every
  // term that has one: the most any input gives it.
  int64_t ellRank = 0;
  for (auto [term, in] : llvm::zip(terms, op.getInputs())) {
    int64_t r = cast<RankedTensorType>(in.getType()).getRank();
    int64_t labels = llvm::count_if(term, [](char c) { return c != '.'; });
    bool ellipsis = llvm::is_contained(term, '.');
    if (ellipsis ? r < labels : r != labels)
      return op.emitOpError("term ")
                 << einsumTermString(term) << " has " << labels
                 << " labels for an input of rank " << r,
             failure();
    if (ellipsis)
      ellRank = std::max(ellRank, r - labels);
  }
  // Loop dims: the ellipsis dims first, then each label in first-seen
  // order; the output's labels are parallel, the others reductions.
  std::map<char, unsigned> dimOf;
  unsigned nd = ellRank;
  for (const Term &t : terms)
    for (char c : t)
      if (c != '.' && !dimOf.count(c))
        dimOf[c] = nd++;
  for (char c : out)
    if (c != '.' && !dimOf.count(c))
      return op.emitOpError("output label '") << c << "' appears in no input",
             failure();
  SmallVector<int64_t> loopSize(nd, 1);
  auto termExprs = [&](const Term &t, RankedTensorType type,
                       bool record) -> SmallVector<AffineExpr> {
    SmallVector<AffineExpr> exprs;
    int64_t labels = llvm::count_if(t, [](char c) { return c != '.'; });
    int64_t here = type ? type.getRank() - labels : ellRank;
    for (char c : t) {
      if (c != '.') {
        unsigned d = dimOf[c];
        if (record)
          loopSize[d] = std::max(loopSize[d], type.getDimSize(exprs.size()));
        exprs.push_back(getAffineDimExpr(d, ctx));
        continue;
      }
      for (int64_t e = 0; e < here; ++e) {
        unsigned d = ellRank - here + e;
        int64_t size = type ? type.getDimSize(exprs.size()) : 0;
        if (record)
          loopSize[d] = std::max(loopSize[d], size);
        exprs.push_back(type && size == 1 ? getAffineConstantExpr(0, ctx)
                                          : getAffineDimExpr(d, ctx));
      }
    }
    return exprs;
  };
  for (auto [term, in] : llvm::zip(terms, op.getInputs()))
    (void)termExprs(term, cast<RankedTensorType>(in.getType()), true);
  // Every input dim is its loop's extent, or 1 (broadcast).
  for (auto [term, in] : llvm::zip(terms, op.getInputs())) {
    auto t = cast<RankedTensorType>(in.getType());
    for (auto [i, e] : llvm::enumerate(termExprs(term, t, false)))
      if (auto de = dyn_cast<AffineDimExpr>(e);
          de && t.getDimSize(i) != 1 &&
          t.getDimSize(i) != loopSize[de.getPosition()])
        return op.emitOpError("input of type ")
                   << t << " disagrees with the other inputs on the extent "
                   << "of dim " << i,
               failure();
  }
  SmallVector<AffineMap> maps;
  for (auto [term, in] : llvm::zip(terms, op.getInputs())) {
    auto t = cast<RankedTensorType>(in.getType());
    SmallVector<AffineExpr> exprs = termExprs(term, t, false);
    // A size-1 label dim against a larger loop broadcasts.
    for (auto [i, e] : llvm::enumerate(exprs))
      if (auto de = dyn_cast<AffineDimExpr>(e);
          de && t.getDimSize(i) == 1 && loopSize[de.getPosition()] != 1)
        e = getAffineConstantExpr(0, ctx);
    maps.push_back(AffineMap::get(nd, 0, exprs, ctx));
  }
  SmallVector<AffineExpr> outExprs = termExprs(out, nullptr, false);
  SmallVector<int64_t> outShape;
  for (AffineExpr e : outExprs)
    outShape.push_back(loopSize[cast<AffineDimExpr>(e).getPosition()]);
  if (ArrayRef<int64_t>(outShape) != rt.getShape())
    return op.emitOpError("result type ")
               << rt << " does not match the equation's output shape",
           failure();
  maps.push_back(AffineMap::get(nd, 0, outExprs, ctx));
  SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::reduction);
  for (AffineExpr e : outExprs)
    iters[cast<AffineDimExpr>(e).getPosition()] = utils::IteratorType::parallel;
  Type elt = rt.getElementType();
  bool f = isFloat(elt);
  Value acc = filled(b, loc, rt, scalarConst(b, loc, elt, 0));
  Value r =
      linalg::GenericOp::create(
          b, loc, TypeRange{rt}, op.getInputs(), ValueRange{acc}, maps, iters,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value p = a[0];
            for (Value v : a.drop_front().drop_back())
              p = f ? arith::MulFOp::create(nb, nl, p, v).getResult()
                    : arith::MulIOp::create(nb, nl, p, v).getResult();
            Value s =
                f ? arith::AddFOp::create(nb, nl, a.back(), p).getResult()
                  : arith::AddIOp::create(nb, nl, a.back(), p).getResult();
            linalg::YieldOp::create(nb, nl, s);
          })
          .getResult(0);
  return SmallVector<Value>{r};
}

/// Sums `x` over the dims flagged in `reduced` into `keptType`.
Value sumOver(OpBuilder &b, Location loc, Value x, ArrayRef<bool> reduced,
              RankedTensorType keptType) {
  return reduceDims(
      b, loc, x, reduced, keptType,
      scalarConst(b, loc, keptType.getElementType(), 0),
      [](OpBuilder &nb, Location nl, Value v, Value acc) -> Value {
        return arith::AddFOp::create(nb, nl, acc, v);
      });
}

/// LRN: y = x / (bias + alpha / size * sum of x^2 over the channel window)
/// ^ beta, the window running from c - floor((size-1)/2) to
/// c + ceil((size-1)/2).
FailureOr<SmallVector<Value>> lowerLRN(OpBuilder &b, LRNOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op.getX();
  auto xt = cast<RankedTensorType>(x.getType());
  Type elt = xt.getElementType();
  int64_t size = intAttr(op, "size", 0);
  if (size < 1)
    return op.emitOpError("size must be positive, got ") << size, failure();
  if (xt.getRank() < 2)
    return op.emitOpError("needs an input of rank 2 or more"), failure();
  double alpha = floatAttr(op, "alpha", 1e-4),
         beta = floatAttr(op, "beta", 0.75), bias = floatAttr(op, "bias", 1.0);
  int64_t rank = xt.getRank();
  Value sq = elementwise(b, loc, xt, ValueRange{x},
                         [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                           return arith::MulFOp::create(nb, nl, a[0], a[0]);
                         });
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = (size - 1) / 2;
  high[1] = size - 1 - low[1];
  Value padded = padTensor(b, loc, sq, low, high, scalarConst(b, loc, elt, 0));
  // Window sum: loops (dims..., k) reading padded[n, c + k, ...].
  int64_t nd = rank + 1;
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0; d < rank; ++d)
    inExprs.push_back(d == 1 ? getAffineDimExpr(1, ctx) +
                                   getAffineDimExpr(rank, ctx)
                             : getAffineDimExpr(d, ctx));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value window = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{size}, elt);
  Value acc = filled(b, loc, xt, scalarConst(b, loc, elt, 0));
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{xt}, ValueRange{padded, window}, ValueRange{acc},
          {AffineMap::get(nd, 0, inExprs, ctx),
           AffineMap::get(nd, 0, {getAffineDimExpr(rank, ctx)}, ctx),
           AffineMap::get(nd, 0, outExprs, ctx)},
          iters,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[2], a[0])});
          })
          .getResult(0);
  Value r = elementwise(
      b, loc, xt, ValueRange{x, sum},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value scaled = arith::MulFOp::create(
            nb, nl, a[1], scalarConst(nb, nl, elt, alpha / size));
        Value base = arith::AddFOp::create(nb, nl, scaled,
                                           scalarConst(nb, nl, elt, bias));
        Value den =
            math::PowFOp::create(nb, nl, base, scalarConst(nb, nl, elt, beta));
        return arith::DivFOp::create(nb, nl, a[0], den);
      });
  return SmallVector<Value>{r};
}

/// ReverseSequence: along the time axis, the first seq_lens[b] elements of
/// batch entry b are reversed, the rest copied.
FailureOr<SmallVector<Value>> lowerReverseSequence(OpBuilder &b,
                                                   ReverseSequenceOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op.getInput(), lens = op->getOperand(1);
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  int64_t batchAxis = intAttr(op, "batch_axis", 1),
          timeAxis = intAttr(op, "time_axis", 0);
  if (rank < 2 || batchAxis < 0 || timeAxis < 0 || batchAxis >= rank ||
      timeAxis >= rank || batchAxis == timeAxis)
    return op.emitOpError("batch_axis ")
               << batchAxis << " and time_axis " << timeAxis
               << " must be distinct dims of the rank-" << rank << " input",
           failure();
  AffineMap lensMap =
      AffineMap::get(rank, 0, {getAffineDimExpr(batchAxis, ctx)}, ctx);
  Value r = elementwise(
      b, loc, xt, ValueRange{lens},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(nb, nl, d));
        Value len = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
        Value t = idx[timeAxis];
        Value inside =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, t, len);
        Value one = arith::ConstantIndexOp::create(nb, nl, 1);
        Value rev = arith::SubIOp::create(
            nb, nl, arith::SubIOp::create(nb, nl, len, one), t);
        idx[timeAxis] = arith::SelectOp::create(nb, nl, inside, rev, t);
        return tensor::ExtractOp::create(nb, nl, x, idx);
      },
      {lensMap});
  return SmallVector<Value>{r};
}

/// MeanVarianceNormalization: (x - E[x]) / (sqrt(E[(x - E[x])^2]) + 1e-9),
/// the means over `axes` (default 0, 2, 3). The variance is taken of the
/// centred values (two passes), not as E[x^2] - E[x]^2 as ONNX's function
/// body writes it: that difference cancels in float where the spread is
/// small beside the mean (5e-4 off the exact result over 3 uniform values,
/// 0.016 in a fuzzed graph), which ONNX Runtime's kernel does not.
FailureOr<SmallVector<Value>>
lowerMeanVarianceNormalization(OpBuilder &b, MeanVarianceNormalizationOp op) {
  Location loc = op.getLoc();
  Value x = op.getX();
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  Type elt = xt.getElementType();
  SmallVector<bool> reduced(rank, false);
  int64_t count = 1;
  for (int64_t a : intsAttr(op, "axes", {0, 2, 3})) {
    FailureOr<int64_t> d = normalizeAxis(op, a, rank);
    if (failed(d))
      return failure();
    if (!reduced[*d])
      count *= xt.getDimSize(*d);
    reduced[*d] = true;
  }
  SmallVector<int64_t> keptShape;
  for (int64_t d = 0; d < rank; ++d)
    keptShape.push_back(reduced[d] ? 1 : xt.getDimSize(d));
  auto keptType = RankedTensorType::get(keptShape, elt);
  auto mean = [&](OpBuilder &nb, Location nl, Value sum) -> Value {
    return arith::DivFOp::create(nb, nl, sum, scalarConst(nb, nl, elt, count));
  };
  Value sum = sumOver(b, loc, x, reduced, keptType);
  Value centred = elementwise(
      b, loc, xt, ValueRange{x, sum},
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::SubFOp::create(nb, nl, a[0], mean(nb, nl, a[1]));
      });
  Value sq = elementwise(b, loc, xt, ValueRange{centred},
                         [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                           return arith::MulFOp::create(nb, nl, a[0], a[0]);
                         });
  Value sumSq = sumOver(b, loc, sq, reduced, keptType);
  Value r = elementwise(b, loc, xt, ValueRange{centred, sumSq},
                        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                          Value sd = arith::AddFOp::create(
                              nb, nl,
                              math::SqrtOp::create(nb, nl, mean(nb, nl, a[1])),
                              scalarConst(nb, nl, elt, 1e-9));
                          return arith::DivFOp::create(nb, nl, a[0], sd);
                        });
  return SmallVector<Value>{r};
}

/// CenterCropPad: along each listed axis, the input's middle window when
/// the output is shorter (starting at (in - out) / 2, rounded down), or the
/// input centered in zeros when it is longer ((out - in) / 2 before). The
/// output's static shape gives the sizes, as for Reshape; a constant
/// `shape` must agree with it.
LoweringResult lowerCenterCropPad(OpBuilder &b, CenterCropPadOp op) {
  Location loc = op.getLoc();
  auto xt = dyn_cast<RankedTensorType>(op.getInputData().getType());
  auto rt = dyn_cast<RankedTensorType>(op.getOutputData().getType());
  if (!xt || !rt || !xt.hasStaticShape() || !rt.hasStaticShape() ||
      xt.getRank() != rt.getRank())
    return op.emitOpError("needs static input and output shapes of one rank"),
           failure();
  int64_t rank = xt.getRank();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (auto a = op.getAxes())
    axes.assign(a->begin(), a->end());
  SmallVector<bool> listed(rank, false);
  for (int64_t &a : axes) {
    FailureOr<int64_t> d = normalizeAxis(op, a, rank);
    if (failed(d))
      return failure();
    if (listed[*d])
      return op.emitOpError("axis ") << a << " is repeated", failure();
    listed[*d] = true;
    a = *d;
  }
  if (std::optional<SmallVector<int64_t>> shape =
          getConstantInts(op.getShape())) {
    if (shape->size() != axes.size())
      return op.emitOpError("has ")
                 << shape->size() << " sizes for " << axes.size() << " axes",
             failure();
    for (auto [a, size] : llvm::zip(axes, *shape))
      if (size != rt.getDimSize(a))
        return op.emitOpError("shape says ")
                   << size << " along axis " << a << ", the output type "
                   << rt.getDimSize(a),
               failure();
  }
  SmallVector<OpFoldResult> offsets, sizes, strides(rank, b.getIndexAttr(1));
  SmallVector<int64_t> cropped, low, high;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = xt.getDimSize(d), out = rt.getDimSize(d);
    if (!listed[d] && in != out)
      return op.emitOpError("changes dim ") << d << " (" << in << " -> " << out
                                            << "), which its axes do not list",
             failure();
    int64_t kept = std::min(in, out);
    offsets.push_back(b.getIndexAttr(in > out ? (in - out) / 2 : 0));
    sizes.push_back(b.getIndexAttr(kept));
    cropped.push_back(kept);
    low.push_back(out > in ? (out - in) / 2 : 0);
    high.push_back(out > in ? out - in - (out - in) / 2 : 0);
  }
  Value x = op.getInputData();
  if (cropped != SmallVector<int64_t>(xt.getShape()))
    x = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(cropped, xt.getElementType()), x, offsets,
        sizes, strides);
  Value zero = arith::ConstantOp::create(
      b, loc, b.getZeroAttr(toSignless(xt.getElementType())));
  return SmallVector<Value>{padTensor(b, loc, x, low, high, zero)};
}

/// AffineGrid: output[n, (d,) h, w, c] = sum_k theta[n, c, k] * base_k +
/// theta[n, c, S], the base point (x, y(, z)) the normalized coordinates
/// of (w, h(, d)) in [-1, 1]: -1 + i * 2 / (e - 1) with align_corners
/// (0 where e = 1: the single pixel is both corners, and PyTorch, which
/// exports AffineGrid, gives 0; ONNX's reference divides by zero), else the
/// pixel centers -1 + (2i + 1) / e. The grid's
/// size comes from the output type; a constant `size` must agree.
LoweringResult lowerAffineGrid(OpBuilder &b, AffineGridOp op) {
  Location loc = op.getLoc();
  auto tt = dyn_cast<RankedTensorType>(op.getTheta().getType());
  auto rt = dyn_cast<RankedTensorType>(op.getGrid().getType());
  if (!tt || !rt || !tt.hasStaticShape() || !rt.hasStaticShape() ||
      !isa<FloatType>(rt.getElementType()) || tt.getRank() != 3)
    return op.emitOpError("needs a static float theta and grid"), failure();
  int64_t s = tt.getDimSize(1);
  if ((s != 2 && s != 3) || tt.getDimSize(2) != s + 1 ||
      rt.getRank() != s + 2 || rt.getDimSize(0) != tt.getDimSize(0) ||
      rt.getDimSize(s + 1) != s)
    return op.emitOpError("needs theta [N, 2, 3] with a grid [N, H, W, 2], or "
                          "[N, 3, 4] with [N, D, H, W, 3]"),
           failure();
  if (std::optional<SmallVector<int64_t>> size =
          getConstantInts(op.getSize())) {
    bool agrees =
        (int64_t)size->size() == s + 2 && (*size)[0] == rt.getDimSize(0);
    for (int64_t j = 0; agrees && j < s; ++j)
      agrees = (*size)[2 + j] == rt.getDimSize(1 + j);
    if (!agrees)
      return op.emitOpError("size does not agree with the grid's shape ") << rt,
             failure();
  }
  bool align = op.getAlignCorners() != 0;
  Type elt = rt.getElementType();
  Value theta = op.getTheta();
  Value r = elementwise(
      b, loc, rt, ValueRange{},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        Value n = linalg::IndexOp::create(nb, nl, 0);
        Value c = linalg::IndexOp::create(nb, nl, s + 1);
        // base[k]: x (the last spatial dim) first.
        SmallVector<Value> base;
        for (int64_t k = 0; k < s; ++k) {
          int64_t d = s - k, e = rt.getDimSize(d);
          Value i = arith::SIToFPOp::create(
              nb, nl, elt,
              arith::IndexCastOp::create(nb, nl, nb.getI64Type(),
                                         linalg::IndexOp::create(nb, nl, d)));
          Value coord;
          if (align && e == 1)
            coord = scalarConst(nb, nl, elt, 0.0);
          else if (align)
            coord = arith::AddFOp::create(
                nb, nl,
                arith::MulFOp::create(nb, nl, i,
                                      scalarConst(nb, nl, elt, 2.0 / (e - 1))),
                scalarConst(nb, nl, elt, -1.0));
          else
            coord = arith::AddFOp::create(
                nb, nl,
                arith::DivFOp::create(
                    nb, nl,
                    arith::AddFOp::create(
                        nb, nl,
                        arith::MulFOp::create(nb, nl, i,
                                              scalarConst(nb, nl, elt, 2.0)),
                        scalarConst(nb, nl, elt, 1.0)),
                    scalarConst(nb, nl, elt, static_cast<double>(e))),
                scalarConst(nb, nl, elt, -1.0));
          base.push_back(coord);
        }
        auto at = [&](int64_t k) -> Value {
          return tensor::ExtractOp::create(
              nb, nl, theta,
              ValueRange{n, c, arith::ConstantIndexOp::create(nb, nl, k)});
        };
        Value sum = arith::MulFOp::create(nb, nl, at(0), base[0]);
        for (int64_t k = 1; k < s; ++k)
          sum = arith::AddFOp::create(
              nb, nl, sum, arith::MulFOp::create(nb, nl, at(k), base[k]));
        return arith::AddFOp::create(nb, nl, sum, at(s));
      });
  return SmallVector<Value>{r};
}

/// Col2Im: output (n, c, y...) sums, over the flat kernel offset k (the
/// reduction: the input's channels per output channel), the column of the
/// block that covers y at that offset: offset (o...) of k by the block
/// shape, t = y + pad_begin - o * dilation, in a block q = t / stride when
/// t is a non-negative multiple of the stride and q is inside the grid of
/// blocks. The block shape is read at run time (a graph input in ONNX's
/// tests); the image dims are the output's.
FailureOr<SmallVector<Value>> lowerCol2Im(OpBuilder &b, Col2ImOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op.getInput(), blockShape = op.getBlockShape();
  auto xt = cast<RankedTensorType>(x.getType());
  auto rt = cast<RankedTensorType>(op.getOutput().getType());
  auto bt = cast<RankedTensorType>(blockShape.getType());
  int64_t spatial = rt.getRank() - 2;
  if (xt.getRank() != 3 || spatial < 1 || bt.getRank() != 1 ||
      bt.getDimSize(0) != spatial || xt.getDimSize(0) != rt.getDimSize(0) ||
      rt.getDimSize(1) == 0 || xt.getDimSize(1) % rt.getDimSize(1) != 0)
    return op.emitOpError("needs input [N, C * prod(block_shape), L], a "
                          "block_shape of one value per image dim and an "
                          "output [N, C, image dims...]"),
           failure();
  SmallVector<int64_t> dil = intsAttr(op, "dilations", {}),
                       str = intsAttr(op, "strides", {}),
                       pads = intsAttr(op, "pads", {});
  if (dil.empty())
    dil.assign(spatial, 1);
  if (str.empty())
    str.assign(spatial, 1);
  if (pads.empty())
    pads.assign(2 * spatial, 0);
  if ((int64_t)dil.size() != spatial || (int64_t)str.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial ||
      llvm::any_of(llvm::concat<int64_t>(dil, str),
                   [](int64_t v) { return v < 1; }))
    return op.emitOpError("needs ")
               << spatial
               << " dilations and strides (at least 1) and twice as many pads",
           failure();
  int64_t kernel = xt.getDimSize(1) / rt.getDimSize(1);
  int64_t columns = xt.getDimSize(2);
  // The block shape as index scalars, read once.
  SmallVector<Value> block;
  for (int64_t s = 0; s < spatial; ++s)
    block.push_back(arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        convertScalar(
            b, loc,
            tensor::ExtractOp::create(
                b, loc, blockShape,
                ValueRange{arith::ConstantIndexOp::create(b, loc, s)}),
            b.getI64Type())));
  // Blocks along each image dim, once: (image + pads - span) / stride + 1,
  // span = (block - 1) * dilation + 1.
  SmallVector<Value> grids;
  for (int64_t s = 0; s < spatial; ++s) {
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value span = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc,
                              arith::SubIOp::create(b, loc, block[s], idx(1)),
                              idx(dil[s])),
        idx(1));
    grids.push_back(arith::AddIOp::create(
        b, loc,
        arith::DivSIOp::create(
            b, loc,
            arith::SubIOp::create(
                b, loc, idx(rt.getDimSize(2 + s) + pads[s] + pads[spatial + s]),
                span),
            idx(str[s])),
        idx(1)));
  }
  int64_t rank = rt.getRank();
  // Loops (n, c, y..., k).
  SmallVector<AffineExpr> out;
  for (int64_t d = 0; d < rank; ++d)
    out.push_back(getAffineDimExpr(d, ctx));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Type elt = rt.getElementType();
  Value init = filled(b, loc, rt, scalarConst(b, loc, elt, 0));
  // The kernel offsets' extent comes from an operand over k alone (its
  // zeros are not read).
  Value offsets = filled(b, loc, RankedTensorType::get({kernel}, elt),
                         scalarConst(b, loc, elt, 0));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{rt}, ValueRange{offsets}, ValueRange{init},
      ArrayRef<AffineMap>{
          AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, ctx)}, ctx),
          AffineMap::get(rank + 1, 0, out, ctx)},
      iters, [&](OpBuilder &nb, Location nl, ValueRange a) {
        auto idx = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(nb, nl, v);
        };
        auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) -> Value {
          return arith::CmpIOp::create(nb, nl, p, l, r);
        };
        Value k = linalg::IndexOp::create(nb, nl, rank);
        Value rest = k, valid = arith::ConstantIntOp::create(nb, nl, 1, 1);
        Value column = idx(0), stride = idx(1);
        // Innermost image dim first: its offset is k's lowest digit.
        for (int64_t s = spatial - 1; s >= 0; --s) {
          Value o = arith::RemUIOp::create(nb, nl, rest, block[s]);
          rest = arith::DivUIOp::create(nb, nl, rest, block[s]);
          Value y = linalg::IndexOp::create(nb, nl, 2 + s);
          // t = y + pad_begin - o * dilation.
          Value t = arith::SubIOp::create(
              nb, nl, arith::AddIOp::create(nb, nl, y, idx(pads[s])),
              arith::MulIOp::create(nb, nl, o, idx(dil[s])));
          Value grid = grids[s];
          Value q = arith::DivSIOp::create(nb, nl, t, idx(str[s]));
          Value ok = arith::AndIOp::create(
              nb, nl, cmp(arith::CmpIPredicate::sge, t, idx(0)),
              cmp(arith::CmpIPredicate::eq,
                  arith::RemSIOp::create(nb, nl, t, idx(str[s])), idx(0)));
          ok = arith::AndIOp::create(
              nb, nl, ok,
              arith::AndIOp::create(nb, nl,
                                    cmp(arith::CmpIPredicate::slt, q, grid),
                                    cmp(arith::CmpIPredicate::sge, q, idx(0))));
          valid = arith::AndIOp::create(nb, nl, valid, ok);
          column = arith::AddIOp::create(
              nb, nl, column, arith::MulIOp::create(nb, nl, q, stride));
          stride = arith::MulIOp::create(nb, nl, stride, grid);
        }
        valid = arith::AndIOp::create(
            nb, nl, valid,
            arith::AndIOp::create(
                nb, nl, cmp(arith::CmpIPredicate::sge, column, idx(0)),
                cmp(arith::CmpIPredicate::slt, column, idx(columns))));
        Value channel = arith::AddIOp::create(
            nb, nl,
            arith::MulIOp::create(nb, nl, linalg::IndexOp::create(nb, nl, 1),
                                  idx(kernel)),
            k);
        Value safe = arith::SelectOp::create(nb, nl, valid, column, idx(0));
        Value v = tensor::ExtractOp::create(
            nb, nl, x,
            ValueRange{linalg::IndexOp::create(nb, nl, 0), channel, safe});
        v = arith::SelectOp::create(nb, nl, valid, v,
                                    scalarConst(nb, nl, elt, 0));
        Value sum = isa<FloatType>(elt)
                        ? arith::AddFOp::create(nb, nl, a[1], v).getResult()
                        : arith::AddIOp::create(nb, nl, a[1], v).getResult();
        linalg::YieldOp::create(nb, nl, sum);
      });
  return SmallVector<Value>{generic.getResult(0)};
}

/// TfIdfVectorizer over integer n-grams: one generic over the output
/// [B, O] (or [O]); element (b, j) counts, for each pool n-gram whose
/// ngram_indexes entry is j, its occurrences in row b at every skip
/// distance d in 1..max_skip_count + 1 (unigrams at d = 1 only, as skips
/// do not change them), then weighs the count by `mode` (TF: the count;
/// IDF: its column's weight, or 1, where the count is positive; TFIDF:
/// the weight times the count). The pool is
/// folded at compile time into per-column lists (CSR: each column's
/// first entry, each entry's length and tokens padded to
/// max_gram_length), as constants the body loops over; the ONNX
/// reference's trie gives the same counts. Work per row is the pool size
/// times the row length times the skip distances.
LoweringResult lowerTfIdfVectorizer(OpBuilder &b, TfIdfVectorizerOp op) {
  Location loc = op.getLoc();
  Value x = op.getX();
  auto xt = cast<RankedTensorType>(x.getType());
  auto rt = cast<RankedTensorType>(op.getY().getType());
  if (op.getPoolStrings() && !op.getPoolStrings()->empty())
    return op.emitOpError("string n-grams (pool_strings) are not lowered; "
                          "integer pools (pool_int64s) are"),
           failure();
  auto xe = dyn_cast<IntegerType>(xt.getElementType());
  if (!xe || (xe.getWidth() != 32 && xe.getWidth() != 64) ||
      (xt.getRank() != 1 && xt.getRank() != 2))
    return op.emitOpError("needs an int32 or int64 input of rank 1 or 2, got ")
               << xt,
           failure();
  StringRef mode = op.getMode();
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return op.emitOpError("mode '") << mode << "' is not TF, IDF or TFIDF",
           failure();
  int64_t minLen = op.getMinGramLength(), maxLen = op.getMaxGramLength(),
          maxSkip = op.getMaxSkipCount();
  if (minLen < 1 || maxLen < minLen || maxSkip < 0)
    return op.emitOpError("needs 1 <= min_gram_length <= max_gram_length "
                          "and max_skip_count >= 0"),
           failure();
  ArrayRef<int64_t> pool =
      op.getPoolInt64s() ? *op.getPoolInt64s() : ArrayRef<int64_t>();
  ArrayRef<int64_t> counts = op.getNgramCounts(),
                    indexes = op.getNgramIndexes();
  // The n-grams of the sizes counted, by content (a repeated n-gram
  // counts toward its last index, as the reference's trie keeps), with
  // their output column.
  std::map<SmallVector<int64_t>, int64_t> columnOf;
  int64_t gramId = 0, outSize = 0;
  for (auto [i, start] : llvm::enumerate(counts)) {
    int64_t n = i + 1;
    int64_t end = i + 1 < counts.size() ? counts[i + 1]
                                        : static_cast<int64_t>(pool.size());
    if (start < 0 || end < start || end > static_cast<int64_t>(pool.size()))
      return op.emitOpError("ngram_counts must be nondecreasing offsets into "
                            "the pool of ")
                 << pool.size(),
             failure();
    for (int64_t g = 0; g < (end - start) / n; ++g, ++gramId) {
      if (gramId >= static_cast<int64_t>(indexes.size()) || indexes[gramId] < 0)
        return op.emitOpError("needs a nonnegative ngram_indexes entry for "
                              "each of the pool's n-grams"),
               failure();
      if (n >= minLen && n <= maxLen)
        columnOf[SmallVector<int64_t>(pool.slice(start + g * n, n))] =
            indexes[gramId];
    }
  }
  // The output's width: the largest of ngram_indexes, plus one.
  for (int64_t j : indexes)
    outSize = std::max(outSize, j + 1);
  SmallVector<int64_t> expected;
  if (xt.getRank() == 2)
    expected.push_back(xt.getDimSize(0));
  expected.push_back(outSize);
  if (rt.getShape() != ArrayRef<int64_t>(expected) ||
      !rt.getElementType().isF32())
    return op.emitOpError("needs a float32 result of shape [")
               << llvm::make_range(expected.begin(), expected.end())
               << "], got " << rt,
           failure();
  // weights[g] weighs the pool's n-gram g, i.e. output column
  // ngram_indexes[g] (as ONNX Runtime reads them; a column named twice
  // takes its last n-gram's).
  ArrayRef<float> weights =
      op.getWeights() ? *op.getWeights() : ArrayRef<float>();
  if (!weights.empty() && static_cast<int64_t>(weights.size()) < gramId)
    return op.emitOpError("needs a weight for each of the pool's ")
               << gramId << " n-grams, got " << weights.size(),
           failure();
  SmallVector<float> columnWeight(outSize, 0.0f);
  if (!weights.empty())
    for (int64_t g = 0; g < gramId; ++g)
      columnWeight[indexes[g]] = weights[g];
  // Per column, its n-grams: columnStart[j]..columnStart[j + 1] index the
  // entries (length and tokens).
  SmallVector<SmallVector<const SmallVector<int64_t> *>> byColumn(outSize);
  for (auto &[gram, col] : columnOf)
    byColumn[col].push_back(&gram);
  SmallVector<int64_t> columnStart{0}, entryLen, entryTok;
  for (auto &grams : byColumn) {
    for (const SmallVector<int64_t> *g : grams) {
      entryLen.push_back(g->size());
      for (int64_t k = 0; k < maxLen; ++k)
        entryTok.push_back(k < static_cast<int64_t>(g->size()) ? (*g)[k] : 0);
    }
    columnStart.push_back(entryLen.size());
  }
  int64_t entries = entryLen.size();
  Type i64 = b.getI64Type();
  auto constant = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    auto t = RankedTensorType::get(shape, i64);
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(t, values))
        .getResult();
  };
  Value starts = constant({outSize + 1}, columnStart);
  Value lens =
      constant({std::max<int64_t>(entries, 1)},
               entries ? ArrayRef<int64_t>(entryLen) : ArrayRef<int64_t>{0});
  SmallVector<int64_t> tokPad(maxLen, 0);
  Value toks = constant({std::max<int64_t>(entries, 1), maxLen},
                        entries ? ArrayRef<int64_t>(entryTok)
                                : ArrayRef<int64_t>(tokPad));
  Value weightsV;
  if (!weights.empty())
    weightsV = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get({outSize}, b.getF32Type()),
                               ArrayRef<float>(columnWeight)));
  int64_t rowLen = xt.getDimSize(xt.getRank() - 1);
  bool batched = xt.getRank() == 2;
  Value y = elementwise(
      b, loc, rt, ValueRange{},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        auto ic = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(nb, nl, v);
        };
        auto asIndex = [&](Value v) -> Value {
          return arith::IndexCastOp::create(nb, nl, nb.getIndexType(), v);
        };
        Value row =
            batched ? linalg::IndexOp::create(nb, nl, 0).getResult() : Value();
        Value col = linalg::IndexOp::create(nb, nl, batched ? 1 : 0);
        Value lo = asIndex(tensor::ExtractOp::create(nb, nl, starts, col));
        Value next = arith::AddIOp::create(nb, nl, col, ic(1));
        Value hi = asIndex(tensor::ExtractOp::create(nb, nl, starts, next));
        Value zero = arith::ConstantIntOp::create(nb, nl, i64, 0);
        auto perEntry = scf::ForOp::create(
            nb, nl, lo, hi, ic(1), ValueRange{zero},
            [&](OpBuilder &eb, Location el, Value e, ValueRange acc) {
              Value n = asIndex(tensor::ExtractOp::create(eb, el, lens, e));
              Value unigram = arith::CmpIOp::create(
                  eb, el, arith::CmpIPredicate::eq, n, ic(1));
              Value skips = arith::SelectOp::create(eb, el, unigram, ic(1),
                                                    ic(maxSkip + 1));
              auto perSkip = scf::ForOp::create(
                  eb, el, ic(0), skips, ic(1), acc,
                  [&](OpBuilder &db, Location dl, Value dm1, ValueRange acc2) {
                    Value d = arith::AddIOp::create(db, dl, dm1, ic(1));
                    Value span = arith::MulIOp::create(
                        db, dl, d, arith::SubIOp::create(db, dl, n, ic(1)));
                    // Starts s with s + d * (n - 1) < rowLen.
                    Value upper = arith::MaxSIOp::create(
                        db, dl, arith::SubIOp::create(db, dl, ic(rowLen), span),
                        ic(0));
                    auto perStart = scf::ForOp::create(
                        db, dl, ic(0), upper, ic(1), acc2,
                        [&](OpBuilder &sb, Location sl, Value s,
                            ValueRange acc3) {
                          Value ok = arith::ConstantIntOp::create(
                              sb, sl, sb.getI1Type(), 1);
                          for (int64_t k = 0; k < maxLen; ++k) {
                            Value pos = arith::MinSIOp::create(
                                sb, sl,
                                arith::AddIOp::create(
                                    sb, sl, s,
                                    arith::MulIOp::create(sb, sl, d, ic(k))),
                                ic(rowLen - 1));
                            SmallVector<Value> at;
                            if (batched)
                              at.push_back(row);
                            at.push_back(pos);
                            Value tok =
                                tensor::ExtractOp::create(sb, sl, x, at);
                            if (xe.getWidth() != 64)
                              tok = arith::ExtSIOp::create(sb, sl, i64, tok);
                            Value want = tensor::ExtractOp::create(
                                sb, sl, toks, ValueRange{e, ic(k)});
                            Value same = arith::CmpIOp::create(
                                sb, sl, arith::CmpIPredicate::eq, tok, want);
                            Value beyond = arith::CmpIOp::create(
                                sb, sl, arith::CmpIPredicate::sle, n, ic(k));
                            ok = arith::AndIOp::create(
                                sb, sl, ok,
                                arith::OrIOp::create(sb, sl, beyond, same));
                          }
                          Value c = arith::AddIOp::create(
                              sb, sl, acc3[0],
                              arith::ExtUIOp::create(sb, sl, i64, ok));
                          scf::YieldOp::create(sb, sl, c);
                        });
                    scf::YieldOp::create(db, dl, perStart.getResult(0));
                  });
              scf::YieldOp::create(eb, el, perSkip.getResult(0));
            });
        Value count = perEntry.getResult(0);
        Type f32 = nb.getF32Type();
        Value tf = arith::SIToFPOp::create(nb, nl, f32, count);
        Value w =
            weightsV
                ? tensor::ExtractOp::create(nb, nl, weightsV, col).getResult()
                : scalarConst(nb, nl, f32, 1);
        if (mode == "TF")
          return tf;
        if (mode == "TFIDF")
          return weightsV ? arith::MulFOp::create(nb, nl, w, tf).getResult()
                          : tf;
        Value seen = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sgt,
                                           count, zero);
        return arith::SelectOp::create(nb, nl, seen, w,
                                       scalarConst(nb, nl, f32, 0));
      });
  return SmallVector<Value>{y};
}

} // namespace

LoweringResult lowerMiscOp(OpBuilder &b, Operation *op) {
  if (auto c = dyn_cast<Col2ImOp>(op))
    return lowerCol2Im(b, c);
  if (auto g = dyn_cast<AffineGridOp>(op))
    return lowerAffineGrid(b, g);
  if (auto c = dyn_cast<CenterCropPadOp>(op))
    return lowerCenterCropPad(b, c);
  if (auto e = dyn_cast<EinsumOp>(op))
    return lowerEinsum(b, e);
  if (auto l = dyn_cast<LRNOp>(op))
    return lowerLRN(b, l);
  if (auto r = dyn_cast<ReverseSequenceOp>(op))
    return lowerReverseSequence(b, r);
  if (auto m = dyn_cast<MeanVarianceNormalizationOp>(op))
    return lowerMeanVarianceNormalization(b, m);
  if (auto t = dyn_cast<TfIdfVectorizerOp>(op))
    return lowerTfIdfVectorizer(b, t);
  return std::nullopt;
}

} // namespace kiln::lowering
