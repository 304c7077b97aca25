//===- CostModel.cpp - arithmetic and memory traffic of computations ------===//

#include "kiln/Codegen/CostModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <functional>
#include <optional>

using namespace mlir;

namespace {
using Count = std::optional<int64_t>;

// Unknown when an operand is, or the result overflows.
Count mul(Count a, Count b) {
  int64_t r;
  if (!a || !b || llvm::MulOverflow(*a, *b, r))
    return std::nullopt;
  return r;
}
Count add(Count a, Count b) {
  int64_t r;
  if (!a || !b || llvm::AddOverflow(*a, *b, r))
    return std::nullopt;
  return r;
}
Count max(Count a, Count b) {
  if (!a || !b)
    return std::nullopt;
  return std::max(*a, *b);
}

/// Elements of a value of type `t`: 1 for a scalar, the static element
/// count of a vector or shaped type.
Count elementsOf(Type t) {
  auto shaped = dyn_cast<ShapedType>(t);
  if (!shaped)
    return 1;
  if (!shaped.hasStaticShape())
    return std::nullopt;
  return shaped.getNumElements();
}

/// Iterations of a loop with bounds (lb, ub, step), if static.
Count tripCount(OpFoldResult lb, OpFoldResult ub, OpFoldResult step) {
  auto l = getConstantIntValue(lb), u = getConstantIntValue(ub),
       s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  if (*u <= *l)
    return 0;
  int64_t span;
  if (llvm::SubOverflow(*u, *l, span))
    return std::nullopt;
  return span / *s + (span % *s != 0);
}
Count tripCounts(ArrayRef<OpFoldResult> lbs, ArrayRef<OpFoldResult> ubs,
                 ArrayRef<OpFoldResult> steps) {
  Count n = 1;
  for (auto [l, u, s] : llvm::zip(lbs, ubs, steps))
    n = mul(n, tripCount(l, u, s));
  return n;
}

Count countOp(Operation *op);

Count countRegion(Region &region) {
  Count n = 0;
  for (Block &block : region)
    for (Operation &op : block)
      n = add(n, countOp(&op));
  return n;
}

/// Whether `cond` is a bounds check: an index comparison, or a conjunction
/// or disjunction of them (a padded read's mask).
bool isIndexCondition(Value cond) {
  Operation *def = cond.getDefiningOp();
  if (auto cmp = dyn_cast_or_null<arith::CmpIOp>(def))
    return getElementTypeOrSelf(cmp.getLhs().getType()).isIndex();
  if (isa_and_nonnull<arith::AndIOp, arith::OrIOp>(def))
    return isIndexCondition(def->getOperand(0)) &&
           isIndexCondition(def->getOperand(1));
  return false;
}

/// Arithmetic on data: arith and math ops but constants, casts, index
/// computations and bounds checks (the selects and logic of a padded
/// read); a fused multiply-add counts two.
Count countScalarLike(Operation *op) {
  if (op->getNumResults() != 1 || isa<arith::ConstantOp>(op) ||
      isa<CastOpInterface>(op))
    return 0;
  if (isIndexCondition(op->getResult(0)))
    return 0;
  if (auto select = dyn_cast<arith::SelectOp>(op);
      select && isIndexCondition(select.getCondition()))
    return 0;
  Type t = op->getResult(0).getType();
  auto isIndex = [](Value v) {
    return getElementTypeOrSelf(v.getType()).isIndex();
  };
  if (isIndex(op->getResult(0)) || llvm::any_of(op->getOperands(), isIndex))
    return 0; // index arithmetic and comparisons: address computation
  int64_t weight = isa<math::FmaOp, vector::FMAOp>(op) ? 2 : 1;
  return mul(elementsOf(t), weight);
}

Count countOp(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    Count domain = 1;
    for (int64_t r : linalgOp.getStaticLoopRanges())
      domain = mul(domain, ShapedType::isDynamic(r) ? Count() : Count(r));
    Count body = 0;
    if (Block *b = linalgOp.getBlock())
      for (Operation &inner : *b)
        body = add(body, countOp(&inner));
    return body == Count(0) ? Count(0) : mul(domain, body);
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return mul(
        tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()),
        countRegion(loop.getRegion()));
  if (auto loop = dyn_cast<scf::ParallelOp>(op))
    return mul(tripCounts(getAsOpFoldResult(loop.getLowerBound()),
                          getAsOpFoldResult(loop.getUpperBound()),
                          getAsOpFoldResult(loop.getStep())),
               countRegion(loop.getRegion()));
  if (auto loop = dyn_cast<scf::ForallOp>(op))
    return mul(tripCounts(loop.getMixedLowerBound(), loop.getMixedUpperBound(),
                          loop.getMixedStep()),
               countRegion(loop.getRegion()));
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    // The dearer branch: an upper bound.
    return max(countRegion(branch.getThenRegion()),
               countRegion(branch.getElseRegion()));
  }
  if (auto loop = dyn_cast<scf::WhileOp>(op)) {
    // Unknown trip count: known only when the loop computes nothing.
    Count body =
        add(countRegion(loop.getBefore()), countRegion(loop.getAfter()));
    return body == Count(0) ? Count(0) : Count();
  }
  if (auto contract = dyn_cast<vector::ContractionOp>(op)) {
    SmallVector<int64_t> bounds;
    contract.getIterationBounds(bounds);
    Count n = 2;
    for (int64_t b : bounds)
      n = mul(n, b);
    return n;
  }
  // vdpbf16ps: each f32 lane adds two bf16 products to its accumulator
  // (kiln-cpu-tile-and-vectorize{bf16-dot}'s form of a contraction).
  if (auto dot = dyn_cast<x86vector::DotBF16Op>(op))
    return mul(elementsOf(dot.getResult().getType()), 4);
  if (auto outer = dyn_cast<vector::OuterProductOp>(op))
    return mul(elementsOf(outer.getResult().getType()), outer.getAcc() ? 2 : 1);
  if (auto red = dyn_cast<vector::ReductionOp>(op))
    return elementsOf(red.getVector().getType());
  if (auto red = dyn_cast<vector::MultiDimReductionOp>(op))
    return elementsOf(red.getSource().getType());
  Dialect *dialect = op->getDialect();
  if (dialect && isa<arith::ArithDialect, math::MathDialect>(dialect))
    return countScalarLike(op);
  if (isa<vector::FMAOp>(op))
    return countScalarLike(op);
  // Anything else (loads, stores, copies, transfers, views) has no
  // arithmetic of its own, but what its regions do: once for a single region
  // (scf.reduce, atomic updates), the dearest of alternatives
  // (scf.index_switch). A loop this does not know the trip count of, or a
  // call, is unknown unless it computes nothing.
  Count n = 0;
  for (Region &r : op->getRegions())
    n = op->getNumRegions() > 1 ? max(n, countRegion(r))
                                : add(n, countRegion(r));
  if (isa<LoopLikeOpInterface>(op) && n != Count(0))
    return std::nullopt;
  if (isa<CallOpInterface>(op))
    return std::nullopt;
  return n;
}

