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
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::compile {

/// An `--input-shape` spec, with dim 0 possibly a range `MIN..MAX`.
struct ShapeSpec {
  std::string name;
  std::vector<int64_t> dims;
  int64_t rangeMin = 0, rangeMax = 0; // 0: dim 0 is not a range
};

/// Parses `spec` (NAME:DxD..., dims as `--input-shape` takes them, dim 0
/// possibly `MIN..MAX`); false with `error` on a malformed spec or a range
/// on another dim.
bool parseShapeSpec(const std::string &spec, ShapeSpec &out,
                    std::string &error);

/// The spec with its range replaced by `batch`, as `--input-shape` takes it.
std::string specAt(const ShapeSpec &spec, int64_t batch);

/// The batches a range module holds code for: `opt`, then the powers of two
/// below it, down to 1.
std::vector<int64_t> batchChunks(int64_t opt);

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

/// Merges the modules compiled for each chunk (`variants[i]` at
/// `chunks[i]`: serialized .kmod bytes whose code is the LLVM dialect as
/// MLIR bytecode) into one batch-range module (`out`, serialized): one
/// LLVM module with a graph function and an entry per chunk, equal
/// constants (the weights) kept once, compiled at `optLevel` for `cpu`;
/// `report`
/// describes it for --report.
bool mergeBatchModules(mlir::MLIRContext &context, unsigned optLevel,
                       const kiln::CpuTarget &cpu,
                       const std::vector<std::string> &variants,
                       const std::vector<int64_t> &chunks, int64_t min,
                       int64_t max,
                       const std::vector<std::string> &batchedInputs,
                       const std::vector<bool> &batchedOutputs,
                       std::string &out, std::string &report,
                       std::string &error);

} // namespace kiln::compile

#endif // KILN_TOOLS_KILN_COMPILE_BATCHRANGE_H
