//===- LengthRange.h - kiln-compile for a range of lengths ------*- C++ -*-===//
//
// `kiln-compile --input-shape=input_ids:1x16..128` compiles one module that
// runs any sequence length in [16, 128]. The model is compiled for a few
// lengths, the buckets; a run of length L runs the smallest bucket of at
// least L on its inputs padded with zeros and returns the first L positions
// of its outputs. That gives the outputs a length-L run would when every
// position is computed from the positions before or at it only through
// ops that the padding cannot reach: `checkPositionIndependence` proves it
// op by op, and marks each Softmax over positions, whose padded positions
// a mask (0 for the first L, -inf after) then hides from the valid ones.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_COMPILE_LENGTHRANGE_H
#define KILN_TOOLS_KILN_COMPILE_LENGTHRANGE_H

#include "BatchRange.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::compile {

/// What the check found: the Softmax nodes over positions (node name and
/// axis) and, per graph output, its dims that are the length.
struct LengthPlan {
  std::vector<std::pair<std::string, int64_t>> masks;
  std::vector<std::vector<int64_t>> outputLengthDims;
};

/// Imports `model` at the length range's minimum and one more (shapes from
/// `specs`, batches at their minimum) and walks both graphs side by side:
/// every value computed from the ranged inputs must have the length as
/// whole dims or not at all, each op must compute a position from the
/// same position of its operands (elementwise ops, MatMul and Gemm over
/// other dims, normalizations and reductions over other dims, Reshape,
/// Transpose, Gather of embeddings, Slices that keep position 0), a
/// constant shaped by the length must hold at the shorter length what it
/// holds at the longer one's first positions, and a product over
/// positions (attention's probabilities times V) must read probabilities
/// that a masked Softmax made. False with `error` naming the first node
/// that breaks this.
bool checkPositionIndependence(mlir::MLIRContext &context,
                               const std::string &model,
                               const std::vector<ShapeSpec> &specs,
                               bool onnxChecks, LengthPlan &plan,
                               std::string &error);

/// The lengths a module for [min, max] holds code for: `opt`, the maximum
/// and `explicitBuckets` when given (each in the range), else `opt`, the
/// range's ends and the powers of two between; ascending.
std::vector<int64_t> lengthBuckets(int64_t min, int64_t max, int64_t opt,
                                   const std::vector<int64_t> &explicitBuckets);

/// Gives `module`'s @main a last input `kiln.length_mask`, a 1-D f32
/// tensor of the length (0 at the valid positions, -inf at the padded
/// ones), and adds it, reshaped along the axis, to the operand of each
/// Softmax of `masks` (found by node name): to the mask of an
/// Add(scores, mask) that feeds one, so that attention still fuses.
bool addLengthMasks(mlir::ModuleOp module,
                    const std::vector<std::pair<std::string, int64_t>> &masks,
                    std::string &error);

} // namespace kiln::compile

#endif // KILN_TOOLS_KILN_COMPILE_LENGTHRANGE_H
