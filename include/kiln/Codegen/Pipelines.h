//===- Pipelines.h - Kiln's pass pipelines -----------------------*- C++
//-*-===//

#ifndef KILN_CODEGEN_PIPELINES_H
#define KILN_CODEGEN_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace kiln {

/// The x86-64 CPU that host code (a CPU module's, the emulator's kernels)
/// is compiled for: which instructions the code may use, and which kernels
/// the CPU pipeline picks (vector width, register tiles, VNNI dot products).
struct CpuTarget {
  /// LLVM's CPU name: "znver4", "haswell", "x86-64-v3", ...
  std::string name;
  /// Its extensions by LLVM's names, with those they imply.
  llvm::StringMap<bool> features;
  /// LLVM instructions per piece of a module that emitCpuSharedObject
  /// optimizes and compiles in pieces on parallel threads (rounded to the
  /// nearest count, at most 8; 0: one piece). The split depends on the
  /// module alone, so the code is the same on any host.
  uint64_t codegenPieceSize = 20000;

  bool has(llvm::StringRef feature) const { return features.lookup(feature); }
  /// The widest vector registers: 512 with AVX-512F, 256 with AVX, else 128.
  unsigned vectorBits() const;
  /// AVX-512 VNNI with AVX-512BW: vpdpbusd on 512-bit vectors.
  bool hasVnni() const;
  /// vpdpbusd on 256-bit vectors: AVX-VNNI, or AVX-512 VNNI with VL.
  bool hasVnni256() const;
  /// AMX's 8-bit tile multiply (AMX-TILE and AMX-INT8), with hasVnni()
  /// for the products too small for tiles.
  bool hasAmxInt8() const;
  /// AMX's bf16 tile multiply (AMX-TILE and AMX-BF16).
  bool hasAmxBf16() const;
  /// vdpbf16ps on vectors of `vectorBits`: AVX-512 BF16, with AVX-512 VL
  /// below 512 bits.
  bool hasBf16Dot(unsigned vectorBits) const;
  /// The feature string of LLVM's target machine ("+avx2,+fma,...").
  std::string featureString() const;
  /// Its extensions that kiln/Target/CpuFeatures.h lists: what the runtime
  /// checks the running CPU for before it loads the code. AMX's are listed
  /// only for code that uses its tiles (`tiles`, usesAmxTiles): the
  /// runtime asks the OS for the tile state to grant them, which code
  /// without tiles should not depend on.
  std::vector<std::string> checkedFeatures(bool tiles = false) const;
};

/// Whether the LLVM-dialect `module` calls AMX's tile intrinsics
/// (kiln-cpu-amx-tiles' products).
bool usesAmxTiles(mlir::Operation *module);

/// The CPU named `name`: "native" (or empty) is the compiling machine's,
/// with the features it reports; any other name is one of LLVM's 64-bit
/// x86 CPUs (x86-64-v2/v3/v4, haswell, skylake-avx512, znver4, ...) with
/// its documented features. An unknown name fails with `error` listing
/// the known ones.
llvm::FailureOr<CpuTarget> resolveCpuTarget(llvm::StringRef name,
                                            std::string &error);

