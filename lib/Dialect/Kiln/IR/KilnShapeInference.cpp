//===- KilnShapeInference.cpp - per-op result-type inference --------------===//
//
// Shape functions of the kiln ops whose result types do not follow one of the
// shared rules in KilnOps.cpp. Each follows the ONNX operator's definition;
// what cannot be known statically comes out as `?` or as an unranked tensor.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/StringExtras.h"

#include <cctype>
#include <map>

using namespace mlir;
using namespace kiln;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;

RankedTensorType ranked(Value v) {
  return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

Type elementOf(Value v) { return getElementTypeOrSelf(v.getType()); }

int64_t intAttr(Operation *op, StringRef name, int64_t dflt) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getInt();
  return dflt;
}

std::optional<SmallVector<int64_t>> intsAttr(Operation *op, StringRef name) {
  if (auto a = op->getAttrOfType<DenseI64ArrayAttr>(name))
    return SmallVector<int64_t>(a.asArrayRef());
  return std::nullopt;
}

StringRef strAttr(Operation *op, StringRef name, StringRef dflt) {
  if (auto a = op->getAttrOfType<StringAttr>(name))
    return a.getValue();
  return dflt;
}

/// The floating-point values of `v` when a constant defines it.
std::optional<SmallVector<double>> constFloats(Value v) {
  if (!v)
    return std::nullopt;
  auto cst = v.getDefiningOp<ConstantOp>();
  if (!cst || !isa<FloatType>(cst.getValue().getElementType()))
    return std::nullopt;
  auto values = cst.getValue().tryGetValues<APFloat>();
  if (!values)
    return std::nullopt;
  SmallVector<double> out;
  for (const APFloat &x : *values)
    out.push_back(x.convertToDouble());
  return out;
}

Type tensorOf(std::optional<ArrayRef<int64_t>> shape, Type element) {
  if (!shape)
    return UnrankedTensorType::get(element);
  return RankedTensorType::get(*shape, element);
}

Type unranked(Type element) { return UnrankedTensorType::get(element); }

/// Normalizes an axis into [0, rank) (or [0, rank] with `allowEnd`, as
/// Flatten's axis may name the end) or fails with a diagnostic.
FailureOr<int64_t> normAxis(Operation *op, int64_t axis, int64_t rank,
                            bool allowEnd = false) {
  int64_t hi = allowEnd ? rank : rank - 1;
  if (axis < -rank || axis > hi)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

/// The dims an op's `axes` name, normalized (all `rank` dims in order
/// where it has none), or a diagnostic: an axis out of range, or one
/// named twice where `unique`.
FailureOr<SmallVector<int64_t>> axesOrAll(Operation *op,
                                          std::optional<ArrayRef<int64_t>> axes,
                                          int64_t rank, bool unique = false) {
  SmallVector<int64_t> dims;
  if (!axes) {
    for (int64_t i = 0; i < rank; ++i)
      dims.push_back(i);
    return dims;
  }
  for (int64_t v : *axes) {
    FailureOr<int64_t> n = normAxis(op, v, rank);
    if (failed(n))
      return failure();
    if (unique && llvm::is_contained(dims, *n))
      return op->emitOpError("axis ") << v << " is listed twice";
    dims.push_back(*n);
  }
  return dims;
}

void keep(Operation *op, SmallVectorImpl<Type> &types) {
  for (unsigned i = types.size(); i < op->getNumResults(); ++i)
    types.push_back(op->getResult(i).getType());
}

int64_t mulDims(int64_t a, int64_t b) {
  return (ShapedType::isDynamic(a) || ShapedType::isDynamic(b)) ? kDyn : a * b;
}

/// Output extent of a sliding window.
int64_t windowOut(int64_t in, int64_t k, int64_t s, int64_t d, int64_t padB,
                  int64_t padE, bool ceil) {
  if (ShapedType::isDynamic(in))
    return kDyn;
  int64_t eff = d * (k - 1) + 1;
  int64_t num = in + padB + padE - eff;
  if (num < 0)
    return 0;
  int64_t out = (ceil ? (num + s - 1) / s : num / s) + 1;
  // A window may not start in the end padding.
  if (ceil && (out - 1) * s >= in + padB)
    --out;
  return out;
}

/// Spatial output shape of Conv / pooling ops: `x` is N x C x D1..Dn.
LogicalResult windowShape(Operation *op, RankedTensorType x,
                          ArrayRef<int64_t> kernel, int64_t channels,
                          SmallVectorImpl<int64_t> &out) {
  int64_t n = x.getRank() - 2;
  if (n < 0 || static_cast<int64_t>(kernel.size()) != n)
    return op->emitOpError("expects the input to have rank ")
           << kernel.size() + 2 << ", got " << x.getRank();
  auto strides = intsAttr(op, "strides").value_or(SmallVector<int64_t>(n, 1));
  auto dil = intsAttr(op, "dilations").value_or(SmallVector<int64_t>(n, 1));
  auto pads = intsAttr(op, "pads").value_or(SmallVector<int64_t>(2 * n, 0));
  if (static_cast<int64_t>(strides.size()) != n ||
      static_cast<int64_t>(dil.size()) != n ||
      static_cast<int64_t>(pads.size()) != 2 * n)
    return op->emitOpError("strides, dilations and pads must have ")
           << n << ", " << n << " and " << 2 * n << " entries";
  StringRef autoPad = strAttr(op, "auto_pad", "NOTSET");
  bool ceil = intAttr(op, "ceil_mode", 0) != 0;
  out.push_back(x.getDimSize(0));
  out.push_back(channels);
  for (int64_t i = 0; i < n; ++i) {
    int64_t in = x.getDimSize(i + 2);
    if (strides[i] <= 0 || dil[i] <= 0)
      return op->emitOpError("strides and dilations must be positive");
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      out.push_back(ShapedType::isDynamic(in)
                        ? kDyn
                        : (in + strides[i] - 1) / strides[i]);
    } else if (autoPad == "VALID") {
      out.push_back(windowOut(in, kernel[i], strides[i], dil[i], 0, 0, ceil));
    } else {
      out.push_back(windowOut(in, kernel[i], strides[i], dil[i], pads[i],
                              pads[i + n], ceil));
    }
  }
  return success();
}

/// Conv and ConvTranspose: the weight has the input's rank, N x C x D1..Dn
/// with at least one spatial dim.
LogicalResult checkConvRanks(Operation *op, RankedTensorType x,
                             RankedTensorType w) {
  if (w.getRank() != x.getRank())
    return op->emitOpError("weight rank ")
           << w.getRank() << " differs from input rank " << x.getRank();
  if (x.getRank() < 3)
    return op->emitOpError("expects an input of rank >= 3 (N x C x D...), "
                           "got rank ")
           << x.getRank();
  return success();
}

