//===- CpuObjectEmitter.cpp - LLVM dialect to a host shared object --------===//

#include "kiln/Codegen/Pipelines.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

namespace {
/// `void kiln_entry(void **args)`: calls the graph function `main` (which
/// takes one bare pointer per input and output buffer) with each pointer of
/// `args`, so the runtime needs one calling convention only.
llvm::LogicalResult addEntryTrampolines(llvm::Module &m,
                                        llvm::ArrayRef<kiln::CpuEntry> entries,
                                        std::string &error) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  for (const kiln::CpuEntry &e : entries) {
    llvm::Function *callee = m.getFunction(e.function);
    if (!callee) {
      error = "the module has no function " + e.function;
      return llvm::failure();
    }
    callee->setLinkage(llvm::GlobalValue::InternalLinkage);
    if (callee->arg_size() != e.numArgs) {
      error = e.function + " takes " + std::to_string(callee->arg_size()) +
              " arguments, the signature has " + std::to_string(e.numArgs);
      return llvm::failure();
    }
    auto *fnTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrTy},
                                         /*isVarArg=*/false);
    auto *entry = llvm::Function::Create(
        fnTy, llvm::GlobalValue::ExternalLinkage, e.entry, m);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    llvm::SmallVector<llvm::Value *> args;
    for (unsigned i = 0; i < e.numArgs; ++i) {
      llvm::Value *slot = b.CreateConstGEP1_64(ptrTy, entry->getArg(0), i);
      args.push_back(b.CreateLoad(ptrTy, slot));
    }
    b.CreateCall(callee, args);
    b.CreateRetVoid();
  }

  // Profiled code (kiln-profile-regions) calls `kiln_profile_mark(i32)`:
  // it calls the hook the runtime stores in `kiln_profile_hook`, if any.
  if (llvm::Function *mark = m.getFunction("kiln_profile_mark");
      mark && mark->isDeclaration()) {
    auto *hook = new llvm::GlobalVariable(
        m, ptrTy, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantPointerNull::get(ptrTy), "kiln_profile_hook");
    mark->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<> mb(llvm::BasicBlock::Create(ctx, "entry", mark));
    llvm::Value *fn = mb.CreateLoad(ptrTy, hook);
    auto *call = llvm::BasicBlock::Create(ctx, "call", mark);
    auto *done = llvm::BasicBlock::Create(ctx, "done", mark);
    mb.CreateCondBr(mb.CreateIsNotNull(fn), call, done);
    mb.SetInsertPoint(call);
    mb.CreateCall(mark->getFunctionType(), fn, {mark->getArg(0)});
    mb.CreateBr(done);
    mb.SetInsertPoint(done);
    mb.CreateRetVoid();
  }
  return llvm::success();
}

/// Large constant arrays of non-byte elements (a model's weights) as byte
/// arrays of the same contents. The assembly printer writes a float array
/// one element at a time (each through an APFloat), a byte array in one
/// block: BERT-base's 440 MB of weights cost several seconds the first
/// way. Done after the optimization pipeline, which may fold loads of the
/// typed constants.
void weightsAsBytes(llvm::Module &m) {
  constexpr uint64_t minBytes = 4096;
  llvm::SmallVector<llvm::GlobalVariable *> globals;
  for (llvm::GlobalVariable &g : m.globals())
    if (auto *data = llvm::dyn_cast_or_null<llvm::ConstantDataSequential>(
            g.hasInitializer() ? g.getInitializer() : nullptr))
      if (!data->getElementType()->isIntegerTy(8) &&
          data->getRawDataValues().size() >= minBytes)
        globals.push_back(&g);
  for (llvm::GlobalVariable *g : globals) {
    llvm::StringRef raw =
        llvm::cast<llvm::ConstantDataSequential>(g->getInitializer())
            ->getRawDataValues();
    llvm::Constant *bytes = llvm::ConstantDataArray::getRaw(
        raw, raw.size(), llvm::Type::getInt8Ty(m.getContext()));
    auto *copy = new llvm::GlobalVariable(
        m, bytes->getType(), g->isConstant(), g->getLinkage(), bytes, "", g,
        g->getThreadLocalMode(), g->getAddressSpace());
    copy->copyAttributesFrom(g);
    copy->setAlignment(
        g->getAlign().value_or(m.getDataLayout().getPreferredAlign(g)));
    copy->takeName(g);
    g->replaceAllUsesWith(copy);
    g->eraseFromParent();
  }
}
} // namespace

