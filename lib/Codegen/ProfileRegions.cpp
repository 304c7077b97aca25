//===- ProfileRegions.cpp - profile marks between @main's computations ----===//

#include "kiln/Codegen/CostModel.h"
#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringMap.h"

namespace kiln {
#define GEN_PASS_DEF_KILNPROFILEREGIONS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct ProfileRegionsPass
    : public kiln::impl::KilnProfileRegionsBase<ProfileRegionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>("main");
    if (!fn || fn.isExternal())
      return;
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto markType = b.getFunctionType({b.getI32Type()}, {});
    auto mark =
        func::FuncOp::create(b, module.getLoc(), "kiln_profile_mark", markType);
    mark.setPrivate();

    SmallVector<Attribute> names;
    SmallVector<int64_t> flops, bytes;
    llvm::StringMap<unsigned> seen;
    auto insertMark = [&](Operation *before) {
      b.setInsertionPoint(before);
      Value id = arith::ConstantIntOp::create(
          b, before->getLoc(), static_cast<int64_t>(names.size()), 32);
      func::CallOp::create(b, before->getLoc(), mark, ValueRange{id});
    };
    for (Operation &op : llvm::make_early_inc_range(fn.front())) {
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        insertMark(&op); // the end of the last region
        break;
      }
      if (isPure(&op) || isa<ViewLikeOpInterface>(op) ||
          isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp,
              memref::GetGlobalOp>(op))
        continue;
      insertMark(&op);
      std::string node = kiln::onnxNodeName(op.getLoc());
      std::string name = op.getName().getStringRef().str();
      std::string region = node.empty() ? name : node + " (" + name + ")";
      // One node's second and later computations of the same kind (a
      // convolution's window copy and its GEMM are both loop nests) are
      // numbered, so that every region has a name of its own.
      if (unsigned n = ++seen[region]; n > 1)
        region.insert(region.size() - (node.empty() ? 0 : 1),
                      " #" + std::to_string(n));
      names.push_back(b.getStringAttr(region));
      kiln::ComputeCost cost = kiln::estimateCost({&op});
      flops.push_back(cost.flops);
      bytes.push_back(cost.bytes);
    }
    module->setAttr("kiln.profile_regions", b.getArrayAttr(names));
    module->setAttr("kiln.profile_flops", b.getDenseI64ArrayAttr(flops));
    module->setAttr("kiln.profile_bytes", b.getDenseI64ArrayAttr(bytes));
  }
};
} // namespace
