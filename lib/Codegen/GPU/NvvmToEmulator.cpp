//===- NvvmToEmulator.cpp - NVVM kernels as host code for the emulator ----===//
//
// The kernels that become PTX, in the LLVM and NVVM dialects, are made
// host code: each NVVM operation becomes a call through the hook table
// that the runtime's emulator fills (see lib/Runtime/Emulator.cpp and
// kiln/Runtime/EmulatorHooks.h for the numbering), address spaces are
// dropped, and libdevice calls become C library calls.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"
#include "kiln/Runtime/EmulatorHooks.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSwitch.h"

namespace kiln {
#define GEN_PASS_DEF_KILNNVVMTOEMULATOR
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The emulator's number of a special register (`tid.x`, ...), or -1.
int specialRegister(StringRef reg) {
  return llvm::StringSwitch<int>(reg)
      .Case("tid.x", KILN_EMU_SREG_TID_X)
      .Case("tid.y", KILN_EMU_SREG_TID_Y)
      .Case("tid.z", KILN_EMU_SREG_TID_Z)
      .Case("ntid.x", KILN_EMU_SREG_NTID_X)
      .Case("ntid.y", KILN_EMU_SREG_NTID_Y)
      .Case("ntid.z", KILN_EMU_SREG_NTID_Z)
      .Case("ctaid.x", KILN_EMU_SREG_CTAID_X)
      .Case("ctaid.y", KILN_EMU_SREG_CTAID_Y)
      .Case("ctaid.z", KILN_EMU_SREG_CTAID_Z)
      .Case("nctaid.x", KILN_EMU_SREG_NCTAID_X)
      .Case("nctaid.y", KILN_EMU_SREG_NCTAID_Y)
      .Case("nctaid.z", KILN_EMU_SREG_NCTAID_Z)
      .Case("laneid", KILN_EMU_SREG_LANEID)
      .Case("warpsize", KILN_EMU_SREG_WARPSIZE)
      .Default(-1);
}

/// libdevice functions with no C library function of the name without
/// `__nv_`: their definition in terms of LLVM intrinsics.
LogicalResult defineLibdeviceFunction(LLVM::LLVMFuncOp fn) {
  StringRef name = fn.getName();
  auto type = fn.getFunctionType();
  if (type.getNumParams() != 1)
    return failure();
  Type t = type.getReturnType();
  bool isRsqrt = name == "__nv_rsqrtf" || name == "__nv_rsqrt";
  if (!isRsqrt)
    return failure();
  OpBuilder b(fn.getContext());
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Location loc = fn.getLoc();
  Value x = entry->getArgument(0);
  Value one = LLVM::ConstantOp::create(b, loc, t, b.getFloatAttr(t, 1.0));
  Value s = LLVM::SqrtOp::create(b, loc, x);
  Value r = LLVM::FDivOp::create(b, loc, one, s);
  LLVM::ReturnOp::create(b, loc, r);
  fn.setLinkage(LLVM::Linkage::Internal);
  return success();
}

/// Whether an mma's result is four f32 (or, `s32`, i32) registers.
bool f32Result(Value res, bool s32 = false) {
  auto result = dyn_cast<LLVM::LLVMStructType>(res.getType());
  return result && result.getBody().size() == 4 &&
         llvm::all_of(result.getBody(), [&](Type t) {
           return s32 ? t.isInteger(32) : t.isF32();
         });
}

/// An mma's multiplicand type: `named`, or that of A's register `a` where
/// it is a vector<2xf16> or vector<2xbf16>.
std::optional<NVVM::MMATypes>
multiplicandType(std::optional<NVVM::MMATypes> named, Value a) {
  if (named)
    return named;
  auto v = dyn_cast<VectorType>(a.getType());
  if (v && v.getElementType().isF16())
    return NVVM::MMATypes::f16;
  if (v && v.getElementType().isBF16())
    return NVVM::MMATypes::bf16;
  return std::nullopt;
}

/// Whether an mma (dense or sparse) multiplies s8 by s8 into four s32
/// registers, clamped (.satfinite), as the emulator's s8 kinds do.
template <typename MmaOp> bool s8Satfinite(MmaOp mma) {
  return mma.getMultiplicandAPtxType() == NVVM::MMATypes::s8 &&
         mma.getMultiplicandBPtxType() == NVVM::MMATypes::s8 &&
         mma.getIntOverflowBehavior() == NVVM::MMAIntOverflow::satfinite &&
         f32Result(mma.getRes(), /*s32=*/true);
}

/// The emulator's number of `mma`'s shape and input type, or -1. Only
/// f32 accumulators (four f32 results), or s32 ones of s8 products
/// (.satfinite), and row.col layouts.
int mmaKind(NVVM::MmaOp mma) {
  NVVM::MMAShapeAttr shape = mma.getShapeAttr();
  if (mma.getLayoutA() != NVVM::MMALayout::row ||
      mma.getLayoutB() != NVVM::MMALayout::col || shape.getM() != 16 ||
      shape.getN() != 8 || mma.getOperandA().size() != 4 ||
      mma.getOperandB().size() != 2 || mma.getOperandC().size() != 4)
    return -1;
  if (shape.getK() == 32 && s8Satfinite(mma))
    return KILN_EMU_MMA_M16N8K32_S8;
  if (!f32Result(mma.getRes()))
    return -1;
  std::optional<NVVM::MMATypes> type = multiplicandType(
      mma.getMultiplicandAPtxType(), mma.getOperandA().front());
  if (shape.getK() == 8 && type == NVVM::MMATypes::tf32)
    return KILN_EMU_MMA_M16N8K8_TF32;
  if (shape.getK() == 16 && type == NVVM::MMATypes::f16)
    return KILN_EMU_MMA_M16N8K16_F16;
  if (shape.getK() == 16 && type == NVVM::MMATypes::bf16)
    return KILN_EMU_MMA_M16N8K16_BF16;
  return -1;
}

/// The emulator's number of `mma`'s shape and input type (2:4 sparse
/// m16n8k32 f16 or bf16 with f32 accumulators, or m16n8k64 s8 with s32
/// ones and .satfinite; row.col, plain or ordered metadata, which agree on
/// the increasing positions the emulator requires), or -1.
int mmaSpKind(NVVM::MmaSpOp mma) {
  NVVM::MMAShapeAttr shape = mma.getShapeAttr();
  if (shape.getM() != 16 || shape.getN() != 8 || mma.getKind() ||
      mma.getOperandA().size() != 4 || mma.getOperandB().size() != 4 ||
      mma.getOperandC().size() != 4)
    return -1;
  if (shape.getK() == 64 && s8Satfinite(mma))
    return KILN_EMU_MMA_SP_M16N8K64_S8;
  if (shape.getK() != 32 || !f32Result(mma.getRes()))
    return -1;
  std::optional<NVVM::MMATypes> type = multiplicandType(
      mma.getMultiplicandAPtxType(), mma.getOperandA().front());
  if (type != multiplicandType(mma.getMultiplicandBPtxType(),
                               mma.getOperandB().front()))
    return -1;
  if (type == NVVM::MMATypes::f16)
    return KILN_EMU_MMA_SP_M16N8K32_F16;
  if (type == NVVM::MMATypes::bf16)
    return KILN_EMU_MMA_SP_M16N8K32_BF16;
  return -1;
}

/// An mma (`kind`, of `op`) as a call of the mma hook: the lane's 32-bit
/// registers `regs` stored into a stack array, the four D registers read
/// back from another into a struct that replaces `result`.
template <typename CallHook>
LogicalResult lowerMma(OpBuilder &b, Operation *op, int kind,
                       ArrayRef<Value> regs, Value result, CallHook &callHook) {
  if (kind < 0)
    return failure();
  MLIRContext *ctx = b.getContext();
  Location loc = op->getLoc();
  auto i32 = IntegerType::get(ctx, 32);
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto bits = [](Type t) -> int64_t {
    if (auto v = dyn_cast<VectorType>(t))
      return v.getNumElements() * v.getElementType().getIntOrFloatBitWidth();
    return t.isIntOrFloat() ? t.getIntOrFloatBitWidth() : 0;
  };
  for (Value r : regs)
    if (bits(r.getType()) != 32)
      return failure();
  // The arrays live in the function's entry block (one stack slot each,
  // however often the mma runs).
  auto fn = op->getParentOfType<LLVM::LLVMFuncOp>();
  OpBuilder eb = OpBuilder::atBlockBegin(&fn.getBody().front());
  Value n =
      LLVM::ConstantOp::create(eb, loc, i32, eb.getI32IntegerAttr(regs.size()));
  Value four = LLVM::ConstantOp::create(eb, loc, i32, eb.getI32IntegerAttr(4));
  Value in = LLVM::AllocaOp::create(eb, loc, ptrTy, i32, n);
  // The D registers: f32, or i32 (s8 products).
  auto resultTy = cast<LLVM::LLVMStructType>(result.getType());
  Type dType = resultTy.getBody().front();
  Value out = LLVM::AllocaOp::create(eb, loc, ptrTy, dType, four);
  for (auto [i, r] : llvm::enumerate(regs)) {
    Value word = r.getType() == i32
                     ? r
                     : LLVM::BitcastOp::create(b, loc, i32, r).getResult();
    Value slot =
        LLVM::GEPOp::create(b, loc, ptrTy, i32, in,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    LLVM::StoreOp::create(b, loc, word, slot);
  }
  Value kindValue =
      LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(kind));
  callHook(b, loc, KILN_EMU_HOOK_MMA, Type(), ValueRange{kindValue, in, out});
  Value d = LLVM::UndefOp::create(b, loc, result.getType());
  for (int64_t i = 0; i < 4; ++i) {
    Value slot =
        LLVM::GEPOp::create(b, loc, ptrTy, dType, out,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    Value v = LLVM::LoadOp::create(b, loc, dType, slot);
    d = LLVM::InsertValueOp::create(b, loc, d, v, ArrayRef<int64_t>{i});
  }
  result.replaceAllUsesWith(d);
  return success();
}

/// `ld` (8x8 b16 matrices) as a call of the ldmatrix hook: the lane's row
/// address in, its registers read back from a stack array.
template <typename CallHook>
LogicalResult lowerLdmatrix(OpBuilder &b, NVVM::LdMatrixOp ld,
                            CallHook &callHook) {
  if (ld.getShape().getM() != 8 || ld.getShape().getN() != 8 ||
      ld.getEltType() != NVVM::LdStMatrixEltType::B16)
    return failure();
  MLIRContext *ctx = b.getContext();
  Location loc = ld.getLoc();
  auto i32 = IntegerType::get(ctx, 32);
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  int32_t num = ld.getNum();
  auto fn = ld->getParentOfType<LLVM::LLVMFuncOp>();
  OpBuilder eb = OpBuilder::atBlockBegin(&fn.getBody().front());
  Value four = LLVM::ConstantOp::create(eb, loc, i32, eb.getI32IntegerAttr(4));
  Value out = LLVM::AllocaOp::create(eb, loc, ptrTy, i32, four);
  Value numValue =
      LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(num));
  Value trans = LLVM::ConstantOp::create(
      b, loc, i32,
      b.getI32IntegerAttr(ld.getLayout() == NVVM::MMALayout::col ? 1 : 0));
  callHook(b, loc, KILN_EMU_HOOK_LDMATRIX, Type(),
           ValueRange{numValue, trans, ld.getPtr(), out});
  auto word = [&](int32_t i) -> Value {
    Value slot =
        LLVM::GEPOp::create(b, loc, ptrTy, i32, out, ArrayRef<LLVM::GEPArg>{i});
    return LLVM::LoadOp::create(b, loc, i32, slot);
  };
  Type type = ld.getRes().getType();
  Value result;
  if (type == i32) {
    result = word(0);
  } else {
    result = LLVM::UndefOp::create(b, loc, type);
    for (int32_t i = 0; i < num; ++i)
      result = LLVM::InsertValueOp::create(b, loc, result, word(i),
                                           ArrayRef<int64_t>{i});
  }
  ld.getRes().replaceAllUsesWith(result);
  return success();
}

/// The global that holds the last shared-memory address a kernel made an
/// integer (see NvvmToEmulatorPass).
constexpr const char *kSharedWindow = "kiln_emu_shared_window";

/// `w` (wgmma.mma_async m64nNk16, f16 or bf16 in, f32 accumulators, or
/// m64nNk32, s8 in and s32 accumulators (.satfinite) or e4m3 in and f32
/// accumulators) as a call of the wgmma hook: the lane's N / 2
/// accumulators stored into a stack array, the results read back from
/// another.
template <typename CallHook>
LogicalResult lowerWgmma(OpBuilder &b, NVVM::WgmmaMmaAsyncOp w,
                         CallHook &callHook) {
  NVVM::MMAShapeAttr shape = w.getShape();
  int n = shape.getN();
  auto result = dyn_cast<LLVM::LLVMStructType>(w.getResults().getType());
  NVVM::WGMMATypes typeA = w.getTypeA();
  int32_t kind;
  switch (typeA) {
  case NVVM::WGMMATypes::f16:
    kind = KILN_EMU_WGMMA_F16;
    break;
  case NVVM::WGMMATypes::bf16:
    kind = KILN_EMU_WGMMA_BF16;
    break;
  case NVVM::WGMMATypes::s8:
    kind = KILN_EMU_WGMMA_S8;
    break;
  case NVVM::WGMMATypes::e4m3:
    kind = KILN_EMU_WGMMA_E4M3;
    break;
  default:
    return failure();
  }
  bool s8 = kind == KILN_EMU_WGMMA_S8;
  bool bytes = s8 || kind == KILN_EMU_WGMMA_E4M3;
  // s8 products are emulated with .satfinite only (as kiln-gpu-contractions
  // makes them), 8-bit operands K-major only (as PTX has them).
  bool satfinite = w.getSatfinite().has_value();
  if (shape.getM() != 64 || shape.getK() != (bytes ? 32 : 16) || n % 8 ||
      n > 256 || w.getTypeB() != typeA ||
      w.getTypeD() != (s8 ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32) ||
      satfinite != s8 ||
      (bytes && (w.getLayoutA() != NVVM::MMALayout::row ||
                 w.getLayoutB() != NVVM::MMALayout::col)) ||
      w.getScaleD() != NVVM::WGMMAScaleOut::one ||
      w.getScaleA() != NVVM::WGMMAScaleIn::one ||
      w.getScaleB() != NVVM::WGMMAScaleIn::one || !result ||
      result.getBody().size() != static_cast<size_t>(n / 2) ||
      !llvm::all_of(result.getBody(),
                    [&](Type t) { return s8 ? t.isInteger(32) : t.isF32(); }))
    return failure();
  MLIRContext *ctx = b.getContext();
  Location loc = w.getLoc();
  auto i32 = IntegerType::get(ctx, 32);
  Type reg = s8 ? Type(i32) : Type(Float32Type::get(ctx));
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  auto fn = w->getParentOfType<LLVM::LLVMFuncOp>();
  OpBuilder eb = OpBuilder::atBlockBegin(&fn.getBody().front());
  Value regs =
      LLVM::ConstantOp::create(eb, loc, i32, eb.getI32IntegerAttr(n / 2));
  Value in = LLVM::AllocaOp::create(eb, loc, ptrTy, reg, regs);
  Value out = LLVM::AllocaOp::create(eb, loc, ptrTy, reg, regs);
  auto slot = [&](Value array, int32_t i) {
    return LLVM::GEPOp::create(b, loc, ptrTy, reg, array,
                               ArrayRef<LLVM::GEPArg>{i});
  };
  for (int32_t i = 0; i < n / 2; ++i)
    LLVM::StoreOp::create(
        b, loc,
        LLVM::ExtractValueOp::create(b, loc, w.getInouts(), i).getResult(),
        slot(in, i));
  auto c32 = [&](int32_t v) {
    return LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(v));
  };
  // Without the window (the kernel never made its buffer's address an
  // integer) the descriptors cannot be read.
  if (!SymbolTable::lookupNearestSymbolFrom(
          w, StringAttr::get(ctx, kSharedWindow)))
    return failure();
  int32_t trans = (w.getLayoutA() == NVVM::MMALayout::col ? 1 : 0) |
                  (w.getLayoutB() == NVVM::MMALayout::row ? 2 : 0);
  Value windowAddr = LLVM::AddressOfOp::create(b, loc, ptrTy, kSharedWindow);
  Value window = LLVM::LoadOp::create(b, loc, ptrTy, windowAddr);
  callHook(b, loc, KILN_EMU_HOOK_WGMMA, Type(),
           ValueRange{c32(kind), c32(n), c32(trans), w.getDescriptorA(),
                      w.getDescriptorB(), window, in, out});
  Value d = LLVM::UndefOp::create(b, loc, result);
  for (int32_t i = 0; i < n / 2; ++i)
    d = LLVM::InsertValueOp::create(
        b, loc, d, LLVM::LoadOp::create(b, loc, reg, slot(out, i)),
        ArrayRef<int64_t>{i});
  w.getResults().replaceAllUsesWith(d);
  return success();
}

