//===- Epilogue.cpp - elementwise epilogues of CPU kernels ----------------===//

#include "Epilogue.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

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
  for (Operation &inner : body.without_terminator()) {
    if (!OpTrait::hasElementwiseMappableTraits(&inner) ||
        !isMemoryEffectFree(&inner) || inner.getNumRegions() != 0 ||
        inner.getNumResults() != 1)
      return nullptr;
    for (Value v : inner.getOperands())
      if (v.getParentBlock() != &body && !v.getType().isIntOrIndexOrFloat())
        return nullptr;
  }
  return e;
}

/// Applies `epilogue`'s body to `acc`, a vector of the contraction's
/// final values: each op again at the vector type, scalars from outside
/// broadcast.
Value kiln::cpu::applyEpilogue(OpBuilder &b, linalg::GenericOp epilogue,
                               Value acc) {
  auto vt = cast<VectorType>(acc.getType());
  Block &body = epilogue.getRegion().front();
  IRMapping map;
  map.map(body.getArgument(0), acc);
  Location loc = acc.getLoc();
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
