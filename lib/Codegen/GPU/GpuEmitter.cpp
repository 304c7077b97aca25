//===- GpuEmitter.cpp - GPU kernels and launch plan into a .kmod ----------===//

#include "kiln/Codegen/GpuEmitter.h"

#include "kiln/Codegen/Passes.h"
#include "kiln/Codegen/Pipelines.h"
#include "kiln/Runtime/EmulatorHooks.h"

#include "kmod.pb.h"

#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
constexpr int64_t kConstantAlignment = 256;

gpu::GPUModuleOp getKernelModule(ModuleOp module) {
  return module.lookupSymbol<gpu::GPUModuleOp>("kiln_kernels");
}

/// Bytes per element of a memref element type.
int64_t elementBytes(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

/// The initial bytes of a constant global, as the kernels read them.
LogicalResult globalBytes(memref::GlobalOp global, std::string &bytes,
                          std::string &error) {
  MemRefType type = global.getType();
  Type elt = type.getElementType();
  if (!elt.isIntOrFloat()) {
    error = "weight '" + global.getSymName().str() +
            "' has an element type the GPU path cannot store";
    return failure();
  }
  int64_t n = type.getNumElements(), eb = elementBytes(elt);
  bytes.assign(static_cast<size_t>(n * eb), '\0');
  Attribute init = global.getInitialValue().value_or(Attribute());
  if (!init || isa<UnitAttr>(init))
    return success();
  if (auto dense = dyn_cast<DenseElementsAttr>(init)) {
    if (elt.isInteger(1)) {
      auto values = dense.getValues<bool>();
      for (int64_t i = 0; i < n; ++i)
        bytes[i] = values[dense.isSplat() ? 0 : i] ? 1 : 0;
      return success();
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(&bytes[i * eb], raw.data(), eb);
      return success();
    }
    if (static_cast<int64_t>(raw.size()) != n * eb) {
      error = "weight '" + global.getSymName().str() + "' has unexpected data";
      return failure();
    }
    std::memcpy(bytes.data(), raw.data(), raw.size());
    return success();
  }
  if (auto res = dyn_cast<DenseResourceElementsAttr>(init)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob) {
      error = "weight '" + global.getSymName().str() + "' has no data";
      return failure();
    }
    ArrayRef<char> data = blob->getData();
    if (static_cast<int64_t>(data.size()) != n * eb) {
      error = "weight '" + global.getSymName().str() + "' has " +
              std::to_string(data.size()) + " bytes, expected " +
              std::to_string(n * eb);
      return failure();
    }
    std::memcpy(bytes.data(), data.data(), data.size());
    return success();
  }
  error = "weight '" + global.getSymName().str() +
          "' has an initial value the GPU path cannot read";
  return failure();
}
} // namespace

