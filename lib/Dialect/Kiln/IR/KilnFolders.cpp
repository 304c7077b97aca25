//===- KilnFolders.cpp - constant folding of kiln ops ---------------------===//
//
// Folds the ops that shape computations in exported models are built from
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) and elementwise
// arithmetic on small constants. Only inline dense constants are folded;
// weights held as resources are left alone.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace kiln;

namespace {
/// Folding past this many elements costs more than it saves.
constexpr int64_t kMaxFoldElements = 1 << 16;

DenseElementsAttr dense(Attribute a) {
  auto d = dyn_cast_or_null<DenseElementsAttr>(a);
  if (!d || d.getNumElements() > kMaxFoldElements)
    return {};
  return d;
}

RankedTensorType staticResult(Operation *op) {
  auto t = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return t && t.hasStaticShape() ? t : RankedTensorType();
}

/// Same data under a new static shape (Reshape, Squeeze, Unsqueeze,
/// Flatten).
OpFoldResult foldReshapeLike(Operation *op, Attribute data) {
  auto d = dense(data);
  auto type = staticResult(op);
  if (!d || !type || type.getElementType() != d.getElementType())
    return {};
  return d.reshape(type);
}

/// Index of the operand element that broadcasts to result element `flat`.
int64_t broadcastIndex(ArrayRef<int64_t> outShape, ArrayRef<int64_t> inShape,
                       int64_t flat) {
  int64_t idx = 0, stride = 1;
  for (int64_t i = outShape.size() - 1, j = inShape.size() - 1; j >= 0;
       --i, --j) {
    int64_t coord = flat % outShape[i];
    flat /= outShape[i];
    if (inShape[j] != 1)
      idx += coord * stride;
    stride *= inShape[j];
  }
  return idx;
}

template <typename IntFn, typename FloatFn>
OpFoldResult foldBinary(Operation *op, ArrayRef<Attribute> operands,
                        IntFn intFn, FloatFn floatFn, bool floats = true) {
  if (operands.size() != 2)
    return {};
  auto a = dense(operands[0]), b = dense(operands[1]);
  auto type = staticResult(op);
  if (!a || !b || !type || a.getElementType() != b.getElementType() ||
      type.getElementType() != a.getElementType())
    return {};
  ArrayRef<int64_t> as = a.getType().getShape(), bs = b.getType().getShape(),
                    os = type.getShape();
  int64_t n = type.getNumElements();
  if (auto it = dyn_cast<IntegerType>(type.getElementType())) {
    auto av = llvm::to_vector(a.getValues<APInt>());
    auto bv = llvm::to_vector(b.getValues<APInt>());
    SmallVector<APInt> out;
    for (int64_t i = 0; i < n; ++i) {
      auto r = intFn(av[broadcastIndex(os, as, i)],
                     bv[broadcastIndex(os, bs, i)], it.isUnsigned());
      if (!r)
        return {};
      out.push_back(*r);
    }
    return DenseElementsAttr::get(type, out);
  }
  if (floats && isa<FloatType>(type.getElementType())) {
    auto av = llvm::to_vector(a.getValues<APFloat>());
    auto bv = llvm::to_vector(b.getValues<APFloat>());
    SmallVector<APFloat> out;
    for (int64_t i = 0; i < n; ++i)
      out.push_back(floatFn(av[broadcastIndex(os, as, i)],
                            bv[broadcastIndex(os, bs, i)]));
    return DenseElementsAttr::get(type, out);
  }
  return {};
}
} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      *this, adaptor.getOperands(),
      [](const APInt &x, const APInt &y, bool) -> std::optional<APInt> {
        return x + y;
      },
      [](APFloat x, const APFloat &y) {
        x.add(y, APFloat::rmNearestTiesToEven);
        return x;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      *this, adaptor.getOperands(),
      [](const APInt &x, const APInt &y, bool) -> std::optional<APInt> {
        return x - y;
      },
      [](APFloat x, const APFloat &y) {
        x.subtract(y, APFloat::rmNearestTiesToEven);
        return x;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      *this, adaptor.getOperands(),
      [](const APInt &x, const APInt &y, bool) -> std::optional<APInt> {
        return x * y;
      },
      [](APFloat x, const APFloat &y) {
        x.multiply(y, APFloat::rmNearestTiesToEven);
        return x;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      *this, adaptor.getOperands(),
      [](const APInt &x, const APInt &y,
         bool isUnsigned) -> std::optional<APInt> {
        if (y.isZero())
          return std::nullopt; // Left to run time, as ONNX leaves it.
        return isUnsigned ? x.udiv(y) : x.sdiv(y);
      },
      [](APFloat x, const APFloat &y) {
        x.divide(y, APFloat::rmNearestTiesToEven);
        return x;
      });
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  auto x = dense(adaptor.getX());
  if (!x)
    return {};
  if (isa<IntegerType>(x.getElementType()))
    return x.mapValues(x.getElementType(), [](const APInt &v) { return -v; });
  if (isa<FloatType>(x.getElementType()))
    return x.mapValues(x.getElementType(),
                       [](const APFloat &v) { return (-v).bitcastToAPInt(); });
  return {};
}

OpFoldResult SqrtOp::fold(FoldAdaptor adaptor) {
  // f32 and f64 only: the square root in double precision, rounded once
  // to f32, is the correctly rounded f32 square root.
  auto x = dense(adaptor.getX());
  if (!x || !(x.getElementType().isF32() || x.getElementType().isF64()))
    return {};
  bool f32 = x.getElementType().isF32();
  return x.mapValues(x.getElementType(), [&](const APFloat &v) {
    double r = std::sqrt(v.convertToDouble());
    return f32 ? APFloat(static_cast<float>(r)).bitcastToAPInt()
               : APFloat(r).bitcastToAPInt();
  });
}

OpFoldResult IdentityOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto x = dense(adaptor.getInput());
  auto type = staticResult(*this);
  if (!x || !type)
    return {};
  auto from = dyn_cast<IntegerType>(x.getElementType());
  if (auto toFloat = dyn_cast<FloatType>(type.getElementType());
      from && from.getWidth() > 1 && toFloat &&
      (toFloat.isF16() || toFloat.isBF16() || toFloat.isF32() ||
       toFloat.isF64())) {
    // Integer to an IEEE float: round to nearest even, as the lowering's
    // conversion does (a head size turned into a scale). The float8
    // types' rounding and saturation modes are left to the lowering.
    return x.mapValues(toFloat, [&](const APInt &v) {
      APFloat f(toFloat.getFloatSemantics());
      f.convertFromAPInt(v, /*IsSigned=*/!from.isUnsigned(),
                         APFloat::rmNearestTiesToEven);
      return f.bitcastToAPInt();
    });
  }
  auto to = dyn_cast<IntegerType>(type.getElementType());
  // Integer-to-integer casts; float sources have rounding and saturation
  // modes that are folded by the lowering, not here.
  if (!from || !to || to.getWidth() == 1 || from.getWidth() == 1)
    return {};
  return x.mapValues(to, [&](const APInt &v) {
    return from.isUnsigned() ? v.zextOrTrunc(to.getWidth())
                             : v.sextOrTrunc(to.getWidth());
  });
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto x = dyn_cast<RankedTensorType>(getData().getType());
  auto type = staticResult(*this);
  if (!x || !type)
    return {};
  int64_t rank = x.getRank();
  int64_t start = getStart(), end = getEnd() ? int64_t(*getEnd()) : rank;
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    if (x.isDynamicDim(i))
      return {};
    dims.push_back(x.getDimSize(i));
  }
  return DenseElementsAttr::get(type, ArrayRef(dims));
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  auto x = dyn_cast<RankedTensorType>(getData().getType());
  auto type = staticResult(*this);
  if (!x || !x.hasStaticShape() || !type)
    return {};
  return DenseElementsAttr::get(type, ArrayRef<int64_t>{x.getNumElements()});
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getData().getType() == getType() &&
      cast<ShapedType>(getType()).hasStaticShape())
    return getData();
  // A Reshape of a Reshape (or Flatten, Squeeze, Unsqueeze) to a shape
  // that does not copy dims from its input (no 0) reshapes the first one's
  // input, in place: the element order is the same.
  if (Operation *inner = getData().getDefiningOp();
      isa_and_nonnull<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(inner) &&
      cast<ShapedType>(getType()).hasStaticShape())
    if (auto shape = dense(adaptor.getShape());
        shape && (getAllowzero() ||
                  llvm::none_of(shape.getValues<APInt>(),
                                [](const APInt &v) { return v.isZero(); }))) {
      getDataMutable().assign(inner->getOperand(0));
      return getResult();
    }
  return foldReshapeLike(*this, adaptor.getData());
}
OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(*this, adaptor.getData());
}
OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(*this, adaptor.getData());
}
OpFoldResult FlattenOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(*this, adaptor.getInput());
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  auto type = staticResult(*this);
  if (!type || type.getRank() != 1)
    return {};
  SmallVector<Attribute> values;
  for (Attribute a : adaptor.getInputs()) {
    auto d = dense(a);
    if (!d || d.getElementType() != type.getElementType())
      return {};
    llvm::append_range(values, d.getValues<Attribute>());
  }
  if (static_cast<int64_t>(values.size()) != type.getNumElements())
    return {};
  return DenseElementsAttr::get(type, values);
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto data = dense(adaptor.getData()), idx = dense(adaptor.getIndices());
  auto type = staticResult(*this);
  if (!data || !idx || !type || data.getType().getRank() != 1)
    return {};
  int64_t n = data.getNumElements();
  auto values = llvm::to_vector(data.getValues<Attribute>());
  SmallVector<Attribute> out;
  for (const APInt &i : idx.getValues<APInt>()) {
    int64_t k = i.getSExtValue();
    if (k < 0)
      k += n;
    if (k < 0 || k >= n)
      return {};
    out.push_back(values[k]);
  }
  return DenseElementsAttr::get(type, out);
}

