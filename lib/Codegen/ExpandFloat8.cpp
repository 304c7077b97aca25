//===- ExpandFloat8.cpp - float8 conversions as integer arithmetic --------===//
//
// LLVM has no float8 types (MLIR gives them i8 storage), so conversions to
// and from them (`arith.truncf` to, `arith.extf` from f8E4M3FN,
// f8E4M3FNUZ, f8E5M2 and f8E5M2FNUZ, and the 4-bit f4E2M1FN, which
// saturates at 6) are rewritten on their bits, as
// ONNX's Cast without saturation (ml_dtypes) converts: round to nearest
// even, subnormals included; a magnitude past the largest finite value
// (after rounding) becomes infinity (E5M2) or NaN (the others, which have
// no infinity); NaN stays NaN; the FNUZ types have no negative zero (-0
// becomes 0) and one NaN, 0x80. ONNX's saturating Cast clamps before
// converting (kiln-to-linalg). Other types convert through f32 (exact from
// f16 and bf16).
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kiln {
#define GEN_PASS_DEF_KILNEXPANDFLOAT8
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A float8 format: mantissa bits, exponent bias, the largest finite
/// magnitude's code, and whether it is an FNUZ type (no -0, NaN 0x80) or
/// has infinities (E5M2).
struct Format {
  int mant = 0, bias = 0;
  uint32_t maxCode = 0;
  bool fnuz = false, inf = false;
  int bits = 8;           // the format's width: the sign is its top bit
  bool saturates = false; // overflow gives the largest value (f4E2M1FN)
};

std::optional<Format> formatOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return Format{3, 7, 0x7E, false, false};
  if (isa<Float8E4M3FNUZType>(t))
    return Format{3, 8, 0x7F, true, false};
  if (isa<Float8E5M2Type>(t))
    return Format{2, 15, 0x7B, false, true};
  if (isa<Float8E5M2FNUZType>(t))
    return Format{2, 16, 0x7F, true, false};
  // f4E2M1FN: no infinity or NaN; overflow saturates at 6 (0x7). A NaN
  // input is mapped before (ONNX's -0, kiln-to-linalg).
  if (isa<Float4E2M1FNType>(t))
    return Format{1, 1, 0x7, false, false, 4, true};
  return std::nullopt;
}

/// `t` (a scalar or vector type) with element type `elt`.
Type withElement(Type t, Type elt) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.clone(elt);
  return elt;
}

Type elementOf(Type t) { return getElementTypeOrSelf(t); }