LogicalResult kiln::extractLaunchPlan(ModuleOp module, kmod::Module &out,
                                      std::string &error) {
  auto fn = module.lookupSymbol<func::FuncOp>("main");
  gpu::GPUModuleOp kernels = getKernelModule(module);
  if (!fn || fn.isExternal()) {
    error = "the module has no function main";
    return failure();
  }
  kmod::GpuProgram *program = out.mutable_gpu();
  program->set_num_buffers(static_cast<int32_t>(fn.getNumArguments()));
  DenseMap<StringAttr, int> kernelIndex;
  DenseMap<Operation *, int64_t> globalOffset;
  std::string constants;

  // (buffer, byte offset) of a memref value on the host.
  std::function<LogicalResult(Value, int &, int64_t &)> resolve =
      [&](Value v, int &buffer, int64_t &offset) -> LogicalResult {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner()->getParentOp() != fn) {
        error = "a kernel argument is not a buffer of main";
        return failure();
      }
      buffer = static_cast<int>(arg.getArgNumber());
      offset = 0;
      return success();
    }
    Operation *def = v.getDefiningOp();
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          get, get.getNameAttr());
      if (!global) {
        error = "weight '" + get.getName().str() + "' is missing";
        return failure();
      }
      auto [it, inserted] = globalOffset.try_emplace(global, 0);
      if (inserted) {
        std::string bytes;
        if (failed(globalBytes(global, bytes, error)))
          return failure();
        constants.resize((constants.size() + kConstantAlignment - 1) /
                         kConstantAlignment * kConstantAlignment);
        it->second = static_cast<int64_t>(constants.size());
        constants += bytes;
      }
      buffer = -1;
      offset = it->second;
      return success();
    }
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      APInt shift;
      if (!matchPattern(view.getByteShift(), m_ConstantInt(&shift))) {
        error = "a view at a dynamic offset stays on the host";
        return failure();
      }
      if (failed(resolve(view.getSource(), buffer, offset)))
        return failure();
      offset += shift.getSExtValue();
      return success();
    }
    // Views that keep the aligned pointer: the kernel applies the static
    // offset of their layout itself.
    if (kiln::isBufferView(def)) {
      auto type = dyn_cast<MemRefType>(v.getType());
      int64_t staticOffset;
      SmallVector<int64_t> strides;
      if (!type || failed(type.getStridesAndOffset(strides, staticOffset)) ||
          ShapedType::isDynamic(staticOffset) ||
          llvm::any_of(strides, ShapedType::isDynamic) ||
          !type.hasStaticShape()) {
        error = "a kernel argument has a dynamic layout";
        return failure();
      }
      return resolve(def->getOperand(0), buffer, offset);
    }
    error = "'" + def->getName().getStringRef().str() +
            "' computes a kernel argument on the host";
    return failure();
  };

  for (Operation &op : fn.front()) {
    if (isa<memref::GetGlobalOp, func::ReturnOp>(op) ||
        op.hasTrait<OpTrait::ConstantLike>() || kiln::isBufferView(&op))
      continue;
    auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
    if (!launch) {
      error = "'" + op.getName().getStringRef().str() +
              "' remains on the host of a GPU module";
      return failure();
    }
    if (!kernels || launch.getKernelModuleName() != kernels.getNameAttr()) {
      error = "a launch names a kernel outside @kiln_kernels";
      return failure();
    }
    StringAttr name = launch.getKernelName();
    auto [it, inserted] =
        kernelIndex.try_emplace(name, program->kernels_size());
    if (inserted) {
      Operation *k = kernels.lookupSymbol(name);
      if (!k) {
        error = "kernel '" + name.str() + "' is missing";
        return failure();
      }
      kmod::Kernel *kernel = program->add_kernels();
      kernel->set_name(name.str());
      kernel->set_num_args(
          static_cast<int32_t>(launch.getKernelOperands().size()));
      kernel->set_registers(-1);
      kernel->set_spill_bytes(-1);
      kernel->set_shared_bytes(-1);
      bool sync = false, tensorCores = false;
      std::string tensorOp;
      k->walk([&](Operation *inner) {
        StringRef n = inner->getName().getStringRef();
        // An NVPTX mma intrinsic called directly (the float8 tiles).
        if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(inner))
          if (call.getIntrin().starts_with("llvm.nvvm.mma."))
            n = "nvvm.mma.sync";
        if (n.starts_with("nvvm.wgmma.mma"))
          tensorOp = "wgmma";
        else if (n.starts_with("nvvm.mma.sp") && tensorOp != "wgmma")
          tensorOp = "mma.sp";
        else if ((n.starts_with("nvvm.mma") || n.starts_with("nvgpu.mma")) &&
                 tensorOp.empty())
          tensorOp = "mma.sync";
        // mma and ldmatrix are warp collectives: the emulator's fibers.
        bool mma = n.starts_with("nvvm.mma") || n.starts_with("nvgpu.mma") ||
                   n.starts_with("nvvm.wgmma.mma");
        tensorCores |= mma;
        sync |= mma || n.starts_with("nvvm.barrier") ||
                n.starts_with("gpu.barrier") || n.starts_with("nvvm.shfl") ||
                n.starts_with("gpu.shuffle") ||
                n.starts_with("nvvm.ldmatrix") ||
                n.starts_with("nvgpu.ldmatrix");
      });
      kernel->set_synchronizes(sync);
      kernel->set_tensor_cores(tensorCores);
      kernel->set_tensor_op(tensorOp);
      if (auto costs = fn->getAttrOfType<DictionaryAttr>("kiln.kernel_costs"))
        if (auto cost = costs.getAs<DenseI64ArrayAttr>(name);
            cost && cost.size() == 2) {
          kernel->set_flops(cost[0]);
          kernel->set_bytes(cost[1]);
        }
    }
    kmod::Launch *l = program->add_launches();
    l->set_kernel(it->second);
    auto constant = [&](Value v, int64_t &c) {
      APInt value;
      if (!matchPattern(v, m_ConstantInt(&value)))
        return false;
      c = value.getSExtValue();
      return true;
    };
    for (Value v : {launch.getGridSizeX(), launch.getGridSizeY(),
                    launch.getGridSizeZ()}) {
      int64_t c;
      if (!constant(v, c)) {
        error = "kernel '" + name.str() + "' has a dynamic grid";
        return failure();
      }
      l->add_grid(c);
    }
    for (Value v : {launch.getBlockSizeX(), launch.getBlockSizeY(),
                    launch.getBlockSizeZ()}) {
      int64_t c;
      if (!constant(v, c)) {
        error = "kernel '" + name.str() + "' has a dynamic block size";
        return failure();
      }
      l->add_block(c);
    }
    if (Value shared = launch.getDynamicSharedMemorySize()) {
      int64_t c;
      if (!constant(shared, c)) {
        error = "kernel '" + name.str() + "' has dynamic shared memory";
        return failure();
      }
      l->set_dynamic_shared_bytes(static_cast<int32_t>(c));
    }
    for (Value arg : launch.getKernelOperands()) {
      if (!isa<MemRefType>(arg.getType())) {
        error = "kernel '" + name.str() + "' takes a " +
                "non-buffer argument computed on the host";
        return failure();
      }
      int buffer;
      int64_t offset;
      if (failed(resolve(arg, buffer, offset))) {
        error = "kernel '" + name.str() + "': " + error;
        return failure();
      }
      kmod::KernelArg *a = l->add_args();
      a->set_buffer(buffer);
      a->set_offset(offset);
    }
  }
  program->set_constants(constants);
  return success();
}

