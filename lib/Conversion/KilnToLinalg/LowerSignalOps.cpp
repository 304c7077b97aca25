//===- LowerSignalOps.cpp - TopK, windows, DFT, STFT, mel, Det to linalg --===//
//
// Part of convert-kiln-to-linalg (see KilnToLinalg.cpp).
//
// These lowerings favour simple formulations over fast ones: TopK ranks by
// counting, DFT and STFT are direct O(n^2) sums, Det runs an LU
// factorization one column per scf.for step.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "llvm/Support/MathExtras.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace kiln;

namespace kiln::lowering {
namespace {

using utils::IteratorType;

/// The single element of a scalar or one-element tensor.
Value extractScalar(OpBuilder &b, Location loc, Value t) {
  int64_t rank = cast<RankedTensorType>(t.getType()).getRank();
  SmallVector<Value> zeros;
  if (rank)
    zeros.assign(rank, arith::ConstantIndexOp::create(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, t, zeros);
}

/// A `linalg.index` read as an i64.
Value indexI64(OpBuilder &b, Location loc, int64_t dim) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                    linalg::IndexOp::create(b, loc, dim));
}

/// The float type to compute a result of element type `elt` in: f64 for
/// f64 results, f32 otherwise.
FloatType computeType(OpBuilder &b, Type elt) {
  return elt.isF64() ? cast<FloatType>(b.getF64Type())
                     : cast<FloatType>(b.getF32Type());
}

} // namespace

/// TopK by counting (the simple O(n^2) formulation): element j of a row
/// has rank r when r elements precede it in the order (greater, or smaller
/// when `largest` is 0; equal elements are ordered by index), and output
/// position r takes the element of rank r. The result is always sorted,
/// which also satisfies sorted = 0. `unsignedX`: x's integers are unsigned.
FailureOr<SmallVector<Value>> lowerTopK(OpBuilder &b, TopKOp op,
                                        bool unsignedX) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op.getX();
  auto xt = cast<RankedTensorType>(x.getType());
  auto vt = cast<RankedTensorType>(op.getValues().getType());
  auto it = cast<RankedTensorType>(op.getIndices().getType());
  int64_t rank = xt.getRank();
  FailureOr<int64_t> normAxis =
      normalizeAxis(op, intAttr(op, "axis", -1), rank);
  if (failed(normAxis))
    return failure();
  int64_t axis = *normAxis;
  if (vt.getRank() != rank || vt.getShape() != it.getShape() ||
      vt.getDimSize(axis) > xt.getDimSize(axis))
    return op.emitOpError("needs values and indices of one shape, the input's "
                          "but for at most its extent along the axis"),
           failure();
  bool largest = intAttr(op, "largest", 1) != 0;
  bool f = isFloat(xt);
  // Loops (dims of x, i): x_i precedes x_j, j being the axis loop.
  SmallVector<AffineExpr> other;
  for (int64_t d = 0; d < rank; ++d)
    other.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
  AffineMap id =
      AffineMap::getMultiDimIdentityMap(rank + 1, ctx).dropResult(rank);
  AffineMap swapped = AffineMap::get(rank + 1, 0, other, ctx);
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  auto rankType = RankedTensorType::get(xt.getShape(), b.getI64Type());
  Value zero = filled(b, loc, rankType, scalarConst(b, loc, b.getI64Type(), 0));
  Value ranks =
      linalg::GenericOp::create(
          b, loc, TypeRange{rankType}, ValueRange{x, x}, ValueRange{zero},
          {id, swapped, id}, iters,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value xj = a[0], xi = a[1];
            Value before, equal;
            if (f) {
              before =
                  arith::CmpFOp::create(nb, nl,
                                        largest ? arith::CmpFPredicate::OGT
                                                : arith::CmpFPredicate::OLT,
                                        xi, xj);
              equal = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                            xi, xj);
            } else {
              before = arith::CmpIOp::create(
                  nb, nl,
                  largest ? (unsignedX ? arith::CmpIPredicate::ugt
                                       : arith::CmpIPredicate::sgt)
                          : (unsignedX ? arith::CmpIPredicate::ult
                                       : arith::CmpIPredicate::slt),
                  xi, xj);
              equal = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                            xi, xj);
            }
            Value lower =
                arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult,
                                      linalg::IndexOp::create(nb, nl, rank),
                                      linalg::IndexOp::create(nb, nl, axis));
            Value precedes = arith::OrIOp::create(
                nb, nl, before, arith::AndIOp::create(nb, nl, equal, lower));
            Value one =
                arith::ExtUIOp::create(nb, nl, nb.getI64Type(), precedes);
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddIOp::create(nb, nl, a[2], one)});
          })
          .getResult(0);
  // Loops (dims of the result, j): position r of the axis takes x_j where
  // x_j's rank is r (exactly one j matches).
  Value values =
      filled(b, loc, vt, scalarConst(b, loc, vt.getElementType(), 0));
  Value indices =
      filled(b, loc, it, scalarConst(b, loc, it.getElementType(), 0));
  auto sel = linalg::GenericOp::create(
      b, loc, TypeRange{vt, it}, ValueRange{x, ranks},
      ValueRange{values, indices}, {swapped, swapped, id, id}, iters,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                          a[1], indexI64(nb, nl, axis));
        Value j =
            convertScalar(nb, nl, indexI64(nb, nl, rank), it.getElementType());
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, hit, a[0], a[2]),
                       arith::SelectOp::create(nb, nl, hit, j, a[3])});
      });
  return SmallVector<Value>{sel.getResult(0), sel.getResult(1)};
}

