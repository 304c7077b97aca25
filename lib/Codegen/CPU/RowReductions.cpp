//===- RowReductions.cpp - row reductions as vector accumulations ---------===//
//
// A reduction over the innermost loop of a generic whose inputs are
// contiguous along it (Softmax's max and sum, LayerNorm's mean and
// variance, ReduceSum/Mean/Max over the last axis) becomes, per row, a
// loop of vector loads combined lane by lane into a few vector
// accumulators, reduced across lanes once at the end. Lowered to scalar
// loops, such a reduction is one chain of dependent scalar adds (LLVM may
// not reorder a float sum), four cycles an element. See the pass
// description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define DEBUG_TYPE "kiln-cpu-row-reductions"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUROWREDUCTIONS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// How an output accumulates: its combining op, the vector.reduction kind
/// that combines lanes the same way, and the value that changes nothing.
struct Combiner {
  Operation *op = nullptr; ///< in the generic's body
  vector::CombiningKind kind;
  TypedAttr neutral;
};

/// The combiner of output `i` of `g`: the op yielded for it, one of
/// whose operands is the output's block argument, which nothing else in
/// the body reads.
std::optional<Combiner> matchCombiner(linalg::GenericOp g, unsigned i) {
  Block *body = g.getBody();
  BlockArgument acc = body->getArgument(g.getNumDpsInputs() + i);
  Operation *op = body->getTerminator()->getOperand(i).getDefiningOp();
  if (!op || op->getBlock() != body || op->getNumOperands() != 2 ||
      !acc.hasOneUse() || *acc.getUsers().begin() != op)
    return std::nullopt;
  // Upstream's kind of combining op; the value that leaves the other
  // operand as it is.
  std::optional<vector::CombiningKind> kind = linalg::getCombinerOpKind(op);
  if (!kind)
    return std::nullopt;
  Type t = acc.getType();
  Combiner c;
  c.op = op;
  c.kind = *kind;
  using K = vector::CombiningKind;
  if (isa<FloatType>(t)) {
    double inf = std::numeric_limits<double>::infinity();
    switch (*kind) {
    case K::ADD:
      c.neutral = FloatAttr::get(t, 0.0);
      return c;
    case K::MUL:
      c.neutral = FloatAttr::get(t, 1.0);
      return c;
    case K::MAXNUMF:
    case K::MAXIMUMF:
      c.neutral = FloatAttr::get(t, -inf);
      return c;
    case K::MINNUMF:
    case K::MINIMUMF:
      c.neutral = FloatAttr::get(t, inf);
      return c;
    default:
      return std::nullopt;
    }
  }
  auto it = dyn_cast<IntegerType>(t);
  if (!it || it.getWidth() < 8)
    return std::nullopt;
  unsigned w = it.getWidth();
  std::optional<APInt> neutral;
  switch (*kind) {
  case K::ADD:
  case K::MAXUI:
    neutral = APInt::getZero(w);
    break;
  case K::MUL:
    neutral = APInt(w, 1);
    break;
  case K::MAXSI:
    neutral = APInt::getSignedMinValue(w);
    break;
  case K::MINSI:
    neutral = APInt::getSignedMaxValue(w);
    break;
  case K::MINUI:
    neutral = APInt::getMaxValue(w);
    break;
  default:
    return std::nullopt;
  }
  c.neutral = IntegerAttr::get(t, *neutral);
  return c;
}

/// Whether the innermost dim of `type` is contiguous (stride 1).
bool innerContiguous(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getRank() == 0 || failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return strides.back() == 1;
}

/// A scalar element type that vectors hold as they hold it in memory.
bool vectorizableElement(Type t) {
  if (isa<FloatType>(t))
    return true;
  auto it = dyn_cast<IntegerType>(t);
  return it && it.getWidth() >= 8 && it.getWidth() <= 64;
}

/// What the rewrite needs to know of a generic it takes.
struct RowReduction {
  linalg::GenericOp op;
  SmallVector<Combiner> combiners; ///< by output
  SmallVector<bool> alongRow;      ///< by input: reads the reduced dim
  SmallVector<int64_t> sizes;      ///< loop ranges (the reduced one static)
};

