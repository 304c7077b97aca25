//===- AlignWorkgroup.cpp - 16-byte aligned shared-memory buffers ---------===//
//
// Outlined kernels keep their shared-memory buffers as workgroup
// attributions, which become `.shared` arrays aligned to their element
// type only (`.align 2` for f16). cp.async's 16-byte copies and
// ldmatrix's rows need 16-byte aligned addresses: every attribution gets
// an `llvm.align` that convert-gpu-to-nvvm gives its global (1024 bytes in
// kernels with wgmma, whose swizzled layouts need it).
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUALIGNWORKGROUP
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {
struct AlignWorkgroupPass
    : public kiln::impl::KilnGpuAlignWorkgroupBase<AlignWorkgroupPass> {
  using Base::Base;

  void runOnOperation() override {
    gpu::GPUFuncOp fn = getOperation();
    auto i64 = IntegerType::get(&getContext(), 64);
    // wgmma's swizzled layouts repeat every 1024 bytes of the address:
    // their buffers start on such a boundary.
    int64_t alignment = this->alignment;
    if (fn.walk([](NVVM::WgmmaMmaAsyncOp) {
            return WalkResult::interrupt();
          }).wasInterrupted())
      alignment = std::max<int64_t>(alignment, 1024);
    StringRef name = LLVM::LLVMDialect::getAlignAttrName();
    for (unsigned i = 0; i < fn.getNumWorkgroupAttributions(); ++i) {
      auto old = dyn_cast_or_null<IntegerAttr>(
          fn.getWorkgroupAttributionAttr(i, name));
      if (old && old.getInt() >= alignment)
        continue;
      fn.setWorkgroupAttributionAttr(i, name, IntegerAttr::get(i64, alignment));
    }
  }
};
} // namespace