LogicalResult kiln::emitPtx(ModuleOp module, StringRef toolkitPath,
                            std::string &ptx, std::string &error) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  // The register budget: with only `.maxntid`, ptxas may hold a kernel to
  // fewer registers for occupancy and spill instead. A lower bound on
  // resident blocks of 65536 / (256 x threads) lets every kernel use all
  // the 255 registers a thread can have (256 allocated); ptxas still takes
  // only what the kernel needs. Registers go to whole warps, so a block's
  // threads count rounded up to 32 (a one-thread kernel at 16 blocks got
  // 128 registers and spilled DFT's on sm_80), and the bound is at most
  // 16, the fewest resident blocks an SM of sm_75 or later holds: ptxas
  // ignores a larger one and falls back to its own budget (Col2Im's 5-D
  // kernel spilled under it).
  constexpr int64_t kRegistersPerThread = 256;
  constexpr int64_t kMaxBlocksBound = 16;
  copy->walk([&](LLVM::LLVMFuncOp f) {
    auto threads = f->getAttrOfType<DenseI32ArrayAttr>("nvvm.maxntid");
    if (!f->hasAttr("nvvm.kernel") || !threads || f->hasAttr("nvvm.minctasm"))
      return;
    int64_t n = 1;
    for (int32_t t : threads.asArrayRef())
      n *= t;
    n = llvm::alignTo(n, 32);
    int64_t blocks = std::clamp<int64_t>(65536 / (kRegistersPerThread * n), 1,
                                         kMaxBlocksBound);
    f->setAttr("nvvm.minctasm",
               IntegerAttr::get(IntegerType::get(f->getContext(), 32), blocks));
  });
  // A loop annotation (kiln-gpu-contractions' unroll-k-loop=false) reaches
  // the latch branch as the discardable attribute scf-to-cf copies from
  // the scf.for; the translation to LLVM IR reads the branch's own.
  copy->walk([](Operation *op) {
    auto annotation =
        op->getAttrOfType<LLVM::LoopAnnotationAttr>("llvm.loop_annotation");
    if (!annotation)
      return;
    if (auto br = dyn_cast<LLVM::BrOp>(op))
      br.setLoopAnnotationAttr(annotation);
    else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
      condBr.setLoopAnnotationAttr(annotation);
    op->removeAttr("llvm.loop_annotation");
  });
  PassManager pm(module->getContext());
  // NVVM ops with no LLVM intrinsic (wgmma.mma_async) become inline PTX.
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  GpuModuleToBinaryPassOptions options;
  options.compilationTarget = "isa";
  options.toolkitPath = toolkitPath.str();
  pm.addPass(createGpuModuleToBinaryPass(options));
  if (failed(pm.run(*copy))) {
    error = "the NVPTX backend failed on the kernels";
    return failure();
  }
  auto binary = copy->lookupSymbol<gpu::BinaryOp>("kiln_kernels");
  if (!binary || binary.getObjects().size() != 1) {
    error = "no PTX was produced";
    return failure();
  }
  auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  ptx = object.getObject().str();
  return success();
}