namespace {

/// A generalized cosine window (Hann, Hamming, Blackman):
/// w[n] = sum over m of (-1)^m coeffs[m] cos(2 pi m n / N), where N is the
/// run-time size (periodic) or size - 1 (symmetric).
FailureOr<SmallVector<Value>> lowerCosineWindow(OpBuilder &b, Operation *op,
                                                ArrayRef<double> coeffs) {
  Location loc = op->getLoc();
  auto rt = cast<RankedTensorType>(op->getResult(0).getType());
  if (rt.getRank() != 1)
    return op->emitOpError("needs a result of rank 1, got ") << rt, failure();
  Type elt = rt.getElementType();
  FloatType ct = computeType(b, elt);
  Value size =
      convertScalar(b, loc, extractScalar(b, loc, op->getOperand(0)), ct);
  if (intAttr(op, "periodic", 1) == 0)
    size = arith::SubFOp::create(b, loc, size, scalarConst(b, loc, ct, 1));
  Value step = arith::DivFOp::create(
      b, loc, scalarConst(b, loc, ct, 2 * llvm::numbers::pi), size);
  Value r = elementwise(
      b, loc, rt, ValueRange{},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        Value n = convertScalar(nb, nl, indexI64(nb, nl, 0), ct);
        Value theta = arith::MulFOp::create(nb, nl, n, step);
        Value w = scalarConst(nb, nl, ct, coeffs[0]);
        for (auto [m, c] : llvm::enumerate(coeffs)) {
          if (m == 0)
            continue;
          Value term = math::CosOp::create(
              nb, nl,
              arith::MulFOp::create(nb, nl, theta, scalarConst(nb, nl, ct, m)));
          term = arith::MulFOp::create(nb, nl, term,
                                       scalarConst(nb, nl, ct, m % 2 ? -c : c));
          w = arith::AddFOp::create(nb, nl, w, term);
        }
        return convertScalar(nb, nl, w, elt);
      });
  return SmallVector<Value>{r};
}

/// Builds the term of a complex DFT sum in f64: (xr + i xi)
/// e^(-+ i 2 pi m / n), m = (k * t) mod n; returns its real part when `imag`
/// is false, else its imaginary part (`inverse`: the positive exponent).
/// `xi` may be null (a real input); k, t and n are i64.
Value dftTerm(OpBuilder &b, Location loc, Value xr, Value xi, Value k, Value t,
              Value n, Value imag, bool inverse) {
  Type ft = b.getF64Type();
  xr = convertScalar(b, loc, xr, ft);
  if (xi)
    xi = convertScalar(b, loc, xi, ft);
  Value m =
      arith::RemUIOp::create(b, loc, arith::MulIOp::create(b, loc, k, t), n);
  Value theta = arith::DivFOp::create(
      b, loc,
      arith::MulFOp::create(b, loc, convertScalar(b, loc, m, ft),
                            scalarConst(b, loc, ft, 2 * llvm::numbers::pi)),
      convertScalar(b, loc, n, ft));
  Value cos = math::CosOp::create(b, loc, theta);
  Value sin = math::SinOp::create(b, loc, theta);
  if (inverse)
    sin = arith::NegFOp::create(b, loc, sin);
  // (xr + i xi)(cos - i sin) = xr cos + xi sin + i (xi cos - xr sin).
  Value re = arith::MulFOp::create(b, loc, xr, cos);
  Value im =
      arith::NegFOp::create(b, loc, arith::MulFOp::create(b, loc, xr, sin));
  if (xi) {
    re = arith::AddFOp::create(b, loc, re,
                               arith::MulFOp::create(b, loc, xi, sin));
    im = arith::AddFOp::create(b, loc, im,
                               arith::MulFOp::create(b, loc, xi, cos));
  }
  return arith::SelectOp::create(b, loc, imag, im, re);
}

/// `acc` (f64) converted to the element type of `rt`.
Value fromF64(OpBuilder &b, Location loc, Value acc, RankedTensorType rt) {
  if (rt.getElementType().isF64())
    return acc;
  return elementwise(b, loc, rt, ValueRange{acc},
                     [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                       return convertScalar(nb, nl, a[0], rt.getElementType());
                     });
}

