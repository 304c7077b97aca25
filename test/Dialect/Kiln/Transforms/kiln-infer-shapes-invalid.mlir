// RUN: kiln-opt %s -split-input-file -kiln-infer-shapes -verify-diagnostics

// Operands that contradict each other are an error, never a guess: the
// verifier, which runs the same shape functions as the pass, rejects them
// before the pass runs.
func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<?x4xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{operands are not broadcast-compatible}}
  %0 = kiln.add(%a, %b) : (tensor<2x3xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A loop-carried value whose shape changes between iterations is refused
// by name.
func.func @carried_shape_change(%x: tensor<3xf32>) -> tensor<*xf32> {
  %m = kiln.constant dense<2> : tensor<i64>
  // expected-error @+1 {{'kiln.loop' op carried value #0 enters the loop as 'tensor<3xf32>' but the body yields 'tensor<6xf32>': a loop-carried value that changes shape between iterations is not supported}}
  %0 = kiln.loop(%m, none, %x) : (tensor<i64>, tensor<3xf32>) -> tensor<*xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<*xf32>):
    %1 = kiln.concat(%v, %v) {axis = 0 : i64} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
    kiln.yield %c, %1 : tensor<i1>, tensor<*xf32>
  }
  return %0 : tensor<*xf32>
}

// -----

// SequenceMap over two known sequences of different lengths.
func.func @sequence_map_lengths(%a: tensor<2xf32>, %b: tensor<2xf32>) -> !kiln.seq<tensor<*xf32>> {
  %s = kiln.sequence_construct(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
  %t = kiln.sequence_construct(%a) : (tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
  // expected-error @+1 {{maps sequences of lengths 2 and 1; they must have one length}}
  %m = kiln.sequence_map(%s, %t) : (!kiln.seq<tensor<2xf32>>, !kiln.seq<tensor<2xf32>>) -> !kiln.seq<tensor<*xf32>> {
  ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):
    %0 = kiln.add(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %0 : tensor<2xf32>
  }
  return %m : !kiln.seq<tensor<*xf32>>
}