namespace {
/// An elementwise comparison of two constants (broadcasting) into an i1
/// result: `pred` gets the three-way order of the pair, signed or unsigned
/// for integers as the element type says, APFloat's for floats (unordered
/// when either is NaN).
template <typename Pred>
OpFoldResult foldCompare(Operation *op, Attribute lhs, Attribute rhs,
                         Pred pred) {
  auto a = dense(lhs), b = dense(rhs);
  auto type = staticResult(op);
  if (!a || !b || !type || a.getElementType() != b.getElementType())
    return {};
  ArrayRef<int64_t> as = a.getType().getShape(), bs = b.getType().getShape(),
                    os = type.getShape();
  auto it = dyn_cast<IntegerType>(a.getElementType());
  if (!it && !isa<FloatType>(a.getElementType()))
    return {};
  SmallVector<bool> out;
  if (it) {
    auto av = llvm::to_vector(a.getValues<APInt>());
    auto bv = llvm::to_vector(b.getValues<APInt>());
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      const APInt &x = av[broadcastIndex(os, as, i)];
      const APInt &y = bv[broadcastIndex(os, bs, i)];
      bool lt = it.isUnsigned() ? x.ult(y) : x.slt(y);
      out.push_back(pred(x == y ? APFloat::cmpEqual
                         : lt   ? APFloat::cmpLessThan
                                : APFloat::cmpGreaterThan));
    }
  } else {
    auto av = llvm::to_vector(a.getValues<APFloat>());
    auto bv = llvm::to_vector(b.getValues<APFloat>());
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      out.push_back(pred(av[broadcastIndex(os, as, i)].compare(
          bv[broadcastIndex(os, bs, i)])));
  }
  return DenseElementsAttr::get(type, out);
}
} // namespace

