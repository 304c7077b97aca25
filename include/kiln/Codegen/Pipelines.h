//===- Pipelines.h - Kiln's pass pipelines -----------------------*- C++
//-*-===//

#ifndef KILN_CODEGEN_PIPELINES_H
#define KILN_CODEGEN_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace kiln {

struct CpuPipelineOptions
    : public mlir::PassPipelineOptions<CpuPipelineOptions> {
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("LLVM optimization level, 0 to 3"),
                            llvm::cl::init(3)};
  Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the parallel loops (scf.forall) on OpenMP threads; "
                     "off, they run in order on the calling thread"),
      llvm::cl::init(true)};
};

/// The graph stage: fold, infer shapes and lower every kiln op to linalg,
/// tensor, arith and math on tensors (`kiln-to-linalg-pipeline`).
void buildKilnToLinalgPipeline(mlir::OpPassManager &pm);

/// Linalg on tensors to the LLVM dialect for the host CPU: elementwise
/// fusion, convolutions as GEMMs, tiling and vectorization of contractions,
/// one-shot bufferization with results as out-parameters, memory planning,
/// loops, parallel loops on OpenMP (with `threads`), and the conversions to
/// LLVM (`kiln-cpu-codegen-pipeline`).
void buildCpuCodegenPipeline(mlir::OpPassManager &pm,
                             const CpuPipelineOptions &options);

/// Both of the above, as `kiln-compile --target=cpu` runs them.
void buildCpuPipeline(mlir::OpPassManager &pm,
                      const CpuPipelineOptions &options);

/// Registers the pipelines above with the pass registry.
void registerKilnPipelines();

/// Translates a module in the LLVM dialect to LLVM IR, optimizes it for the
/// host CPU, adds the `kiln_entry(void **args)` trampoline to the graph
/// function `main` (bare pointers to `numArgs` input and output buffers), and
/// writes an ELF shared object (linked with the system C compiler driver) to
/// `soPath`. With `llvmIrOut`, the optimized LLVM IR is also written there.
llvm::LogicalResult emitCpuSharedObject(mlir::ModuleOp module, unsigned numArgs,
                                        unsigned optLevel,
                                        llvm::StringRef soPath,
                                        std::string &error,
                                        llvm::raw_ostream *llvmIrOut = nullptr);

} // namespace kiln

#endif // KILN_CODEGEN_PIPELINES_H