/// Whether `rt` is the transform of `xt` along `axis`: complex (last dim
/// 2), its other dims x's, its axis extent free (N, or N / 2 + 1 one-sided);
/// with `irfft` (inverse and onesided) real (last dim 1) from a complex
/// half spectrum of n / 2 + 1 bins, n being the result's axis extent.
bool transformsAlong(RankedTensorType xt, RankedTensorType rt, int64_t axis,
                     bool irfft) {
  int64_t rank = xt.getRank();
  if (rt.getRank() != rank || !isa<FloatType>(rt.getElementType()) ||
      axis < 0 || axis >= rank - 1)
    return false;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis && rt.getDimSize(d) != xt.getDimSize(d))
      return false;
  if (irfft)
    return rt.getDimSize(rank - 1) == 1 && xt.getDimSize(rank - 1) == 2 &&
           xt.getDimSize(axis) == rt.getDimSize(axis) / 2 + 1;
  return rt.getDimSize(rank - 1) == 2;
}

/// DFT as a direct sum: y[k] = sum over t < min(n, N) of x[t]
/// e^(-i 2 pi k t / N) (divided by N and with the positive exponent when
/// `inverse`), N being dft_length (run time) or the axis extent. x is real
/// (trailing dim 1) or complex (trailing dim 2); y is complex, its axis
/// extent N or N / 2 + 1 (onesided) as the result type says. The sum is
/// taken in f64: the ONNX reference computes in double, and f32 sums leave
/// errors far above atol on the near-zero bins.
Value dftAlong(OpBuilder &b, DFTOp op, int64_t axis) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op.getInput();
  auto xt = cast<RankedTensorType>(x.getType());
  auto rt = cast<RankedTensorType>(op.getOutput().getType());
  int64_t rank = xt.getRank();
  bool complex = xt.getDimSize(rank - 1) == 2;
  bool inverse = intAttr(op, "inverse", 0) != 0;
  Type ft = b.getF64Type();
  auto accType = RankedTensorType::get(rt.getShape(), ft);
  int64_t extent = xt.getDimSize(axis);
  Value dftLength = getOnnxInput(op, 1);
  Value n = dftLength ? convertScalar(b, loc, extractScalar(b, loc, dftLength),
                                      b.getI64Type())
                      : scalarConst(b, loc, b.getI64Type(), extent);
  // Loops (dims of y, t); x is read at t along the axis, its real and
  // imaginary parts as two inputs.
  auto inMap = [&](int64_t part) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank - 1; ++d)
      exprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    exprs.push_back(getAffineConstantExpr(part, ctx));
    return AffineMap::get(rank + 1, 0, exprs, ctx);
  };
  SmallVector<Value> inputs = {x};
  SmallVector<AffineMap> maps = {inMap(0)};
  if (complex) {
    inputs.push_back(x);
    maps.push_back(inMap(1));
  }
  maps.push_back(
      AffineMap::getMultiDimIdentityMap(rank + 1, ctx).dropResult(rank));
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  Value acc = filled(b, loc, accType, scalarConst(b, loc, ft, 0));
  Value r =
      linalg::GenericOp::create(
          b, loc, TypeRange{accType}, inputs, ValueRange{acc}, maps, iters,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value t = indexI64(nb, nl, rank);
            Value imag = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::eq,
                linalg::IndexOp::create(nb, nl, rank - 1),
                arith::ConstantIndexOp::create(nb, nl, 1));
            Value term = dftTerm(nb, nl, a[0], complex ? a[1] : Value(),
                                 indexI64(nb, nl, axis), t, n, imag, inverse);
            if (inverse)
              term = arith::DivFOp::create(nb, nl, term,
                                           convertScalar(nb, nl, n, ft));
            if (dftLength) {
              Value inside = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::slt, t, n);
              term = arith::SelectOp::create(nb, nl, inside, term,
                                             scalarConst(nb, nl, ft, 0));
            }
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{arith::AddFOp::create(nb, nl, a.back(), term)});
          })
          .getResult(0);
  return fromF64(b, loc, r, rt);
}