/// Whether `g` is a reduction of its innermost loop over inputs that are
/// contiguous along it, `width` lanes at least (see the pass description).
std::optional<RowReduction> match(linalg::GenericOp g, int64_t width) {
  if (!g.hasPureBufferSemantics() || g.getNumLoops() == 0 ||
      g.getNumDpsInits() == 0 || g.getNumReductionLoops() != 1)
    return std::nullopt;
  unsigned r = g.getNumLoops() - 1;
  if (g.getIteratorTypesArray()[r] != utils::IteratorType::reduction)
    return std::nullopt;
  RowReduction rr;
  rr.op = g;
  // The row's length must be static (it sets the vector chunks and the
  // tail); the parallel dims may be dynamic, as in the tiles of an
  // scf.forall whose last tile is shorter.
  rr.sizes = g.getStaticLoopRanges();
  if (ShapedType::isDynamic(rr.sizes[r]) || rr.sizes[r] < width)
    return std::nullopt;
  for (OpOperand *in : g.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!type || !vectorizableElement(type.getElementType()))
      return std::nullopt;
    AffineMap map = g.getMatchingIndexingMap(in);
    if (!map.isFunctionOfDim(r)) {
      rr.alongRow.push_back(false);
      continue;
    }
    // The reduced dim is the last index, read as itself, and no other.
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!last || last.getPosition() != r || !innerContiguous(type) ||
        llvm::any_of(map.getResults().drop_back(),
                     [&](AffineExpr e) { return e.isFunctionOfDim(r); }))
      return std::nullopt;
    rr.alongRow.push_back(true);
  }
  for (OpOperand &out : g.getDpsInitsMutable()) {
    auto type = dyn_cast<MemRefType>(out.get().getType());
    if (!type || g.getMatchingIndexingMap(&out).isFunctionOfDim(r))
      return std::nullopt;
    std::optional<Combiner> c =
        matchCombiner(g, out.getOperandNumber() - g.getNumDpsInputs());
    if (!c)
      return std::nullopt;
    rr.combiners.push_back(*c);
  }
  // Every other op of the body computes lane by lane: arith and math ops
  // on scalars, no index values (linalg.index), no regions or effects.
  for (Operation &o : g.getBody()->without_terminator()) {
    if (llvm::any_of(rr.combiners,
                     [&](const Combiner &c) { return c.op == &o; }))
      continue;
    if (!isa<arith::ArithDialect, math::MathDialect>(o.getDialect()) ||
        o.getNumRegions() || !isMemoryEffectFree(&o))
      return std::nullopt;
    for (Type t : llvm::concat<Type>(llvm::to_vector(o.getOperandTypes()),
                                     llvm::to_vector(o.getResultTypes())))
      if (!t.isIntOrFloat())
        return std::nullopt;
  }
  // A combiner's operand other than the accumulator must not be another
  // combiner (two outputs chained).
  for (const Combiner &c : rr.combiners)
    for (Value v : c.op->getOperands())
      if (Operation *d = v.getDefiningOp())
        if (llvm::any_of(rr.combiners,
                         [&](const Combiner &o) { return o.op == d; }))
          return std::nullopt;
  return rr;
}

