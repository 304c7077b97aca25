// RUN: kiln-opt %s -split-input-file -kiln-infer-shapes -verify-diagnostics

// Operands that contradict each other are an error, never a guess: the
// verifier, which runs the same shape functions as the pass, rejects them
// before the pass runs.
func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<?x4xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{operands are not broadcast-compatible}}
  %0 = kiln.add(%a, %b) : (tensor<2x3xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