/// The inverse of a one-sided transform (irfft): y[t] = (1/n) sum over
/// k < n of Re(X[k] e^(i 2 pi k t / n)), n the result's axis extent, the
/// bins past n / 2 the conjugates of X[n - k] (a real signal's spectrum is
/// Hermitian). One generic over (dims of y, k), x read with tensor.extract
/// at the folded bin; summed in f64.
Value irfftAlong(OpBuilder &b, DFTOp op, int64_t axis) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op.getInput();
  auto rt = cast<RankedTensorType>(op.getOutput().getType());
  int64_t rank = rt.getRank(), n = rt.getDimSize(axis);
  Type ft = b.getF64Type(), i64 = b.getI64Type();
  auto accType = RankedTensorType::get(rt.getShape(), ft);
  // The bins' extent comes from an operand over k alone (not read).
  Value bins = filled(b, loc, RankedTensorType::get({n}, ft),
                      scalarConst(b, loc, ft, 0));
  SmallVector<AffineExpr> out;
  for (int64_t d = 0; d < rank; ++d)
    out.push_back(getAffineDimExpr(d, ctx));
  SmallVector<IteratorType> iters(rank, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  Value acc = filled(b, loc, accType, scalarConst(b, loc, ft, 0));
  Value r =
      linalg::GenericOp::create(
          b, loc, TypeRange{accType}, ValueRange{bins}, ValueRange{acc},
          {AffineMap::get(rank + 1, 0, {getAffineDimExpr(rank, ctx)}, ctx),
           AffineMap::get(rank + 1, 0, out, ctx)},
          iters,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value k = linalg::IndexOp::create(nb, nl, rank);
            Value nIdx = arith::ConstantIndexOp::create(nb, nl, n);
            Value upper = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::ugt, k,
                arith::ConstantIndexOp::create(nb, nl, n / 2));
            Value bin = arith::SelectOp::create(
                nb, nl, upper, arith::SubIOp::create(nb, nl, nIdx, k), k);
            SmallVector<Value> at;
            for (int64_t d = 0; d < rank - 1; ++d)
              at.push_back(d == axis ? bin
                                     : linalg::IndexOp::create(nb, nl, d));
            at.push_back(arith::ConstantIndexOp::create(nb, nl, 0));
            Value xr = tensor::ExtractOp::create(nb, nl, x, at);
            at.back() = arith::ConstantIndexOp::create(nb, nl, 1);
            Value xi = tensor::ExtractOp::create(nb, nl, x, at);
            xr = convertScalar(nb, nl, xr, ft);
            xi = convertScalar(nb, nl, xi, ft);
            xi = arith::SelectOp::create(nb, nl, upper,
                                         arith::NegFOp::create(nb, nl, xi), xi);
            // Re((xr + i xi)(cos + i sin)) = xr cos - xi sin, theta =
            // 2 pi ((k t) mod n) / n.
            Value m = arith::RemUIOp::create(
                nb, nl,
                arith::MulIOp::create(
                    nb, nl, arith::IndexCastOp::create(nb, nl, i64, k),
                    indexI64(nb, nl, axis)),
                scalarConst(nb, nl, i64, n));
            Value theta = arith::MulFOp::create(
                nb, nl, convertScalar(nb, nl, m, ft),
                scalarConst(nb, nl, ft, 2 * llvm::numbers::pi / n));
            Value term = arith::SubFOp::create(
                nb, nl,
                arith::MulFOp::create(nb, nl, xr,
                                      math::CosOp::create(nb, nl, theta)),
                arith::MulFOp::create(nb, nl, xi,
                                      math::SinOp::create(nb, nl, theta)));
            term =
                arith::DivFOp::create(nb, nl, term, scalarConst(nb, nl, ft, n));
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[1], term)});
          })
          .getResult(0);
  return fromF64(b, loc, r, rt);
}

