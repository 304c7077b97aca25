//===- FoldDequantize.cpp - float8 contractions of dequantized operands ---===//
//
// A model quantized to float8 multiplies dequantized operands in f32:
// (extf(q) - extf(zp)) * s, q float8 e4m3, zp zero. Where both operands
// of a contraction are such (directly, or through zero pads and
// transposes: a convolution's padded input, its weights reordered
// channels-last), the contraction of q itself (extended to f32 in its
// body: exact products, f32 sums; what the fp8 tensor cores compute)
// times both scales gives the same values up to the order of the sums.
//
// The float8 values travel as their bytes (i8 tensors, bitcast back to
// float8 in the contraction's body): the tiles stage and load them as the
// int8 tiles do. kiln-gpu-contractions{fp8} runs the contraction on the
// fp8 tensor cores.
//
//===----------------------------------------------------------------------===//

#include "../ConvLayout.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUFOLDDEQUANTIZE
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// A contraction operand that is a DequantizeLinear of float8 e4m3 values
/// with a zero zero point, then zero pads and transposes (`chain`, from
/// the dequantized tensor out): `q`, its scale `s` read through
/// `scaleMap` (of the dequantized tensor's dims).
struct Dequantized {
  Value q, s;
  AffineMap scaleMap;
  SmallVector<Operation *> chain;
};

/// Whether `v` is a float8 constant whose every element is zero (+0 or -0:
/// the bytes 0x00 and 0x80).
bool zeroConstant(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst || !isa<Float8E4M3FNType>(getElementTypeOrSelf(v.getType())))
    return false;
  if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      dense && dense.isSplat())
    return dense.getSplatValue<APFloat>().isZero();
  std::optional<ArrayRef<char>> bytes = kiln::rawConstantBytes(cst.getValue());
  return bytes && llvm::all_of(*bytes, [](char c) { return !(c & 0x7f); });
}

/// `v` as a dequantized float8 operand (see Dequantized), if it is one.
std::optional<Dequantized> dequantized(Value v) {
  Dequantized d;
  while (true) {
    if (auto pad = v.getDefiningOp<tensor::PadOp>()) {
      Value padValue = pad.getConstantPaddingValue();
      if (!padValue || !matchPattern(padValue, m_AnyZeroFloat()) ||
          ShapedType::isDynamicShape(pad.getStaticLow()) ||
          ShapedType::isDynamicShape(pad.getStaticHigh()))
        return std::nullopt;
      d.chain.push_back(pad);
      v = pad.getSource();
    } else if (auto tr = v.getDefiningOp<linalg::TransposeOp>()) {
      d.chain.push_back(tr);
      v = tr.getInput();
    } else {
      break;
    }
  }
  std::reverse(d.chain.begin(), d.chain.end());
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 3 || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0 || !g.hasPureTensorSemantics())
    return std::nullopt;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps[0].isIdentity() || !maps[3].isIdentity() ||
      !maps[1].isProjectedPermutation())
    return std::nullopt;
  // yield (extf(q) - extf(zp)) * s
  Block *body = g.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto mul = yield.getOperand(0).getDefiningOp<arith::MulFOp>();
  if (!mul || std::distance(body->begin(), body->end()) != 5)
    return std::nullopt;
  Value sArg = body->getArgument(1);
  Value diff = mul.getLhs() == sArg   ? mul.getRhs()
               : mul.getRhs() == sArg ? mul.getLhs()
                                      : Value();
  auto sub = diff ? diff.getDefiningOp<arith::SubFOp>() : nullptr;
  auto extQ = sub ? sub.getLhs().getDefiningOp<arith::ExtFOp>() : nullptr;
  auto extZ = sub ? sub.getRhs().getDefiningOp<arith::ExtFOp>() : nullptr;
  if (!extQ || !extZ || extQ.getIn() != body->getArgument(0) ||
      extZ.getIn() != body->getArgument(2) ||
      !isa<Float8E4M3FNType>(extQ.getIn().getType()) ||
      !zeroConstant(g.getDpsInputs()[2]) ||
      !cast<ShapedType>(g.getDpsInputs()[1].getType()).getElementType().isF32())
    return std::nullopt;
  d.q = g.getDpsInputs()[0];
  d.s = g.getDpsInputs()[1];
  d.scaleMap = maps[1];
  return d;
}

