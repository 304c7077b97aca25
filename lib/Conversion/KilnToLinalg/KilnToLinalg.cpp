//===- KilnToLinalg.cpp - kiln ops to linalg/tensor/arith/math ------------===//
//
// Each kiln op is rewritten in place into upstream ops on tensors, in
// program order. Shapes must be static, but for the data-dependent extents
// of graph outputs (LowerDataDependentOps.cpp); anything this file does not
// lower is reported by op name.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "LoweringUtils.h"
#include "kiln/Dialect/Kiln/Transforms/ConstantValues.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include <cstring>

#define DEBUG_TYPE "convert-kiln-to-linalg"

namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALG
#include "kiln/Conversion/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::lowering;

namespace kiln::lowering {

bool isFloat(Type t) { return isa<FloatType>(getElementTypeOrSelf(t)); }

/// Whether `t` (or its elements) is an unsigned integer type. The lowering
/// computes on signless integers (all arith and linalg take) and picks the
/// unsigned forms of division, comparison, extension and conversion where
/// the ONNX type was unsigned.
bool isUnsignedElt(Type t) {
  auto it = dyn_cast<IntegerType>(getElementTypeOrSelf(t));
  return it && it.isUnsigned();
}

/// `t` with an unsigned integer element type made signless.
Type toSignless(Type t) {
  auto conv = [](Type e) -> Type {
    if (auto it = dyn_cast<IntegerType>(e); it && it.isUnsigned())
      return IntegerType::get(e.getContext(), it.getWidth());
    return e;
  };
  if (auto st = dyn_cast<ShapedType>(t))
    return st.clone(conv(st.getElementType()));
  return conv(t);
}

int64_t intAttr(Operation *op, StringRef name, int64_t dflt) {
  if (auto a = op->getAttrOfType<IntegerAttr>(name))
    return a.getInt();
  return dflt;
}
FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return op->emitOpError("axis ")
               << axis << " is out of range for rank " << rank,
           failure();
  return axis < 0 ? axis + rank : axis;
}
float floatAttr(Operation *op, StringRef name, float dflt) {
  if (auto a = op->getAttrOfType<FloatAttr>(name))
    return a.getValueAsDouble();
  return dflt;
}
SmallVector<int64_t> intsAttr(Operation *op, StringRef name,
                              SmallVector<int64_t> dflt) {
  if (auto a = op->getAttrOfType<DenseI64ArrayAttr>(name))
    return SmallVector<int64_t>(a.asArrayRef());
  return dflt;
}

Value scalarConst(OpBuilder &b, Location loc, Type t, double v) {
  if (auto ft = dyn_cast<FloatType>(t))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, v));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, (int64_t)v));
}

Value emptyLike(OpBuilder &b, Location loc, RankedTensorType t) {
  return tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType());
}

Value filled(OpBuilder &b, Location loc, RankedTensorType t, Value scalar) {
  return linalg::FillOp::create(b, loc, scalar, emptyLike(b, loc, t))
      .getResult(0);
}

/// The type a contraction producing `t` accumulates in: float32 for the
/// half-precision floats (f16, bf16), `t` itself otherwise.
RankedTensorType accumulatorType(RankedTensorType t) {
  Type e = t.getElementType();
  return e.isF16() || e.isBF16() ? t.clone(Float32Type::get(t.getContext()))
                                 : t;
}

/// A float scalar extended to the wider float type `to` (unchanged when
/// it already has that type, or is not a float).
Value widenScalar(OpBuilder &b, Location loc, Value v, Type to) {
  if (v.getType() == to || !isa<FloatType>(v.getType()) || !isa<FloatType>(to))
    return v;
  return arith::ExtFOp::create(b, loc, to, v);
}

/// `v` sign-extended to the wider integer type `to` (8-bit operands of an
/// int32 contraction); other values unchanged.
Value signExtended(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = dyn_cast<IntegerType>(v.getType());
  auto wide = dyn_cast<IntegerType>(to);
  if (!from || !wide || from.getWidth() >= wide.getWidth())
    return v;
  return arith::ExtSIOp::create(b, loc, to, v);
}

/// The half-precision constant `attr` extended to the float type of
/// `wide`; null when its values cannot be read.
Attribute widenConstant(Attribute attr, RankedTensorType wide) {
  auto to = cast<FloatType>(wide.getElementType());
  auto extend = [&](APFloat f) {
    bool lost;
    f.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    return f.bitcastToAPInt();
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return dense.mapValues(to, extend);
  auto res = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob = res ? res.getRawHandle().getBlob() : nullptr;
  auto half = res ? dyn_cast<FloatType>(res.getElementType()) : FloatType();
  if (!blob || !half || half.getWidth() != 16 || !to.isF32())
    return {};
  ArrayRef<char> bytes = blob->getData();
  SmallVector<float> values(bytes.size() / 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    values[i] = extend(APFloat(half.getFloatSemantics(), APInt(16, bits)))
                    .bitsToFloat();
  }
  return DenseResourceElementsAttr::get(
      wide, "widened",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef(values)));
}

/// `v` (a float tensor) with element type `to`: a constant converted now,
/// anything else extended elementwise; `v` itself when it has that type.
Value widenTo(OpBuilder &b, Location loc, Value v, Type to) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getElementType() == to)
    return v;
  RankedTensorType wide = t.clone(to);
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr)))
    if (auto w = dyn_cast_or_null<TypedAttr>(widenConstant(attr, wide)))
      return arith::ConstantOp::create(b, loc, wide, w);
  return elementwise(b, loc, wide, ValueRange{v},
                     [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                       return arith::ExtFOp::create(nb, nl, to, a[0]);
                     });
}

/// The accumulator `v` rounded to `rt`'s (narrower) float type, to
/// nearest even; `v` itself when it has that type already.
Value narrowTo(OpBuilder &b, Location loc, Value v, RankedTensorType rt) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getElementType() == rt.getElementType())
    return v;
  Type to = rt.getElementType();
  return elementwise(b, loc, rt, ValueRange{v},
                     [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                       return arith::TruncFOp::create(nb, nl, to, a[0]);
                     });
}

/// The lowest or highest value of a type (`uns`: of its unsigned reading),
/// for max/min identities and pads.
Value extremum(OpBuilder &b, Location loc, Type t, bool lowest, bool uns) {
  if (auto ft = dyn_cast<FloatType>(t))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics(), lowest)));
  unsigned w = t.getIntOrFloatBitWidth();
  APInt v = uns ? (lowest ? APInt::getMinValue(w) : APInt::getMaxValue(w))
                : (lowest ? APInt::getSignedMinValue(w)
                          : APInt::getSignedMaxValue(w));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, v));
}

AffineMap broadcastMap(RankedTensorType operand, RankedTensorType result) {
  MLIRContext *ctx = result.getContext();
  int64_t off = result.getRank() - operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < operand.getRank(); ++d)
    exprs.push_back(operand.getDimSize(d) == 1 &&
                            result.getDimSize(off + d) != 1
                        ? getAffineConstantExpr(0, ctx)
                        : getAffineDimExpr(off + d, ctx));
  return AffineMap::get(result.getRank(), 0, exprs, ctx);
}

/// `parts` one after another along `axis`, into a tensor of type `to`.
Value concatAlong(OpBuilder &b, Location loc, ValueRange parts, int64_t axis,
                  RankedTensorType to) {
  Value acc = emptyLike(b, loc, to);
  int64_t offset = 0;
  for (Value part : parts) {
    auto t = cast<RankedTensorType>(part.getType());
    // An empty part (a Split's zero-length output, as when RotaryEmbedding
    // rotates the whole head) inserts nothing, and its offset may lie at
    // the end of the dim, where a slice may not start.
    if (t.getNumElements() == 0) {
      offset += t.getDimSize(axis);
      continue;
    }
    SmallVector<OpFoldResult> offsets(to.getRank(), b.getIndexAttr(0)), sizes,
        strides(to.getRank(), b.getIndexAttr(1));
    offsets[axis] = b.getIndexAttr(offset);
    for (int64_t d : t.getShape())
      sizes.push_back(b.getIndexAttr(d));
    acc = tensor::InsertSliceOp::create(b, loc, part, acc, offsets, sizes,
                                        strides);
    offset += t.getDimSize(axis);
  }
  return acc;
}

/// A `linalg.generic` over `resultType` whose inputs broadcast to it as
/// ONNX multidirectional broadcasting says (aligned at the trailing dims).
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange inputs, ScalarFn fn,
                  ArrayRef<AffineMap> customMaps) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps;
  for (auto [i, in] : llvm::enumerate(inputs))
    maps.push_back(
        i < customMaps.size()
            ? customMaps[i]
            : broadcastMap(cast<RankedTensorType>(in.getType()), resultType));
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs,
      ValueRange{emptyLike(b, loc, resultType)}, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value r = fn(nb, nl, args.drop_back());
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

/// An ONNX index (any integer type) as an `index` into a dim of `extent`:
/// negative values count from the end.
Value wrapIndex(OpBuilder &b, Location loc, Value raw, int64_t extent) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                    arith::ConstantIndexOp::create(b, loc, 0));
  return arith::SelectOp::create(
      b, loc, neg,
      arith::AddIOp::create(b, loc, i,
                            arith::ConstantIndexOp::create(b, loc, extent)),
      i);
}

/// Converts a scalar between element types as ONNX Cast does; integers are
/// read (`fromUnsigned`) and written (`toUnsigned`) as unsigned if so.
Value convertScalar(OpBuilder &b, Location loc, Value v, Type to,
                    bool fromUnsigned, bool toUnsigned) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (fromF && toF)
    return fromF.getWidth() < toF.getWidth()
               ? arith::ExtFOp::create(b, loc, to, v).getResult()
               : arith::TruncFOp::create(b, loc, to, v).getResult();
  if (to.isInteger(1)) {
    Value zero = scalarConst(b, loc, from, 0);
    return fromF ? arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                         zero)
                       .getResult()
                 : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                                         zero)
                       .getResult();
  }
  fromUnsigned |= from.isInteger(1);
  if (toF)
    return fromUnsigned ? arith::UIToFPOp::create(b, loc, to, v).getResult()
                        : arith::SIToFPOp::create(b, loc, to, v).getResult();
  // To a 4- or 2-bit integer: the integer part wraps (ml_dtypes' cast),
  // through i32 so that no value is out of range of the conversion.
  if (fromF && to.getIntOrFloatBitWidth() < 8) {
    Value i = arith::FPToSIOp::create(b, loc, b.getI32Type(), v);
    return arith::TruncIOp::create(b, loc, to, i);
  }
  if (fromF)
    return toUnsigned ? arith::FPToUIOp::create(b, loc, to, v).getResult()
                      : arith::FPToSIOp::create(b, loc, to, v).getResult();
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return fromUnsigned ? arith::ExtUIOp::create(b, loc, to, v).getResult()
                        : arith::ExtSIOp::create(b, loc, to, v).getResult();
  return arith::TruncIOp::create(b, loc, to, v);
}

/// Whether `t` is one of the float8 types ONNX casts to with saturation.
bool isFloat8(Type t) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
             Float8E5M2FNUZType>(t);
}

/// `v` (a float) clamped to the largest finite magnitude of the float8
/// type `to`, infinities included, NaN kept: ONNX's saturating conversion
/// to float8 before it rounds.
Value saturateToFloat8(OpBuilder &b, Location loc, Value v, Type to) {
  auto from = cast<FloatType>(v.getType());
  APFloat largest =
      APFloat::getLargest(cast<FloatType>(to).getFloatSemantics());
  bool lost;
  largest.convert(from.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
  Value hi = arith::ConstantOp::create(b, loc, b.getFloatAttr(from, largest));
  Value lo = arith::NegFOp::create(b, loc, hi);
  auto gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, v, hi);
  auto lt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, v, lo);
  v = arith::SelectOp::create(b, loc, gt, hi, v);
  return arith::SelectOp::create(b, loc, lt, lo, v);
}

/// `v` (a float) made ready for arith.truncf to f4E2M1FN as ONNX converts
/// (ml_dtypes): NaN, which the format lacks, becomes -0 (the truncation
/// saturates the rest at 6).
Value nanToFloat4(OpBuilder &b, Location loc, Value v) {
  auto t = cast<FloatType>(v.getType());
  Value negZero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(t, APFloat::getZero(t.getFloatSemantics(), true)));
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  return arith::SelectOp::create(b, loc, isNan, negZero, v);
}

/// Reshapes a static tensor to another static shape with the same count:
/// an expand_shape or collapse_shape where the new shape only splits or
/// only merges dims (a view even of a strided buffer, such as a Split
/// slice split into heads), else tensor.reshape.
Value reshapeTo(OpBuilder &b, Location loc, Value v, RankedTensorType to) {
  if (v.getType() == to)
    return v;
  auto from = cast<RankedTensorType>(v.getType());
  if (from.hasStaticShape() && to.hasStaticShape()) {
    if (from.getRank() < to.getRank()) {
      if (auto re = getReassociationIndicesForReshape(from, to))
        return tensor::ExpandShapeOp::create(b, loc, to, v, *re);
    } else if (from.getRank() > to.getRank()) {
      if (auto re = getReassociationIndicesForReshape(from, to))
        return tensor::CollapseShapeOp::create(b, loc, to, v, *re);
    }
  }
  SmallVector<int64_t> dims(to.getShape());
  auto shapeType =
      RankedTensorType::get({(int64_t)dims.size()}, b.getI64Type());
  Value shape = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(shapeType, ArrayRef<int64_t>(dims)));
  return tensor::ReshapeOp::create(b, loc, to, v, shape);
}

Value reduceDims(OpBuilder &b, Location loc, Value in, ArrayRef<bool> reduced,
                 RankedTensorType keptType, Value init, ReduceCombineFn comb,
                 ReducePreFn pre) {
  MLIRContext *ctx = b.getContext();
  auto inType = cast<RankedTensorType>(in.getType());
  int64_t rank = inType.getRank();
  bool keepDims = keptType.getRank() == rank;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t d = 0; d < rank; ++d) {
    iters.push_back(reduced[d] ? utils::IteratorType::reduction
                               : utils::IteratorType::parallel);
    if (!reduced[d])
      outExprs.push_back(getAffineDimExpr(d, ctx));
    else if (keepDims)
      outExprs.push_back(getAffineConstantExpr(0, ctx));
  }
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, outExprs, ctx)};
  Value acc = filled(b, loc, keptType, init);
  return linalg::GenericOp::create(
             b, loc, TypeRange{keptType}, ValueRange{in}, ValueRange{acc}, maps,
             iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value x = pre ? pre(nb, nl, args[0]) : args[0];
               linalg::YieldOp::create(nb, nl, comb(nb, nl, x, args[1]));
             })
      .getResult(0);
}

Value padTensor(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, Value padValue) {
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return x;
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < t.getRank(); ++d)
    shape.push_back(t.getDimSize(d) + low[d] + high[d]);
  auto padded = RankedTensorType::get(shape, t.getElementType());
  SmallVector<OpFoldResult> lo, hi;
  for (auto [l, h] : llvm::zip(low, high)) {
    lo.push_back(b.getIndexAttr(l));
    hi.push_back(b.getIndexAttr(h));
  }
  return tensor::PadOp::create(b, loc, padded, x, lo, hi, padValue);
}

} // namespace kiln::lowering

namespace {

//===----------------------------------------------------------------------===//
// Scalar bodies of elementwise ops
//===----------------------------------------------------------------------===//

/// `FOp` on floats, `IOp` on integers.
template <typename FOp, typename IOp>
std::function<Value(OpBuilder &, Location, ValueRange)>
binaryBody(bool isFloat) {
  if (isFloat)
    return [](OpBuilder &b, Location l, ValueRange a) -> Value {
      return FOp::create(b, l, a[0], a[1]);
    };
  return [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return IOp::create(b, l, a[0], a[1]);
  };
}

/// An integer divisor read from a tensor, with 0 replaced by 1. Division
/// and remainder by zero are immediate undefined behaviour in LLVM, and a
/// vectorized loop's masked tail reads its inactive lanes as 0: LLVM then
/// drops the tail's whole computation (a fused sum lost its last
/// elements). ONNX leaves integer division by zero undefined; here it
/// gives the dividend (remainder 0). A constant divisor folds the select.
Value nonzeroDivisor(OpBuilder &b, Location l, Value d) {
  Value zero = scalarConst(b, l, d.getType(), 0);
  Value isZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, d, zero);
  return arith::SelectOp::create(b, l, isZero,
                                 scalarConst(b, l, d.getType(), 1), d);
}

/// Integer division `IOp` by a nonzero divisor.
template <typename IOp>
std::function<Value(OpBuilder &, Location, ValueRange)> intDivBody() {
  return [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return IOp::create(b, l, a[0], nonzeroDivisor(b, l, a[1]));
  };
}

/// The scalar computation of a unary or binary elementwise kiln op, or
/// null if the op is not one.
std::function<Value(OpBuilder &, Location, ValueRange)>
scalarBody(Operation *op, Type elt, ArrayRef<bool> uns) {
  bool f = isa<FloatType>(elt);
  bool u = !uns.empty() && uns[0];
  bool u1 = uns.size() > 1 && uns[1];
  auto cst = [elt](OpBuilder &b, Location l, double v) {
    return scalarConst(b, l, elt, v);
  };
  StringRef name = op->getName().getStringRef();
  float alpha = floatAttr(op, "alpha", 0), beta = floatAttr(op, "beta", 0);
  float gamma = floatAttr(op, "gamma", 0);
  if (name == "kiln.add")
    return binaryBody<arith::AddFOp, arith::AddIOp>(f);
  if (name == "kiln.sub")
    return binaryBody<arith::SubFOp, arith::SubIOp>(f);
  if (name == "kiln.mul")
    return binaryBody<arith::MulFOp, arith::MulIOp>(f);
  if (name == "kiln.div") {
    if (f)
      return binaryBody<arith::DivFOp, arith::DivSIOp>(true);
    return u ? intDivBody<arith::DivUIOp>() : intDivBody<arith::DivSIOp>();
  }
  if (name == "kiln.bit_shift") {
    bool left = true;
    if (auto d = op->getAttrOfType<StringAttr>("direction"))
      left = d.getValue() == "LEFT";
    return left ? binaryBody<arith::AddFOp, arith::ShLIOp>(false)
                : binaryBody<arith::AddFOp, arith::ShRUIOp>(false);
  }
  if (name == "kiln.pow" && f)
    return [u1](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value e = a[1];
      if (e.getType() != a[0].getType())
        e = convertScalar(b, l, e, a[0].getType(), u1);
      return math::PowFOp::create(b, l, a[0], e);
    };
  if ((name == "kiln.max" || name == "kiln.min") && f) {
    bool isMax = name == "kiln.max";
    return [isMax](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value r = a[0];
      for (Value v : a.drop_front())
        r = isMax ? arith::MaximumFOp::create(b, l, r, v).getResult()
                  : arith::MinimumFOp::create(b, l, r, v).getResult();
      return r;
    };
  }
  if ((name == "kiln.max" || name == "kiln.min") && !f) {
    bool isMax = name == "kiln.max";
    return [isMax, u](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value r = a[0];
      for (Value v : a.drop_front())
        r = isMax ? (u ? arith::MaxUIOp::create(b, l, r, v).getResult()
                       : arith::MaxSIOp::create(b, l, r, v).getResult())
                  : (u ? arith::MinUIOp::create(b, l, r, v).getResult()
                       : arith::MinSIOp::create(b, l, r, v).getResult());
      return r;
    };
  }
  if ((name == "kiln.sum" || name == "kiln.mean") && f) {
    bool mean = name == "kiln.mean";
    return [mean, cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value r = a[0];
      for (Value v : a.drop_front())
        r = arith::AddFOp::create(b, l, r, v);
      if (mean)
        r = arith::DivFOp::create(b, l, r, cst(b, l, a.size()));
      return r;
    };
  }
  if ((name == "kiln.abs" || name == "kiln.neg") && !f) {
    // Integers (T5's relative-position buckets take Abs of int64): |x| of
    // an unsigned value is itself; -x wraps as two's complement does.
    bool abs = name == "kiln.abs";
    return [abs, u, cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      if (abs && u)
        return a[0];
      Value neg = arith::SubIOp::create(b, l, cst(b, l, 0), a[0]);
      if (!abs)
        return neg;
      Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                             a[0], cst(b, l, 0));
      return arith::SelectOp::create(b, l, negative, neg, a[0]);
    };
  }
  if (name == "kiln.sign")
    return [f, cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value zero = cst(b, l, 0);
      Value pos =
          f ? arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a[0], zero)
                  .getResult()
            : arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, a[0], zero)
                  .getResult();
      Value neg =
          f ? arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, a[0], zero)
                  .getResult()
            : arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[0], zero)
                  .getResult();
      Value r = arith::SelectOp::create(b, l, neg, cst(b, l, -1), zero);
      return arith::SelectOp::create(b, l, pos, cst(b, l, 1), r);
    };
  if (name == "kiln.mod") {
    bool fmod = intAttr(op, "fmod", 0) != 0;
    return [f, fmod, u](OpBuilder &b, Location l, ValueRange a) -> Value {
      if (f)
        return arith::RemFOp::create(b, l, a[0], a[1]);
      Value d = nonzeroDivisor(b, l, a[1]);
      if (u) // Both signs are positive: fmod and Python agree.
        return arith::RemUIOp::create(b, l, a[0], d);
      Value r = arith::RemSIOp::create(b, l, a[0], d);
      if (fmod)
        return r;
      // Python-style: the result takes the divisor's sign.
      Value zero = scalarConst(b, l, r.getType(), 0);
      Value nonzero =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, r, zero);
      Value rNeg =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, r, zero);
      Value dNeg =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[1], zero);
      Value differ = arith::XOrIOp::create(b, l, rNeg, dNeg);
      Value fix = arith::AndIOp::create(b, l, nonzero, differ);
      return arith::SelectOp::create(b, l, fix,
                                     arith::AddIOp::create(b, l, r, a[1]), r);
    };
  }
  if (name == "kiln.pow" && !f)
    return [](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value e = a[1];
      if (isa<FloatType>(e.getType())) {
        // An integer to a float power: in floating point, then truncated.
        Value base = convertScalar(b, l, a[0], e.getType());
        return convertScalar(b, l, math::PowFOp::create(b, l, base, e),
                             a[0].getType());
      }
      if (e.getType() != a[0].getType())
        e = convertScalar(b, l, e, a[0].getType());
      return math::IPowIOp::create(b, l, a[0], e);
    };
  if (!f)
    return nullptr;
  if (name == "kiln.relu")
    return [cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::MaximumFOp::create(b, l, a[0], cst(b, l, 0));
    };
  if (name == "kiln.leaky_relu") {
    float al = alpha == 0 ? 0.01f : alpha;
    return [cst, al](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, a[0],
                                        cst(b, l, 0));
      Value scaled = arith::MulFOp::create(b, l, a[0], cst(b, l, al));
      return arith::SelectOp::create(b, l, neg, scaled, a[0]);
    };
  }
  if (name == "kiln.prelu")
    return [cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, a[0],
                                        cst(b, l, 0));
      Value scaled = arith::MulFOp::create(b, l, a[0], a[1]);
      return arith::SelectOp::create(b, l, neg, scaled, a[0]);
    };
  if (name == "kiln.sigmoid")
    return [cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value e = math::ExpOp::create(
          b, l, arith::NegFOp::create(b, l, a[0]).getResult());
      return arith::DivFOp::create(
          b, l, cst(b, l, 1), arith::AddFOp::create(b, l, cst(b, l, 1), e));
    };
  if (name == "kiln.swish") {
    // x * sigmoid(alpha * x); alpha = 1 is SiLU.
    float al = floatAttr(op, "alpha", 1.0f);
    return [cst, al](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value ax =
          al == 1.0f
              ? a[0]
              : arith::MulFOp::create(b, l, a[0], cst(b, l, al)).getResult();
      Value e = math::ExpOp::create(
          b, l, arith::NegFOp::create(b, l, ax).getResult());
      return arith::DivFOp::create(
          b, l, a[0], arith::AddFOp::create(b, l, cst(b, l, 1), e));
    };
  }
  if (name == "kiln.hard_sigmoid" || name == "kiln.hard_swish") {
    bool swish = name == "kiln.hard_swish";
    float al = swish ? 1.0f / 6 : (alpha == 0 ? 0.2f : alpha);
    float be = swish ? 0.5f : (op->getAttr("beta") ? beta : 0.5f);
    return [cst, al, be, swish](OpBuilder &b, Location l,
                                ValueRange a) -> Value {
      Value t = arith::AddFOp::create(
          b, l, arith::MulFOp::create(b, l, a[0], cst(b, l, al)),
          cst(b, l, be));
      t = arith::MinimumFOp::create(
          b, l, arith::MaximumFOp::create(b, l, t, cst(b, l, 0)), cst(b, l, 1));
      return swish ? arith::MulFOp::create(b, l, a[0], t).getResult() : t;
    };
  }
  if (name == "kiln.elu" || name == "kiln.selu" || name == "kiln.celu") {
    bool selu = name == "kiln.selu", celu = name == "kiln.celu";
    float al = op->getAttr("alpha")
                   ? alpha
                   : (selu ? 1.67326319217681884765625f : 1.0f);
    float ga = selu
                   ? (op->getAttr("gamma") ? gamma : 1.05070102214813232421875f)
                   : 1.0f;
    return [cst, al, ga, celu](OpBuilder &b, Location l,
                               ValueRange a) -> Value {
      Value x = a[0];
      Value xs =
          celu ? arith::DivFOp::create(b, l, x, cst(b, l, al)).getResult() : x;
      Value em1 = math::ExpM1Op::create(b, l, xs);
      Value neg = arith::MulFOp::create(b, l, em1, cst(b, l, al));
      Value isNeg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x,
                                          cst(b, l, 0));
      Value r = arith::SelectOp::create(b, l, isNeg, neg, x);
      return arith::MulFOp::create(b, l, r, cst(b, l, ga));
    };
  }
  if (name == "kiln.softplus")
    return [cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      return math::Log1pOp::create(b, l, math::ExpOp::create(b, l, a[0]));
    };
  if (name == "kiln.mish")
    // x * tanh(softplus(x)); past 20, softplus(x) is x to f32 precision and
    // tanh of it 1, where exp(x) would overflow to inf on the way.
    return [cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value sp = math::Log1pOp::create(b, l, math::ExpOp::create(b, l, a[0]));
      Value big = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a[0],
                                        cst(b, l, 20));
      sp = arith::SelectOp::create(b, l, big, a[0], sp);
      return arith::MulFOp::create(b, l, a[0],
                                   math::TanhOp::create(b, l, sp).getResult());
    };
  if (name == "kiln.softsign")
    return [cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value d = arith::AddFOp::create(b, l, cst(b, l, 1),
                                      math::AbsFOp::create(b, l, a[0]));
      return arith::DivFOp::create(b, l, a[0], d);
    };
  if (name == "kiln.gelu") {
    bool tanhApprox = false;
    if (auto s = op->getAttrOfType<StringAttr>("approximate"))
      tanhApprox = s.getValue() == "tanh";
    return [cst, tanhApprox](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value x = a[0], inner;
      if (tanhApprox) {
        Value x3 = arith::MulFOp::create(
            b, l, x, arith::MulFOp::create(b, l, x, x).getResult());
        Value poly = arith::AddFOp::create(
            b, l, x, arith::MulFOp::create(b, l, x3, cst(b, l, 0.044715)));
        inner = math::TanhOp::create(
            b, l,
            arith::MulFOp::create(b, l, poly, cst(b, l, 0.7978845608028654))
                .getResult());
      } else {
        inner = math::ErfOp::create(
            b, l,
            arith::MulFOp::create(b, l, x, cst(b, l, 0.7071067811865476))
                .getResult());
      }
      Value half = arith::MulFOp::create(b, l, x, cst(b, l, 0.5));
      return arith::MulFOp::create(
          b, l, half, arith::AddFOp::create(b, l, inner, cst(b, l, 1)));
    };
  }
  if (name == "kiln.reciprocal")
    return [cst](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::DivFOp::create(b, l, cst(b, l, 1), a[0]);
    };