/// DFT (see dftAlong and irfftAlong). A run-time axis (opset 20's input)
/// is decided at run time among the axes along which the result type is
/// the input's transform: an scf.if per such axis, NaNs for any other
/// (which the result's shape rules out).
FailureOr<SmallVector<Value>> lowerDFT(OpBuilder &b, DFTOp op) {
  Location loc = op.getLoc();
  Value x = op.getInput();
  auto xt = cast<RankedTensorType>(x.getType());
  auto rt = cast<RankedTensorType>(op.getOutput().getType());
  int64_t rank = xt.getRank();
  if (rank < 2 ||
      (xt.getDimSize(rank - 1) != 1 && xt.getDimSize(rank - 1) != 2))
    return op.emitOpError("needs an input whose last dim is 1 (real) or 2 "
                          "(complex), got ")
               << xt,
           failure();
  bool irfft = intAttr(op, "inverse", 0) != 0 && intAttr(op, "onesided", 0);
  if (irfft && getOnnxInput(op, 1))
    return op.emitOpError("an inverse one-sided transform with dft_length "
                          "is not lowered yet"),
           failure();
  auto along = [&](int64_t axis) {
    return irfft ? irfftAlong(b, op, axis) : dftAlong(b, op, axis);
  };
  Value axisV = getOnnxInput(op, 2);
  std::optional<SmallVector<int64_t>> c =
      axisV ? getConstantInts(axisV) : SmallVector<int64_t>{-2};
  if (c) {
    if (c->size() != 1)
      return op.emitOpError("needs a scalar axis"), failure();
    int64_t axis = c->front() < 0 ? c->front() + rank : c->front();
    if (axis < 0 || axis >= rank - 1)
      return op.emitOpError("axis ")
                 << c->front() << " is out of range for an input of rank "
                 << rank,
             failure();
    if (!transformsAlong(xt, rt, axis, irfft))
      return op.emitOpError("result type ")
                 << rt << " is not the "
                 << (irfft ? "inverse one-sided" : "complex")
                 << " transform of " << xt << " along axis " << axis,
             failure();
    return SmallVector<Value>{along(axis)};
  }
  SmallVector<int64_t> candidates;
  for (int64_t a = 0; a < rank - 1; ++a)
    if (transformsAlong(xt, rt, a, irfft))
      candidates.push_back(a);
  if (candidates.empty())
    return op.emitOpError("result type ")
               << rt << " is not the transform of " << xt << " along any axis",
           failure();
  Value axis =
      convertScalar(b, loc, extractScalar(b, loc, axisV), b.getI64Type());
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, axis,
                            scalarConst(b, loc, axis.getType(), 0));
  axis = arith::SelectOp::create(
      b, loc, negative,
      arith::AddIOp::create(b, loc, axis,
                            scalarConst(b, loc, axis.getType(), rank)),
      axis);
  std::function<Value(size_t)> build = [&](size_t i) -> Value {
    if (i == candidates.size())
      return filled(b, loc, rt,
                    scalarConst(b, loc, rt.getElementType(),
                                std::numeric_limits<double>::quiet_NaN()));
    Value is = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, axis,
        scalarConst(b, loc, axis.getType(), candidates[i]));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{rt}, is,
                                  /*addThenBlock=*/true, /*addElseBlock=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, along(candidates[i]));
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, build(i + 1));
    return ifOp.getResult(0);
  };
  return SmallVector<Value>{build(0)};
}

/// STFT as a direct sum per frame: y[b, f, k] = sum over t < L of
/// x[b, f * frame_step + t] w[t] e^(-i 2 pi k t / L), L being the window's
/// length or frame_length (run time; the sum then runs over the signal's
/// length, masked to t < L), w 1 without a window. Summed in f64 as DFT
/// is.
FailureOr<SmallVector<Value>> lowerSTFT(OpBuilder &b, STFTOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op.getSignal();
  auto xt = cast<RankedTensorType>(x.getType());
  auto rt = cast<RankedTensorType>(op.getOutput().getType());
  if (xt.getRank() != 3 || (xt.getDimSize(2) != 1 && xt.getDimSize(2) != 2))
    return op.emitOpError("needs a signal of shape [batch, length, 1 or 2], "
                          "got ")
               << xt,
           failure();
  if (rt.getRank() != 4 || rt.getDimSize(0) != xt.getDimSize(0) ||
      rt.getDimSize(3) != 2 || !isa<FloatType>(rt.getElementType()))
    return op.emitOpError("needs a result of shape [batch, frames, bins, 2], "
                          "got ")
               << rt,
           failure();
  Value window = getOnnxInput(op, 2), frameLength = getOnnxInput(op, 3);
  if (!window && !frameLength)
    return op.emitOpError("needs a window or a frame_length"), failure();
  Type ft = b.getF64Type(), i64 = b.getI64Type();
  auto accType = RankedTensorType::get(rt.getShape(), ft);
  int64_t signalLength = xt.getDimSize(1);
  // The sum's static extent, and L where it is only known at run time.
  int64_t bound = signalLength;
  Value length;
  if (window) {
    bound = cast<RankedTensorType>(window.getType()).getDimSize(0);
  } else if (auto c = getConstantInts(frameLength); c && c->size() == 1) {
    bound = c->front();
  } else {
    length = convertScalar(b, loc, extractScalar(b, loc, frameLength), i64);
  }
  Value n = length ? length : scalarConst(b, loc, i64, bound);
  Value step =
      convertScalar(b, loc, extractScalar(b, loc, op.getFrameStep()), i64);
  // Loops (b, f, k, part, t); the window (or an empty tensor giving t its
  // extent) is the one input.
  Value tInput = window
                     ? window
                     : tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{bound},
                                               rt.getElementType())
                           .getResult();
  SmallVector<AffineMap> maps = {
      AffineMap::get(5, 0, {getAffineDimExpr(4, ctx)}, ctx),
      AffineMap::getMultiDimIdentityMap(5, ctx).dropResult(4)};
  SmallVector<IteratorType> iters(4, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  Value acc = filled(b, loc, accType, scalarConst(b, loc, ft, 0));
  bool complex = xt.getDimSize(2) == 2;
  Value r =
      linalg::GenericOp::create(
          b, loc, TypeRange{accType}, ValueRange{tInput}, ValueRange{acc}, maps,
          iters,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value t = indexI64(nb, nl, 4);
            // The sample, clamped into the signal so that masked terms
            // never read out of bounds.
            Value pos = arith::AddIOp::create(
                nb, nl,
                arith::MulIOp::create(nb, nl, indexI64(nb, nl, 1), step), t);
            pos = arith::MinSIOp::create(
                nb, nl, pos, scalarConst(nb, nl, i64, signalLength - 1));
            Value posIdx =
                arith::IndexCastOp::create(nb, nl, nb.getIndexType(), pos);
            Value batch = linalg::IndexOp::create(nb, nl, 0);
            auto sample = [&](int64_t part) -> Value {
              Value s = tensor::ExtractOp::create(
                  nb, nl, x,
                  ValueRange{batch, posIdx,
                             arith::ConstantIndexOp::create(nb, nl, part)});
              s = convertScalar(nb, nl, s, ft);
              return window ? arith::MulFOp::create(
                                  nb, nl, s, convertScalar(nb, nl, a[0], ft))
                            : s;
            };
            Value xr = sample(0), xi = complex ? sample(1) : Value();
            Value imag = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::eq,
                linalg::IndexOp::create(nb, nl, 3),
                arith::ConstantIndexOp::create(nb, nl, 1));
            Value term = dftTerm(nb, nl, xr, xi, indexI64(nb, nl, 2), t, n,
                                 imag, /*inverse=*/false);
            if (length) {
              Value inside = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::slt, t, n);
              term = arith::SelectOp::create(nb, nl, inside, term,
                                             scalarConst(nb, nl, ft, 0));
            }
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, a[1], term)});
          })
          .getResult(0);
  return SmallVector<Value>{fromF64(b, loc, r, rt)};
}

