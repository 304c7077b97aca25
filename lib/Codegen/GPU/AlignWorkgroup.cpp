//===- AlignWorkgroup.cpp - aligned shared-memory buffers ----------------===//
//
// After convert-gpu-to-nvvm, a kernel's shared-memory buffers are globals
// in address space 3: its workgroup attributions, aligned to their element
// type only (`.align 2` for f16), and its dynamic shared memory, aligned
// to 16. cp.async's 16-byte copies and ldmatrix's rows need 16-byte
// aligned addresses, and wgmma's swizzled layouts 1024-byte aligned ones:
// every such global gets the alignment its module needs. Dynamic shared
// memory is made an external declaration, as NVPTX needs it to be.
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
    gpu::GPUModuleOp module = getOperation();
    // wgmma's swizzled layouts repeat every 1024 bytes of the address:
    // their buffers start on such a boundary.
    int64_t alignment = this->alignment;
    if (module
            .walk([](NVVM::WgmmaMmaAsyncOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      alignment = std::max<int64_t>(alignment, 1024);
    auto shared = static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared);
    for (auto g : module.getOps<LLVM::GlobalOp>()) {
      if (g.getAddrSpace() != shared)
        continue;
      if (g.getAlignment().value_or(0) < static_cast<uint64_t>(alignment))
        g.setAlignment(alignment);
      // Dynamic shared memory: NVPTX declares an external zero-length
      // array `.extern .shared .b8 name[]`, the start of the launch's
      // dynamic shared memory; an internal one would be a one-byte static
      // variable that the dynamic memory merely follows.
      auto array = dyn_cast<LLVM::LLVMArrayType>(g.getGlobalType());
      if (array && array.getNumElements() == 0)
        g.setLinkage(LLVM::Linkage::External);
    }
  }
};
} // namespace
