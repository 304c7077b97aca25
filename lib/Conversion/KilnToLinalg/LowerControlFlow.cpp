//===- LowerControlFlow.cpp - If, Loop and Scan to scf --------------------===//
//
// Part of convert-kiln-to-linalg (see KilnToLinalg.cpp). The ops of a
// control-flow op's regions are lowered first (the conversion visits nested
// ops before their parent), so what is left here is to move each region's
// block into the scf op that runs it and to turn its `kiln.yield` into an
// `scf.yield`:
//
// - If: `scf.if` on the condition's one element.
// - Loop: `scf.while` carrying the iteration count (i64), the condition
//   (i1), the loop-carried values and one accumulator per scan output; the
//   body's iteration_num and cond arguments are rebuilt as tensors from
//   the scalars. Scan outputs need a trip count known at compile time.
// - Scan (opset 9 and later): `scf.for` over the scan length, each scan
//   input's slice taken with `tensor.extract_slice` (from the end for a
//   reverse direction), each scan output's slice put in place with
//   `tensor.insert_slice` into an accumulator carried by the loop.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace kiln;

namespace kiln::lowering {
namespace {

/// The only element of a one-element tensor.
Value extractScalar(OpBuilder &b, Location loc, Value t) {
  auto rt = cast<RankedTensorType>(t.getType());
  SmallVector<Value> zeros(rt.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, t, zeros);
}

/// `v` as type `t`: the same value, or a `tensor.cast` between compatible
/// shapes.
Value castTo(OpBuilder &b, Location loc, Value v, Type t) {
  if (v.getType() == t)
    return v;
  return tensor::CastOp::create(b, loc, t, v);
}

/// Moves the ops of `src` to the end of `dst`, with `args` in place of its
/// arguments, and returns what its `kiln.yield` yielded (the yield itself
/// is erased).
SmallVector<Value> moveBody(Block &src, Block &dst, ValueRange args) {
  for (auto [arg, v] : llvm::zip(src.getArguments(), args))
    arg.replaceAllUsesWith(v);
  Operation *yield = src.getTerminator();
  SmallVector<Value> yielded(yield->getOperands());
  yield->erase();
  dst.getOperations().splice(dst.end(), src.getOperations());
  return yielded;
}

/// `v` copied into a new tensor of type `t`: a loop's own state, which it
/// updates in place while the op's inputs stay intact.
Value ownCopy(OpBuilder &b, Location loc, Value v, Type t) {
  return linalg::CopyOp::create(b, loc, castTo(b, loc, v, t),
                                emptyLike(b, loc, cast<RankedTensorType>(t)))
      .getResult(0);
}

/// Each of `nexts` copied into the loop state it replaces (`states`, the
/// body's block arguments): a loop that yields tensors that bufferize to
/// its iter_args' buffers runs in place. Emitted after everything else the
/// body computes, which may read the states. A next value that may share a
/// state's buffer (a state itself, or a view of one) is first copied out,
/// so that no state is overwritten before it is read (`a, b = b, a`).
SmallVector<Value> updateStates(OpBuilder &b, Location loc,
                                ArrayRef<Value> nexts, ValueRange states) {
  auto mayAlias = [&](Value v, Value state) {
    if (v == state)
      return false;
    if (auto arg = dyn_cast<BlockArgument>(v))
      return llvm::is_contained(states, arg);
    Operation *def = v.getDefiningOp();
    return def && !isa<DestinationStyleOpInterface>(def) &&
           llvm::any_of(def->getOperands(),
                        [&](Value o) { return isa<TensorType>(o.getType()); });
  };
  SmallVector<Value> sources;
  for (auto [next, state] : llvm::zip(nexts, states)) {
    Value v = castTo(b, loc, next, state.getType());
    if (mayAlias(v, state))
      v = ownCopy(b, loc, v, state.getType());
    sources.push_back(v);
  }
  SmallVector<Value> updated;
  for (auto [v, state] : llvm::zip(sources, states))
    updated.push_back(
        v == state ? v : linalg::CopyOp::create(b, loc, v, state).getResult(0));
  return updated;
}

/// The offsets, sizes and strides of the one-wide slice of a static tensor
/// of type `t` at `pos` along `axis`: what one iteration of a scan reads
/// or writes.
struct UnitSlice {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  UnitSlice(OpBuilder &b, RankedTensorType t, int64_t axis, OpFoldResult pos)
      : offsets(t.getRank(), b.getIndexAttr(0)),
        strides(t.getRank(), b.getIndexAttr(1)) {
    offsets[axis] = pos;
    for (int64_t d = 0; d < t.getRank(); ++d)
      sizes.push_back(b.getIndexAttr(d == axis ? 1 : t.getDimSize(d)));
  }
  Value extract(OpBuilder &b, Location loc, RankedTensorType to, Value from) {
    return tensor::ExtractSliceOp::create(b, loc, to, from, offsets, sizes,
                                          strides);
  }
  Value insert(OpBuilder &b, Location loc, Value slice, Value into) {
    return tensor::InsertSliceOp::create(b, loc, slice, into, offsets, sizes,
                                         strides);
  }
};

/// A one-element tensor of `type` (a rank-0 or all-ones static tensor
/// type) holding `scalar`.
Value scalarTensor(OpBuilder &b, Location loc, Type type, Value scalar) {
  auto rt = cast<RankedTensorType>(toSignless(type));
  return tensor::FromElementsOp::create(b, loc, rt, ValueRange{scalar});
}

bool isOneElement(Type t) {
  auto rt = dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape() && rt.getNumElements() == 1;
}

FailureOr<SmallVector<Value>> lowerIf(OpBuilder &b, IfOp op) {
  Location loc = op.getLoc();
  if (!isOneElement(op.getCond().getType()))
    return op.emitOpError("the condition must have one element (got ")
           << op.getCond().getType() << ")";
  Value cond = extractScalar(b, loc, op.getCond());
  if (!cond.getType().isInteger(1))
    cond = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, cond,
        arith::ConstantOp::create(b, loc, b.getZeroAttr(cond.getType())));
  SmallVector<Type> types;
  for (Type t : op->getResultTypes())
    types.push_back(toSignless(t));
  auto scfIf = scf::IfOp::create(b, loc, types, cond, /*withElseRegion=*/true);
  for (auto [from, to] :
       {std::pair{&op.getThenBranch(), &scfIf.getThenRegion()},
        {&op.getElseBranch(), &scfIf.getElseRegion()}}) {
    Block &dst = to->front();
    dst.clear();
    SmallVector<Value> yielded = moveBody(from->front(), dst, {});
    if (yielded.size() != types.size())
      return op.emitOpError("a branch yields ")
             << yielded.size() << " values for " << types.size() << " results";
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(&dst);
    for (size_t i = 0; i < yielded.size(); ++i)
      yielded[i] = castTo(b, loc, yielded[i], types[i]);
    scf::YieldOp::create(b, loc, yielded);
  }
  return SmallVector<Value>(scfIf.getResults());
}

FailureOr<SmallVector<Value>> lowerLoop(OpBuilder &b, LoopOp op) {
  Location loc = op.getLoc();
  Block &body = op.getBody().front();
  ValueRange initial = op.getVInitial();
  unsigned carried = initial.size();
  unsigned scans = op->getNumResults() - carried;
  if (body.getNumArguments() != 2 + carried)
    return op.emitOpError("the body takes ")
           << body.getNumArguments() << " arguments, expected " << 2 + carried
           << " (iteration number, condition, " << carried
           << " loop-carried values)";
  if (body.getTerminator()->getNumOperands() != 1 + op->getNumResults())
    return op.emitOpError("the body yields ")
           << body.getTerminator()->getNumOperands() << " values, expected "
           << 1 + op->getNumResults();
  for (unsigned i : {0u, 1u})
    if (!isOneElement(body.getArgument(i).getType()))
      return op.emitOpError("body argument #")
             << i << " must be a one-element tensor (got "
             << body.getArgument(i).getType() << ")";
  if (op.getM() && !isOneElement(op.getM().getType()))
    return op.emitOpError("the trip count must have one element");
  if (op.getCond() && !isOneElement(op.getCond().getType()))
    return op.emitOpError("the condition must have one element");

  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  Value maxTrips = op.getM() ? extractScalar(b, loc, op.getM()) : Value();
  if (maxTrips && maxTrips.getType() != i64)
    maxTrips = arith::ExtSIOp::create(b, loc, i64, maxTrips);
  Value cond0 = op.getCond() ? extractScalar(b, loc, op.getCond())
                             : arith::ConstantIntOp::create(b, loc, i1, 1);
  // The loop carries the tensors first (the carried values, then one
  // accumulator per scan output), then the iteration count and the
  // condition: canonicalization may drop an unused scalar, and the
  // bufferization of scf.while matches the tensors by position.
  SmallVector<Value> inits;
  for (auto [v, result] : llvm::zip(initial, op->getResults()))
    inits.push_back(ownCopy(b, loc, v, toSignless(result.getType())));
  // Scan outputs: [rows, slice...], static. The rows are the trip count
  // where it is known; where the model declares them instead, the loop
  // stops after that many iterations (it never writes past them) and rows
  // it does not reach stay zero.
  int64_t rows = -1;
  for (OpResult result : op->getResults().drop_front(carried)) {
    auto rt = cast<RankedTensorType>(toSignless(result.getType()));
    if (rt.getRank() < 1)
      return op.emitOpError("scan output #")
             << result.getResultNumber() - carried << " has rank 0";
    rows = rows < 0 ? rt.getDimSize(0) : std::min(rows, rt.getDimSize(0));
    inits.push_back(
        filled(b, loc, rt, scalarConst(b, loc, rt.getElementType(), 0)));
  }
  unsigned iterIdx = carried + scans, condIdx = iterIdx + 1;
  inits.push_back(arith::ConstantIntOp::create(b, loc, i64, 0));
  inits.push_back(cond0);
  SmallVector<Type> types(ValueRange(inits).getTypes());
  SmallVector<Location> locs(types.size(), loc);

  auto loop = scf::WhileOp::create(b, loc, types, inits);
  {
    Block *before = b.createBlock(&loop.getBefore(), {}, types, locs);
    Value go = before->getArgument(condIdx);
    if (maxTrips)
      go = arith::AndIOp::create(
          b, loc, go,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                before->getArgument(iterIdx), maxTrips));
    if (rows >= 0)
      go = arith::AndIOp::create(
          b, loc, go,
          arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::slt, before->getArgument(iterIdx),
              arith::ConstantIntOp::create(b, loc, i64, rows)));
    scf::ConditionOp::create(b, loc, go, before->getArguments());
  }
  Block *after = b.createBlock(&loop.getAfter(), {}, types, locs);
  Value iter = after->getArgument(iterIdx), cond = after->getArgument(condIdx);
  SmallVector<Value> args = {
      scalarTensor(b, loc, body.getArgument(0).getType(), iter),
      scalarTensor(b, loc, body.getArgument(1).getType(), cond)};
  for (unsigned i = 0; i < carried; ++i)
    args.push_back(after->getArgument(i));
  SmallVector<Value> yielded = moveBody(body, *after, args);
  b.setInsertionPointToEnd(after);
  SmallVector<Value> next;
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), iter);
  for (unsigned k = 0; k < scans; ++k) {
    Value acc = after->getArgument(carried + k);
    auto accType = cast<RankedTensorType>(acc.getType());
    Value slice = yielded[1 + carried + k];
    auto sliceType = RankedTensorType::get(accType.getShape().drop_front(),
                                           accType.getElementType());
    slice = castTo(b, loc, slice, sliceType);
    next.push_back(UnitSlice(b, accType, 0, index).insert(b, loc, slice, acc));
  }
  SmallVector<Value> states =
      updateStates(b, loc, ArrayRef(yielded).slice(1, carried),
                   after->getArguments().take_front(carried));
  next.insert(next.begin(), states.begin(), states.end());
  next.push_back(arith::AddIOp::create(
      b, loc, iter, arith::ConstantIntOp::create(b, loc, i64, 1)));
  // Without a condition operand the body's condition is ignored.
  if (op.getCond()) {
    if (!isOneElement(yielded[0].getType()))
      return op.emitOpError("the body's condition must have one element");
    next.push_back(extractScalar(b, loc, yielded[0]));
  } else {
    next.push_back(cond);
  }
  scf::YieldOp::create(b, loc, next);
  b.setInsertionPointAfter(loop);
  SmallVector<Value> results(loop.getResults().take_front(carried + scans));
  // Scan outputs whose length the loop decides (loopScanBound): their
  // valid rows are the iterations it ran, one count per output.
  if (loopScanBound(op))
    for (unsigned k = 0; k < scans; ++k)
      results.push_back(
          tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, i64),
                                         ValueRange{loop.getResult(iterIdx)}));
  return results;
}