LogicalResult kiln::emitEmulatorObject(ModuleOp module, unsigned optLevel,
                                       const CpuTarget &cpu, StringRef soPath,
                                       std::string &error) {
  gpu::GPUModuleOp kernels = getKernelModule(module);
  if (!kernels) {
    error = "the module has no @kiln_kernels";
    return failure();
  }
  OwningOpRef<ModuleOp> host = ModuleOp::create(module.getLoc());
  SmallVector<std::string> names;
  for (Operation &op : kernels.getBody()->getOperations()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (auto f = dyn_cast<LLVM::LLVMFuncOp>(op); f && f->hasAttr("nvvm.kernel"))
      names.push_back(f.getName().str());
    host->push_back(op.clone());
  }
  PassManager pm(module->getContext());
  pm.addPass(kiln::createKilnNvvmToEmulator());
  if (failed(pm.run(*host))) {
    error = "the kernels cannot be made host code for the emulator";
    return failure();
  }
  // One `void kiln_emu_<k>(void **params)` per kernel.
  auto addEntries = [&](llvm::Module &m, std::string &err) {
    llvm::LLVMContext &ctx = m.getContext();
    auto *ptrTy = llvm::PointerType::getUnqual(ctx);
    auto *fnTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrTy},
                                         /*isVarArg=*/false);
    for (const std::string &name : names) {
      llvm::Function *kernel = m.getFunction(name);
      if (!kernel) {
        err = "kernel '" + name + "' is missing from the emulator code";
        return llvm::failure();
      }
      kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
      auto *entry =
          llvm::Function::Create(fnTy, llvm::GlobalValue::ExternalLinkage,
                                 KILN_EMU_ENTRY_PREFIX + name, m);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
      llvm::SmallVector<llvm::Value *> args;
      for (unsigned i = 0; i < kernel->arg_size(); ++i) {
        llvm::Value *slot = b.CreateConstGEP1_64(ptrTy, entry->getArg(0), i);
        llvm::Value *p = b.CreateLoad(ptrTy, slot);
        args.push_back(b.CreateLoad(kernel->getArg(i)->getType(), p));
      }
      b.CreateCall(kernel, args);
      b.CreateRetVoid();
    }
    return llvm::success();
  };
  return kiln::emitHostSharedObject(*host, optLevel, cpu, soPath, error,
                                    addEntries);
}

