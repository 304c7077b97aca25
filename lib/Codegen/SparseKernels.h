//===- SparseKernels.h - what the 2:4 sparse passes share -----*- C++ -*-===//
//
// kiln-cpu-sparse-gemm and kiln-gpu-sparse-weights both take the products
// kiln-sparsify marked, keep their compressed weights in private constant
// globals, and record each product (sparse, or dense and why) in the
// module's `kiln.sparse_kernels` for `kiln-compile --report`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_SPARSEKERNELS_H
#define KILN_CODEGEN_SPARSEKERNELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace kiln {

/// The mark kiln-cpu-sparse-gemm puts on a `vector.from_elements` of lanes
/// extracted from one vector at indices extracted from another (a
/// variable lane permutation), which kiln-cpu-avx2-dot turns into one
/// AVX2 `vpermps` once the module is bufferized.
constexpr llvm::StringLiteral kAvx2PermuteAttr = "kiln.avx2_permute";

/// The k of one `mma.sp` on weights of `bytes`-byte elements (m16n8k32
/// for f16/bf16, m16n8k64 for int8), and the metadata words of one, which
/// kiln-gpu-sparse-weights lays out in the order of the lanes that give
/// them and kiln-gpu-contractions reads back (16: the lane pairs of
/// sparsity selector 0; 32: every lane).
constexpr int64_t sparseMmaK(int64_t bytes) { return bytes == 1 ? 64 : 32; }
constexpr int64_t sparseMetaWords(int64_t bytes) {
  return bytes == 1 ? 32 : 16;
}

/// The generic ops of `module` marked `kiln.sparsity` (by kiln-sparsify,
/// carried by the lowering).
inline llvm::SmallVector<mlir::linalg::GenericOp>
sparsityMarked(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::linalg::GenericOp> marked;
  module.walk([&](mlir::linalg::GenericOp op) {
    if (op->hasAttr("kiln.sparsity"))
      marked.push_back(op);
  });
  return marked;
}

/// Appends `kernels` (one dictionary per marked product) to the module's
/// `kiln.sparse_kernels`.
inline void recordSparseKernels(mlir::ModuleOp module,
                                llvm::ArrayRef<mlir::Attribute> kernels) {
  llvm::SmallVector<mlir::Attribute> all;
  if (auto prior =
          module->getAttrOfType<mlir::ArrayAttr>("kiln.sparse_kernels"))
    all.append(prior.begin(), prior.end());
  all.append(kernels.begin(), kernels.end());
  module->setAttr("kiln.sparse_kernels",
                  mlir::ArrayAttr::get(module.getContext(), all));
}

/// A private constant memref global of `type` holding `init`, named after
/// `base` (made unique), 64-byte aligned, at the start of `module`.
inline mlir::memref::GlobalOp
addConstantGlobal(mlir::OpBuilder &b, mlir::ModuleOp module,
                  mlir::SymbolTable &symbols, mlir::Location loc,
                  llvm::StringRef base, mlir::MemRefType type,
                  mlir::Attribute init) {
  mlir::OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto g = mlir::memref::GlobalOp::create(
      b, loc, base, b.getStringAttr("private"), type, init,
      /*constant=*/true, b.getI64IntegerAttr(64));
  symbols.insert(g);
  return g;
}

} // namespace kiln

#endif // KILN_CODEGEN_SPARSEKERNELS_H
