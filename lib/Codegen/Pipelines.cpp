//===- Pipelines.cpp - Kiln's pass pipelines ------------------------------===//

#include "kiln/Codegen/Pipelines.h"

#include "kiln/Codegen/Passes.h"
#include "kiln/Conversion/Passes.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Target/CpuFeatures.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

using namespace mlir;

namespace {
/// Adds upstream passes by their registered names, so that the pipeline
/// reads like the `kiln-opt` command that reproduces it.
void addPipeline(OpPassManager &pm, StringRef text) {
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(parsePassPipeline(text, pm, os)))
    llvm::report_fatal_error(llvm::Twine("kiln: bad built-in pipeline: ") +
                             error);
}
/// Bufferization as both code generators use it: whole-function one-shot
/// bufferization with results as out-parameters, flat weight globals, and
/// every intermediate buffer planned into the arena (on the GPU, a padded
/// copy's source kept live for the tiled contractions that read it in
/// place of the copy, and a contraction's inputs kept live through the
/// elementwise op after it, which its kernel may run as an epilogue).
std::string bufferizeAndPlan(bool gpu, bool attentionInputsLive = false) {
  // On the CPU, upstream's empty-tensor elimination first: a result that
  // is inserted into a larger tensor (each input of a Concat, lowered to
  // tensor.insert_slice) is computed into its slice of that tensor where
  // the analysis proves it safe, so the concatenation copies nothing (a
  // SqueezeNet fire module's two expand branches, DenseNet's and the
  // detection necks' concatenations).
  // Before both, on the CPU, each use of a tensor.empty gets its own (CSE
  // merged them into one per type, with a use in every layer: the in-place
  // analysis was quadratic in those uses). Not yet on the GPU: there the
  // attention kernels are matched on the buffers that sharing gives.
  return std::string(gpu ? ""
                         : "func.func(kiln-split-empty-tensors),"
                           "eliminate-empty-tensors,") +
         "one-shot-bufferize{bufferize-function-boundaries "
         "function-boundary-type-conversion=identity-layout-map},"
         "kiln-flatten-globals,"
         "buffer-results-to-out-params{hoist-static-allocs=true "
         "modify-public-functions=true},"
         "canonicalize,cse,canonicalize,kiln-plan-memory" +
         (gpu ? std::string(
                    "{pad-sources-live=true epilogue-inputs-live=true") +
                    (attentionInputsLive ? " attention-inputs-live=true" : "") +
                    "},"
              : std::string(","));
}
} // namespace

void kiln::buildKilnToLinalgPipeline(
    OpPassManager &pm, bool fuseLayers, StringRef halfType,
    ArrayRef<std::string> keepNodes, bool foldQdq, StringRef sparsity,
    bool gpuTarget, function_ref<void(OpPassManager &)> afterGraph) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createKilnInferShapes());
  if (foldQdq)
    pm.addPass(createKilnFoldQdq());
  // On GPU targets a QDQ model's integer products read their weights
  // through the reshapes kiln-fold-qdq writes; folding those into new
  // constants broke the dense int8 MLP of e2e/gpu-sparsity-int8.test on the
  // emulator, so GPU targets keep them (kiln-infer-shapes still folds the
  // other computed weights there).
  if (!gpuTarget)
    pm.addPass(createKilnFoldConstants());
  if (fuseLayers)
    pm.addPass(createKilnFuseLayers());
  pm.addPass(createKilnFoldBatchNorm());
  if (!sparsity.empty() && sparsity != "off") {
    KilnSparsifyOptions options;
    options.mode = sparsity.str();
    options.convolutions = gpuTarget;
    pm.addPass(createKilnSparsify(options));
  }
  if (!halfType.empty()) {
    KilnMixedPrecisionOptions options;
    options.type = halfType.str();
    options.keepNodes = SmallVector<std::string>(keepNodes);
    pm.addPass(createKilnMixedPrecision(options));
  }
  if (afterGraph)
    afterGraph(pm);
  pm.addPass(createCanonicalizerPass());
  // The CPU runs each group of a grouped convolution on its GEMM path, and
  // a 1-D convolution as a 2-D one; the GPU's implicit GEMM runs the groups
  // as a batch dim in one kernel and tiles the 1-D contraction as it is.
  ConvertKilnToLinalgOptions lowering;
  lowering.maxSplitConvGroups = gpuTarget ? 0 : 16;
  lowering.conv1dAs2d = !gpuTarget;
  pm.addNestedPass<func::FuncOp>(createConvertKilnToLinalg(lowering));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

