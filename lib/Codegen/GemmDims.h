//===- GemmDims.h - the dims of a GEMM-shaped contraction -------*- C++ -*-===//

#ifndef KILN_CODEGEN_GEMMDIMS_H
#define KILN_CODEGEN_GEMMDIMS_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

#include <optional>

namespace kiln {

/// The loop dims of a contraction `out[..., m, n] += a[..., m, k] * b`
/// with `b` over (k, n), or over (n, k) (`nk`).
struct GemmDims {
  int64_t k, n;
  bool nk;
};

/// The result of `map` that reads loop dim `d`, when exactly one does and
/// it is `d` itself; else -1.
inline int64_t pureDimResult(mlir::AffineMap map, unsigned d) {
  int64_t found = -1;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (!e.isFunctionOfDim(d))
      continue;
    auto dim = mlir::dyn_cast<mlir::AffineDimExpr>(e);
    if (found >= 0 || !dim)
      return -1;
    found = i;
  }
  return found;
}

/// Whether a contraction may read inputs of element type `in` into an
/// accumulator of `acc`: the same type, or f16/bf16 summed in f32 (what
/// kiln-mixed-precision writes: each product of half values widened).
inline bool widensInto(mlir::Type in, mlir::Type acc) {
  return in == acc || (acc.isF32() && (in.isF16() || in.isBF16()));
}

/// The operand types of a GEMM-shaped op on tensors.
struct GemmTypes {
  mlir::RankedTensorType a, b, out;
};

/// `op`'s operand types when it works on tensors, has inputs a and b and
/// one init, and all three are statically shaped.
inline std::optional<GemmTypes> staticGemmTypes(mlir::linalg::LinalgOp op) {
  using namespace mlir;
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  auto type = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.hasStaticShape() ? t : RankedTensorType();
  };
  GemmTypes t{type(op.getDpsInputs()[0]), type(op.getDpsInputs()[1]),
              type(op.getDpsInits()[0])};
  if (!t.a || !t.b || !t.out)
    return std::nullopt;
  return t;
}

/// `op`'s GemmDims when it has that form: inputs a and b, one init, one
/// reduction dim k; the output's last dim n; a's dims the output's but n,
/// then k (so that [M, K] is a collapse of a); b exactly (k, n) or (n, k).
inline std::optional<GemmDims> gemmDims(mlir::linalg::LinalgOp op) {
  using namespace mlir;
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1)
    return std::nullopt;
  int64_t kd = -1;
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      kd = d;
  AffineMap am = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap bm = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap om = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!om.isProjectedPermutation() || !am.isProjectedPermutation() ||
      !bm.isProjectedPermutation() || bm.getNumResults() != 2 ||
      om.getNumResults() < 1 || am.getNumResults() != om.getNumResults())
    return std::nullopt;
  auto pos = [](AffineExpr e) { return cast<AffineDimExpr>(e).getPosition(); };
  int64_t nd = pos(om.getResults().back());
  for (int64_t i = 0; i + 1 < om.getNumResults(); ++i)
    if (am.getResult(i) != om.getResult(i))
      return std::nullopt;
  if (pos(am.getResults().back()) != kd)
    return std::nullopt;
  int64_t b0 = pos(bm.getResult(0)), b1 = pos(bm.getResult(1));
  bool nk = b0 == nd && b1 == kd;
  if (!nk && !(b0 == kd && b1 == nd))
    return std::nullopt;
  return GemmDims{kd, nd, nk};
}

} // namespace kiln

#endif // KILN_CODEGEN_GEMMDIMS_H