/// The scale of operand `i` of `op` (read through `dq.scaleMap` of the
/// dequantized tensor's dims) as a map of the output's dims; null where it
/// depends on a dim the output does not have (a reduction) or on a padded
/// dim.
AffineMap scaleOnOutput(linalg::LinalgOp op, unsigned i,
                        const Dequantized &dq) {
  MLIRContext *ctx = op.getContext();
  AffineMap operandMap = op.getIndexingMapsArray()[i];
  AffineMap outMap = op.getIndexingMapsArray().back();
  if (!outMap.isProjectedPermutation())
    return {};
  // Where each dim of the dequantized tensor lies in the operand, through
  // the chain; -1 where a pad moves it.
  SmallVector<int64_t> pos =
      llvm::to_vector(llvm::seq<int64_t>(0, dq.scaleMap.getNumDims()));
  for (Operation *o : dq.chain) {
    if (auto tr = dyn_cast<linalg::TransposeOp>(o)) {
      ArrayRef<int64_t> perm = tr.getPermutation();
      for (int64_t &p : pos)
        if (p >= 0)
          p = llvm::find(perm, p) - perm.begin();
    } else {
      auto pad = cast<tensor::PadOp>(o);
      for (int64_t &p : pos)
        if (p >= 0 && (pad.getStaticLow()[p] || pad.getStaticHigh()[p]))
          p = -1;
    }
  }
  SmallVector<AffineExpr> results;
  for (AffineExpr e : dq.scaleMap.getResults()) {
    int64_t p = pos[cast<AffineDimExpr>(e).getPosition()];
    if (p < 0)
      return {};
    auto loop = dyn_cast<AffineDimExpr>(operandMap.getResult(p));
    if (!loop)
      return {};
    std::optional<unsigned> r =
        outMap.getResultPosition(getAffineDimExpr(loop.getPosition(), ctx));
    if (!r)
      return {};
    results.push_back(getAffineDimExpr(*r, ctx));
  }
  return AffineMap::get(outMap.getNumResults(), 0, results, ctx);
}

/// An i8 constant of `type` holding `bytes`.
Value bytesConstant(OpBuilder &b, Location loc, RankedTensorType type,
                    ArrayRef<char> bytes) {
  auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(bytes);
  return arith::ConstantOp::create(
      b, loc, type,
      DenseResourceElementsAttr::get(type, "kiln_float8_bytes",
                                     std::move(blob)));
}

/// A copy of `g` (one result, its init not read) right after it, of
/// result type `type` and indexing maps `maps`: the same inputs and body,
/// yielding, with `bits`, the i8 bits of its value.
Value copyGeneric(OpBuilder &b, Location loc, linalg::GenericOp g,
                  RankedTensorType type, ArrayRef<AffineMap> maps, bool bits) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(g);
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto copy = linalg::GenericOp::create(
      b, loc, TypeRange{type}, g.getDpsInputs(), ValueRange{empty}, maps,
      g.getIteratorTypesArray(), [](OpBuilder &, Location, ValueRange) {});
  IRMapping m;
  Block *body = g.getBody();
  Block *newBody = copy.getBody();
  for (auto [from, to] :
       llvm::zip(body->getArguments(), newBody->getArguments()))
    m.map(from, to);
  OpBuilder nb = OpBuilder::atBlockEnd(newBody);
  for (Operation &o : body->without_terminator())
    nb.clone(o, m);
  Value v = m.lookupOrDefault(body->getTerminator()->getOperand(0));
  if (bits)
    v = arith::BitcastOp::create(nb, loc, nb.getI8Type(), v);
  linalg::YieldOp::create(nb, loc, ValueRange{v});
  return copy.getResult(0);
}

/// Whether `g` reads an i8 tensor back as float8 (asBytes' view): one
/// input, identity maps, a body that bitcasts.
bool isBytesView(linalg::GenericOp g) {
  if (!g || g.getNumDpsInputs() != 1 || g->getNumResults() != 1 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      !getElementTypeOrSelf(g.getDpsInputs()[0].getType()).isInteger(8))
    return false;
  Block *body = g.getBody();
  auto cast = dyn_cast<arith::BitcastOp>(&body->front());
  return cast && cast.getIn() == body->getArgument(0) &&
         body->getTerminator()->getOperand(0) == cast.getResult();
}

