// RUN: kiln-opt %s -emit-bytecode | kiln-opt | FileCheck %s

// kiln ops, their optional slots, regions and types survive MLIR bytecode,
// the form kiln-opt hands imported ONNX models to the pass driver in.

// CHECK-LABEL: func.func @roundtrip
// CHECK:         kiln.clip(%{{.+}}, none, %{{.+}}) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:         kiln.if(%{{.+}}) : (tensor<i1>) -> tensor<4xf32> {
// CHECK:           kiln.yield
// CHECK:         kiln.sequence_construct(%{{.+}}) : (tensor<4xf32>) -> !kiln.seq<tensor<4xf32>>
func.func @roundtrip(%x: tensor<4xf32>, %hi: tensor<f32>, %c: tensor<i1>) -> tensor<4xf32> {
  %0 = kiln.clip(%x, none, %hi) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = kiln.if(%c) : (tensor<i1>) -> tensor<4xf32> {
    kiln.yield %0 : tensor<4xf32>
  } {
    kiln.yield %x : tensor<4xf32>
  }
  %2 = kiln.sequence_construct(%1) : (tensor<4xf32>) -> !kiln.seq<tensor<4xf32>>
  return %1 : tensor<4xf32>
}