/// `cp` copied at once: the source's bytes (all `size` of them, or
/// `cpSize`), the rest of the `size` zero.
void lowerCpAsync(OpBuilder &b, NVVM::CpAsyncOp cp) {
  MLIRContext *ctx = b.getContext();
  Location loc = cp.getLoc();
  auto i32 = IntegerType::get(ctx, 32);
  auto i8 = IntegerType::get(ctx, 8);
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  Value size =
      LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(cp.getSize()));
  Value copied = cp.getCpSize() ? cp.getCpSize() : size;
  LLVM::MemcpyOp::create(b, loc, cp.getDst(), cp.getSrc(), copied,
                         /*isVolatile=*/false);
  if (!cp.getCpSize())
    return;
  Value rest = LLVM::SubOp::create(b, loc, size, copied);
  Value tail =
      LLVM::GEPOp::create(b, loc, ptrTy, i8, cp.getDst(), ValueRange{copied});
  Value zero = LLVM::ConstantOp::create(b, loc, i8, b.getI8IntegerAttr(0));
  LLVM::MemsetOp::create(b, loc, tail, zero, rest, /*isVolatile=*/false);
}

struct NvvmToEmulatorPass
    : public kiln::impl::KilnNvvmToEmulatorBase<NvvmToEmulatorPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);

    // Every pointer in the default address space.
    auto flatten = [&](Type t) -> Type {
      if (auto p = dyn_cast<LLVM::LLVMPointerType>(t))
        return p.getAddressSpace() ? ptrTy : t;
      return t;
    };
    bool failedAny = false;
    // A shared-memory address made an integer (wgmma's descriptors hold
    // one) is an offset from the window that the emulator's wgmma reads
    // relative to: the conversion stores its pointer as the window and
    // gives 0. A kernel converts one address, its buffer's start, and
    // adds offsets to it.
    // Only kernels with wgmma are rewritten, and each may convert one
    // pointer (its buffer's start) only.
    SmallVector<LLVM::PtrToIntOp> sharedAddrs;
    module.walk([&](LLVM::LLVMFuncOp fn) {
      if (!fn.walk([](NVVM::WgmmaMmaAsyncOp) {
               return WalkResult::interrupt();
             }).wasInterrupted())
        return;
      Value source;
      fn.walk([&](LLVM::PtrToIntOp cast) {
        auto p = dyn_cast<LLVM::LLVMPointerType>(cast.getArg().getType());
        if (!p || p.getAddressSpace() != 3)
          return;
        if (source && source != cast.getArg()) {
          cast.emitOpError("converts a second shared-memory pointer to an "
                           "integer in a kernel with wgmma; the kernel "
                           "emulator reads descriptors relative to one");
          failedAny = true;
        }
        source = cast.getArg();
        sharedAddrs.push_back(cast);
      });
    });
    if (failedAny)
      return signalPassFailure();
    if (!sharedAddrs.empty()) {
      OpBuilder gb = OpBuilder::atBlockBegin(module.getBody());
      auto window = LLVM::GlobalOp::create(
          gb, module.getLoc(), ptrTy, /*isConstant=*/false,
          LLVM::Linkage::Internal, kSharedWindow, Attribute());
      window.setThreadLocal_(true);
      OpBuilder ib(ctx);
      ib.setInsertionPointToStart(
          ib.createBlock(&window.getInitializerRegion()));
      LLVM::ReturnOp::create(
          ib, module.getLoc(),
          LLVM::ZeroOp::create(ib, module.getLoc(), ptrTy).getResult());
      for (LLVM::PtrToIntOp cast : sharedAddrs) {
        OpBuilder cb(cast);
        Location loc = cast.getLoc();
        Value at = LLVM::AddressOfOp::create(cb, loc, ptrTy, kSharedWindow);
        LLVM::StoreOp::create(cb, loc, cast.getArg(), at);
        Value zero = LLVM::ConstantOp::create(
            cb, loc, cast.getType(), cb.getIntegerAttr(cast.getType(), 0));
        cast.getResult().replaceAllUsesWith(zero);
        cast.erase();
      }
    }
    module.walk([&](Operation *op) {
      for (Value r : op->getResults())
        r.setType(flatten(r.getType()));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument a : block.getArguments())
            a.setType(flatten(a.getType()));
      if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op)) {
        auto ft = fn.getFunctionType();
        SmallVector<Type> params;
        for (Type p : ft.getParams())
          params.push_back(flatten(p));
        fn.setFunctionType(LLVM::LLVMFunctionType::get(
            flatten(ft.getReturnType()), params, ft.isVarArg()));
        // NVVM and GPU attributes mean nothing on the host.
        SmallVector<StringAttr> drop;
        for (NamedAttribute a : fn->getDiscardableAttrs())
          if (a.getName().strref().starts_with("nvvm.") ||
              a.getName().strref().starts_with("gpu."))
            drop.push_back(a.getName());
        for (StringAttr a : drop)
          fn->removeAttr(a);
        fn.setCConv(LLVM::CConv::C);
      }
      if (auto g = dyn_cast<LLVM::GlobalOp>(op)) {
        if (g.getAddrSpace() != 0) {
          // Shared memory is per block: the emulator runs a block's
          // threads as fibers of one host thread. Dynamic shared memory
          // (a zero-length array) gets the most a launch may ask for.
          auto array = dyn_cast<LLVM::LLVMArrayType>(g.getGlobalType());
          if (array && array.getNumElements() == 0) {
            unsigned bits = array.getElementType().getIntOrFloatBitWidth();
            g.setGlobalType(LLVM::LLVMArrayType::get(
                array.getElementType(),
                KILN_EMU_DYNAMIC_SHARED_BYTES * 8 / std::max(bits, 8u)));
            g.setLinkage(LLVM::Linkage::Internal);
          }
          g.setAddrSpace(0);
          g.setThreadLocal_(true);
        }
      }
    });
    module.walk([&](LLVM::AddrSpaceCastOp cast) {
      cast.getResult().replaceAllUsesWith(cast.getArg());
      cast.erase();
    });

    // The hook table: a zero-initialized array of function pointers that
    // the runtime fills after loading the code.
    OpBuilder b(ctx);
    b.setInsertionPointToStart(module.getBody());
    auto tableTy = LLVM::LLVMArrayType::get(ptrTy, KILN_EMU_NUM_HOOKS);
    auto table = LLVM::GlobalOp::create(
        b, module.getLoc(), tableTy, /*isConstant=*/false,
        LLVM::Linkage::External, KILN_EMU_HOOKS_SYMBOL, Attribute());
    {
      OpBuilder ib(ctx);
      Block *init = ib.createBlock(&table.getInitializerRegion());
      ib.setInsertionPointToStart(init);
      Value zero = LLVM::ZeroOp::create(ib, module.getLoc(), tableTy);
      LLVM::ReturnOp::create(ib, module.getLoc(), zero);
    }
    auto callHook = [&](OpBuilder &ob, Location loc, int hook, Type resultType,
                        ValueRange args) -> Value {
      Value table =
          LLVM::AddressOfOp::create(ob, loc, ptrTy, KILN_EMU_HOOKS_SYMBOL);
      Value slot = LLVM::GEPOp::create(
          ob, loc, ptrTy, tableTy, table,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(hook)});
      Value fn = LLVM::LoadOp::create(ob, loc, ptrTy, slot);
      SmallVector<Type> argTypes(args.getTypes());
      auto fnTy = LLVM::LLVMFunctionType::get(
          resultType ? resultType : LLVM::LLVMVoidType::get(ctx), argTypes);
      SmallVector<Value> operands = {fn};
      operands.append(args.begin(), args.end());
      auto call = LLVM::CallOp::create(ob, loc, fnTy, operands);
      return resultType ? call.getResult() : Value();
    };

    SmallVector<Operation *> nvvmOps;
    module.walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "nvvm")
        nvvmOps.push_back(op);
    });
    // NVPTX intrinsics called directly (the dense float8 mma, which NVVM's
    // mma op does not list).
    SmallVector<LLVM::CallIntrinsicOp> intrinsics;
    module.walk([&](LLVM::CallIntrinsicOp call) {
      if (call.getIntrin().starts_with("llvm.nvvm."))
        intrinsics.push_back(call);
    });
    for (LLVM::CallIntrinsicOp call : intrinsics) {
      OpBuilder ob(call);
      SmallVector<Value> regs(call.getArgs());
      if (call.getIntrin() ==
              "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32" &&
          regs.size() == 10 && call.getNumResults() == 1 &&
          succeeded(lowerMma(ob, call, KILN_EMU_MMA_M16N8K32_E4M3, regs,
                             call.getResult(0), callHook))) {
        call->erase();
        continue;
      }
      call->emitOpError("is not implemented by the kernel emulator");
      failedAny = true;
    }
    for (Operation *op : nvvmOps) {
      StringRef name = op->getName().getStringRef();
      OpBuilder ob(op);
      Location loc = op->getLoc();
      if (name.consume_front("nvvm.read.ptx.sreg.")) {
        int reg = specialRegister(name);
        if (reg >= 0 && op->getNumResults() == 1 &&
            op->getResult(0).getType() == i32) {
          Value regNo =
              LLVM::ConstantOp::create(ob, loc, i32, ob.getI32IntegerAttr(reg));
          Value v = callHook(ob, loc, KILN_EMU_HOOK_SREG, i32, {regNo});
          op->getResult(0).replaceAllUsesWith(v);
          op->erase();
          continue;
        }
      }
      if ((name == "nvvm.barrier0" || name == "nvvm.barrier") &&
          op->getNumOperands() == 0 && op->getNumResults() == 0) {
        callHook(ob, loc, KILN_EMU_HOOK_BARRIER, Type(), {});
        op->erase();
        continue;
      }
      if (auto shfl = dyn_cast<NVVM::ShflOp>(op)) {
        // hook(kind, mask, bits, offset, clamp) -> i64: the value's bits
        // in the low half, the lane-valid flag in bit 32.
        Value val = shfl.getVal();
        Type t = val.getType();
        if (t == i32 || t.isF32()) {
          auto i64 = IntegerType::get(ctx, 64);
          Value bits =
              t == i32 ? val
                       : LLVM::BitcastOp::create(ob, loc, i32, val).getResult();
          Value kind = LLVM::ConstantOp::create(
              ob, loc, i32,
              ob.getI32IntegerAttr(static_cast<int32_t>(shfl.getKind())));
          Value packed = callHook(ob, loc, KILN_EMU_HOOK_SHFL, i64,
                                  {kind, shfl.getThreadMask(), bits,
                                   shfl.getOffset(), shfl.getMaskAndClamp()});
          Value low = LLVM::TruncOp::create(ob, loc, i32, packed);
          Value result =
              t == i32 ? low
                       : LLVM::BitcastOp::create(ob, loc, t, low).getResult();
          Type resultType = shfl.getResult().getType();
          if (resultType == t) {
            shfl.getResult().replaceAllUsesWith(result);
            op->erase();
            continue;
          }
          if (auto st = dyn_cast<LLVM::LLVMStructType>(resultType)) {
            Value shift = LLVM::ConstantOp::create(ob, loc, i64,
                                                   ob.getI64IntegerAttr(32));
            Value high = LLVM::LShrOp::create(ob, loc, packed, shift);
            Value valid =
                LLVM::TruncOp::create(ob, loc, IntegerType::get(ctx, 1), high);
            Value s0 = LLVM::UndefOp::create(ob, loc, st);
            Value s1 = LLVM::InsertValueOp::create(ob, loc, s0, result,
                                                   ArrayRef<int64_t>{0});
            Value s2 = LLVM::InsertValueOp::create(ob, loc, s1, valid,
                                                   ArrayRef<int64_t>{1});
            shfl.getResult().replaceAllUsesWith(s2);
            op->erase();
            continue;
          }
        }
      }
      if (auto ld = dyn_cast<NVVM::LdMatrixOp>(op)) {
        if (succeeded(lowerLdmatrix(ob, ld, callHook))) {
          op->erase();
          continue;
        }
      }
      if (auto cp = dyn_cast<NVVM::CpAsyncOp>(op)) {
        lowerCpAsync(ob, cp);
        op->erase();
        continue;
      }
      if (auto w = dyn_cast<NVVM::WgmmaMmaAsyncOp>(op)) {
        if (succeeded(lowerWgmma(ob, w, callHook))) {
          op->erase();
          continue;
        }
      }
      // Copies complete as they are made, and wgmma products as they are
      // issued: nothing to wait for; the emulator's memory is one proxy,
      // and its blocks run one after another (no fence to make).
      if (isa<NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp,
              NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
              NVVM::WgmmaWaitGroupSyncOp, NVVM::FenceProxyOp, NVVM::MembarOp>(
              op)) {
        op->erase();
        continue;
      }
      if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
        SmallVector<Value> regs(mma->getOperands());
        if (succeeded(
                lowerMma(ob, op, mmaKind(mma), regs, mma.getRes(), callHook))) {
          op->erase();
          continue;
        }
      }
      // mma.sp: A, B and C, then the metadata and the selector.
      if (auto mma = dyn_cast<NVVM::MmaSpOp>(op)) {
        SmallVector<Value> regs(mma.getOperandA());
        regs.append(mma.getOperandB().begin(), mma.getOperandB().end());
        regs.append(mma.getOperandC().begin(), mma.getOperandC().end());
        regs.push_back(mma.getSparseMetadata());
        regs.push_back(mma.getSparsitySelector());
        if (succeeded(lowerMma(ob, op, mmaSpKind(mma), regs, mma.getRes(),
                               callHook))) {
          op->erase();
          continue;
        }
      }
      op->emitOpError("is not implemented by the kernel emulator");
      failedAny = true;
    }
    if (failedAny)
      return signalPassFailure();

    // libdevice calls: the C library function of the same name, or a
    // definition here.
    SymbolTable symbols(module);
    for (auto fn :
         llvm::make_early_inc_range(module.getOps<LLVM::LLVMFuncOp>())) {
      StringRef name = fn.getName();
      if (!name.starts_with("__nv_") || !fn.isExternal())
        continue;
      if (succeeded(defineLibdeviceFunction(fn)))
        continue;
      std::string libm = name.drop_front(5).str();
      if (symbols.lookup(libm)) {
        fn.emitOpError("libdevice function '")
            << name << "' collides with an existing '" << libm << "'";
        return signalPassFailure();
      }
      if (failed(symbols.rename(fn, StringAttr::get(ctx, libm)))) {
        fn.emitOpError("cannot be renamed to '") << libm << "'";
        return signalPassFailure();
      }
    }
  }
};
} // namespace
