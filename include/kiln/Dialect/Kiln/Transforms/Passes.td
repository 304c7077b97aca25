//===- Passes.td - kiln graph passes ------------------------*- tablegen -*-===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD
#define KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnInferShapes : Pass<"kiln-infer-shapes"> {
  let summary = "Refines the result types of kiln ops from their operands";
  let description = [{
    Walks the graph in order and replaces each kiln op's result types by the
    more refined of the present type and the type its shape function infers,
    so that static input shapes (given with `--input-shape` at import, or
    written into the function signature) flow to every value. The function
    signature's result types are updated to match. An op whose inferred type
    contradicts its present one is an error.

    ```mlir
    // before: %0 = kiln.relu(%x) : (tensor<2x3xf32>) -> tensor<?x?xf32>
    // after:  %0 = kiln.relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def KilnFoldBatchNorm : Pass<"kiln-fold-batch-norm"> {
  let summary = "Folds an inference BatchNormalization into the Conv before it";
  let description = [{
    `BatchNormalization(Conv(x, W, b), gamma, beta, mean, var)` with constant
    weights and statistics, where the Conv has no other user, becomes
    `Conv(x, W', b')` with `W'[f] = W[f] * s[f]` and
    `b'[f] = (b[f] - mean[f]) * s[f] + beta[f]`, `s = gamma / sqrt(var + eps)`:
    one kernel instead of two, and no per-element normalization at run time.
    Float32 weights only; anything else is left as it is.

    ```mlir
    %c = kiln.conv(%x, %w) : ...
    %y = kiln.batch_normalization(%c, %g, %b, %m, %v) : ...
    // becomes
    %y = kiln.conv(%x, %w2, %b2) : ...
    ```
  }];
  let dependentDialects = ["::kiln::KilnDialect"];
}

#endif // KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD
