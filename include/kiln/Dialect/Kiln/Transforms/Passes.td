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

#endif // KILN_DIALECT_KILN_TRANSFORMS_PASSES_TD
