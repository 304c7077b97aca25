// RUN: kiln-opt %s -split-input-file -kiln-infer-shapes -verify-diagnostics

// Inference fails loudly when operands contradict each other; the pass
// never guesses.
func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<?x4xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{operands are not broadcast-compatible}}
  %0 = kiln.add(%a, %b) : (tensor<2x3xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