FailureOr<SmallVector<Value>> lowerScan(OpBuilder &b, ScanOp op) {
  Location loc = op.getLoc();
  Block &body = op.getBody().front();
  ValueRange operands = op.getInitialStateAndScanInputs();
  int64_t numScan = op.getNumScanInputs();
  unsigned states = operands.size() - numScan;
  unsigned scanOuts = op->getNumResults() - states;
  if (body.getNumArguments() != operands.size() ||
      body.getTerminator()->getNumOperands() != op->getNumResults())
    return op.emitOpError("the body's arguments and results do not match "
                          "the op's inputs and outputs");
  auto attrAt = [](std::optional<ArrayRef<int64_t>> a, size_t i) {
    return a && i < a->size() ? (*a)[i] : 0;
  };
  int64_t trips = -1;
  SmallVector<int64_t> inAxes;
  for (int64_t j = 0; j < numScan; ++j) {
    auto t = cast<RankedTensorType>(operands[states + j].getType());
    int64_t axis = attrAt(op.getScanInputAxes(), j);
    if (axis < 0)
      axis += t.getRank();
    inAxes.push_back(axis);
    trips = t.getDimSize(axis);
  }
  if (trips < 0)
    return op.emitOpError("needs at least one scan input");

  SmallVector<Value> inits;
  for (auto [v, result] :
       llvm::zip(operands.take_front(states), op->getResults()))
    inits.push_back(ownCopy(b, loc, v, toSignless(result.getType())));
  SmallVector<int64_t> outAxes;
  for (unsigned k = 0; k < scanOuts; ++k) {
    auto rt =
        cast<RankedTensorType>(toSignless(op->getResult(states + k).getType()));
    int64_t axis = attrAt(op.getScanOutputAxes(), k);
    if (axis < 0)
      axis += rt.getRank();
    outAxes.push_back(axis);
    inits.push_back(emptyLike(b, loc, rt));
  }
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, trips);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value last = arith::ConstantIndexOp::create(b, loc, trips - 1);
  auto loop = scf::ForOp::create(b, loc, lb, ub, one, inits);
  Block *loopBody = loop.getBody();
  b.setInsertionPointToStart(loopBody);
  Value i = loop.getInductionVar();
  Value reversed = arith::SubIOp::create(b, loc, last, i);
  auto position = [&](std::optional<ArrayRef<int64_t>> dirs, size_t k) {
    return attrAt(dirs, k) ? reversed : i;
  };
  SmallVector<Value> args(loop.getRegionIterArgs().take_front(states));
  for (int64_t j = 0; j < numScan; ++j) {
    Value in = operands[states + j];
    auto t = cast<RankedTensorType>(in.getType());
    auto sliceType = cast<RankedTensorType>(
        toSignless(body.getArgument(states + j).getType()));
    args.push_back(
        UnitSlice(b, t, inAxes[j], position(op.getScanInputDirections(), j))
            .extract(b, loc, sliceType, in));
  }
  // The loop's own terminator, if the builder made one: the body's ops go
  // after the slices and a new yield ends them.
  if (!loopBody->empty() && isa<scf::YieldOp>(loopBody->back()))
    loopBody->back().erase();
  SmallVector<Value> yielded = moveBody(body, *loopBody, args);
  b.setInsertionPointToEnd(loopBody);
  SmallVector<Value> next;
  for (unsigned k = 0; k < scanOuts; ++k) {
    Value acc = loop.getRegionIterArgs()[states + k];
    auto accType = cast<RankedTensorType>(acc.getType());
    int64_t axis = outAxes[k];
    SmallVector<int64_t> sliceShape(accType.getShape());
    sliceShape.erase(sliceShape.begin() + axis);
    Value slice =
        castTo(b, loc, yielded[states + k],
               RankedTensorType::get(sliceShape, accType.getElementType()));
    next.push_back(
        UnitSlice(b, accType, axis, position(op.getScanOutputDirections(), k))
            .insert(b, loc, slice, acc));
  }
  SmallVector<Value> updated =
      updateStates(b, loc, ArrayRef(yielded).take_front(states),
                   loop.getRegionIterArgs().take_front(states));
  next.insert(next.begin(), updated.begin(), updated.end());
  scf::YieldOp::create(b, loc, next);
  b.setInsertionPointAfter(loop);
  return SmallVector<Value>(loop.getResults());
}

} // namespace