/// MelWeightMatrix as the ONNX reference computes it: num_mel_bins + 2
/// points evenly spaced on the mel scale between the edges (the step being
/// the span over num_mel_bins + 2), mapped to spectrogram bins
/// floor((dft_length + 1) hz / sample_rate); column i is a triangle rising
/// from bin l = p[i] to c = p[i + 1] and falling to h = p[i + 2] (1 at c
/// when l = c). Computed per element in f64.
FailureOr<SmallVector<Value>> lowerMelWeightMatrix(OpBuilder &b,
                                                   MelWeightMatrixOp op) {
  Location loc = op.getLoc();
  auto rt = cast<RankedTensorType>(op.getOutput().getType());
  if (rt.getRank() != 2)
    return op.emitOpError("needs a result of rank 2, got ") << rt, failure();
  Type elt = rt.getElementType();
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  auto scalarAs = [&](Value v, Type t) {
    return convertScalar(b, loc, extractScalar(b, loc, v), t);
  };
  Value numMel = scalarAs(op.getNumMelBins(), f64);
  Value dftLength = scalarAs(op.getDftLength(), f64);
  Value rate = scalarAs(op.getSampleRate(), f64);
  auto cst = [&](OpBuilder &nb, Location nl, double v) {
    return scalarConst(nb, nl, f64, v);
  };
  // mel(hz) = 2595 log10(1 + hz / 700).
  auto toMel = [&](Value hz) -> Value {
    Value l = math::Log1pOp::create(
        b, loc, arith::DivFOp::create(b, loc, hz, cst(b, loc, 700)));
    return arith::MulFOp::create(b, loc, l,
                                 cst(b, loc, 2595 / llvm::numbers::ln10));
  };
  Value lowMel = toMel(scalarAs(op.getLowerEdgeHertz(), f64));
  Value highMel = toMel(scalarAs(op.getUpperEdgeHertz(), f64));
  Value melStep = arith::DivFOp::create(
      b, loc, arith::SubFOp::create(b, loc, highMel, lowMel),
      arith::AddFOp::create(b, loc, numMel, cst(b, loc, 2)));
  Value r = elementwise(
      b, loc, rt, ValueRange{},
      [&](OpBuilder &nb, Location nl, ValueRange) -> Value {
        Value j = indexI64(nb, nl, 0), i = indexI64(nb, nl, 1);
        // The spectrogram bin of mel point i + offset.
        auto point = [&](int64_t offset) -> Value {
          Value p =
              convertScalar(nb, nl,
                            arith::AddIOp::create(
                                nb, nl, i, scalarConst(nb, nl, i64, offset)),
                            f64);
          Value mel = arith::AddFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, p, melStep), lowMel);
          Value hz = arith::MulFOp::create(
              nb, nl,
              math::ExpM1Op::create(
                  nb, nl,
                  arith::MulFOp::create(
                      nb, nl, mel, cst(nb, nl, llvm::numbers::ln10 / 2595))),
              cst(nb, nl, 700));
          Value scaled = arith::MulFOp::create(
              nb, nl, arith::AddFOp::create(nb, nl, dftLength, cst(nb, nl, 1)),
              hz);
          return convertScalar(
              nb, nl,
              math::FloorOp::create(
                  nb, nl, arith::DivFOp::create(nb, nl, scaled, rate)),
              i64);
        };
        Value l = point(0), c = point(1), h = point(2);
        auto cmp = [&](arith::CmpIPredicate p, Value u, Value v) -> Value {
          return arith::CmpIOp::create(nb, nl, p, u, v);
        };
        auto ratio = [&](Value num, Value den) -> Value {
          return arith::DivFOp::create(nb, nl, convertScalar(nb, nl, num, f64),
                                       convertScalar(nb, nl, den, f64));
        };
        using P = arith::CmpIPredicate;
        auto both = [&](Value u, Value v) -> Value {
          return arith::AndIOp::create(nb, nl, u, v);
        };
        // Falling edge c <= j < h (written last, so it wins at j = c).
        Value falling = both(cmp(P::sle, c, j), cmp(P::slt, j, h));
        Value fallValue = ratio(arith::SubIOp::create(nb, nl, h, j),
                                arith::SubIOp::create(nb, nl, h, c));
        // Rising edge l <= j <= c when l < c; 1 at j = c when l = c.
        Value rising =
            both(both(cmp(P::sle, l, j), cmp(P::sle, j, c)), cmp(P::slt, l, c));
        Value riseValue = ratio(arith::SubIOp::create(nb, nl, j, l),
                                arith::SubIOp::create(nb, nl, c, l));
        Value peak = both(cmp(P::eq, l, c), cmp(P::eq, j, c));
        Value w = arith::SelectOp::create(nb, nl, peak, cst(nb, nl, 1),
                                          cst(nb, nl, 0));
        w = arith::SelectOp::create(nb, nl, rising, riseValue, w);
        w = arith::SelectOp::create(nb, nl, falling, fallValue, w);
        return convertScalar(nb, nl, w, elt);
      });
  return SmallVector<Value>{r};
}