/// Emits the rows of `rr` as loops over its parallel dims, each row a
/// vector accumulation of `width` lanes in `unroll` independent
/// accumulators.
void rewrite(const RowReduction &rr, int64_t width, int64_t unroll) {
  linalg::GenericOp g = rr.op;
  Location loc = g.getLoc();
  OpBuilder b(g);
  unsigned r = g.getNumLoops() - 1;
  int64_t extent = rr.sizes[r];
  int64_t chunks = extent / width, tail = extent % width;
  unroll = std::max<int64_t>(1, std::min(unroll, chunks));
  Block *body = g.getBody();
  unsigned numInputs = g.getNumDpsInputs(), numOutputs = g.getNumDpsInits();

  // The loops over the parallel dims (a dynamic one's extent from the
  // operand dim that gives it).
  SmallVector<Range, 4> ranges =
      cast<linalg::LinalgOp>(g.getOperation()).createLoopRanges(b, loc);
  SmallVector<Value> ivs;
  for (unsigned d = 0; d < r; ++d) {
    Value ub = ShapedType::isDynamic(rr.sizes[d])
                   ? getValueOrCreateConstantIndexOp(b, loc, ranges[d].size)
                   : arith::ConstantIndexOp::create(b, loc, rr.sizes[d]);
    auto loop =
        scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                           ub, arith::ConstantIndexOp::create(b, loc, 1));
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto indicesAt = [&](OpBuilder &ib, AffineMap map, Value k) {
    SmallVector<Value> dims(ivs);
    dims.push_back(k ? k : zero);
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults())
      idx.push_back(affine::expandAffineExpr(ib, loc, e, dims, {}));
    return idx;
  };
  // Inputs that do not read the reduced dim: one scalar per row.
  SmallVector<Value> rowScalars(numInputs);
  for (unsigned i = 0; i < numInputs; ++i)
    if (!rr.alongRow[i])
      rowScalars[i] = memref::LoadOp::create(
          b, loc, g.getDpsInputs()[i],
          indicesAt(b, g.getIndexingMapsArray()[i], Value()));

  auto vecType = [&](Type t) { return VectorType::get({width}, t); };
  auto splat = [&](OpBuilder &ib, Value v) -> Value {
    return vector::BroadcastOp::create(ib, loc, vecType(v.getType()), v);
  };
  // Per output, its combiner's neutral value in every lane: where the
  // accumulators start and what masked-off lanes hold.
  SmallVector<Value> neutrals;
  for (const Combiner &c : rr.combiners)
    neutrals.push_back(arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(vecType(c.neutral.getType()), c.neutral)));
  // The body on `width` lanes from element `k` of the row (a mask: only
  // those lanes), giving each output's value before it is combined (the
  // combiner's other operand), with the neutral value outside the mask.
  auto lanes = [&](OpBuilder &ib, Value k, Value mask) {
    IRMapping m;
    for (unsigned i = 0; i < numInputs; ++i) {
      BlockArgument arg = body->getArgument(i);
      if (!rr.alongRow[i]) {
        m.map(arg, rowScalars[i]);
        continue;
      }
      Value buffer = g.getDpsInputs()[i];
      SmallVector<Value> idx = indicesAt(ib, g.getIndexingMapsArray()[i], k);
      VectorType vt = vecType(arg.getType());
      Value v;
      if (mask) {
        Value pass = arith::ConstantOp::create(
            ib, loc, cast<TypedAttr>(ib.getZeroAttr(vt)));
        v = vector::MaskedLoadOp::create(ib, loc, vt, buffer, idx, mask, pass);
      } else {
        v = vector::LoadOp::create(ib, loc, vt, buffer, idx);
      }
      m.map(arg, v);
    }
    // Values from outside the body and those computed from them alone stay
    // scalars: the same in every lane.
    for (Operation &o : body->without_terminator()) {
      if (llvm::any_of(rr.combiners,
                       [&](const Combiner &c) { return c.op == &o; }))
        continue;
      SmallVector<Value> operands;
      bool anyVector = false;
      for (Value v : o.getOperands()) {
        Value x = m.lookupOrDefault(v);
        anyVector |= isa<VectorType>(x.getType());
        operands.push_back(x);
      }
      if (!anyVector) {
        // Every lane the same: computed once, as a scalar.
        ib.clone(o, m);
        continue;
      }
      for (Value &x : operands)
        if (!isa<VectorType>(x.getType()))
          x = splat(ib, x);
      SmallVector<Type> types;
      for (Type t : o.getResultTypes())
        types.push_back(vecType(t));
      OperationState state(loc, o.getName().getIdentifier(), operands, types,
                           o.getAttrs());
      Operation *c = ib.create(state);
      m.map(o.getResults(), c->getResults());
    }
    SmallVector<Value> values;
    for (unsigned i = 0; i < numOutputs; ++i) {
      const Combiner &c = rr.combiners[i];
      BlockArgument acc = body->getArgument(numInputs + i);
      Value other = c.op->getOperand(0) == acc ? c.op->getOperand(1)
                                               : c.op->getOperand(0);
      Value x = m.lookupOrDefault(other);
      if (!isa<VectorType>(x.getType()))
        x = splat(ib, x);
      if (mask)
        x = arith::SelectOp::create(ib, loc, mask, x, neutrals[i]);
      values.push_back(x);
    }
    return values;
  };
  // Combines two values with output `i`'s combining op (vectors or
  // scalars), keeping its attributes (fast-math flags).
  auto combine = [&](OpBuilder &ib, unsigned i, Value x, Value y) -> Value {
    Operation *op = rr.combiners[i].op;
    OperationState state(loc, op->getName().getIdentifier(), {x, y},
                         {x.getType()}, op->getAttrs());
    return ib.create(state)->getResult(0);
  };

  // The accumulators: `unroll` per output, each `width` lanes.
  SmallVector<Value> accs;
  for (unsigned i = 0; i < numOutputs; ++i)
    accs.append(unroll, neutrals[i]);
  int64_t step = unroll * width, mainEnd = chunks / unroll * step;
  if (mainEnd > 0) {
    auto loop = scf::ForOp::create(
        b, loc, zero, arith::ConstantIndexOp::create(b, loc, mainEnd),
        arith::ConstantIndexOp::create(b, loc, step), accs,
        [&](OpBuilder &lb, Location, Value k, ValueRange args) {
          SmallVector<Value> next(args.begin(), args.end());
          for (int64_t u = 0; u < unroll; ++u) {
            Value ku = u ? arith::AddIOp::create(lb, loc, k,
                                                 arith::ConstantIndexOp::create(
                                                     lb, loc, u * width))
                               .getResult()
                         : k;
            SmallVector<Value> xs = lanes(lb, ku, Value());
            for (unsigned i = 0; i < numOutputs; ++i)
              next[i * unroll + u] =
                  combine(lb, i, next[i * unroll + u], xs[i]);
          }
          scf::YieldOp::create(lb, loc, next);
        });
    accs.assign(loop.getResults().begin(), loop.getResults().end());
  }
  // Whole vectors past the unrolled loop, then the masked tail.
  for (int64_t k = mainEnd; k + width <= extent; k += width) {
    SmallVector<Value> xs =
        lanes(b, arith::ConstantIndexOp::create(b, loc, k), Value());
    for (unsigned i = 0; i < numOutputs; ++i)
      accs[i * unroll] = combine(b, i, accs[i * unroll], xs[i]);
  }
  if (tail) {
    Value mask = vector::CreateMaskOp::create(
        b, loc, VectorType::get({width}, b.getI1Type()),
        ValueRange{arith::ConstantIndexOp::create(b, loc, tail)});
    SmallVector<Value> xs =
        lanes(b, arith::ConstantIndexOp::create(b, loc, chunks * width), mask);
    for (unsigned i = 0; i < numOutputs; ++i)
      accs[i * unroll] = combine(b, i, accs[i * unroll], xs[i]);
  }
  for (unsigned i = 0; i < numOutputs; ++i) {
    Value acc = accs[i * unroll];
    for (int64_t u = 1; u < unroll; ++u)
      acc = combine(b, i, acc, accs[i * unroll + u]);
    // Across the lanes in a tree (the order is fixed at compile time).
    Value lanesSum = vector::ReductionOp::create(
        b, loc, rr.combiners[i].kind, acc,
        isa<FloatType>(rr.combiners[i].neutral.getType())
            ? arith::FastMathFlags::reassoc
            : arith::FastMathFlags::none);
    OpOperand *out = g.getDpsInitOperand(i);
    SmallVector<Value> idx =
        indicesAt(b, g.getMatchingIndexingMap(out), Value());
    Value old = memref::LoadOp::create(b, loc, out->get(), idx);
    // The output's value comes last, as in the generic's body.
    Operation *op = rr.combiners[i].op;
    BlockArgument accArg = body->getArgument(numInputs + i);
    Value result = op->getOperand(0) == accArg ? combine(b, i, old, lanesSum)
                                               : combine(b, i, lanesSum, old);
    memref::StoreOp::create(b, loc, result, out->get(), idx);
  }
  g->erase();
}

struct CpuRowReductionsPass
    : public kiln::impl::KilnCpuRowReductionsBase<CpuRowReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (vectorBits < 128 || vectorBits % 128) {
      getOperation().emitError("kiln-cpu-row-reductions: vector-bits must be "
                               "a multiple of 128, got ")
          << vectorBits;
      return signalPassFailure();
    }
    SmallVector<std::pair<RowReduction, int64_t>> found;
    getOperation().walk([&](linalg::GenericOp g) {
      // Lanes: one register of the widest element the op reads or writes.
      unsigned bits = 0;
      for (Value v : g->getOperands()) {
        Type t = getElementTypeOrSelf(v.getType());
        if (!vectorizableElement(t))
          return;
        bits = std::max(bits, t.getIntOrFloatBitWidth());
      }
      int64_t width = std::max<int64_t>(1, vectorBits / bits);
      if (std::optional<RowReduction> rr = match(g, width))
        found.push_back({*rr, width});
    });
    for (auto &[rr, width] : found)
      rewrite(rr, width, unroll);
  }
};

} // namespace