OpFoldResult EqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      *this, adaptor.getA(), adaptor.getB(),
      [](APFloat::cmpResult r) { return r == APFloat::cmpEqual; });
}

OpFoldResult LessOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      *this, adaptor.getA(), adaptor.getB(),
      [](APFloat::cmpResult r) { return r == APFloat::cmpLessThan; });
}

OpFoldResult LessOrEqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      *this, adaptor.getA(), adaptor.getB(), [](APFloat::cmpResult r) {
        return r == APFloat::cmpLessThan || r == APFloat::cmpEqual;
      });
}

OpFoldResult GreaterOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      *this, adaptor.getA(), adaptor.getB(),
      [](APFloat::cmpResult r) { return r == APFloat::cmpGreaterThan; });
}

OpFoldResult GreaterOrEqualOp::fold(FoldAdaptor adaptor) {
  return foldCompare(
      *this, adaptor.getA(), adaptor.getB(), [](APFloat::cmpResult r) {
        return r == APFloat::cmpGreaterThan || r == APFloat::cmpEqual;
      });
}

namespace {
/// Logical ops on i1 constants, and on integer ones for the bitwise
/// meaning of And/Or/Xor (ONNX defines them on bool only).
template <typename Fn>
OpFoldResult foldLogical(Operation *op, ArrayRef<Attribute> operands, Fn fn) {
  return foldBinary(
      op, operands,
      [&](const APInt &x, const APInt &y, bool) -> std::optional<APInt> {
        return fn(x, y);
      },
      [](APFloat x, const APFloat &) { return x; }, /*floats=*/false);
}
} // namespace

