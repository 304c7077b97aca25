// RUN: kiln-opt %s -split-input-file | FileCheck %s
// RUN: kiln-opt %s -split-input-file | kiln-opt -split-input-file | FileCheck %s

// The positional form: absent optional operands print as `none`, trailing
// ones are dropped, and the op round-trips through text.

// CHECK-LABEL: func.func @clip
// CHECK:         kiln.clip(%{{.+}}, none, %{{.+}}) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:         kiln.clip(%{{.+}}, %{{.+}}) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:         kiln.clip(%{{.+}}) : (tensor<4xf32>) -> tensor<4xf32>
func.func @clip(%x: tensor<4xf32>, %hi: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.clip(%x, none, %hi) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = kiln.clip(%x, %hi, none) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = kiln.clip(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Optional results: absent ones are `none` in the result type list.

// CHECK-LABEL: func.func @layer_norm
// CHECK:         %[[Y:.+]], %[[M:.+]] = kiln.layer_normalization(%{{.+}}, %{{.+}}) {axis = 1 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>)
// CHECK:         kiln.layer_normalization(%{{.+}}, %{{.+}}, %{{.+}}) : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK:         kiln.layer_normalization(%{{.+}}, %{{.+}}) : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, none, tensor<2x1xf32>)
func.func @layer_norm(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  %y, %m = kiln.layer_normalization(%x, %s) {axis = 1 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>)
  %y2 = kiln.layer_normalization(%x, %s, %s) : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %y3, %r = kiln.layer_normalization(%x, %s) : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, none, tensor<2x1xf32>)
  return %y : tensor<2x8xf32>
}

// -----

// Variadic operands and results.

// CHECK-LABEL: func.func @variadic
// CHECK:         kiln.concat(%{{.+}}, %{{.+}}, %{{.+}}) {axis = 0 : i64} : (tensor<2xf32>, tensor<3xf32>, tensor<?xf32>) -> tensor<?xf32>
// CHECK:         %{{.+}}:3 = kiln.split(%{{.+}}) {num_outputs = 3 : i64} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
func.func @variadic(%a: tensor<2xf32>, %b: tensor<3xf32>, %c: tensor<?xf32>, %d: tensor<6xf32>) -> tensor<?xf32> {
  %0 = kiln.concat(%a, %b, %c) {axis = 0 : i64} : (tensor<2xf32>, tensor<3xf32>, tensor<?xf32>) -> tensor<?xf32>
  %1:3 = kiln.split(%d) {num_outputs = 3 : i64} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0 : tensor<?xf32>
}

// -----

// Regions of control-flow ops end in kiln.yield; sequence and optional
// types and string elements parse and print.

// CHECK-LABEL: func.func @control_flow
// CHECK:         kiln.if(%{{.+}}) : (tensor<i1>) -> tensor<2xf32> {
// CHECK:           kiln.yield %{{.+}} : tensor<2xf32>
// CHECK:         } {
// CHECK:           kiln.yield %{{.+}} : tensor<2xf32>
// CHECK:         }
// CHECK:         kiln.sequence_construct(%{{.+}}, %{{.+}}) : (tensor<2xf32>, tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
// CHECK:         kiln.optional(%{{.+}}) : (tensor<2x!kiln.string>) -> !kiln.opt<tensor<2x!kiln.string>>
func.func @control_flow(%c: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xf32>, %s: tensor<2x!kiln.string>) -> tensor<2xf32> {
  %0 = kiln.if(%c) : (tensor<i1>) -> tensor<2xf32> {
    kiln.yield %b : tensor<2xf32>
  } {
    kiln.yield %a : tensor<2xf32>
  }
  %1 = kiln.sequence_construct(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
  %2 = kiln.optional(%s) : (tensor<2x!kiln.string>) -> !kiln.opt<tensor<2x!kiln.string>>
  return %0 : tensor<2xf32>
}