/// Det of [..., M, M] by LU with partial pivoting, the batch flattened to
/// B: an scf.for over the columns k carries the matrices [B, M, M] and the
/// determinants [B]. Step k picks the pivot row p (the largest |a[i][k]|
/// for i >= k, the lowest such i), multiplies the determinant by a[p][k]
/// (negated when p != k), and builds the next matrices with rows k and p
/// swapped and column k eliminated below the diagonal (a zero pivot leaves
/// the rows as they are: the determinant is already 0).
FailureOr<SmallVector<Value>> lowerDet(OpBuilder &b, DetOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  Value x = op.getX();
  auto xt = cast<RankedTensorType>(x.getType());
  auto rt = cast<RankedTensorType>(op.getY().getType());
  int64_t rank = xt.getRank();
  if (rank < 2 || xt.getDimSize(rank - 1) != xt.getDimSize(rank - 2) ||
      rt.getShape() != xt.getShape().drop_back(2) || !isFloat(xt))
    return op.emitOpError("needs float square matrices [..., M, M] and a "
                          "result of the batch shape, got ")
               << xt << " -> " << rt,
           failure();
  Type elt = xt.getElementType();
  int64_t m = xt.getDimSize(rank - 1);
  int64_t batch = rt.getNumElements();
  auto matType = RankedTensorType::get({batch, m, m}, elt);
  auto detType = RankedTensorType::get({batch}, elt);
  auto pivType = RankedTensorType::get({batch}, b.getI64Type());
  Value mats = reshapeTo(b, loc, x, matType);
  Value dets = filled(b, loc, detType, scalarConst(b, loc, elt, 1));
  auto loop = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0),
      arith::ConstantIndexOp::create(b, loc, m),
      arith::ConstantIndexOp::create(b, loc, 1), ValueRange{mats, dets},
      [&](OpBuilder &lb, Location ll, Value k, ValueRange carried) {
        Value a = carried[0], det = carried[1];
        Value kI64 = arith::IndexCastOp::create(lb, ll, lb.getI64Type(), k);
        // The pivot row: loops (b, i), an empty [M] giving i its extent.
        Value rows = tensor::EmptyOp::create(lb, ll, ArrayRef<int64_t>{m}, elt);
        Value best = filled(lb, ll, detType, scalarConst(lb, ll, elt, -1));
        Value bestRow = filled(lb, ll, pivType, kI64);
        auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
        Value piv =
            linalg::GenericOp::create(
                lb, ll, TypeRange{detType, pivType}, ValueRange{rows},
                ValueRange{best, bestRow},
                {AffineMap::get(2, 0, {d(1)}, ctx),
                 AffineMap::get(2, 0, {d(0)}, ctx),
                 AffineMap::get(2, 0, {d(0)}, ctx)},
                {IteratorType::parallel, IteratorType::reduction},
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  Value i = linalg::IndexOp::create(nb, nl, 1);
                  Value v = math::AbsFOp::create(
                      nb, nl,
                      tensor::ExtractOp::create(
                          nb, nl, a,
                          ValueRange{linalg::IndexOp::create(nb, nl, 0), i,
                                     k}));
                  Value better = arith::AndIOp::create(
                      nb, nl,
                      arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::uge,
                                            i, k),
                      arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                            v, args[1]));
                  Value iI64 =
                      arith::IndexCastOp::create(nb, nl, nb.getI64Type(), i);
                  linalg::YieldOp::create(
                      nb, nl,
                      ValueRange{
                          arith::SelectOp::create(nb, nl, better, v, args[1]),
                          arith::SelectOp::create(nb, nl, better, iI64,
                                                  args[2])});
                })
                .getResult(1);
        AffineMap batchOf = AffineMap::get(3, 0, {d(0)}, ctx);
        // The pivot of batch b, read from the current matrices.
        auto pivotOf = [&](OpBuilder &nb, Location nl, Value bi, Value p) {
          return tensor::ExtractOp::create(nb, nl, a, ValueRange{bi, p, k})
              .getResult();
        };
        auto asIndex = [](OpBuilder &nb, Location nl, Value v) -> Value {
          return arith::IndexCastOp::create(nb, nl, nb.getIndexType(), v);
        };
        // The determinants are updated in place (outs = the carried value)
        // so that the loop's yields bufferize to its iter_args.
        AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);
        Value nextDet =
            linalg::GenericOp::create(
                lb, ll, TypeRange{detType}, ValueRange{piv}, ValueRange{det},
                {id1, id1}, {IteratorType::parallel},
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  Value p = asIndex(nb, nl, args[0]);
                  Value pivot =
                      pivotOf(nb, nl, linalg::IndexOp::create(nb, nl, 0), p);
                  Value swapped = arith::CmpIOp::create(
                      nb, nl, arith::CmpIPredicate::ne, p, k);
                  pivot = arith::SelectOp::create(
                      nb, nl, swapped, arith::NegFOp::create(nb, nl, pivot),
                      pivot);
                  linalg::YieldOp::create(nb, nl,
                                          ValueRange{arith::MulFOp::create(
                                              nb, nl, args[1], pivot)});
                })
                .getResult(0);
        Value nextA = elementwise(
            lb, ll, matType, ValueRange{piv},
            [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
              Value bi = linalg::IndexOp::create(nb, nl, 0);
              Value i = linalg::IndexOp::create(nb, nl, 1);
              Value j = linalg::IndexOp::create(nb, nl, 2);
              Value p = asIndex(nb, nl, args[0]);
              auto eq = [&](Value u, Value v) -> Value {
                return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                             u, v);
              };
              // Row i after the swap of rows k and p.
              Value src = arith::SelectOp::create(
                  nb, nl, eq(i, k), p,
                  arith::SelectOp::create(nb, nl, eq(i, p), k, i));
              Value v =
                  tensor::ExtractOp::create(nb, nl, a, ValueRange{bi, src, j});
              Value pivot = pivotOf(nb, nl, bi, p);
              Value below = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::ugt, i, k);
              Value usable = arith::AndIOp::create(
                  nb, nl, below,
                  arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::ONE,
                                        pivot, scalarConst(nb, nl, elt, 0)));
              Value factor = arith::DivFOp::create(
                  nb, nl, pivotOf(nb, nl, bi, src), pivot);
              Value pivotRow =
                  tensor::ExtractOp::create(nb, nl, a, ValueRange{bi, p, j});
              Value eliminated = arith::SubFOp::create(
                  nb, nl, v, arith::MulFOp::create(nb, nl, factor, pivotRow));
              return arith::SelectOp::create(nb, nl, usable, eliminated, v);
            },
            {batchOf});
        // The new matrices read the old ones throughout, so they are built
        // apart and copied back.
        Value copied = linalg::CopyOp::create(lb, ll, nextA, a).getResult(0);
        scf::YieldOp::create(lb, ll, ValueRange{copied, nextDet});
      });
  return SmallVector<Value>{reshapeTo(b, loc, loop.getResult(1), rt)};
}

} // namespace

LoweringResult lowerSignalOp(OpBuilder &b, Operation *op) {
  if (isa<HannWindowOp>(op))
    return lowerCosineWindow(b, op, {0.5, 0.5});
  if (isa<HammingWindowOp>(op))
    return lowerCosineWindow(b, op, {25.0 / 46.0, 21.0 / 46.0});
  if (isa<BlackmanWindowOp>(op))
    return lowerCosineWindow(b, op, {0.42, 0.5, 0.08});
  if (auto d = dyn_cast<DFTOp>(op))
    return lowerDFT(b, d);
  if (auto s = dyn_cast<STFTOp>(op))
    return lowerSTFT(b, s);
  if (auto m = dyn_cast<MelWeightMatrixOp>(op))
    return lowerMelWeightMatrix(b, m);
  if (auto d = dyn_cast<DetOp>(op))
    return lowerDet(b, d);
  return std::nullopt;
}

} // namespace kiln::lowering
