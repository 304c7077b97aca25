//===- CpuObjectEmitter.cpp - LLVM dialect to a host shared object --------===//

#include "kiln/Codegen/Pipelines.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/Cloning.h"

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

/// Constant arrays this small are copied, private, into every piece of a
/// split module that may read them (so the optimizer still folds their
/// loads); larger ones (weights) are defined in piece 0 only.
constexpr uint64_t kPrivateConstantBytes = 4096;

bool isSmallConstant(const llvm::GlobalVariable &g) {
  return g.isConstant() && g.hasInitializer() && g.hasLocalLinkage() &&
         g.getDataLayout().getTypeAllocSize(g.getValueType()) <
             kPrivateConstantBytes;
}

/// The most pieces a module is compiled in (CpuTarget::codegenPieceSize).
constexpr unsigned kMaxPieces = 8;

/// Bytes of constant data that cost piece 0, which emits them, about the
/// time of one instruction's code generation (BERT-base's 440 MB of
/// weights took as long as 9,000 instructions on a Zen 3).
constexpr uint64_t kDataBytesPerInstruction = 48 * 1024;

/// The function definitions of `m` in `pieces` groups of about equal
/// instruction counts (largest first, each into the lightest group), group
/// 0 starting with the weight of the data it emits: each definition's
/// group.
llvm::DenseMap<const llvm::Function *, unsigned>
partitionFunctions(llvm::Module &m, unsigned pieces) {
  llvm::SmallVector<std::pair<uint64_t, llvm::Function *>> sized;
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      sized.push_back({f.getInstructionCount(), &f});
  llvm::stable_sort(sized, [](auto &a, auto &b) { return a.first > b.first; });
  llvm::SmallVector<uint64_t> load(pieces, 0);
  for (llvm::GlobalVariable &g : m.globals())
    if (g.hasInitializer())
      load[0] += m.getDataLayout().getTypeAllocSize(g.getValueType()) /
                 kDataBytesPerInstruction;
  llvm::DenseMap<const llvm::Function *, unsigned> piece;
  for (auto &[count, f] : sized) {
    unsigned lightest =
        std::min_element(load.begin(), load.end()) - load.begin();
    piece[f] = lightest;
    load[lightest] += count + 1;
  }
  return piece;
}

/// How many pieces `m` is compiled in: one for small modules, modules with
/// constructs a split would have to handle (comdats, appending globals
/// such as llvm.global_ctors), and when LLVM's pass timers are on (they
/// are not thread-safe).
unsigned piecesFor(llvm::Module &m, uint64_t pieceSize) {
  if (llvm::TimePassesIsEnabled || pieceSize == 0)
    return 1;
  uint64_t instructions = 0, functions = 0;
  for (llvm::Function &f : m) {
    if (f.hasComdat())
      return 1;
    if (!f.isDeclaration()) {
      instructions += f.getInstructionCount();
      ++functions;
    }
  }
  for (llvm::GlobalVariable &g : m.globals())
    if (g.hasComdat() || g.hasAppendingLinkage())
      return 1;
  if (!m.alias_empty() || !m.ifunc_empty())
    return 1;
  return std::max<uint64_t>(
      1, std::min<uint64_t>({(instructions + pieceSize / 2) / pieceSize,
                             uint64_t(kMaxPieces), functions}));
}

/// Splits `m` into `pieces` modules by function: piece 0 is `m` itself,
/// left with its group's function bodies and every global variable (the
/// weights); each other piece, returned as bitcode (to be read into a
/// context of its own, so pieces compile on separate threads), has its
/// group's bodies, private copies of the small constants and declarations
/// of the rest. Local symbols are first made hidden external ones, so that
/// a call or a weight in another piece still links.
llvm::SmallVector<std::string> splitModule(llvm::Module &m, unsigned pieces) {
  for (llvm::GlobalValue &gv : m.global_values()) {
    if (!gv.hasLocalLinkage())
      continue;
    if (auto *g = llvm::dyn_cast<llvm::GlobalVariable>(&gv);
        g && isSmallConstant(*g))
      continue;
    if (!gv.hasName())
      gv.setName("kiln.local");
    gv.setLinkage(llvm::GlobalValue::ExternalLinkage);
    gv.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  llvm::DenseMap<const llvm::Function *, unsigned> piece =
      partitionFunctions(m, pieces);
  llvm::SmallVector<std::string> bitcode;
  for (unsigned i = 1; i < pieces; ++i) {
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> part =
        llvm::CloneModule(m, map, [&](const llvm::GlobalValue *gv) {
          if (auto *f = llvm::dyn_cast<llvm::Function>(gv))
            return piece.lookup(f) == i;
          auto *g = llvm::dyn_cast<llvm::GlobalVariable>(gv);
          return g && isSmallConstant(*g);
        });
    std::string &out = bitcode.emplace_back();
    llvm::raw_string_ostream os(out);
    llvm::WriteBitcodeToFile(*part, os);
  }
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && piece.lookup(&f) != 0)
      f.deleteBody();
  return bitcode;
}