OpFoldResult AndOp::fold(FoldAdaptor adaptor) {
  return foldLogical(*this, adaptor.getOperands(),
                     [](const APInt &x, const APInt &y) { return x & y; });
}

OpFoldResult OrOp::fold(FoldAdaptor adaptor) {
  return foldLogical(*this, adaptor.getOperands(),
                     [](const APInt &x, const APInt &y) { return x | y; });
}

OpFoldResult XorOp::fold(FoldAdaptor adaptor) {
  return foldLogical(*this, adaptor.getOperands(),
                     [](const APInt &x, const APInt &y) { return x ^ y; });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  auto x = dense(adaptor.getX());
  auto type = staticResult(*this);
  if (!x || !type || !x.getElementType().isInteger(1) || x.getType() != type)
    return {};
  return x.mapValues(x.getElementType(), [](const APInt &v) { return ~v; });
}

namespace {
/// Min or Max of any number of constants (broadcasting): integers by their
/// signedness, floats with NaN winning, as ONNX specifies.
OpFoldResult foldMinMax(Operation *op, ArrayRef<Attribute> operands,
                        bool isMax) {
  auto type = staticResult(op);
  if (!type || operands.empty())
    return {};
  SmallVector<DenseElementsAttr> values;
  for (Attribute a : operands) {
    auto d = dense(a);
    if (!d || d.getElementType() != type.getElementType())
      return {};
    values.push_back(d);
  }
  ArrayRef<int64_t> os = type.getShape();
  int64_t n = type.getNumElements();
  if (auto it = dyn_cast<IntegerType>(type.getElementType())) {
    SmallVector<SmallVector<APInt>> elems;
    for (DenseElementsAttr d : values)
      elems.push_back(llvm::to_vector(d.getValues<APInt>()));
    SmallVector<APInt> out;
    for (int64_t i = 0; i < n; ++i) {
      std::optional<APInt> r;
      for (auto [d, ev] : llvm::zip(values, elems)) {
        const APInt &v = ev[broadcastIndex(os, d.getType().getShape(), i)];
        if (!r) {
          r = v;
          continue;
        }
        bool replaces = isMax ? (it.isUnsigned() ? v.ugt(*r) : v.sgt(*r))
                              : (it.isUnsigned() ? v.ult(*r) : v.slt(*r));
        if (replaces)
          r = v;
      }
      out.push_back(*r);
    }
    return DenseElementsAttr::get(type, out);
  }
  if (!isa<FloatType>(type.getElementType()))
    return {};
  SmallVector<SmallVector<APFloat>> elems;
  for (DenseElementsAttr d : values)
    elems.push_back(llvm::to_vector(d.getValues<APFloat>()));
  SmallVector<APFloat> out;
  for (int64_t i = 0; i < n; ++i) {
    std::optional<APFloat> r;
    for (auto [d, ev] : llvm::zip(values, elems)) {
      const APFloat &v = ev[broadcastIndex(os, d.getType().getShape(), i)];
      r = !r ? v : isMax ? llvm::maximum(*r, v) : llvm::minimum(*r, v);
    }
    out.push_back(*r);
  }
  return DenseElementsAttr::get(type, out);
}
} // namespace

OpFoldResult MinOp::fold(FoldAdaptor adaptor) {
  return foldMinMax(*this, adaptor.getOperands(), /*isMax=*/false);
}