std::string kiln::findPtxas() {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *home = std::getenv(var)) {
      SmallString<256> p(home);
      llvm::sys::path::append(p, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(p))
        return p.str().str();
    }
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  return "";
}

LogicalResult kiln::assemblePtx(StringRef ptxas, StringRef chip, StringRef ptx,
                                kmod::Module &out, std::string &cubin,
                                std::string &error) {
  SmallString<256> ptxPath, cubinPath, logPath;
  for (auto [suffix, path] :
       {std::pair<const char *, SmallString<256> *>{"ptx", &ptxPath},
        {"cubin", &cubinPath},
        {"log", &logPath}})
    if (auto ec = llvm::sys::fs::createTemporaryFile("kiln", suffix, *path)) {
      error = "cannot create a temporary file: " + ec.message();
      return failure();
    }
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(ptxPath);
    llvm::sys::fs::remove(cubinPath);
    llvm::sys::fs::remove(logPath);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxPath, ec);
    if (ec) {
      error = "cannot write the PTX: " + ec.message();
      return failure();
    }
    os << ptx;
  }
  std::string arch = "-arch=" + chip.str();
  SmallVector<StringRef> args = {ptxas,   arch, "-v",     "-O3",
                                 ptxPath, "-o", cubinPath};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &execError);
  auto log = llvm::MemoryBuffer::getFile(logPath);
  std::string report = log ? (*log)->getBuffer().str() : "";
  if (rc != 0) {
    error = "ptxas failed for " + chip.str() +
            (execError.empty() ? "" : " (" + execError + ")") + ":\n" + report;
    return failure();
  }
  auto bin = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false);
  if (!bin) {
    error = "ptxas wrote no cubin";
    return failure();
  }
  cubin = (*bin)->getBuffer().str();

  // "Compiling entry function 'k0' for 'sm_90'", then "N bytes spill
  // stores, M bytes spill loads" and "Used R registers, ... S bytes smem".
  DenseMap<StringRef, kmod::Kernel *> byName;
  for (kmod::Kernel &k : *out.mutable_gpu()->mutable_kernels())
    byName[k.name()] = &k;
  kmod::Kernel *current = nullptr;
  SmallVector<StringRef> lines;
  StringRef(report).split(lines, '\n');
  for (StringRef line : lines) {
    size_t at = line.find("Compiling entry function '");
    if (at == StringRef::npos)
      at = line.find("Function properties for ");
    if (at != StringRef::npos) {
      StringRef name;
      if (line.contains("Compiling entry function '"))
        name = line.split("function '").second.split('\'').first;
      else
        name = line.split("properties for ").second.trim();
      current = byName.lookup(name);
      if (current && line.contains("Compiling")) {
        current->set_spill_bytes(0);
        current->set_shared_bytes(0);
      }
      continue;
    }
    if (!current)
      continue;
    auto numberBefore = [&](StringRef text, StringRef what) -> int64_t {
      size_t p = text.find(what);
      if (p == StringRef::npos)
        return -1;
      StringRef head = text.substr(0, p).rtrim();
      size_t sp = head.find_last_of(" ,");
      int64_t v = 0;
      if (head.substr(sp == StringRef::npos ? 0 : sp + 1).getAsInteger(10, v))
        return -1;
      return v;
    };
    int64_t stores = numberBefore(line, "bytes spill stores");
    int64_t loads = numberBefore(line, "bytes spill loads");
    if (stores >= 0 && loads >= 0)
      current->set_spill_bytes(static_cast<int32_t>(stores + loads));
    if (int64_t regs = numberBefore(line, "registers"); regs >= 0)
      current->set_registers(static_cast<int32_t>(regs));
    if (int64_t smem = numberBefore(line, "bytes smem"); smem >= 0)
      current->set_shared_bytes(static_cast<int32_t>(smem));
  }
  return success();
}