#define UNARY_MATH(kname, Op)                                                  \
  if (name == kname)                                                           \
    return [](OpBuilder &b, Location l, ValueRange a) -> Value {               \
      return Op::create(b, l, a[0]);                                           \
    };
  UNARY_MATH("kiln.tanh", math::TanhOp)
  UNARY_MATH("kiln.exp", math::ExpOp)
  UNARY_MATH("kiln.log", math::LogOp)
  UNARY_MATH("kiln.sqrt", math::SqrtOp)
  UNARY_MATH("kiln.abs", math::AbsFOp)
  UNARY_MATH("kiln.neg", arith::NegFOp)
  UNARY_MATH("kiln.floor", math::FloorOp)
  UNARY_MATH("kiln.ceil", math::CeilOp)
  UNARY_MATH("kiln.erf", math::ErfOp)
  UNARY_MATH("kiln.sin", math::SinOp)
  UNARY_MATH("kiln.cos", math::CosOp)
  UNARY_MATH("kiln.tan", math::TanOp)
  UNARY_MATH("kiln.atan", math::AtanOp)
  UNARY_MATH("kiln.round", math::RoundEvenOp)
  UNARY_MATH("kiln.asin", math::AsinOp)
  UNARY_MATH("kiln.acos", math::AcosOp)
  UNARY_MATH("kiln.sinh", math::SinhOp)
  UNARY_MATH("kiln.cosh", math::CoshOp)
  UNARY_MATH("kiln.asinh", math::AsinhOp)
  UNARY_MATH("kiln.acosh", math::AcoshOp)
  UNARY_MATH("kiln.atanh", math::AtanhOp)
  if (name == "kiln.thresholded_relu") {
    float al = op->getAttr("alpha") ? alpha : 1.0f;
    return [cst, al](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value gt = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, a[0],
                                       cst(b, l, al));
      return arith::SelectOp::create(b, l, gt, a[0], cst(b, l, 0));
    };
  }
  if (name == "kiln.shrink") {
    float lambd = op->getAttr("lambd") ? floatAttr(op, "lambd", 0.5f) : 0.5f;
    float bias = floatAttr(op, "bias", 0.0f);
    return [cst, lambd, bias](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value x = a[0];
      Value lo = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x,
                                       cst(b, l, -lambd));
      Value hi = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x,
                                       cst(b, l, lambd));
      Value r = arith::SelectOp::create(
          b, l, hi, arith::SubFOp::create(b, l, x, cst(b, l, bias)),
          cst(b, l, 0));
      return arith::SelectOp::create(
          b, l, lo, arith::AddFOp::create(b, l, x, cst(b, l, bias)), r);
    };
  }
#undef UNARY_MATH
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The lowering
//===----------------------------------------------------------------------===//

/// Which operands of each kiln op had unsigned integer types, recorded
/// before the lowering makes every type signless.
using UnsignedOperands = DenseMap<Operation *, SmallVector<bool>>;

/// Ops whose lowering honours unsigned integer types: they either do not
/// depend on the signedness (data movement, bitwise logic) or pick the
/// unsigned arith forms.
bool lowersUnsigned(Operation *op) {
  return isa<ConstantOp, IdentityOp, AddOp, SubOp, MulOp, DivOp, ModOp, MaxOp,
             MinOp, PowOp, BitShiftOp, EqualOp, LessOp, GreaterOp,
             LessOrEqualOp, GreaterOrEqualOp, CastOp, CastLikeOp, MaxPoolOp,
             ReshapeOp, TransposeOp, ConcatOp, SqueezeOp, UnsqueezeOp,
             FlattenOp, ExpandOp, ShapeOp, SizeOp, WhereOp, BitwiseAndOp,
             BitwiseOrOp, BitwiseXorOp, BitwiseNotOp, QuantizeLinearOp,
             DequantizeLinearOp, DynamicQuantizeLinearOp, ConvIntegerOp,
             MatMulIntegerOp, QLinearConvOp, QLinearMatMulOp, NonZeroOp,
             CompressOp, BitCastOp, CenterCropPadOp, TopKOp, AbsOp>(op);
}

/// A lowered data-dependent result (keyed by its upper bound tensor): the
/// tensor<i64> of its valid extent and the dim that extent is along.
using DataDependentExtents = DenseMap<Value, std::pair<Value, int64_t>>;

class Lowering {
public:
  Lowering(IRRewriter &rewriter, const UnsignedOperands &unsignedOperands,
           DataDependentExtents &extents, int64_t maxSplitConvGroups,
           bool conv1dAs2d)
      : b(rewriter), unsignedOperands(unsignedOperands), extents(extents),
        maxSplitConvGroups(maxSplitConvGroups), conv1dAs2d(conv1dAs2d) {}

  /// Replaces `op`; fails with a diagnostic naming it.
  LogicalResult lower(Operation *op);

private:
  FailureOr<SmallVector<Value>> lowerOp(Operation *op);
  Value lowerMatMul(Operation *op, Value a, Value bm, RankedTensorType rt);
  using TapInputFn = function_ref<std::pair<Value, Value>(
      OpBuilder &, Location, Value, Value, int64_t)>;
  Value convTransposeAsGemm(Operation *op, Value x, Value w, Value bias,
                            RankedTensorType rt, ArrayRef<int64_t> kernel,
                            ArrayRef<int64_t> strides, ArrayRef<int64_t> dil,
                            ArrayRef<int64_t> pads, TapInputFn tapInput);
  std::optional<Value> rawIntegerGemm(Operation *op,
                                      llvm::function_ref<bool(unsigned)> flag);
  FailureOr<Value> lowerConv(Operation *op, RankedTensorType rt, Value x,
                             Value w, Value bias, Value padValue = Value());
  Value lowerConvWindows(Operation *op, RankedTensorType rt, Value x, Value w,
                         Value bias, Value padValue, ArrayRef<int64_t> strides,
                         ArrayRef<int64_t> dil, ArrayRef<int64_t> pads,
                         int64_t group);
  Value runtimeSlice(Location loc, Value x, Value starts, Value axes,
                     Value steps, RankedTensorType rt);
  SmallVector<Value> perDimValues(Location loc, Value values, Value axes,
                                  int64_t rank, int64_t offset, int64_t dflt);
  Value centered(Location loc, Value v, bool vUns, Value zp, bool zpUns,
                 int64_t zpAxis);
  FailureOr<SmallVector<Value>> lowerIntegerGemm(Operation *op,
                                                 RankedTensorType rt);
  FailureOr<Value> lowerRotaryEmbedding(RotaryEmbeddingOp op,
                                        RankedTensorType rt);
  FailureOr<Value> lowerPool(Operation *op, RankedTensorType rt,
                             Value *indices = nullptr);
  FailureOr<SmallVector<Value>> lowerAttention(AttentionOp op,
                                               RankedTensorType rt);

  IRRewriter &b;
  const UnsignedOperands &unsignedOperands;
  DataDependentExtents &extents;
  int64_t maxSplitConvGroups;
  bool conv1dAs2d;
  /// Of the op being lowered: which operands, and whether its first result,
  /// were unsigned integers.
  SmallVector<bool> uns;
  bool resUns = false;
};

LogicalResult Lowering::lower(Operation *op) {
  // A data-dependent result is computed into its upper bound, which only
  // the function's return can take (with the valid extent beside it).
  SmallVector<DataDependentResult> dataDependent = dataDependentResults(op);
  for (const DataDependentResult &d : dataDependent) {
    OpResult r = op->getResult(d.result);
    if (llvm::any_of(r.getUsers(),
                     [](Operation *u) { return !isa<func::ReturnOp>(u); }))
      return op->emitOpError("result #")
             << d.result
             << ": a data-dependent shape is supported only on a graph output";
    auto t = cast<RankedTensorType>(r.getType());
    SmallVector<int64_t> shape(t.getShape());
    shape[d.dim] = d.bound;
    r.setType(t.clone(shape));
  }
  if (failed(checkControlFlowTypes(op)))
    return failure();
  for (Type t :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    if (isa<SeqType, OptType>(t))
      return op->emitOpError("has ")
             << (isa<SeqType>(t) ? "a sequence" : "an optional") << " (" << t
             << ") that stays at run time: Kiln resolves sequences and "
                "optionals at compile time, and this one's length, the "
                "positions read from it or whether it holds a value depend "
                "on values known only at run time (give sequence inputs' "
                "elements with --input-sequence, pin scalar inputs with "
                "--input-value)";
    auto r = dyn_cast<RankedTensorType>(t);
    if (!r || !r.hasStaticShape())
      return op->emitOpError("needs static shapes to lower (got ")
             << t << "); give the inputs static shapes with --input-shape";
    if (isa<StringType, ComplexType>(r.getElementType()) ||
        (isUnsignedElt(r) && !lowersUnsigned(op)))
      return op->emitOpError("element type ")
             << r.getElementType() << " is not supported by the lowering yet";
  }
  uns = unsignedOperands.lookup(op);
  uns.resize(op->getNumOperands(), false);
  resUns = op->getNumResults() && isUnsignedElt(op->getResult(0).getType());
  for (OpResult r : op->getResults())
    r.setType(toSignless(r.getType()));
  b.setInsertionPoint(op);
  // Results without elements need no computation.
  if (op->getNumResults() && llvm::all_of(op->getResultTypes(), [](Type t) {
        return cast<RankedTensorType>(t).getNumElements() == 0;
      })) {
    SmallVector<Value> empties;
    for (Type t : op->getResultTypes())
      empties.push_back(emptyLike(b, op->getLoc(), cast<RankedTensorType>(t)));
    b.replaceOp(op, empties);
    return success();
  }
  // Ops of data-dependent results (but a Loop's, lowerControlFlowOp's) give
  // the valid extents too.
  LoweringResult dependent = std::nullopt;
  if (!dataDependent.empty())
    dependent = lowerDataDependentOp(b, op, dataDependent);
  auto results = dependent ? *dependent : lowerOp(op);
  if (failed(results))
    return failure();
  // The valid extents of the data-dependent results follow the results.
  unsigned n = op->getNumResults();
  assert(results->size() == n + dataDependent.size() &&
         "one extent per data-dependent result");
  for (auto [d, extent] :
       llvm::zip(dataDependent, ArrayRef(*results).drop_front(n)))
    extents[(*results)[d.result]] = {extent, d.dim};
  results->resize(n);
  b.replaceOp(op, *results);
  return success();
}

Value Lowering::lowerMatMul(Operation *op, Value a, Value bm,
                            RankedTensorType rt) {
  Location loc = op->getLoc();
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(bm.getType());
  Type elt = rt.getElementType();
  Value zero = filled(b, loc, rt, scalarConst(b, loc, elt, 0));
  // One contraction over (batch..., m, k, n) for every form (vectors, rank
  // 1, contribute no m or n). The reduction k comes before n so that the
  // innermost loop walks B and the result contiguously: the loop nest the
  // CPU path generates then vectorizes along n.
  MLIRContext *ctx = b.getContext();
  bool vecA = at.getRank() == 1, vecB = bt.getRank() == 1;
  int64_t batch = rt.getRank() - (vecA ? 0 : 1) - (vecB ? 0 : 1);
  // batch..., m (unless A is a vector), k, n (unless B is one).
  int64_t kd = batch + (vecA ? 0 : 1), nd = kd + (vecB ? 1 : 2);
  AffineExpr m = getAffineDimExpr(batch, ctx), k = getAffineDimExpr(kd, ctx),
             n = getAffineDimExpr(kd + 1, ctx);
  auto batchExprs = [&](RankedTensorType t, int64_t inner) {
    SmallVector<AffineExpr> e;
    int64_t tb = t.getRank() - inner;
    for (int64_t d = 0; d < tb; ++d) {
      int64_t od = batch - tb + d;
      e.push_back(t.getDimSize(d) == 1 && rt.getDimSize(od) != 1
                      ? getAffineConstantExpr(0, ctx)
                      : getAffineDimExpr(od, ctx));
    }
    return e;
  };
  SmallVector<AffineExpr> ae =
      vecA ? SmallVector<AffineExpr>{} : batchExprs(at, 2);
  if (!vecA)
    ae.push_back(m);
  ae.push_back(k);
  SmallVector<AffineExpr> be =
      vecB ? SmallVector<AffineExpr>{} : batchExprs(bt, 2);
  be.push_back(k);
  if (!vecB)
    be.push_back(n);
  SmallVector<AffineExpr> oe;
  for (int64_t d = 0; d < batch; ++d)
    oe.push_back(getAffineDimExpr(d, ctx));
  if (!vecA)
    oe.push_back(m);
  if (!vecB)
    oe.push_back(n);
  SmallVector<AffineMap> maps = {AffineMap::get(nd, 0, ae, ctx),
                                 AffineMap::get(nd, 0, be, ctx),
                                 AffineMap::get(nd, 0, oe, ctx)};
  SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
  iters[kd] = utils::IteratorType::reduction;
  bool f = isa<FloatType>(elt);
  auto body = [&](OpBuilder &nb, Location nl, ValueRange args) {
    Value p =
        f ? arith::MulFOp::create(nb, nl, widenScalar(nb, nl, args[0], elt),
                                  widenScalar(nb, nl, args[1], elt))
                .getResult()
          : arith::MulIOp::create(nb, nl, signExtended(nb, nl, args[0], elt),
                                  signExtended(nb, nl, args[1], elt))
                .getResult();
    Value s = f ? arith::AddFOp::create(nb, nl, args[2], p).getResult()
                : arith::AddIOp::create(nb, nl, args[2], p).getResult();
    linalg::YieldOp::create(nb, nl, s);
  };
  auto generic =
      linalg::GenericOp::create(b, loc, TypeRange{rt}, ValueRange{a, bm},
                                ValueRange{zero}, maps, iters, body);
  // kiln-sparsify's mark goes to the contraction, where code generation
  // decides on a sparse kernel.
  if (Attribute sparsity = op->getAttr("kiln.sparsity"))
    generic->setAttr("kiln.sparsity", sparsity);
  return generic.getResult(0);
}

/// Explicit begin/end pads of a window op, resolving auto_pad from static
/// shapes.
SmallVector<int64_t> windowPads(Operation *op, RankedTensorType x,
                                ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> dil) {
  int64_t n = kernel.size();
  SmallVector<int64_t> pads =
      intsAttr(op, "pads", SmallVector<int64_t>(2 * n, 0));
  StringRef autoPad = "NOTSET";
  if (auto a = op->getAttrOfType<StringAttr>("auto_pad"))
    autoPad = a.getValue();
  if (autoPad == "VALID")
    return SmallVector<int64_t>(2 * n, 0);
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < n; ++i) {
      int64_t in = x.getDimSize(i + 2);
      int64_t out = (in + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - in);
      int64_t small = total / 2, big = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : big;
      pads[i + n] = autoPad == "SAME_UPPER" ? big : small;
    }
  }
  return pads;
}

/// A 2-D ConvTranspose of one group as a GEMM and a placement of its taps:
///
///   cols[n, (f, kh, kw), (ih, iw)] = sum_c w[c, (f, kh, kw)] * x[n, c, (ih,
///   iw)] y[n, f, oh, ow] = bias[f] + sum of cols[n, f, kh, kw, ih, iw] over
///   the
///                     taps with ih*s + kh*d - pad = oh (and likewise w)
///
/// The product is MatMul's contraction (the CPU's packed GEMM, the GPU's
/// tiled kernel); the placement reads each product once. Where the taps do
/// not overlap (stride = kernel, no dilation or padding: the 2x2 stride-2
/// upsampling of U-Nets and text detectors) the placement is a transpose:
/// y viewed as [n, f, ih, kh, iw, kw] is cols permuted.
Value Lowering::convTransposeAsGemm(
    Operation *op, Value x, Value w, Value bias, RankedTensorType rt,
    ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides, ArrayRef<int64_t> dil,
    ArrayRef<int64_t> pads, TapInputFn tapInput) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(w.getType());
  Type elt = rt.getElementType();
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), ih = xt.getDimSize(2),
          iw = xt.getDimSize(3), f = wt.getDimSize(1), kh = kernel[0],
          kw = kernel[1];
  auto type = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, elt);
  };
  Value wFlat = reshapeTo(b, loc, w, type({c, f * kh * kw}));
  Value a = linalg::TransposeOp::create(
                b, loc, wFlat, emptyLike(b, loc, type({f * kh * kw, c})),
                ArrayRef<int64_t>{1, 0})
                .getResult()[0];
  Value cols = lowerMatMul(op, a, reshapeTo(b, loc, x, type({n, c, ih * iw})),
                           type({n, f * kh * kw, ih * iw}));
  Value cols6 = reshapeTo(b, loc, cols, type({n, f, kh, kw, ih, iw}));
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto addBias = [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
    return v.size() > 1 ? arith::AddFOp::create(nb, nl, v[0], v[1]).getResult()
                        : v[0];
  };
  SmallVector<Value> ins = {cols6};
  if (bias)
    ins.push_back(bias);
  bool disjoint = strides[0] == kh && strides[1] == kw && dil[0] == 1 &&
                  dil[1] == 1 &&
                  llvm::all_of(pads, [](int64_t p) { return p == 0; }) &&
                  rt.getDimSize(2) == ih * kh && rt.getDimSize(3) == iw * kw;
  if (disjoint) {
    // Dims (n, f, ih, kh, iw, kw) of the output viewed at six dims.
    SmallVector<AffineMap> maps = {
        AffineMap::get(6, 0, {d(0), d(1), d(3), d(5), d(2), d(4)}, ctx)};
    if (bias)
      maps.push_back(AffineMap::get(6, 0, {d(1)}, ctx));
    Value y6 =
        elementwise(b, loc, type({n, f, ih, kh, iw, kw}), ins, addBias, maps);
    return reshapeTo(b, loc, y6, rt);
  }
  // Overlapping taps: over (n, f, oh, ow, kh, kw), each output sums the
  // products of the taps that land on it, from the bias (or zero).
  Value init = bias ? elementwise(b, loc, rt, ValueRange{bias}, addBias,
                                  {AffineMap::get(4, 0, {d(1)}, ctx)})
                    : filled(b, loc, rt, scalarConst(b, loc, elt, 0));
  Value extents = tensor::EmptyOp::create(b, loc, kernel, elt);
  using IT = utils::IteratorType;
  SmallVector<IT> iters = {IT::parallel, IT::parallel,  IT::parallel,
                           IT::parallel, IT::reduction, IT::reduction};
  return linalg::GenericOp::create(
             b, loc, TypeRange{rt}, ValueRange{extents}, ValueRange{init},
             {AffineMap::get(6, 0, {d(4), d(5)}, ctx),
              AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx)},
             iters,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               auto idx = [&](int64_t i) -> Value {
                 return linalg::IndexOp::create(nb, nl, i);
               };
               Value k0 = idx(4), k1 = idx(5);
               auto [i0, ok0] = tapInput(nb, nl, idx(2), k0, 0);
               auto [i1, ok1] = tapInput(nb, nl, idx(3), k1, 1);
               Value v = tensor::ExtractOp::create(
                   nb, nl, cols6, ValueRange{idx(0), idx(1), k0, k1, i0, i1});
               Value sum = arith::AddFOp::create(nb, nl, args[1], v);
               Value ok = arith::AndIOp::create(nb, nl, ok0, ok1);
               linalg::YieldOp::create(nb, nl,
                                       ValueRange{arith::SelectOp::create(
                                           nb, nl, ok, sum, args[1])});
             })
      .getResult(0);
}

FailureOr<Value> Lowering::lowerConv(Operation *op, RankedTensorType rt,
                                     Value x, Value w, Value bias,
                                     Value padValue) {
  Location loc = op->getLoc();
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(w.getType());
  int64_t n = xt.getRank() - 2;
  if (n < 1)
    return op->emitOpError("needs at least one spatial dim"), failure();
  SmallVector<int64_t> kernel(wt.getShape().drop_front(2));
  auto strides = intsAttr(op, "strides", SmallVector<int64_t>(n, 1));
  auto dil = intsAttr(op, "dilations", SmallVector<int64_t>(n, 1));
  auto pads = windowPads(op, xt, kernel, strides, dil);
  int64_t group = intAttr(op, "group", 1);
  if (n == 1 && conv1dAs2d && xt.hasStaticShape() && wt.hasStaticShape() &&
      rt.hasStaticShape()) {
    // A 1-D convolution (audio front ends, wav2vec2's feature extractor
    // and grouped positional convolution, Whisper's stem) is the 2-D one
    // over a plane one row high, so that it takes the 2-D strategies (the
    // GEMM over an im2col copy, the split or batched groups, depthwise)
    // instead of a generic contraction's scalar loops.
    auto row = [](RankedTensorType t) {
      SmallVector<int64_t> shape(t.getShape());
      shape.insert(shape.begin() + 2, 1);
      return RankedTensorType::get(shape, t.getElementType());
    };
    Value y = lowerConvWindows(
        op, row(rt), reshapeTo(b, op->getLoc(), x, row(xt)),
        reshapeTo(b, op->getLoc(), w, row(wt)), bias, padValue, {1, strides[0]},
        {1, dil[0]}, {0, pads[0], 0, pads[1]}, group);
    return reshapeTo(b, op->getLoc(), y, rt);
  }
  return lowerConvWindows(op, rt, x, w, bias, padValue, strides, dil, pads,
                          group);
}

/// lowerConv's convolution with its windows' strides, dilations and pads
/// (begins, then ends) given.
Value Lowering::lowerConvWindows(Operation *op, RankedTensorType rt, Value x,
                                 Value w, Value bias, Value padValue,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dil, ArrayRef<int64_t> pads,
                                 int64_t group) {
  Location loc = op->getLoc();
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(w.getType());
  int64_t n = xt.getRank() - 2;
  SmallVector<int64_t> kernel(wt.getShape().drop_front(2));
  Type elt = rt.getElementType();
  SmallVector<int64_t> low(2, 0), high(2, 0);
  for (int64_t i = 0; i < n; ++i) {
    low.push_back(pads[i]);
    high.push_back(pads[i + n]);
  }
  Value zero = scalarConst(b, loc, elt, 0);
  // The input may be narrower than the accumulator (half precision with
  // float32 accumulation): it is padded with its own zero.
  Type inElt = xt.getElementType();
  // A quantized input is padded with its zero point (`padValue`).
  if (!padValue)
    padValue = inElt == elt ? zero : scalarConst(b, loc, inElt, 0);
  Value xp = padTensor(b, loc, x, low, high, padValue);
  auto stridesAttr = b.getI64TensorAttr(strides);
  auto dilAttr = b.getI64TensorAttr(dil);
  MLIRContext *ctx = b.getContext();
  // The accumulator starts as the bias broadcast along the channel dim (or
  // zero), so that no separate pass over the output adds it.
  auto accInit = [&]() -> Value {
    if (!bias)
      return filled(b, loc, rt, zero);
    AffineMap chan =
        AffineMap::get(rt.getRank(), 0, {getAffineDimExpr(1, ctx)}, ctx);
    return elementwise(
        b, loc, rt, ValueRange{bias},
        [](OpBuilder &, Location, ValueRange a) -> Value { return a[0]; },
        {chan});
  };
  // The body of a convolution as a generic: out + x * w.
  auto multiplyAccumulate = [&](OpBuilder &nb, Location nl, ValueRange a) {
    Value p = binaryBody<arith::MulFOp, arith::MulIOp>(isFloat(elt))(
        nb, nl,
        ValueRange{widenScalar(nb, nl, a[0], elt),
                   widenScalar(nb, nl, a[1], elt)});
    linalg::YieldOp::create(nb, nl,
                            binaryBody<arith::AddFOp, arith::AddIOp>(
                                isFloat(elt))(nb, nl, ValueRange{a[2], p}));
  };
  if (group == 1 && n == 2) {
    // The named op: codegen recognizes it (the CPU path turns it into a
    // GEMM over an im2col copy). kiln-sparsify's mark goes with it.
    auto conv = linalg::Conv2DNchwFchwOp::create(b, loc, TypeRange{rt},
                                                 ValueRange{xp, w}, accInit(),
                                                 stridesAttr, dilAttr);
    if (Attribute sparsity = op->getAttr("kiln.sparsity"))
      conv->setAttr("kiln.sparsity", sparsity);
    return conv.getResult(0);
  }
  if (group == 1 || n != 2) {
    // A contraction whose loops run (n, f, c, k..., o...): the innermost
    // loop walks the output row and the input row (at the stride)
    // contiguously, so the generated loops vectorize along it. With groups
    // (in 1-D and 3-D; 2-D has the named ops below), c runs over one
    // group's input channels, and output channel f reads those of its
    // group: (f floordiv (F / group)) * (C / group) + c.
    Value init = accInit();
    unsigned nd = 3 + 2 * n;
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    int64_t perGroupIn = wt.getDimSize(1);
    int64_t perGroupOut = wt.getDimSize(0) / group;
    AffineExpr inChannel =
        group == 1 ? d(2) : d(1).floorDiv(perGroupOut) * perGroupIn + d(2);
    SmallVector<AffineExpr> inExprs = {d(0), inChannel}, wExprs = {d(1), d(2)},
                            outExprs = {d(0), d(1)};
    for (int64_t i = 0; i < n; ++i) {
      AffineExpr k = d(3 + i), o = d(3 + n + i);
      inExprs.push_back(o * strides[i] + k * dil[i]);
      wExprs.push_back(k);
      outExprs.push_back(o);
    }
    using IT = utils::IteratorType;
    SmallVector<IT> iters(nd, IT::parallel);
    for (int64_t i = 2; i < 3 + n; ++i)
      iters[i] = IT::reduction;
    return linalg::GenericOp::create(b, loc, TypeRange{rt}, ValueRange{xp, w},
                                     ValueRange{init},
                                     {AffineMap::get(nd, 0, inExprs, ctx),
                                      AffineMap::get(nd, 0, wExprs, ctx),
                                      AffineMap::get(nd, 0, outExprs, ctx)},
                                     iters, multiplyAccumulate)
        .getResult(0);
  }
  auto xpt = cast<RankedTensorType>(xp.getType());
  int64_t c = xt.getDimSize(1), f = wt.getDimSize(0);
  if (group == c && group == f) {
    // Depthwise (one input and one output channel per group): a generic
    // over (n, c, oh, ow, kh, kw) whose output is the op's own NCHW
    // result, so it starts from the bias like the others and shares its
    // loops with the elementwise ops after it (no reshapes, no separate
    // bias pass).
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> inExprs = {d(0), d(1)},
                            wExprs = {d(1), getAffineConstantExpr(0, ctx)},
                            outExprs = {d(0), d(1), d(2), d(3)};
    for (int64_t i = 0; i < 2; ++i) {
      inExprs.push_back(d(2 + i) * strides[i] + d(4 + i) * dil[i]);
      wExprs.push_back(d(4 + i));
    }
    using IT = utils::IteratorType;
    SmallVector<IT> iters = {IT::parallel, IT::parallel,  IT::parallel,
                             IT::parallel, IT::reduction, IT::reduction};
    return linalg::GenericOp::create(b, loc, TypeRange{rt}, ValueRange{xp, w},
                                     ValueRange{accInit()},
                                     {AffineMap::get(6, 0, inExprs, ctx),
                                      AffineMap::get(6, 0, wExprs, ctx),
                                      AffineMap::get(6, 0, outExprs, ctx)},
                                     iters, multiplyAccumulate)
        .getResult(0);
  }
  if (group <= maxSplitConvGroups && c % group == 0 && f % group == 0) {
    // A few groups (AlexNet's 2, ShuffleNet's 3 to 8, a grouped 3x3's 4):
    // one named convolution per group on its channels' slices of the
    // padded input, the weight and the accumulator (which starts as the
    // bias), written back in place. Each is the fast path an ungrouped
    // convolution takes (a GEMM over an im2col copy on the CPU); the
    // grouped named op has no such lowering and ran its loops generically.
    Value acc = accInit();
    int64_t cg = c / group, fg = f / group;
    // The slice of `v` along `dim` at [offset, offset + size), whole
    // elsewhere; `into` writes `part` back there instead.
    auto bounds = [&](Value v, int64_t dim, int64_t offset, int64_t size) {
      auto t = cast<RankedTensorType>(v.getType());
      SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0)), sizes,
          unit(t.getRank(), b.getIndexAttr(1));
      offsets[dim] = b.getIndexAttr(offset);
      for (int64_t d = 0; d < t.getRank(); ++d)
        sizes.push_back(b.getIndexAttr(d == dim ? size : t.getDimSize(d)));
      return std::make_tuple(offsets, sizes, unit);
    };
    auto slice = [&](Value v, int64_t dim, int64_t offset, int64_t size) {
      auto [offsets, sizes, unit] = bounds(v, dim, offset, size);
      return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, unit)
          .getResult();
    };
    for (int64_t g = 0; g < group; ++g) {
      Value init = slice(acc, 1, g * fg, fg);
      Value part =
          linalg::Conv2DNchwFchwOp::create(
              b, loc, TypeRange{init.getType()},
              ValueRange{slice(xp, 1, g * cg, cg), slice(w, 0, g * fg, fg)},
              init, stridesAttr, dilAttr)
              .getResult(0);
      auto [offsets, sizes, unit] = bounds(acc, 1, g * fg, fg);
      acc = tensor::InsertSliceOp::create(b, loc, part, acc, offsets, sizes,
                                          unit);
    }
    return acc;
  }
  auto xg = RankedTensorType::get({xpt.getDimSize(0), group, c / group,
                                   xpt.getDimSize(2), xpt.getDimSize(3)},
                                  inElt);
  auto wg = RankedTensorType::get(
      {group, f / group, wt.getDimSize(1), kernel[0], kernel[1]},
      wt.getElementType());
  auto og = RankedTensorType::get(
      {rt.getDimSize(0), group, f / group, rt.getDimSize(2), rt.getDimSize(3)},
      elt);
  Value init = filled(b, loc, og, zero);
  Value out =
      linalg::Conv2DNgchwGfchwOp::create(
          b, loc, TypeRange{og},
          ValueRange{reshapeTo(b, loc, xp, xg), reshapeTo(b, loc, w, wg)}, init,
          stridesAttr, dilAttr)
          .getResult(0);
  out = reshapeTo(b, loc, out, rt);
  if (bias) {
    // Grouped: the output's dim 1 is the group here, so add it after.
    int64_t rank = rt.getRank();
    AffineMap ident = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap chan = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    out = elementwise(b, loc, rt, ValueRange{out, bias},
                      binaryBody<arith::AddFOp, arith::AddIOp>(isFloat(elt)),
                      {ident, chan});
  }
  return out;
}