LogicalResult inferPool(Operation *op, SmallVectorImpl<Type> &types) {
  Value xv = getOnnxInput(op, 0);
  auto x = ranked(xv);
  if (!x) {
    types.push_back(unranked(elementOf(xv)));
    keep(op, types);
    return success();
  }
  auto kernel = intsAttr(op, "kernel_shape");
  if (!kernel)
    return op->emitOpError("requires 'kernel_shape'");
  // N x C x D1..Dn (a rank-0 or rank-1 input once crashed the importer
  // here: fuzz/regressions/onnx).
  if (x.getRank() < 2)
    return op->emitOpError("expects an input of rank >= 2 (N x C x ...), "
                           "got rank ")
           << x.getRank();
  SmallVector<int64_t> shape;
  if (failed(windowShape(op, x, *kernel, x.getDimSize(1), shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  if (op->getNumResults() > 1)
    types.push_back(
        RankedTensorType::get(shape, IntegerType::get(op->getContext(), 64)));
  keep(op, types);
  return success();
}

LogicalResult inferGlobalPool(Operation *op, SmallVectorImpl<Type> &types) {
  Value xv = getOnnxInput(op, 0);
  auto x = ranked(xv);
  if (!x) {
    types.push_back(unranked(elementOf(xv)));
    return success();
  }
  if (x.getRank() < 2)
    return op->emitOpError("expects an input of rank >= 2");
  SmallVector<int64_t> shape(x.getShape());
  for (int64_t i = 2; i < x.getRank(); ++i)
    shape[i] = 1;
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

/// Reductions: axes from the `axes` input (opset 18 form), or the attribute
/// (ReduceSum before 13 is upgraded by the importer).
LogicalResult inferReduce(Operation *op, SmallVectorImpl<Type> &types) {
  Value dv = getOnnxInput(op, 0);
  auto data = ranked(dv);
  Type elt = elementOf(dv);
  bool keepdims = intAttr(op, "keepdims", 1) != 0;
  bool noopEmpty = intAttr(op, "noop_with_empty_axes", 0) != 0;
  if (!data) {
    types.push_back(unranked(elt));
    return success();
  }
  int64_t rank = data.getRank();
  Value axesV = getOnnxInput(op, 1);
  std::optional<SmallVector<int64_t>> axes;
  if (axesV)
    axes = getConstantInts(axesV);
  else
    axes = SmallVector<int64_t>();
  if (!axes) {
    // Unknown axes: rank is known only when dims are kept.
    types.push_back(keepdims ? tensorOf(SmallVector<int64_t>(rank, kDyn), elt)
                             : unranked(elt));
    return success();
  }
  if (axes->empty()) {
    if (noopEmpty) {
      types.push_back(data);
      return success();
    }
    for (int64_t i = 0; i < rank; ++i)
      axes->push_back(i);
  }
  SmallVector<bool> reduced(rank, false);
  for (int64_t a : *axes) {
    auto n = normAxis(op, a, rank);
    if (failed(n))
      return failure();
    reduced[*n] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      shape.push_back(data.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

LogicalResult inferArgReduce(Operation *op, SmallVectorImpl<Type> &types) {
  auto data = ranked(getOnnxInput(op, 0));
  Type i64 = IntegerType::get(op->getContext(), 64);
  if (!data) {
    types.push_back(unranked(i64));
    return success();
  }
  auto axis = normAxis(op, intAttr(op, "axis", 0), data.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(data.getShape());
  if (intAttr(op, "keepdims", 1))
    shape[*axis] = 1;
  else
    shape.erase(shape.begin() + *axis);
  types.push_back(RankedTensorType::get(shape, i64));
  return success();
}

/// The values of a small 1-D (or scalar) i64 tensor that carries a shape,
/// with `?` for entries not known statically. Follows the ops exporters
/// build shapes from (Shape, Gather, Unsqueeze, Squeeze, Concat, Cast) so
/// that `Reshape(x, Concat(batch, [4, 8]))` keeps its static extents.
std::optional<SmallVector<int64_t>> shapeValues(Value v, unsigned depth = 0) {
  if (!v)
    return std::nullopt;
  if (auto vals = getConstantInts(v))
    return vals;
  auto t = ranked(v);
  if (!t || t.getRank() > 1 || !t.hasStaticShape() || depth > 8)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> unknown =
      SmallVector<int64_t>(t.getNumElements(), kDyn);
  Operation *def = v.getDefiningOp();
  if (!def)
    return unknown;
  if (auto shape = dyn_cast<ShapeOp>(def)) {
    auto x = ranked(shape.getData());
    if (!x)
      return unknown;
    int64_t rank = x.getRank();
    auto clampAxis = [&](int64_t a) {
      return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank);
    };
    int64_t start = clampAxis(shape.getStart());
    int64_t end = clampAxis(shape.getEnd() ? int64_t(*shape.getEnd()) : rank);
    SmallVector<int64_t> dims;
    for (int64_t i = start; i < end; ++i)
      dims.push_back(x.getDimSize(i));
    return dims;
  }
  if (isa<UnsqueezeOp, SqueezeOp, CastOp, IdentityOp, ReshapeOp>(def)) {
    auto inner = shapeValues(def->getOperand(0), depth + 1);
    if (inner && static_cast<int64_t>(inner->size()) == t.getNumElements())
      return inner;
    return unknown;
  }
  if (auto gather = dyn_cast<GatherOp>(def)) {
    auto data = shapeValues(gather.getData(), depth + 1);
    auto idx = getConstantInts(gather.getIndices());
    if (!data || !idx)
      return unknown;
    SmallVector<int64_t> out;
    int64_t n = data->size();
    for (int64_t i : *idx) {
      if (i < -n || i >= n)
        return unknown;
      out.push_back((*data)[i < 0 ? i + n : i]);
    }
    return out;
  }
  if (auto concat = dyn_cast<ConcatOp>(def)) {
    SmallVector<int64_t> out;
    for (Value in : concat.getInputs()) {
      auto piece = shapeValues(in, depth + 1);
      if (!piece)
        return unknown;
      llvm::append_range(out, *piece);
    }
    return out;
  }
  return unknown;
}

/// The shape an ONNX `shape` operand describes (Reshape, Expand, ...).
std::optional<SmallVector<int64_t>> shapeOperand(Value v) {
  return shapeValues(v);
}
} // namespace

//===----------------------------------------------------------------------===//
// Per-op rules
//===----------------------------------------------------------------------===//

#define INFER(Op)                                                              \
  LogicalResult Op::inferResultTypes(SmallVectorImpl<Type> &types)

INFER(IsNaNOp) {
  auto x = ranked(getX());
  Type i1 = IntegerType::get(getContext(), 1);
  types.push_back(x ? tensorOf(x.getShape(), i1) : unranked(i1));
  return success();
}
INFER(IsInfOp) {
  auto x = ranked(getX());
  Type i1 = IntegerType::get(getContext(), 1);
  types.push_back(x ? tensorOf(x.getShape(), i1) : unranked(i1));
  return success();
}

INFER(WhereOp) {
  SmallVector<ArrayRef<int64_t>> shapes;
  Type elt = elementOf(getX());
  for (Value v : getOperands()) {
    auto t = ranked(v);
    if (!t) {
      types.push_back(unranked(elt));
      return success();
    }
    shapes.push_back(t.getShape());
  }
  auto shape = broadcastStaticShapes(*this, shapes);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, elt));
  return success();
}

INFER(CastOp) {
  auto x = ranked(getInput());
  types.push_back(x ? tensorOf(x.getShape(), getTo()) : unranked(getTo()));
  return success();
}

INFER(CastLikeOp) {
  auto x = ranked(getInput());
  Type elt = elementOf(getTargetType());
  types.push_back(x ? tensorOf(x.getShape(), elt) : unranked(elt));
  return success();
}

/// MatMul's result shape (numpy matmul: batch dims broadcast, a rank-1
/// operand promoted and its dim dropped), with element type `elt`: shared by
/// MatMul, MatMulInteger and QLinearMatMul.
static LogicalResult inferMatMulLike(Operation *op, Value lhs, Value rhs,
                                     Type elt, SmallVectorImpl<Type> &types) {
  auto a = ranked(lhs), b = ranked(rhs);
  if (!a || !b) {
    types.push_back(unranked(elt));
    return success();
  }
  if (a.getRank() == 0 || b.getRank() == 0)
    return op->emitOpError("operands must have rank >= 1");
  SmallVector<int64_t> as(a.getShape()), bs(b.getShape());
  bool vecA = as.size() == 1, vecB = bs.size() == 1;
  if (vecA)
    as.insert(as.begin(), 1);
  if (vecB)
    bs.push_back(1);
  int64_t k1 = as.back(), k2 = bs[bs.size() - 2];
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return op->emitOpError("contraction dimensions differ: ")
           << k1 << " vs " << k2;
  SmallVector<ArrayRef<int64_t>> batch = {ArrayRef(as).drop_back(2),
                                          ArrayRef(bs).drop_back(2)};
  auto shape = broadcastStaticShapes(op, batch);
  if (failed(shape))
    return failure();
  if (!vecA)
    shape->push_back(as[as.size() - 2]);
  if (!vecB)
    shape->push_back(bs.back());
  types.push_back(RankedTensorType::get(*shape, elt));
  return success();
}

INFER(MatMulOp) {
  return inferMatMulLike(*this, getA(), getB(), elementOf(getA()), types);
}

INFER(MatMulIntegerOp) {
  return inferMatMulLike(*this, getA(), getB(),
                         IntegerType::get(getContext(), 32), types);
}

INFER(QLinearMatMulOp) {
  return inferMatMulLike(*this, getA(), getB(), elementOf(getYZeroPoint()),
                         types);
}

INFER(GemmOp) {
  auto a = ranked(getA()), b = ranked(getB());
  Type elt = elementOf(getA());
  if (!a || !b) {
    types.push_back(tensorOf(SmallVector<int64_t>{kDyn, kDyn}, elt));
    return success();
  }
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOpError("operands A and B must be matrices");
  int64_t m = a.getDimSize(getTransA() ? 1 : 0);
  int64_t ka = a.getDimSize(getTransA() ? 0 : 1);
  int64_t kb = b.getDimSize(getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(getTransB() ? 0 : 1);
  if (!ShapedType::isDynamic(ka) && !ShapedType::isDynamic(kb) && ka != kb)
    return emitOpError("contraction dimensions differ: ") << ka << " vs " << kb;
  if (auto c = ranked(getC())) {
    SmallVector<int64_t> mn = {m, n};
    SmallVector<ArrayRef<int64_t>> shapes = {mn, c.getShape()};
    auto bc = broadcastStaticShapes(*this, shapes);
    if (failed(bc))
      return failure();
    if (bc->size() != 2 || (!ShapedType::isDynamic(m) && (*bc)[0] != m) ||
        (!ShapedType::isDynamic(n) && (*bc)[1] != n))
      return emitOpError("C of shape does not broadcast to the ")
             << m << "x" << n << " product";
  }
  types.push_back(RankedTensorType::get({m, n}, elt));
  return success();
}

/// Conv's output shape (and DeformConv's) for ranked X and W: the window
/// arithmetic over X's spatial dims, W's output channels, the channel
/// counts checked against `group`.
static LogicalResult convShape(Operation *op, RankedTensorType x,
                               RankedTensorType w, int64_t group,
                               SmallVectorImpl<int64_t> &shape) {
  if (failed(checkConvRanks(op, x, w)))
    return failure();
  SmallVector<int64_t> kernel =
      intsAttr(op, "kernel_shape")
          .value_or(SmallVector<int64_t>(w.getShape().drop_front(2)));
  int64_t c = x.getDimSize(1), wc = w.getDimSize(1);
  if (group <= 0)
    return op->emitOpError("group must be positive");
  if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(wc) &&
      c != wc * group)
    return op->emitOpError("input has ") << c << " channels but weight expects "
                                         << wc << " x group " << group;
  if (int64_t f = w.getDimSize(0); !ShapedType::isDynamic(f) && f % group)
    return op->emitOpError("weight has ")
           << f << " output channels, not a multiple of group " << group;
  return windowShape(op, x, kernel, w.getDimSize(0), shape);
}

/// Conv's result for operands `x` and `w` with element type `elt`: shared
/// by Conv, ConvInteger and QLinearConv.
static LogicalResult inferConvLike(Operation *op, Value xv, Value wv,
                                   int64_t group, Type elt,
                                   SmallVectorImpl<Type> &types) {
  auto x = ranked(xv), w = ranked(wv);
  if (!x || !w) {
    types.push_back(unranked(elt));
    return success();
  }
  SmallVector<int64_t> shape;
  if (failed(convShape(op, x, w, group, shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(ConvOp) {
  return inferConvLike(*this, getX(), getW(), getGroup(), elementOf(getX()),
                       types);
}

INFER(ConvIntegerOp) {
  return inferConvLike(*this, getX(), getW(), getGroup(),
                       IntegerType::get(getContext(), 32), types);
}

INFER(QLinearConvOp) {
  return inferConvLike(*this, getX(), getW(), getGroup(),
                       elementOf(getYZeroPoint()), types);
}

// DeformConv: Conv's output shape; the offsets' (and mask's) spatial
// dims are the output's, and give them where the window arithmetic
// cannot.
INFER(DeformConvOp) {
  auto x = ranked(getX()), w = ranked(getW()), off = ranked(getOffset());
  Type elt = elementOf(getX());
  if (!x || !w) {
    types.push_back(unranked(elt));
    return success();
  }
  if (int64_t(getOffsetGroup()) <= 0)
    return emitOpError("offset_group must be positive");
  SmallVector<int64_t> shape;
  if (failed(convShape(*this, x, w, getGroup(), shape)))
    return failure();
  if (off && off.getRank() == x.getRank()) {
    for (int64_t d = 2; d < x.getRank(); ++d) {
      int64_t o = off.getDimSize(d);
      if (ShapedType::isDynamic(shape[d]))
        shape[d] = o;
      else if (!ShapedType::isDynamic(o) && o != shape[d])
        return emitOpError("offset has spatial dim ")
               << d << " of " << o << " but the window gives " << shape[d];
    }
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(ConvTransposeOp) {
  auto x = ranked(getX()), w = ranked(getW());
  Type elt = elementOf(getX());
  if (!x || !w) {
    types.push_back(unranked(elt));
    return success();
  }
  if (failed(checkConvRanks(*this, x, w)))
    return failure();
  int64_t n = x.getRank() - 2;
  SmallVector<int64_t> kernel =
      intsAttr(*this, "kernel_shape")
          .value_or(SmallVector<int64_t>(w.getShape().drop_front(2)));
  auto strides =
      intsAttr(*this, "strides").value_or(SmallVector<int64_t>(n, 1));
  auto dil = intsAttr(*this, "dilations").value_or(SmallVector<int64_t>(n, 1));
  auto pads = intsAttr(*this, "pads").value_or(SmallVector<int64_t>(2 * n, 0));
  auto outPad =
      intsAttr(*this, "output_padding").value_or(SmallVector<int64_t>(n, 0));
  auto outShape = intsAttr(*this, "output_shape");
  StringRef autoPad = getAutoPad();
  if (static_cast<int64_t>(kernel.size()) != n ||
      static_cast<int64_t>(strides.size()) != n ||
      static_cast<int64_t>(dil.size()) != n ||
      static_cast<int64_t>(pads.size()) != 2 * n ||
      static_cast<int64_t>(outPad.size()) != n)
    return emitOpError("kernel_shape, strides, dilations and output_padding "
                       "must have ")
           << n << " entries and pads " << 2 * n;
  SmallVector<int64_t> shape = {x.getDimSize(0),
                                mulDims(w.getDimSize(1), getGroup())};
  for (int64_t i = 0; i < n; ++i) {
    int64_t in = x.getDimSize(i + 2);
    if (outShape && static_cast<int64_t>(outShape->size()) == n) {
      shape.push_back((*outShape)[i]);
    } else if (outShape && static_cast<int64_t>(outShape->size()) == n + 2) {
      shape.push_back((*outShape)[i + 2]);
    } else if (ShapedType::isDynamic(in)) {
      shape.push_back(kDyn);
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      shape.push_back(in * strides[i]);
    } else {
      shape.push_back(strides[i] * (in - 1) + outPad[i] +
                      ((kernel[i] - 1) * dil[i] + 1) - pads[i] - pads[i + n]);
    }
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(BatchNormalizationOp) {
  types.push_back(getX().getType());
  keep(*this, types);
  return success();
}

INFER(MaxPoolOp) { return inferPool(*this, types); }
INFER(AveragePoolOp) { return inferPool(*this, types); }
INFER(LpPoolOp) { return inferPool(*this, types); }
INFER(GlobalAveragePoolOp) { return inferGlobalPool(*this, types); }
INFER(GlobalMaxPoolOp) { return inferGlobalPool(*this, types); }
INFER(GlobalLpPoolOp) { return inferGlobalPool(*this, types); }

INFER(ReshapeOp) {
  Type elt = elementOf(getData());
  auto target = shapeOperand(getShape());
  if (!target) {
    types.push_back(unranked(elt));
    return success();
  }
  auto data = ranked(getData());
  bool allowZero = getAllowzero() != 0;
  SmallVector<int64_t> shape;
  int64_t inferAt = -1;
  bool unknown = false;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == -1) {
      if (inferAt >= 0)
        return emitOpError("shape has more than one -1");
      inferAt = i;
      shape.push_back(kDyn);
    } else if (d == 0 && !allowZero) {
      if (!data || static_cast<int64_t>(i) >= data.getRank())
        shape.push_back(kDyn);
      else
        shape.push_back(data.getDimSize(i));
    } else if (ShapedType::isDynamic(d)) {
      unknown = true;
      shape.push_back(kDyn);
    } else if (d < -1) {
      return emitOpError("shape has a negative extent ") << d;
    } else {
      shape.push_back(d);
    }
  }
  if (inferAt >= 0 && data && data.hasStaticShape() && !unknown) {
    int64_t known = 1;
    for (auto [i, d] : llvm::enumerate(shape))
      if (static_cast<int64_t>(i) != inferAt) {
        if (ShapedType::isDynamic(d))
          known = -1;
        else
          known *= d;
      }
    if (known > 0) {
      if (data.getNumElements() % known != 0)
        return emitOpError("cannot reshape ")
               << data.getNumElements() << " elements to the given shape";
      shape[inferAt] = data.getNumElements() / known;
    }
  }
  if (data && data.hasStaticShape() && llvm::none_of(shape, [](int64_t d) {
        return ShapedType::isDynamic(d);
      })) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (n != data.getNumElements())
      return emitOpError("cannot reshape ")
             << data.getNumElements() << " elements into " << n;
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(FlattenOp) {
  auto x = ranked(getInput());
  Type elt = elementOf(getInput());
  if (!x) {
    types.push_back(tensorOf(SmallVector<int64_t>{kDyn, kDyn}, elt));
    return success();
  }
  auto axis = normAxis(*this, getAxis(), x.getRank(), /*allowEnd=*/true);
  if (failed(axis))
    return failure();
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < x.getRank(); ++i)
    (i < *axis ? a : b) = mulDims(i < *axis ? a : b, x.getDimSize(i));
  types.push_back(RankedTensorType::get({a, b}, elt));
  return success();
}

INFER(TransposeOp) {
  auto x = ranked(getData());
  if (!x) {
    types.push_back(getData().getType());
    return success();
  }
  int64_t rank = x.getRank();
  SmallVector<int64_t> perm;
  if (auto p = getPerm())
    perm.assign(p->begin(), p->end());
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOpError("perm has ")
           << perm.size() << " entries for rank " << rank;
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return emitOpError("perm is not a permutation of 0..") << rank - 1;
    seen[p] = true;
    shape.push_back(x.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

INFER(ConcatOp) {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  Type elt = elementOf(getInputs()[0]);
  std::optional<SmallVector<int64_t>> shape;
  int64_t axis = 0;
  for (Value v : getInputs()) {
    auto t = ranked(v);
    if (!t)
      continue;
    if (!shape) {
      auto a = normAxis(*this, getAxis(), t.getRank());
      if (failed(a))
        return failure();
      axis = *a;
      shape = SmallVector<int64_t>(t.getShape());
      shape->begin()[axis] = 0;
    }
    if (t.getRank() != static_cast<int64_t>(shape->size()))
      return emitOpError("inputs have different ranks");
    for (int64_t i = 0; i < t.getRank(); ++i) {
      int64_t &d = (*shape)[i];
      int64_t e = t.getDimSize(i);
      if (i == axis) {
        d = (ShapedType::isDynamic(d) || ShapedType::isDynamic(e)) ? kDyn
                                                                   : d + e;
      } else if (ShapedType::isDynamic(d)) {
        d = e;
      } else if (!ShapedType::isDynamic(e) && d != e) {
        return emitOpError("inputs differ in dimension ")
               << i << ": " << d << " vs " << e;
      }
    }
  }
  bool allRanked = llvm::all_of(getInputs(), [](Value v) { return ranked(v); });
  if (shape && !allRanked)
    (*shape)[axis] = kDyn;
  types.push_back(shape ? tensorOf(*shape, elt) : unranked(elt));
  return success();
}

INFER(SplitOp) {
  auto x = ranked(getInput());
  Type elt = elementOf(getInput());
  unsigned n = getNumResults();
  if (!x) {
    for (unsigned i = 0; i < n; ++i)
      types.push_back(unranked(elt));
    return success();
  }
  auto axis = normAxis(*this, getAxis(), x.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = x.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (Value split = getSplit()) {
    if (auto s = getConstantInts(split))
      sizes = *s;
    else
      sizes.assign(n, kDyn);
  } else if (!ShapedType::isDynamic(dim)) {
    int64_t chunk = (dim + n - 1) / n;
    for (unsigned i = 0; i < n; ++i)
      sizes.push_back(std::min(chunk, std::max<int64_t>(0, dim - chunk * i)));
  } else {
    sizes.assign(n, kDyn);
  }
  if (sizes.size() != n)
    return emitOpError("split has ")
           << sizes.size() << " sizes for " << n << " outputs";
  for (int64_t s : sizes) {
    SmallVector<int64_t> shape(x.getShape());
    shape[*axis] = s;
    types.push_back(RankedTensorType::get(shape, elt));
  }
  return success();
}

INFER(SliceOp) {
  auto x = ranked(getData());
  Type elt = elementOf(getData());
  if (!x) {
    types.push_back(unranked(elt));
    return success();
  }
  int64_t rank = x.getRank();
  auto starts = getConstantInts(getStarts()), ends = getConstantInts(getEnds());
  std::optional<SmallVector<int64_t>> axes, steps;
  if (getAxes())
    axes = getConstantInts(getAxes());
  if (getSteps())
    steps = getConstantInts(getSteps());
  SmallVector<int64_t> shape(x.getShape());
  if (!starts || !ends || (getAxes() && !axes) || (getSteps() && !steps)) {
    // Unknown parameters: every sliced axis may change.
    if (getAxes() && axes) {
      for (int64_t a : *axes)
        if (auto n = normAxis(*this, a, rank); succeeded(n))
          shape[*n] = kDyn;
    } else {
      shape.assign(rank, kDyn);
    }
    types.push_back(RankedTensorType::get(shape, elt));
    return success();
  }
  if (starts->size() != ends->size())
    return emitOpError("starts and ends differ in length");
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < starts->size(); ++i)
      axes->push_back(i);
  }
  if (!steps)
    steps = SmallVector<int64_t>(starts->size(), 1);
  if (axes->size() != starts->size() || steps->size() != starts->size())
    return emitOpError("starts, ends, axes and steps differ in length");
  for (size_t i = 0; i < axes->size(); ++i) {
    auto a = normAxis(*this, (*axes)[i], rank);
    if (failed(a))
      return failure();
    int64_t dim = x.getDimSize(*a), step = (*steps)[i];
    if (step == 0)
      return emitOpError("step must not be 0");
    if (ShapedType::isDynamic(dim)) {
      shape[*a] = kDyn;
      continue;
    }
    int64_t s = (*starts)[i], e = (*ends)[i];
    if (s < 0)
      s = s < -dim ? -dim : s, s += dim;
    if (e < 0)
      e = e < -dim ? -dim - (step < 0 ? 1 : 0) : e, e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[*a] = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[*a] = s > e ? (s - e - step - 1) / -step : 0;
    }
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(GatherOp) {
  auto x = ranked(getData()), idx = ranked(getIndices());
  Type elt = elementOf(getData());
  if (!x || !idx) {
    types.push_back(unranked(elt));
    return success();
  }
  auto axis = normAxis(*this, getAxis(), x.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(x.getShape().take_front(*axis));
  llvm::append_range(shape, idx.getShape());
  llvm::append_range(shape, x.getShape().drop_front(*axis + 1));
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(GatherElementsOp) {
  auto idx = ranked(getIndices());
  Type elt = elementOf(getData());
  types.push_back(idx ? tensorOf(idx.getShape(), elt) : unranked(elt));
  return success();
}

INFER(GatherNDOp) {
  auto x = ranked(getData()), idx = ranked(getIndices());
  Type elt = elementOf(getData());
  if (!x || !idx || idx.isDynamicDim(idx.getRank() - 1)) {
    types.push_back(unranked(elt));
    return success();
  }
  int64_t b = getBatchDims(), k = idx.getDimSize(idx.getRank() - 1);
  if (b + k > x.getRank())
    return emitOpError("indices address more dimensions than data has");
  SmallVector<int64_t> shape(idx.getShape().drop_back());
  llvm::append_range(shape, x.getShape().drop_front(b + k));
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(ScatterElementsOp) {
  types.push_back(getData().getType());
  return success();
}
INFER(ScatterNDOp) {
  types.push_back(getData().getType());
  return success();
}

INFER(SqueezeOp) {
  auto x = ranked(getData());
  Type elt = elementOf(getData());
  if (!x) {
    types.push_back(unranked(elt));
    return success();
  }
  std::optional<SmallVector<int64_t>> axes;
  if (getAxes()) {
    axes = getConstantInts(getAxes());
    if (!axes) {
      types.push_back(unranked(elt));
      return success();
    }
  }
  SmallVector<bool> drop(x.getRank(), false);
  if (axes) {
    for (int64_t a : *axes) {
      auto n = normAxis(*this, a, x.getRank());
      if (failed(n))
        return failure();
      int64_t d = x.getDimSize(*n);
      if (!ShapedType::isDynamic(d) && d != 1)
        return emitOpError("cannot squeeze axis ") << *n << " of extent " << d;
      drop[*n] = true;
    }
  } else {
    for (int64_t i = 0; i < x.getRank(); ++i) {
      if (x.isDynamicDim(i)) {
        types.push_back(unranked(elt));
        return success();
      }
      drop[i] = x.getDimSize(i) == 1;
    }
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < x.getRank(); ++i)
    if (!drop[i])
      shape.push_back(x.getDimSize(i));
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(UnsqueezeOp) {
  auto x = ranked(getData());
  Type elt = elementOf(getData());
  auto axes = getConstantInts(getAxes());
  if (!x || !axes) {
    types.push_back(unranked(elt));
    return success();
  }
  int64_t rank = x.getRank() + axes->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    auto n = normAxis(*this, a, rank);
    if (failed(n))
      return failure();
    if (inserted[*n])
      return emitOpError("axes repeat ") << *n;
    inserted[*n] = true;
  }
  SmallVector<int64_t> shape;
  unsigned j = 0;
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(inserted[i] ? 1 : x.getDimSize(j++));
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(ExpandOp) {
  auto x = ranked(getInput());
  Type elt = elementOf(getInput());
  auto target = shapeOperand(getShape());
  if (!x || !target) {
    types.push_back(unranked(elt));
    return success();
  }
  // A `?` in the target broadcasts like 1 against the input, except that the
  // result extent is then unknown unless the input's is > 1.
  SmallVector<int64_t> t = *target;
  SmallVector<ArrayRef<int64_t>> shapes = {x.getShape(), t};
  auto shape = broadcastStaticShapes(*this, shapes);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, elt));
  return success();
}

INFER(TileOp) {
  auto x = ranked(getInput());
  Type elt = elementOf(getInput());
  if (!x) {
    types.push_back(unranked(elt));
    return success();
  }
  auto reps = getConstantInts(getRepeats());
  SmallVector<int64_t> shape(x.getRank(), kDyn);
  if (reps) {
    if (static_cast<int64_t>(reps->size()) != x.getRank())
      return emitOpError("repeats has ")
             << reps->size() << " entries for rank " << x.getRank();
    for (int64_t i = 0; i < x.getRank(); ++i)
      shape[i] = mulDims(x.getDimSize(i), (*reps)[i]);
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(PadOp) {
  auto x = ranked(getData());
  Type elt = elementOf(getData());
  if (!x) {
    types.push_back(unranked(elt));
    return success();
  }
  int64_t rank = x.getRank();
  auto pads = getConstantInts(getPads());
  std::optional<SmallVector<int64_t>> given;
  if (getAxes()) {
    given = getConstantInts(getAxes());
    if (!given) {
      types.push_back(
          RankedTensorType::get(SmallVector<int64_t>(rank, kDyn), elt));
      return success();
    }
  }
  auto axesOr = axesOrAll(
      *this, given ? std::optional<ArrayRef<int64_t>>(*given) : std::nullopt,
      rank);
  if (failed(axesOr))
    return failure();
  SmallVector<int64_t> &axes = *axesOr;
  SmallVector<int64_t> shape(x.getShape());
  if (!pads) {
    for (int64_t a : axes)
      shape[a] = kDyn;
  } else {
    size_t n = axes.size();
    if (pads->size() != 2 * n)
      return emitOpError("pads has ")
             << pads->size() << " entries, expected " << 2 * n;
    for (size_t i = 0; i < n; ++i)
      if (!ShapedType::isDynamic(shape[axes[i]]))
        shape[axes[i]] += (*pads)[i] + (*pads)[i + n];
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(ShapeOp) {
  auto x = ranked(getData());
  Type i64 = IntegerType::get(getContext(), 64);
  if (!x) {
    types.push_back(RankedTensorType::get({kDyn}, i64));
    return success();
  }
  int64_t rank = x.getRank();
  int64_t start = getStart();
  int64_t end = getEnd() ? static_cast<int64_t>(*getEnd()) : rank;
  auto clampAxis = [&](int64_t a) {
    if (a < 0)
      a += rank;
    return std::clamp<int64_t>(a, 0, rank);
  };
  start = clampAxis(start);
  end = clampAxis(end);
  types.push_back(
      RankedTensorType::get({std::max<int64_t>(0, end - start)}, i64));
  return success();
}

INFER(SizeOp) {
  types.push_back(
      RankedTensorType::get({}, IntegerType::get(getContext(), 64)));
  return success();
}

INFER(ConstantOfShapeOp) {
  Type elt = getValue() ? cast<ElementsAttr>(*getValue()).getElementType()
                        : Float32Type::get(getContext());
  auto shape = shapeOperand(getInput());
  types.push_back(shape ? tensorOf(*shape, elt) : unranked(elt));
  return success();
}

INFER(RangeOp) {
  Type elt = elementOf(getStart());
  int64_t n = kDyn;
  if (isa<IntegerType>(elt)) {
    auto s = getConstantInts(getStart()), l = getConstantInts(getLimit()),
         d = getConstantInts(getDelta());
    if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1 &&
        (*d)[0] != 0) {
      double cnt = std::ceil(double((*l)[0] - (*s)[0]) / double((*d)[0]));
      n = std::max<int64_t>(0, static_cast<int64_t>(cnt));
    }
  } else {
    auto s = constFloats(getStart()), l = constFloats(getLimit()),
         d = constFloats(getDelta());
    if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1 &&
        (*d)[0] != 0)
      n = std::max<int64_t>(
          0, static_cast<int64_t>(std::ceil(((*l)[0] - (*s)[0]) / (*d)[0])));
  }
  types.push_back(RankedTensorType::get({n}, elt));
  return success();
}

INFER(LayerNormalizationOp) {
  auto x = ranked(getX());
  types.push_back(getX().getType());
  if (getNumResults() == 1)
    return success();
  Type stat = getStashType() == 1 ? Type(Float32Type::get(getContext()))
                                  : elementOf(getX());
  if (!x) {
    while (types.size() < getNumResults())
      types.push_back(unranked(stat));
    return success();
  }
  auto axis = normAxis(*this, getAxis(), x.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  for (int64_t i = *axis; i < x.getRank(); ++i)
    shape[i] = 1;
  while (types.size() < getNumResults())
    types.push_back(RankedTensorType::get(shape, stat));
  return success();
}

INFER(ReduceMeanOp) { return inferReduce(*this, types); }
INFER(ReduceSumOp) { return inferReduce(*this, types); }
INFER(ReduceMaxOp) { return inferReduce(*this, types); }
INFER(ReduceMinOp) { return inferReduce(*this, types); }
INFER(ReduceProdOp) { return inferReduce(*this, types); }
INFER(ReduceL1Op) { return inferReduce(*this, types); }
INFER(ReduceL2Op) { return inferReduce(*this, types); }
INFER(ReduceLogSumOp) { return inferReduce(*this, types); }
INFER(ReduceLogSumExpOp) { return inferReduce(*this, types); }
INFER(ReduceSumSquareOp) { return inferReduce(*this, types); }
INFER(ArgMaxOp) { return inferArgReduce(*this, types); }
INFER(ArgMinOp) { return inferArgReduce(*this, types); }

INFER(DropoutOp) {
  types.push_back(getData().getType());
  if (getNumResults() > 1) {
    auto x = ranked(getData());
    Type i1 = IntegerType::get(getContext(), 1);
    types.push_back(x ? tensorOf(x.getShape(), i1) : unranked(i1));
  }
  return success();
}

INFER(QuantizeLinearOp) {
  auto x = ranked(getX());
  Type elt;
  if (Value zp = getYZeroPoint())
    elt = elementOf(zp);
  else if (getOutputDtype() != 0)
    elt = getElementTypeFromOnnx(getContext(), getOutputDtype());
  else
    elt = IntegerType::get(getContext(), 8, IntegerType::Unsigned);
  if (!elt)
    return emitOpError("unsupported output_dtype ") << getOutputDtype();
  types.push_back(x ? tensorOf(x.getShape(), elt) : unranked(elt));
  return success();
}

INFER(DequantizeLinearOp) {
  auto x = ranked(getX());
  Type elt = elementOf(getXScale());
  types.push_back(x ? tensorOf(x.getShape(), elt) : unranked(elt));
  return success();
}

static LogicalResult inferBlockRearrange(Operation *op, Value input,
                                         int64_t block, bool toDepth,
                                         SmallVectorImpl<Type> &types) {
  auto x = ranked(input);
  if (!x) {
    types.push_back(input.getType());
    return success();
  }
  if (x.getRank() != 4)
    return op->emitOpError("expects a 4-D input");
  if (block <= 0)
    return op->emitOpError("blocksize must be positive");
  int64_t b2 = block * block;
  auto div = [](int64_t d, int64_t k) {
    return ShapedType::isDynamic(d) ? kDyn : d / k;
  };
  SmallVector<int64_t> shape = {x.getDimSize(0)};
  if (toDepth) {
    shape.push_back(mulDims(x.getDimSize(1), b2));
    shape.push_back(div(x.getDimSize(2), block));
    shape.push_back(div(x.getDimSize(3), block));
  } else {
    shape.push_back(div(x.getDimSize(1), b2));
    shape.push_back(mulDims(x.getDimSize(2), block));
    shape.push_back(mulDims(x.getDimSize(3), block));
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

INFER(DepthToSpaceOp) {
  return inferBlockRearrange(*this, getInput(), getBlocksize(), false, types);
}
INFER(SpaceToDepthOp) {
  return inferBlockRearrange(*this, getInput(), getBlocksize(), true, types);
}

INFER(EyeLikeOp) {
  Type elt = getDtype() ? *getDtype() : elementOf(getInput());
  auto x = ranked(getInput());
  types.push_back(x ? tensorOf(x.getShape(), elt) : unranked(elt));
  return success();
}

INFER(TriluOp) {
  types.push_back(getInput().getType());
  return success();
}

INFER(OneHotOp) {
  auto idx = ranked(getIndices());
  Type elt = elementOf(getValues());
  if (!idx) {
    types.push_back(unranked(elt));
    return success();
  }
  int64_t depth = kDyn;
  if (auto d = getConstantInts(getDepth()); d && d->size() == 1)
    depth = (*d)[0];
  else if (auto f = constFloats(getDepth()); f && f->size() == 1)
    depth = static_cast<int64_t>((*f)[0]);
  auto axis = normAxis(*this, getAxis(), idx.getRank() + 1);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(idx.getShape());
  shape.insert(shape.begin() + *axis, depth);
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(TopKOp) {
  auto x = ranked(getX());
  Type elt = elementOf(getX()), i64 = IntegerType::get(getContext(), 64);
  if (!x) {
    types.push_back(unranked(elt));
    types.push_back(unranked(i64));
    return success();
  }
  auto axis = normAxis(*this, getAxis(), x.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  auto k = getConstantInts(getK());
  shape[*axis] = k && k->size() == 1 ? (*k)[0] : kDyn;
  types.push_back(RankedTensorType::get(shape, elt));
  types.push_back(RankedTensorType::get(shape, i64));
  return success();
}

INFER(ResizeOp) {
  auto x = ranked(getX());
  Type elt = elementOf(getX());
  if (!x) {
    types.push_back(unranked(elt));
    return success();
  }
  int64_t rank = x.getRank();
  SmallVector<int64_t> shape(rank, kDyn);
  auto axesOr = axesOrAll(*this, getAxes(), rank);
  if (failed(axesOr))
    return failure();
  SmallVector<int64_t> &axes = *axesOr;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(axes, i))
      shape[i] = x.getDimSize(i);
  bool policy = getKeepAspectRatioPolicy() != "stretch";
  if (auto sizes = getConstantInts(getSizes()); sizes && !policy) {
    if (sizes->size() != axes.size())
      return emitOpError("sizes has ")
             << sizes->size() << " entries for " << axes.size() << " axes";
    for (auto [a, s] : llvm::zip(axes, *sizes))
      shape[a] = s;
  } else if (auto scales = constFloats(getScales());
             scales && !scales->empty()) {
    if (scales->size() != axes.size())
      return emitOpError("scales has ")
             << scales->size() << " entries for " << axes.size() << " axes";
    for (auto [a, s] : llvm::zip(axes, *scales)) {
      int64_t d = x.getDimSize(a);
      shape[a] = ShapedType::isDynamic(d)
                     ? kDyn
                     : static_cast<int64_t>(std::floor(double(d) * s));
    }
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(CenterCropPadOp) {
  auto x = ranked(getInputData());
  Type elt = elementOf(getInputData());
  if (!x) {
    types.push_back(unranked(elt));
    return success();
  }
  auto axesOr = axesOrAll(*this, getAxes(), x.getRank(), /*unique=*/true);
  if (failed(axesOr))
    return failure();
  SmallVector<int64_t> &axes = *axesOr;
  SmallVector<int64_t> shape(x.getShape());
  std::optional<SmallVector<int64_t>> sizes = shapeOperand(getShape());
  if (sizes && sizes->size() != axes.size())
    return emitOpError("shape has ")
           << sizes->size() << " entries for " << axes.size() << " axes";
  for (auto [i, a] : llvm::enumerate(axes)) {
    int64_t s = sizes ? (*sizes)[i] : kDyn;
    if (!ShapedType::isDynamic(s) && s < 0)
      return emitOpError("shape has a negative size ") << s;
    shape[a] = s;
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(AffineGridOp) {
  auto theta = ranked(getTheta());
  Type elt = elementOf(getTheta());
  if (theta && (theta.getRank() != 3 ||
                (!theta.isDynamicDim(1) && theta.getDimSize(1) != 2 &&
                 theta.getDimSize(1) != 3)))
    return emitOpError("theta must be [N, 2, 3] or [N, 3, 4], not ") << theta;
  // The grid's rank: 4 for 2-D (size [N, C, H, W]), 5 for 3-D.
  int64_t rank = kDyn;
  std::optional<SmallVector<int64_t>> size = shapeOperand(getSize());
  if (size)
    rank = size->size();
  else if (theta && !theta.isDynamicDim(1))
    rank = theta.getDimSize(1) + 2;
  if (ShapedType::isDynamic(rank)) {
    types.push_back(unranked(elt));
    return success();
  }
  if (rank != 4 && rank != 5)
    return emitOpError("size must have 4 entries (N, C, H, W) or 5 "
                       "(N, C, D, H, W), not ")
           << rank;
  if (theta && !theta.isDynamicDim(1) && theta.getDimSize(1) + 2 != rank)
    return emitOpError("theta ")
           << theta << " does not match a size of " << rank << " entries";
  // [N, H, W, 2] or [N, D, H, W, 3]: the batch from size (or theta), the
  // spatial dims from size, the coordinates last.
  SmallVector<int64_t> shape(rank, kDyn);
  if (size) {
    shape[0] = (*size)[0];
    for (int64_t d = 2; d < rank; ++d)
      shape[d - 1] = (*size)[d];
  }
  if (ShapedType::isDynamic(shape[0]) && theta)
    shape[0] = theta.getDimSize(0);
  shape[rank - 1] = rank - 2;
  for (int64_t d : shape)
    if (!ShapedType::isDynamic(d) && d < 0)
      return emitOpError("size has a negative entry ") << d;
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

INFER(BitCastOp) {
  Type to = kiln::getElementTypeFromOnnx(getContext(), getTo());
  if (!to || !to.isIntOrFloat())
    return emitOpError("to = ") << getTo() << " is not a numeric data type";
  // ONNX's bool is a byte.
  auto width = [](Type t) {
    return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth();
  };
  Type from = elementOf(getInput());
  if (from.isIntOrFloat() && width(from) != width(to))
    return emitOpError("to = ")
           << getTo() << " (" << to << ", " << width(to)
           << " bits) is not the width of the input's " << from << " ("
           << width(from) << " bits): BitCast keeps the bit width";
  auto x = ranked(getInput());
  types.push_back(x ? tensorOf(x.getShape(), to) : unranked(to));
  return success();
}

/// RNN, GRU and LSTM: Y is [seq, directions, batch, hidden] ([batch, seq,
/// directions, hidden] with layout 1) and the final states Y_h (and LSTM's
/// Y_c) are [directions, batch, hidden] ([batch, directions, hidden]). The
/// hidden size is the attribute, or R's last dim. Outputs the node leaves
/// out are absent from the op: `present` says which of Y, Y_h, Y_c are
/// there.
static LogicalResult inferRecurrent(Operation *op, Value xv, Value rv,
                                    std::optional<uint64_t> hiddenAttr,
                                    StringRef direction, int64_t layout,
                                    ArrayRef<bool> present,
                                    SmallVectorImpl<Type> &types) {
  Type elt = elementOf(xv);
  auto x = ranked(xv), r = ranked(rv);
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  // The diagnostics are the lowering's, which checks the same.
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return op->emitOpError("unknown direction '") << direction << "'";
  if (layout != 0 && layout != 1)
    return op->emitOpError("unknown layout ") << layout;
  if ((x && x.getRank() != 3) || (r && r.getRank() != 3))
    return op->emitOpError("needs X and R of rank 3");
  int64_t hidden = hiddenAttr ? static_cast<int64_t>(*hiddenAttr)
                              : (r ? r.getDimSize(2) : kDyn);
  if (hiddenAttr && r && !ShapedType::isDynamic(r.getDimSize(2)) &&
      r.getDimSize(2) != hidden)
    return op->emitOpError("hidden_size ")
           << hidden << " disagrees with R's shape " << r;
  int64_t seq = x ? x.getDimSize(layout ? 1 : 0) : kDyn;
  int64_t batch = x ? x.getDimSize(layout ? 0 : 1) : kDyn;
  for (auto [i, has] : llvm::enumerate(present)) {
    if (!has)
      continue;
    SmallVector<int64_t> shape;
    if (i == 0)
      shape = layout ? SmallVector<int64_t>{batch, seq, dirs, hidden}
                     : SmallVector<int64_t>{seq, dirs, batch, hidden};
    else
      shape = layout ? SmallVector<int64_t>{batch, dirs, hidden}
                     : SmallVector<int64_t>{dirs, batch, hidden};
    types.push_back(RankedTensorType::get(shape, elt));
  }
  return success();
}

INFER(RNNOp) {
  return inferRecurrent(*this, getX(), getR(), getHiddenSize(), getDirection(),
                        getLayout(), {bool(getY()), bool(getYH())}, types);
}

INFER(GRUOp) {
  return inferRecurrent(*this, getX(), getR(), getHiddenSize(), getDirection(),
                        getLayout(), {bool(getY()), bool(getYH())}, types);
}

INFER(LSTMOp) {
  return inferRecurrent(*this, getX(), getR(), getHiddenSize(), getDirection(),
                        getLayout(),
                        {bool(getY()), bool(getYH()), bool(getYC())}, types);
}

// y has x's shape in uint8; the scale (f32) and zero point (uint8) are
// scalars.
INFER(DynamicQuantizeLinearOp) {
  auto x = ranked(getX());
  Type u8 = IntegerType::get(getContext(), 8, IntegerType::Unsigned);
  types.push_back(x ? tensorOf(x.getShape(), u8) : unranked(u8));
  types.push_back(RankedTensorType::get({}, Float32Type::get(getContext())));
  types.push_back(RankedTensorType::get({}, u8));
  return success();
}

//===----------------------------------------------------------------------===//
// Einsum equations (shared with the lowering)
//===----------------------------------------------------------------------===//

std::string kiln::einsumTermString(const EinsumTerm &t) {
  std::string s;
  for (char c : t)
    s += c == '.' ? std::string("...") : std::string(1, c);
  return s;
}

LogicalResult kiln::parseEinsum(StringRef eq, size_t numInputs,
                                SmallVectorImpl<EinsumTerm> &inputs,
                                EinsumTerm &output, std::string &error) {
  std::string compact;
  for (char c : eq)
    if (c != ' ')
      compact.push_back(c);
  StringRef s(compact);
  auto [lhs, rhs] = s.split("->");
  bool explicitOut = s.contains("->");
  auto parseTerm = [&](StringRef t, EinsumTerm &term) -> LogicalResult {
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.substr(i).starts_with("...")) {
        if (llvm::is_contained(term, '.')) {
          error = "has two ellipses in one term";
          return failure();
        }
        term.push_back('.');
        i += 2;
      } else if (std::isalpha(static_cast<unsigned char>(t[i]))) {
        term.push_back(t[i]);
      } else {
        error = (Twine("has an invalid character '") + Twine(t[i]) + "'").str();
        return failure();
      }
    }
    return success();
  };
  SmallVector<StringRef> parts;
  lhs.split(parts, ',');
  if (parts.size() != numInputs) {
    error = "names " + std::to_string(parts.size()) +
            " inputs but the op has " + std::to_string(numInputs);
    return failure();
  }
  for (StringRef p : parts)
    if (failed(parseTerm(p, inputs.emplace_back())))
      return failure();
  if (explicitOut)
    return parseTerm(rhs, output);
  // Implicit output: the ellipsis, then the labels used exactly once, in
  // alphabetical order.
  std::map<char, int> uses;
  bool ellipsis = false;
  for (const EinsumTerm &t : inputs)
    for (char c : t)
      c == '.' ? (void)(ellipsis = true) : (void)++uses[c];
  if (ellipsis)
    output.push_back('.');
  for (auto [c, n] : uses)
    if (n == 1)
      output.push_back(c);
  return success();
}

/// Einsum: the equation's terms give every label's extent (an ellipsis
/// stands for the dims no label names, broadcast across the inputs, a
/// size-1 extent broadcast too); the output term orders them. The
/// diagnostics are the lowering's, which checks the same.
INFER(EinsumOp) {
  Type elt = elementOf(getInputs().front());
  SmallVector<EinsumTerm> terms;
  EinsumTerm out;
  std::string error;
  if (failed(parseEinsum(getEquation(), getInputs().size(), terms, out, error)))
    return emitOpError("equation '") << getEquation() << "' " << error;
  if (llvm::any_of(getInputs(), [](Value v) { return !ranked(v); })) {
    types.push_back(unranked(elt));
    return success();
  }
  std::map<char, int64_t> extent;
  SmallVector<SmallVector<int64_t>> ellipses;
  for (auto [term, input] : llvm::zip(terms, getInputs())) {
    auto t = ranked(input);
    int64_t labels = llvm::count_if(term, [](char c) { return c != '.'; });
    bool hasEllipsis = llvm::is_contained(term, '.');
    if (hasEllipsis ? t.getRank() < labels : t.getRank() != labels)
      return emitOpError("term ")
             << einsumTermString(term) << " has " << labels
             << " labels for an input of rank " << t.getRank();
    int64_t dim = 0;
    for (char c : term) {
      if (c == '.') {
        int64_t n = t.getRank() - labels;
        ellipses.emplace_back(t.getShape().slice(dim, n));
        dim += n;
        continue;
      }
      int64_t d = t.getDimSize(dim);
      auto [it, fresh] = extent.try_emplace(c, d);
      if (!fresh && !ShapedType::isDynamic(d) && d != 1) {
        if (ShapedType::isDynamic(it->second) || it->second == 1)
          it->second = d;
        else if (it->second != d)
          return emitOpError("input of type ")
                 << t << " disagrees with the other inputs on the extent "
                 << "of dim " << dim;
      }
      ++dim;
    }
  }
  SmallVector<int64_t> ellipsis;
  if (!ellipses.empty()) {
    SmallVector<ArrayRef<int64_t>> shapes(ellipses.begin(), ellipses.end());
    auto bc = broadcastStaticShapes(*this, shapes);
    if (failed(bc))
      return failure();
    ellipsis = *bc;
  }
  SmallVector<int64_t> shape;
  for (char c : out) {
    if (c == '.') {
      llvm::append_range(shape, ellipsis);
      continue;
    }
    auto it = extent.find(c);
    if (it == extent.end())
      return emitOpError("output label '") << c << "' appears in no input";
    shape.push_back(it->second);
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

// GridSample: N and C of X, the grid's spatial dims.
INFER(GridSampleOp) {
  auto x = ranked(getX()), g = ranked(getGrid());
  Type elt = elementOf(getX());
  if (!x || !g) {
    types.push_back(unranked(elt));
    return success();
  }
  if (g.getRank() != x.getRank())
    return emitOpError("grid has rank ")
           << g.getRank() << " but X has rank " << x.getRank();
  SmallVector<int64_t> shape = {x.getDimSize(0), x.getDimSize(1)};
  llvm::append_range(shape, g.getShape().drop_front().drop_back());
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

// RoiAlign: one C x output_height x output_width window per roi.
INFER(RoiAlignOp) {
  auto x = ranked(getX()), rois = ranked(getRois());
  int64_t n = rois ? rois.getDimSize(0) : kDyn;
  int64_t c = x ? x.getDimSize(1) : kDyn;
  types.push_back(
      RankedTensorType::get({n, c, static_cast<int64_t>(getOutputHeight()),
                             static_cast<int64_t>(getOutputWidth())},
                            elementOf(getX())));
  return success();
}