std::optional<int64_t> loopScanBound(Operation *op) {
  auto loop = dyn_cast<LoopOp>(op);
  if (!loop || !loop.getM() || op->getNumResults() == loop.getVInitial().size())
    return std::nullopt;
  // A loop that runs M times has static scan outputs.
  std::optional<SmallVector<int64_t>> m = getConstantInts(loop.getM());
  if (!m || m->size() != 1 || (*m)[0] < 1 || getLoopTripCount(loop))
    return std::nullopt;
  // Only graph outputs take a data-dependent extent.
  for (OpResult r : op->getResults().drop_front(loop.getVInitial().size()))
    if (llvm::any_of(r.getUsers(),
                     [](Operation *u) { return !isa<func::ReturnOp>(u); }))
      return std::nullopt;
  return (*m)[0];
}

LogicalResult checkControlFlowTypes(Operation *op) {
  auto isStatic = [](Type t) {
    auto r = dyn_cast<RankedTensorType>(t);
    return r && r.hasStaticShape();
  };
  if (auto loop = dyn_cast<LoopOp>(op)) {
    unsigned carried = loop.getVInitial().size();
    for (OpResult r : op->getResults().drop_front(carried))
      if (!isStatic(r.getType()))
        return op->emitOpError("scan output #")
               << r.getResultNumber() - carried << " has type " << r.getType()
               << ": its length is the number of iterations, which is known "
                  "at compile time only for a constant trip count M and no "
                  "condition (or a constant true one the body passes on); a "
                  "loop that decides when to stop needs a constant M and its "
                  "scan outputs as graph outputs (or pin M with "
                  "--input-value)";
  }
  if (auto ifOp = dyn_cast<IfOp>(op)) {
    Operation *a = ifOp.getThenBranch().front().getTerminator();
    Operation *b = ifOp.getElseBranch().front().getTerminator();
    for (OpResult r : op->getResults()) {
      unsigned i = r.getResultNumber();
      if (isStatic(r.getType()) || i >= a->getNumOperands() ||
          i >= b->getNumOperands())
        continue;
      Type x = a->getOperand(i).getType(), y = b->getOperand(i).getType();
      if (x != y)
        return op->emitOpError("result #")
               << i << ": the branches yield " << x << " and " << y
               << "; an If whose result shape depends on the branch taken "
                  "is not supported yet";
    }
  }
  return success();
}

LoweringResult lowerControlFlowOp(OpBuilder &b, Operation *op) {
  if (auto ifOp = dyn_cast<IfOp>(op))
    return lowerIf(b, ifOp);
  if (auto loop = dyn_cast<LoopOp>(op))
    return lowerLoop(b, loop);
  if (auto scan = dyn_cast<ScanOp>(op))
    return lowerScan(b, scan);
  return std::nullopt;
}

} // namespace kiln::lowering
