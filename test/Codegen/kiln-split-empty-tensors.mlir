// RUN: kiln-opt %s -split-input-file -kiln-split-empty-tensors | FileCheck %s

// One tensor.empty that three ops take as their destination (as CSE leaves
// the empties of repeated layers): the second and third use get clones of
// their own, placed next to the original, not in the loop that uses one.

// CHECK-LABEL: func.func @three_uses
// CHECK:         %[[E0:.+]] = tensor.empty() : tensor<16x64xf32>
// CHECK-NEXT:    %[[E1:.+]] = tensor.empty() : tensor<16x64xf32>
// CHECK-NEXT:    %[[E2:.+]] = tensor.empty() : tensor<16x64xf32>
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[E0]] : tensor<16x64xf32>)
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[E1]] : tensor<16x64xf32>)
// CHECK:         scf.for
// CHECK-NOT:       tensor.empty
// CHECK:           linalg.fill ins(%{{.+}} : f32) outs(%[[E2]] : tensor<16x64xf32>)
func.func @three_uses(%x: f32, %y: f32, %n: index) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<16x64xf32>
  %a = linalg.fill ins(%x : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %b = linalg.fill ins(%y : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %c = scf.for %i = %c0 to %n step %c1 iter_args(%t = %b) -> tensor<16x64xf32> {
    %f = linalg.fill ins(%x : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
    scf.yield %f : tensor<16x64xf32>
  }
  return %a, %b, %c : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>
}

// -----

// A tensor.empty with one use, and one of a dynamic size (cloned with its
// size operand), and none without uses: nothing to split, or clones that
// take the same size.

// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    (%[[N:.+]]: index
// CHECK:         %[[E0:.+]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK-NEXT:    %[[E1:.+]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[E0]] : tensor<?xf32>)
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[E1]] : tensor<?xf32>)
// CHECK:         %[[ONE:.+]] = tensor.empty() : tensor<4xf32>
// CHECK-NOT:     tensor.empty
// CHECK:         linalg.fill ins(%{{.+}} : f32) outs(%[[ONE]] : tensor<4xf32>)
func.func @dynamic(%n: index, %x: f32) -> (tensor<?xf32>, tensor<?xf32>, tensor<4xf32>) {
  %e = tensor.empty(%n) : tensor<?xf32>
  %a = linalg.fill ins(%x : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %b = linalg.fill ins(%x : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %one = tensor.empty() : tensor<4xf32>
  %c = linalg.fill ins(%x : f32) outs(%one : tensor<4xf32>) -> tensor<4xf32>
  return %a, %b, %c : tensor<?xf32>, tensor<?xf32>, tensor<4xf32>
}
