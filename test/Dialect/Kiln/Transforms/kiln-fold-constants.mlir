// RUN: kiln-opt %s -split-input-file -kiln-fold-constants | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-fold-constants=max-result-bytes=64 | FileCheck %s --check-prefix=LIMIT

// A weight stored in int8, dequantized and transposed in the graph folds
// whole into the one float constant the product reads; the ops and
// constants it came from are gone.

// CHECK-LABEL: func.func @dequantize_transpose
// CHECK-NEXT:    %[[W:.+]] = kiln.constant dense<{{\[}}[-1.000000e+00, 1.000000e+00], [0.000000e+00, 1.500000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[Y:.+]] = kiln.matmul(%{{.+}}, %[[W]])
// CHECK-NEXT:    return %[[Y]]
func.func @dequantize_transpose(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %q = kiln.constant dense<[[-2, 0], [2, 3]]> : tensor<2x2xi8>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %w = kiln.dequantize_linear(%q, %s, %z) : (tensor<2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<2x2xf32>
  %t = kiln.transpose(%w) {perm = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = kiln.matmul(%x, %t) : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// -----

// A weight-sized ConstantOfShape becomes a dense resource like a stored
// weight (its bytes, not a splat), so the code generator packs it. Over
// max-result-bytes it stays computed at run time.

// CHECK-LABEL: func.func @constant_of_shape
// CHECK:         %[[W:.+]] = kiln.constant dense_resource<kiln_folded{{.*}}> : tensor<16x8x3x3xf32>
// CHECK-NOT:     kiln.constant_of_shape
// CHECK:         kiln.conv(%{{.+}}, %[[W]])
// LIMIT-LABEL: func.func @constant_of_shape
// LIMIT:         kiln.constant_of_shape
func.func @constant_of_shape(%x: tensor<1x8x5x5xf32>) -> tensor<1x16x3x3xf32> {
  %shape = kiln.constant dense<[16, 8, 3, 3]> : tensor<4xi64>
  %w = kiln.constant_of_shape(%shape) {value = dense<2.5> : tensor<1xf32>} : (tensor<4xi64>) -> tensor<16x8x3x3xf32>
  %y = kiln.conv(%x, %w) : (tensor<1x8x5x5xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x3x3xf32>
  return %y : tensor<1x16x3x3xf32>
}

// -----

// Slices with negative steps in two dims, a Concat, a Cast and a Gather of
// constants, and float arithmetic with broadcasting.

// CHECK-LABEL: func.func @layout_and_values
// CHECK-DAG:     kiln.constant dense<{{\[}}[6, 4], [3, 1]]> : tensor<2x2xi64>
// CHECK-DAG:     kiln.constant dense<[1, 2, 3, 9]> : tensor<4xi32>
// CHECK-DAG:     kiln.constant dense<[2.000000e+00, 2.000000e+00, 4.000000e+00]> : tensor<3xf32>
// CHECK-DAG:     kiln.constant dense<{{\[}}[3.000000e+00, 4.000000e+00], [4.000000e+00, 5.000000e+00]]> : tensor<2x2xf32>
// CHECK-NOT:     kiln.slice
// CHECK-NOT:     kiln.concat
// CHECK-NOT:     kiln.cast
// CHECK-NOT:     kiln.add
func.func @layout_and_values() -> (tensor<2x2xi64>, tensor<4xi32>, tensor<3xf32>, tensor<2x2xf32>) {
  %d = kiln.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %st = kiln.constant dense<[-1, 2]> : tensor<2xi64>
  %en = kiln.constant dense<[-10, -10]> : tensor<2xi64>
  %ax = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %sp = kiln.constant dense<[-1, -2]> : tensor<2xi64>
  %0 = kiln.slice(%d, %st, %en, %ax, %sp) : (tensor<2x3xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %a = kiln.constant dense<[1, 2, 3]> : tensor<3xi32>
  %b = kiln.constant dense<9> : tensor<1xi32>
  %1 = kiln.concat(%a, %b) {axis = 0 : i64} : (tensor<3xi32>, tensor<1xi32>) -> tensor<4xi32>
  %f = kiln.constant dense<[1.5, 2.5, 3.5]> : tensor<3xf64>
  %c = kiln.cast(%f) {to = f32} : (tensor<3xf64>) -> tensor<3xf32>
  %i = kiln.constant dense<[0, 0, 2]> : tensor<3xi64>
  %h = kiln.constant dense<[2.0, 3.0, 4.0]> : tensor<3xf32>
  %2 = kiln.gather(%h, %i) : (tensor<3xf32>, tensor<3xi64>) -> tensor<3xf32>
  %m = kiln.constant dense<[[1.0, 2.0], [1.0, 2.0]]> : tensor<2x2xf32>
  %n = kiln.constant dense<[[2.0], [3.0]]> : tensor<2x1xf32>
  %3 = kiln.add(%m, %n) : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  return %0, %1, %2, %3 : tensor<2x2xi64>, tensor<4xi32>, tensor<3xf32>, tensor<2x2xf32>
}

// -----

// An op with an operand computed at run time stays.

// CHECK-LABEL: func.func @runtime_operand
// CHECK:         kiln.transpose
func.func @runtime_operand(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %t = kiln.transpose(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

// A splat weight (a ConstantOfShape its folder made one value) is written
// out element by element for the product that reads it; a splat read by
// anything else stays a splat.

// CHECK-LABEL: func.func @splat_weight
// CHECK:         %[[W:.+]] = kiln.constant dense_resource<kiln_folded{{.*}}> : tensor<8x4x3x3xf32>
// CHECK:         kiln.conv(%{{.+}}, %[[W]])
// CHECK:         %[[S:.+]] = kiln.constant dense<1.000000e+00> : tensor<1x8x3x3xf32>
// CHECK:         kiln.add(%{{.+}}, %[[S]])
func.func @splat_weight(%x: tensor<1x4x5x5xf32>) -> tensor<1x8x3x3xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x4x3x3xf32>
  %y = kiln.conv(%x, %w) : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x3x3xf32>
  %s = kiln.constant dense<1.0> : tensor<1x8x3x3xf32>
  %z = kiln.add(%y, %s) : (tensor<1x8x3x3xf32>, tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %z : tensor<1x8x3x3xf32>
}