/// The float8 tensor `q` as its bytes (an i8 tensor): a constant's bytes
/// as an i8 constant; a generic's result from a copy of it that yields
/// the bits, which then stands for it: its other users (the
/// DequantizeLinear of a residual) read the bytes back as float8 through
/// an elementwise bitcast, so that the tensor kept in memory is the one
/// byte an element the product reads, and each reader dequantizes it as
/// it loads it. Null otherwise.
Value asBytes(OpBuilder &b, Location loc, Value q) {
  auto qt = cast<RankedTensorType>(q.getType());
  auto bt = RankedTensorType::get(qt.getShape(), b.getI8Type());
  if (auto cst = q.getDefiningOp<arith::ConstantOp>()) {
    std::optional<ArrayRef<char>> bytes =
        kiln::rawConstantBytes(cst.getValue());
    if (!bytes || (int64_t)bytes->size() != qt.getNumElements())
      return {};
    return bytesConstant(b, loc, bt, *bytes);
  }
  auto g = q.getDefiningOp<linalg::GenericOp>();
  if (isBytesView(g))
    return g.getDpsInputs()[0];
  if (!g || g->getNumResults() != 1 || !g.hasPureTensorSemantics() ||
      g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)))
    return {};
  Value bytes =
      copyGeneric(b, loc, g, bt, g.getIndexingMapsArray(), /*bits=*/true);
  // g is left without users (not erased: bytesOf knows it).
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(bytes.getDefiningOp());
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(qt.getRank(), ctx);
  Value empty =
      tensor::EmptyOp::create(b, loc, qt.getShape(), qt.getElementType());
  Value view =
      linalg::GenericOp::create(
          b, loc, TypeRange{qt}, ValueRange{bytes}, ValueRange{empty},
          ArrayRef<AffineMap>{id, id},
          SmallVector<utils::IteratorType>(qt.getRank(),
                                           utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            linalg::YieldOp::create(nb, nl,
                                    ValueRange{arith::BitcastOp::create(
                                        nb, nl, qt.getElementType(), args[0])});
          })
          .getResult(0);
  q.replaceAllUsesWith(view);
  return bytes;
}

/// The bytes `q` transposed by `perm` (new dim i is old dim perm[i]) with
/// nothing left for the tiles to gather through: a constant's bytes
/// reordered now, a parallel generic's (the bytes copy of a
/// QuantizeLinear) rebuilt to write the transposed layout; null where `q`
/// is neither.
Value transposedBytes(OpBuilder &b, Location loc, Value q,
                      ArrayRef<int64_t> perm) {
  if (q.getDefiningOp<arith::ConstantOp>())
    return kiln::permutedConstant(b, q, perm, "kiln_float8_bytes");
  auto qt = cast<RankedTensorType>(q.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(qt.getDimSize(d));
  auto tt = RankedTensorType::get(shape, qt.getElementType());
  auto g = q.getDefiningOp<linalg::GenericOp>();
  if (!g || g->getNumResults() != 1 || !g.hasPureTensorSemantics() ||
      g.getNumReductionLoops() != 0 ||
      !g.getIndexingMapsArray().back().isIdentity() ||
      g.payloadUsesValueFromOperand(g.getDpsInitOperand(0)) ||
      !g.getBody()->getOps<linalg::IndexOp>().empty())
    return {};
  // Old dim j is new dim inverse[j].
  AffineMap toOld =
      inversePermutation(AffineMap::getPermutationMap(perm, b.getContext()));
  SmallVector<AffineMap> maps;
  for (OpOperand *in : g.getDpsInputOperands())
    maps.push_back(g.getMatchingIndexingMap(in).compose(toOld));
  maps.push_back(
      AffineMap::getMultiDimIdentityMap(qt.getRank(), b.getContext()));
  return copyGeneric(b, loc, g, tt, maps, /*bits=*/false);
}

/// `q` (bytes) through `chain` as the dequantized tensor went: the same
/// transposes, pads with zero bytes. The transposes go first (the pads
/// before them permuted to match), done by transposedBytes where it can
/// (`transposes` holds those made so far) so that the contraction reads
/// its operand in the order it walks it (a channels-last convolution's
/// input and weights k-contiguous).
Value rebuildChain(OpBuilder &b, Location loc, Value q,
                   ArrayRef<Operation *> chain,
                   DenseMap<std::pair<Value, Attribute>, Value> &transposes) {
  auto qt = cast<RankedTensorType>(q.getType());
  SmallVector<int64_t> perm =
      llvm::to_vector(llvm::seq<int64_t>(0, qt.getRank()));
  SmallVector<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>> pads;
  for (Operation *o : chain) {
    if (auto tr = dyn_cast<linalg::TransposeOp>(o)) {
      ArrayRef<int64_t> p = tr.getPermutation();
      auto permuted = [&](ArrayRef<int64_t> v) {
        return llvm::to_vector(
            llvm::map_range(p, [&](int64_t d) { return v[d]; }));
      };
      perm = permuted(perm);
      for (auto &[low, high] : pads) {
        low = permuted(low);
        high = permuted(high);
      }
      continue;
    }
    auto pad = cast<tensor::PadOp>(o);
    pads.push_back({llvm::to_vector(pad.getStaticLow()),
                    llvm::to_vector(pad.getStaticHigh())});
  }
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, qt.getRank()))) {
    Value &t = transposes[{q, b.getDenseI64ArrayAttr(perm)}];
    if (!t)
      t = transposedBytes(b, loc, q, perm);
    q = t ? t : kiln::transposed(b, loc, q, perm);
  }
  for (auto &[low, high] : pads) {
    auto st = cast<RankedTensorType>(q.getType());
    SmallVector<int64_t> shape;
    for (int64_t d = 0; d < st.getRank(); ++d)
      shape.push_back(st.getDimSize(d) + low[d] + high[d]);
    Value zero = arith::ConstantOp::create(b, loc, b.getI8IntegerAttr(0));
    q = tensor::PadOp::create(
        b, loc, RankedTensorType::get(shape, st.getElementType()), q,
        getAsIndexOpFoldResult(b.getContext(), low),
        getAsIndexOpFoldResult(b.getContext(), high), zero);
  }
  return q;
}

