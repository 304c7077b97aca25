//===- Epilogue.cpp - elementwise epilogues of CPU kernels ----------------===//

#include "Epilogue.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

bool kiln::cpu::isElementwiseBody(Block &body) {
  for (Operation &inner : body.without_terminator()) {
    if (!OpTrait::hasElementwiseMappableTraits(&inner) ||
        !isMemoryEffectFree(&inner) || inner.getNumRegions() != 0 ||
        inner.getNumResults() != 1)
      return false;
    for (Value v : inner.getOperands())
      if (v.getParentBlock() != &body && !v.getType().isIntOrIndexOrFloat())
        return false;
  }
  return true;
}

/// The elementwise op that is the only consumer of contraction `op`'s
/// result (through reshapes), when its body can be applied to the
/// register tile once the reduction is done: one input read elementwise,
/// its own init unread, every body op elementwise and free of memory
/// effects, operands from the block argument or scalars defined outside.
/// Activations after a convolution or a GEMM (Relu, Clip, ...) are such.
linalg::GenericOp kiln::cpu::findEpilogue(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return nullptr;
  Operation *user = *op->getResult(0).getUsers().begin();
  // Reshapes and transposes (kiln-conv-to-gemm's way back to NCHW) move
  // elements without changing them: an elementwise op after them may as
  // well be applied before.
  while (
      isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, linalg::TransposeOp>(
          user)) {
    if (!user->getResult(0).hasOneUse())
      return nullptr;
    user = *user->getResult(0).getUsers().begin();
  }
  auto e = dyn_cast<linalg::GenericOp>(user);
  if (!e || e.getNumDpsInputs() != 1 || e.getNumDpsInits() != 1 ||
      e.getNumParallelLoops() != e.getNumLoops() ||
      !llvm::all_of(e.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }) ||
      e.getResult(0).getType() != e.getDpsInputOperand(0)->get().getType() ||
      !e.hasPureTensorSemantics())
    return nullptr;
  Block &body = e.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  if (!body.getArgument(1).use_empty() || yielded.getParentBlock() != &body)
    return nullptr; // Reads its init, or yields a value from outside.
  if (auto arg = dyn_cast<BlockArgument>(yielded); arg && arg.getArgNumber())
    return nullptr;
  return isElementwiseBody(body) ? e : nullptr;
}

std::optional<kiln::cpu::ResidualEpilogue>
kiln::cpu::findResidualEpilogue(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return std::nullopt;
  ResidualEpilogue r;
  OpOperand *use = &*op->getResult(0).getUses().begin();
  while (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(use->getOwner())) {
    Operation *reshape = use->getOwner();
    if (!reshape->getResult(0).hasOneUse())
      return std::nullopt;
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape))
      r.reshapes.push_back(
          {true, expand.getSrcType(), expand.getReassociationIndices()});
    else {
      auto collapse = cast<tensor::CollapseShapeOp>(reshape);
      r.reshapes.push_back(
          {false, collapse.getSrcType(), collapse.getReassociationIndices()});
    }
    use = &*reshape->getResult(0).getUses().begin();
  }
  auto e = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!e || e.getNumDpsInputs() != 2 || e.getNumDpsInits() != 1 ||
      !e.hasPureTensorSemantics() ||
      e.getNumParallelLoops() != e.getNumLoops() ||
      !llvm::all_of(e.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return std::nullopt;
  r.op = e;
  r.accInput = use->getOperandNumber();
  Value residual = e.getDpsInputs()[1 - r.accInput];
  if (residual.getType() != use->get().getType() ||
      e.getResult(0).getType() != use->get().getType() ||
      residual == use->get())
    return std::nullopt;
  // Defined before the contraction, in the same block or above it.
  Operation *def = residual.getDefiningOp();
  Block *block = op->getBlock();
  if (def) {
    Operation *ancestor = block->findAncestorOpInBlock(*def);
    if (ancestor ? !ancestor->isBeforeInBlock(op) : !def->isProperAncestor(op))
      return std::nullopt;
  } else if (!cast<BlockArgument>(residual)
                  .getOwner()
                  ->getParentOp()
                  ->isAncestor(op)) {
    return std::nullopt;
  }
  Block &body = e.getRegion().front();
  Value yielded = body.getTerminator()->getOperand(0);
  if (!body.getArgument(2).use_empty() || yielded.getParentBlock() != &body ||
      isa<BlockArgument>(yielded) || !isElementwiseBody(body))
    return std::nullopt;
  return r;
}

