//===- GpuEmitter.h - GPU kernels and launch plan into a .kmod ---*- C++
//-*-===//
//
// After `kiln-gpu-codegen-pipeline`, a module holds the host function
// `main` (a list of `gpu.launch_func` over views) and one `gpu.module
// @kiln_kernels` in the LLVM and NVVM dialects. These functions turn that
// into the parts of a `.kmod`: the launch plan and weights, the PTX, the
// cubin (through ptxas) and the host code of the kernel emulator.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_GPUEMITTER_H
#define KILN_CODEGEN_GPUEMITTER_H

#include "kiln/Codegen/Pipelines.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kiln {
namespace kmod {
class Module;
} // namespace kmod

/// Reads the launch plan of `main` into `out.gpu()`: one kernel per
/// kernel of `@kiln_kernels`, one launch per `gpu.launch_func` (constant
/// grid and block sizes, each argument a function argument or a weight
/// plus a byte offset), and the weights' bytes as the constants segment.
/// Anything else left on the host is an error naming it.
llvm::LogicalResult extractLaunchPlan(mlir::ModuleOp module, kmod::Module &out,
                                      std::string &error);

/// The PTX of `@kiln_kernels`, through `gpu-module-to-binary` (LLVM's
/// NVPTX backend; libdevice from `toolkitPath` when the kernels call it).
llvm::LogicalResult emitPtx(mlir::ModuleOp module, llvm::StringRef toolkitPath,
                            std::string &ptx, std::string &error);

/// The kernels of `@kiln_kernels` as an x86-64 shared object for the
/// runtime's kernel emulator (`kiln-nvvm-to-emulator`), with an entry
/// `kiln_emu_<kernel>(void **params)` per kernel.
llvm::LogicalResult emitEmulatorObject(mlir::ModuleOp module, unsigned optLevel,
                                       const CpuTarget &cpu,
                                       llvm::StringRef soPath,
                                       std::string &error);

/// Assembles `ptx` for `chip` with `ptxas` and fills each kernel's
/// registers, spill bytes and shared memory in `out.gpu()` from its
/// report; `cubin` receives the binary.
llvm::LogicalResult assemblePtx(llvm::StringRef ptxas, llvm::StringRef chip,
                                llvm::StringRef ptx, kmod::Module &out,
                                std::string &cubin, std::string &error);

/// `ptxas` from $CUDA_HOME, /usr/local/cuda or PATH; empty if none.
std::string findPtxas();

} // namespace kiln

#endif // KILN_CODEGEN_GPUEMITTER_H