unsigned kiln::CpuTarget::vectorBits() const {
  if (has("avx512f"))
    return 512;
  if (has("avx"))
    return 256;
  return 128;
}

bool kiln::CpuTarget::hasVnni() const {
  return has("avx512vnni") && has("avx512bw");
}

bool kiln::CpuTarget::hasVnni256() const {
  return has("avxvnni") || (has("avx512vnni") && has("avx512vl"));
}

bool kiln::CpuTarget::hasAmxInt8() const {
  return has("amx-tile") && has("amx-int8") && hasVnni();
}

bool kiln::CpuTarget::hasAmxBf16() const {
  return has("amx-tile") && has("amx-bf16");
}

bool kiln::CpuTarget::hasBf16Dot(unsigned vectorBits) const {
  return has("avx512bf16") && (vectorBits >= 512 || has("avx512vl"));
}

std::string kiln::CpuTarget::featureString() const {
  std::vector<std::string> names;
  for (const auto &f : features)
    names.push_back((f.second ? "+" : "-") + f.first().str());
  llvm::sort(names);
  return llvm::join(names, ",");
}

std::vector<std::string> kiln::CpuTarget::checkedFeatures(bool tiles) const {
  std::vector<std::string> names;
  for (const kiln::CpuFeature &f : kiln::kCpuFeatures)
    if (has(f.name) && (tiles || f.state != kiln::CpuState::Amx))
      names.push_back(f.name);
  return names;
}