llvm::LogicalResult
kiln::emitCpuSharedObject(ModuleOp module, unsigned numArgs, unsigned optLevel,
                          const CpuTarget &cpu, StringRef soPath,
                          std::string &error, llvm::raw_ostream *llvmIrOut) {
  return emitHostSharedObject(
      module, optLevel, cpu, soPath, error,
      [&](llvm::Module &m, std::string &err) {
        return addEntryTrampolines(m, {{"main", "kiln_entry", numArgs}}, err);
      },
      llvmIrOut);
}

llvm::LogicalResult
kiln::emitCpuSharedObject(ModuleOp module, ArrayRef<CpuEntry> entries,
                          unsigned optLevel, const CpuTarget &cpu,
                          StringRef soPath, std::string &error) {
  return emitHostSharedObject(
      module, optLevel, cpu, soPath, error,
      [&](llvm::Module &m, std::string &err) {
        return addEntryTrampolines(m, entries, err);
      },
      nullptr);
}

llvm::LogicalResult kiln::emitHostSharedObject(
    ModuleOp module, unsigned optLevel, const CpuTarget &cpu, StringRef soPath,
    std::string &error,
    llvm::function_ref<llvm::LogicalResult(llvm::Module &, std::string &)>
        addEntries,
    llvm::raw_ostream *llvmIrOut) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmCtx, "kiln");
  if (!llvmModule) {
    error = "translation to LLVM IR failed";
    return llvm::failure();
  }
  if (failed(addEntries(*llvmModule, error)))
    return llvm::failure();
  bool usesOpenMP = llvmModule->getFunction("__kmpc_fork_call") != nullptr;

  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::failure();
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu.name, cpu.featureString(), targetOptions, llvm::Reloc::PIC_,
      // The medium code model: constants over 64 KiB (the weights) go to
      // the large sections (.lrodata), placed after the code and reached
      // through 64-bit offsets, so weights over 2 GiB (a Stable Diffusion
      // UNet's 3.4 GB) do not push the code's PC-relative references out
      // of range; the small model failed to link such modules.
      llvm::CodeModel::Medium,
      optLevel == 0 ? llvm::CodeGenOptLevel::None
                    : llvm::CodeGenOptLevel::Aggressive));
  if (!tm) {
    error = "cannot create a target machine for " + triple.str();
    return llvm::failure();
  }
  llvmModule->setDataLayout(tm->createDataLayout());
  llvmModule->setTargetTriple(triple);
  if (llvm::Error e = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                                tm.get())(llvmModule.get())) {
    error = llvm::toString(std::move(e));
    return llvm::failure();
  }
  if (llvmIrOut)
    llvmModule->print(*llvmIrOut, nullptr);
  weightsAsBytes(*llvmModule);

  // Object file next to the output, then a shared object through `cc`.
  SmallString<256> objPath;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("kiln", "o", fd, objPath)) {
    error = "cannot create a temporary file: " + ec.message();
    return llvm::failure();
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr,
                                llvm::CodeGenFileType::ObjectFile)) {
      error = "the target cannot emit object files";
      return llvm::failure();
    }
    pm.run(*llvmModule);
  }
  llvm::scope_exit removeObj([&] { llvm::sys::fs::remove(objPath); });
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    error = "no C compiler driver `cc` on PATH to link the shared object";
    return llvm::failure();
  }
  std::string out = soPath.str(), obj = objPath.str().str();
  llvm::SmallVector<llvm::StringRef> args = {*cc, "-shared", "-o", out, obj};
  // The builtins LLVM's code may call that libgcc lacks (__truncsfbf2).
#ifdef KILN_CLANG_RT_BUILTINS
  if (llvm::sys::fs::exists(KILN_CLANG_RT_BUILTINS))
    args.push_back(KILN_CLANG_RT_BUILTINS);
#endif
  args.push_back("-lm");
  // Parallel loops call the OpenMP runtime (LLVM's libomp ABI).
  if (usesOpenMP)
    args.push_back("-l:libomp.so.5");
  std::string linkError;
  int rc =
      llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &linkError);
  if (rc != 0) {
    error = "linking the shared object failed" +
            (linkError.empty() ? "" : ": " + linkError);
    return llvm::failure();
  }
  return llvm::success();
}