struct CpuPipelineOptions
    : public mlir::PassPipelineOptions<CpuPipelineOptions> {
  Option<std::string> cpu{
      *this, "cpu",
      llvm::cl::desc("The x86-64 CPU the code is for, by LLVM's name "
                     "(native: the compiling machine's); the vector width and "
                     "the 8-bit dot products follow its extensions"),
      llvm::cl::init("native")};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("LLVM optimization level, 0 to 3"),
                            llvm::cl::init(3)};
  Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the parallel loops (scf.forall) on OpenMP threads; "
                     "off, they run in order on the calling thread"),
      llvm::cl::init(true)};
  Option<bool> profile{
      *this, "profile",
      llvm::cl::desc("Mark every top-level computation of @main for the "
                     "runtime's profiler (kiln-profile-regions)"),
      llvm::cl::init(false)};
  Option<unsigned> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Bits of the CPU's vector registers that contractions "
                     "are tiled and packed for (0: the widest the target CPU "
                     "has, see CpuTarget::vectorBits)"),
      llvm::cl::init(0)};
  Option<int64_t> registerTileM{
      *this, "register-tile-m",
      llvm::cl::desc("Rows of a contraction's register tile (0: 8 with "
                     "512-bit vectors, else 6)"),
      llvm::cl::init(0)};
  Option<int64_t> kChunkBytes{
      *this, "k-chunk-bytes",
      llvm::cl::desc("Bytes of a register tile's weight panel that one chunk "
                     "of a contraction's reduction reads, swept around the "
                     "row tiles (-1: the default, 0: one sweep per row "
                     "tile)"),
      llvm::cl::init(-1)};
  Option<bool> prefetchPanels{
      *this, "prefetch-panels",
      llvm::cl::desc("Prefetch the next block's weight panel into L2 in the "
                     "later row tiles of a contraction with a constant "
                     "weight (kiln-cpu-prefetch-panels)"),
      llvm::cl::init(true)};
  Option<std::string> int8Dot{
      *this, "int8-dot",
      llvm::cl::desc("How 8-bit GEMMs sum their products: amx (AMX's tile "
                     "multiply, vnni for MatMuls under 16 rows), vnni "
                     "(AVX-512 VNNI's vpdpbusd), avxvnni (256-bit vpdpbusd), "
                     "avx2 (vpsignb, vpmaddubsw and vpmaddwd on signed "
                     "bytes), generic (plain vector ops), or auto (with "
                     "vector-bits 512, amx when the target CPU has AMX-INT8, "
                     "else vnni when it has AVX-512 VNNI; else avxvnni when "
                     "it has AVX-VNNI, else avx2 when it has AVX2)"),
      llvm::cl::init("auto")};
  Option<std::string> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("How bf16 contractions (--precision=bf16) sum their "
                     "products: amx (AMX's tile multiply for convolutions "
                     "and MatMuls of 16 rows or more with constant weights, "
                     "the rest as "
                     "auto's vdpbf16ps or generic), avx512bf16 (vdpbf16ps, "
                     "two per f32 lane), generic (each value widened to "
                     "f32, then FMAs), or auto (amx when the target CPU has "
                     "AMX-BF16; avx512bf16 when it has AVX-512 BF16 and "
                     "vector-bits is 512, or 256 with AVX-512 VL)"),
      llvm::cl::init("auto")};
  Option<bool> fuseResiduals{
      *this, "fuse-residuals",
      llvm::cl::desc("Apply a residual Add + activation after a contraction "
                     "in its register tiles (kiln-cpu-tile-and-vectorize's "
                     "fuse-residuals)"),
      llvm::cl::init(false)};
  Option<int64_t> sparseMaxRows{
      *this, "sparse-max-rows",
      llvm::cl::desc("2:4-sparse products (kiln-sparsify's mark) with more "
                     "rows than this stay dense (kiln-cpu-sparse-gemm; -1: "
                     "4 with 512-bit vectors, 8 with 256-bit ones)"),
      llvm::cl::init(-1)};
};

/// The graph stage: fold, infer shapes, fuse decomposed layers (unless
/// `fuseLayers` is false) and lower every kiln op to linalg, tensor, arith
/// and math on tensors (`kiln-to-linalg-pipeline`).
/// `halfType` (f16 or bf16; empty: none) runs kiln-mixed-precision with it
/// after the fusions, the nodes of `keepNodes` staying float32;
/// `foldQdq` runs kiln-fold-qdq first; `sparsity` (on or force; empty or
/// off: none) runs kiln-sparsify with that mode after the fusions;
/// `gpuTarget`: the module is for the GPU, so kiln-sparsify takes 2-D
/// convolutions too (the GPU's sparse kernels run them; the CPU's do not)
/// and a grouped convolution stays one op (the GPU's implicit GEMM runs its
/// groups as a batch dim; on the CPU each group runs on the GEMM path);
/// `afterGraph` adds passes after all the graph passes, before the lowering
/// (kiln-compile's --pipeline-after=graph:...).
void buildKilnToLinalgPipeline(
    mlir::OpPassManager &pm, bool fuseLayers = true,
    llvm::StringRef halfType = "", llvm::ArrayRef<std::string> keepNodes = {},
    bool foldQdq = false, llvm::StringRef sparsity = "", bool gpuTarget = false,
    llvm::function_ref<void(mlir::OpPassManager &)> afterGraph = {});

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
/// CPU `cpu`, adds the `kiln_entry(void **args)` trampoline to the graph
/// function `main` (bare pointers to `numArgs` input and output buffers), and
/// writes an ELF shared object (linked with the system C compiler driver) to
/// `soPath`. With `llvmIrOut`, the optimized LLVM IR is also written there.
/// A large module is optimized and compiled in pieces on parallel threads
/// (`cpu.codegenPieceSize`); `pieces`, when given, receives how many.
llvm::LogicalResult emitCpuSharedObject(mlir::ModuleOp module, unsigned numArgs,
                                        unsigned optLevel, const CpuTarget &cpu,
                                        llvm::StringRef soPath,
                                        std::string &error,
                                        llvm::raw_ostream *llvmIrOut = nullptr,
                                        unsigned *pieces = nullptr);