/// BatchNormalization's output: (x - mean) / sqrt(var + eps) * scale +
/// bias, `ins` being x and the per-channel scale, bias, mean and variance.
static Value normalizeChannels(OpBuilder &b, Location loc, RankedTensorType rt,
                               ValueRange ins, float eps) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = rt.getRank();
  Type elt = rt.getElementType();
  AffineMap ident = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap chan = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
  return elementwise(
      b, loc, rt, ins,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value denom = math::SqrtOp::create(
            nb, nl,
            arith::AddFOp::create(nb, nl, a[4], scalarConst(nb, nl, elt, eps))
                .getResult());
        Value norm = arith::DivFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, a[0], a[3]).getResult(),
            denom);
        return arith::AddFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, norm, a[1]).getResult(),
            a[2]);
      },
      {ident, chan, chan, chan, chan});
}

/// The sets of dims of `in` whose reduction gives `out`, from the static
/// shapes alone: with kept dims, the one set of dims that shrink to 1;
/// without, every set whose removal leaves `out`'s shape.
static SmallVector<SmallVector<bool>>
reducedDimsFromShapes(RankedTensorType in, RankedTensorType out) {
  int64_t rank = in.getRank();
  if (out.getRank() == rank) {
    SmallVector<bool> reduced(rank);
    for (int64_t d = 0; d < rank; ++d)
      reduced[d] = out.getDimSize(d) != in.getDimSize(d);
    return {reduced};
  }
  SmallVector<SmallVector<bool>> found;
  int64_t drop = rank - out.getRank();
  if (drop < 0 || rank > 16)
    return found;
  for (uint32_t mask = 0; mask < (1u << rank); ++mask) {
    if (llvm::popcount(mask) != drop)
      continue;
    SmallVector<int64_t> keptShape;
    for (int64_t d = 0; d < rank; ++d)
      if (!(mask & (1u << d)))
        keptShape.push_back(in.getDimSize(d));
    if (ArrayRef<int64_t>(keptShape) != out.getShape())
      continue;
    SmallVector<bool> reduced(rank);
    for (int64_t d = 0; d < rank; ++d)
      reduced[d] = mask & (1u << d);
    found.push_back(reduced);
  }
  return found;
}

/// For each of `rank` dims, the entry of the 1-D integer tensor `values`
/// (read at run time, from entry `offset` on) whose axis (in `axes`, or
/// the position itself when `axes` is null) names that dim, else `dflt`;
/// as `index` values.
SmallVector<Value> Lowering::perDimValues(Location loc, Value values,
                                          Value axes, int64_t rank,
                                          int64_t offset, int64_t dflt) {
  auto ic = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto entry = [&](Value t, int64_t i) -> Value {
    return arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        tensor::ExtractOp::create(b, loc, t, ValueRange{ic(i)}));
  };
  int64_t n =
      axes ? cast<RankedTensorType>(axes.getType()).getDimSize(0)
           : cast<RankedTensorType>(values.getType()).getDimSize(0) - offset;
  SmallVector<Value> result(rank, ic(dflt));
  for (int64_t i = 0; i < n; ++i) {
    Value v = entry(values, offset + i);
    if (!axes) {
      if (i < rank)
        result[i] = v;
      continue;
    }
    Value a = entry(axes, i);
    Value neg =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a, ic(0));
    a = arith::SelectOp::create(b, loc, neg,
                                arith::AddIOp::create(b, loc, a, ic(rank)), a);
    for (int64_t d = 0; d < rank; ++d)
      result[d] = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, a, ic(d)), v,
          result[d]);
  }
  return result;
}

/// Slice whose starts, axes or steps are known only at run time (or whose
/// steps are negative); the result shape is static, so `ends` only
/// confirms it. Each output index i reads x[start + i * step] per dim, the
/// start clamped as ONNX says.
Value Lowering::runtimeSlice(Location loc, Value x, Value starts, Value axes,
                             Value steps, RankedTensorType rt) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  auto ic = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  SmallVector<Value> start = perDimValues(loc, starts, axes, rank, 0, 0);
  SmallVector<Value> step = steps ? perDimValues(loc, steps, axes, rank, 0, 1)
                                  : SmallVector<Value>(rank, ic(1));
  for (int64_t d = 0; d < rank; ++d) {
    // Negative starts count from the end; then clamp into [0, dim] for
    // positive steps, [0, dim - 1] for negative ones.
    Value dim = ic(xt.getDimSize(d)), s = start[d];
    Value neg =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, s, ic(0));
    s = arith::SelectOp::create(b, loc, neg,
                                arith::AddIOp::create(b, loc, s, dim), s);
    Value backward = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           step[d], ic(0));
    Value hi = arith::SelectOp::create(
        b, loc, backward, arith::SubIOp::create(b, loc, dim, ic(1)), dim);
    s = arith::MaxSIOp::create(b, loc, s, ic(0));
    start[d] = arith::MinSIOp::create(b, loc, s, hi);
  }
  return elementwise(
      b, loc, rt, ValueRange{},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(arith::AddIOp::create(
              nb, nl, start[d],
              arith::MulIOp::create(nb, nl, linalg::IndexOp::create(nb, nl, d),
                                    step[d])));
        return tensor::ExtractOp::create(nb, nl, x, idx);
      });
}

/// `v - zp` widened to i32. `zp` (may be null) is one value, or one per
/// slice of `v` along `zpAxis`.
Value Lowering::centered(Location loc, Value v, bool vUns, Value zp, bool zpUns,
                         int64_t zpAxis) {
  MLIRContext *ctx = b.getContext();
  auto vt = cast<RankedTensorType>(v.getType());
  int64_t rank = vt.getRank();
  Type i32 = b.getI32Type();
  SmallVector<Value> ins = {v};
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx)};
  if (zp) {
    auto zt = cast<RankedTensorType>(zp.getType());
    ins.push_back(zp);
    // Zero points of v's rank ([M, 1] rows, say) broadcast as usual.
    if (zt.getRank() > 1 && zt.getRank() == rank) {
      maps.push_back(AffineMap());
      for (int64_t d = 0; d < rank; ++d)
        if (zt.getDimSize(d) != vt.getDimSize(d) && zt.getDimSize(d) != 1)
          return Value();
      maps.pop_back();
    } else
      maps.push_back(
          zt.getNumElements() == 1
              ? AffineMap::get(rank, 0,
                               SmallVector<AffineExpr>(
                                   zt.getRank(), getAffineConstantExpr(0, ctx)),
                               ctx)
              : AffineMap::get(rank, 0, {getAffineDimExpr(zpAxis, ctx)}, ctx));
  }
  return elementwise(
      b, loc, RankedTensorType::get(vt.getShape(), i32), ins,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value r = convertScalar(nb, nl, a[0], i32, vUns);
        if (a.size() > 1)
          r = arith::SubIOp::create(nb, nl, r,
                                    convertScalar(nb, nl, a[1], i32, zpUns));
        return r;
      },
      maps);
}

/// ONNX's saturating quantization of a float scalar already divided by the
/// scale: round half to even, add the zero point (`zp`, a float or null),
/// clamp to the range of `elt` (read as unsigned if `uns`) and convert.
static Value quantizeScalar(OpBuilder &b, Location loc, Value scaled, Value zp,
                            Type elt, bool uns) {
  Type ft = scaled.getType();
  Value r = math::RoundEvenOp::create(b, loc, scaled);
  if (zp)
    r = arith::AddFOp::create(b, loc, r, zp);
  unsigned w = elt.getIntOrFloatBitWidth();
  double lo = uns ? 0 : -std::ldexp(1.0, w - 1);
  double hi = uns ? std::ldexp(1.0, w) - 1 : std::ldexp(1.0, w - 1) - 1;
  r = arith::MaximumFOp::create(b, loc, r, scalarConst(b, loc, ft, lo));
  r = arith::MinimumFOp::create(b, loc, r, scalarConst(b, loc, ft, hi));
  return convertScalar(b, loc, r, elt, false, uns);
}

/// The values of an integer constant, read as unsigned when `uns`;
/// nothing for a value known only at run time.
std::optional<SmallVector<int64_t>> intValues(Value v, bool uns) {
  ElementsAttr elements;
  if (!v || !matchPattern(v, m_Constant(&elements)))
    return std::nullopt;
  return intElements(elements, uns);
}

/// The integer GEMM of `op` on its 8-bit operands as they are, when its
/// weights (B) are a signed constant with zero zero points and its
/// activations (A) have one constant zero point za (or when B is known
/// only at run time, both operands signed with zero zero points and no
/// bias: the plain product): the contraction
/// sums a * w in int32 from an accumulator that starts at
/// bias - za * sum_k w (per output channel, computed here), which is
/// sum (a - za) * w + bias; a convolution pads with za. Unsigned
/// activations are flipped to signed first (a ^ 0x80 = a - 128, with za
/// - 128), so every contraction reads signed bytes. No i32 copies of the
/// operands are made, and the CPU path turns the contraction into VNNI
/// dot products. Returns nothing when `op` does not have that form, a
/// null value on a reported error.
std::optional<Value>
Lowering::rawIntegerGemm(Operation *op,
                         llvm::function_ref<bool(unsigned)> flag) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  bool conv = isa<ConvIntegerOp, QLinearConvOp>(op);
  bool qlinear = isa<QLinearConvOp, QLinearMatMulOp>(op);
  unsigned bi = qlinear ? 3 : 1, azi = 2, bzi = qlinear ? 5 : 3;
  Value a = getOnnxInput(op, 0), w = getOnnxInput(op, bi);
  auto at = cast<RankedTensorType>(a.getType());
  auto wt = cast<RankedTensorType>(w.getType());
  auto rt = cast<RankedTensorType>(op->getResult(0).getType());
  if (!at.getElementType().isInteger(8) || !wt.getElementType().isInteger(8) ||
      flag(bi) || !wt.hasStaticShape() || !rt.hasStaticShape())
    return std::nullopt;
  // (Constant matmul weights are [K, N]; run-time ones may be batched.)
  auto wv = intValues(w, false);
  if (conv
          ? (wt.getRank() != 4 || intAttr(op, "group", 1) != 1)
          : (wt.getRank() < 2 || (wv && wt.getRank() != 2) || at.getRank() < 2))
    return std::nullopt;
  Value azp = getOnnxInput(op, azi), bzp = getOnnxInput(op, bzi);
  Value bias = qlinear && conv ? getOnnxInput(op, 8) : Value();
  auto bzv = bzp ? intValues(bzp, flag(bzi)) : SmallVector<int64_t>{};
  auto azv = azp ? intValues(azp, flag(azi)) : SmallVector<int64_t>{0};
  auto biasv = bias ? intValues(bias, false) : SmallVector<int64_t>{};
  if (!bzv || !azv || azv->size() != 1 || !biasv ||
      llvm::any_of(*bzv, [](int64_t z) { return z != 0; }))
    return std::nullopt;
  int64_t za = (*azv)[0];
  bool unsignedA = flag(0);
  auto accType = RankedTensorType::get(rt.getShape(), b.getI32Type());
  if (!wv) {
    // Weights known only at run time (a product of two activations, as in
    // quantized attention): the raw product where both operands are signed
    // with zero zero points, plus the bias.
    if (unsignedA || za != 0 || !biasv->empty())
      return std::nullopt;
    if (conv) {
      FailureOr<Value> acc =
          lowerConv(op, accType, a, w, Value(),
                    scalarConst(b, loc, at.getElementType(), 0));
      return failed(acc) ? Value() : *acc;
    }
    return lowerMatMul(op, a, w, accType);
  }
  if (unsignedA) {
    a = elementwise(b, loc, at, ValueRange{a},
                    [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                      return arith::XOrIOp::create(
                          nb, nl, v[0],
                          scalarConst(nb, nl, v[0].getType(), -128));
                    });
    za -= 128;
  }
  // Output channels: a convolution's weights are [F, C, KH, KW], a
  // matmul's [K, N].
  int64_t channels = conv ? wt.getDimSize(0) : wt.getDimSize(1);
  int64_t reduction = wt.getNumElements() / channels;
  if (!biasv->empty() && (int64_t)biasv->size() != channels)
    return op->emitOpError("bias has ") << biasv->size() << " values for "
                                        << channels << " output channels",
           Value();
  SmallVector<int32_t> offset(channels);
  for (int64_t n = 0; n < channels; ++n) {
    int64_t sum = 0;
    for (int64_t k = 0; k < reduction; ++k)
      sum += conv ? (*wv)[n * reduction + k] : (*wv)[k * channels + n];
    int64_t o = (biasv->empty() ? 0 : (*biasv)[n]) - za * sum;
    if (o < INT32_MIN || o > INT32_MAX)
      return std::nullopt; // The centered form keeps the exact sums.
    offset[n] = static_cast<int32_t>(o);
  }
  auto offsetType = RankedTensorType::get({channels}, b.getI32Type());
  Value offsetCst = arith::ConstantOp::create(
      b, loc, DenseIntElementsAttr::get(offsetType, ArrayRef(offset)));
  // A matmul's accumulator plus the offsets along its last dim.
  auto addOffsets = [&](Value acc) -> Value {
    auto t = cast<RankedTensorType>(acc.getType());
    int64_t rank = t.getRank();
    return elementwise(
        b, loc, t, ValueRange{acc, offsetCst},
        [](OpBuilder &nb, Location nl, ValueRange v) -> Value {
          return arith::AddIOp::create(nb, nl, v[0], v[1]);
        },
        {AffineMap::getMultiDimIdentityMap(rank, ctx),
         AffineMap::get(rank, 0, {getAffineDimExpr(rank - 1, ctx)}, ctx)});
  };
  if (conv && isPointwiseGemm(op)) {
    // A 1x1 convolution of 1x1 planes (a QDQ Gemm, as kiln-fold-qdq
    // writes one) is the product [M, C] x [F, C]ᵀ: computed as that
    // contraction, which the CPU's GEMM kernels (dense, and 2:4 sparse
    // where kiln-sparsify marked it) take.
    int64_t m = at.getDimSize(0), c = at.getDimSize(1), f = wt.getDimSize(0);
    SmallVector<ReassociationIndices> flat = {{0}, {1, 2, 3}};
    Value a2 = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({m, c}, at.getElementType()), a, flat);
    Value w2 = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({f, c}, wt.getElementType()), w, flat);
    auto acc2Type = RankedTensorType::get({m, f}, b.getI32Type());
    Value zero =
        filled(b, loc, acc2Type, scalarConst(b, loc, b.getI32Type(), 0));
    AffineExpr dm = getAffineDimExpr(0, ctx), dk = getAffineDimExpr(1, ctx),
               dn = getAffineDimExpr(2, ctx);
    SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {dm, dk}, ctx),
                                   AffineMap::get(3, 0, {dn, dk}, ctx),
                                   AffineMap::get(3, 0, {dm, dn}, ctx)};
    SmallVector<utils::IteratorType> iters = {utils::IteratorType::parallel,
                                              utils::IteratorType::reduction,
                                              utils::IteratorType::parallel};
    auto product = linalg::GenericOp::create(
        b, loc, TypeRange{acc2Type}, ValueRange{a2, w2}, ValueRange{zero}, maps,
        iters, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Type i32 = nb.getI32Type();
          Value p = arith::MulIOp::create(
              nb, nl, arith::ExtSIOp::create(nb, nl, i32, args[0]),
              arith::ExtSIOp::create(nb, nl, i32, args[1]));
          linalg::YieldOp::create(
              nb, nl, ValueRange{arith::AddIOp::create(nb, nl, args[2], p)});
        });
    if (Attribute sparsity = op->getAttr("kiln.sparsity"))
      product->setAttr("kiln.sparsity", sparsity);
    return tensor::ExpandShapeOp::create(b, loc, accType,
                                         addOffsets(product.getResult(0)), flat)
        .getResult();
  }
  if (conv) {
    FailureOr<Value> acc =
        lowerConv(op, accType, a, w, offsetCst,
                  scalarConst(b, loc, at.getElementType(), za));
    return failed(acc) ? Value() : *acc;
  }
  return addOffsets(lowerMatMul(op, a, w, accType));
}

/// ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul: the operands
/// less their zero points, widened to i32, go through the same convolution
/// or matmul lowering as floats, accumulating in i32; the QLinear forms
/// then requantize with scale a_scale * b_scale / y_scale.
FailureOr<SmallVector<Value>> Lowering::lowerIntegerGemm(Operation *op,
                                                         RankedTensorType rt) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  bool conv = isa<ConvIntegerOp, QLinearConvOp>(op);
  bool qlinear = isa<QLinearConvOp, QLinearMatMulOp>(op);
  unsigned ai = 0, bi = qlinear ? 3 : 1, azi = 2, bzi = qlinear ? 5 : 3;
  // Whether ONNX input `i` is unsigned (the flags are per operand, and
  // absent optional inputs have no operand).
  auto flag = [&](unsigned i) {
    Value v = getOnnxInput(op, i);
    for (OpOperand &o : op->getOpOperands())
      if (v && o.get() == v)
        return uns[o.getOperandNumber()];
    return false;
  };
  Value a = getOnnxInput(op, ai), bm = getOnnxInput(op, bi);
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(bm.getType());
  // Per-slice zero points: A's per row (matmul), B's per column (matmul)
  // or per output channel (convolution weights).
  int64_t aAxis = conv ? 1 : std::max<int64_t>(at.getRank() - 2, 0);
  int64_t bAxis = conv ? 0 : bt.getRank() - 1;
  // A zero point is one value, one per slice along the axis, or (of the
  // operand's rank) broadcasts to it.
  for (auto [vi, zi, axis] :
       {std::tuple(ai, azi, aAxis), std::tuple(bi, bzi, bAxis)}) {
    Value zp = getOnnxInput(op, zi);
    if (!zp)
      continue;
    auto vt = cast<RankedTensorType>(getOnnxInput(op, vi).getType());
    auto zt = cast<RankedTensorType>(zp.getType());
    bool fits = zt.getNumElements() == 1 ||
                (zt.getRank() == 1 && zt.getDimSize(0) == vt.getDimSize(axis));
    if (zt.getRank() > 1 && zt.getRank() == vt.getRank()) {
      fits = true;
      for (int64_t d = 0; d < zt.getRank(); ++d)
        fits &= zt.getDimSize(d) == 1 || zt.getDimSize(d) == vt.getDimSize(d);
    }
    if (!fits)
      return op->emitOpError("zero point of type ")
                 << zt << " does not fit its operand of type " << vt,
             failure();
  }
  auto accType = RankedTensorType::get(rt.getShape(), b.getI32Type());
  Value acc;
  if (std::optional<Value> raw = rawIntegerGemm(op, flag)) {
    if (!*raw)
      return failure();
    acc = *raw;
  } else {
    Value ac =
        centered(loc, a, flag(ai), getOnnxInput(op, azi), flag(azi), aAxis);
    Value bc =
        centered(loc, bm, flag(bi), getOnnxInput(op, bzi), flag(bzi), bAxis);
    if (conv) {
      auto v = lowerConv(op, accType, ac, bc,
                         qlinear ? getOnnxInput(op, 8) : Value());
      if (failed(v))
        return failure();
      acc = *v;
    } else {
      acc = lowerMatMul(op, ac, bc, accType);
    }
  }
  if (!qlinear)
    return SmallVector<Value>{acc};

  Value as = getOnnxInput(op, 1), bs = getOnnxInput(op, 4),
        ys = getOnnxInput(op, 6), yz = getOnnxInput(op, 7);
  int64_t rank = rt.getRank();
  auto scaleMap = [&](Value v, int64_t axis) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getNumElements() == 1)
      return AffineMap::get(
          rank, 0,
          SmallVector<AffineExpr>(t.getRank(), getAffineConstantExpr(0, ctx)),
          ctx);
    return AffineMap::get(rank, 0, {getAffineDimExpr(axis, ctx)}, ctx);
  };
  SmallVector<Value> ins = {acc, as, bs, ys};
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank, ctx),
      scaleMap(as, conv ? 1 : std::max<int64_t>(rank - 2, 0)),
      scaleMap(bs, conv ? 1 : rank - 1), scaleMap(ys, 0)};
  if (yz) {
    ins.push_back(yz);
    maps.push_back(scaleMap(yz, 0));
  }
  Type ft = getElementTypeOrSelf(as.getType());
  Type elt = rt.getElementType();
  bool yzUns = flag(7), outUns = resUns;
  return SmallVector<Value>{elementwise(
      b, loc, rt, ins,
      [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
        Value scale = arith::DivFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, v[1], v[2]), v[3]);
        Value x = arith::MulFOp::create(nb, nl, convertScalar(nb, nl, v[0], ft),
                                        scale);
        Value zf =
            v.size() > 4 ? convertScalar(nb, nl, v[4], ft, yzUns) : Value();
        return quantizeScalar(nb, nl, x, zf, elt, outUns);
      },
      maps)};
}