Count bytesOf(Type t) {
  auto memref = dyn_cast<MemRefType>(t);
  if (!memref)
    return 0;
  if (!memref.hasStaticShape())
    return std::nullopt;
  // Bytes per element as the code stores them: an index is 64 bits, an i1
  // a byte, a complex number two of its parts.
  std::function<Count(Type)> eltBytes = [&](Type elt) -> Count {
    if (elt.isIndex())
      return 8;
    if (elt.isIntOrFloat())
      return (elt.getIntOrFloatBitWidth() + 7) / 8;
    if (auto complex = dyn_cast<ComplexType>(elt))
      return mul(2, eltBytes(complex.getElementType()));
    if (auto vector = dyn_cast<VectorType>(elt))
      return mul(elementsOf(vector), eltBytes(vector.getElementType()));
    return std::nullopt;
  };
  return mul(memref.getNumElements(), eltBytes(memref.getElementType()));
}
} // namespace

kiln::ComputeCost kiln::estimateCost(ArrayRef<Operation *> ops) {
  Count flops = 0;
  for (Operation *op : ops)
    flops = add(flops, countOp(op));

  // Buffers from outside the computation, each once; globals read inside.
  auto definedInside = [&](Value v) {
    Operation *owner = v.getDefiningOp();
    if (!owner)
      owner = cast<BlockArgument>(v).getOwner()->getParentOp();
    return llvm::any_of(ops,
                        [&](Operation *op) { return op->isAncestor(owner); });
  };
  llvm::SetVector<Value> buffers;
  llvm::SmallDenseSet<StringAttr> globals; // each global once
  Count bytes = 0;
  auto addBuffer = [&](Value v) {
    if (auto global = v.getDefiningOp<memref::GetGlobalOp>())
      if (!globals.insert(global.getNameAttr().getAttr()).second)
        return;
    buffers.insert(v);
  };
  for (Operation *op : ops)
    op->walk([&](Operation *o) {
      if (auto global = dyn_cast<memref::GetGlobalOp>(o)) {
        addBuffer(global.getResult());
        return;
      }
      for (Value v : o->getOperands()) {
        if (isa<MemRefType>(v.getType()) && !buffers.contains(v) &&
            !definedInside(v))
          addBuffer(v);
      }
    });
  for (Value v : buffers)
    bytes = add(bytes, bytesOf(v.getType()));
  return {flops.value_or(-1), bytes.value_or(-1)};
}
