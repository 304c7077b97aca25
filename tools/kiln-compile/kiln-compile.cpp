//===- kiln-compile.cpp - the Kiln compiler driver ------------------------===//
//
// kiln-compile model.onnx -o model.kmod --target=cpu
//
// Imports a model, runs the same pipeline-building functions that kiln-opt
// registers, and writes a `.kmod` module (or an intermediate form with
// --emit). Output files are written whole or not at all.
//
//===----------------------------------------------------------------------===//

#include "BatchRange.h"
#include "Calibration.h"
#include "LengthRange.h"
#include "kiln/Codegen/GpuEmitter.h"
#include "kiln/Codegen/Pipelines.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Import/OnnxImporter.h"
#include "kiln/InitAll.h"
#include "kiln/Runtime/EmulatorHooks.h"
#include "kiln/Runtime/Runtime.h"
#include "kiln/Target/ModuleFormat.h"

#include "kmod.pb.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Pass.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("kiln-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx|.onnxtxt|.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
static cl::opt<std::string> target(
    "target",
    cl::desc("Target: cpu (the host CPU), or an NVIDIA GPU architecture: "
             "sm_80, sm_86, sm_89, sm_90, sm_90a"),
    cl::init("cpu"), cl::cat(category));
static cl::opt<std::string> cpuName(
    "cpu",
    cl::desc("The x86-64 CPU that host code (the CPU target's, the "
             "emulator's) is compiled for: native (the default: this "
             "machine's CPU and the extensions it reports) or one of LLVM's "
             "CPU names (x86-64-v3, x86-64-v4, haswell, skylake-avx512, "
             "icelake-server, sapphirerapids, znver3, znver4, ...). The "
             "module runs on CPUs with all of that CPU's extensions; the "
             "runtime refuses others, naming what they lack"),
    cl::init("native"), cl::cat(category));
/// --cpu, resolved in main.
static kiln::CpuTarget targetCpu;
static cl::opt<uint64_t> cpuCodegenPieceSize(
    "cpu-codegen-piece-size",
    cl::desc("CPU code: LLVM instructions per piece of a module that is "
             "optimized and compiled in pieces, on as many threads as the "
             "host has (default 20000, rounded to the nearest count of "
             "pieces, at most 8; 0: one piece). The split depends on the "
             "module alone, so the code is the same on any host"),
    cl::init(20000), cl::cat(category));
static cl::opt<std::string> cudaPath(
    "cuda-path",
    cl::desc("CUDA toolkit for GPU targets (ptxas, libdevice); default: "
             "$CUDA_HOME, else /usr/local/cuda. Without ptxas the module "
             "holds PTX only"),
    cl::init(""), cl::cat(category));
static cl::opt<bool> emulatorCode(
    "emulator-code",
    cl::desc("GPU targets: also pack the kernels as host code for the "
             "runtime's kernel emulator (kiln-run --device=emulator; "
             "default on)"),
    cl::init(true), cl::cat(category));
static cl::opt<int> maxSpillBytes(
    "max-spill-bytes",
    cl::desc("GPU targets: fail if ptxas reports more register spill bytes "
             "than this for any kernel (default -1: no limit)"),
    cl::init(-1), cl::cat(category));
static cl::opt<int64_t> gpuBlockSize(
    "gpu-block-size",
    cl::desc("GPU targets: threads per block of loop kernels (a multiple "
             "of 32 up to 1024)"),
    cl::init(256), cl::cat(category));
static cl::opt<int64_t> gpuReductionMinSize(
    "gpu-reduction-min-size",
    cl::desc("GPU targets: reductions of at least this many elements per "
             "output get a block of threads per output (0: never)"),
    cl::init(32), cl::cat(category));
static cl::opt<int64_t> gpuVectorBytes(
    "gpu-vector-bytes",
    cl::desc("GPU targets: bytes per global load and store of elementwise "
             "kernels, whose threads then take several consecutive elements "
             "(16, 8, 4; 0: one element per thread)"),
    cl::init(16), cl::cat(category));
static cl::opt<int64_t> gpuTileStages(
    "gpu-tile-stages",
    cl::desc("GPU targets: shared-memory buffers per operand of the f16/bf16 "
             "matrix-product tiles; with 2 or more, the next tiles are copied "
             "with cp.async while the current one is multiplied (1: staged "
             "synchronously each step)"),
    cl::init(3), cl::cat(category));
static cl::opt<std::string> gpuHalfTile(
    "gpu-half-tile",
    cl::desc("GPU targets: the tiles of f16/bf16 matrix products, "
             "MxNxK/WMxWN: each block's output tile, its step along the "
             "reduction, and each warp's tile (powers of two; default "
             "64x64x32/32x32)"),
    cl::init("64x64x32/32x32"), cl::cat(category));
static cl::opt<std::string> gpuWideTile(
    "gpu-wide-tile",
    cl::desc("GPU targets: the tiles of the f16/bf16 matrix products that "
             "still get --gpu-wide-tile-blocks blocks of them (default "
             "128x128x32/64x64)"),
    cl::init("128x128x32/64x64"), cl::cat(category));
static cl::opt<int64_t> gpuWideTileBlocks(
    "gpu-wide-tile-blocks",
    cl::desc("GPU targets: f16/bf16 matrix products with at least this many "
             "--gpu-wide-tile output tiles run in them (-1, the default: "
             "the chip's multiprocessors; 0: never)"),
    cl::init(-1), cl::cat(category));
static cl::opt<bool> gpuTf32(
    "gpu-tf32",
    cl::desc("GPU targets: run f32 matrix products (MatMul, Gemm, ...) on "
             "tensor cores with tf32 inputs: a higher peak throughput, about "
             "3 significant digits per product (default off: exact f32)"),
    cl::init(false), cl::cat(category));
static cl::opt<int64_t> gpuSplitKBlocks(
    "gpu-split-k-blocks",
    cl::desc("GPU targets: split the reduction of a matrix product or "
             "convolution whose output has fewer 64x64 tiles than this among "
             "that many more blocks, summed after (-1, the default: the "
             "chip's multiprocessors, 132 for sm_90; 0: never)"),
    cl::init(-1), cl::cat(category));