/// Attention (opset 23/24), as ONNX's reference computes it: Q [B, Hq, Sq,
/// D], K [B, Hkv, Skv, D] and V [B, Hkv, Skv, Dv] (or 3-D [B, S, H * D]
/// with q_num_heads and kv_num_heads, split into heads first); past_key
/// and past_value prepended to K and V along the sequence (present_key and
/// present_value); scores = Q K^T * scale, one contraction over D, query
/// head h reading K/V head h / (Hq / Hkv); softcap; the bias (the mask,
/// added if float, -inf where false if bool; -inf above the causal
/// diagonal, offset by the past length or by nonpad_kv_seqlen - Sq; -inf
/// past each batch's nonpad_kv_seqlen) in one elementwise pass with the
/// scale and softcap; softmax over the keys (upstream's decomposition); the
/// product with V. f16 and bf16 multiply their Q and K (exact in f32) and
/// the probabilities rounded to their type with V, as tensor cores do,
/// accumulate in f32, and compute the softmax in f32; the output is
/// rounded once at the end.
FailureOr<SmallVector<Value>> Lowering::lowerAttention(AttentionOp op,
                                                       RankedTensorType rt) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  auto typeOf = [](Value v) {
    return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
  };
  auto qt = typeOf(op.getQ()), kt = typeOf(op.getK()), vt = typeOf(op.getV());
  if (!qt || !kt || !vt || qt.getRank() != kt.getRank() ||
      qt.getRank() != vt.getRank() || (qt.getRank() != 4 && qt.getRank() != 3))
    return op.emitOpError("needs Q, K and V all 4-D ([batch, heads, "
                          "sequence, head size]) or all 3-D"),
           failure();
  if (static_cast<int64_t>(op.getLeftWindowSize()) != -1 ||
      static_cast<int64_t>(op.getRightWindowSize()) != -1)
    return op.emitOpError("sliding-window attention is not lowered yet"),
           failure();
  if (static_cast<bool>(op.getPastKey()) !=
      static_cast<bool>(op.getPastValue()))
    return op.emitOpError("needs past_key and past_value together"), failure();
  Type elt = qt.getElementType();
  if (!isa<FloatType>(elt))
    return op.emitOpError("needs float Q, K and V"), failure();
  // Half types compute in f32.
  Type ct = elt.isF16() || elt.isBF16() ? Type(b.getF32Type()) : elt;
  auto convert = [&](Value v, Type to) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getElementType() == to)
      return v;
    return elementwise(b, loc, t.clone(to), ValueRange{v},
                       [&](OpBuilder &nb, Location nl, ValueRange a) {
                         return convertScalar(nb, nl, a[0], to);
                       });
  };
  auto permute = [&](Value v, ArrayRef<int64_t> perm) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(t.getDimSize(p));
    return linalg::TransposeOp::create(b, loc, v,
                                       emptyLike(b, loc, t.clone(shape)), perm)
        .getResult()[0];
  };
  // 3-D [B, S, H * D] as [B, H, S, D].
  auto heads = [&](Value v, int64_t h) -> Value {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() == 4)
      return v;
    Value split = reshapeTo(
        b, loc, v,
        t.clone({t.getDimSize(0), t.getDimSize(1), h, t.getDimSize(2) / h}));
    return permute(split, {0, 2, 1, 3});
  };
  int64_t qHeads = op.getQNumHeads().value_or(0);
  int64_t kvHeadsAttr = op.getKvNumHeads().value_or(0);
  if (qt.getRank() == 3 &&
      (qHeads <= 0 || kvHeadsAttr <= 0 || qt.getDimSize(2) % qHeads ||
       kt.getDimSize(2) % kvHeadsAttr || vt.getDimSize(2) % kvHeadsAttr))
    return op.emitOpError("needs q_num_heads and kv_num_heads for 3-D Q, K "
                          "and V, dividing their hidden sizes"),
           failure();
  // Half Q, K and V stay half: the products extend them (exactly) to f32.
  Value q = heads(op.getQ(), qHeads);
  Value k = heads(op.getK(), kvHeadsAttr);
  Value v = heads(op.getV(), kvHeadsAttr);
  // The cache: past ++ new along the sequence.
  int64_t past = 0;
  if (Value pastKey = op.getPastKey()) {
    auto pt = typeOf(pastKey), pvt = typeOf(op.getPastValue());
    auto k4 = cast<RankedTensorType>(k.getType());
    auto v4 = cast<RankedTensorType>(v.getType());
    if (!pt || !pvt || pt.getRank() != 4 || pvt.getRank() != 4 ||
        pt.getDimSize(2) != pvt.getDimSize(2))
      return op.emitOpError("needs 4-D past_key and past_value of one "
                            "length"),
             failure();
    past = pt.getDimSize(2);
    auto append = [&](Value before, Value after) -> Value {
      auto at = cast<RankedTensorType>(after.getType());
      SmallVector<int64_t> shape(at.getShape());
      shape[2] += past;
      return concatAlong(b, loc, {before, after}, 2, at.clone(shape));
    };
    if (pt.getDimSize(0) != k4.getDimSize(0) ||
        pt.getDimSize(1) != k4.getDimSize(1) ||
        pt.getDimSize(3) != k4.getDimSize(3) ||
        pvt.getDimSize(3) != v4.getDimSize(3))
      return op.emitOpError("needs past_key and past_value shaped like K and "
                            "V but for the sequence"),
             failure();
    k = append(pastKey, k);
    v = append(op.getPastValue(), v);
  }
  Value presentKey = k, presentValue = v;
  auto q4 = cast<RankedTensorType>(q.getType());
  auto k4 = cast<RankedTensorType>(k.getType());
  auto v4 = cast<RankedTensorType>(v.getType());
  int64_t batch = q4.getDimSize(0), nHeads = q4.getDimSize(1);
  int64_t sq = q4.getDimSize(2), d = q4.getDimSize(3);
  int64_t kvHeads = k4.getDimSize(1), skv = k4.getDimSize(2);
  int64_t dv = v4.getDimSize(3);
  if (kvHeads <= 0 || nHeads % kvHeads != 0 || v4.getDimSize(1) != kvHeads ||
      v4.getDimSize(2) != skv || k4.getDimSize(3) != d ||
      k4.getDimSize(0) != batch || v4.getDimSize(0) != batch)
    return op.emitOpError("needs K and V of one head count that divides "
                          "Q's, one sequence length, and K's head size "
                          "equal to Q's"),
           failure();
  int64_t group = nHeads / kvHeads;
  double scale = op.getScale() ? op.getScale()->convertToDouble()
                               : 1.0 / std::sqrt(static_cast<double>(d));
  float softcap = op.getSoftcap().convertToFloat();
  bool causal = op.getIsCausal() != 0;
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  using IT = utils::IteratorType;
  SmallVector<IT> iters = {IT::parallel, IT::parallel, IT::parallel,
                           IT::parallel, IT::reduction};
  Value zero = scalarConst(b, loc, ct, 0);
  auto mulAdd = [&](OpBuilder &nb, Location nl, ValueRange a) {
    auto wide = [&](Value x) {
      return x.getType() == ct ? x : convertScalar(nb, nl, x, ct);
    };
    linalg::YieldOp::create(
        nb, nl,
        arith::AddFOp::create(
            nb, nl, a[2], arith::MulFOp::create(nb, nl, wide(a[0]), wide(a[1])))
            .getResult());
  };
  // A per-head product over loops (b, h, i, n, r): lhs[b, h, i, r] times
  // the K/V operand at [b, h / group, ...], its last two indices `kvInner`.
  AffineExpr kvHead = group == 1 ? dim(1) : dim(1).floorDiv(group);
  auto headProduct = [&](Value lhs, Value kvOperand,
                         ArrayRef<AffineExpr> kvInner, int64_t n) -> Value {
    auto t = RankedTensorType::get({batch, nHeads, sq, n}, ct);
    return linalg::GenericOp::create(
               b, loc, TypeRange{t}, ValueRange{lhs, kvOperand},
               ValueRange{filled(b, loc, t, zero)},
               {AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(4)}, ctx),
                AffineMap::get(5, 0, {dim(0), kvHead, kvInner[0], kvInner[1]},
                               ctx),
                AffineMap::get(5, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)},
               iters, mulAdd)
        .getResult(0);
  };
  // scores[b, h, i, j] = sum_k Q[b, h, i, k] * K[b, h / group, j, k].
  auto st = RankedTensorType::get({batch, nHeads, sq, skv}, ct);
  Value scores = headProduct(q, k, {dim(3), dim(4)}, skv);
  auto capped = [&](OpBuilder &nb, Location nl, Value s) -> Value {
    s = arith::MulFOp::create(nb, nl, s, scalarConst(nb, nl, ct, scale));
    if (softcap <= 0)
      return s;
    // Before the bias, so that -inf stays -inf.
    Value cap = scalarConst(nb, nl, ct, softcap);
    return arith::MulFOp::create(
        nb, nl, cap,
        math::TanhOp::create(nb, nl,
                             arith::DivFOp::create(nb, nl, s, cap).getResult())
            .getResult());
  };
  Value mask = op.getAttnMask();
  bool boolMask =
      mask && cast<ShapedType>(mask.getType()).getElementType().isInteger(1);
  Value nonpad = op.getNonpadKvSeqlen();
  SmallVector<Value> ins = {scores};
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(4, ctx)};
  if (mask) {
    auto mt = typeOf(mask);
    if (mt && mt.getRank() >= 1 && mt.getDimSize(mt.getRank() - 1) > 1 &&
        mt.getDimSize(mt.getRank() - 1) < skv) {
      // A mask shorter than the keys covers the first ones; the rest are
      // masked out.
      SmallVector<int64_t> low(mt.getRank(), 0), high(mt.getRank(), 0);
      high.back() = skv - mt.getDimSize(mt.getRank() - 1);
      Value fill = boolMask
                       ? arith::ConstantIntOp::create(b, loc, 0, 1).getResult()
                       : scalarConst(b, loc, mt.getElementType(),
                                     -std::numeric_limits<double>::infinity());
      mask = padTensor(b, loc, mask, low, high, fill);
      mt = typeOf(mask);
    }
    if (!mt || mt.getRank() > 4 ||
        !llvm::all_of(llvm::seq<int64_t>(0, mt.getRank()), [&](int64_t i) {
          int64_t m = mt.getDimSize(i), s = st.getDimSize(4 - mt.getRank() + i);
          return m == 1 || m == s;
        }))
      return op.emitOpError("needs an attn_mask that broadcasts to [batch, "
                            "heads, q sequence, kv sequence]"),
             failure();
    if (!boolMask && mt.getElementType() != elt)
      return op.emitOpError("needs a bool attn_mask or one of Q's type"),
             failure();
    ins.push_back(mask);
    maps.push_back(broadcastMap(mt, st));
  }
  if (nonpad) {
    auto nt = typeOf(nonpad);
    if (!nt || nt.getRank() != 1 || nt.getDimSize(0) != batch ||
        !nt.getElementType().isInteger(64))
      return op.emitOpError("needs an int64 nonpad_kv_seqlen of [batch]"),
             failure();
    ins.push_back(nonpad);
    maps.push_back(AffineMap::get(4, 0, {dim(0)}, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
  Value biased =
      linalg::GenericOp::create(
          b, loc, TypeRange{st}, ins, ValueRange{emptyLike(b, loc, st)}, maps,
          SmallVector<IT>(4, IT::parallel),
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value negInf = scalarConst(
                nb, nl, ct, -std::numeric_limits<double>::infinity());
            Value s = capped(nb, nl, a[0]);
            unsigned next = 1;
            if (mask) {
              Value m = a[next++];
              if (boolMask)
                s = arith::SelectOp::create(nb, nl, m, s, negInf);
              else
                s = arith::AddFOp::create(nb, nl, s,
                                          convertScalar(nb, nl, m, ct));
            }
            Value i = linalg::IndexOp::create(nb, nl, 2);
            Value j = linalg::IndexOp::create(nb, nl, 3);
            auto keep = [&](Value ok) {
              s = arith::SelectOp::create(nb, nl, ok, s, negInf);
            };
            auto idx = [&](Value v) {
              return arith::IndexCastOp::create(nb, nl, nb.getIndexType(), v)
                  .getResult();
            };
            auto cst = [&](int64_t c) {
              return arith::ConstantIndexOp::create(nb, nl, c).getResult();
            };
            Value valid = nonpad ? idx(a[next]) : Value();
            if (valid) // Keys past the batch's valid length.
              keep(arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, j,
                                         valid));
            if (causal) {
              // Key j is seen from query i when j <= i + offset: the past
              // length, or the valid length less Sq with nonpad_kv_seqlen.
              Value offset = cst(past);
              if (valid && !past)
                offset = arith::SubIOp::create(nb, nl, valid, cst(sq));
              Value limit = arith::AddIOp::create(nb, nl, i, offset);
              keep(arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sle, j,
                                         limit));
            }
            linalg::YieldOp::create(nb, nl, s);
          })
          .getResult(0);
  auto sm = linalg::SoftmaxOp::create(b, loc, TypeRange{st}, biased,
                                      emptyLike(b, loc, st), 3);
  auto parts = cast<linalg::AggregatedOpInterface>(sm.getOperation())
                   .decomposeOperation(b);
  if (failed(parts))
    return op.emitOpError("softmax decomposition failed"), failure();
  Value probs = (*parts)[0];
  b.eraseOp(sm);
  if (op->hasAttr(kZeroNaNRowsAttrName)) {
    // Set by kiln-fuse-layers for SDPA's guard: a row the mask hides
    // whole (NaN probabilities) gives zeros.
    probs =
        elementwise(b, loc, st, ValueRange{probs},
                    [&](OpBuilder &nb, Location nl, ValueRange a) {
                      Value nan = arith::CmpFOp::create(
                          nb, nl, arith::CmpFPredicate::UNO, a[0], a[0]);
                      return arith::SelectOp::create(
                                 nb, nl, nan, scalarConst(nb, nl, ct, 0), a[0])
                          .getResult();
                    });
  }
  // Y[b, h, i, e] = sum_j P[b, h, i, j] * V[b, h / group, j, e], with P
  // rounded to V's type when that is half (flash attention's choice: both
  // operands of the product on tensor cores).
  Value y =
      headProduct(convert(probs, v4.getElementType()), v, {dim(4), dim(3)}, dv);
  y = convert(y, elt);
  if (qt.getRank() == 3)
    y = reshapeTo(b, loc, permute(y, {0, 2, 1, 3}), rt);
  SmallVector<Value> results = {y};
  if (op.getPresentKey())
    results.push_back(presentKey);
  if (op.getPresentValue())
    results.push_back(presentValue);
  if (Value qk = op.getQkMatmulOutput()) {
    // 0 and 1: the scaled (and capped) scores; 2: with the bias; 3: the
    // probabilities.
    int64_t mode = op.getQkMatmulOutputMode();
    Value out = mode == 3 ? probs : mode == 2 ? biased : Value();
    if (!out)
      out = elementwise(b, loc, st, ValueRange{scores},
                        [&](OpBuilder &nb, Location nl, ValueRange a) {
                          return capped(nb, nl, a[0]);
                        });
    results.push_back(
        convert(out, cast<ShapedType>(qk.getType()).getElementType()));
  }
  return results;
}

/// MaxPool, AveragePool (and LpPool's sum); `indices`, for MaxPool, also
/// receives the flat NCHW index of each window's first maximum.
/// |v|^p, what LpPool, GlobalLpPool and LpNormalization sum (p = 1 and 2
/// without a call to pow).
static Value lpPower(OpBuilder &b, Location loc, Value v, int64_t p) {
  if (p == 2)
    return arith::MulFOp::create(b, loc, v, v);
  Value a = math::AbsFOp::create(b, loc, v);
  if (p == 1)
    return a;
  return math::PowFOp::create(b, loc, a, scalarConst(b, loc, v.getType(), p));
}

/// s^(1/p): the p-norm of the values whose powers sum to s.
static Value lpRoot(OpBuilder &b, Location loc, Value s, int64_t p) {
  if (p == 1)
    return s;
  if (p == 2)
    return math::SqrtOp::create(b, loc, s);
  return math::PowFOp::create(b, loc, s,
                              scalarConst(b, loc, s.getType(), 1.0 / p));
}

FailureOr<Value> Lowering::lowerRotaryEmbedding(RotaryEmbeddingOp op,
                                                RankedTensorType rt) {
  // One generic over the output: each element of the rotated part reads
  // its partner (the other half, or the other of its pair when
  // interleaved) and the cos/sin cache entry of its position and pair;
  // the rest of the head is copied.
  Location loc = op.getLoc();
  Value x = op.getX(), cosCache = op.getCosCache(), sinCache = op.getSinCache();
  Value posIds = getOnnxInput(op, 3);
  int64_t rank = rt.getRank();
  if (rank != 3 && rank != 4)
    return op.emitOpError("input must be 3-D or 4-D, not ") << rank << "-D",
           failure();
  if (!isFloat(rt.getElementType()))
    return op.emitOpError("input must be floating point"), failure();
  // 4-D: (batch, heads, seq, head); 3-D: (batch, seq, heads * head).
  int64_t head = rt.getDimSize(rank - 1);
  if (rank == 3) {
    int64_t heads = op.getNumHeads().value_or(0);
    if (heads <= 0 || head % heads)
      return op.emitOpError("a 3-D input needs num_heads dividing its hidden "
                            "size ")
                 << head,
             failure();
    head /= heads;
  }
  int64_t rot = op.getRotaryEmbeddingDim();
  if (rot == 0)
    rot = head;
  if (rot < 2 || rot > head || rot % 2)
    return op.emitOpError("rotary_embedding_dim ")
               << rot << " must be even and at most the head size " << head,
           failure();
  int64_t half = rot / 2;
  auto cacheType = cast<RankedTensorType>(cosCache.getType());
  if (cacheType.getDimSize(cacheType.getRank() - 1) != half ||
      cacheType != sinCache.getType() ||
      cacheType.getRank() != (posIds ? 2 : 3))
    return op.emitOpError("cos and sin caches must be ")
               << (posIds ? "[positions, " : "[batch, sequence, ") << half
               << "] (half the rotated dims)",
           failure();
  bool interleaved = op.getInterleaved() != 0;
  Type elt = rt.getElementType();
  MLIRContext *ctx = b.getContext();
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{rt}, ValueRange{},
             ValueRange{emptyLike(b, loc, rt)},
             {AffineMap::getMultiDimIdentityMap(rank, ctx)}, iters,
             [&](OpBuilder &nb, Location nl, ValueRange) {
               auto ic = [&](int64_t v) -> Value {
                 return arith::ConstantIndexOp::create(nb, nl, v);
               };
               auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) {
                 return arith::CmpIOp::create(nb, nl, p, l, r).getResult();
               };
               SmallVector<Value> idx;
               for (int64_t d = 0; d < rank; ++d)
                 idx.push_back(linalg::IndexOp::create(nb, nl, d));
               Value last = idx.back();
               // d: the position inside the head.
               Value d = rank == 4
                             ? last
                             : arith::RemUIOp::create(nb, nl, last, ic(head))
                                   .getResult();
               Value inRot = cmp(arith::CmpIPredicate::ult, d, ic(rot));
               Value first, j, partner;
               if (interleaved) {
                 first = cmp(arith::CmpIPredicate::eq,
                             arith::RemUIOp::create(nb, nl, d, ic(2)), ic(0));
                 j = arith::DivUIOp::create(nb, nl, d, ic(2));
                 partner = arith::SelectOp::create(
                     nb, nl, first, arith::AddIOp::create(nb, nl, d, ic(1)),
                     arith::SubIOp::create(nb, nl, d, ic(1)));
               } else {
                 first = cmp(arith::CmpIPredicate::ult, d, ic(half));
                 j = arith::SelectOp::create(
                     nb, nl, first, d,
                     arith::SubIOp::create(nb, nl, d, ic(half)));
                 partner = arith::SelectOp::create(
                     nb, nl, first, arith::AddIOp::create(nb, nl, d, ic(half)),
                     arith::SubIOp::create(nb, nl, d, ic(half)));
               }
               // Outside the rotated dims nothing is read but x itself.
               j = arith::SelectOp::create(nb, nl, inRot, j, ic(0));
               partner = arith::SelectOp::create(nb, nl, inRot, partner, d);
               SmallVector<Value> pIdx(idx);
               pIdx.back() = arith::AddIOp::create(
                   nb, nl, arith::SubIOp::create(nb, nl, last, d), partner);
               Value xv = tensor::ExtractOp::create(nb, nl, x, idx);
               Value pv = tensor::ExtractOp::create(nb, nl, x, pIdx);
               Value batch = idx[0], seq = rank == 4 ? idx[2] : idx[1];
               SmallVector<Value> cIdx;
               if (posIds) {
                 // Clamped into the cache: a position past it must not
                 // read past it.
                 Value pos = arith::IndexCastOp::create(
                     nb, nl, nb.getIndexType(),
                     tensor::ExtractOp::create(nb, nl, posIds,
                                               ValueRange{batch, seq}));
                 pos = arith::MaxSIOp::create(nb, nl, pos, ic(0));
                 pos = arith::MinSIOp::create(nb, nl, pos,
                                              ic(cacheType.getDimSize(0) - 1));
                 cIdx = {pos, j};
               } else {
                 cIdx = {batch, seq, j};
               }
               Value c = tensor::ExtractOp::create(nb, nl, cosCache, cIdx);
               Value s = tensor::ExtractOp::create(nb, nl, sinCache, cIdx);
               c = convertScalar(nb, nl, c, elt);
               s = convertScalar(nb, nl, s, elt);
               // first: x cos - partner sin; second: x cos + partner sin.
               Value xc = arith::MulFOp::create(nb, nl, xv, c);
               Value ps = arith::MulFOp::create(nb, nl, pv, s);
               Value minus = arith::SubFOp::create(nb, nl, xc, ps);
               Value plus = arith::AddFOp::create(nb, nl, xc, ps);
               Value r = arith::SelectOp::create(nb, nl, first, minus, plus);
               linalg::YieldOp::create(
                   nb, nl,
                   ValueRange{arith::SelectOp::create(nb, nl, inRot, r, xv)});
             })
      .getResult(0);
}

FailureOr<Value> Lowering::lowerPool(Operation *op, RankedTensorType rt,
                                     Value *indices) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t n = xt.getRank() - 2;
  if (n < 1)
    return op->emitOpError("needs at least one spatial dim"), failure();
  bool isMax = isa<MaxPoolOp>(op);
  bool storageColumns = isMax && intAttr(op, "storage_order", 0) != 0;
  // LpPool: the p-norm of each window, the padding zeros adding nothing.
  bool isLp = isa<LpPoolOp>(op);
  int64_t p = intAttr(op, "p", 2);
  if (isLp && p < 1)
    return op->emitOpError("p must be at least 1, not ") << p, failure();
  auto kernel = intsAttr(op, "kernel_shape", {});
  auto strides = intsAttr(op, "strides", SmallVector<int64_t>(n, 1));
  auto dil = intsAttr(op, "dilations", SmallVector<int64_t>(n, 1));
  auto pads = windowPads(op, xt, kernel, strides, dil);
  Type elt = rt.getElementType();
  // Explicit pads, then whatever ceil_mode needs at the end so that every
  // output window lies inside the padded input.
  SmallVector<int64_t> low(2, 0), high(2, 0), extra(2, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t need =
        (rt.getDimSize(i + 2) - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1;
    int64_t have = xt.getDimSize(i + 2) + pads[i] + pads[i + n];
    low.push_back(pads[i]);
    high.push_back(pads[i + n]);
    extra.push_back(std::max<int64_t>(0, need - have));
  }
  SmallVector<int64_t> zeros(xt.getRank(), 0);
  Value padValue = isMax ? extremum(b, loc, elt, /*lowest=*/true, resUns)
                         : scalarConst(b, loc, elt, 0);
  if (isLp)
    x = elementwise(b, loc, RankedTensorType::get(xt.getShape(), elt),
                    ValueRange{x},
                    [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                      return lpPower(nb, nl, a[0], p);
                    });
  Value xp = padTensor(b, loc, padTensor(b, loc, x, low, high, padValue), zeros,
                       extra, padValue);
  // Loops (n, c, o..., k...), the window dims reducing; the window's
  // extents come from an operand of its shape whose values are not read.
  Value window = tensor::EmptyOp::create(b, loc, kernel, elt);
  MLIRContext *ctx = b.getContext();
  unsigned nd = 2 + 2 * n;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> inExprs = {d(0), d(1)}, winExprs,
                          outExprs = {d(0), d(1)};
  for (int64_t i = 0; i < n; ++i) {
    AffineExpr o = d(2 + i), k = d(2 + n + i);
    inExprs.push_back(o * strides[i] + k * dil[i]);
    winExprs.push_back(k);
    outExprs.push_back(o);
  }
  SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
  for (unsigned i = 2 + n; i < nd; ++i)
    iters[i] = utils::IteratorType::reduction;
  bool f = isFloat(elt);
  auto pool = [&](Value in, Value init) -> Value {
    return linalg::GenericOp::create(
               b, loc, TypeRange{rt}, ValueRange{in, window}, ValueRange{init},
               {AffineMap::get(nd, 0, inExprs, ctx),
                AffineMap::get(nd, 0, winExprs, ctx),
                AffineMap::get(nd, 0, outExprs, ctx)},
               iters,
               [&](OpBuilder &nb, Location nl, ValueRange a) {
                 Value r;
                 if (isMax)
                   r = f ? arith::MaximumFOp::create(nb, nl, a[0], a[2])
                               .getResult()
                       : resUns ? arith::MaxUIOp::create(nb, nl, a[0], a[2])
                                      .getResult()
                                : arith::MaxSIOp::create(nb, nl, a[0], a[2])
                                      .getResult();
                 else
                   r = arith::AddFOp::create(nb, nl, a[0], a[2]);
                 linalg::YieldOp::create(nb, nl, ValueRange{r});
               })
        .getResult(0);
  };
  Value init = filled(b, loc, rt, padValue);
  if (indices) {
    // One generic with two results: the maximum, and the index of the
    // first element that reached it, in the unpadded input flattened in
    // row-major order (storage_order 1: the spatial dims column-major).
    auto idxType = cast<RankedTensorType>(op->getResult(1).getType());
    Value idxInit = filled(b, loc, idxType,
                           scalarConst(b, loc, idxType.getElementType(), 0));
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{rt, idxType}, ValueRange{xp, window},
        ValueRange{init, idxInit},
        {AffineMap::get(nd, 0, inExprs, ctx),
         AffineMap::get(nd, 0, winExprs, ctx),
         AffineMap::get(nd, 0, outExprs, ctx),
         AffineMap::get(nd, 0, outExprs, ctx)},
        iters, [&](OpBuilder &nb, Location nl, ValueRange a) {
          auto ic = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(nb, nl, v);
          };
          // The coordinates of this element in the unpadded input.
          SmallVector<Value> coord = {linalg::IndexOp::create(nb, nl, 0),
                                      linalg::IndexOp::create(nb, nl, 1)};
          for (int64_t i = 0; i < n; ++i) {
            Value o = linalg::IndexOp::create(nb, nl, 2 + i);
            Value k = linalg::IndexOp::create(nb, nl, 2 + n + i);
            Value pos = arith::AddIOp::create(
                nb, nl, arith::MulIOp::create(nb, nl, o, ic(strides[i])),
                arith::MulIOp::create(nb, nl, k, ic(dil[i])));
            coord.push_back(arith::SubIOp::create(nb, nl, pos, ic(low[2 + i])));
          }
          SmallVector<int64_t> order;
          for (int64_t dd = 0; dd < 2; ++dd)
            order.push_back(dd);
          for (int64_t i = 0; i < n; ++i)
            order.push_back(storageColumns ? 2 + n - 1 - i : 2 + i);
          Value flat = ic(0);
          for (int64_t dd : order)
            flat = arith::AddIOp::create(
                nb, nl,
                arith::MulIOp::create(nb, nl, flat, ic(xt.getDimSize(dd))),
                coord[dd]);
          Value better =
              f ? arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT, a[0],
                                        a[2])
                      .getResult()
                : arith::CmpIOp::create(nb, nl,
                                        resUns ? arith::CmpIPredicate::ugt
                                               : arith::CmpIPredicate::sgt,
                                        a[0], a[2])
                      .getResult();
          // The first window element also initializes the index (the
          // value accumulator starts at the lowest value, which an
          // all-lowest window never beats).
          Value take = better;
          Value first = scalarConst(nb, nl, nb.getI1Type(), 1);
          for (int64_t i = 0; i < n; ++i)
            first = arith::AndIOp::create(
                nb, nl, first,
                arith::CmpIOp::create(
                    nb, nl, arith::CmpIPredicate::eq,
                    linalg::IndexOp::create(nb, nl, 2 + n + i), ic(0)));
          take = arith::OrIOp::create(nb, nl, take, first);
          Value idx = arith::IndexCastOp::create(nb, nl, a[3].getType(), flat);
          linalg::YieldOp::create(
              nb, nl,
              ValueRange{arith::SelectOp::create(nb, nl, take, a[0], a[2]),
                         arith::SelectOp::create(nb, nl, take, idx, a[3])});
        });
    *indices = generic.getResult(1);
    return generic.getResult(0);
  }
  Value result = pool(xp, init);
  if (isMax)
    return result;
  if (isLp)
    return elementwise(b, loc, rt, ValueRange{result},
                       [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                         return lpRoot(nb, nl, a[0], p);
                       });
  // Average: divide by the number of counted elements of each window,
  // computed by pooling ones over the same padding (count_include_pad
  // counts the explicit pads, never the ceil_mode extension).
  bool includePad = intAttr(op, "count_include_pad", 0) != 0;
  auto onesType = RankedTensorType::get(xt.getShape(), elt);
  Value ones = filled(b, loc, onesType, scalarConst(b, loc, elt, 1));
  Value onesP =
      padTensor(b, loc,
                padTensor(b, loc, ones, low, high,
                          scalarConst(b, loc, elt, includePad ? 1 : 0)),
                zeros, extra, scalarConst(b, loc, elt, 0));
  Value count = pool(onesP, filled(b, loc, rt, scalarConst(b, loc, elt, 0)));
  return elementwise(b, loc, rt, ValueRange{result, count},
                     [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                       return arith::DivFOp::create(nb, nl, a[0], a[1]);
                     });
}

