//===- FormKernels.cpp - the graph function's work into gpu.launch ops ----===//
//
// After bufferization and `convert-linalg-to-parallel-loops`, @main is a
// sequence of loop nests over views. Each becomes a `gpu.launch`: parallel
// loops with one thread per iteration, everything else in a one-thread
// launch. What stays on the host is bookkeeping only (constants, globals,
// views), so the launch plan can be read off the function statically.
//
//===----------------------------------------------------------------------===//

#include "kiln/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"

namespace kiln {
#define GEN_PASS_DEF_KILNGPUFORMKERNELS
#include "kiln/Codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// Views whose result aliases their source's buffer: on the host they only
/// compute a pointer and a layout.
bool isViewOp(Operation *op) {
  return isa<memref::ViewOp, memref::SubViewOp, memref::ExpandShapeOp,
             memref::CollapseShapeOp, memref::ReshapeOp,
             memref::ReinterpretCastOp, memref::CastOp>(op);
}

/// The first name in `loc` (an ONNX node's name, as the importer records
/// it), made into an identifier; empty if there is none.
std::string nameFromLoc(Location loc) {
  std::string name;
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  std::string out;
  for (char c : name) {
    if (out.size() >= 32)
      break;
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return out;
}

/// Constant bounds and steps of a parallel loop without reductions, or
/// failure.
LogicalResult getConstantBounds(scf::ParallelOp loop,
                                SmallVectorImpl<int64_t> &lbs,
                                SmallVectorImpl<int64_t> &trips,
                                SmallVectorImpl<int64_t> &steps) {
  if (loop.getNumResults() != 0 || !loop.getInitVals().empty())
    return failure();
  for (auto [lb, ub, step] : llvm::zip(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    APInt l, u, s;
    if (!matchPattern(lb, m_ConstantInt(&l)) ||
        !matchPattern(ub, m_ConstantInt(&u)) ||
        !matchPattern(step, m_ConstantInt(&s)) || s.getSExtValue() <= 0)
      return failure();
    int64_t lo = l.getSExtValue(), hi = u.getSExtValue(),
            st = s.getSExtValue();
    lbs.push_back(lo);
    steps.push_back(st);
    trips.push_back(hi > lo ? (hi - lo + st - 1) / st : 0);
  }
  return success();
}

/// Rewrites `loop` (no reductions) as a nest of scf.for.
LogicalResult parallelToFor(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError(
        "with reductions inside a GPU kernel is not supported");
  OpBuilder b(loop);
  scf::buildLoopNest(
      b, loop.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), [&](OpBuilder &nb, Location, ValueRange ivs) {
        IRMapping map;
        map.map(loop.getInductionVars(), ivs);
        for (Operation &op : loop.getBody()->without_terminator())
          nb.clone(op, map);
      });
  loop.erase();
  return success();
}

struct FormKernelsPass
    : public kiln::impl::KilnGpuFormKernelsBase<FormKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    if (blockSize <= 0 || blockSize % 32 != 0 || blockSize > 1024) {
      fn.emitError("kiln-gpu-form-kernels: block-size must be a multiple "
                   "of 32 from 32 to 1024");
      return signalPassFailure();
    }
    if (!llvm::hasSingleElement(fn.getBody())) {
      fn.emitError("a GPU graph function must be one block");
      return signalPassFailure();
    }
    Block &body = fn.front();

    // Deallocations: the runtime owns every buffer.
    for (Operation &op : llvm::make_early_inc_range(body))
      if (isa<memref::DeallocOp>(op))
        op.erase();

    // Which top-level ops are device work, and the range of ops each must
    // share a launch with (up to the last use of its results).
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    DenseMap<Operation *, unsigned> index;
    for (auto [i, op] : llvm::enumerate(ops))
      index[op] = i;
    llvm::DenseSet<Value> deviceValues;
    SmallVector<bool> isDevice(ops.size(), false);
    SmallVector<unsigned> reach(ops.size());
    for (auto [i, op] : llvm::enumerate(ops)) {
      reach[i] = i;
      bool usesDevice = false;
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          usesDevice |= deviceValues.contains(v);
      });
      bool host = !usesDevice && (isa<arith::ConstantOp>(op) ||
                                  isa<memref::GetGlobalOp>(op) ||
                                  isViewOp(op));
      if (isa<memref::AllocOp, memref::AllocaOp>(op) && !usesDevice) {
        op->emitOpError("allocates a buffer the memory plan does not place "
                        "(dynamic shape?); GPU modules need every "
                        "intermediate buffer in the arena");
        return signalPassFailure();
      }
      if (host)
        continue;
      isDevice[i] = true;
      for (Value r : op->getResults()) {
        deviceValues.insert(r);
        for (Operation *user : r.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          if (top == body.getTerminator()) {
            op->emitOpError("computes a value the graph function returns; "
                            "GPU graph functions return through "
                            "out-parameters");
            return signalPassFailure();
          }
          reach[i] = std::max(reach[i], index.lookup(top));
        }
      }
    }

    // Groups: maximal ranges of ops closed under `reach`.
    struct Group {
      unsigned begin, end; // inclusive
    };
    SmallVector<Group> groups;
    for (unsigned i = 0; i < ops.size(); ++i) {
      if (!isDevice[i])
        continue;
      if (!groups.empty() && i <= groups.back().end) {
        groups.back().end = std::max(groups.back().end, reach[i]);
        continue;
      }
      groups.push_back({i, reach[i]});
    }

    MLIRContext *ctx = &getContext();
    auto moduleSym = FlatSymbolRefAttr::get(ctx, "kiln_kernels");
    unsigned kernelCount = 0;
    for (const Group &g : groups) {
      SmallVector<Operation *> members;
      for (unsigned i = g.begin; i <= g.end; ++i)
        if (isDevice[i])
          members.push_back(ops[i]);
      Operation *first = members.front();
      std::string name = "k" + std::to_string(kernelCount++);
      if (std::string n = nameFromLoc(first->getLoc()); !n.empty())
        name += "_" + n;
      auto funcSym = FlatSymbolRefAttr::get(ctx, name);

      OpBuilder b(ctx);
      b.setInsertionPointAfter(ops[g.end]);
      Location loc = first->getLoc();
      auto cst = [&](int64_t v) {
        return arith::ConstantIndexOp::create(b, loc, v).getResult();
      };

      auto loop = dyn_cast<scf::ParallelOp>(first);
      SmallVector<int64_t> lbs, trips, steps;
      bool parallel = members.size() == 1 && loop &&
                      succeeded(getConstantBounds(loop, lbs, trips, steps));
      int64_t total = 1;
      for (int64_t t : trips)
        total *= t;
      if (parallel && total == 0) {
        first->erase();
        continue;
      }
      int64_t block = 1, grid = 1;
      if (parallel) {
        block = std::min<int64_t>(blockSize, (total + 31) / 32 * 32);
        grid = (total + block - 1) / block;
      }
      Value gridSize = cst(grid), blockSize = cst(block), c1 = cst(1);
      auto launch = gpu::LaunchOp::create(
          b, loc, gridSize, c1, c1, blockSize, c1, c1,
          /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
          /*asyncDependencies=*/{}, /*workgroupAttributions=*/{},
          /*privateAttributions=*/{}, nullptr, nullptr, nullptr, moduleSym,
          funcSym);
      Block &kb = launch.getBody().front();
      b.setInsertionPointToStart(&kb);
      // Index constants of the kernel, once each, at its start.
      DenseMap<int64_t, Value> kernelConstants;
      auto kcst = [&](int64_t v) {
        Value &c = kernelConstants[v];
        if (!c) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&kb);
          c = arith::ConstantIndexOp::create(b, loc, v);
        }
        return c;
      };
      if (parallel) {
        // id = blockIdx.x * blockDim.x + threadIdx.x, guarded, then
        // delinearized (innermost dim fastest) into the loop's ivs.
        Value id = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                                  kcst(block)),
            launch.getThreadIds().x);
        Value inRange = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ult, id, kcst(total));
        auto guard = scf::IfOp::create(b, loc, inRange, false);
        b.setInsertionPointToStart(guard.thenBlock());
        IRMapping map;
        Value rest = id;
        for (int d = static_cast<int>(trips.size()) - 1; d >= 0; --d) {
          Value pos = d == 0 ? rest
                             : arith::RemUIOp::create(b, loc, rest,
                                                      kcst(trips[d]))
                                   .getResult();
          if (d > 0)
            rest = arith::DivUIOp::create(b, loc, rest, kcst(trips[d]));
          Value iv = pos;
          if (steps[d] != 1)
            iv = arith::MulIOp::create(b, loc, iv, kcst(steps[d]));
          if (lbs[d] != 0)
            iv = arith::AddIOp::create(b, loc, iv, kcst(lbs[d]));
          map.map(loop.getInductionVars()[d], iv);
        }
        for (Operation &op : loop.getBody()->without_terminator())
          b.clone(op, map);
        b.setInsertionPointToEnd(&kb);
      } else {
        IRMapping map;
        for (Operation *op : members)
          b.clone(*op, map);
      }
      gpu::TerminatorOp::create(b, loc);
      for (Operation *op : llvm::reverse(members))
        op->erase();

      // Constants used inside are cloned in, so that kernels take buffers
      // only.
      {
        OpBuilder cb = OpBuilder::atBlockBegin(&kb);
        DenseMap<Value, Value> sunk;
        launch.getBody().walk([&](Operation *op) {
          for (OpOperand &use : op->getOpOperands()) {
            Value v = use.get();
            auto c = v.getDefiningOp<arith::ConstantOp>();
            if (!c || launch->isAncestor(c))
              continue;
            auto [it, inserted] = sunk.try_emplace(v, Value());
            if (inserted)
              it->second = cb.clone(*c)->getResult(0);
            use.set(it->second);
          }
        });
      }

      // Inside the kernel: nested parallel loops run sequentially per
      // thread, static allocations are per-thread.
      SmallVector<scf::ParallelOp> nested;
      launch.getBody().walk([&](scf::ParallelOp p) { nested.push_back(p); });
      for (scf::ParallelOp p : nested)
        if (failed(parallelToFor(p)))
          return signalPassFailure();
      WalkResult r = launch.getBody().walk([&](Operation *op) {
        if (isa<memref::DeallocOp>(op)) {
          op->erase();
          return WalkResult::skip();
        }
        if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
          if (!alloc.getType().hasStaticShape()) {
            alloc.emitOpError("of a dynamic shape inside a GPU kernel is "
                              "not supported");
            return WalkResult::interrupt();
          }
          OpBuilder ab(alloc);
          auto alloca = memref::AllocaOp::create(ab, alloc.getLoc(),
                                                 alloc.getType());
          alloc.replaceAllUsesWith(alloca.getResult());
          alloc.erase();
          return WalkResult::skip();
        }
        return WalkResult::advance();
      });
      if (r.wasInterrupted())
        return signalPassFailure();
    }
  }
};
} // namespace