/// Rewrites `op` (see the pass) where it has that form; `bytesOf` holds
/// the bytes made of each float8 tensor so far (a QuantizeLinear that
/// feeds several contractions is copied once, and each of its transposes
/// made once).
void fold(linalg::LinalgOp op, DenseMap<Value, Value> &bytesOf,
          DenseMap<std::pair<Value, Attribute>, Value> &transposes) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      !kiln::isGpuTiledContraction(op))
    return;
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!outType.getElementType().isF32())
    return;
  std::optional<Dequantized> dq[2] = {dequantized(op.getDpsInputs()[0]),
                                      dequantized(op.getDpsInputs()[1])};
  if (!dq[0] || !dq[1])
    return;
  AffineMap scaleMaps[2] = {scaleOnOutput(op, 0, *dq[0]),
                            scaleOnOutput(op, 1, *dq[1])};
  if (!scaleMaps[0] || !scaleMaps[1])
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value bytes[2];
  for (unsigned i = 0; i < 2; ++i) {
    Value &q = bytesOf[dq[i]->q];
    if (!q)
      q = asBytes(b, loc, dq[i]->q);
    if (!q)
      return;
    bytes[i] = rebuildChain(b, loc, q, dq[i]->chain, transposes);
  }
  // The product starts from zero; an initial value that is not zero (a
  // bias) is added after the scaling.
  Value init = op.getDpsInits()[0], bias;
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat())) {
    bias = init;
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    init = linalg::FillOp::create(
               b, loc, zero,
               tensor::EmptyOp::create(b, loc, outType.getShape(),
                                       outType.getElementType())
                   .getResult())
               .getResult(0);
  }
  // The float8 contraction: the same maps, its bytes read back as float8
  // and extended to f32.
  Type f32 = b.getF32Type(), f8 = b.getType<Float8E4M3FNType>();
  Value product =
      linalg::GenericOp::create(
          b, loc, TypeRange{outType}, ValueRange{bytes[0], bytes[1]},
          ValueRange{init}, op.getIndexingMapsArray(),
          op.getIteratorTypesArray(),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            auto wide = [&](Value v) -> Value {
              Value f = arith::BitcastOp::create(nb, nl, f8, v);
              return arith::ExtFOp::create(nb, nl, f32, f);
            };
            Value x = wide(args[0]);
            Value y = wide(args[1]);
            Value p = arith::MulFOp::create(nb, nl, x, y);
            linalg::YieldOp::create(
                nb, nl, ValueRange{arith::AddFOp::create(nb, nl, args[2], p)});
          })
          .getResult(0);
  // times both scales (plus the bias).
  unsigned rank = outType.getRank();
  MLIRContext *ctx = op.getContext();
  Value empty = tensor::EmptyOp::create(b, loc, outType.getShape(),
                                        outType.getElementType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<Value> ins = {product, dq[0]->s, dq[1]->s};
  SmallVector<AffineMap> maps = {id, scaleMaps[0], scaleMaps[1]};
  if (bias) {
    ins.push_back(bias);
    maps.push_back(id);
  }
  maps.push_back(id);
  Value scaled =
      linalg::GenericOp::create(
          b, loc, TypeRange{outType}, ins, ValueRange{empty}, maps,
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value s = arith::MulFOp::create(nb, nl, args[1], args[2]);
            Value y = arith::MulFOp::create(nb, nl, args[0], s);
            if (bias)
              y = arith::AddFOp::create(nb, nl, y, args[3]);
            linalg::YieldOp::create(nb, nl, ValueRange{y});
          })
          .getResult(0);
  op->getResult(0).replaceAllUsesWith(scaled);
  op->erase();
}

struct GpuFoldDequantize
    : public kiln::impl::KilnGpuFoldDequantizeBase<GpuFoldDequantize> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    DenseMap<Value, Value> bytesOf;
    DenseMap<std::pair<Value, Attribute>, Value> transposes;
    for (linalg::LinalgOp op : ops)
      fold(op, bytesOf, transposes);
  }
};

} // namespace