FailureOr<SmallVector<Value>> Lowering::lowerOp(Operation *op) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  auto rt = op->getNumResults()
                ? cast<RankedTensorType>(op->getResult(0).getType())
                : RankedTensorType();
  Type elt = rt ? rt.getElementType() : Type();
  auto one = [](Value v) { return SmallVector<Value>{v}; };

  if (auto cst = dyn_cast<ConstantOp>(op)) {
    // Unsigned data keeps its bytes under the signless type.
    auto value = cast<TypedAttr>(cst.getValue());
    if (value.getType() != rt) {
      if (auto dense = dyn_cast<DenseElementsAttr>(value))
        value = dense.bitcast(rt.getElementType());
      else if (auto res = dyn_cast<DenseResourceElementsAttr>(value))
        value = DenseResourceElementsAttr::get(cast<ShapedType>(rt),
                                               res.getRawHandle());
      else
        return op->emitOpError("constant of type ")
                   << value.getType() << " is not lowered",
               failure();
    }
    return one(arith::ConstantOp::create(b, loc, value));
  }
  if (isa<IdentityOp>(op))
    return one(op->getOperand(0));
  if (isa<DropoutOp>(op)) {
    Value x = op->getOperand(0), ratio = getOnnxInput(op, 1),
          training = getOnnxInput(op, 2);
    auto constTraining = training ? getConstantInts(training) : std::nullopt;
    bool inference =
        !training ||
        (constTraining &&
         llvm::all_of(*constTraining, [](int64_t v) { return v == 0; }));
    RankedTensorType maskType =
        op->getNumResults() > 1
            ? cast<RankedTensorType>(op->getResult(1).getType())
            : RankedTensorType();
    if (inference) {
      // The data passes through and the mask keeps everything.
      SmallVector<Value> results = {x};
      if (maskType)
        results.push_back(
            filled(b, loc, maskType, scalarConst(b, loc, b.getI1Type(), 1)));
      return results;
    }
    // Training (decided at run time when `training` is an input): each
    // element is kept when a uniform number from a counter-based hash of
    // (seed, element index) is at least the ratio, and scaled by
    // 1 / (1 - ratio).
    int64_t rank = rt.getRank();
    uint32_t seed = static_cast<uint32_t>(intAttr(op, "seed", 0));
    AffineMap none = AffineMap::get(rank, 0, {}, ctx);
    SmallVector<Value> ins = {x};
    SmallVector<AffineMap> maps = {
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    Type ft = elt;
    if (ratio) {
      ins.push_back(ratio);
      maps.push_back(none);
      ft = getElementTypeOrSelf(ratio.getType());
    }
    ins.push_back(training);
    maps.push_back(none);
    SmallVector<Type> resultTypes = {rt};
    SmallVector<Value> outs = {emptyLike(b, loc, rt)};
    if (maskType) {
      resultTypes.push_back(maskType);
      outs.push_back(emptyLike(b, loc, maskType));
    }
    for (size_t i = 0; i < outs.size(); ++i)
      maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
    auto generic = linalg::GenericOp::create(
        b, loc, resultTypes, ins, outs, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Type i32 = nb.getI32Type();
          auto c32 = [&](uint32_t v) {
            return arith::ConstantOp::create(
                nb, nl, nb.getIntegerAttr(i32, static_cast<int32_t>(v)));
          };
          // The row-major index of the element.
          Value flat = arith::ConstantIndexOp::create(nb, nl, 0);
          for (int64_t d = 0; d < rank; ++d)
            flat = arith::AddIOp::create(
                nb, nl,
                arith::MulIOp::create(
                    nb, nl, flat,
                    arith::ConstantIndexOp::create(nb, nl, rt.getDimSize(d))),
                linalg::IndexOp::create(nb, nl, d));
          // The murmur3 finalizer of index ^ seed: 24 uniform bits.
          Value h = arith::XOrIOp::create(
              nb, nl, arith::IndexCastOp::create(nb, nl, i32, flat), c32(seed));
          auto mix = [&](Value v, uint32_t shift, uint32_t mul) -> Value {
            v = arith::XOrIOp::create(
                nb, nl, v, arith::ShRUIOp::create(nb, nl, v, c32(shift)));
            return mul ? arith::MulIOp::create(nb, nl, v, c32(mul)).getResult()
                       : v;
          };
          h = mix(mix(mix(h, 16, 0x85ebca6bu), 13, 0xc2b2ae35u), 16, 0);
          Value bits = arith::ShRUIOp::create(nb, nl, h, c32(8));
          Value u = arith::MulFOp::create(
              nb, nl, arith::UIToFPOp::create(nb, nl, ft, bits),
              scalarConst(nb, nl, ft, 1.0 / (1 << 24)));
          Value r = ratio ? a[1] : scalarConst(nb, nl, ft, 0.5);
          Value t = a[ratio ? 2 : 1];
          Value keep = arith::OrIOp::create(
              nb, nl,
              arith::XOrIOp::create(nb, nl, t,
                                    scalarConst(nb, nl, nb.getI1Type(), 1)),
              arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE, u, r));
          Value one = scalarConst(nb, nl, ft, 1);
          Value scale = arith::SelectOp::create(
              nb, nl, t,
              arith::DivFOp::create(nb, nl, one,
                                    arith::SubFOp::create(nb, nl, one, r)),
              one);
          Value y = arith::MulFOp::create(nb, nl, a[0],
                                          convertScalar(nb, nl, scale, elt));
          y = arith::SelectOp::create(nb, nl, keep, y,
                                      scalarConst(nb, nl, elt, 0));
          SmallVector<Value> yields = {y};
          if (maskType)
            yields.push_back(keep);
          linalg::YieldOp::create(nb, nl, yields);
        });
    return SmallVector<Value>(generic.getResults());
  }

  // Elementwise ops with a scalar body, broadcasting their operands.
  Type bodyElt =
      op->getNumOperands() ? getElementTypeOrSelf(op->getOperand(0)) : elt;
  if (auto fn = scalarBody(op, bodyElt, uns)) {
    if (bodyElt != elt)
      return op->emitOpError("mixed element types are not lowered"), failure();
    return one(elementwise(b, loc, rt, op->getOperands(), fn));
  }
  if (isa<EqualOp, LessOp, GreaterOp, LessOrEqualOp, GreaterOrEqualOp>(op)) {
    bool f = isFloat(op->getOperand(0).getType());
    arith::CmpFPredicate fp;
    arith::CmpIPredicate ip;
    if (isa<EqualOp>(op))
      fp = arith::CmpFPredicate::OEQ, ip = arith::CmpIPredicate::eq;
    else if (isa<LessOp>(op))
      fp = arith::CmpFPredicate::OLT,
      ip = uns[0] ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
    else if (isa<GreaterOp>(op))
      fp = arith::CmpFPredicate::OGT,
      ip = uns[0] ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
    else if (isa<LessOrEqualOp>(op))
      fp = arith::CmpFPredicate::OLE,
      ip = uns[0] ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
    else
      fp = arith::CmpFPredicate::OGE,
      ip = uns[0] ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
    return one(elementwise(
        b, loc, rt, op->getOperands(),
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return f ? arith::CmpFOp::create(nb, nl, fp, a[0], a[1]).getResult()
                   : arith::CmpIOp::create(nb, nl, ip, a[0], a[1]).getResult();
        }));
  }
  // Logical ops on bools, bitwise ops on integers (Not: every bit).
  if (isa<AndOp, OrOp, XorOp, NotOp, BitwiseAndOp, BitwiseOrOp, BitwiseXorOp,
          BitwiseNotOp>(op)) {
    return one(
        elementwise(b, loc, rt, op->getOperands(),
                    [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                      if (isa<AndOp, BitwiseAndOp>(op))
                        return arith::AndIOp::create(nb, nl, a[0], a[1]);
                      if (isa<OrOp, BitwiseOrOp>(op))
                        return arith::OrIOp::create(nb, nl, a[0], a[1]);
                      if (isa<XorOp, BitwiseXorOp>(op))
                        return arith::XOrIOp::create(nb, nl, a[0], a[1]);
                      Type t = a[0].getType();
                      Value ones = arith::ConstantOp::create(
                          nb, nl,
                          nb.getIntegerAttr(
                              t, APInt::getAllOnes(t.getIntOrFloatBitWidth())));
                      return arith::XOrIOp::create(nb, nl, a[0], ones);
                    }));
  }
  if (isa<QuantizeLinearOp, DequantizeLinearOp>(op)) {
    // y = saturate(round_half_even(x / scale) + zero_point), or
    // y = (x - zero_point) * scale; scale and zero point are per tensor,
    // per slice along `axis`, or (block_size > 0) per block of block_size
    // elements along `axis`: of x's rank, the axis dim ceil(n / block).
    bool quant = isa<QuantizeLinearOp>(op);
    Value x = getOnnxInput(op, 0), scale = getOnnxInput(op, 1),
          zp = getOnnxInput(op, 2);
    int64_t blockSize = intAttr(op, "block_size", 0);
    // To float8: y = saturate(x / scale + zero_point), rounded to the
    // nearest float8 (`saturate` as Cast's).
    bool toFloat4 = quant && isa<Float4E2M1FNType>(elt);
    bool toFloat8 = quant && (isFloat8(elt) || toFloat4);
    if (quant && !isa<IntegerType>(elt) && !toFloat8)
      return op->emitOpError("quantizing to ") << elt << " is not lowered yet",
             failure();
    bool saturate = intAttr(op, "saturate", 1) != 0;
    int64_t rank = rt.getRank();
    int64_t axis = intAttr(op, "axis", 1);
    if (axis < 0)
      axis += rank;
    if (blockSize < 0 || (blockSize > 0 && (axis < 0 || axis >= rank)))
      return op->emitOpError("block_size ")
                 << blockSize << " along axis " << intAttr(op, "axis", 1)
                 << " of a rank-" << rank << " tensor",
             failure();
    for (Value v : {scale, zp}) {
      if (!v || blockSize == 0)
        continue;
      auto t = cast<RankedTensorType>(v.getType());
      bool ok = t.getRank() == rank;
      for (int64_t d = 0; ok && d < rank; ++d)
        ok = t.getDimSize(d) ==
             (d == axis ? llvm::divideCeil(rt.getDimSize(d), blockSize)
                        : rt.getDimSize(d));
      if (!ok)
        return op->emitOpError("with block_size ")
                   << blockSize << " along axis " << axis
                   << " needs a scale and zero point of the input's shape "
                      "but ceil(n / block_size) along the axis, not "
                   << t,
               failure();
    }
    auto paramMap = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      if (blockSize > 0) {
        SmallVector<AffineExpr> e;
        for (int64_t d = 0; d < rank; ++d)
          e.push_back(d == axis ? getAffineDimExpr(d, ctx).floorDiv(blockSize)
                                : getAffineDimExpr(d, ctx));
        return AffineMap::get(rank, 0, e, ctx);
      }
      if (t.getRank() == 0 || t.getNumElements() == 1)
        return AffineMap::get(
            rank, 0,
            SmallVector<AffineExpr>(t.getRank(), getAffineConstantExpr(0, ctx)),
            ctx);
      return AffineMap::get(rank, 0, {getAffineDimExpr(axis, ctx)}, ctx);
    };
    SmallVector<Value> ins = {x, scale};
    SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                   paramMap(scale)};
    if (zp) {
      ins.push_back(zp);
      maps.push_back(paramMap(zp));
    }
    Type ft = getElementTypeOrSelf(scale.getType());
    bool xUns = uns[0], zpUns = uns.size() > 2 && uns[2];
    bool outUns = resUns;
    return one(elementwise(
        b, loc, rt, ins,
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value xf = convertScalar(nb, nl, a[0], ft, xUns);
          Value zf =
              a.size() > 2 ? convertScalar(nb, nl, a[2], ft, zpUns) : Value();
          if (!quant) {
            if (zf)
              xf = arith::SubFOp::create(nb, nl, xf, zf);
            return arith::MulFOp::create(nb, nl, xf, a[1]);
          }
          Value q = arith::DivFOp::create(nb, nl, xf, a[1]);
          if (toFloat8) {
            if (zf)
              q = arith::AddFOp::create(nb, nl, q, zf);
            if (toFloat4)
              q = nanToFloat4(nb, nl, q);
            else if (saturate)
              q = saturateToFloat8(nb, nl, q, elt);
            return convertScalar(nb, nl, q, elt);
          }
          return quantizeScalar(nb, nl, q, zf, elt, outUns);
        },
        maps));
  }
  if (isa<WhereOp>(op))
    return one(
        elementwise(b, loc, rt, op->getOperands(),
                    [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                      return arith::SelectOp::create(nb, nl, a[0], a[1], a[2]);
                    }));
  if (isa<CastOp, CastLikeOp>(op)) {
    // To a float8 type with `saturate` (the default): magnitudes past the
    // largest finite value (infinities too) clamp to it first; NaN stays.
    bool fromFloat = isa<FloatType>(getElementTypeOrSelf(op->getOperand(0)));
    bool clamp = isFloat8(elt) && fromFloat && intAttr(op, "saturate", 1) != 0;
    bool toFloat4 = isa<Float4E2M1FNType>(elt) && fromFloat;
    return one(elementwise(b, loc, rt, ValueRange{op->getOperand(0)},
                           [&](OpBuilder &nb, Location nl, ValueRange a) {
                             Value v = a[0];
                             if (clamp)
                               v = saturateToFloat8(nb, nl, v, elt);
                             if (toFloat4)
                               v = nanToFloat4(nb, nl, v);
                             return convertScalar(nb, nl, v, elt, uns[0],
                                                  resUns);
                           }));
  }
  if (isa<BitCastOp>(op)) {
    // The same bits as another type of their width (ONNX's bool is a
    // byte: 0 or 1).
    auto xt = cast<RankedTensorType>(op->getOperand(0).getType());
    Type from = xt.getElementType();
    auto width = [](Type t) {
      return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth();
    };
    if (!from.isIntOrFloat() || !elt.isIntOrFloat() ||
        width(from) != width(elt) || xt.getShape() != rt.getShape())
      return op->emitOpError("needs a result of the input's shape and of a "
                             "type of its width, not ")
                 << xt << " -> " << rt,
             failure();
    return one(elementwise(
        b, loc, rt, ValueRange{op->getOperand(0)},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          if (from == elt)
            return a[0];
          if (from.isInteger(1))
            return arith::ExtUIOp::create(nb, nl, elt, a[0]);
          Value v = a[0];
          if (elt.isInteger(1)) {
            if (!from.isInteger(8))
              v = arith::BitcastOp::create(nb, nl, nb.getI8Type(), v);
            return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne, v,
                                         scalarConst(nb, nl, v.getType(), 0));
          }
          return arith::BitcastOp::create(nb, nl, elt, v);
        }));
  }
  if (isa<ClipOp>(op)) {
    Value lo = getOnnxInput(op, 1), hi = getOnnxInput(op, 2);
    SmallVector<Value> ins = {op->getOperand(0)};
    if (lo)
      ins.push_back(lo);
    if (hi)
      ins.push_back(hi);
    bool f = isFloat(elt);
    return one(elementwise(
        b, loc, rt, ins,
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value r = a[0];
          unsigned i = 1;
          if (lo)
            r = f ? arith::MaximumFOp::create(nb, nl, r, a[i++]).getResult()
                  : arith::MaxSIOp::create(nb, nl, r, a[i++]).getResult();
          if (hi)
            r = f ? arith::MinimumFOp::create(nb, nl, r, a[i]).getResult()
                  : arith::MinSIOp::create(nb, nl, r, a[i]).getResult();
          return r;
        }));
  }
  if (auto bn = dyn_cast<BatchNormalizationOp>(op);
      bn && bn.getTrainingMode()) {
    // Normalize with the batch's statistics over every dim but the
    // channel (population variance); the running mean and variance
    // outputs are input * momentum + batch statistic * (1 - momentum).
    float eps = bn.getEpsilon().convertToFloat();
    float momentum = bn.getMomentum().convertToFloat();
    Value x = op->getOperand(0);
    int64_t rank = rt.getRank();
    SmallVector<bool> reduced(rank, true);
    reduced[1] = false;
    int64_t count = rt.getNumElements() / rt.getDimSize(1);
    auto chanType = RankedTensorType::get({rt.getDimSize(1)}, elt);
    Value zero = scalarConst(b, loc, elt, 0);
    Value cnt = scalarConst(b, loc, elt, count);
    auto add = [](OpBuilder &nb, Location nl, Value v, Value acc) -> Value {
      return arith::AddFOp::create(nb, nl, v, acc);
    };
    Value mean = elementwise(
        b, loc, chanType,
        ValueRange{reduceDims(b, loc, x, reduced, chanType, zero, add)},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return arith::DivFOp::create(nb, nl, a[0], cnt);
        });
    AffineMap ident = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap chan = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    Value dev =
        elementwise(b, loc, rt, ValueRange{x, mean},
                    [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                      Value d = arith::SubFOp::create(nb, nl, a[0], a[1]);
                      return arith::MulFOp::create(nb, nl, d, d);
                    },
                    {ident, chan});
    Value var = elementwise(
        b, loc, chanType,
        ValueRange{reduceDims(b, loc, dev, reduced, chanType, zero, add)},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return arith::DivFOp::create(nb, nl, a[0], cnt);
        });
    SmallVector<Value> results = {normalizeChannels(
        b, loc, rt,
        ValueRange{x, op->getOperand(1), op->getOperand(2), mean, var}, eps)};
    SmallVector<Value> stats = {mean, var};
    for (auto [i, stat] : llvm::enumerate(stats)) {
      if (op->getNumResults() <= i + 1)
        break;
      auto st = cast<RankedTensorType>(op->getResult(i + 1).getType());
      results.push_back(elementwise(
          b, loc, st, ValueRange{op->getOperand(3 + i), stat},
          [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return arith::AddFOp::create(
                nb, nl,
                arith::MulFOp::create(nb, nl, a[0],
                                      scalarConst(nb, nl, elt, momentum)),
                arith::MulFOp::create(nb, nl, a[1],
                                      scalarConst(nb, nl, elt, 1 - momentum)));
          }));
    }
    return results;
  }
  if (auto bn = dyn_cast<BatchNormalizationOp>(op)) {
    float eps = bn.getEpsilon().convertToFloat();
    return one(normalizeChannels(b, loc, rt, op->getOperands(), eps));
  }
  if (isa<ConvIntegerOp, MatMulIntegerOp, QLinearConvOp, QLinearMatMulOp>(op))
    return lowerIntegerGemm(op, rt);
  if (isa<DynamicQuantizeLinearOp>(op)) {
    // scale = (max(0, max x) - min(0, min x)) / 255, zero point =
    // saturate(round(-min / scale)), y = saturate(round(x / scale) + zp),
    // all unsigned 8-bit.
    Value x = op->getOperand(0);
    auto xt = cast<RankedTensorType>(x.getType());
    Type ft = xt.getElementType();
    auto scalarType = RankedTensorType::get({}, ft);
    SmallVector<bool> all(xt.getRank(), true);
    auto extreme = [&](bool isMax) {
      return reduceDims(
          b, loc, x, all, scalarType, scalarConst(b, loc, ft, 0),
          [&](OpBuilder &nb, Location nl, Value v, Value acc) {
            return isMax
                       ? arith::MaximumFOp::create(nb, nl, v, acc).getResult()
                       : arith::MinimumFOp::create(nb, nl, v, acc).getResult();
          });
    };
    Value hi = extreme(true), lo = extreme(false);
    Value scale =
        elementwise(b, loc, scalarType, ValueRange{hi, lo},
                    [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                      return arith::DivFOp::create(
                          nb, nl, arith::SubFOp::create(nb, nl, a[0], a[1]),
                          scalarConst(nb, nl, ft, 255));
                    });
    auto zpType = cast<RankedTensorType>(op->getResult(2).getType());
    Value zp =
        elementwise(b, loc, zpType, ValueRange{lo, scale},
                    [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                      Value neg = arith::NegFOp::create(nb, nl, a[0]);
                      return quantizeScalar(
                          nb, nl, arith::DivFOp::create(nb, nl, neg, a[1]),
                          Value(), zpType.getElementType(), true);
                    });
    Value y =
        elementwise(b, loc, rt, ValueRange{x, scale, zp},
                    [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                      return quantizeScalar(
                          nb, nl, arith::DivFOp::create(nb, nl, a[0], a[1]),
                          convertScalar(nb, nl, a[2], ft, true), elt, true);
                    });
    return SmallVector<Value>{y, scale, zp};
  }
  // Half-precision contractions accumulate in float32 (as tensor cores
  // do) and round once at the end.
  RankedTensorType acc = accumulatorType(rt);
  if (isa<MatMulOp>(op))
    return one(narrowTo(
        b, loc, lowerMatMul(op, op->getOperand(0), op->getOperand(1), acc),
        rt));
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    Value a = gemm.getA(), bm = gemm.getB();
    auto transposed = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      auto tt = RankedTensorType::get({t.getDimSize(1), t.getDimSize(0)},
                                      t.getElementType());
      Value init = emptyLike(b, loc, tt);
      return linalg::TransposeOp::create(b, loc, v, init,
                                         ArrayRef<int64_t>{1, 0})
          .getResult()[0];
    };
    if (gemm.getTransA())
      a = transposed(a);
    if (gemm.getTransB())
      bm = transposed(bm);
    Value y = lowerMatMul(op, a, bm, acc);
    float alpha = gemm.getAlpha().convertToFloat();
    float beta = gemm.getBeta().convertToFloat();
    Value c = gemm.getC();
    Type elt = acc.getElementType();
    if (alpha != 1.0f || (c && beta != 0.0f)) {
      SmallVector<Value> ins = {y};
      if (c && beta != 0.0f)
        ins.push_back(widenTo(b, loc, c, elt));
      y = elementwise(b, loc, acc, ins,
                      [&](OpBuilder &nb, Location nl, ValueRange v) -> Value {
                        Value r = v[0];
                        if (alpha != 1.0f)
                          r = arith::MulFOp::create(
                              nb, nl, r, scalarConst(nb, nl, elt, alpha));
                        if (v.size() > 1) {
                          Value cv = v[1];
                          if (beta != 1.0f)
                            cv = arith::MulFOp::create(
                                nb, nl, cv, scalarConst(nb, nl, elt, beta));
                          r = arith::AddFOp::create(nb, nl, r, cv);
                        }
                        return r;
                      });
    }
    return one(narrowTo(b, loc, y, rt));
  }
  if (isa<ConvOp>(op)) {
    Value bias = getOnnxInput(op, 2);
    auto v =
        lowerConv(op, acc, getOnnxInput(op, 0), getOnnxInput(op, 1),
                  bias ? widenTo(b, loc, bias, acc.getElementType()) : bias);
    if (failed(v))
      return failure();
    return one(narrowTo(b, loc, *v, rt));
  }
  if (isa<MaxPoolOp>(op) && op->getNumResults() > 1) {
    Value indices;
    auto v = lowerPool(op, rt, &indices);
    if (failed(v))
      return failure();
    return SmallVector<Value>{*v, indices};
  }
  if (isa<MaxPoolOp, AveragePoolOp, LpPoolOp>(op)) {
    auto v = lowerPool(op, rt);
    if (failed(v))
      return failure();
    return one(*v);
  }
  if (auto ln = dyn_cast<LpNormalizationOp>(op)) {
    // x divided by its p-norm along the axis (p 1 or 2, as ONNX allows),
    // 0 where the norm is 0 (as ONNX's reference has it, not 0/0).
    auto xt = cast<RankedTensorType>(ln.getInput().getType());
    int64_t rank = xt.getRank(), p = ln.getP();
    if (p != 1 && p != 2)
      return op->emitOpError("p must be 1 or 2, not ") << p, failure();
    FailureOr<int64_t> normAxis = normalizeAxis(op, ln.getAxis(), rank);
    if (failed(normAxis))
      return failure();
    int64_t axis = *normAxis;
    SmallVector<bool> reduced(rank, false);
    reduced[axis] = true;
    SmallVector<int64_t> keptShape;
    SmallVector<AffineExpr> keptExprs;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis) {
        keptShape.push_back(xt.getDimSize(d));
        keptExprs.push_back(getAffineDimExpr(d, ctx));
      }
    auto kept = RankedTensorType::get(keptShape, elt);
    Value sum = reduceDims(
        b, loc, ln.getInput(), reduced, kept, scalarConst(b, loc, elt, 0),
        [&](OpBuilder &nb, Location nl, Value v, Value acc) -> Value {
          return arith::AddFOp::create(nb, nl, lpPower(nb, nl, v, p), acc);
        });
    return one(
        elementwise(b, loc, rt, ValueRange{ln.getInput(), sum},
                    [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                      Value zero = scalarConst(nb, nl, elt, 0);
                      Value q = arith::DivFOp::create(nb, nl, a[0],
                                                      lpRoot(nb, nl, a[1], p));
                      Value isZero = arith::CmpFOp::create(
                          nb, nl, arith::CmpFPredicate::OEQ, a[1], zero);
                      return arith::SelectOp::create(nb, nl, isZero, zero, q);
                    },
                    {AffineMap::getMultiDimIdentityMap(rank, ctx),
                     AffineMap::get(rank, 0, keptExprs, ctx)}));
  }
  if (isa<GlobalAveragePoolOp, GlobalMaxPoolOp, GlobalLpPoolOp>(op)) {
    // One value per image and channel over all spatial dims: their mean,
    // their maximum, or their p-norm.
    Value x = op->getOperand(0);
    auto xt = cast<RankedTensorType>(x.getType());
    bool isMax = isa<GlobalMaxPoolOp>(op);
    auto lp = dyn_cast<GlobalLpPoolOp>(op);
    int64_t p = lp ? lp.getP() : 1;
    if (p < 1)
      return op->emitOpError("p must be at least 1, not ") << p, failure();
    SmallVector<bool> reduced(xt.getRank(), true);
    reduced[0] = reduced[1] = false;
    auto kept =
        RankedTensorType::get({xt.getDimSize(0), xt.getDimSize(1)}, elt);
    Value r = reduceDims(
        b, loc, x, reduced, kept,
        isMax ? extremum(b, loc, elt, true) : scalarConst(b, loc, elt, 0),
        [&](OpBuilder &nb, Location nl, Value v, Value acc) -> Value {
          if (isMax)
            return arith::MaximumFOp::create(nb, nl, v, acc);
          if (lp)
            v = lpPower(nb, nl, v, p);
          return arith::AddFOp::create(nb, nl, v, acc);
        });
    if (!isMax) {
      int64_t count = 1;
      for (int64_t d = 2; d < xt.getRank(); ++d)
        count *= xt.getDimSize(d);
      r = elementwise(b, loc, kept, ValueRange{r},
                      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        if (lp)
                          return lpRoot(nb, nl, a[0], p);
                        return arith::DivFOp::create(
                            nb, nl, a[0], scalarConst(nb, nl, elt, count));
                      });
    }
    return one(reshapeTo(b, loc, r, rt));
  }
  if (isa<ReduceMeanOp, ReduceSumOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
          ReduceL1Op, ReduceL2Op, ReduceSumSquareOp, ReduceLogSumOp,
          ReduceLogSumExpOp>(op)) {
    Value x = op->getOperand(0);
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t rank = xt.getRank();
    std::optional<SmallVector<int64_t>> axes = SmallVector<int64_t>();
    if (Value a = getOnnxInput(op, 1))
      axes = getConstantInts(a);
    SmallVector<bool> constReduced(rank, axes && axes->empty());
    SmallVector<SmallVector<bool>> candidates;
    if (!axes) {
      // Axes known only at run time: the static result shape tells which
      // dims are reduced (kept as 1, or dropped); where several sets fit,
      // the run-time axes pick one of them.
      candidates = reducedDimsFromShapes(xt, rt);
      if (candidates.empty())
        return op->emitOpError("result shape fits no set of reduced dims"),
               failure();
    } else {
      if (axes->empty() && intAttr(op, "noop_with_empty_axes", 0))
        return one(x);
      for (int64_t a : *axes)
        constReduced[a < 0 ? a + rank : a] = true;
      candidates.push_back(constReduced);
    }
    bool f = isFloat(elt);
    if (!f && !isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp>(op))
      return op->emitOpError("integer form is not lowered"), failure();
    // The reduction over the dims flagged in `reduced`, shaped as the result.
    auto reduceOver = [&](ArrayRef<bool> reduced) -> Value {
      SmallVector<int64_t> keptShape;
      int64_t count = 1;
      for (int64_t d = 0; d < rank; ++d) {
        if (reduced[d])
          count *= xt.getDimSize(d);
        else
          keptShape.push_back(xt.getDimSize(d));
      }
      auto kept = RankedTensorType::get(keptShape, elt);
      bool isMax = isa<ReduceMaxOp>(op), isMin = isa<ReduceMinOp>(op),
           isProd = isa<ReduceProdOp>(op);
      // Booleans (ReduceMax/Min-18 take them) order false < true: as i1
      // they compare unsigned.
      bool boolean = elt.isInteger(1);
      Value init = isMax   ? extremum(b, loc, elt, true, boolean)
                   : isMin ? extremum(b, loc, elt, false, boolean)
                           : scalarConst(b, loc, elt, isProd ? 1 : 0);
      Value r = reduceDims(
          b, loc, x, reduced, kept, init,
          [&](OpBuilder &nb, Location nl, Value v, Value acc) -> Value {
            if (isMax)
              return f ? arith::MaximumFOp::create(nb, nl, v, acc).getResult()
                     : boolean
                         ? arith::MaxUIOp::create(nb, nl, v, acc).getResult()
                         : arith::MaxSIOp::create(nb, nl, v, acc).getResult();
            if (isMin)
              return f ? arith::MinimumFOp::create(nb, nl, v, acc).getResult()
                     : boolean
                         ? arith::MinUIOp::create(nb, nl, v, acc).getResult()
                         : arith::MinSIOp::create(nb, nl, v, acc).getResult();
            if (isProd)
              return f ? arith::MulFOp::create(nb, nl, v, acc).getResult()
                       : arith::MulIOp::create(nb, nl, v, acc).getResult();
            return f ? arith::AddFOp::create(nb, nl, v, acc).getResult()
                     : arith::AddIOp::create(nb, nl, v, acc).getResult();
          },
          [&](OpBuilder &nb, Location nl, Value v) -> Value {
            if (isa<ReduceL1Op>(op))
              return math::AbsFOp::create(nb, nl, v);
            if (isa<ReduceL2Op, ReduceSumSquareOp>(op))
              return arith::MulFOp::create(nb, nl, v, v);
            if (isa<ReduceLogSumExpOp>(op))
              return math::ExpOp::create(nb, nl, v);
            return v;
          });
      if (isa<ReduceMeanOp, ReduceL2Op, ReduceLogSumOp, ReduceLogSumExpOp>(op))
        r = elementwise(b, loc, kept, ValueRange{r},
                        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                          if (isa<ReduceMeanOp>(op))
                            return arith::DivFOp::create(
                                nb, nl, a[0], scalarConst(nb, nl, elt, count));
                          if (isa<ReduceL2Op>(op))
                            return math::SqrtOp::create(nb, nl, a[0]);
                          return math::LogOp::create(nb, nl, a[0]);
                        });
      return reshapeTo(b, loc, r, rt);
    };
    if (candidates.size() == 1)
      return one(reduceOver(candidates[0]));
    // Several sets fit: a bit mask of the run-time axes selects the case.
    Value axesV = getOnnxInput(op, 1);
    int64_t nAxes = cast<RankedTensorType>(axesV.getType()).getNumElements();
    Value mask = arith::ConstantIntOp::create(b, loc, 0, 64);
    for (int64_t i = 0; i < nAxes; ++i) {
      Value v = tensor::ExtractOp::create(
          b, loc, axesV, ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
      v = convertScalar(b, loc, v, b.getI64Type());
      Value neg =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v,
                                arith::ConstantIntOp::create(b, loc, 0, 64));
      v = arith::SelectOp::create(
          b, loc, neg,
          arith::AddIOp::create(b, loc, v,
                                arith::ConstantIntOp::create(b, loc, rank, 64)),
          v);
      mask = arith::OrIOp::create(
          b, loc, mask,
          arith::ShLIOp::create(
              b, loc, arith::ConstantIntOp::create(b, loc, 1, 64), v));
    }
    Value which = arith::ConstantIndexOp::create(b, loc, 0);
    SmallVector<int64_t> cases;
    for (auto [k, cand] : llvm::enumerate(candidates)) {
      int64_t bits = 0;
      for (int64_t d = 0; d < rank; ++d)
        if (cand[d])
          bits |= int64_t(1) << d;
      Value hit =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, mask,
                                arith::ConstantIntOp::create(b, loc, bits, 64));
      which = arith::SelectOp::create(
          b, loc, hit, arith::ConstantIndexOp::create(b, loc, k), which);
      if (k)
        cases.push_back(k);
    }
    auto sw = scf::IndexSwitchOp::create(b, loc, TypeRange{rt}, which, cases,
                                         cases.size());
    OpBuilder::InsertionGuard guard(b);
    for (auto [k, cand] : llvm::enumerate(candidates)) {
      Region &region =
          k == 0 ? sw.getDefaultRegion() : sw.getCaseRegions()[k - 1];
      b.setInsertionPointToStart(&region.emplaceBlock());
      scf::YieldOp::create(b, loc, reduceOver(cand));
    }
    return one(sw.getResult(0));
  }
  if (auto att = dyn_cast<AttentionOp>(op))
    return lowerAttention(att, rt);
  if (isa<SoftmaxOp, LogSoftmaxOp>(op)) {
    Value x = op->getOperand(0);
    int64_t axis = intAttr(op, "axis", -1);
    if (axis < 0)
      axis += rt.getRank();
    auto sm = linalg::SoftmaxOp::create(b, loc, TypeRange{rt}, x,
                                        emptyLike(b, loc, rt), axis);
    auto parts = cast<linalg::AggregatedOpInterface>(sm.getOperation())
                     .decomposeOperation(b);
    if (failed(parts))
      return op->emitOpError("softmax decomposition failed"), failure();
    Value y = (*parts)[0];
    b.eraseOp(sm);
    if (isa<LogSoftmaxOp>(op))
      y = elementwise(b, loc, rt, ValueRange{y},
                      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        return math::LogOp::create(nb, nl, a[0]);
                      });
    return one(y);
  }
  if (isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op))
    return one(reshapeTo(b, loc, op->getOperand(0), rt));
  if (auto tr = dyn_cast<TransposeOp>(op)) {
    SmallVector<int64_t> perm;
    if (auto p = tr.getPerm())
      perm.assign(p->begin(), p->end());
    else
      for (int64_t i = rt.getRank() - 1; i >= 0; --i)
        perm.push_back(i);
    return one(linalg::TransposeOp::create(b, loc, tr.getData(),
                                           emptyLike(b, loc, rt), perm)
                   .getResult()[0]);
  }
  if (auto concat = dyn_cast<ConcatOp>(op)) {
    int64_t axis = concat.getAxis();
    if (axis < 0)
      axis += rt.getRank();
    return one(concatAlong(b, loc, concat.getInputs(), axis, rt));
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    auto xt = cast<RankedTensorType>(slice.getData().getType());
    auto starts = getConstantInts(slice.getStarts());
    std::optional<SmallVector<int64_t>> axes, steps;
    if (slice.getAxes())
      axes = getConstantInts(slice.getAxes());
    if (slice.getSteps())
      steps = getConstantInts(slice.getSteps());
    int64_t rank = xt.getRank();
    if (!starts || (slice.getAxes() && !axes) || (slice.getSteps() && !steps) ||
        (steps && llvm::any_of(*steps, [](int64_t v) { return v <= 0; })))
      return one(runtimeSlice(loc, slice.getData(), slice.getStarts(),
                              slice.getAxes(), slice.getSteps(), rt));
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
        strides(rank, b.getIndexAttr(1));
    for (int64_t d : rt.getShape())
      sizes.push_back(b.getIndexAttr(d));
    for (size_t i = 0; i < starts->size(); ++i) {
      int64_t a = axes ? (*axes)[i] : (int64_t)i;
      if (a < 0)
        a += rank;
      int64_t step = steps ? (*steps)[i] : 1;
      int64_t dim = xt.getDimSize(a), s = (*starts)[i];
      if (s < 0)
        s += dim;
      s = std::clamp<int64_t>(s, 0, dim);
      offsets[a] = b.getIndexAttr(s);
      strides[a] = b.getIndexAttr(step);
    }
    return one(tensor::ExtractSliceOp::create(b, loc, rt, slice.getData(),
                                              offsets, sizes, strides));
  }
  if (auto split = dyn_cast<SplitOp>(op)) {
    auto xt = cast<RankedTensorType>(split.getInput().getType());
    int64_t axis = split.getAxis();
    if (axis < 0)
      axis += xt.getRank();
    SmallVector<Value> outs;
    int64_t offset = 0;
    for (Value r : op->getResults()) {
      auto t = cast<RankedTensorType>(r.getType());
      SmallVector<OpFoldResult> offsets(xt.getRank(), b.getIndexAttr(0)), sizes,
          strides(xt.getRank(), b.getIndexAttr(1));
      offsets[axis] = b.getIndexAttr(offset);
      for (int64_t d : t.getShape())
        sizes.push_back(b.getIndexAttr(d));
      outs.push_back(t.getNumElements() == 0 ? emptyLike(b, loc, t)
                                             : tensor::ExtractSliceOp::create(
                                                   b, loc, t, split.getInput(),
                                                   offsets, sizes, strides)
                                                   .getResult());
      offset += t.getDimSize(axis);
    }
    return outs;
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    Value data = gather.getData(), idx = gather.getIndices();
    auto dt = cast<RankedTensorType>(data.getType());
    auto it = cast<RankedTensorType>(idx.getType());
    int64_t axis = gather.getAxis();
    if (axis < 0)
      axis += dt.getRank();
    int64_t rank = rt.getRank(), q = it.getRank();
    SmallVector<AffineExpr> idxExprs;
    for (int64_t d = 0; d < q; ++d)
      idxExprs.push_back(getAffineDimExpr(axis + d, ctx));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, idxExprs, ctx),
        AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    int64_t extent = dt.getDimSize(axis);
    return one(linalg::GenericOp::create(
                   b, loc, TypeRange{rt}, ValueRange{idx},
                   ValueRange{emptyLike(b, loc, rt)}, maps, iters,
                   [&](OpBuilder &nb, Location nl, ValueRange args) {
                     Value i = wrapIndex(nb, nl, args[0], extent);
                     SmallVector<Value> coords;
                     for (int64_t d = 0; d < axis; ++d)
                       coords.push_back(linalg::IndexOp::create(nb, nl, d));
                     coords.push_back(i);
                     for (int64_t d = axis + 1; d < dt.getRank(); ++d)
                       coords.push_back(
                           linalg::IndexOp::create(nb, nl, d - 1 + q));
                     Value v = tensor::ExtractOp::create(nb, nl, data, coords);
                     linalg::YieldOp::create(nb, nl, v);
                   })
                   .getResult(0));
  }
  if (isa<ExpandOp>(op))
    return one(elementwise(
        b, loc, rt, ValueRange{op->getOperand(0)},
        [](OpBuilder &, Location, ValueRange a) -> Value { return a[0]; }));
  if (isa<ShapeOp, SizeOp, ConstantOfShapeOp, RangeOp>(op)) {
    // Static shapes make these constants; canonicalize folds most before
    // lowering, the rest are materialized here.
    if (isa<ShapeOp>(op)) {
      auto xt = cast<RankedTensorType>(op->getOperand(0).getType());
      int64_t rank = xt.getRank();
      auto clampAxis = [&](int64_t a) {
        return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank);
      };
      int64_t start = clampAxis(intAttr(op, "start", 0));
      int64_t end = clampAxis(intAttr(op, "end", rank));
      SmallVector<int64_t> dims;
      for (int64_t i = start; i < end; ++i)
        dims.push_back(xt.getDimSize(i));
      return one(arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(rt, ArrayRef<int64_t>(dims))));
    }
    if (isa<SizeOp>(op))
      return one(arith::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(
              rt, cast<RankedTensorType>(op->getOperand(0).getType())
                      .getNumElements())));
    if (auto cos = dyn_cast<ConstantOfShapeOp>(op)) {
      Attribute v = cos.getValue() ? *cos.getValue() : Attribute();
      Value scalar;
      if (auto dense = dyn_cast_or_null<DenseElementsAttr>(v))
        scalar = arith::ConstantOp::create(
            b, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
      else
        scalar = scalarConst(b, loc, elt, 0);
      return one(filled(b, loc, rt, scalar));
    }
    // Range with operands known at run time (its length is static):
    // start + i * delta.
    auto scalarOf = [&](Value v) {
      return tensor::ExtractOp::create(b, loc, v, ValueRange{}).getResult();
    };
    Value start = scalarOf(op->getOperand(0)),
          delta = scalarOf(op->getOperand(2));
    return one(elementwise(
        b, loc, rt, ValueRange{},
        [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
          Value i = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, 0));
          Value step = convertScalar(nb, nl, i, elt);
          return binaryBody<arith::AddFOp, arith::AddIOp>(isFloat(elt))(
              nb, nl,
              ValueRange{start,
                         binaryBody<arith::MulFOp, arith::MulIOp>(isFloat(elt))(
                             nb, nl, ValueRange{step, delta})});
        }));
  }
  if (auto pad = dyn_cast<PadOp>(op)) {
    StringRef mode = pad.getMode();
    if (mode != "constant" && mode != "reflect" && mode != "edge" &&
        mode != "wrap")
      return op->emitOpError("pad mode '") << mode << "' is not lowered yet",
             failure();
    auto pads = getConstantInts(pad.getPads());
    int64_t rank = rt.getRank();
    bool staticPads = pads && !pad.getAxes() &&
                      llvm::none_of(*pads, [](int64_t p) { return p < 0; });
    Value padValue = scalarConst(b, loc, elt, 0);
    if (Value cv = pad.getConstantValue())
      padValue = tensor::ExtractOp::create(
          b, loc, cv,
          SmallVector<Value>(cast<RankedTensorType>(cv.getType()).getRank(),
                             arith::ConstantIndexOp::create(b, loc, 0)));
    if (mode != "constant" || !staticPads) {
      // Each output index maps back into the input: mirrored (reflect),
      // clamped (edge), wrapped around (wrap), or outside it (constant).
      // Pads (and axes) known only at run time are read here.
      Value data = pad.getData();
      auto dt = cast<RankedTensorType>(data.getType());
      SmallVector<Value> lows =
          perDimValues(loc, pad.getPads(), pad.getAxes(), rank, 0, 0);
      return one(elementwise(
          b, loc, rt, ValueRange{},
          [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
            SmallVector<Value> coords;
            auto ic = [&](int64_t v) -> Value {
              return arith::ConstantIndexOp::create(nb, nl, v);
            };
            Value inside = scalarConst(nb, nl, nb.getI1Type(), 1);
            for (int64_t d = 0; d < rank; ++d) {
              int64_t in = dt.getDimSize(d);
              Value i = arith::SubIOp::create(
                  nb, nl, linalg::IndexOp::create(nb, nl, d), lows[d]);
              Value zero = ic(0), last = ic(in - 1);
              Value neg = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::slt, i, zero);
              Value over = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::sgt, i, last);
              Value clamped = arith::SelectOp::create(
                  nb, nl, neg, zero,
                  arith::SelectOp::create(nb, nl, over, last, i));
              Value r;
              if (mode == "edge" || mode == "constant") {
                r = clamped;
                inside = arith::AndIOp::create(
                    nb, nl, inside,
                    arith::XOrIOp::create(
                        nb, nl, arith::OrIOp::create(nb, nl, neg, over),
                        scalarConst(nb, nl, nb.getI1Type(), 1)));
              } else if (mode == "reflect") {
                // -i before the start, 2(in-1) - i past the end (pads are
                // smaller than the extent, as ONNX requires).
                r = arith::SelectOp::create(
                    nb, nl, neg, arith::SubIOp::create(nb, nl, zero, i),
                    arith::SelectOp::create(
                        nb, nl, over,
                        arith::SubIOp::create(nb, nl, ic(2 * (in - 1)), i), i));
              } else { // wrap
                Value m = arith::RemSIOp::create(nb, nl, i, ic(in));
                Value mneg = arith::CmpIOp::create(
                    nb, nl, arith::CmpIPredicate::slt, m, zero);
                r = arith::SelectOp::create(
                    nb, nl, mneg, arith::AddIOp::create(nb, nl, m, ic(in)), m);
              }
              coords.push_back(r);
            }
            Value v = tensor::ExtractOp::create(nb, nl, data, coords);
            if (mode != "constant")
              return v;
            return arith::SelectOp::create(nb, nl, inside, v, padValue);
          }));
    }
    SmallVector<int64_t> low(pads->begin(), pads->begin() + rank),
        high(pads->begin() + rank, pads->end());
    return one(padTensor(b, loc, pad.getData(), low, high, padValue));
  }

  if (isa<IsNaNOp, IsInfOp>(op)) {
    bool nan = isa<IsNaNOp>(op);
    bool detectPos = intAttr(op, "detect_positive", 1) != 0;
    bool detectNeg = intAttr(op, "detect_negative", 1) != 0;
    auto xt = cast<RankedTensorType>(op->getOperand(0).getType());
    Type xe = xt.getElementType();
    return one(elementwise(
        b, loc, rt, op->getOperands(),
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          if (nan)
            return arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO,
                                         a[0], a[0]);
          auto ft = cast<FloatType>(xe);
          Value inf = arith::ConstantOp::create(
              nb, nl,
              nb.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics())));
          Value ninf = arith::ConstantOp::create(
              nb, nl,
              nb.getFloatAttr(ft,
                              APFloat::getInf(ft.getFloatSemantics(), true)));
          Value r = scalarConst(nb, nl, nb.getI1Type(), 0);
          if (detectPos)
            r = arith::OrIOp::create(
                nb, nl, r,
                arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, a[0],
                                      inf));
          if (detectNeg)
            r = arith::OrIOp::create(
                nb, nl, r,
                arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, a[0],
                                      ninf));
          return r;
        }));
  }
  if (isa<LayerNormalizationOp, InstanceNormalizationOp, RMSNormalizationOp,
          GroupNormalizationOp>(op)) {
    // RMSNormalization is LayerNormalization without the centering and the
    // bias: X / sqrt(mean(X^2) + epsilon) * scale. GroupNormalization is
    // InstanceNormalization of X seen as [N, G, C / G, ...], its scale and
    // bias per channel (opset 21) or per group (opset 18).
    bool layer = isa<LayerNormalizationOp>(op);
    bool rms = isa<RMSNormalizationOp>(op);
    bool group = isa<GroupNormalizationOp>(op);
    Value x = op->getOperand(0);
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t groups = 0, perGroup = 0;
    if (group) {
      groups = intAttr(op, "num_groups", 0);
      int64_t c = xt.getRank() >= 2 ? xt.getDimSize(1) : 0;
      if (groups <= 0 || c % groups != 0)
        return op->emitOpError("needs num_groups (")
                   << groups << ") to divide the channels (" << c << ")",
               failure();
      perGroup = c / groups;
      int64_t params =
          cast<RankedTensorType>(op->getOperand(1).getType()).getNumElements();
      if (params != c && params != groups)
        return op->emitOpError("needs a scale and bias per channel (")
                   << c << ") or per group (" << groups << "), not " << params,
               failure();
      SmallVector<int64_t> shape = {xt.getDimSize(0), groups, perGroup};
      SmallVector<ReassociationIndices> assoc = {{0}, {1, 2}};
      for (int64_t d = 2; d < xt.getRank(); ++d) {
        shape.push_back(xt.getDimSize(d));
        assoc.push_back({d + 1});
      }
      xt = RankedTensorType::get(shape, xt.getElementType());
      x = tensor::ExpandShapeOp::create(b, loc, xt, x, assoc);
    }
    int64_t rank = xt.getRank();
    int64_t axis = layer || rms ? intAttr(op, "axis", -1) : 2;
    if (axis < 0)
      axis += rank;
    float eps = floatAttr(op, "epsilon", 1e-5f);
    if (!isFloat(elt) || axis < 0 || axis >= rank)
      return op->emitOpError("needs a float input and an axis within its "
                             "rank"),
             failure();
    // Instance norm reduces the spatial dims of each (n, c).
    SmallVector<bool> reduced(rank, false);
    SmallVector<int64_t> keptShape;
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      reduced[d] = d >= axis;
      if (reduced[d])
        count *= xt.getDimSize(d);
      else
        keptShape.push_back(xt.getDimSize(d));
    }
    auto kept = RankedTensorType::get(keptShape, elt);
    SmallVector<AffineExpr> keptExprs;
    for (int64_t d = 0; d < axis; ++d)
      keptExprs.push_back(getAffineDimExpr(d, ctx));
    AffineMap ident = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap keptMap = AffineMap::get(rank, 0, keptExprs, ctx);
    Value zero = scalarConst(b, loc, elt, 0);
    auto add = [](OpBuilder &nb, Location nl, Value v, Value acc) -> Value {
      return arith::AddFOp::create(nb, nl, v, acc);
    };
    Value mean, centered = x;
    if (!rms) {
      Value sum = reduceDims(b, loc, x, reduced, kept, zero, add);
      mean =
          elementwise(b, loc, kept, ValueRange{sum},
                      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        return arith::DivFOp::create(
                            nb, nl, a[0], scalarConst(nb, nl, elt, count));
                      });
      centered =
          elementwise(b, loc, xt, ValueRange{x, mean},
                      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        return arith::SubFOp::create(nb, nl, a[0], a[1]);
                      },
                      {ident, keptMap});
    }
    Value sq = reduceDims(b, loc, centered, reduced, kept, zero, add,
                          [](OpBuilder &nb, Location nl, Value v) -> Value {
                            return arith::MulFOp::create(nb, nl, v, v);
                          });
    Value invStd = elementwise(
        b, loc, kept, ValueRange{sq},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value var = arith::DivFOp::create(nb, nl, a[0],
                                            scalarConst(nb, nl, elt, count));
          // 1 / sqrt: libm has no rsqrtf for math.rsqrt to call.
          Value s = math::SqrtOp::create(
              nb, nl,
              arith::AddFOp::create(nb, nl, var, scalarConst(nb, nl, elt, eps))
                  .getResult());
          return arith::DivFOp::create(nb, nl, scalarConst(nb, nl, elt, 1), s);
        });
    Value scale = op->getOperand(1);
    Value bias = layer ? getOnnxInput(op, 2)
                 : rms ? Value()
                       : op->getOperand(2);
    SmallVector<AffineMap> maps = {ident, keptMap};
    if (!layer && !rms) {
      AffineMap chan = AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
      if (group &&
          cast<RankedTensorType>(scale.getType()).getNumElements() != groups) {
        // Per channel: [C] as [G, C / G], read at (g, c).
        chan = AffineMap::get(
            rank, 0, {getAffineDimExpr(1, ctx), getAffineDimExpr(2, ctx)}, ctx);
        auto pt = RankedTensorType::get(
            {groups, perGroup},
            cast<RankedTensorType>(scale.getType()).getElementType());
        scale = tensor::ExpandShapeOp::create(
            b, loc, pt, scale, SmallVector<ReassociationIndices>{{0, 1}});
        if (bias)
          bias = tensor::ExpandShapeOp::create(
              b, loc, pt, bias, SmallVector<ReassociationIndices>{{0, 1}});
      }
      maps.push_back(chan);
      if (bias)
        maps.push_back(chan);
    }
    SmallVector<Value> ins = {centered, invStd, scale};
    if (bias)
      ins.push_back(bias);
    bool hasBias = static_cast<bool>(bias);
    Value y = elementwise(
        b, loc, xt, ins,
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value r = arith::MulFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, a[0], a[1]).getResult(),
              a[2]);
          return hasBias ? arith::AddFOp::create(nb, nl, r, a[3]).getResult()
                         : r;
        },
        maps);
    if (group)
      y = reshapeTo(b, loc, y, rt);
    SmallVector<Value> results = {y};
    if (layer) {
      for (OpResult r : op->getResults().drop_front()) {
        auto t = cast<RankedTensorType>(r.getType());
        // Results after Y are Mean then InvStdDev, in slot order.
        bool isMean = op->getNumResults() == 3
                          ? r.getResultNumber() == 1
                          : cast<DenseI32ArrayAttr>(
                                op->getAttr("resultSegmentSizes"))[1] == 1;
        results.push_back(reshapeTo(b, loc, isMean ? mean : invStd, t));
      }
    }
    return results;
  }
  if (isa<ArgMaxOp, ArgMinOp, HardmaxOp>(op)) {
    bool isMax = !isa<ArgMinOp>(op);
    bool last = intAttr(op, "select_last_index", 0) != 0;
    Value x = op->getOperand(0);
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t rank = xt.getRank();
    int64_t axis = intAttr(op, "axis", isa<HardmaxOp>(op) ? -1 : 0);
    if (axis < 0)
      axis += rank;
    Type xe = xt.getElementType();
    SmallVector<int64_t> keptShape;
    SmallVector<AffineExpr> outExprs;
    SmallVector<utils::IteratorType> iters;
    for (int64_t d = 0; d < rank; ++d) {
      iters.push_back(d == axis ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
      if (d != axis) {
        keptShape.push_back(xt.getDimSize(d));
        outExprs.push_back(getAffineDimExpr(d, ctx));
      }
    }
    auto valType = RankedTensorType::get(keptShape, xe);
    auto idxType = RankedTensorType::get(keptShape, b.getI64Type());
    Value vInit = filled(b, loc, valType, extremum(b, loc, xe, isMax));
    Value iInit =
        filled(b, loc, idxType, scalarConst(b, loc, b.getI64Type(), 0));
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
    bool f = isFloat(xe);
    auto red = linalg::GenericOp::create(
        b, loc, TypeRange{valType, idxType}, ValueRange{x},
        ValueRange{vInit, iInit},
        {AffineMap::getMultiDimIdentityMap(rank, ctx), outMap, outMap}, iters,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value idx = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, axis));
          Value better;
          if (f)
            better = arith::CmpFOp::create(
                nb, nl,
                isMax ? (last ? arith::CmpFPredicate::OGE
                              : arith::CmpFPredicate::OGT)
                      : (last ? arith::CmpFPredicate::OLE
                              : arith::CmpFPredicate::OLT),
                a[0], a[1]);
          else
            better = arith::CmpIOp::create(
                nb, nl,
                isMax ? (last ? arith::CmpIPredicate::sge
                              : arith::CmpIPredicate::sgt)
                      : (last ? arith::CmpIPredicate::sle
                              : arith::CmpIPredicate::slt),
                a[0], a[1]);
          // The first element always wins, so an all-NaN or all-lowest
          // slice still names a valid index.
          Value first =
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, idx,
                                    scalarConst(nb, nl, nb.getI64Type(), 0));
          better = arith::OrIOp::create(nb, nl, better, first);
          Value v = arith::SelectOp::create(nb, nl, better, a[0], a[1]);
          Value i = arith::SelectOp::create(nb, nl, better, idx, a[2]);
          linalg::YieldOp::create(nb, nl, ValueRange{v, i});
        });
    Value indices = red.getResult(1);
    if (!isa<HardmaxOp>(op))
      return one(reshapeTo(b, loc, indices, rt));
    return one(elementwise(
        b, loc, rt, ValueRange{indices},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value idx = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, axis));
          Value hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                            idx, a[0]);
          return arith::SelectOp::create(nb, nl, hit,
                                         scalarConst(nb, nl, elt, 1),
                                         scalarConst(nb, nl, elt, 0));
        },
        {outMap}));
  }
  if (auto ge = dyn_cast<GatherElementsOp>(op)) {
    Value data = ge.getData();
    auto dt = cast<RankedTensorType>(data.getType());
    int64_t axis = ge.getAxis();
    if (axis < 0)
      axis += dt.getRank();
    int64_t extent = dt.getDimSize(axis);
    return one(elementwise(
        b, loc, rt, ValueRange{ge.getIndices()},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value i = wrapIndex(nb, nl, a[0], extent);
          SmallVector<Value> coords;
          for (int64_t d = 0; d < dt.getRank(); ++d)
            coords.push_back(
                d == axis ? i : linalg::IndexOp::create(nb, nl, d).getResult());
          return tensor::ExtractOp::create(nb, nl, data, coords);
        }));
  }
  if (auto tri = dyn_cast<TriluOp>(op)) {
    // k: a constant, or read once at run time from its 0-D tensor.
    Value kScalar;
    if (Value kv = tri.getK()) {
      if (auto c = getConstantInts(kv); c && c->size() == 1) {
        kScalar = scalarConst(b, loc, b.getI64Type(), (*c)[0]);
      } else {
        auto kt = cast<RankedTensorType>(kv.getType());
        if (kt.getNumElements() != 1)
          return op->emitOpError("k must hold one value"), failure();
        SmallVector<Value> zeros(kt.getRank(),
                                 arith::ConstantIndexOp::create(b, loc, 0));
        kScalar =
            convertScalar(b, loc, tensor::ExtractOp::create(b, loc, kv, zeros),
                          b.getI64Type());
      }
    } else {
      kScalar = scalarConst(b, loc, b.getI64Type(), 0);
    }
    bool upper = tri.getUpper() != 0;
    int64_t rank = rt.getRank();
    return one(elementwise(
        b, loc, rt, ValueRange{tri.getInput()},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value i = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(),
              linalg::IndexOp::create(nb, nl, rank - 2));
          Value j = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(),
              linalg::IndexOp::create(nb, nl, rank - 1));
          Value diff = arith::SubIOp::create(nb, nl, j, i);
          Value kc = kScalar;
          Value keep = arith::CmpIOp::create(nb, nl,
                                             upper ? arith::CmpIPredicate::sge
                                                   : arith::CmpIPredicate::sle,
                                             diff, kc);
          return arith::SelectOp::create(nb, nl, keep, a[0],
                                         scalarConst(nb, nl, elt, 0));
        }));
  }
  if (auto tile = dyn_cast<TileOp>(op)) {
    Value x = tile.getInput();
    auto xt = cast<RankedTensorType>(x.getType());
    return one(elementwise(
        b, loc, rt, ValueRange{},
        [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
          SmallVector<Value> coords;
          for (int64_t d = 0; d < xt.getRank(); ++d)
            coords.push_back(arith::RemUIOp::create(
                nb, nl, linalg::IndexOp::create(nb, nl, d),
                arith::ConstantIndexOp::create(nb, nl, xt.getDimSize(d))));
          return tensor::ExtractOp::create(nb, nl, x, coords);
        }));
  }
  if (isa<EyeLikeOp>(op)) {
    int64_t k = intAttr(op, "k", 0);
    return one(elementwise(
        b, loc, rt, ValueRange{},
        [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
          Value i = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, 0));
          Value j = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, 1));
          Value on = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::eq,
              arith::AddIOp::create(nb, nl, i,
                                    scalarConst(nb, nl, nb.getI64Type(), k)),
              j);
          if (elt.isInteger(1))
            return on;
          return arith::SelectOp::create(nb, nl, on,
                                         scalarConst(nb, nl, elt, 1),
                                         scalarConst(nb, nl, elt, 0));
        }));
  }
  if (isa<DepthToSpaceOp, SpaceToDepthOp>(op)) {
    Value x = op->getOperand(0);
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t bs = intAttr(op, "blocksize", 1);
    int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2),
            w = xt.getDimSize(3);
    SmallVector<int64_t> mid, perm;
    if (isa<DepthToSpaceOp>(op)) {
      bool crd = false;
      if (auto m = op->getAttrOfType<StringAttr>("mode"))
        crd = m.getValue() == "CRD";
      int64_t cc = c / (bs * bs);
      mid = crd ? SmallVector<int64_t>{n, cc, bs, bs, h, w}
                : SmallVector<int64_t>{n, bs, bs, cc, h, w};
      perm = crd ? SmallVector<int64_t>{0, 1, 4, 2, 5, 3}
                 : SmallVector<int64_t>{0, 3, 4, 1, 5, 2};
    } else {
      mid = {n, c, h / bs, bs, w / bs, bs};
      perm = {0, 3, 5, 1, 2, 4};
    }
    Value r = reshapeTo(b, loc, x, RankedTensorType::get(mid, elt));
    SmallVector<int64_t> tshape;
    for (int64_t p : perm)
      tshape.push_back(mid[p]);
    auto tt = RankedTensorType::get(tshape, elt);
    r = linalg::TransposeOp::create(b, loc, r, emptyLike(b, loc, tt), perm)
            .getResult()[0];
    return one(reshapeTo(b, loc, r, rt));
  }
  if (isa<CumSumOp, CumProdOp>(op)) {
    // CumSum and CumProd have the same operands and attributes.
    Value csX = op->getOperand(0), csAxis = op->getOperand(1);
    auto ax = getConstantInts(csAxis);
    int64_t rank = rt.getRank();
    bool exclusive = intAttr(op, "exclusive", 0) != 0,
         reverse = intAttr(op, "reverse", 0) != 0;
    bool f = isFloat(elt), product = isa<CumProdOp>(op);
    // out[i] = sum (product) over k of x[k] where k precedes i along the
    // axis (an extra reduction dim k), starting from 0 (1).
    auto along = [&](OpBuilder &ob, int64_t axis) -> Value {
      SmallVector<AffineExpr> inExprs, outExprs;
      for (int64_t d = 0; d < rank; ++d) {
        inExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
        outExprs.push_back(getAffineDimExpr(d, ctx));
      }
      SmallVector<utils::IteratorType> iters(rank + 1,
                                             utils::IteratorType::parallel);
      iters.back() = utils::IteratorType::reduction;
      Value zero =
          filled(ob, loc, rt, scalarConst(ob, loc, elt, product ? 1 : 0));
      return linalg::GenericOp::create(
                 ob, loc, TypeRange{rt}, ValueRange{csX}, ValueRange{zero},
                 {AffineMap::get(rank + 1, 0, inExprs, ctx),
                  AffineMap::get(rank + 1, 0, outExprs, ctx)},
                 iters,
                 [&](OpBuilder &nb, Location nl, ValueRange a) {
                   Value i = linalg::IndexOp::create(nb, nl, axis);
                   Value k = linalg::IndexOp::create(nb, nl, rank);
                   arith::CmpIPredicate pred =
                       reverse ? (exclusive ? arith::CmpIPredicate::ugt
                                            : arith::CmpIPredicate::uge)
                               : (exclusive ? arith::CmpIPredicate::ult
                                            : arith::CmpIPredicate::ule);
                   Value in = arith::CmpIOp::create(nb, nl, pred, k, i);
                   Value sum =
                       product ? (f ? arith::MulFOp::create(nb, nl, a[1], a[0])
                                          .getResult()
                                    : arith::MulIOp::create(nb, nl, a[1], a[0])
                                          .getResult())
                       : f     ? arith::AddFOp::create(nb, nl, a[1], a[0])
                                 .getResult()
                           : arith::AddIOp::create(nb, nl, a[1], a[0])
                                 .getResult();
                   linalg::YieldOp::create(nb, nl,
                                           ValueRange{arith::SelectOp::create(
                                               nb, nl, in, sum, a[1])});
                 })
          .getResult(0);
    };
    // A rank-1 input has one axis, whatever value the run-time axis holds.
    if (rank == 1 || (ax && ax->size() == 1)) {
      int64_t axis = rank == 1 ? 0 : (*ax)[0];
      return one(along(b, axis < 0 ? axis + rank : axis));
    }
    // An axis known only at run time: one case per dim.
    Value a = tensor::ExtractOp::create(
        b, loc, csAxis,
        SmallVector<Value>(cast<RankedTensorType>(csAxis.getType()).getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0)));
    a = arith::IndexCastOp::create(b, loc, b.getIndexType(), a);
    Value neg =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a,
                              arith::ConstantIndexOp::create(b, loc, 0));
    a = arith::SelectOp::create(
        b, loc, neg,
        arith::AddIOp::create(b, loc, a,
                              arith::ConstantIndexOp::create(b, loc, rank)),
        a);
    SmallVector<int64_t> cases;
    for (int64_t d = 1; d < rank; ++d)
      cases.push_back(d);
    auto sw = scf::IndexSwitchOp::create(b, loc, TypeRange{rt}, a, cases,
                                         cases.size());
    OpBuilder::InsertionGuard guard(b);
    for (int64_t d = 0; d < rank; ++d) {
      Region &region =
          d == 0 ? sw.getDefaultRegion() : sw.getCaseRegions()[d - 1];
      b.setInsertionPointToStart(&region.emplaceBlock());
      scf::YieldOp::create(b, loc, along(b, d));
    }
    return one(sw.getResult(0));
  }
  if (auto re = dyn_cast<RotaryEmbeddingOp>(op)) {
    FailureOr<Value> v = lowerRotaryEmbedding(re, rt);
    if (failed(v))
      return failure();
    return one(*v);
  }
  if (auto oh = dyn_cast<OneHotOp>(op)) {
    auto it = cast<RankedTensorType>(oh.getIndices().getType());
    int64_t rank = rt.getRank();
    int64_t axis = oh.getAxis();
    if (axis < 0)
      axis += rank;
    int64_t depth = rt.getDimSize(axis);
    Value zeroIdx = arith::ConstantIndexOp::create(b, loc, 0);
    Value oneIdx = arith::ConstantIndexOp::create(b, loc, 1);
    Value off = tensor::ExtractOp::create(b, loc, oh.getValues(), zeroIdx);
    Value on = tensor::ExtractOp::create(b, loc, oh.getValues(), oneIdx);
    SmallVector<AffineExpr> idxExprs;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        idxExprs.push_back(getAffineDimExpr(d, ctx));
    Type ie = it.getElementType();
    return one(elementwise(
        b, loc, rt, ValueRange{oh.getIndices()},
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value idx =
              isFloat(ie)
                  ? arith::FPToSIOp::create(nb, nl, nb.getI64Type(), a[0])
                        .getResult()
                  : convertScalar(nb, nl, a[0], nb.getI64Type());
          Value d = scalarConst(nb, nl, nb.getI64Type(), depth);
          Value neg =
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, idx,
                                    scalarConst(nb, nl, nb.getI64Type(), 0));
          idx = arith::SelectOp::create(
              nb, nl, neg, arith::AddIOp::create(nb, nl, idx, d), idx);
          Value pos = arith::IndexCastOp::create(
              nb, nl, nb.getI64Type(), linalg::IndexOp::create(nb, nl, axis));
          Value hit =
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, idx, pos);
          return arith::SelectOp::create(nb, nl, hit, on, off);
        },
        {AffineMap::get(rank, 0, idxExprs, ctx)}));
  }

  if (isa<NegativeLogLikelihoodLossOp, SoftmaxCrossEntropyLossOp>(op)) {
    bool sce = isa<SoftmaxCrossEntropyLossOp>(op);
    Value x = op->getOperand(0), target = op->getOperand(1);
    Value weight = getOnnxInput(op, 2);
    auto xt = cast<RankedTensorType>(x.getType());
    Type fe = xt.getElementType();
    if (!isFloat(fe))
      return op->emitOpError("needs float scores"), failure();
    StringRef reduction = "mean";
    if (auto r = op->getAttrOfType<StringAttr>("reduction"))
      reduction = r.getValue();
    std::optional<int64_t> ignore;
    if (auto ig = op->getAttrOfType<IntegerAttr>("ignore_index"))
      ignore = ig.getInt();
    Value logProb = x;
    if (sce) {
      auto sm = linalg::SoftmaxOp::create(b, loc, TypeRange{xt}, x,
                                          emptyLike(b, loc, xt), 1);
      auto parts = cast<linalg::AggregatedOpInterface>(sm.getOperation())
                       .decomposeOperation(b);
      if (failed(parts))
        return op->emitOpError("softmax decomposition failed"), failure();
      b.eraseOp(sm);
      logProb =
          elementwise(b, loc, xt, ValueRange{(*parts)[0]},
                      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        return math::LogOp::create(nb, nl, a[0]);
                      });
    }
    // Per element of the target: the weighted negative log-probability of
    // its class, and the weight itself (0 where the target is ignored).
    auto tt = cast<RankedTensorType>(target.getType());
    auto lossType = RankedTensorType::get(tt.getShape(), fe);
    int64_t rank = tt.getRank();
    MLIRContext *mctx = b.getContext();
    AffineMap ident = AffineMap::getMultiDimIdentityMap(rank, mctx);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value lp = logProb;
    auto perElement = linalg::GenericOp::create(
        b, loc, TypeRange{lossType, lossType}, ValueRange{target},
        ValueRange{emptyLike(b, loc, lossType), emptyLike(b, loc, lossType)},
        {ident, ident, ident}, iters,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value t = arith::IndexCastOp::create(
              nb, nl, nb.getIndexType(),
              convertScalar(nb, nl, a[0], nb.getI64Type()));
          Value zero = scalarConst(nb, nl, fe, 0);
          Value keep = scalarConst(nb, nl, nb.getI1Type(), 1);
          if (ignore)
            keep = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::ne,
                convertScalar(nb, nl, a[0], nb.getI64Type()),
                scalarConst(nb, nl, nb.getI64Type(), *ignore));
          // An ignored target may be out of range: read class 0 instead.
          Value safe = arith::SelectOp::create(
              nb, nl, keep, t, arith::ConstantIndexOp::create(nb, nl, 0));
          SmallVector<Value> coords = {linalg::IndexOp::create(nb, nl, 0),
                                       safe};
          for (int64_t d = 1; d < rank; ++d)
            coords.push_back(linalg::IndexOp::create(nb, nl, d));
          Value v = tensor::ExtractOp::create(nb, nl, lp, coords);
          Value w = weight ? tensor::ExtractOp::create(nb, nl, weight,
                                                       ValueRange{safe})
                                 .getResult()
                           : scalarConst(nb, nl, fe, 1);
          w = arith::SelectOp::create(nb, nl, keep, w, zero);
          Value loss = arith::MulFOp::create(
              nb, nl, arith::NegFOp::create(nb, nl, v).getResult(), w);
          linalg::YieldOp::create(nb, nl, ValueRange{loss, w});
        });
    Value loss = perElement.getResult(0), weights = perElement.getResult(1);
    Value result;
    if (reduction == "none") {
      result = loss;
    } else {
      auto scalarType = RankedTensorType::get({}, fe);
      SmallVector<bool> all(rank, true);
      auto add = [](OpBuilder &nb, Location nl, Value v, Value acc) -> Value {
        return arith::AddFOp::create(nb, nl, v, acc);
      };
      Value sum = reduceDims(b, loc, loss, all, scalarType,
                             scalarConst(b, loc, fe, 0), add);
      if (reduction == "mean") {
        Value wsum = reduceDims(b, loc, weights, all, scalarType,
                                scalarConst(b, loc, fe, 0), add);
        sum =
            elementwise(b, loc, scalarType, ValueRange{sum, wsum},
                        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                          return arith::DivFOp::create(nb, nl, a[0], a[1]);
                        });
      } else if (reduction != "sum") {
        return op->emitOpError("unknown reduction '") << reduction << "'",
               failure();
      }
      result = sum;
    }
    SmallVector<Value> results = {reshapeTo(b, loc, result, rt)};
    if (op->getNumResults() > 1)
      results.push_back(logProb);
    return results;
  }

  if (auto ct = dyn_cast<ConvTransposeOp>(op)) {
    // y[n, g*F/G + f, o...] = sum over c in group g, k... of
    //   x[n, c, i...] * w[c, f, k...]  where o = i*s - pad + k*d.
    // Written as a gather: i = (o + pad - k*d) / s when that divides and is
    // in range, so the loops run over the output (no scatter).
    Value x = ct.getX(), w = ct.getW(), bias = ct.getB();
    auto xt = cast<RankedTensorType>(x.getType());
    auto wt = cast<RankedTensorType>(w.getType());
    int64_t ns = xt.getRank() - 2;
    int64_t group = ct.getGroup();
    int64_t cPerG = xt.getDimSize(1) / group, fPerG = wt.getDimSize(1);
    SmallVector<int64_t> kernel(wt.getShape().drop_front(2));
    auto strides = intsAttr(op, "strides", SmallVector<int64_t>(ns, 1));
    auto dil = intsAttr(op, "dilations", SmallVector<int64_t>(ns, 1));
    auto pads = intsAttr(op, "pads", SmallVector<int64_t>(2 * ns, 0));
    auto outPad = intsAttr(op, "output_padding", SmallVector<int64_t>(ns, 0));
    StringRef autoPad = ct.getAutoPad();
    bool explicitShape = static_cast<bool>(op->getAttr("output_shape"));
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" || explicitShape) {
      for (int64_t i = 0; i < ns; ++i) {
        int64_t total = strides[i] * (xt.getDimSize(i + 2) - 1) + outPad[i] +
                        (kernel[i] - 1) * dil[i] + 1 - rt.getDimSize(i + 2);
        total = std::max<int64_t>(total, 0);
        bool upper = autoPad != "SAME_LOWER";
        pads[i] = upper ? total / 2 : total - total / 2;
        pads[i + ns] = total - pads[i];
      }
    }
    // The input position tap k of output position o reads along spatial
    // dim i: (o + pad - k*d) / s, valid when that divides, is >= 0 and is
    // in range. Out-of-range positions are clamped to 0 (and masked).
    auto tapInput = [&](OpBuilder &nb, Location nl, Value o, Value k,
                        int64_t i) -> std::pair<Value, Value> {
      auto cidx = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(nb, nl, v);
      };
      Value num = arith::SubIOp::create(
          nb, nl, arith::AddIOp::create(nb, nl, o, cidx(pads[i])),
          arith::MulIOp::create(nb, nl, k, cidx(dil[i])));
      Value nonneg = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge,
                                           num, cidx(0));
      Value divisible = arith::CmpIOp::create(
          nb, nl, arith::CmpIPredicate::eq,
          arith::RemSIOp::create(nb, nl, num, cidx(strides[i])), cidx(0));
      Value in = arith::DivSIOp::create(nb, nl, num, cidx(strides[i]));
      Value below = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, in,
                                          cidx(xt.getDimSize(i + 2)));
      Value valid = arith::AndIOp::create(
          nb, nl, nonneg, arith::AndIOp::create(nb, nl, divisible, below));
      return {arith::SelectOp::create(nb, nl, valid, in, cidx(0)), valid};
    };
    Type xElt = xt.getElementType();
    if (group == 1 && ns == 2 && isa<FloatType>(elt) && xElt == elt &&
        wt.getElementType() == elt && xt.hasStaticShape() &&
        wt.hasStaticShape() && rt.hasStaticShape())
      return one(convTransposeAsGemm(op, x, w, bias, rt, kernel, strides, dil,
                                     pads, tapInput));
    // Dims: n, f(out channel), o..., then reductions c(in group), k...
    int64_t nd = 2 + ns + 1 + ns;
    SmallVector<utils::IteratorType> iters(nd, utils::IteratorType::parallel);
    for (int64_t i = 2 + ns; i < nd; ++i)
      iters[i] = utils::IteratorType::reduction;
    SmallVector<AffineExpr> outExprs;
    for (int64_t i = 0; i < 2 + ns; ++i)
      outExprs.push_back(getAffineDimExpr(i, ctx));
    Value init = filled(b, loc, rt, scalarConst(b, loc, elt, 0));
    // The reduction dims (c, k...) take their extents from an operand of
    // that shape whose values are never read.
    SmallVector<int64_t> redShape = {cPerG};
    llvm::append_range(redShape, kernel);
    SmallVector<AffineExpr> redExprs;
    for (int64_t i = 2 + ns; i < nd; ++i)
      redExprs.push_back(getAffineDimExpr(i, ctx));
    Value extents = tensor::EmptyOp::create(b, loc, redShape, elt);
    Value y =
        linalg::GenericOp::create(
            b, loc, TypeRange{rt}, ValueRange{extents}, ValueRange{init},
            {AffineMap::get(nd, 0, redExprs, ctx),
             AffineMap::get(nd, 0, outExprs, ctx)},
            iters,
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              auto idx = [&](int64_t d) -> Value {
                return linalg::IndexOp::create(nb, nl, d);
              };
              auto cidx = [&](int64_t v) -> Value {
                return arith::ConstantIndexOp::create(nb, nl, v);
              };
              Value f = idx(1), c = idx(2 + ns);
              Value g = arith::DivUIOp::create(nb, nl, f, cidx(fPerG));
              Value fin = arith::RemUIOp::create(nb, nl, f, cidx(fPerG));
              Value cin = arith::AddIOp::create(
                  nb, nl, arith::MulIOp::create(nb, nl, g, cidx(cPerG)), c);
              Value valid = scalarConst(nb, nl, nb.getI1Type(), 1);
              SmallVector<Value> xCoords = {idx(0), cin};
              SmallVector<Value> wCoords = {cin, fin};
              for (int64_t i = 0; i < ns; ++i) {
                Value k = idx(3 + ns + i);
                auto [in, ok] = tapInput(nb, nl, idx(2 + i), k, i);
                valid = arith::AndIOp::create(nb, nl, valid, ok);
                xCoords.push_back(in);
                wCoords.push_back(k);
              }
              Value xv = tensor::ExtractOp::create(nb, nl, x, xCoords);
              Value wv = tensor::ExtractOp::create(nb, nl, w, wCoords);
              Value prod = arith::MulFOp::create(nb, nl, xv, wv);
              Value sum = arith::AddFOp::create(nb, nl, a[1], prod);
              linalg::YieldOp::create(nb, nl,
                                      ValueRange{arith::SelectOp::create(
                                          nb, nl, valid, sum, a[1])});
            })
            .getResult(0);
    if (bias) {
      AffineMap ident = AffineMap::getMultiDimIdentityMap(rt.getRank(), ctx);
      AffineMap chan =
          AffineMap::get(rt.getRank(), 0, {getAffineDimExpr(1, ctx)}, ctx);
      y = elementwise(b, loc, rt, ValueRange{y, bias},
                      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        return arith::AddFOp::create(nb, nl, a[0], a[1]);
                      },
                      {ident, chan});
    }
    return one(y);
  }

  if (isa<ResizeOp, UpsampleOp>(op)) {
    Value x = op->getOperand(0);
    auto xt = cast<RankedTensorType>(x.getType());
    int64_t rank = xt.getRank();
    bool upsample = isa<UpsampleOp>(op);
    auto str = [&](StringRef name, StringRef dflt) {
      auto a = op->getAttrOfType<StringAttr>(name);
      return a ? a.getValue() : dflt;
    };
    StringRef mode = str("mode", "nearest");
    StringRef ctm = upsample
                        ? "asymmetric"
                        : str("coordinate_transformation_mode", "half_pixel");
    StringRef nearestMode =
        upsample ? "floor" : str("nearest_mode", "round_prefer_floor");
    // The axes that the scales, sizes and roi list (all by default);
    // axisAt[d]: d's place among them, or -1.
    SmallVector<int64_t> axes =
        intsAttr(op, "axes", llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    for (int64_t &ax : axes) {
      FailureOr<int64_t> d = normalizeAxis(op, ax, rank);
      if (failed(d))
        return failure();
      ax = *d;
    }
    int64_t numAxes = axes.size();
    SmallVector<int64_t> axisAt(rank, -1);
    for (auto [i, ax] : llvm::enumerate(axes)) {
      if (axisAt[ax] >= 0)
        return op->emitOpError("axis ") << ax << " is repeated", failure();
      axisAt[ax] = i;
    }
    bool crop = ctm == "tf_crop_and_resize";
    Value roi = crop ? getOnnxInput(op, 1) : Value();
    if (crop &&
        (!roi ||
         cast<RankedTensorType>(roi.getType()).getNumElements() != 2 * numAxes))
      return op->emitOpError("tf_crop_and_resize needs a roi of ")
                 << 2 * numAxes << " values",
             failure();
    float extrapolation = floatAttr(op, "extrapolation_value", 0.0f);
    if (ctm != "half_pixel" && ctm != "pytorch_half_pixel" &&
        ctm != "half_pixel_symmetric" && ctm != "align_corners" &&
        ctm != "asymmetric" && ctm != "tf_half_pixel_for_nn" && !crop)
      return op->emitOpError("coordinate mode '")
                 << ctm << "' is not lowered yet",
             failure();
    StringRef policy = str("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" &&
        policy != "not_smaller")
      return op->emitOpError("keep_aspect_ratio_policy '")
                 << policy << "' is not one of stretch, not_larger, "
                 << "not_smaller",
             failure();
    Value sizesV; // Sizes read at run time by an aspect-ratio policy.
    // Per-dim scale: the given scales (1 for a dim not in axes), else
    // output / input extents, or with an aspect-ratio policy the smallest
    // (not_larger) or largest (not_smaller) of sizes / input extents over
    // the axes, for all of them.
    SmallVector<double> scales(rank, 1.0);
    Value scalesV = upsample ? op->getOperand(1) : getOnnxInput(op, 2);
    ElementsAttr scalesAttr;
    bool hasScales =
        scalesV &&
        cast<RankedTensorType>(scalesV.getType()).getNumElements() > 0;
    // Scales known only at run time (the output shape is static all the
    // same) are read in the loop body, and no axis among them can be
    // assumed unscaled.
    bool runtimeScales = false;
    if (hasScales) {
      if (cast<RankedTensorType>(scalesV.getType()).getNumElements() != numAxes)
        return op->emitOpError("needs one scale per axis (") << numAxes << ")",
               failure();
      if (matchPattern(scalesV, m_Constant(&scalesAttr))) {
        for (auto [i, v] : llvm::enumerate(scalesAttr.getValues<APFloat>()))
          scales[axes[i]] = v.convertToDouble();
      } else {
        runtimeScales = true;
      }
    } else if (policy == "stretch") {
      for (int64_t d = 0; d < rank; ++d)
        scales[d] = double(rt.getDimSize(d)) / xt.getDimSize(d);
    } else {
      sizesV = getOnnxInput(op, 3);
      if (!sizesV ||
          cast<RankedTensorType>(sizesV.getType()).getNumElements() != numAxes)
        return op->emitOpError("keep_aspect_ratio_policy '")
                   << policy << "' needs sizes, one per axis",
               failure();
      ElementsAttr sizesAttr;
      if (matchPattern(sizesV, m_Constant(&sizesAttr))) {
        std::optional<double> scale;
        for (auto [i, v] : llvm::enumerate(sizesAttr.getValues<APInt>())) {
          double r = double(v.getSExtValue()) / xt.getDimSize(axes[i]);
          scale = !scale                   ? r
                  : policy == "not_larger" ? std::min(*scale, r)
                                           : std::max(*scale, r);
        }
        for (int64_t ax : axes)
          scales[ax] = *scale;
        sizesV = nullptr;
      } else {
        // Sizes known at run time: the scale is computed in the body.
        runtimeScales = true;
      }
      // The coordinates follow that scale, as given scales do.
      hasScales = true;
    }
    if (mode != "nearest" && mode != "linear" && mode != "cubic")
      return op->emitOpError("mode '") << mode << "' is not lowered", failure();
    if (!isFloat(elt) && mode != "nearest")
      return op->emitOpError("interpolating integers is not lowered yet"),
             failure();
    float cubicA = floatAttr(op, "cubic_coeff_a", -0.75f);
    bool excludeOutside = intAttr(op, "exclude_outside", 0) != 0;
    bool antialias = intAttr(op, "antialias", 0) != 0 && mode != "nearest";
    if (antialias && runtimeScales && crop)
      return op->emitOpError("antialiased tf_crop_and_resize needs constant "
                             "scales or sizes (its filter's width follows "
                             "the scale)"),
             failure();
    Type f32 = b.getF32Type();
    // Whether dim d is read at the output's own index.
    auto unresized = [&](int64_t d) {
      bool listed = axisAt[d] >= 0;
      return xt.getDimSize(d) == rt.getDimSize(d) &&
             (!runtimeScales || !listed) && scales[d] == 1.0 &&
             (!crop || !listed);
    };
    // Element k of the 1-D tensor `t`, as f32.
    auto readF32 = [&](OpBuilder &nb, Location nl, Value t,
                       int64_t k) -> Value {
      return convertScalar(
          nb, nl,
          tensor::ExtractOp::create(
              nb, nl, t, ValueRange{arith::ConstantIndexOp::create(nb, nl, k)}),
          f32);
    };
    // The scale (f32) of dim d: a constant, or read in the body from
    // run-time scales or (with an aspect-ratio policy) sizes.
    auto scaleOf = [&](OpBuilder &nb, Location nl, int64_t d) -> Value {
      auto fc = [&](double v) { return scalarConst(nb, nl, f32, v); };
      if (!runtimeScales || axisAt[d] < 0)
        return fc(scales[d]);
      auto at = [&](Value t, int64_t k) { return readF32(nb, nl, t, k); };
      if (!sizesV)
        return at(scalesV, axisAt[d]);
      // The policy's scale over the run-time sizes.
      Value s;
      for (auto [k, ax] : llvm::enumerate(axes)) {
        Value r =
            arith::DivFOp::create(nb, nl, at(sizesV, k), fc(xt.getDimSize(ax)));
        s = !s ? r
            : policy == "not_larger"
                ? arith::MinimumFOp::create(nb, nl, s, r).getResult()
                : arith::MaximumFOp::create(nb, nl, s, r).getResult();
      }
      return s;
    };
    // The source coordinate (f32) of output index `i` along resized dim
    // `d`; where a crop reaches outside the input, `outside` is set.
    auto sourceCoord = [&](OpBuilder &nb, Location nl, int64_t d, Value i,
                           Value &outside) -> Value {
      auto fc = [&](double v) { return scalarConst(nb, nl, f32, v); };
      int64_t in = xt.getDimSize(d), out = rt.getDimSize(d);
      bool listed = axisAt[d] >= 0;
      Value xf = arith::UIToFPOp::create(
          nb, nl, f32,
          arith::IndexCastUIOp::create(nb, nl, nb.getI64Type(), i));
      Value c;
      Value s = scaleOf(nb, nl, d);
      if (ctm == "align_corners") {
        // x * (in - 1) / (resized length - 1), the resized length
        // being in * scale (not rounded) where scales are given.
        Value den =
            hasScales
                ? arith::SubFOp::create(
                      nb, nl, arith::MulFOp::create(nb, nl, fc(in), s), fc(1))
                      .getResult()
                : fc(out - 1);
        c = out == 1 ? fc(0)
                     : arith::DivFOp::create(
                           nb, nl,
                           arith::MulFOp::create(nb, nl, xf, fc(in - 1)), den)
                           .getResult();
      } else if (ctm == "asymmetric") {
        c = arith::DivFOp::create(nb, nl, xf, s);
      } else if (ctm == "pytorch_half_pixel" && out == 1) {
        c = fc(0);
      } else if (ctm == "tf_half_pixel_for_nn") {
        c = arith::DivFOp::create(
            nb, nl, arith::AddFOp::create(nb, nl, xf, fc(0.5)), s);
      } else if (crop) {
        // The roi (read at run time) gives the normalized start and
        // end of the crop along d; samples outside the input take
        // the extrapolation value.
        auto roiAt = [&](int64_t k) { return readF32(nb, nl, roi, k); };
        // A dim the roi does not list: the whole of it, [0, 1].
        Value st = listed ? roiAt(axisAt[d]) : fc(0),
              en = listed ? roiAt(numAxes + axisAt[d]) : fc(1);
        Value span = fc(in - 1);
        if (out > 1)
          c = arith::AddFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, st, span),
              arith::MulFOp::create(
                  nb, nl, xf,
                  arith::DivFOp::create(
                      nb, nl,
                      arith::MulFOp::create(
                          nb, nl, arith::SubFOp::create(nb, nl, en, st), span),
                      fc(out - 1))));
        else
          c = arith::MulFOp::create(
              nb, nl,
              arith::MulFOp::create(
                  nb, nl, arith::AddFOp::create(nb, nl, st, en), fc(0.5)),
              span);
        outside = arith::OrIOp::create(
            nb, nl, outside,
            arith::OrIOp::create(
                nb, nl,
                arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT, c,
                                      fc(0)),
                arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT, c,
                                      span)));
      } else { // half_pixel, pytorch_half_pixel, half_pixel_symmetric
        c = arith::SubFOp::create(
            nb, nl,
            arith::DivFOp::create(
                nb, nl, arith::AddFOp::create(nb, nl, xf, fc(0.5)), s),
            fc(0.5));
        if (ctm == "half_pixel_symmetric") {
          // Shifted so that the resized extent (in * scale, rounded
          // to `out`) stays centred on the input's: by
          // in / 2 * (1 - out / (in * scale)).
          Value adjustment = arith::DivFOp::create(
              nb, nl, fc(out), arith::MulFOp::create(nb, nl, fc(in), s));
          c = arith::AddFOp::create(
              nb, nl, c,
              arith::MulFOp::create(
                  nb, nl, fc(in / 2.0),
                  arith::SubFOp::create(nb, nl, fc(1), adjustment)));
        }
      }

      return c;
    };
    // An integral float clamped into [0, in - 1] of dim d, as an index.
    auto clampIndex = [&](OpBuilder &nb, Location nl, Value fi,
                          int64_t d) -> Value {
      Value lo =
          arith::MaximumFOp::create(nb, nl, fi, scalarConst(nb, nl, f32, 0));
      Value hi = arith::MinimumFOp::create(
          nb, nl, lo, scalarConst(nb, nl, f32, xt.getDimSize(d) - 1));
      return arith::IndexCastOp::create(
          nb, nl, nb.getIndexType(),
          arith::FPToSIOp::create(nb, nl, nb.getI64Type(), hi));
    };
    // Weight `w` of the tap at (integral float) `pos` of dim d, or 0 where
    // the tap lies outside the input (exclude_outside).
    auto zeroOutside = [&](OpBuilder &nb, Location nl, Value w, Value pos,
                           int64_t d) -> Value {
      auto fc = [&](double v) { return scalarConst(nb, nl, f32, v); };
      Value inside = arith::AndIOp::create(
          nb, nl,
          arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE, pos, fc(0)),
          arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLE, pos,
                                fc(xt.getDimSize(d) - 1)));
      return arith::SelectOp::create(nb, nl, inside, w, fc(0));
    };
    // Keys' cubic convolution kernel with coefficient A at `dist` >= 0
    // (zero from 2 on).
    auto keys = [&](OpBuilder &nb, Location nl, Value dist) -> Value {
      auto fc = [&](double v) { return scalarConst(nb, nl, f32, v); };
      Value d2 = arith::MulFOp::create(nb, nl, dist, dist);
      Value d3 = arith::MulFOp::create(nb, nl, d2, dist);
      // |d| <= 1: (A+2)d^3 - (A+3)d^2 + 1
      Value near = arith::AddFOp::create(
          nb, nl,
          arith::SubFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, d3, fc(cubicA + 2)),
              arith::MulFOp::create(nb, nl, d2, fc(cubicA + 3))),
          fc(1));
      // 1 < |d| < 2: A d^3 - 5A d^2 + 8A d - 4A
      Value far = arith::SubFOp::create(
          nb, nl,
          arith::AddFOp::create(
              nb, nl,
              arith::SubFOp::create(
                  nb, nl, arith::MulFOp::create(nb, nl, d3, fc(cubicA)),
                  arith::MulFOp::create(nb, nl, d2, fc(5 * cubicA))),
              arith::MulFOp::create(nb, nl, dist, fc(8 * cubicA))),
          fc(4 * cubicA));
      Value isNear =
          arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLE, dist, fc(1));
      Value isFar =
          arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT, dist, fc(2));
      return arith::SelectOp::create(
          nb, nl, isNear, near,
          arith::SelectOp::create(nb, nl, isFar, far, fc(0)));
    };
    bool cubic = mode == "cubic";
    if (antialias) {
      // Separable, one linalg.generic per resized dim: a sum over the taps
      // of the filter stretched by 1 / scale when downscaling (by 1 when
      // upscaling), its weights normalized to sum 1, as the ONNX reference
      // computes. The taps around the source coordinate c start at
      // ceil(c) - 1 + first; their count follows the scale.
      // Stages between the first and the last are f32.
      constexpr int64_t kMaxTaps = 256;
      Value cur = x;
      SmallVector<int64_t> shape(xt.getShape());
      SmallVector<int64_t> dims;
      for (int64_t d = 0; d < rank; ++d)
        if (!unresized(d))
          dims.push_back(d);
      for (size_t k = 0; k < dims.size(); ++k) {
        int64_t d = dims[k];
        shape[d] = rt.getDimSize(d);
        auto stageType =
            RankedTensorType::get(shape, k + 1 == dims.size() ? elt : f32);
        // The filter's scale, at most 1. Read at run time, it is at least
        // out / in (the output's extent is the floor of in times given
        // scales) or (out - 1/2) / in (rounded, for a policy over sizes):
        // that bound sizes the window, and a larger scale gives its outer
        // taps zero weight.
        bool runtime = runtimeScales && axisAt[d] >= 0;
        double out = rt.getDimSize(d);
        double s = std::min(
            runtime ? (sizesV ? out - 0.5 : out) / xt.getDimSize(d) : scales[d],
            1.0);
        if (!(s > 0))
          return op->emitOpError("needs a positive scale along axis ") << d,
                 failure();
        // In doubles until bounded: a tiny scale would overflow int64_t.
        double firstF = std::floor(-(cubic ? 2.0 : 1.0) / s) + 1;
        double tapsF = 2 - 2 * firstF;
        auto printed = [](const char *fmt, double v) {
          std::string text;
          llvm::raw_string_ostream(text) << llvm::format(fmt, v);
          return text;
        };
        if (tapsF > kMaxTaps)
          return op->emitOpError("antialiased downscaling along axis ")
                     << d << " by " << printed("%g", s) << " needs "
                     << printed("%g", tapsF) << " taps; at most " << kMaxTaps
                     << " are lowered",
                 failure();
        auto first = static_cast<int64_t>(firstF);
        auto taps = static_cast<int64_t>(tapsF);
        Value src = cur;
        cur = elementwise(
            b, loc, stageType, ValueRange{},
            [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
              auto fc = [&](double v) { return scalarConst(nb, nl, f32, v); };
              SmallVector<Value> coords;
              for (int64_t e = 0; e < rank; ++e)
                coords.push_back(linalg::IndexOp::create(nb, nl, e));
              Value outside = scalarConst(nb, nl, nb.getI1Type(), 0);
              Value c = sourceCoord(nb, nl, d, coords[d], outside);
              Value base = arith::SubFOp::create(
                  nb, nl, math::CeilOp::create(nb, nl, c), fc(1));
              Value sv = runtime ? arith::MinimumFOp::create(
                                       nb, nl, scaleOf(nb, nl, d), fc(1))
                                       .getResult()
                                 : fc(s);
              // s * ratio, ratio = c - base in (0, 1].
              Value sr = arith::MulFOp::create(
                  nb, nl, arith::SubFOp::create(nb, nl, c, base), sv);
              SmallVector<Value> weights, index;
              Value wsum = fc(0);
              for (int64_t t = 0; t < taps; ++t) {
                Value pos = arith::AddFOp::create(nb, nl, base, fc(first + t));
                Value dist = math::AbsFOp::create(
                    nb, nl,
                    arith::SubFOp::create(
                        nb, nl,
                        arith::MulFOp::create(nb, nl, sv, fc(first + t)), sr));
                Value w =
                    cubic
                        ? keys(nb, nl, dist)
                        : arith::MaximumFOp::create(
                              nb, nl,
                              arith::SubFOp::create(nb, nl, fc(1), dist), fc(0))
                              .getResult();
                if (excludeOutside)
                  w = zeroOutside(nb, nl, w, pos, d);
                weights.push_back(w);
                index.push_back(clampIndex(nb, nl, pos, d));
                wsum = arith::AddFOp::create(nb, nl, wsum, w);
              }
              Value acc = fc(0);
              for (int64_t t = 0; t < taps; ++t) {
                coords[d] = index[t];
                Value v = convertScalar(
                    nb, nl, tensor::ExtractOp::create(nb, nl, src, coords),
                    f32);
                acc = arith::AddFOp::create(
                    nb, nl, acc, arith::MulFOp::create(nb, nl, v, weights[t]));
              }
              acc = arith::DivFOp::create(nb, nl, acc, wsum);
              if (crop)
                acc = arith::SelectOp::create(nb, nl, outside,
                                              fc(extrapolation), acc);
              return convertScalar(nb, nl, acc, stageType.getElementType());
            });
      }
      if (cur.getType() != rt)
        cur = elementwise(b, loc, rt, ValueRange{cur},
                          [&](OpBuilder &nb, Location nl, ValueRange a) {
                            return convertScalar(nb, nl, a[0], elt);
                          });
      return one(cur);
    }
    return one(elementwise(
        b, loc, rt, ValueRange{},
        [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
          auto fc = [&](double v) { return scalarConst(nb, nl, f32, v); };
          // Source coordinate (float) of each output index.
          SmallVector<Value> fixed(rank);
          SmallVector<Value> coord(rank);
          SmallVector<int64_t> resized;
          Value outside = scalarConst(nb, nl, nb.getI1Type(), 0);
          // The sample, or the extrapolation value where a crop reaches
          // outside the input.
          auto finish = [&](Value v) -> Value {
            if (!crop)
              return v;
            return arith::SelectOp::create(
                nb, nl, outside, scalarConst(nb, nl, elt, extrapolation), v);
          };
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(nb, nl, d);
            if (unresized(d)) {
              fixed[d] = i;
              continue;
            }
            coord[d] = sourceCoord(nb, nl, d, i, outside);
            resized.push_back(d);
          }
          if (mode == "nearest") {
            SmallVector<Value> coords(fixed.begin(), fixed.end());
            for (int64_t d : resized) {
              Value c = coord[d], r;
              if (nearestMode == "floor")
                r = math::FloorOp::create(nb, nl, c);
              else if (nearestMode == "ceil")
                r = math::CeilOp::create(nb, nl, c);
              else if (nearestMode == "round_prefer_ceil")
                r = math::FloorOp::create(
                    nb, nl, arith::AddFOp::create(nb, nl, c, fc(0.5)));
              else // round_prefer_floor
                r = math::CeilOp::create(
                    nb, nl, arith::SubFOp::create(nb, nl, c, fc(0.5)));
              coords[d] = clampIndex(nb, nl, r, d);
            }
            return finish(tensor::ExtractOp::create(nb, nl, x, coords));
          }
          if (!cubic && mode != "linear")
            return Value();
          // Taps and weights per resized axis.
          int taps = cubic ? 4 : 2;
          SmallVector<SmallVector<Value>> tapIdx(rank), tapW(rank);
          for (int64_t d : resized) {
            Value c = coord[d];
            Value base = math::FloorOp::create(nb, nl, c);
            Value t = arith::SubFOp::create(nb, nl, c, base);
            SmallVector<Value> ws;
            if (!cubic) {
              ws = {arith::SubFOp::create(nb, nl, fc(1), t), t};
            } else {
              auto w = [&](Value dist) { return keys(nb, nl, dist); };
              ws = {w(arith::AddFOp::create(nb, nl, t, fc(1))), w(t),
                    w(arith::SubFOp::create(nb, nl, fc(1), t)),
                    w(arith::SubFOp::create(nb, nl, fc(2), t))};
            }
            Value wsum = fc(0);
            for (int k = 0; k < taps; ++k) {
              Value pos =
                  arith::AddFOp::create(nb, nl, base, fc(cubic ? k - 1 : k));
              Value w = ws[k];
              if (cubic && excludeOutside)
                w = zeroOutside(nb, nl, w, pos, d);
              tapIdx[d].push_back(clampIndex(nb, nl, pos, d));
              tapW[d].push_back(w);
              wsum = arith::AddFOp::create(nb, nl, wsum, w);
            }
            if (cubic && excludeOutside)
              for (Value &w : tapW[d])
                w = arith::DivFOp::create(nb, nl, w, wsum);
          }
          // Sum over every combination of taps of the resized axes.
          Value acc = fc(0);
          int64_t combos = 1;
          for (size_t r = 0; r < resized.size(); ++r)
            combos *= taps;
          for (int64_t k = 0; k < combos; ++k) {
            SmallVector<Value> coords(fixed.begin(), fixed.end());
            Value w = fc(1);
            int64_t rest = k;
            for (int64_t d : resized) {
              int t = rest % taps;
              rest /= taps;
              coords[d] = tapIdx[d][t];
              w = arith::MulFOp::create(nb, nl, w, tapW[d][t]);
            }
            Value v = convertScalar(
                nb, nl, tensor::ExtractOp::create(nb, nl, x, coords), f32);
            acc = arith::AddFOp::create(nb, nl, acc,
                                        arith::MulFOp::create(nb, nl, v, w));
          }
          return finish(convertScalar(nb, nl, acc, elt));
        }));
  }

  if (auto gnd = dyn_cast<GatherNDOp>(op)) {
    Value data = gnd.getData(), indices = gnd.getIndices();
    auto dt = cast<RankedTensorType>(data.getType());
    auto it = cast<RankedTensorType>(indices.getType());
    int64_t bdims = gnd.getBatchDims();
    int64_t q = it.getRank(), k = it.getDimSize(q - 1);
    // out[b..., i..., r...] = data[b..., idx(b..., i..., 0..k-1), r...]
    return one(elementwise(
        b, loc, rt, ValueRange{},
        [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
          auto ic = [&](int64_t v) -> Value {
            return arith::ConstantIndexOp::create(nb, nl, v);
          };
          SmallVector<Value> outIdx;
          for (int64_t d = 0; d < rt.getRank(); ++d)
            outIdx.push_back(linalg::IndexOp::create(nb, nl, d));
          SmallVector<Value> coords(outIdx.begin(), outIdx.begin() + bdims);
          SmallVector<Value> idxCoords(outIdx.begin(), outIdx.begin() + q - 1);
          idxCoords.push_back(Value());
          for (int64_t j = 0; j < k; ++j) {
            idxCoords.back() = ic(j);
            Value v = tensor::ExtractOp::create(nb, nl, indices, idxCoords);
            coords.push_back(wrapIndex(nb, nl, v, dt.getDimSize(bdims + j)));
          }
          for (int64_t d = q - 1; d < rt.getRank(); ++d)
            coords.push_back(outIdx[d]);
          return tensor::ExtractOp::create(nb, nl, data, coords);
        }));
  }

  if (isa<ScatterElementsOp, ScatterOp, ScatterNDOp>(op)) {
    // out[p] = data[p], then every update whose target is p, in order
    // (combined by `reduction`). Written as a reduction over the updates
    // for each output element, so no update is lost to a write race; the
    // cost is (output x updates), fine for the index-driven edits these
    // ops make in practice.
    bool nd = isa<ScatterNDOp>(op);
    Value data = op->getOperand(0), indices = op->getOperand(1),
          updates = op->getOperand(2);
    auto ut = cast<RankedTensorType>(updates.getType());
    auto it = cast<RankedTensorType>(indices.getType());
    StringRef reduction = "none";
    if (auto r = op->getAttrOfType<StringAttr>("reduction"))
      reduction = r.getValue();
    int64_t rank = rt.getRank(), urank = ut.getRank();
    int64_t axis = nd ? 0 : intAttr(op, "axis", 0);
    if (axis < 0)
      axis += rank;
    int64_t q = it.getRank(), k = nd ? it.getDimSize(q - 1) : 0;
    unsigned ndims = rank + urank;
    SmallVector<AffineExpr> outExprs, updExprs;
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(getAffineDimExpr(d, ctx));
    for (int64_t d = 0; d < urank; ++d)
      updExprs.push_back(getAffineDimExpr(rank + d, ctx));
    SmallVector<utils::IteratorType> iters(ndims,
                                           utils::IteratorType::parallel);
    for (unsigned d = rank; d < ndims; ++d)
      iters[d] = utils::IteratorType::reduction;
    bool f = isFloat(elt);
    Value init = linalg::CopyOp::create(b, loc, data, emptyLike(b, loc, rt))
                     .getResult(0);
    return one(
        linalg::GenericOp::create(
            b, loc, TypeRange{rt}, ValueRange{updates}, ValueRange{init},
            {AffineMap::get(ndims, 0, updExprs, ctx),
             AffineMap::get(ndims, 0, outExprs, ctx)},
            iters,
            [&](OpBuilder &nb, Location nl, ValueRange a) {
              auto ic = [&](int64_t v) -> Value {
                return arith::ConstantIndexOp::create(nb, nl, v);
              };
              SmallVector<Value> u;
              for (int64_t d = 0; d < urank; ++d)
                u.push_back(linalg::IndexOp::create(nb, nl, rank + d));
              // The output coordinates this update writes.
              SmallVector<Value> dst;
              if (nd) {
                SmallVector<Value> ic2(u.begin(), u.begin() + (q - 1));
                ic2.push_back(Value());
                for (int64_t j = 0; j < k; ++j) {
                  ic2.back() = ic(j);
                  dst.push_back(wrapIndex(
                      nb, nl, tensor::ExtractOp::create(nb, nl, indices, ic2),
                      rt.getDimSize(j)));
                }
                for (int64_t d = q - 1; d < urank; ++d)
                  dst.push_back(u[d]);
              } else {
                dst = u;
                dst[axis] = wrapIndex(
                    nb, nl, tensor::ExtractOp::create(nb, nl, indices, u),
                    rt.getDimSize(axis));
              }
              Value hit = scalarConst(nb, nl, nb.getI1Type(), 1);
              for (int64_t d = 0; d < rank; ++d)
                hit = arith::AndIOp::create(
                    nb, nl, hit,
                    arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                          dst[d],
                                          linalg::IndexOp::create(nb, nl, d)));
              Value upd = a[0], acc = a[1], r = upd;
              if (reduction == "add")
                r = f ? arith::AddFOp::create(nb, nl, acc, upd).getResult()
                      : arith::AddIOp::create(nb, nl, acc, upd).getResult();
              else if (reduction == "mul")
                r = f ? arith::MulFOp::create(nb, nl, acc, upd).getResult()
                      : arith::MulIOp::create(nb, nl, acc, upd).getResult();
              else if (reduction == "max")
                r = f ? arith::MaximumFOp::create(nb, nl, acc, upd).getResult()
                      : arith::MaxSIOp::create(nb, nl, acc, upd).getResult();
              else if (reduction == "min")
                r = f ? arith::MinimumFOp::create(nb, nl, acc, upd).getResult()
                      : arith::MinSIOp::create(nb, nl, acc, upd).getResult();
              linalg::YieldOp::create(
                  nb, nl,
                  ValueRange{arith::SelectOp::create(nb, nl, hit, r, acc)});
            })
            .getResult(0));
  }
  if (auto t = dyn_cast<TopKOp>(op))
    return lowerTopK(b, t, uns[0]);
  for (auto entry :
       {lowerMiscOp, lowerRecurrentOp, lowerStateOp, lowerSamplingOp,
        lowerSignalOp, lowerTrainingOp, lowerControlFlowOp})
    if (LoweringResult r = entry(b, op))
      return *r;
  return op->emitOpError("is not lowered to linalg yet"), failure();
}