/// Builds integer and float arithmetic on scalars or vectors of `shape`.
struct Builder {
  OpBuilder &b;
  Location loc;
  Type shape; // any type of the operands' shape
  Type i32() { return withElement(shape, b.getI32Type()); }
  Type f32() { return withElement(shape, b.getF32Type()); }
  Value c32(int64_t v) {
    Type t = i32();
    Attribute a = b.getI32IntegerAttr(static_cast<int32_t>(v));
    if (auto vt = dyn_cast<VectorType>(t))
      a = SplatElementsAttr::get(vt, a);
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(a));
  }
  Value cf(float v) {
    Type t = f32();
    Attribute a = b.getF32FloatAttr(v);
    if (auto vt = dyn_cast<VectorType>(t))
      a = SplatElementsAttr::get(vt, a);
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(a));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value shl(Value x, int64_t n) {
    return arith::ShLIOp::create(b, loc, x, c32(n));
  }
  Value shr(Value x, int64_t n) {
    return arith::ShRUIOp::create(b, loc, x, c32(n));
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value sel(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
};

/// `x` (f32 elements) as the bits of float8 `f` in i32 elements.
Value encode(Builder &u, Value x, const Format &f) {
  using P = arith::CmpIPredicate;
  OpBuilder &b = u.b;
  Value bits = arith::BitcastOp::create(b, u.loc, u.i32(), x);
  Value sign = u.shr(bits, 31);
  Value abs = u.band(bits, u.c32(0x7FFFFFFF));
  Value isNan = u.cmp(P::ugt, abs, u.c32(0x7F800000));
  Value isInf = u.cmp(P::eq, abs, u.c32(0x7F800000));
  // Normal in the target: keep `mant` bits of the mantissa, rounding to
  // nearest even (a carry moves into the exponent), then rebias.
  int shift = 23 - f.mant;
  Value odd = u.band(u.shr(abs, shift), u.c32(1));
  Value rounded =
      u.shr(u.add(u.add(abs, u.c32((1 << (shift - 1)) - 1)), odd), shift);
  Value normal = u.sub(rounded, u.c32(int64_t(127 - f.bias) << f.mant));
  // Below the smallest normal: a count of the subnormal quantum
  // 2^(1 - bias - mant), rounded to nearest even (exact scaling in f32).
  int emin = 1 - f.bias;
  Value small = u.cmp(P::ult, abs, u.c32(int64_t(emin + 127) << 23));
  Value absF = arith::BitcastOp::create(b, u.loc, u.f32(), abs);
  Value scaled = arith::MulFOp::create(
      b, u.loc, absF, u.cf(std::ldexp(1.0f, f.mant + f.bias - 1)));
  Value sub = arith::FPToSIOp::create(
      b, u.loc, u.i32(), math::RoundEvenOp::create(b, u.loc, scaled));
  Value code = u.sel(small, sub, normal);
  Value over = arith::OrIOp::create(b, u.loc, isInf,
                                    u.cmp(P::sgt, code, u.c32(f.maxCode)));
  Value signBit = u.shl(sign, f.bits - 1);
  if (f.saturates) {
    Value mag = u.sel(over, u.c32(f.maxCode), code);
    return u.bor(u.sel(isNan, u.c32(0), mag), signBit);
  }
  if (f.fnuz) {
    // No negative zero; NaN (also for overflow) is 0x80.
    Value signed_ =
        u.sel(u.cmp(P::eq, code, u.c32(0)), code, u.bor(code, signBit));
    Value bad = arith::OrIOp::create(b, u.loc, isNan, over);
    return u.sel(bad, u.c32(0x80), signed_);
  }
  // E5M2 overflows to infinity, E4M3FN to NaN (0x7F); NaN keeps its sign
  // (E5M2: the quiet NaN 0x7E).
  Value mag = u.sel(over, u.c32(f.inf ? 0x7C : 0x7F), code);
  mag = u.sel(isNan, u.c32(f.inf ? 0x7E : 0x7F), mag);
  return u.bor(mag, signBit);
}

/// The bits of float8 `f` (i32 elements) as f32 elements.
Value decode(Builder &u, Value bits, const Format &f) {
  using P = arith::CmpIPredicate;
  OpBuilder &b = u.b;
  Value sign = u.band(u.shr(bits, f.bits - 1), u.c32(1));
  Value mag = u.band(bits, u.c32((1 << (f.bits - 1)) - 1));
  Value exp = u.shr(mag, f.mant);
  Value mant = u.band(mag, u.c32((1 << f.mant) - 1));
  Value signBits = u.shl(sign, 31);
  Value normal =
      u.bor(u.bor(signBits, u.shl(u.add(exp, u.c32(127 - f.bias)), 23)),
            u.shl(mant, 23 - f.mant));
  // Subnormal: mant quanta of 2^(1 - bias - mant), with the sign.
  Value subF = arith::MulFOp::create(
      b, u.loc, arith::SIToFPOp::create(b, u.loc, u.f32(), mant),
      u.cf(std::ldexp(1.0f, 1 - f.bias - f.mant)));
  Value subBits =
      u.bor(arith::BitcastOp::create(b, u.loc, u.i32(), subF), signBits);
  Value out = u.sel(u.cmp(P::eq, exp, u.c32(0)), subBits, normal);
  Value nanBits = u.c32(0x7FC00000);
  if (f.saturates) {
    // No NaN or infinity.
  } else if (f.fnuz) {
    out = u.sel(u.cmp(P::eq, bits, u.c32(0x80)), nanBits, out);
  } else if (f.inf) {
    Value top = u.cmp(P::eq, exp, u.c32(31));
    Value infBits = u.bor(signBits, u.c32(0x7F800000));
    Value special =
        u.sel(u.cmp(P::eq, mant, u.c32(0)), infBits, u.bor(nanBits, signBits));
    out = u.sel(top, special, out);
  } else {
    out = u.sel(u.cmp(P::eq, mag, u.c32(0x7F)), u.bor(nanBits, signBits), out);
  }
  return arith::BitcastOp::create(b, u.loc, u.f32(), out);
}

/// `v` converted to element type `to` with arith.extf/truncf (f32 and
/// other IEEE types).
Value convert(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = elementOf(v.getType());
  if (from == to)
    return v;
  Type t = withElement(v.getType(), to);
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, t, v);
  return arith::TruncFOp::create(b, loc, t, v);
}

struct TruncToFloat8 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type to = elementOf(op.getType());
    std::optional<Format> f = formatOf(to);
    if (!f || formatOf(elementOf(op.getIn().getType())))
      return failure();
    Location loc = op.getLoc();
    Builder u{rewriter, loc, op.getType()};
    Value x = convert(rewriter, loc, op.getIn(), rewriter.getF32Type());
    Value code = encode(u, x, *f);
    Value byte = arith::TruncIOp::create(
        rewriter, loc,
        withElement(op.getType(), rewriter.getIntegerType(f->bits)), code);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), byte);
    return success();
  }
};

struct ExtFromFloat8 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<Format> f = formatOf(elementOf(op.getIn().getType()));
    if (!f || formatOf(elementOf(op.getType())))
      return failure();
    Location loc = op.getLoc();
    Builder u{rewriter, loc, op.getType()};
    Value byte = arith::BitcastOp::create(
        rewriter, loc,
        withElement(op.getType(), rewriter.getIntegerType(f->bits)),
        op.getIn());
    Value bits = arith::ExtUIOp::create(rewriter, loc, u.i32(), byte);
    Value x = decode(u, bits, *f);
    rewriter.replaceOp(op, convert(rewriter, loc, x, elementOf(op.getType())));
    return success();
  }
};

struct ExpandFloat8Pass
    : public kiln::impl::KilnExpandFloat8Base<ExpandFloat8Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncToFloat8, ExtFromFloat8>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
