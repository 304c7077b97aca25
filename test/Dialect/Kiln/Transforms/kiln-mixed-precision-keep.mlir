// RUN: kiln-opt %s -kiln-mixed-precision="keep-nodes=kept" | FileCheck %s

// keep-nodes keeps the op of node "kept" in f32; the other Relu, unnamed,
// runs in f16.

// CHECK-LABEL: func.func @named
// CHECK:         %[[K:.+]] = kiln.relu(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         %[[H:.+]] = kiln.cast(%[[K]]) {to = f16}
// CHECK:         kiln.relu(%[[H]]) : (tensor<4xf16>) -> tensor<4xf16>
func.func @named(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.relu(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("kept")
  %s = kiln.relu(%r) : (tensor<4xf32>) -> tensor<4xf32>
  return %s : tensor<4xf32>
}