/// The X86 target machine for `cpu` that every piece of a module is
/// compiled with; null, with `error` set, when LLVM has none.
std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const llvm::Target &target, const llvm::Triple &triple,
                    const kiln::CpuTarget &cpu, unsigned optLevel,
                    std::string &error) {
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> tm(target.createTargetMachine(
      triple, cpu.name, cpu.featureString(), targetOptions, llvm::Reloc::PIC_,
      // The medium code model: constants over 64 KiB (the weights) go to
      // the large sections (.lrodata), placed after the code and reached
      // through 64-bit offsets, so weights over 2 GiB (a Stable Diffusion
      // UNet's 3.4 GB) do not push the code's PC-relative references out
      // of range; the small model failed to link such modules.
      llvm::CodeModel::Medium,
      optLevel == 0 ? llvm::CodeGenOptLevel::None
                    : llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    error = "cannot create a target machine for " + triple.str();
  return tm;
}

/// Optimizes `m` at `optLevel` for `cpu` and writes its object code to a
/// new temporary file, whose path goes to `objPath`.
llvm::LogicalResult emitObject(llvm::Module &m, const llvm::Target &target,
                               unsigned optLevel, const kiln::CpuTarget &cpu,
                               llvm::SmallVectorImpl<char> &objPath,
                               std::string &error,
                               llvm::raw_ostream *llvmIrOut) {
  std::unique_ptr<llvm::TargetMachine> tm =
      createTargetMachine(target, m.getTargetTriple(), cpu, optLevel, error);
  if (!tm)
    return llvm::failure();
  if (llvm::Error e = mlir::makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                                      tm.get())(&m)) {
    error = llvm::toString(std::move(e));
    return llvm::failure();
  }
  if (llvmIrOut)
    m.print(*llvmIrOut, nullptr);
  weightsAsBytes(m);

  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("kiln", "o", fd, objPath)) {
    error = "cannot create a temporary file: " + ec.message();
    return llvm::failure();
  }
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr,
                              llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return llvm::failure();
  }
  pm.run(m);
  return llvm::success();
}
} // namespace

llvm::LogicalResult
kiln::emitCpuSharedObject(ModuleOp module, unsigned numArgs, unsigned optLevel,
                          const CpuTarget &cpu, StringRef soPath,
                          std::string &error, llvm::raw_ostream *llvmIrOut,
                          unsigned *pieces) {
  return emitHostSharedObject(
      module, optLevel, cpu, soPath, error,
      [&](llvm::Module &m, std::string &err) {
        return addEntryTrampolines(m, {{"main", "kiln_entry", numArgs}}, err);
      },
      llvmIrOut, pieces);
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
    llvm::raw_ostream *llvmIrOut, unsigned *piecesOut) {
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
  if (std::unique_ptr<llvm::TargetMachine> tm =
          createTargetMachine(*target, triple, cpu, optLevel, error))
    llvmModule->setDataLayout(tm->createDataLayout());
  else
    return llvm::failure();
  llvmModule->setTargetTriple(triple);

  // A large module is optimized and compiled in pieces, on as many
  // threads as the host has (kiln-compile's work was one thread's: most of
  // a big model's compile time is LLVM's, hundreds of kernels). Each piece
  // is an object file; `cc` links them.
  unsigned pieces =
      llvmIrOut ? 1 : piecesFor(*llvmModule, cpu.codegenPieceSize);
  if (piecesOut)
    *piecesOut = pieces;
  llvm::SmallVector<std::string> bitcode;
  if (pieces > 1)
    bitcode = splitModule(*llvmModule, pieces);
  llvm::SmallVector<llvm::SmallString<128>, 1> objPaths(pieces);
  // Each piece's error; a piece failed where its error is not empty.
  llvm::SmallVector<std::string> errors(pieces);
  auto compile = [&](unsigned i) {
    if (i == 0) {
      (void)emitObject(*llvmModule, *target, optLevel, cpu, objPaths[0],
                       errors[0], llvmIrOut);
      return;
    }
    llvm::LLVMContext ctx;
    llvm::Expected<std::unique_ptr<llvm::Module>> part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(bitcode[i - 1], "kiln-piece"), ctx);
    if (!part) {
      errors[i] = llvm::toString(part.takeError());
      return;
    }
    bitcode[i - 1].clear();
    (void)emitObject(**part, *target, optLevel, cpu, objPaths[i], errors[i],
                     nullptr);
  };
  if (pieces == 1) {
    compile(0);
  } else {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(pieces));
    for (unsigned i = 0; i < pieces; ++i)
      pool.async(compile, i);
    pool.wait();
  }
  llvm::scope_exit removeObjs([&] {
    for (const llvm::SmallString<128> &path : objPaths)
      if (!path.empty())
        llvm::sys::fs::remove(path);
  });
  for (const std::string &e : errors)
    if (!e.empty()) {
      error = e;
      return llvm::failure();
    }
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    error = "no C compiler driver `cc` on PATH to link the shared object";
    return llvm::failure();
  }
  std::string out = soPath.str();
  llvm::SmallVector<llvm::StringRef> args = {*cc, "-shared", "-o", out};
  for (const llvm::SmallString<128> &path : objPaths)
    args.push_back(path);
    // The builtins LLVM's code may call that libgcc lacks (__truncsfbf2).
#ifdef KILN_CLANG_RT_BUILTINS
  if (llvm::sys::fs::exists(KILN_CLANG_RT_BUILTINS))
    args.push_back(KILN_CLANG_RT_BUILTINS);
#endif
  // gold, where binutils has it: the default (bfd) ld took 2.9 s to link
  // BERT-base's 440 MB of weights, gold 1.3 s (lld 1.1 s, but 35 ms more
  // than either to start, a sixth of a small model's compile).
  if (llvm::sys::findProgramByName("ld.gold"))
    args.push_back("-fuse-ld=gold");
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