bool kiln::usesAmxTiles(Operation *module) {
  bool found = false;
  module->walk([&](LLVM::CallIntrinsicOp call) {
    StringRef name = call.getIntrin();
    if (name.starts_with("llvm.x86.tile") || name.starts_with("llvm.x86.tdp")) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

FailureOr<kiln::CpuTarget> kiln::resolveCpuTarget(StringRef name,
                                                  std::string &error) {
  CpuTarget target;
  if (name.empty() || name == "native") {
    target.name = llvm::sys::getHostCPUName().str();
    for (const auto &f : llvm::sys::getHostCPUFeatures())
      target.features[f.first()] = f.second;
    return target;
  }
  if (llvm::X86::parseArchX86(name, /*Only64Bit=*/true) == llvm::X86::CK_None) {
    SmallVector<StringRef> known;
    llvm::X86::fillValidCPUArchList(known, /*Only64Bit=*/true);
    error = "unknown CPU '" + name.str() +
            "': give native (this machine's CPU) or one of LLVM's 64-bit x86 "
            "CPUs: " +
            llvm::join(known, ", ");
    return failure();
  }
  target.name = name.str();
  SmallVector<StringRef> features;
  llvm::X86::getFeaturesForCPU(name, features);
  // The list names the features a CPU adds; those they imply (avx2 ->
  // avx -> sse4.2 ...) come from LLVM's own table.
  for (StringRef f : features) {
    target.features[f] = true;
    llvm::X86::updateImpliedFeatures(f, /*Enabled=*/true, target.features);
  }
  return target;
}

void kiln::buildCpuCodegenPipeline(OpPassManager &pm,
                                   const CpuPipelineOptions &options) {
  std::string error;
  FailureOr<CpuTarget> cpu = resolveCpuTarget(options.cpu, error);
  if (failed(cpu)) {
    // kiln-compile checks --cpu before it builds the pipeline; kiln-opt's
    // pipeline option has no way to fail, so it says so and uses the host.
    llvm::errs() << "kiln-cpu-codegen-pipeline: " << error
                 << "; using the host CPU\n";
    cpu = resolveCpuTarget("native", error);
  }
  unsigned vectorBits =
      options.vectorBits ? options.vectorBits : cpu->vectorBits();
  std::string bits = "vector-bits=" + std::to_string(vectorBits);
  // Rows of the register tile: 6 rows of two vectors keep 12 accumulators
  // in flight, enough for two FMA pipes of 256 bits; with 512-bit registers
  // (32 of them) 8 rows, 16 accumulators (ResNet-50 45 ms against 52 ms
  // with 6 rows and 60 ms with 12 on a 2-core Sapphire Rapids:
  // kiln-compile --cpu-register-tile-m=N, kiln-run --benchmark --threads 2).
  int64_t registerTileM = options.registerTileM ? options.registerTileM
                                                : (vectorBits >= 512 ? 8 : 6);
  // -1 (the default): the pass chunks the reduction only where the panel
  // is an operand read in place with rows wider than the register tile
  // (weight-left MatMuls); 16 KiB chunks of packed weight panels were not
  // faster on ResNet-50's 7x7 convolutions (docs/performance.md).
  // 8-bit GEMMs: AMX's tile multiply where the CPU has it and 512-bit
  // code is generated (MatMuls of fewer than 16 rows on vpdpbusd
  // register tiles); else AVX-512 VNNI's vpdpbusd where the CPU has it;
  // else the 256-bit vpdpbusd (AVX-VNNI), two per 16-lane step in tiles of
  // 6 rows by one vector (12 of the 16 registers accumulate); else AVX2's
  // vpsignb/vpmaddubsw/vpmaddwd on signed bytes, in tiles of 4 rows by one
  // vector (8 registers); else plain vector ops.
  std::string int8Dot = options.int8Dot;
  if (int8Dot == "auto")
    int8Dot = vectorBits >= 512 && cpu->hasAmxInt8() ? "amx"
              : vectorBits >= 512 && cpu->hasVnni()  ? "vnni"
              : cpu->hasVnni256()                    ? "avxvnni"
              : cpu->has("avx2")                     ? "avx2"
                                                     : "generic";
  bool amxInt8 = int8Dot == "amx";
  bool vnni = int8Dot == "vnni" || amxInt8, avxvnni = int8Dot == "avxvnni",
       avx2 = int8Dot == "avx2";
  std::string int8Gemm =
      avx2      ? "kiln-cpu-int8-gemm{register-tile-m=4 tile-vectors=1 "
                  "signed-dot=true}"
      : avxvnni ? "kiln-cpu-int8-gemm{register-tile-m=6 tile-vectors=1}"
      : amxInt8 ? "kiln-cpu-int8-gemm{amx=true}"
                : "kiln-cpu-int8-gemm";
  // bf16 products: convolutions, and MatMuls of 16 rows or more, with
  // constant weights on AMX's tile multiply where the CPU has AMX-BF16;
  // the rest (and all with avx512bf16) on AVX-512 BF16's vdpbf16ps where
  // the CPU has it at this vector width.
  bool amxBf16 = options.bf16Dot == "amx" ||
                 (options.bf16Dot == "auto" && cpu->hasAmxBf16());
  bool bf16Dot = options.bf16Dot == "avx512bf16" ||
                 ((options.bf16Dot == "auto" || options.bf16Dot == "amx") &&
                  cpu->hasBf16Dot(vectorBits));
  bool amx = amxInt8 || amxBf16;
  // Rows up to which a 2:4 product runs sparse: where the weight's bytes
  // bound it. The dense tiles reuse each weight over 8 rows with AVX-512
  // and 6 with AVX2, and the sparse kernel's expansion costs more per
  // weight on AVX2 (a table row and a vpermps per 8), yet reading half
  // the bytes still won at 8 rows on a Zen 3 (0.91x the dense time) where
  // it lost at 8 rows with AVX-512 (1.40x; bench/sparsity/bench.py,
  // docs/sparsity.md).
  int64_t sparseMaxRows = options.sparseMaxRows >= 0 ? options.sparseMaxRows
                          : vectorBits >= 512        ? 4
                                                     : 8;
  // 2:4 sparse products expand their weights with AVX-512's vexpandps or
  // AVX2's vpermps: 256-bit vectors without AVX2 (AVX alone) keep them
  // dense.
  std::string sparseBits =
      "vector-bits=" +
      std::to_string(vectorBits == 256 && !cpu->has("avx2") ? 128 : vectorBits);
  std::string forall =
      options.threads
          ? "scf-forall-to-parallel,convert-scf-to-openmp,canonicalize,"
          : "scf-forall-to-for,";
  // 2:4 int8 products expand their weights with vpexpandb (AVX-512
  // VBMI2) and multiply with the 512-bit vpdpbusd; they are taken before
  // kiln-cpu-int8-gemm packs the dense ones.
  bool expandBytes = vectorBits >= 512 && vnni && cpu->has("avx512vbmi2");
  addPipeline(
      pm, "kiln-cpu-sparse-gemm{int8=true max-rows=" +
              std::to_string(sparseMaxRows) +
              (expandBytes ? "" : " expand-bytes=false") +
              "},func.func(kiln-flatten-empty-tensors,kiln-fuse-elementwise," +
              int8Gemm + (amxBf16 ? ",kiln-cpu-amx-bf16" : "") +
              ",kiln-cpu-depthwise-conv{" + bits + "},kiln-cpu-image-loops{" +
              bits + "},kiln-collapse-elementwise,kiln-conv-to-gemm{" + bits +
              "},kiln-sink-transposes),kiln-cpu-sparse-gemm{" + sparseBits +
              " max-rows=" + std::to_string(sparseMaxRows) +
              "},func.func(kiln-pack-weights{" + bits +
              "},kiln-clone-shared-inits,kiln-cpu-tile-and-vectorize{" + bits +
              " register-tile-m=" + std::to_string(registerTileM) +
              " k-chunk-bytes=" + std::to_string(options.kChunkBytes) +
              (bf16Dot ? " bf16-dot=true" : "") +
              (options.fuseResiduals ? " fuse-residuals=true" : "") +
              "}),canonicalize,cse," + bufferizeAndPlan(false) +
              (options.profile ? "kiln-profile-regions," : "") +
              "buffer-deallocation-pipeline,"
              "func.func(kiln-copy-to-linalg," +
              (options.prefetchPanels ? "kiln-cpu-prefetch-panels," : "") +
              (amx ? "kiln-cpu-amx-tiles," : "") +
              (vnni ? "kiln-cpu-vnni-dot," : "") +
              (avxvnni ? "kiln-cpu-vnni-dot{bits=256}," : "") +
              (avx2 || cpu->has("avx2") ? "kiln-cpu-avx2-dot," : "") +
              "kiln-cpu-row-reductions{" + bits +
              "},convert-linalg-to-loops)," + forall +
              "kiln-cpu-outline-kernels," +
              // Math on f16/bf16 values (a bf16 model's GELU) computed in
              // f32 and rounded back, so that the f32 polynomial
              // approximations below take it (else a scalar libm call per
              // element).
              "func.func(kiln-expand-float8,math-extend-to-supported-types{"
              "target-type=f32},kiln-math-approximation{ops=erf,"
              "exp,expm1,tanh,"
              "log,log1p,log2},lower-vector-mask,"
              "convert-vector-to-scf{full-unroll=true},"
              "kiln-cpu-keep-outer-loops),"
              "lower-affine,convert-scf-to-cf,canonicalize,"
              "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
              "convert-vector-to-llvm{vector-contract-lowering=outerproduct "
              "enable-x86vector=true" +
              (amx ? " enable-amx=true" : "") +
              "},"
              "convert-math-to-funcs,convert-math-to-llvm,convert-math-to-libm,"
              "convert-ub-to-llvm,"
              "arith-emulate-unsupported-floats{source-types=bf16 "
              "target-type=f32},arith-expand{include-bf16=true},"
              "convert-arith-to-llvm,convert-index-to-llvm,"
              "convert-func-to-llvm{use-bare-ptr-memref-call-conv=true},"
              "convert-cf-to-llvm,convert-openmp-to-llvm,"
              "reconcile-unrealized-casts");
}

void kiln::buildCpuPipeline(OpPassManager &pm,
                            const CpuPipelineOptions &options) {
  buildKilnToLinalgPipeline(pm);
  buildCpuCodegenPipeline(pm, options);
}

int64_t kiln::gpuMultiprocessors(llvm::StringRef chip) {
  if (chip.starts_with("sm_90"))
    return 132; // H100 SXM, H200
  if (chip == "sm_89")
    return 128; // RTX 4090 (L4: 58, L40S: 142)
  if (chip == "sm_86")
    return 84; // A40, RTX 3090 (82)
  return 108;  // A100 (sm_80)
}

void kiln::buildGpuCodegenPipeline(OpPassManager &pm,
                                   const GpuPipelineOptions &options) {
  std::string target = "chip=" + options.chip +
                       " features=" + options.features +
                       " O=" + std::to_string(options.optLevel);
  // A planted bug goes to the pass that knows it.
  std::string mutation;
  if (!options.testMutation.empty())
    mutation = " test-mutation=" + options.testMutation;
  int64_t splitKBlocks = options.splitKBlocks >= 0
                             ? options.splitKBlocks
                             : kiln::gpuMultiprocessors(options.chip);
  int64_t wideTileBlocks = options.wideTileBlocks >= 0
                               ? options.wideTileBlocks
                               : kiln::gpuMultiprocessors(options.chip);
  bool splitMutation = options.testMutation == "skip-last-split";
  bool flashMutation = options.testMutation == "skip-rescale";
  bool contractionMutation = options.testMutation == "swap-b-fragment" ||
                             options.testMutation == "skip-last-k-tile" ||
                             options.testMutation == "swap-sparse-meta" ||
                             options.testMutation == "swap-wgmma-strides" ||
                             options.testMutation == "early-split-sum" ||
                             options.testMutation == "keep-split-counters";
  addPipeline(
      pm,
      // The marked convolutions are compressed once they are channels-last
      // (K = (kh, kw, c)), the other products before.
      std::string("kiln-gpu-sparse-weights,func.func(kiln-flatten-empty-"
                  "tensors") +
          (options.channelsLast ? ",kiln-gpu-channels-last" : "") +
          "),kiln-gpu-sparse-weights{convolutions=true},func.func(" +
          (options.channelsLast ? "kiln-sink-transposes," : "") +
          (options.fp8 ? "kiln-gpu-fold-dequantize," : "") +
          "kiln-fuse-elementwise{fold-transposes=true},kiln-gpu-fold-pads,"
          "kiln-gpu-k-major-weights),"
          "kiln-gpu-split-k{target-blocks=" +
          std::to_string(splitKBlocks) +
          " last-block-sum=" + (options.splitKLastBlock ? "true" : "false") +
          (options.flashAttention ? " keep-attention=true" : "") +
          (splitMutation ? mutation : std::string()) +
          "},func.func(kiln-fuse-elementwise{fold-transposes=true},"
          "cse,kiln-clone-shared-inits{empties=true}),"
          "canonicalize,cse," +
          bufferizeAndPlan(true, options.flashAttention) +
          "func.func(kiln-copy-to-linalg," +
          (options.flashAttention ? std::string("kiln-gpu-flash-attention") +
                                        (options.testMutation == "skip-rescale"
                                             ? "{test-mutation=skip-rescale}"
                                             : "") +
                                        ","
                                  : std::string()) +
          "kiln-gpu-contractions{tf32=" + (options.tf32 ? "true" : "false") +
          " fp8=" + (options.fp8 ? "true" : "false") + " wgmma=" +
          (options.wgmma && options.chip == "sm_90a" ? "true" : "false") +
          " wgmma-tile=" + options.wgmmaTile +
          " wgmma-stages=" + std::to_string(options.wgmmaStages) +
          " unroll-k-loop=" + (options.unrollKLoop ? "true" : "false") +
          " split-sum-loads=" + std::to_string(options.splitSumLoads) +
          " vector-bytes=" + std::to_string(options.vectorBytes) +
          " stages=" + std::to_string(options.tileStages) +
          " half-tile=" + options.halfTile + " wide-tile=" + options.wideTile +
          " wide-min-blocks=" + std::to_string(wideTileBlocks) +
          (contractionMutation ? mutation : std::string()) +
          "},kiln-gpu-reductions-innermost,kiln-gpu-vectorize{max-bytes=" +
          std::to_string(options.vectorBytes) +
          "},convert-linalg-to-parallel-loops,"
          "kiln-gpu-form-kernels{block-size=" +
          std::to_string(options.blockSize) +
          " reduction-min-size=" + std::to_string(options.reductionMinSize) +
          (contractionMutation || splitMutation || flashMutation ? std::string()
                                                                 : mutation) +
          "}),"
          "convert-math-to-funcs,gpu-kernel-outlining,"
          "nvvm-attach-target{" +
          target +
          "},"
          "gpu.module(expand-strided-metadata,lower-affine,"
          "convert-scf-to-cf,kiln-expand-float8,arith-expand{include-bf16=true}"
          ","
          "convert-nvgpu-to-nvvm,convert-gpu-to-nvvm{use-bare-ptr-memref-"
          "call-conv=true},kiln-gpu-align-workgroup,"
          "convert-vector-to-llvm,convert-ub-to-llvm,"
          "canonicalize,cse,reconcile-unrealized-casts)");
}

void kiln::registerKilnPipelines() {
  PassPipelineRegistration<>(
      "kiln-to-linalg-pipeline",
      "Folds, infers shapes and lowers kiln ops to linalg on tensors",
      [](OpPassManager &pm) { buildKilnToLinalgPipeline(pm); });
  PassPipelineRegistration<CpuPipelineOptions>(
      "kiln-cpu-codegen-pipeline",
      "Lowers linalg on tensors to the LLVM dialect for the host CPU",
      buildCpuCodegenPipeline);
  PassPipelineRegistration<CpuPipelineOptions>(
      "kiln-cpu-pipeline",
      "The whole CPU pipeline from kiln ops to the LLVM dialect",
      buildCpuPipeline);
  PassPipelineRegistration<GpuPipelineOptions>(
      "kiln-gpu-codegen-pipeline",
      "Lowers linalg on tensors to GPU kernels in the NVVM dialect and a "
      "host launch plan",
      buildGpuCodegenPipeline);
}