Value kiln::cpu::residualAsResult(OpBuilder &b, const ResidualEpilogue &e) {
  OpBuilder::InsertionGuard guard(b);
  // Read from the op now: an epilogue fused before this one (the block
  // before's) has replaced its result, which this one read.
  Value v = linalg::GenericOp(e.op).getDpsInputs()[1 - e.accInput];
  if (Operation *def = v.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
  Location loc = v.getLoc();
  for (const ResidualEpilogue::Reshape &r : llvm::reverse(e.reshapes)) {
    if (r.expand)
      v = tensor::CollapseShapeOp::create(b, loc, r.source, v, r.groups);
    else
      v = tensor::ExpandShapeOp::create(b, loc, r.source, v, r.groups);
  }
  return v;
}

/// Applies `epilogue`'s body to `acc`, a vector of the contraction's
/// final values, and `residual` as input 1 - accInput where given.
Value kiln::cpu::applyEpilogue(OpBuilder &b, linalg::GenericOp epilogue,
                               Value acc, unsigned accInput, Value residual) {
  SmallVector<Value> inputs(epilogue.getNumDpsInputs());
  inputs[accInput] = acc;
  if (residual)
    inputs[1 - accInput] = residual;
  return applyEpilogueTo(b, epilogue, inputs);
}

Value kiln::cpu::applyEpilogueTo(OpBuilder &b, linalg::GenericOp epilogue,
                                 ValueRange inputs) {
  VectorType vt;
  for (Value v : inputs)
    if (v)
      vt = cast<VectorType>(v.getType());
  Block &body = epilogue.getRegion().front();
  IRMapping map;
  for (auto [i, v] : llvm::enumerate(inputs))
    if (v)
      map.map(body.getArgument(i), v);
  Location loc = epilogue.getLoc();
  for (Operation &inner : body.without_terminator()) {
    SmallVector<Value> operands;
    for (Value v : inner.getOperands()) {
      if (Value m = map.lookupOrNull(v))
        operands.push_back(m);
      else
        operands.push_back(vector::BroadcastOp::create(
            b, loc, VectorType::get(vt.getShape(), v.getType()), v));
    }
    OperationState state(loc, inner.getName());
    state.addOperands(operands);
    state.addAttributes(inner.getAttrs());
    state.addTypes(
        VectorType::get(vt.getShape(), inner.getResult(0).getType()));
    map.map(inner.getResult(0), b.create(state)->getResult(0));
  }
  return map.lookup(body.getTerminator()->getOperand(0));
}

/// Whether `v` is block argument `arg` extended to a wider integer (or,
/// with `isFloat`, float); sets `isSigned` (true for floats).
static bool extendedArg(Value v, unsigned arg, bool isFloat, bool &isSigned) {
  Operation *def = v.getDefiningOp();
  if (isFloat ? !isa_and_nonnull<arith::ExtFOp>(def)
              : !isa_and_nonnull<arith::ExtSIOp, arith::ExtUIOp>(def))
    return false;
  auto ba = dyn_cast<BlockArgument>(def->getOperand(0));
  isSigned = !isa<arith::ExtUIOp>(def);
  return ba && ba.getOwner() == def->getBlock() && ba.getArgNumber() == arg;
}

bool kiln::cpu::isExtendedProductBody(Block &body, bool &signed0,
                                      bool &signed1) {
  if (body.getOperations().size() != 5) // ext, ext, mul, add, yield
    return false;
  Operation *add = body.getTerminator()->getOperand(0).getDefiningOp();
  bool isFloat = isa_and_nonnull<arith::AddFOp>(add);
  if (!isFloat && !isa_and_nonnull<arith::AddIOp>(add))
    return false;
  Value acc = add->getOperand(0), prod = add->getOperand(1);
  if (!isa<BlockArgument>(acc))
    std::swap(acc, prod);
  auto accArg = dyn_cast<BlockArgument>(acc);
  Operation *mul = prod.getDefiningOp();
  if (!accArg || accArg.getOwner() != &body || accArg.getArgNumber() != 2 ||
      !(isFloat ? isa_and_nonnull<arith::MulFOp>(mul)
                : isa_and_nonnull<arith::MulIOp>(mul)))
    return false;
  Value x = mul->getOperand(0), y = mul->getOperand(1);
  if (!extendedArg(x, 0, isFloat, signed0))
    std::swap(x, y);
  return extendedArg(x, 0, isFloat, signed0) &&
         extendedArg(y, 1, isFloat, signed1);
}

SmallVector<AffineMap> kiln::cpu::amxTileMaps(MLIRContext *ctx) {
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  return {AffineMap::get(4, 0, {d(0), d(2), d(3)}, ctx),
          AffineMap::get(4, 0,
                         {d(1).floorDiv(kAmxTile), d(2), d(1) % kAmxTile, d(3)},
                         ctx),
          AffineMap::get(4, 0, {d(0), d(1)}, ctx)};
}