struct ConvertKilnToLinalgPass
    : public kiln::impl::ConvertKilnToLinalgBase<ConvertKilnToLinalgPass> {
  using ConvertKilnToLinalgBase::ConvertKilnToLinalgBase;
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      // A region's kiln.yield goes with the op that owns the region.
      if (isa<KilnDialect>(op->getDialect()) && !isa<YieldOp>(op))
        ops.push_back(op);
    });
    // Record which operands were unsigned, then make the signature
    // signless (keeping the ONNX element type for the module signature).
    UnsignedOperands unsignedOperands;
    for (Operation *op : ops)
      for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
        if (isUnsignedElt(t)) {
          auto &flags = unsignedOperands[op];
          flags.resize(op->getNumOperands(), false);
          flags[i] = true;
        }
    func::FuncOp fn = getOperation();
    Builder builder(&getContext());
    auto keep = [](Type t) { return TypeAttr::get(getElementTypeOrSelf(t)); };
    for (BlockArgument arg : fn.getArguments())
      if (isUnsignedElt(arg.getType())) {
        fn.setArgAttr(arg.getArgNumber(), "kiln.element_type",
                      keep(arg.getType()));
        arg.setType(toSignless(arg.getType()));
      }
    SmallVector<Type> results(fn.getResultTypes());
    for (auto [i, t] : llvm::enumerate(results))
      if (isUnsignedElt(t)) {
        fn.setResultAttr(i, "kiln.element_type", keep(t));
        t = toSignless(t);
      }
    fn.setType(builder.getFunctionType(
        fn.getFunctionBody().front().getArgumentTypes(), results));

    IRRewriter rewriter(&getContext());
    DataDependentExtents extents;
    for (Operation *op : ops)
      if (failed(Lowering(rewriter, unsignedOperands, extents,
                          maxSplitConvGroups, conv1dAs2d)
                     .lower(op)))
        return signalPassFailure();
    if (!extents.empty())
      returnExtents(fn, extents);
  }

  /// Makes the function return its data-dependent results as their upper
  /// bounds, each with a `kiln.dynamic_dim` attribute (the dim whose extent
  /// depends on the data) and a `kiln.extent_result` one: the index of an
  /// extra tensor<i64> result, after all the others, that holds the valid
  /// extent.
  void returnExtents(func::FuncOp fn, const DataDependentExtents &extents) {
    auto ret =
        cast<func::ReturnOp>(fn.getFunctionBody().front().getTerminator());
    SmallVector<Value> operands(ret.getOperands());
    SmallVector<Type> types(ret.getOperandTypes());
    fn.setType(
        FunctionType::get(fn.getContext(), fn.getArgumentTypes(), types));
    Builder builder(fn.getContext());
    for (unsigned i = 0, e = types.size(); i < e; ++i) {
      auto it = extents.find(operands[i]);
      if (it == extents.end())
        continue;
      auto [extent, dim] = it->second;
      fn.setResultAttr(i, "kiln.dynamic_dim", builder.getI64IntegerAttr(dim));
      fn.setResultAttr(i, "kiln.extent_result",
                       builder.getI64IntegerAttr(operands.size()));
      if (failed(fn.insertResult(operands.size(), extent.getType(),
                                 builder.getDictionaryAttr({}))))
        llvm_unreachable("a function takes a new result");
      operands.push_back(extent);
    }
    ret->setOperands(operands);
  }
};

} // namespace
