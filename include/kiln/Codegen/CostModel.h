//===- CostModel.h - arithmetic and memory traffic of computations --------===//
//
// Static counts of the arithmetic a computation executes and the bytes it
// must move, for the profiler's roofline (`kiln-run --profile`): the
// compiler records them per CPU region and per GPU kernel, the runtime
// divides them by the measured time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_COSTMODEL_H
#define KILN_CODEGEN_COSTMODEL_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace kiln {

/// What a computation executes. -1 in a field: not statically known.
struct ComputeCost {
  /// Arithmetic operations on data, counted per element: one per
  /// arith/math op (add, mul, max, compare, select, exp, ...), two per
  /// fused multiply-add and per multiply-accumulate of a contraction;
  /// casts, constants and index arithmetic are free. Multiplied by the
  /// static trip counts of the enclosing loops and iteration domains.
  int64_t flops = 0;
  /// The least bytes the computation moves to or from memory: the size of
  /// every buffer (memref) it reads or writes that is defined outside it,
  /// each counted once, and of every global it reads.
  int64_t bytes = 0;
};

/// The cost of running `ops` once, in order, as one computation (a profiled
/// region, a GPU kernel). Works on linalg ops (their iteration domain times
/// their body), scf loop nests with static trip counts, vector ops (a
/// `vector.contract` is 2 x its iteration space) and scalar arith/math.
ComputeCost estimateCost(llvm::ArrayRef<mlir::Operation *> ops);

} // namespace kiln

#endif // KILN_CODEGEN_COSTMODEL_H
