//===- Passes.td - Kiln lowering passes ---------------------*- tablegen -*-===//

#ifndef KILN_CONVERSION_PASSES_TD
#define KILN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertKilnToLinalg : Pass<"convert-kiln-to-linalg", "::mlir::func::FuncOp"> {
  let summary =
      "Lowers kiln ops to linalg, tensor, scf, arith and math on tensors";
  let description = [{
    Rewrites every kiln op into upstream dialects on tensors: elementwise ops
    (with ONNX broadcasting) into `linalg.generic`, MatMul and Gemm into
    `linalg.matmul` or contractions, Conv into the `linalg.conv_*` named ops
    over a `tensor.pad`, pooling into `linalg.pooling_*`, reductions into
    reducing `linalg.generic`s, Softmax through `linalg.softmax`'s
    decomposition, and data movement (Reshape, Transpose, Concat, Slice,
    Gather, ...) into `tensor` and `linalg` ops, RNN, GRU and LSTM into an
    `scf.for` over the time steps. Constants become `arith.constant`. Loops
    whose trip count is known only at run time (RoiAlign's adaptive sampling
    grid) are `scf.for`s in a generic's body; an operand known only at run
    time that picks a dim (CumSum's axis) becomes an `scf.index_switch`.

    Shapes must be static: import with `--input-shape` and run
    `-kiln-infer-shapes` first. An op without a lowering, or with a dynamic
    shape, is an error that names the op. The one exception are results
    whose extent along one dim depends on the data (NonZero,
    NonMaxSuppression, Compress, Unique): where such a result is a graph
    output, it is computed into its static upper bound and the function
    returns, after all its results, a `tensor<i64>` with the valid extent;
    the output carries `kiln.dynamic_dim` (the dim) and
    `kiln.extent_result` (the index of that result). Such a result used by
    any other op is an error.

    ```mlir
    // before
    %y = kiln.relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
    // after
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {...} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.maximumf %in, %cst : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    ```
  }];
  let options = [
    Option<"maxSplitConvGroups", "max-split-conv-groups", "int64_t", "16",
           "A grouped 2-D convolution (not depthwise) of up to this many "
           "groups becomes one conv_2d_nchw_fchw per group on channel "
           "slices (the CPU's GEMM path); more groups, or 0, keep "
           "conv_2d_ngchw_gfchw (the GPU's implicit GEMM takes the group "
           "as a batch dim, one kernel)">,
    Option<"conv1dAs2d", "conv1d-as-2d", "bool", "true",
           "A static 1-D convolution becomes the 2-D one over a plane one "
           "row high (the CPU's GEMM, split-group, batched-group and "
           "depthwise paths); off, one contraction over (n, f, c, k, o) "
           "(which the GPU's implicit GEMM tiles as it is)">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect"
  ];
}

#endif // KILN_CONVERSION_PASSES_TD