/// One entry point of a CPU shared object: `void entry(void **args)` calling
/// the graph function `function` with `numArgs` bare buffer pointers.
struct CpuEntry {
  std::string function, entry;
  unsigned numArgs;
};

/// emitCpuSharedObject with several graph functions, each behind its own
/// entry (a batch-range module: one per batch it runs).
llvm::LogicalResult emitCpuSharedObject(mlir::ModuleOp module,
                                        llvm::ArrayRef<CpuEntry> entries,
                                        unsigned optLevel, const CpuTarget &cpu,
                                        llvm::StringRef soPath,
                                        std::string &error);

/// The same for any module in the LLVM dialect: `addEntries` adds the
/// entry points (trampolines) to the translated LLVM module before it is
/// optimized.
llvm::LogicalResult emitHostSharedObject(
    mlir::ModuleOp module, unsigned optLevel, const CpuTarget &cpu,
    llvm::StringRef soPath, std::string &error,
    llvm::function_ref<llvm::LogicalResult(llvm::Module &, std::string &)>
        addEntries,
    llvm::raw_ostream *llvmIrOut = nullptr, unsigned *pieces = nullptr);

struct GpuPipelineOptions
    : public mlir::PassPipelineOptions<GpuPipelineOptions> {
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("The GPU architecture: sm_80, sm_86, sm_89, sm_90, "
                     "sm_90a"),
      llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features", llvm::cl::desc("NVPTX features (the PTX ISA version)"),
      llvm::cl::init("+ptx80")};
  Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of elementwise and loop kernels"),
      llvm::cl::init(256)};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("NVPTX optimization level, 0 to 3"),
                            llvm::cl::init(3)};
  Option<int64_t> reductionMinSize{
      *this, "reduction-min-size",
      llvm::cl::desc("Reductions of at least this many elements per output "
                     "get a block per output (0: never)"),
      llvm::cl::init(32)};
  Option<int64_t> vectorBytes{
      *this, "vector-bytes",
      llvm::cl::desc("Bytes per global access of elementwise kernels (their "
                     "threads take several consecutive elements; 0: one)"),
      llvm::cl::init(16)};
  Option<int64_t> tileStages{
      *this, "tile-stages",
      llvm::cl::desc("Shared-memory buffers per operand of the f16/bf16 "
                     "GEMM tiles (cp.async pipeline; 1: staged "
                     "synchronously each step)"),
      llvm::cl::init(3)};
  Option<std::string> halfTile{
      *this, "half-tile",
      llvm::cl::desc("f16/bf16 GEMM tiles: MxNxK/WMxWN (the block's output "
                     "tile, its step of K, each warp's tile)"),
      llvm::cl::init("64x64x32/32x32")};
  Option<std::string> wideTile{
      *this, "wide-tile",
      llvm::cl::desc("f16/bf16 GEMM tiles of the products that still get "
                     "wide-tile-blocks blocks of them"),
      llvm::cl::init("128x128x32/64x64")};
  Option<int64_t> wideTileBlocks{
      *this, "wide-tile-blocks",
      llvm::cl::desc("f16/bf16 contractions with at least this many "
                     "wide-tile output tiles use them (-1: the chip's "
                     "multiprocessors; 0: never)"),
      llvm::cl::init(-1)};
  Option<bool> tf32{
      *this, "tf32",
      llvm::cl::desc("f32 contractions on tensor cores with tf32 inputs"),
      llvm::cl::init(false)};
  Option<int64_t> splitKBlocks{
      *this, "split-k-blocks",
      llvm::cl::desc("kiln-gpu-split-k's target-blocks: split the reduction "
                     "of contractions with fewer blocks (-1: the chip's "
                     "multiprocessors; 0: split none)"),
      llvm::cl::init(-1)};
  Option<bool> flashAttention{
      *this, "flash-attention",
      llvm::cl::desc("Run each attention with f16/bf16 Q, K and V as one "
                     "flash-attention kernel (kiln-gpu-flash-attention)"),
      llvm::cl::init(true)};
  Option<bool> splitKLastBlock{
      *this, "split-k-last-block",
      llvm::cl::desc("Sum a split product's partials in the last block of "
                     "each tile to finish, in the split kernel (false: in a "
                     "kernel of its own, the default)"),
      llvm::cl::init(false)};
  Option<int64_t> splitSumLoads{
      *this, "split-sum-loads",
      llvm::cl::desc("kiln-gpu-contractions' split-sum-loads: loads of "
                     "partials a thread of a split product's last block "
                     "keeps in flight"),
      llvm::cl::init(64)};
  Option<bool> wgmma{
      *this, "wgmma",
      llvm::cl::desc("sm_90a: f16/bf16 products that take the wide tile use "
                     "warpgroup products (wgmma) instead"),
      llvm::cl::init(true)};
  Option<std::string> wgmmaTile{
      *this, "wgmma-tile",
      llvm::cl::desc("sm_90a: the wgmma tiles, MxNxK[,MxNxK...], the first "
                     "of which a product has wide-tile-blocks taken (M 64 "
                     "to 256 in warpgroups of 64 rows, N a multiple of 64 "
                     "up to 256, K 32 or 64)"),
      llvm::cl::init("128x256x64,128x128x64,128x128x32")};
  Option<int64_t> wgmmaStages{
      *this, "wgmma-stages",
      llvm::cl::desc("sm_90a: shared-memory buffers of the wgmma tiles "
                     "(past 48 KiB in all they are dynamic shared memory)"),
      llvm::cl::init(3)};
  Option<bool> unrollKLoop{
      *this, "unroll-k-loop",
      llvm::cl::desc("kiln-gpu-contractions' unroll-k-loop (false: the "
                     "tiles' loops over K carry a no-unroll annotation)"),
      llvm::cl::init(true)};
  Option<bool> fp8{
      *this, "fp8",
      llvm::cl::desc("sm_89 and later (PTX ISA 8.4): contractions of "
                     "dequantized float8 operands run on the fp8 tensor "
                     "cores (kiln-gpu-fold-dequantize, "
                     "kiln-gpu-contractions{fp8})"),
      llvm::cl::init(false)};
  Option<bool> channelsLast{
      *this, "channels-last",
      llvm::cl::desc("2-D convolutions whose input and output channels "
                     "fill 16-byte runs run channels-last "
                     "(kiln-gpu-channels-last)"),
      llvm::cl::init(true)};
  Option<std::string> testMutation{
      *this, "test-mutation",
      llvm::cl::desc("Plants a bug for the emulator's mutation tests "
                     "(kiln-gpu-contractions' or kiln-gpu-form-kernels' "
                     "option)"),
      llvm::cl::init("")};
};

/// Linalg on tensors to GPU kernels: elementwise fusion, one-shot
/// bufferization with results as out-parameters, memory planning, loops,
/// every loop nest into a `gpu.launch` (`kiln-gpu-form-kernels`), kernel
/// outlining into one `gpu.module @kiln_kernels` with an NVVM target, and
/// the kernels to the LLVM and NVVM dialects (`kiln-gpu-codegen-pipeline`).
/// The host function `main` is left as a list of `gpu.launch_func` over
/// views of its arguments, the arena and the weights: the launch plan.
void buildGpuCodegenPipeline(mlir::OpPassManager &pm,
                             const GpuPipelineOptions &options);

} // namespace kiln

#endif // KILN_CODEGEN_PIPELINES_H
