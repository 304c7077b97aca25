//===- FlattenEmptyTensors.cpp - rank-1 zero-element signatures -----------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "kiln-flatten-empty-tensors"

namespace kiln {
#define GEN_PASS_DEF_KILNFLATTENEMPTYTENSORS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// `t` as `tensor<0xT>` if it is a static tensor without elements.
std::optional<RankedTensorType> flattened(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  if (!rt || !rt.hasStaticShape() || rt.getNumElements() != 0 ||
      rt.getRank() == 1)
    return std::nullopt;
  return RankedTensorType::get({0}, rt.getElementType());
}

struct FlattenEmptyTensorsPass
    : public kiln::impl::KilnFlattenEmptyTensorsBase<FlattenEmptyTensorsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    IRRewriter rewriter(&getContext());
    Block &entry = fn.getFunctionBody().front();
    rewriter.setInsertionPointToStart(&entry);
    for (BlockArgument arg : entry.getArguments()) {
      auto type = cast<RankedTensorType>(arg.getType());
      if (!flattened(type))
        continue;
      Value empty = tensor::EmptyOp::create(
          rewriter, fn.getLoc(), type.getShape(), type.getElementType());
      arg.replaceAllUsesWith(empty);
      arg.setType(*flattened(type));
    }
    SmallVector<Type> results(fn.getResultTypes());
    fn.walk([&](func::ReturnOp ret) {
      rewriter.setInsertionPoint(ret);
      for (OpOperand &operand : ret->getOpOperands())
        if (auto flat = flattened(operand.get().getType())) {
          operand.set(tensor::EmptyOp::create(rewriter, ret.getLoc(),
                                              flat->getShape(),
                                              flat->getElementType()));
          results[operand.getOperandNumber()] = *flat;
        }
    });
    fn.setType(
        FunctionType::get(&getContext(), entry.getArgumentTypes(), results));
  }
};

} // namespace