static cl::opt<bool> gpuFlashAttention(
    "gpu-flash-attention",
    cl::desc("GPU targets: run each attention whose Q, K and V are f16 or "
             "bf16 (--precision=fp16|bf16, or a half-precision model) as "
             "one flash-attention kernel: the scores and probabilities stay "
             "in registers (default true; false: scores, softmax and "
             "context as separate kernels)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> gpuSplitKLastBlock(
    "gpu-split-k-last-block",
    cl::desc("GPU targets: a split product's partials are summed, with its "
             "bias, residual and activation, by the last block of each "
             "output tile to finish, in the split kernel (default false: "
             "by an elementwise kernel after it, which ran ResNet-50 at "
             "batch 1 faster on an H200)"),
    cl::init(false), cl::cat(category));
static cl::opt<int64_t> gpuSplitSumLoads(
    "gpu-split-sum-loads",
    cl::desc("GPU targets: loads of partials each thread of a split "
             "product's last block keeps in flight as it sums its tile "
             "(with --gpu-split-k-last-block; default 64: more hide more "
             "latency and take more registers)"),
    cl::init(64), cl::cat(category));
static cl::opt<bool> gpuWgmma(
    "gpu-wgmma",
    cl::desc("--target=sm_90a: f16/bf16, int8 and fp8 matrix products big "
             "enough for the wide tile run on Hopper's warpgroup tensor-core "
             "products (wgmma) in 128x128 tiles (default true there; false: "
             "mma.sync tiles; other targets have no wgmma)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> gpuWgmmaTile(
    "gpu-wgmma-tile",
    cl::desc("--target=sm_90a: the wgmma tiles, MxNxK[,MxNxK...]: each "
             "product takes the first of which it has at least "
             "--gpu-wide-tile-blocks, convolutions the first with N up to "
             "128 and K 32 (M rows in warpgroups of 64, up to 256; N a "
             "multiple of 64 up to 256; K 32 or 64; default "
             "128x256x64,128x128x64,128x128x32)"),
    cl::init("128x256x64,128x128x64,128x128x32"), cl::cat(category));
static cl::opt<int64_t> gpuWgmmaStages(
    "gpu-wgmma-stages",
    cl::desc("--target=sm_90a: shared-memory buffers of the wgmma tiles' "
             "cp.async pipeline (1 to 8, fewer where they would pass the "
             "227 KiB a block may have; default 3)"),
    cl::init(3), cl::cat(category));
static cl::opt<bool> gpuUnrollKLoop(
    "gpu-unroll-k-loop",
    cl::desc("GPU targets: let ptxas unroll the tiled contractions' loops "
             "over K (default true; false: `.pragma \"nounroll\"` on them, "
             "which keeps the mma.sync tile with a bias epilogue from "
             "spilling)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> gpuChannelsLast(
    "gpu-channels-last",
    cl::desc(
        "GPU targets: 2-D convolutions whose input and output channels fill "
        "16-byte runs are computed channels-last (NHWC input, weights "
        "reordered to [f, kh, kw, c]), the transposes between them "
        "cancelled (default true; false: NCHW implicit GEMMs)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> gpuTestMutation(
    "gpu-test-mutation", cl::Hidden,
    cl::desc("Plants a bug in the GPU kernels (drop-barrier, "
             "short-reduction, shuffle-up, swap-b-fragment, "
             "skip-last-k-tile, skip-last-split, swap-sparse-meta, "
             "swap-wgmma-strides, early-split-sum, keep-split-counters, "
             "skip-rescale) "
             "for the "
             "emulator's mutation "
             "tests"),
    cl::init(""), cl::cat(category));
enum class Emit { Kiln, Linalg, LLVMDialect, LLVMIR, PTX, KModule };
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::KModule),
    cl::values(clEnumValN(Emit::Kiln, "kiln", "the imported kiln IR"),
               clEnumValN(Emit::Linalg, "linalg", "linalg on tensors"),
               clEnumValN(Emit::LLVMDialect, "llvm",
                          "the LLVM dialect before translation"),
               clEnumValN(Emit::LLVMIR, "llvm-ir",
                          "optimized LLVM IR (CPU targets)"),
               clEnumValN(Emit::PTX, "ptx", "the kernels' PTX (GPU targets)"),
               clEnumValN(Emit::KModule, "kmod", "a .kmod module (default)")),
    cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::desc("Optimization level 0-3"),
                                  cl::Prefix, cl::init(3), cl::cat(category));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Static shape for an input, NAME:DxDxD; repeatable"),
                cl::CommaSeparated, cl::cat(category));
static cl::opt<int64_t> optBatch(
    "opt-batch",
    cl::desc("With a batch range (--input-shape=NAME:MIN..MAXx...): the "
             "batch to specialize for (default: the range's maximum)"),
    cl::init(0), cl::cat(category));
static cl::opt<int64_t> optLength(
    "opt-length",
    cl::desc("With a length range (--input-shape=NAME:...xMIN..MAXx...): "
             "the length to specialize for (default: the range's maximum)"),
    cl::init(0), cl::cat(category));
static cl::list<int64_t> lengthBucketsOpt(
    "length-buckets",
    cl::desc("With a length range: the lengths to compile code for (a run "
             "of length L runs the smallest at least L; default: the "
             "range's ends, --opt-length and the powers of two between)"),
    cl::CommaSeparated, cl::cat(category));
// Internal: the Softmax nodes over positions that a length range's
// variant masks (NODE:AXIS), from compileBatchRange.
static cl::list<std::string> lengthMasks("length-mask", cl::Hidden,
                                         cl::cat(category));
// Internal: a chunk of a batch range, compiled by compileBatchRange's
// child run; the module holds the LLVM dialect as MLIR bytecode instead
// of a shared object.
static cl::opt<bool> batchVariant("batch-variant", cl::Hidden, cl::init(false),
                                  cl::cat(category));
static cl::list<std::string> inputSequences(
    "input-sequence",
    cl::desc("The elements' shapes of a sequence input, NAME:DxD,DxD,... "
             "(one shape per element, `scalar` for a rank-0 one; NAME: for "
             "an empty sequence); repeatable"),
    cl::cat(category));
static cl::list<std::string> absentInputs(
    "input-absent",
    cl::desc("Compile these optional inputs without a value (the module "
             "does not take them); other optional inputs hold one"),
    cl::CommaSeparated, cl::cat(category));
static cl::list<std::string> inputValues(
    "input-value",
    cl::desc("Pin an input to a value, NAME:V[,V...] (one value per "
             "element, or one for all); the compiler folds on it (an If on it "
             "disappears) and the module refuses other values; repeatable"),
    cl::cat(category));
static cl::opt<int64_t> maxSequenceLoopTrips(
    "max-sequence-loop-trips",
    cl::desc("A Loop whose trip count is known only at run time and that "
             "appends to sequences the graph returns is unrolled this many "
             "times, its iterations predicated; a run that needs more is "
             "refused (default 16, at most 4096)"),
    cl::init(16), cl::cat(category));
static cl::opt<bool>
    parallel("parallel",
             cl::desc("Run parallel loops on OpenMP threads (default on; "
                      "--parallel=false gives single-threaded code with no "
                      "OpenMP dependency)"),
             cl::init(true), cl::cat(category));
static cl::opt<bool> fuseLayers(
    "fuse-layers",
    cl::desc("Replace the decomposed LayerNorm, RMSNorm, GELU, SiLU and "
             "attention that exporters write by one op each "
             "(kiln-fuse-layers; default on)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("Arithmetic precision of the model's float32 ops: fp32 (the "
             "default: exact float32), tf32 (GPU: float32 matrix products on "
             "tensor cores with tf32 inputs, as --gpu-tf32), fp16 or bf16 "
             "(contractions, elementwise ops, pooling and data movement in "
             "half precision with float32 accumulation; normalizations, "
             "softmax and reductions stay float32; inputs and outputs stay "
             "float32: kiln-mixed-precision), int8 (post-training "
             "quantization from --calibration-data: Conv and MatMul/Gemm "
             "with constant weights as integer kernels), or fp8 (the same "
             "ops quantized to float8 e4m3 from --calibration-data: on "
             "sm_89 and later on the fp8 tensor cores, elsewhere in "
             "float32 between the quantizations)"),
    cl::init("fp32"), cl::cat(category));
static cl::opt<bool> foldQdq(
    "fold-qdq",
    cl::desc("Run a quantized (QDQ) model's Conv and MatMul with constant "
             "weights as integer QLinearConv/QLinearMatMul (kiln-fold-qdq; "
             "int32 accumulation, ONNX Runtime's results exactly). On by "
             "default; --fold-qdq=false computes in float between the Q/DQ "
             "pairs"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> calibrationData(
    "calibration-data",
    cl::desc("With --precision=int8 or fp8: a folder of calibration "
             "samples, one "
             "sub-folder per sample holding input_K.npy or input_K.pb (the "
             "layout of ONNX's test_data_set_N)"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> calibrationMethod(
    "calibration-method",
    cl::desc("With --precision=int8 or fp8: how a tensor's range is chosen "
             "from the samples: entropy (the clipping threshold that keeps "
             "most information, by KL divergence; int8's default), "
             "percentile (99.99th of |x|) or minmax (fp8's default: float8 "
             "keeps its relative precision out to the largest values)"),
    cl::init("entropy"), cl::cat(category));
static cl::opt<std::string> calibrationCache(
    "calibration-cache",
    cl::desc("With --precision=int8 or fp8: a file of the calibrated ranges "
             "(name<TAB>min<TAB>max per line); written when "
             "--calibration-data is given, else read"),
    cl::init(""), cl::cat(category));
static cl::list<std::string> keepPrecision(
    "keep-precision",
    cl::desc("With --precision=fp16 or bf16: ONNX nodes (by name, "
             "comma-separated) that stay float32"),
    cl::CommaSeparated, cl::cat(category));
static cl::opt<unsigned> cpuVectorBits(
    "cpu-vector-bits",
    cl::desc("CPU target: the vector register width in bits that "
             "contractions are tiled and packed for (128, 256 or 512; "
             "default: the widest the --cpu has)"),
    cl::init(0), cl::cat(category));
static cl::opt<int64_t> cpuRegisterTileM(
    "cpu-register-tile-m",
    cl::desc("CPU target: rows of a contraction's register tile (default: 8 "
             "with 512-bit vectors, else 6)"),
    cl::init(0), cl::cat(category));
static cl::opt<int64_t> cpuKChunkBytes(
    "cpu-k-chunk-bytes",
    cl::desc("CPU target: sweep a contraction's reduction in chunks that "
             "read this many bytes of each register tile's weight panel, "
             "around the row tiles, so that each chunk of the weights is "
             "read from memory once and then from L1 (0: each row tile "
             "sweeps the whole panel; default: 16 KiB chunks where the "
             "panel is an activation read in place, as in a MatMul whose "
             "weight is the left operand, and its slice is past 256 KiB "
             "with at least 8 row tiles; packed weight panels in one "
             "sweep)"),
    cl::init(-1), cl::cat(category));
static cl::opt<std::string> cpuInt8Dot(
    "cpu-int8-dot",
    cl::desc("CPU target: how 8-bit GEMMs sum their products: amx (AMX's "
             "tile multiply; vnni for MatMuls under 16 rows), vnni (AVX-512 "
             "VNNI's vpdpbusd), avxvnni (256-bit vpdpbusd), avx2 (vpsignb, "
             "vpmaddubsw and vpmaddwd on signed bytes), generic (plain "
             "vector ops) or auto (with 512-bit vectors, amx when the --cpu "
             "has AMX-INT8, else vnni when it has AVX-512 VNNI; else avxvnni "
             "when it has AVX-VNNI, else avx2 when it has AVX2)"),
    cl::init("auto"), cl::cat(category));
static cl::opt<std::string> cpuBf16Dot(
    "cpu-bf16-dot",
    cl::desc("CPU target: how bf16 contractions (--precision=bf16) sum "
             "their products: amx (AMX's tile multiply, for convolutions "
             "and for MatMuls and Gemms of 16 rows or more, with constant "
             "weights; the rest on vdpbf16ps where the --cpu has it), "
             "avx512bf16 (AVX-512 BF16's "
             "vdpbf16ps, two products per f32 lane), generic (each value "
             "widened to f32, then FMAs) or auto (amx when the --cpu has "
             "AMX-BF16, else avx512bf16 when it has AVX-512 BF16)"),
    cl::init("auto"), cl::cat(category));
static cl::opt<std::string> sparsity(
    "sparsity",
    cl::desc("2:4 structured sparsity of MatMul/Gemm weights (also of int8 "
             "QLinearMatMul/MatMulInteger weights: a QDQ model's, or "
             "--precision=int8's; on a GPU target also of 2-D Conv weights, "
             "2:4 along the input channels at each window tap): off (the "
             "default), on (weights that are "
             "already 2:4 along K, as "
             "2:4-pruned training leaves them, run compressed where a "
             "sparse kernel is faster: kiln-sparsify, kiln-cpu-sparse-gemm) "
             "or force (the other eligible weights are first pruned to 2:4 "
             "by magnitude, which changes the outputs). --report lists every "
             "contraction, sparse or dense and why"),
    cl::init("off"), cl::cat(category));
static cl::opt<bool> cpuPrefetchPanels(
    "cpu-prefetch-panels",
    cl::desc("CPU target: in the row tiles after the first of a contraction "
             "with a constant weight, prefetch the next block's weight panel "
             "into L2, so that weights that no cache holds stream from "
             "memory while the FMAs run (default on; "
             "kiln-cpu-prefetch-panels)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> cpuFuseResiduals(
    "cpu-fuse-residuals",
    cl::desc("CPU target: compute a residual Add + Relu after a convolution "
             "or GEMM in its register tiles, each reading the residual where "
             "it writes, instead of in a pass of its own (default off: "
             "slower on ResNet-50, see docs/performance.md)"),
    cl::init(false), cl::cat(category));
static cl::opt<int64_t> cpuSparseMaxRows(
    "cpu-sparse-max-rows",
    cl::desc("CPU target, with --sparsity: 2:4 products with more rows (the "
             "output's elements over its last dim) stay dense, where the "
             "dense register tiles are faster (default: 4 with 512-bit "
             "vectors, 8 with 256-bit ones)"),
    cl::init(-1), cl::cat(category));
/// Loaded as the option is parsed, as mlir-opt does; --pipeline-after's
/// pipelines are parsed after every option, so the order does not matter.
static cl::list<std::string> passPlugins(
    "load-pass-plugin",
    cl::desc("Load passes from a plugin library (an MLIR PassPlugin: "
             "mlirGetPassPluginInfo), to name in --pipeline-after; "
             "repeatable"),
    cl::callback([](const std::string &path) {
      auto plugin = mlir::PassPlugin::load(path);
      if (!plugin) {
        llvm::errs() << "kiln-compile: error: cannot load pass plugin '" << path
                     << "': " << llvm::toString(plugin.takeError()) << "\n";
        exit(1);
      }
      plugin->registerPassRegistryCallbacks();
    }),
    cl::cat(category));
static cl::list<std::string> dialectPlugins(
    "load-dialect-plugin",
    cl::desc("Load dialects from a plugin library (an MLIR DialectPlugin: "
             "mlirGetDialectPluginInfo); repeatable"),
    cl::cat(category));
static cl::list<std::string> pipelineAfter(
    "pipeline-after",
    cl::desc("POINT:PIPELINE: run a pass pipeline (a pass list on the module, "
             "as inside --pass-pipeline='builtin.module(...)') at a named "
             "point: import (the imported kiln IR), graph (after Kiln's "
             "graph passes, before the lowering to linalg) or kiln-to-linalg "
             "(linalg on tensors, before code generation); repeatable, run in "
             "the order given"),
    cl::cat(category));
static cl::opt<bool> report("report",
                            cl::desc("Print a compile report (signature, "
                                     "memory plan, code size) to stderr"),
                            cl::init(false), cl::cat(category));
static cl::opt<bool> profileRegions(
    "profile",
    cl::desc("CPU target: mark every computation of the graph so that "
             "kiln-run --profile can time it (GPU modules are always "
             "profiled per kernel)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> noOnnxChecks("no-onnx-checks",
                                  cl::desc("Skip libonnx's checker and shape "
                                           "inference on import"),
                                  cl::init(false), cl::cat(category));

namespace {
int fail(const llvm::Twine &message) {
  llvm::errs() << "kiln-compile: error: " << message << "\n";
  return 1;
}

/// Applies `--input-value=NAME:V[,V...]`: uses of the input in @main become
/// a constant of that value, and the argument keeps it in
/// `kiln.pinned_value` for the module's signature (the runtime checks it).
bool pinInputValue(ModuleOp module, StringRef spec, std::string &error) {
  auto [name, list] = spec.rsplit(':');
  if (list.empty() && !spec.contains(':')) {
    error = "'" + spec.str() + "' is not NAME:V[,V...]";
    return false;
  }
  auto fn = module.lookupSymbol<func::FuncOp>("main");
  if (!fn) {
    error = "the module has no func.func @main";
    return false;
  }
  std::string names;
  for (BlockArgument arg : fn.getArguments()) {
    auto argName =
        fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name");
    if (!argName)
      continue;
    if (argName.getValue() != name) {
      names += (names.empty() ? "" : ", ") + argName.str();
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape()) {
      error = "input '" + name.str() + "' has a dynamic shape; give it with " +
              "--input-shape first";
      return false;
    }
    SmallVector<StringRef> items;
    list.split(items, ',');
    int64_t n = type.getNumElements();
    if (static_cast<int64_t>(items.size()) != n && items.size() != 1) {
      error = "input '" + name.str() + "' has " + std::to_string(n) +
              " elements; " + std::to_string(items.size()) + " values given";
      return false;
    }
    Type elt = type.getElementType();
    SmallVector<Attribute> values;
    for (StringRef item : items) {
      item = item.trim();
      if (elt.isInteger(1)) {
        if (item != "0" && item != "1" && item != "true" && item != "false") {
          error = "'" + item.str() + "' is not a bool (0, 1, true, false)";
          return false;
        }
        values.push_back(
            BoolAttr::get(module.getContext(), item == "1" || item == "true"));
      } else if (auto it = dyn_cast<IntegerType>(elt)) {
        APInt v;
        if (item.getAsInteger(10, v) ||
            (it.isUnsigned() ? v.getActiveBits() > it.getWidth()
                             : v.getSignificantBits() > it.getWidth())) {
          error = "'" + item.str() + "' is not a value of " +
                  kiln::rt::dtypeName(
                      static_cast<kiln::rt::DType>(kiln::getOnnxDataType(elt)));
          return false;
        }
        values.push_back(IntegerAttr::get(elt, v.sextOrTrunc(it.getWidth())));
      } else if (auto ft = dyn_cast<FloatType>(elt)) {
        double v;
        if (item.getAsDouble(v)) {
          error = "'" + item.str() + "' is not a number";
          return false;
        }
        values.push_back(FloatAttr::get(ft, v));
      } else {
        error = "input '" + name.str() + "' has an element type that " +
                "--input-value does not take";
        return false;
      }
    }
    if (values.size() == 1 && n != 1)
      values.assign(n, values[0]);
    auto attr = DenseElementsAttr::get(type, values);
    OpBuilder b(fn.getBody());
    Value c = kiln::ConstantOp::create(b, arg.getLoc(), type, attr);
    arg.replaceAllUsesWith(c);
    fn.setArgAttr(arg.getArgNumber(), "kiln.pinned_value", attr);
    return true;
  }
  error = "the model has no input '" + name.str() + "' (inputs: " + names + ")";
  return false;
}

/// Signature of `main` once shapes are static, with the ONNX names. An
/// output whose extent along one dim depends on the data (the lowering
/// marks it with `kiln.dynamic_dim` and returns its upper bound, and its
/// valid extent as the result `kiln.extent_result`, after all the outputs)
/// has a -1 there and the bound as `max_extent`; the extent results are
/// buffers of the code, not outputs.
bool collectSignature(func::FuncOp fn, kiln::kmod::Module &module,
                      std::string &error) {
  auto add = [&](Type t, DictionaryAttr attrs, const std::string &fallback,
                 kiln::kmod::TensorSignature *sig) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape()) {
      error = "'" + fallback + "' has a dynamic shape; give it with " +
              "--input-shape";
      return false;
    }
    // The lowering computes on signless integers; the ONNX element type
    // (unsigned, say) is kept in an attribute.
    Type elt = rt.getElementType();
    if (auto kept =
            attrs ? attrs.getAs<TypeAttr>("kiln.element_type") : TypeAttr())
      elt = kept.getValue();
    int64_t dt = kiln::getOnnxDataType(elt);
    if (!dt || kiln::dataTypeSize(dt) == 0) {
      error = "'" + fallback +
              "' has an element type the runtime cannot "
              "exchange";
      return false;
    }
    auto name = attrs ? attrs.getAs<StringAttr>("kiln.name") : StringAttr();
    sig->set_name(name ? name.str() : fallback);
    sig->set_dtype(static_cast<int32_t>(dt));
    for (int64_t d : rt.getShape())
      sig->add_shape(d);
    if (auto pinned = attrs
                          ? attrs.getAs<DenseElementsAttr>("kiln.pinned_value")
                          : DenseElementsAttr()) {
      // The tensor's raw bytes: one byte per bool, little-endian values.
      std::string bytes;
      size_t esize = kiln::dataTypeSize(dt);
      if (pinned.getElementType().isInteger(1)) {
        for (bool v : pinned.getValues<bool>())
          bytes.push_back(v ? 1 : 0);
      } else if (isa<FloatType>(pinned.getElementType())) {
        for (const APFloat &v : pinned.getValues<APFloat>()) {
          uint64_t bits = v.bitcastToAPInt().getZExtValue();
          bytes.append(reinterpret_cast<const char *>(&bits), esize);
        }
      } else {
        for (const APInt &v : pinned.getValues<APInt>()) {
          uint64_t bits = v.getZExtValue();
          bytes.append(reinterpret_cast<const char *>(&bits), esize);
        }
      }
      sig->set_pinned_value(bytes);
    }
    if (auto dim = attrs ? attrs.getAs<IntegerAttr>("kiln.dynamic_dim")
                         : IntegerAttr()) {
      sig->set_max_extent(rt.getDimSize(dim.getInt()));
      sig->set_shape(dim.getInt(), -1);
    }
    return true;
  };
  auto type = fn.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (!add(type.getInput(i), fn.getArgAttrDict(i),
             "input" + std::to_string(i), module.add_inputs()))
      return false;
  // The extent results follow the outputs, in the order of their outputs.
  unsigned numOutputs = type.getNumResults();
  SmallVector<int64_t> extentResults;
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    if (auto e = fn.getResultAttrOfType<IntegerAttr>(i, "kiln.extent_result"))
      extentResults.push_back(e.getInt());
  numOutputs -= extentResults.size();
  for (auto [k, e] : llvm::enumerate(extentResults))
    if (e != static_cast<int64_t>(numOutputs + k)) {
      error = "the extents of the data-dependent outputs are not the last "
              "results of @main in output order";
      return false;
    }
  for (unsigned i = 0; i < numOutputs; ++i)
    if (!add(type.getResult(i), fn.getResultAttrDict(i),
             "output" + std::to_string(i), module.add_outputs()))
      return false;
  // Sequence and optional inputs and outputs, flattened into their
  // tensors by the importer (inputs) and kiln-infer-shapes (outputs).
  if (auto seqs = fn->getAttrOfType<ArrayAttr>("kiln.composites")) {
    for (auto d : seqs.getAsRange<DictionaryAttr>()) {
      auto name = d.getAs<StringAttr>("name");
      auto first = d.getAs<IntegerAttr>("first");
      auto length = d.getAs<IntegerAttr>("length");
      auto elt = d.getAs<TypeAttr>("element_type");
      auto kind = d.getAs<StringAttr>("kind");
      int64_t dt = elt ? kiln::getOnnxDataType(elt.getValue()) : 0;
      using Sig = kiln::kmod::CompositeSignature;
      std::optional<Sig::Kind> k;
      if (kind && kind.getValue() == "sequence")
        k = Sig::SEQUENCE;
      else if (kind && kind.getValue() == "optional_tensor")
        k = Sig::OPTIONAL_TENSOR;
      else if (kind && kind.getValue() == "optional_sequence")
        k = Sig::OPTIONAL_SEQUENCE;
      if (!name || !first || !length || !dt || !k) {
        error = "@main's kiln.composites entry is malformed";
        return false;
      }
      auto *q = module.add_composites();
      q->set_name(name.str());
      q->set_output(d.contains("output"));
      q->set_dtype(static_cast<int32_t>(dt));
      q->set_first(static_cast<int32_t>(first.getInt()));
      q->set_length(static_cast<int32_t>(length.getInt()));
      q->set_kind(*k);
      q->set_absent(d.contains("absent"));
      q->set_run_time_count(d.contains("run_time_count"));
    }
  }
  return true;
}

/// The memory plan `kiln-plan-memory` recorded on the module.
void readMemoryPlan(ModuleOp module, kiln::kmod::Module &kmod) {
  auto planAttr = module->getAttrOfType<DictionaryAttr>("kiln.memory_plan");
  if (!planAttr)
    return;
  auto get = [&](StringRef key) {
    auto a = planAttr.getAs<IntegerAttr>(key);
    return a ? a.getInt() : 0;
  };
  auto *plan = kmod.mutable_memory_plan();
  plan->set_arena_bytes(get("arena_bytes"));
  plan->set_unplanned_bytes(get("unplanned_bytes"));
  plan->set_lower_bound_bytes(get("lower_bound_bytes"));
  plan->set_buffers(get("buffers"));
}

void printSignatureAndPlan(const kiln::kmod::Module &kmod) {
  auto mb = [](int64_t b) {
    return llvm::formatv("{0:F2} MiB", b / 1048576.0);
  };
  const auto &plan = kmod.memory_plan();
  llvm::errs() << "compile report for " << inputFile << "\n";
  auto printShape = [&](const kiln::kmod::TensorSignature &t) {
    for (int i = 0; i < t.shape_size(); ++i) {
      llvm::errs() << (i ? "x" : "");
      if (i == 0 && t.batched())
        llvm::errs() << kmod.batch().min() << "..";
      else if (llvm::is_contained(t.length_dims(), i))
        llvm::errs() << kmod.length().min() << "..";
      llvm::errs() << t.shape(i);
    }
  };
  for (const auto &t : kmod.inputs()) {
    llvm::errs() << "  input  " << t.name() << ": "
                 << kiln::rt::dtypeName(static_cast<kiln::rt::DType>(t.dtype()))
                 << " [";
    printShape(t);
    llvm::errs() << "]"
                 << (t.pinned_value().empty() ? "" : ", pinned (--input-value)")
                 << "\n";
  }
  for (const auto &t : kmod.outputs()) {
    llvm::errs() << "  output " << t.name() << ": "
                 << kiln::rt::dtypeName(static_cast<kiln::rt::DType>(t.dtype()))
                 << " [";
    printShape(t);
    llvm::errs() << "]";
    if (t.max_extent())
      llvm::errs() << " (-1: data-dependent, at most " << t.max_extent() << ")";
    llvm::errs() << "\n";
  }
  llvm::errs() << "  memory plan: " << plan.buffers()
               << " intermediate buffers; arena (peak) " << plan.arena_bytes()
               << " bytes (" << mb(plan.arena_bytes()) << "), without planning "
               << plan.unplanned_bytes() << " bytes ("
               << mb(plan.unplanned_bytes()) << "), lower bound "
               << plan.lower_bound_bytes() << " bytes ("
               << mb(plan.lower_bound_bytes()) << ")\n";
}

/// The runtime's limits (kiln/Target/ModuleFormat.cpp refuses modules past
/// them): fails at compile time instead, naming the tensor or the arena
/// and the input shapes that made it so large.
bool checkLimits(const kiln::kmod::Module &kmod, std::string &error) {
  constexpr int64_t kLimit = int64_t(1) << 40; // 1 TiB
  auto inputShapes = [&] {
    std::string s;
    for (const auto &t : kmod.inputs()) {
      s += (s.empty() ? "" : ", ") + t.name() + ": ";
      for (int i = 0; i < t.shape_size(); ++i)
        s += (i ? "x" : "") + std::to_string(t.shape(i));
    }
    return s;
  };
  auto tib = [](double b) {
    return llvm::formatv("{0:F1} TiB", b / double(int64_t(1) << 40)).str();
  };
  for (const auto *list : {&kmod.inputs(), &kmod.outputs()})
    for (const auto &t : *list) {
      double bytes = double(kiln::dataTypeSize(t.dtype()));
      for (int64_t d : t.shape())
        bytes *= double(d < 0 ? t.max_extent() : d);
      if (bytes > double(kLimit)) {
        error = (list == &kmod.inputs() ? "input '" : "output '") + t.name() +
                "' would take " + tib(bytes) +
                ", over the runtime's limit of 1 TiB per tensor (inputs " +
                inputShapes() + ")";
        return false;
      }
    }
  int64_t arena = kmod.memory_plan().arena_bytes();
  if (arena > kLimit) {
    error = "the intermediate tensors need an arena of " + tib(double(arena)) +
            ", over the runtime's limit of 1 TiB (inputs " + inputShapes() +
            "); give smaller shapes with --input-shape";
    return false;
  }
  return true;
}

/// Writes `bytes` to `path` through a temporary file renamed into place.
int writeWhole(StringRef path, StringRef bytes) {
  std::string error;
  auto out = openOutputFile(path, &error);
  if (!out)
    return fail(error);
  out->os() << bytes;
  out->os().flush();
  if (out->os().has_error())
    return fail("cannot write '" + path + "'");
  out->keep();
  return 0;
}

/// Writes `kmod` as a .kmod file, or fails naming its size where it is
/// over what the format (a protobuf message) holds: 2 GiB, weights and
/// code included. Nothing is written then.
int writeModule(StringRef path, kiln::kmod::Module &kmod) {
  size_t bytes = kmod.ByteSizeLong();
  if (bytes > size_t(std::numeric_limits<int32_t>::max()))
    return fail(llvm::formatv("the module takes {0:F2} GiB (weights and code "
                              "together), over the 2 GiB that a .kmod file "
                              "holds; models this large (a UNet of 860 M "
                              "float32 parameters) do not fit the format yet",
                              double(bytes) / double(1 << 30))
                    .str());
  return writeWhole(path, kiln::serializeModule(kmod));
}
} // namespace

/// The GPU half of the driver: kernels and launch plan, PTX, the cubin
/// when ptxas is there, and the emulator's host code.
/// @main's signature into `kmod` (with the graph's name), its names then
/// dropped from the IR; `numArgs`: its arguments and results.
bool prepareSignature(ModuleOp module, kiln::kmod::Module &kmod,
                      unsigned &numArgs, std::string &error) {
  auto fn = module.lookupSymbol<func::FuncOp>("main");
  if (!fn) {
    error = "the module has no func.func @main";
    return false;
  }
  if (!collectSignature(fn, kmod, error))
    return false;
  numArgs = fn.getNumArguments() + fn.getNumResults();
  // The names now live in the signature; LLVM has no use for them.
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    fn.removeArgAttr(i, "kiln.name");
    fn.removeArgAttr(i, "kiln.pinned_value");
    fn.removeArgAttr(i, "kiln.element_type");
  }
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    for (StringRef attr : {"kiln.name", "kiln.dynamic_dim",
                           "kiln.extent_result", "kiln.element_type"})
      fn.removeResultAttr(i, StringAttr::get(module.getContext(), attr));
  if (auto name = module->getAttrOfType<StringAttr>("kiln.graph_name"))
    kmod.set_graph_name(name.str());
  kmod.set_producer("kiln-compile");
  return true;
}

/// The CPU code generation pipeline on `module` (linalg on tensors), with
/// the memory plan into `kmod`; the arena adds an argument.
LogicalResult lowerForCpu(ModuleOp module, PassManager &pm,
                          kiln::kmod::Module &kmod, unsigned &numArgs,
                          bool profile, StringRef cpu) {
  kiln::CpuPipelineOptions cpuOptions;
  cpuOptions.cpu = cpu.str();
  cpuOptions.optLevel = optLevel;
  cpuOptions.threads = parallel;
  cpuOptions.profile = profile;
  cpuOptions.vectorBits = cpuVectorBits;
  cpuOptions.registerTileM = cpuRegisterTileM;
  cpuOptions.kChunkBytes = cpuKChunkBytes;
  cpuOptions.int8Dot = cpuInt8Dot;
  cpuOptions.bf16Dot = cpuBf16Dot;
  cpuOptions.sparseMaxRows = cpuSparseMaxRows;
  cpuOptions.fuseResiduals = cpuFuseResiduals;
  cpuOptions.prefetchPanels = cpuPrefetchPanels;
  kiln::buildCpuCodegenPipeline(pm, cpuOptions);
  if (failed(pm.run(module)))
    return failure();
  readMemoryPlan(module, kmod);
  if (kmod.memory_plan().arena_bytes() > 0)
    ++numArgs; // The arena follows the outputs.
  return success();
}

/// `module` (the LLVM dialect) as a shared object in `kmod`'s code, with
/// its profile regions; `llvmIr` gets the LLVM IR when given.
bool attachCpuCode(ModuleOp module, kiln::kmod::Module &kmod, unsigned numArgs,
                   const kiln::CpuTarget &cpu, llvm::raw_ostream *llvmIr,
                   uint64_t &soBytes, std::string &error,
                   unsigned *pieces = nullptr) {
  SmallString<256> soPath;
  if (auto ec = llvm::sys::fs::createTemporaryFile("kiln", "so", soPath)) {
    error = "cannot create a temporary file: " + ec.message();
    return false;
  }
  llvm::scope_exit removeSo([&] { llvm::sys::fs::remove(soPath); });
  if (failed(kiln::emitCpuSharedObject(module, numArgs, optLevel, cpu, soPath,
                                       error, llvmIr, pieces)))
    return false;
  if (llvmIr)
    return true;
  auto so = llvm::MemoryBuffer::getFile(soPath, /*IsText=*/false);
  if (!so) {
    error = "cannot read the shared object back";
    return false;
  }
  auto *code = kmod.add_code();
  code->set_target("cpu-x86_64");
  code->set_format("elf-shared-object");
  code->set_entry("kiln_entry");
  code->set_cpu(cpu.name);
  for (const std::string &f : cpu.checkedFeatures(kiln::usesAmxTiles(module)))
    code->add_cpu_features(f);
  if (auto regions = module->getAttrOfType<ArrayAttr>("kiln.profile_regions"))
    for (auto name : regions.getAsRange<StringAttr>())
      code->add_profile_regions(name.str());
  auto costs = [&](StringRef attr, auto add) {
    if (auto a = module->getAttrOfType<DenseI64ArrayAttr>(attr))
      for (int64_t v : a.asArrayRef())
        add(v);
  };
  costs("kiln.profile_flops",
        [&](int64_t v) { code->add_profile_region_flops(v); });
  costs("kiln.profile_bytes",
        [&](int64_t v) { code->add_profile_region_bytes(v); });
  code->set_data((*so)->getBufferStart(), (*so)->getBufferSize());
  soBytes = (*so)->getBufferSize();
  return true;
}

/// --pipeline-after's pipelines, by point.
std::vector<std::pair<std::string, std::string>> userPipelines;

/// Adds --pipeline-after's pipelines for `point` to `pm` (parsed when
/// the options were checked, so this does not fail).
void addUserPipelines(OpPassManager &pm, StringRef point) {
  for (const auto &[p, text] : userPipelines)
    if (p == point)
      (void)parsePassPipeline(text, pm, llvm::nulls());
}

/// Checks --pipeline-after: a known point, a pipeline that parses.
int parseUserPipelines(MLIRContext &context) {
  for (const std::string &spec : pipelineAfter) {
    size_t colon = spec.find(':');
    std::string point = spec.substr(0, colon);
    if (colon == std::string::npos ||
        (point != "import" && point != "graph" && point != "kiln-to-linalg"))
      return fail("--pipeline-after='" + spec +
                  "': give POINT:PIPELINE with POINT import, graph or "
                  "kiln-to-linalg");
    StringRef text = StringRef(spec).drop_front(colon + 1).trim();
    if (text.consume_front("builtin.module(") && !text.consume_back(")"))
      return fail("--pipeline-after='" + spec + "': unbalanced parentheses");
    PassManager pm(&context);
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipeline(text, pm, os)))
      return fail("--pipeline-after='" + spec +
                  "': " + StringRef(error).trim() +
                  (passPlugins.empty()
                       ? ""
                       : " (passes from --load-pass-plugin are named by "
                         "their argument)"));
    userPipelines.emplace_back(point, text.str());
  }
  return 0;
}

/// The graph passes that precede quantization (the start of
/// kiln-to-linalg-pipeline, which runs them again, unchanged).
void addGraphPasses(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(kiln::createKilnInferShapes());
  if (fuseLayers)
    pm.addPass(kiln::createKilnFuseLayers());
  pm.addPass(kiln::createKilnFoldBatchNorm());
}

/// A copy of `module` for a calibration run over --calibration-data: an
/// ONNX model imported again with the first sample's shapes (a sample may
/// be one image where the module runs a batch), other input copied; then
/// the graph passes, `extra` (the passes that expose the tensors to
/// observe), the lowering and the CPU pipelines, as .kmod bytes whose
/// outputs from `first` (the model's own outputs come first) are named in
/// `keys`.
int calibrationModule(ModuleOp module, unsigned first,
                      llvm::function_ref<void(OpPassManager &)> extra,
                      std::string &bytes, std::vector<std::string> &keys) {
  MLIRContext *ctx = module.getContext();
  auto fn = module.lookupSymbol<func::FuncOp>("main");
  OwningOpRef<ModuleOp> copy;
  std::string error;
  if (kiln::isOnnxFileName(inputFile)) {
    std::vector<std::vector<int64_t>> shapes;
    if (!kiln::sampleShapes(calibrationData, fn.getNumArguments(), shapes,
                            error))
      return fail(error);
    kiln::OnnxImportOptions options;
    options.onnxChecks = !noOnnxChecks;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (auto name = fn.getArgAttrOfType<StringAttr>(i, "kiln.name"))
        options.inputShapes[name.getValue()] =
            SmallVector<int64_t>(shapes[i].begin(), shapes[i].end());
    copy = kiln::importOnnxFile(inputFile, ctx, options);
    if (!copy)
      return 1;
  } else {
    copy = module.clone();
  }
  PassManager pm(ctx);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  addGraphPasses(pm);
  extra(pm);
  kiln::buildKilnToLinalgPipeline(
      pm, fuseLayers, "", {}, true, "", /*gpuTarget=*/false,
      [](OpPassManager &pm) { addUserPipelines(pm, "graph"); });
  if (failed(pm.run(*copy)))
    return 1;
  auto copyFn = copy->lookupSymbol<func::FuncOp>("main");
  keys.clear();
  for (unsigned i = first; i < copyFn.getNumResults(); ++i)
    if (auto name = copyFn.getResultAttrOfType<StringAttr>(i, "kiln.name"))
      keys.push_back(name.str());
  if (keys.size() != copyFn.getNumResults() - first)
    return fail("the calibration module's outputs are not named");
  kiln::kmod::Module kmod;
  unsigned numArgs = 0;
  if (!prepareSignature(*copy, kmod, numArgs, error))
    return fail(error);
  PassManager lower(ctx);
  if (failed(applyPassManagerCLOptions(lower)) ||
      failed(lowerForCpu(*copy, lower, kmod, numArgs, false, "native")))
    return 1;
  // The calibration module runs here, whatever --cpu the model is for.
  FailureOr<kiln::CpuTarget> host = kiln::resolveCpuTarget("native", error);
  if (failed(host))
    return fail(error);
  uint64_t soBytes = 0;
  if (!attachCpuCode(*copy, kmod, numArgs, *host, nullptr, soBytes, error))
    return fail(error);
  bytes = kiln::serializeModule(kmod);
  return 0;
}

/// The contractions that kiln-gpu-sparse-weights or kiln-cpu-sparse-gemm
/// gave a sparse kernel, and the reason the first dense one names.
std::pair<unsigned, std::string> sparseKernels(ModuleOp module) {
  unsigned sparse = 0;
  std::string reason;
  if (auto kernels = module->getAttrOfType<ArrayAttr>("kiln.sparse_kernels"))
    for (auto k : kernels.getAsRange<DictionaryAttr>()) {
      auto kind = k.getAs<StringAttr>("kernel");
      if (kind && kind.getValue() == "sparse")
        ++sparse;
      else if (auto why = k.getAs<StringAttr>("reason"); why && reason.empty())
        reason = why.getValue().str();
    }
  return {sparse, reason};
}

/// --report's list of the contractions under --sparsity: kiln-sparsify's
/// `kiln.sparsity_layers` (2:4 or why not), with kiln-cpu-sparse-gemm's
/// `kiln.sparse_kernels` (the kernel, or why it stays dense) by node name.
void printSparsity(ModuleOp module) {
  auto layers = module->getAttrOfType<ArrayAttr>("kiln.sparsity_layers");
  if (!layers)
    return;
  auto kernels = module->getAttrOfType<ArrayAttr>("kiln.sparse_kernels");
  llvm::StringMap<DictionaryAttr> byName;
  if (kernels)
    for (auto k : kernels.getAsRange<DictionaryAttr>())
      if (auto name = k.getAs<StringAttr>("name"))
        byName[name.getValue()] = k;
  auto str = [](DictionaryAttr d, StringRef key) -> StringRef {
    auto a = d ? d.getAs<StringAttr>(key) : StringAttr();
    return a ? a.getValue() : StringRef();
  };
  auto num = [](DictionaryAttr d, StringRef key) -> int64_t {
    auto a = d ? d.getAs<IntegerAttr>(key) : IntegerAttr();
    return a ? a.getInt() : -1;
  };
  unsigned sparse = 0;
  int64_t denseBytes = 0, sparseBytes = 0;
  std::string lines;
  llvm::raw_string_ostream os(lines);
  for (auto layer : layers.getAsRange<DictionaryAttr>()) {
    StringRef name = str(layer, "name");
    os << "    " << (name.empty() ? "(unnamed)" : name) << " ("
       << str(layer, "op") << ")";
    if (num(layer, "k") >= 0)
      os << " K=" << num(layer, "k") << " N=" << num(layer, "n");
    os << ": ";
    auto marked = layer.getAs<BoolAttr>("sparse");
    if (!marked || !marked.getValue()) {
      os << "dense: " << str(layer, "reason") << "\n";
      continue;
    }
    if (num(layer, "pruned") >= 0)
      os << llvm::formatv(
          "pruned to 2:4 ({0} values zeroed, {1:P1} of the "
          "weight's L2 norm), ",
          num(layer, "pruned"),
          layer.getAs<FloatAttr>("pruned_norm").getValueAsDouble());
    DictionaryAttr kernel = byName.lookup(name);
    if (!kernel) {
      os << "2:4, dense kernel: the product was not found after lowering\n";
      continue;
    }
    if (str(kernel, "kernel") != "sparse") {
      os << "2:4, dense kernel: " << str(kernel, "reason") << "\n";
      continue;
    }
    ++sparse;
    denseBytes += num(kernel, "dense_bytes");
    sparseBytes += num(kernel, "sparse_bytes");
    os << llvm::formatv("sparse kernel, weight {0} -> {1} bytes ({2:P1})\n",
                        num(kernel, "dense_bytes"), num(kernel, "sparse_bytes"),
                        double(num(kernel, "sparse_bytes")) /
                            num(kernel, "dense_bytes"));
  }
  llvm::errs() << "  sparsity: " << sparse << " of " << layers.size()
               << " contractions run 2:4 sparse";
  if (sparse)
    llvm::errs() << llvm::formatv(", their weights {0} -> {1} bytes",
                                  denseBytes, sparseBytes);
  if (auto shared =
          module->getAttrOfType<IntegerAttr>("kiln.sparse_shared_bytes");
      sparse && shared)
    llvm::errs() << llvm::formatv(
        " plus a shared permutation table of {0} bytes", shared.getInt());
  llvm::errs() << "\n" << lines;
}

/// --sparsity=force with --calibration-data: how much pruning to 2:4
/// changes each output, the model compiled for the CPU dense and pruned
/// (kiln-sparsify{mode=force}) and run over up to 32 samples: its SQNR
/// against the dense model's output, printed (as a warning when under 20
/// dB, a change that can flip a classification).
int measurePruning(ModuleOp module) {
  auto fn = module.lookupSymbol<func::FuncOp>("main");
  if (!fn)
    return fail("the module has no func.func @main");
  std::string denseBytes, prunedBytes, error;
  std::vector<std::string> denseKeys, prunedKeys;
  if (int rc = calibrationModule(
          module, 0, [](OpPassManager &) {}, denseBytes, denseKeys))
    return rc;
  if (int rc = calibrationModule(
          module, 0,
          [](OpPassManager &pm) {
            kiln::KilnSparsifyOptions options;
            options.mode = "force";
            // Convolutions are pruned where their sparse kernels run.
            options.convolutions = target != "cpu";
            pm.addPass(kiln::createKilnSparsify(options));
          },
          prunedBytes, prunedKeys))
    return rc;
  constexpr unsigned kSamples = 32;
  std::vector<double> sqnr;
  if (!kiln::layerSqnr(denseBytes, 0, denseKeys, prunedBytes, 0, prunedKeys,
                       calibrationData, kSamples, sqnr, error))
    return fail(error);
  for (auto [key, db] : llvm::zip(denseKeys, sqnr))
    llvm::errs() << llvm::formatv(
        "kiln-compile: {0}--sparsity=force changes output '{1}': SQNR "
        "{2:f1} dB against the dense model, over up to {3} samples of "
        "--calibration-data\n",
        db < 20.0 ? "warning: " : "", key, db, kSamples);
  return 0;
}

/// --report's table of the quantized layers (kiln-quantize's
/// `kiln.quantized_layers`), with each layer's SQNR when measured.
void printQuantizedLayers(ArrayAttr layers, ArrayRef<double> sqnr,
                          unsigned sqnrSamples) {
  llvm::errs() << precision << ": " << layers.size() << " quantized layers";
  if (!sqnr.empty())
    llvm::errs() << "; SQNR of each output against float32 on " << sqnrSamples
                 << " calibration samples";
  llvm::errs() << "\n";
  for (auto [i, a] : llvm::enumerate(layers)) {
    auto d = cast<DictionaryAttr>(a);
    auto f = [&](StringRef k) {
      return cast<FloatAttr>(d.get(k)).getValueAsDouble();
    };
    auto n = [&](StringRef k) { return cast<IntegerAttr>(d.get(k)).getInt(); };
    llvm::errs() << llvm::formatv(
        "  {0} ({1}): input scale {2:e2} zp {3}, output scale {4:e2} zp {5}, "
        "weight scales {6:e2}..{7:e2}",
        cast<StringAttr>(d.get("name")).getValue(),
        cast<StringAttr>(d.get("op")).getValue(), f("input_scale"),
        n("input_zero_point"), f("output_scale"), n("output_zero_point"),
        f("weight_scale_min"), f("weight_scale_max"));
    if (i < sqnr.size())
      llvm::errs() << llvm::formatv(", SQNR {0:f1} dB", sqnr[i]);
    llvm::errs() << "\n";
  }
}

/// --precision=int8 or fp8 (`type`): calibrates a copy of `module` (its
/// quantizable
/// tensors exposed, compiled for the CPU, run over --calibration-data)
/// into a ranges file unless --calibration-cache is given alone, then
/// writes `module` as a QDQ model from those ranges (kiln-quantize), which
/// kiln-fold-qdq turns into integer ops (int8). With --report, prints each
/// quantized layer and (when calibrated here) its SQNR against float32.
int quantizeModel(ModuleOp module, StringRef type) {
  MLIRContext *ctx = module.getContext();
  auto fn = module.lookupSymbol<func::FuncOp>("main");
  if (!fn)
    return fail("the module has no func.func @main");
  unsigned first = fn.getNumResults();
  std::string ranges = calibrationCache, refBytes, error;
  std::vector<std::string> refKeys;
  bool calibrate = !calibrationData.empty();
  unsigned samples = 0;
  if (calibrate) {
    SmallString<256> tmp;
    if (ranges.empty()) {
      if (auto ec =
              llvm::sys::fs::createTemporaryFile("kiln-ranges", "txt", tmp))
        return fail("cannot create a temporary file: " + ec.message());
      ranges = tmp.str().str();
    }
    if (int rc = calibrationModule(
            module, first,
            [](OpPassManager &pm) {
              pm.addPass(kiln::createKilnExposeCalibrationTensors());
            },
            refBytes, refKeys))
      return rc;
    if (!kiln::calibrateRanges(refBytes, first, refKeys, calibrationData,
                               calibrationMethod, ranges, samples, error))
      return fail(error);
    if (report)
      llvm::errs() << "calibration: " << samples << " samples, "
                   << refKeys.size() << " tensors, " << calibrationMethod
                   << (calibrationCache.empty()
                           ? std::string()
                           : ", ranges in " + calibrationCache)
                   << "\n";
  } else if (!llvm::sys::fs::exists(ranges)) {
    return fail("--calibration-cache '" + ranges +
                "' does not exist; give --calibration-data=DIR to calibrate");
  }
  llvm::scope_exit removeRanges([&] {
    if (calibrate && calibrationCache.empty())
      llvm::sys::fs::remove(ranges);
  });
  auto quantizePass = [&](bool expose) {
    kiln::KilnQuantizeOptions options;
    options.ranges = ranges;
    options.exposeOutputs = expose;
    options.type = type.str();
    return kiln::createKilnQuantize(options);
  };
  PassManager pm(ctx);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  addGraphPasses(pm);
  pm.addPass(quantizePass(false));
  if (failed(pm.run(module)))
    return 1;
  auto layers = module->getAttrOfType<ArrayAttr>("kiln.quantized_layers");
  module->removeAttr("kiln.quantized_layers");
  if (!report || !layers)
    return 0;
  // Each layer's error: the quantized model, its layers' outputs exposed,
  // against the float calibration module on the first samples.
  std::vector<double> sqnr;
  constexpr unsigned kSqnrSamples = 32;
  if (calibrate) {
    std::string quantBytes;
    std::vector<std::string> quantKeys;
    if (int rc = calibrationModule(
            module, first,
            [&](OpPassManager &pm) { pm.addPass(quantizePass(true)); },
            quantBytes, quantKeys))
      return rc;
    if (!kiln::layerSqnr(refBytes, first, refKeys, quantBytes, first, quantKeys,
                         calibrationData, kSqnrSamples, sqnr, error))
      return fail(error);
  }
  printQuantizedLayers(layers, sqnr, std::min(kSqnrSamples, samples));
  return 0;
}

int compileForGpu(ModuleOp module, kiln::kmod::Module &kmod,
                  TimingScope &rootTiming) {
  MLIRContext &context = *module.getContext();
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  pm.enableTiming(rootTiming);
  if (gpuWgmma.getNumOccurrences() && gpuWgmma && target != "sm_90a")
    return fail("--gpu-wgmma needs --target=sm_90a (wgmma is an sm_90a "
                "instruction); the target is " +
                target);
  if ((gpuWgmmaTile.getNumOccurrences() ||
       gpuWgmmaStages.getNumOccurrences()) &&
      (target != "sm_90a" || !gpuWgmma))
    return fail(std::string("--gpu-wgmma-") +
                (gpuWgmmaTile.getNumOccurrences() ? "tile" : "stages") +
                " shapes the wgmma tiles, which need --target=sm_90a and "
                "--gpu-wgmma");
  for (const cl::opt<int64_t> *stages : {&gpuWgmmaStages, &gpuTileStages})
    if (*stages < 1 || *stages > 8)
      return fail("--" + stages->ArgStr.str() + "=" + std::to_string(*stages) +
                  ": the stages must be 1 to 8");
  kiln::GpuPipelineOptions options;
  options.chip = target;
  options.blockSize = gpuBlockSize;
  options.optLevel = optLevel;
  options.reductionMinSize = gpuReductionMinSize;
  options.tf32 = gpuTf32 || precision == "tf32";
  options.splitKBlocks = gpuSplitKBlocks;
  options.splitKLastBlock = gpuSplitKLastBlock;
  options.flashAttention = gpuFlashAttention;
  options.vectorBytes = gpuVectorBytes;
  options.tileStages = gpuTileStages;
  options.wideTileBlocks = gpuWideTileBlocks;
  options.halfTile = gpuHalfTile;
  options.wideTile = gpuWideTile;
  options.testMutation = gpuTestMutation;
  options.wgmma = gpuWgmma;
  options.wgmmaTile = gpuWgmmaTile;
  options.wgmmaStages = gpuWgmmaStages;
  options.channelsLast = gpuChannelsLast;
  options.unrollKLoop = gpuUnrollKLoop;
  options.splitSumLoads = gpuSplitSumLoads;
  // Models with float8 e4m3 tensors (--precision=fp8, or a float8 QDQ
  // model) on chips with float8 tensor cores: their float8 products run
  // on them (mma e4m3, PTX ISA 8.4).
  bool float8 = module
                    .walk([](Operation *op) {
                      for (Type t : op->getResultTypes())
                        if (isa<Float8E4M3FNType>(getElementTypeOrSelf(t)))
                          return WalkResult::interrupt();
                      return WalkResult::advance();
                    })
                    .wasInterrupted();
  if (float8 &&
      (target == "sm_89" || target == "sm_90" || target == "sm_90a")) {
    options.fp8 = true;
    options.features = "+ptx84";
  }
  kiln::buildGpuCodegenPipeline(pm, options);
  if (failed(pm.run(module)))
    return 1;
  // --sparsity that found nothing to run sparse says so without --report
  // too (a float32 model needs --precision for the sparse tensor cores).
  if (sparsity != "off") {
    auto [sparse, reason] = sparseKernels(module);
    if (!sparse)
      llvm::errs() << "kiln-compile: warning: --sparsity=" << sparsity
                   << ": no contraction runs 2:4 sparse"
                   << (reason.empty() ? std::string(" (no 2:4 weights)")
                                      : " (" + reason + ")")
                   << "\n";
  }
  readMemoryPlan(module, kmod);
  if (std::string error; !checkLimits(kmod, error))
    return fail(error);
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (emit == Emit::LLVMDialect) {
    module.print(os);
    return writeWhole(outputFile, bytes);
  }
  std::string error;
  if (failed(kiln::extractLaunchPlan(module, kmod, error)))
    return fail(error);
  kmod.mutable_gpu()->set_chip(target);

  std::string toolkit = cudaPath;
  std::string ptxas;
  if (!toolkit.empty()) {
    SmallString<256> p(toolkit);
    llvm::sys::path::append(p, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(p))
      ptxas = p.str().str();
  } else {
    ptxas = kiln::findPtxas();
    if (!ptxas.empty())
      toolkit =
          llvm::sys::path::parent_path(llvm::sys::path::parent_path(ptxas))
              .str();
  }
  // A graph whose tensors are all empty has no kernels: no code at all.
  bool hasKernels = kmod.gpu().kernels_size() > 0;
  std::string ptx;
  if (hasKernels && failed(kiln::emitPtx(module, toolkit, ptx, error)))
    return fail(error);
  if (emit == Emit::PTX)
    return writeWhole(outputFile, ptx);
  if (outputFile == "-")
    return fail("a .kmod is binary; give an output file with -o");
  if (hasKernels) {
    auto *ptxCode = kmod.add_code();
    ptxCode->set_target(target);
    ptxCode->set_format("ptx");
    ptxCode->set_data(ptx);
  }
  if (!ptxas.empty() && hasKernels) {
    std::string cubin;
    if (failed(kiln::assemblePtx(ptxas, target, ptx, kmod, cubin, error)))
      return fail(error);
    auto *code = kmod.add_code();
    code->set_target(target);
    code->set_format("cubin");
    code->set_data(cubin);
    if (maxSpillBytes >= 0)
      for (const auto &k : kmod.gpu().kernels())
        if (k.spill_bytes() > maxSpillBytes)
          return fail("kernel '" + k.name() + "' spills " +
                      llvm::Twine(k.spill_bytes()) +
                      " bytes of registers (--max-spill-bytes=" +
                      llvm::Twine(static_cast<int>(maxSpillBytes)) + ")");
  } else if (ptxas.empty() && maxSpillBytes >= 0) {
    return fail("--max-spill-bytes needs ptxas, which was not found (give "
                "--cuda-path)");
  }
  std::string soBytes;
  if (emulatorCode && hasKernels) {
    SmallString<256> soPath;
    if (auto ec = llvm::sys::fs::createTemporaryFile("kiln-emu", "so", soPath))
      return fail("cannot create a temporary file: " + ec.message());
    llvm::scope_exit removeSo([&] { llvm::sys::fs::remove(soPath); });
    if (failed(kiln::emitEmulatorObject(module, optLevel, targetCpu, soPath,
                                        error)))
      return fail(error);
    auto so = llvm::MemoryBuffer::getFile(soPath, /*IsText=*/false);
    if (!so)
      return fail("cannot read the emulator's shared object back");
    soBytes = (*so)->getBuffer().str();
    auto *code = kmod.add_code();
    code->set_target("emulator-x86_64");
    code->set_format("elf-shared-object");
    code->set_entry(KILN_EMU_ENTRY_PREFIX);
    code->set_cpu(targetCpu.name);
    for (const std::string &f : targetCpu.checkedFeatures())
      code->add_cpu_features(f);
    code->set_data(soBytes);
  }
  if (report) {
    printSignatureAndPlan(kmod);
    const auto &gpu = kmod.gpu();
    llvm::errs() << "  gpu: " << gpu.kernels_size() << " kernels, "
                 << gpu.launches_size() << " launches, "
                 << gpu.constants().size() << " bytes of weights; PTX "
                 << ptx.size() << " bytes for " << target;
    if (ptxas.empty())
      llvm::errs() << " (no ptxas: no cubin, no register report)";
    llvm::errs() << "\n";
    // Dynamic shared memory is the launch's (the most any launch of the
    // kernel asks for).
    std::vector<int32_t> dynamicShared(gpu.kernels_size(), 0);
    for (const auto &l : gpu.launches())
      if (l.kernel() >= 0 && l.kernel() < gpu.kernels_size())
        dynamicShared[l.kernel()] =
            std::max(dynamicShared[l.kernel()], l.dynamic_shared_bytes());
    for (int i = 0; i < gpu.kernels_size(); ++i) {
      const auto &k = gpu.kernels(i);
      llvm::errs() << "    kernel " << k.name() << ": ";
      if (k.registers() >= 0)
        llvm::errs() << k.registers() << " registers, " << k.spill_bytes()
                     << " spill bytes, " << k.shared_bytes() << " bytes shared";
      else
        llvm::errs() << "not assembled";
      if (dynamicShared[i])
        llvm::errs() << " + " << dynamicShared[i] << " dynamic";
      llvm::errs() << (k.synchronizes() ? ", barriers" : "");
      // A negative count: the kernel loops a number of times known only at
      // run time.
      if (k.has_flops() && k.flops() >= 0 && k.bytes() >= 0)
        llvm::errs() << "; " << k.flops() << " flops, " << k.bytes()
                     << " bytes";
      else if (k.has_flops())
        llvm::errs() << "; flops and bytes depend on the data";
      if (!k.tensor_op().empty())
        llvm::errs() << "; " << k.tensor_op();
      llvm::errs() << "\n";
    }
    if (emulatorCode)
      llvm::errs() << "  emulator code: " << soBytes.size()
                   << " bytes of x86-64 shared object\n";
    printSparsity(module);
  }
  return writeModule(outputFile, kmod);
}

/// The error for `what`, an option that applies to ONNX inputs only, on
/// an input read as MLIR (by its name).
std::string notOnnx(StringRef what) {
  return (what + " applies to ONNX inputs only: '" + inputFile +
          "' is read as MLIR (a model is read as ONNX when its name ends in "
          ".onnx or .onnxtxt)")
      .str();
}

/// Compiles for a batch range, a length range or both: checks that the
/// samples of a batch (the positions of a sequence) are computed
/// independently, compiles the model for each chunk batch and length
/// bucket (this tool run again, with the same options and the variant's
/// shapes), and merges the modules.
int compileBatchRange(int argc, char **argv, MLIRContext &context,
                      const std::vector<kiln::compile::ShapeSpec> &specs) {
  if (!kiln::isOnnxFileName(inputFile))
    return fail(notOnnx("--input-shape"));
  if (target != "cpu")
    return fail("a batch or length range (--input-shape=NAME:MIN..MAX...) "
                "is for the CPU target so far");
  if (emit != Emit::KModule)
    return fail("a batch or length range compiles to a .kmod only "
                "(--emit=kmod)");
  if (profileRegions)
    return fail("--profile does not take a batch or length range yet; "
                "profile a module compiled for one shape");
  if (outputFile == "-")
    return fail("a .kmod is binary; give an output file with -o");
  if (!inputSequences.empty() || !absentInputs.empty())
    return fail("a batch or length range does not take --input-sequence or "
                "--input-absent yet");
  int64_t lo = 0, hi = 0, llo = 0, lhi = 0;
  std::vector<std::string> batchedInputs;
  std::vector<std::pair<std::string, int64_t>> lengthInputs;
  for (const auto &s : specs) {
    if (s.lengthDim >= 0) {
      if (lhi && (s.lengthMin != llo || s.lengthMax != lhi))
        return fail("--input-shape: every input with a length range must "
                    "have the same range (" +
                    llvm::Twine(llo) + ".." + llvm::Twine(lhi) + " and " +
                    llvm::Twine(s.lengthMin) + ".." + llvm::Twine(s.lengthMax) +
                    ")");
      llo = s.lengthMin;
      lhi = s.lengthMax;
      lengthInputs.push_back({s.name, s.lengthDim});
    }
    if (!s.rangeMax)
      continue;
    if (hi && (s.rangeMin != lo || s.rangeMax != hi))
      return fail("--input-shape: every ranged input must have the same "
                  "batch range (" +
                  llvm::Twine(lo) + ".." + llvm::Twine(hi) + " and " +
                  llvm::Twine(s.rangeMin) + ".." + llvm::Twine(s.rangeMax) +
                  ")");
    lo = s.rangeMin;
    hi = s.rangeMax;
    batchedInputs.push_back(s.name);
  }
  if (hi) {
    for (const auto &s : specs)
      if (s.lengthDim >= 0 && !s.rangeMax)
        return fail("--input-shape: '" + s.name +
                    "' has a length range but no batch range, where other "
                    "inputs have one; give each the same batch range");
  }
  if (optBatch && !hi)
    return fail("--opt-batch needs a batch range (--input-shape=NAME:MIN..MAX"
                "x...)");
  if ((optLength || !lengthBucketsOpt.empty()) && !lhi)
    return fail("--opt-length and --length-buckets need a length range "
                "(--input-shape=NAME:...xMIN..MAX...)");
  int64_t opt = optBatch ? static_cast<int64_t>(optBatch) : hi;
  if (hi && (opt < lo || opt > hi))
    return fail("--opt-batch=" + llvm::Twine(opt) + " is outside the range " +
                llvm::Twine(lo) + ".." + llvm::Twine(hi));
  int64_t lopt = optLength ? static_cast<int64_t>(optLength) : lhi;
  if (lhi && (lopt < llo || lopt > lhi))
    return fail("--opt-length=" + llvm::Twine(lopt) + " is outside the range " +
                llvm::Twine(llo) + ".." + llvm::Twine(lhi));
  for (int64_t b : lengthBucketsOpt)
    if (b < llo || b > lhi)
      return fail("--length-buckets: " + llvm::Twine(b) +
                  " is outside the range " + llvm::Twine(llo) + ".." +
                  llvm::Twine(lhi));
  std::vector<bool> batchedOutputs;
  std::string error;
  if (hi && !kiln::compile::checkSampleIndependence(context, inputFile, specs,
                                                    !noOnnxChecks,
                                                    batchedOutputs, error))
    return fail("batch range: " + error);
  kiln::compile::LengthPlan lengthPlan;
  if (lhi && !kiln::compile::checkPositionIndependence(
                 context, inputFile, specs, !noOnnxChecks, lengthPlan, error))
    return fail("length range: " + error);

  // The variants' modules, compiled by this tool with the same options.
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv[0], &anchor);
  std::vector<std::string> passed;
  for (int i = 1; i < argc; ++i) {
    StringRef a(argv[i]);
    if (a == inputFile.getValue() || a == "--report" || a == "-report")
      continue;
    bool takesValue = false;
    for (StringRef o :
         {"o", "input-shape", "opt-batch", "opt-length", "length-buckets"}) {
      std::string one = "-" + o.str(), two = "--" + o.str();
      if (a == one || a == two)
        takesValue = true;
      if (a.starts_with(one + "=") || a.starts_with(two + "="))
        takesValue = false, a = "";
    }
    if (takesValue) {
      ++i;
      continue;
    }
    if (a.empty() ||
        (a.starts_with("-o") && a.size() > 2 && !a.starts_with("-opt")))
      continue;
    passed.push_back(a.str());
  }
  std::vector<int64_t> chunks =
      hi ? kiln::compile::batchChunks(opt) : std::vector<int64_t>{0};
  std::vector<int64_t> buckets =
      lhi ? kiln::compile::lengthBuckets(
                llo, lhi, lopt,
                std::vector<int64_t>(lengthBucketsOpt.begin(),
                                     lengthBucketsOpt.end()))
          : std::vector<int64_t>{0};
  // Each variant's module (the weights in each) stays in its file until
  // the merge reads it.
  std::vector<kiln::compile::Variant> variants;
  llvm::scope_exit removeVariants([&] {
    for (const auto &v : variants)
      llvm::sys::fs::remove(v.path);
  });
  for (int64_t c : chunks)
    for (int64_t l : buckets) {
      std::string what = (c ? "batch " + std::to_string(c) : std::string()) +
                         (c && l ? ", " : "") +
                         (l ? "length " + std::to_string(l) : std::string());
      SmallString<256> tmp;
      if (auto ec =
              llvm::sys::fs::createTemporaryFile("kiln-variant", "kmod", tmp))
        return fail("cannot create a temporary file: " + ec.message());
      variants.push_back({tmp.str().str(), c, l});
      std::vector<std::string> args = {exe, inputFile, "-o", tmp.str().str(),
                                       "--batch-variant"};
      for (const auto &s : specs)
        args.push_back("--input-shape=" +
                       kiln::compile::specAt(s, c ? c : s.rangeMax, l));
      for (const auto &[node, axis] : lengthPlan.masks)
        args.push_back("--length-mask=" + node + ":" + std::to_string(axis));
      llvm::append_range(args, passed);
      std::vector<StringRef> refs(args.begin(), args.end());
      std::string message;
      int rc = llvm::sys::ExecuteAndWait(exe, refs, std::nullopt, {}, 0, 0,
                                         &message);
      if (rc != 0)
        return fail("compiling for " + what + " failed" +
                    (message.empty() ? "" : ": " + message));
    }
  kiln::compile::RangeInfo range;
  range.batchMin = lo;
  range.batchMax = hi;
  range.chunks = hi ? chunks : std::vector<int64_t>{};
  range.lengthMin = llo;
  range.lengthMax = lhi;
  range.lengthOpt = lopt;
  range.buckets = lhi ? buckets : std::vector<int64_t>{};
  range.batchedInputs = batchedInputs;
  range.batchedOutputs = batchedOutputs;
  range.lengthInputs = lengthInputs;
  range.outputLengthDims = lengthPlan.outputLengthDims;
  range.masked = !lengthPlan.masks.empty();
  std::string merged, text;
  if (!kiln::compile::mergeRangeModules(context, optLevel, targetCpu, variants,
                                        range, merged, text, error))
    return fail(std::string(hi ? "batch" : "length") + " range: " + error);
  if (report) {
    kiln::kmod::Module kmod;
    if (!kiln::parseModule(merged.data(), merged.size(), kmod, error))
      return fail(error);
    printSignatureAndPlan(kmod);
    llvm::errs() << text;
  }
  return writeWhole(outputFile, merged);
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  kiln::registerAllPasses();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  // LLVM owns `--time-passes`; it also times Kiln's MLIR passes here.
  if (auto *opt = cl::getRegisteredOptions().lookup("time-passes")) {
    opt->setHiddenFlag(cl::NotHidden);
    opt->addCategory(category);
  }
  cl::ParseCommandLineOptions(argc, argv, "Kiln compiler driver\n");

  static const char *const gpuChips[] = {"sm_80", "sm_86", "sm_89", "sm_90",
                                         "sm_90a"};
  bool gpuTarget = llvm::is_contained(gpuChips, StringRef(target));
  if (target != "cpu" && !gpuTarget)
    return fail("unknown target '" + target +
                "'; use cpu, sm_80, sm_86, sm_89, sm_90 or sm_90a");
  if (gpuTarget && emit == Emit::LLVMIR)
    return fail("--emit=llvm-ir is for the CPU target; use --emit=ptx or "
                "--emit=llvm for GPU targets");
  if (!gpuTarget && emit == Emit::PTX)
    return fail("--emit=ptx needs a GPU --target (sm_80, sm_90, ...)");
  if (optLevel > 3)
    return fail("-O must be 0 to 3");
  if (cpuVectorBits != 0 && cpuVectorBits != 128 && cpuVectorBits != 256 &&
      cpuVectorBits != 512)
    return fail("--cpu-vector-bits must be 128, 256 or 512");
  std::string cpuError;
  if (FailureOr<kiln::CpuTarget> cpu =
          kiln::resolveCpuTarget(cpuName, cpuError);
      succeeded(cpu))
    targetCpu = std::move(*cpu);
  else
    return fail("--cpu: " + cpuError);
  targetCpu.codegenPieceSize = cpuCodegenPieceSize;
  if (unsigned widest = targetCpu.vectorBits(); cpuVectorBits > widest)
    return fail("--cpu-vector-bits=" + std::to_string(cpuVectorBits) +
                " is wider than the vectors of the CPU '" + targetCpu.name +
                "' (" + std::to_string(widest) + " bits; see --cpu)");
  if (cpuRegisterTileM < 0 || cpuRegisterTileM > 16)
    return fail("--cpu-register-tile-m must be 1 to 16 (0: the default)");
  if (cpuKChunkBytes < -1)
    return fail("--cpu-k-chunk-bytes must be 0 (one sweep) or more bytes "
                "(-1: the default)");
  if (cpuInt8Dot != "auto" && cpuInt8Dot != "amx" && cpuInt8Dot != "vnni" &&
      cpuInt8Dot != "avxvnni" && cpuInt8Dot != "avx2" &&
      cpuInt8Dot != "generic")
    return fail(
        "--cpu-int8-dot must be auto, amx, vnni, avxvnni, avx2 or generic");
  if (cpuInt8Dot == "amx" && !targetCpu.hasAmxInt8())
    return fail("--cpu-int8-dot=amx needs AMX-TILE, AMX-INT8 and AVX-512 "
                "VNNI, which the CPU '" +
                targetCpu.name + "' lacks (see --cpu)");
  if (cpuInt8Dot == "avxvnni" && !targetCpu.hasVnni256())
    return fail("--cpu-int8-dot=avxvnni needs AVX-VNNI (or AVX-512 VNNI with "
                "VL), which the CPU '" +
                targetCpu.name + "' lacks (see --cpu)");
  if (cpuInt8Dot == "avx2" && !targetCpu.has("avx2"))
    return fail("--cpu-int8-dot=avx2 needs AVX2, which the CPU '" +
                targetCpu.name + "' lacks (see --cpu)");
  if (cpuInt8Dot == "vnni" && !targetCpu.hasVnni())
    return fail("--cpu-int8-dot=vnni needs AVX-512 VNNI, which the CPU '" +
                targetCpu.name + "' lacks (see --cpu)");
  if (cpuBf16Dot != "auto" && cpuBf16Dot != "amx" &&
      cpuBf16Dot != "avx512bf16" && cpuBf16Dot != "generic")
    return fail("--cpu-bf16-dot must be auto, amx, avx512bf16 or generic");
  if (cpuBf16Dot == "amx" && !targetCpu.hasAmxBf16())
    return fail("--cpu-bf16-dot=amx needs AMX-TILE and AMX-BF16, which the "
                "CPU '" +
                targetCpu.name + "' lacks (see --cpu)");
  if (cpuBf16Dot == "avx512bf16" &&
      !targetCpu.hasBf16Dot(cpuVectorBits ? cpuVectorBits
                                          : targetCpu.vectorBits()))
    return fail(
        "--cpu-bf16-dot=avx512bf16 needs AVX-512 BF16, which the CPU '" +
        targetCpu.name + "' lacks (see --cpu)");
  StringRef halfType;
  if (precision == "fp16")
    halfType = "f16";
  else if (precision == "bf16")
    halfType = "bf16";
  else if (precision != "fp32" && precision != "tf32" && precision != "int8" &&
           precision != "fp8")
    return fail("unknown --precision '" + precision +
                "'; use fp32, tf32, fp16, bf16, int8 or fp8");
  bool quantized = precision == "int8" || precision == "fp8";
  if (precision == "fp8" && !calibrationMethod.getNumOccurrences())
    calibrationMethod = "minmax";
  if (quantized) {
    if (calibrationData.empty() && calibrationCache.empty())
      return fail("--precision=" + precision +
                  " needs calibration: give "
                  "--calibration-data=DIR (one sub-folder per sample holding "
                  "input_0.npy, ...; a few hundred representative inputs) or "
                  "--calibration-cache=FILE from an earlier calibration");
    if (calibrationMethod != "entropy" && calibrationMethod != "minmax" &&
        calibrationMethod != "percentile")
      return fail("--calibration-method must be entropy, percentile or "
                  "minmax");
    if (!foldQdq && precision == "int8")
      return fail("--precision=int8 runs as integer kernels; it cannot be "
                  "combined with --fold-qdq=false");
  } else if (!calibrationCache.empty() ||
             (!calibrationData.empty() && sparsity != "force")) {
    return fail("--calibration-data and --calibration-cache are for "
                "--precision=int8 or fp8 (--calibration-data also for "
                "--sparsity=force)");
  }
  if (sparsity != "off" && sparsity != "on" && sparsity != "force")
    return fail("--sparsity must be off, on or force");
  // The CPU's sparse kernels are float32 (vexpandps or vpermps) and int8
  // (vpexpandb and vpdpbusd); the GPU's are the tensor cores' mma.sp of
  // f16, bf16 and int8 (a QDQ model's, or --precision=int8's) products.
  if (sparsity != "off" && gpuTarget && precision != "fp16" &&
      precision != "bf16" && precision != "int8" && precision != "fp32")
    return fail("--sparsity on a GPU target runs 2:4 sparse tensor-core "
                "products (mma.sp) of f16, bf16 and int8 values: it cannot "
                "be combined with --precision=" +
                precision);
  if (sparsity != "off" && !gpuTarget && precision != "fp32" &&
      precision != "int8")
    return fail("--sparsity on the CPU runs float32 and int8 products; it "
                "cannot be combined with --precision=" +
                precision + " yet");
  if (cpuSparseMaxRows.getNumOccurrences() && cpuSparseMaxRows < 0)
    return fail("--cpu-sparse-max-rows must be 0 or more");
  if (precision == "tf32" && !gpuTarget)
    return fail("--precision=tf32 is for GPU targets (tensor cores); the CPU "
                "computes float32 exactly");
  if (!keepPrecision.empty() && halfType.empty())
    return fail("--keep-precision needs --precision=fp16 or bf16");

  DialectRegistry registry;
  kiln::registerAllDialects(registry);
  for (const std::string &path : dialectPlugins) {
    auto plugin = DialectPlugin::load(path);
    if (!plugin)
      return fail("cannot load dialect plugin '" + path +
                  "': " + llvm::toString(plugin.takeError()));
    plugin->registerDialectRegistryCallbacks(registry);
  }
  MLIRContext context(registry);
  if (int rc = parseUserPipelines(context))
    return rc;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  // A batch range: one module with code for several batches (BatchRange.h).
  std::vector<kiln::compile::ShapeSpec> specs;
  bool batchRange = false;
  for (const std::string &spec : inputShapes) {
    kiln::compile::ShapeSpec s;
    std::string error;
    if (!kiln::compile::parseShapeSpec(spec, s, error))
      return fail("--input-shape: " + error);
    batchRange |= s.rangeMax != 0 || s.lengthDim >= 0;
    specs.push_back(s);
  }
  if (batchRange)
    return compileBatchRange(argc, argv, context, specs);
  if (optBatch)
    return fail("--opt-batch needs a batch range (--input-shape=NAME:MIN..MAX"
                "x...)");
  if ((optLength || !lengthBucketsOpt.empty()) && !batchVariant)
    return fail("--opt-length and --length-buckets need a length range "
                "(--input-shape=NAME:...xMIN..MAX...)");

  OwningOpRef<ModuleOp> module;
  if (kiln::isOnnxFileName(inputFile)) {
    kiln::OnnxImportOptions options;
    options.onnxChecks = !noOnnxChecks;
    std::string error;
    for (const std::string &spec : inputShapes)
      if (failed(kiln::parseInputShape(spec, options, error)))
        return fail("--input-shape: " + error);
    for (const std::string &spec : inputSequences)
      if (failed(kiln::parseInputSequence(spec, options, error)))
        return fail("--input-sequence: " + error);
    for (const std::string &name : absentInputs)
      options.absentInputs.insert(name);
    module = kiln::importOnnxFile(inputFile, &context, options);
  } else {
    if (!inputShapes.empty())
      return fail(notOnnx("--input-shape"));
    if (!inputSequences.empty() || !absentInputs.empty())
      return fail(notOnnx("--input-sequence and --input-absent"));
    module = parseSourceFile<ModuleOp>(inputFile, sourceMgr, &context);
  }
  if (!module)
    return 1;
  for (const std::string &spec : inputValues) {
    std::string error;
    if (!pinInputValue(*module, spec, error))
      return fail("--input-value: " + error);
  }
  if (maxSequenceLoopTrips < 0 || maxSequenceLoopTrips > 4096)
    return fail("--max-sequence-loop-trips must be in [0, 4096], got " +
                std::to_string(maxSequenceLoopTrips));
  // Read by kiln-infer-shapes (whose option has the same default).
  if (maxSequenceLoopTrips.getNumOccurrences())
    (*module)->setAttr(
        "kiln.max_sequence_loop_trips",
        Builder(&context).getI64IntegerAttr(maxSequenceLoopTrips));
  if (!lengthMasks.empty()) {
    std::vector<std::pair<std::string, int64_t>> masks;
    for (StringRef m : lengthMasks) {
      auto [node, axis] = m.rsplit(':');
      int64_t a = 0;
      if (axis.getAsInteger(10, a))
        return fail("--length-mask: '" + m + "' is not NODE:AXIS");
      masks.push_back({node.str(), a});
    }
    // The Softmaxes' operand types, inferred first.
    PassManager infer(&context);
    infer.addPass(createCanonicalizerPass());
    infer.addPass(kiln::createKilnInferShapes());
    if (failed(infer.run(*module)))
      return 1;
    std::string error;
    if (!kiln::compile::addLengthMasks(*module, masks, error))
      return fail("length range: " + error);
  }

  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (llvm::any_of(userPipelines,
                   [](const auto &p) { return p.first == "import"; })) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    addUserPipelines(pm, "import");
    if (failed(pm.run(*module)))
      return 1;
  }
  if (emit == Emit::Kiln) {
    module->print(os);
    return writeWhole(outputFile, bytes);
  }

  DefaultTimingManager timing;
  if (llvm::TimePassesIsEnabled)
    timing.setEnabled(true);
  TimingScope rootTiming = timing.getRootScope();

  if (precision == "int8" || precision == "fp8")
    if (int rc = quantizeModel(*module, precision == "fp8" ? "fp8" : "int8"))
      return rc;
  if (sparsity == "force" && !calibrationData.empty())
    if (int rc = measurePruning(*module))
      return rc;

  PassManager stage1(&context);
  if (failed(applyPassManagerCLOptions(stage1)))
    return 1;
  stage1.enableTiming(rootTiming);
  kiln::buildKilnToLinalgPipeline(
      stage1, fuseLayers, halfType,
      std::vector<std::string>(keepPrecision.begin(), keepPrecision.end()),
      foldQdq, sparsity, gpuTarget,
      [](OpPassManager &pm) { addUserPipelines(pm, "graph"); });
  addUserPipelines(stage1, "kiln-to-linalg");
  if (failed(stage1.run(*module)))
    return 1;
  if (emit == Emit::Linalg) {
    module->print(os);
    return writeWhole(outputFile, bytes);
  }
  kiln::kmod::Module kmod;
  std::string error;
  unsigned numArgs = 0;
  if (!prepareSignature(*module, kmod, numArgs, error))
    return fail(error);
  if (gpuTarget)
    return compileForGpu(*module, kmod, rootTiming);

  PassManager stage2(&context);
  if (failed(applyPassManagerCLOptions(stage2)))
    return 1;
  stage2.enableTiming(rootTiming);
  if (failed(
          lowerForCpu(*module, stage2, kmod, numArgs, profileRegions, cpuName)))
    return 1;
  if (!checkLimits(kmod, error))
    return fail(error);
  if (batchVariant) {
    std::string bytecode;
    llvm::raw_string_ostream bos(bytecode);
    if (failed(writeBytecodeToFile(*module, bos)))
      return fail("cannot write the module's bytecode");
    auto *code = kmod.add_code();
    code->set_target("cpu-x86_64");
    code->set_format("mlir-bytecode");
    code->set_entry("main");
    code->set_data(bytecode);
    return writeModule(outputFile, kmod);
  }
  if (emit == Emit::LLVMDialect) {
    module->print(os);
    return writeWhole(outputFile, bytes);
  }
  std::string llvmIr;
  llvm::raw_string_ostream irOs(llvmIr);
  uint64_t soBytes = 0;
  unsigned pieces = 1;
  if (!attachCpuCode(*module, kmod, numArgs, targetCpu,
                     emit == Emit::LLVMIR ? &irOs : nullptr, soBytes, error,
                     &pieces))
    return fail(error);
  if (emit == Emit::LLVMIR)
    return writeWhole(outputFile, llvmIr);
  if (outputFile == "-")
    return fail("a .kmod is binary; give an output file with -o");
  if (report) {
    printSignatureAndPlan(kmod);
    llvm::errs() << "  code: " << soBytes
                 << " bytes of x86-64 shared object for " << targetCpu.name
                 << " ("
                 << llvm::join(
                        targetCpu.checkedFeatures(kiln::usesAmxTiles(*module)),
                        " ")
                 << "), compiled in " << pieces
                 << (pieces == 1 ? " piece" : " pieces") << "\n";
    printSparsity(*module);
  }
  return writeModule(outputFile, kmod);
}
