//===- BatchRange.h - kiln-compile for a range of batch sizes ---*- C++ -*-===//
//
// `kiln-compile --input-shape=x:MIN..MAXx3x224x224` compiles one module that
// runs any batch in [MIN, MAX]: the model is compiled for each batch of a
// set of chunks (the optimum, --opt-batch, then powers of two down to 1),
// and the runtime runs a batch of B as chunks, largest first, on slices of
// the batched tensors. That is correct only where the samples of a batch
// are independent, which `checkSampleIndependence` verifies first.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_COMPILE_BATCHRANGE_H
#define KILN_TOOLS_KILN_COMPILE_BATCHRANGE_H

#include "kiln/Codegen/Pipelines.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <functional>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::compile {

/// An `--input-shape` spec, with dim 0 possibly a batch range `MIN..MAX`
/// and one other dim possibly a length range (a sequence length).
struct ShapeSpec {
  std::string name;
  std::vector<int64_t> dims;
  int64_t rangeMin = 0, rangeMax = 0; // 0: dim 0 is not a range
  int64_t lengthDim = -1;             // the dim of the length range, or -1
  int64_t lengthMin = 0, lengthMax = 0;
};

/// Parses `spec` (NAME:DxD..., dims as `--input-shape` takes them, dim 0
/// possibly `MIN..MAX`, and at most one other dim too); false with `error`
/// on a malformed spec or two ranges besides the batch.
bool parseShapeSpec(const std::string &spec, ShapeSpec &out,
                    std::string &error);

/// The spec with its batch range replaced by `batch` and its length range
/// by `length` (0: the length range's minimum), as `--input-shape` takes it.
std::string specAt(const ShapeSpec &spec, int64_t batch, int64_t length = 0);

/// The batches a range module holds code for: `opt`, then the powers of two
/// below it, down to 1.
std::vector<int64_t> batchChunks(int64_t opt);

/// `t` as MLIR prints it.
std::string typeString(mlir::Type t);

/// A model imported at two shapes, canonicalized and its shapes inferred,
/// with each @main's ops in pre-order: what the range checks walk side by
/// side.
struct TwinImports {
  mlir::OwningOpRef<mlir::ModuleOp> modules[2];
  mlir::func::FuncOp fns[2];
  llvm::SmallVector<mlir::Operation *> ops[2];
};

/// Imports `model` twice, input `s` at `specAt(s, k)` for k = 0, 1;
/// `what(k)` names import k in errors ("batch 1", "length 16"). False with
/// `error` when either does not import, or they differ in their number of
/// ops.
bool importTwice(
    mlir::MLIRContext &context, const std::string &model,
    const std::vector<ShapeSpec> &specs, bool onnxChecks,
    const std::function<std::string(const ShapeSpec &, int)> &specAt,
    const std::function<std::string(int)> &what, TwinImports &out,
    std::string &error);

/// Imports `model` twice, at batches 1 and 2 (shapes from `specs`), and
/// checks that every value computed from the batched inputs has the batch
/// as its dim 0 and nothing else changes with it, and that no op reduces,
/// normalizes, concatenates, gathers, slices, scans or reorders along dim
/// 0 of a batched value: the samples of a batch are then independent.
/// Fills `batchedOutputs` (per graph output); false with `error` naming the
/// first op that mixes samples.
bool checkSampleIndependence(mlir::MLIRContext &context,
                             const std::string &model,
                             const std::vector<ShapeSpec> &specs,
                             bool onnxChecks, std::vector<bool> &batchedOutputs,
                             std::string &error);

/// One variant of a range module: the file of a .kmod whose code is the
/// LLVM dialect as MLIR bytecode, compiled at `batch` samples (0: no batch
/// range) and `length` positions (0: no length range).
struct Variant {
  std::string path;
  int64_t batch = 0, length = 0;
};

/// What a range module covers.
struct RangeInfo {
  int64_t batchMin = 0, batchMax = 0; // 0: no batch range
  std::vector<int64_t> chunks;        // the chunk batches, largest first
  int64_t lengthMin = 0, lengthMax = 0, lengthOpt = 0; // 0: no length range
  std::vector<int64_t> buckets;                        // ascending
  std::vector<std::string> batchedInputs;
  std::vector<bool> batchedOutputs;
  /// The inputs with a length range and the dim of each.
  std::vector<std::pair<std::string, int64_t>> lengthInputs;
  /// Per graph output, its dims that are the length.
  std::vector<std::vector<int64_t>> outputLengthDims;
  /// Whether the code takes the length mask as its last input.
  bool masked = false;
};

/// Merges the variants (one per chunk, or per chunk and length bucket,
/// chunks outer) into one range module (`out`, serialized): one LLVM module
/// with a graph function and an entry per variant, equal constants (the
/// weights) kept once, compiled at `optLevel` for `cpu`; `report`
/// describes it for --report. The variants are read one at a time and the
/// weights they repeat released, so the merge holds the weights about
/// twice, not once per variant.
bool mergeRangeModules(mlir::MLIRContext &context, unsigned optLevel,
                       const kiln::CpuTarget &cpu,
                       const std::vector<Variant> &variants,
                       const RangeInfo &range, std::string &out,
                       std::string &report, std::string &error);

} // namespace kiln::compile

#endif // KILN_TOOLS_KILN_COMPILE_BATCHRANGE_H