OpFoldResult MaxOp::fold(FoldAdaptor adaptor) {
  return foldMinMax(*this, adaptor.getOperands(), /*isMax=*/true);
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  // Where(c, x, x) is x, and a splat condition picks a side, whatever the
  // sides hold, where that side has the result's type already.
  if (getX() == getY() && getX().getType() == getType())
    return getX();
  auto c = dense(adaptor.getCondition());
  if (c && c.isSplat()) {
    Value side = c.getSplatValue<bool>() ? getX() : getY();
    if (side.getType() == getType())
      return side;
  }
  auto x = dense(adaptor.getX()), y = dense(adaptor.getY());
  auto type = staticResult(*this);
  if (!c || !x || !y || !type || x.getElementType() != type.getElementType() ||
      y.getElementType() != type.getElementType())
    return {};
  ArrayRef<int64_t> os = type.getShape();
  auto cv = llvm::to_vector(c.getValues<bool>());
  auto xv = llvm::to_vector(x.getValues<Attribute>());
  auto yv = llvm::to_vector(y.getValues<Attribute>());
  SmallVector<Attribute> out;
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    out.push_back(cv[broadcastIndex(os, c.getType().getShape(), i)]
                      ? xv[broadcastIndex(os, x.getType().getShape(), i)]
                      : yv[broadcastIndex(os, y.getType().getShape(), i)]);
  return DenseElementsAttr::get(type, out);
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  auto type = staticResult(*this);
  if (!type || type.getNumElements() > kMaxFoldElements)
    return {};
  if (!getValue())
    return DenseElementsAttr::get(type,
                                  FloatAttr::get(type.getElementType(), 0.0));
  auto v = dyn_cast<DenseElementsAttr>(*getValue());
  if (!v || v.getNumElements() != 1 ||
      v.getElementType() != type.getElementType())
    return {};
  return DenseElementsAttr::get(type, v.getValues<Attribute>()[0]);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  // 1-D slices of constants (shape vectors); the result type already has
  // the extent, so only the start and step are needed.
  auto data = dense(adaptor.getData());
  auto type = staticResult(*this);
  if (!data || !type || type.getRank() != 1 ||
      type.getElementType() != data.getElementType())
    return {};
  auto starts = getConstantInts(getStarts());
  std::optional<SmallVector<int64_t>> steps = SmallVector<int64_t>{1};
  if (getSteps())
    steps = getConstantInts(getSteps());
  if (!starts || !steps || starts->size() != 1 || steps->size() != 1)
    return {};
  int64_t n = data.getNumElements(), s = (*starts)[0], step = (*steps)[0];
  if (s < 0)
    s += n;
  s = std::clamp<int64_t>(s, 0, step > 0 ? n : n - 1);
  auto values = llvm::to_vector(data.getValues<Attribute>());
  SmallVector<Attribute> out;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    int64_t k = s + i * step;
    if (k < 0 || k >= n)
      return {};
    out.push_back(values[k]);
  }
  return DenseElementsAttr::get(type, out);
}

OpFoldResult RangeOp::fold(FoldAdaptor) {
  auto type = staticResult(*this);
  auto it = type ? dyn_cast<IntegerType>(type.getElementType()) : nullptr;
  if (!it || type.getNumElements() > kMaxFoldElements)
    return {};
  auto s = getConstantInts(getStart()), d = getConstantInts(getDelta());
  if (!s || !d || s->size() != 1 || d->size() != 1)
    return {};
  SmallVector<APInt> out;
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    out.push_back(APInt(it.getWidth(), (*s)[0] + i * (*d)[0], true));
  return DenseElementsAttr::get(type, out);
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  // Integers only: the result takes the divisor's sign (fmod = 0), or the
  // dividend's (fmod = 1), as in ONNX; float Mod is left to the lowering.
  bool fmod = getFmod() != 0;
  return foldBinary(
      *this, adaptor.getOperands(),
      [fmod](const APInt &x, const APInt &y,
             bool isUnsigned) -> std::optional<APInt> {
        if (y.isZero())
          return std::nullopt;
        if (isUnsigned)
          return x.urem(y);
        APInt r = x.srem(y);
        if (!fmod && !r.isZero() && (r.isNegative() != y.isNegative()))
          r += y;
        return r;
      },
      [](APFloat x, const APFloat &) { return x; },
      /*floats=*/false);
}
