//===- OutlineKernels.cpp - one function per top-level loop nest ---------===//
//
// A function of many sequential loop nests makes LLVM's loop passes
// quadratic (they walk the whole function's dominator tree); each nest
// moves into a private noinline function of its own. Nests that differ
// only in the buffers they read and write (a network's repeated layers)
// become one function, compiled once.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCPUOUTLINEKERNELS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Whether the bare-pointer calling convention passes a `t` argument: a
/// scalar, a vector, or a memref of static shape and identity layout.
bool passable(Type t) {
  if (auto m = dyn_cast<MemRefType>(t))
    return m.hasStaticShape() && m.getLayout().isIdentity();
  return t.isIntOrIndexOrFloat() || isa<VectorType>(t);
}

/// Whether the defining op of a value read by a kernel is cloned into the
/// kernel instead of passed: free of side effects and of regions, and not
/// a buffer the calling convention passes as a pointer (a weight's
/// `memref.get_global`, a view of the arena). Passed, such buffers leave
/// the kernels of identical layers identical.
bool clonable(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op || op->getNumRegions() != 0 || !isMemoryEffectFree(op))
    return false;
  return !(isa<MemRefType>(v.getType()) && passable(v.getType()));
}

/// Moves `op` into a new private function `name` of `module` and calls it.
/// Returns the call, or null (changing nothing) where an argument or
/// result cannot be passed.
func::CallOp outline(Operation *op, StringRef name, ModuleOp module,
                     SymbolTable &symbols) {
  for (Type t : op->getResultTypes())
    if (!t.isIntOrIndexOrFloat())
      return nullptr;
  // What `op` reads from outside it: its operands and the values its
  // regions capture, traced back through clonable ops to the arguments.
  llvm::SetVector<Value> reads(op->getOperands().begin(),
                               op->getOperands().end());
  getUsedValuesDefinedAbove(op->getRegions(), reads);
  llvm::SetVector<Value> args;
  llvm::SetVector<Operation *> cloned;
  SmallVector<Value> work(reads.begin(), reads.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (clonable(v)) {
      if (cloned.insert(def))
        work.append(def->getOperands().begin(), def->getOperands().end());
      continue;
    }
    if (!passable(v.getType()))
      return nullptr;
    args.insert(v);
  }

  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes;
  for (Value v : args)
    argTypes.push_back(v.getType());
  auto fn = func::FuncOp::create(
      b, op->getLoc(), name,
      b.getFunctionType(argTypes, llvm::to_vector(op->getResultTypes())));
  fn.setPrivate();
  fn->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
  symbols.insert(fn);
  Block *body = fn.addEntryBlock();
  IRMapping map;
  for (auto [v, a] : llvm::zip(args, body->getArguments()))
    map.map(v, a);
  b.setInsertionPointToStart(body);
  // The cloned ops in their order in the caller's block (operands first).
  SmallVector<Operation *> order(cloned.begin(), cloned.end());
  llvm::sort(order,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  for (Operation *c : order)
    b.clone(*c, map);
  Operation *moved = b.clone(*op, map);
  func::ReturnOp::create(b, op->getLoc(), moved->getResults());

  b.setInsertionPoint(op);
  auto call = func::CallOp::create(b, op->getLoc(), fn, args.getArrayRef());
  op->replaceAllUsesWith(call.getResults());
  op->erase();
  return call;
}

/// A hash of `fn`'s body that equivalent bodies share: each op's name,
/// attributes, properties and types, in order (not its location, nor
/// which values it uses: the equivalence check compares those).
llvm::hash_code bodyHash(func::FuncOp fn) {
  llvm::hash_code h = hash_value(fn.getFunctionType());
  fn.getBody().walk([&](Operation *op) {
    h = llvm::hash_combine(h,
                           OperationEquivalence::computeHash(
                               op, OperationEquivalence::ignoreHashValue,
                               OperationEquivalence::ignoreHashValue,
                               OperationEquivalence::IgnoreLocations),
                           op->getNumOperands(), op->getNumRegions());
  });
  return h;
}

/// Calls every group of outlined functions with equivalent bodies (the
/// same ops on the same arguments, locations aside) make to the group's
/// first, in the order of `calls`, and erases the others. (`outline` gives
/// them all the same attributes.)
void deduplicate(ArrayRef<func::CallOp> calls, SymbolTable &symbols) {
  llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> seen;
  for (func::CallOp call : calls) {
    auto fn = symbols.lookup<func::FuncOp>(call.getCallee());
    SmallVector<func::FuncOp, 1> &same = seen[bodyHash(fn)];
    func::FuncOp first;
    for (func::FuncOp f : same)
      if (f.getFunctionType() == fn.getFunctionType() &&
          OperationEquivalence::isRegionEquivalentTo(
              &f.getBody(), &fn.getBody(),
              OperationEquivalence::IgnoreLocations)) {
        first = f;
        break;
      }
    if (!first) {
      same.push_back(fn);
      continue;
    }
    call.setCallee(first.getSymName());
    symbols.erase(fn);
  }
}

struct OutlineKernelsPass
    : public kiln::impl::KilnCpuOutlineKernelsBase<OutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> fns(module.getOps<func::FuncOp>());
    SmallVector<func::CallOp> calls;
    for (func::FuncOp fn : fns) {
      if (fn.isExternal() || !fn.getBody().hasOneBlock())
        continue;
      SmallVector<Operation *> kernels;
      for (Operation &op : fn.getBody().front())
        if (op.getNumRegions() > 0)
          kernels.push_back(&op);
      if (static_cast<int64_t>(kernels.size()) < minKernels)
        continue;
      int64_t n = 0;
      for (Operation *op : kernels) {
        // Cloned ops may need the same values in several kernels, and
        // the caller keeps them; unused ones fold away later.
        std::string name;
        do
          name = (fn.getName() + "_kernel_" + std::to_string(n++)).str();
        while (symbols.lookup(name));
        if (func::CallOp call = outline(op, name, module, symbols))
          calls.push_back(call);
      }
    }
    deduplicate(calls, symbols);
  }
};

} // namespace
