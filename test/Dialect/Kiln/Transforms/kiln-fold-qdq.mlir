// RUN: kiln-opt %s -split-input-file -kiln-fold-qdq | FileCheck %s

// A QDQ Conv with a per-channel weight and the int32 bias quantizers write
// (scale x_scale * w_scale) becomes one QLinearConv on the quantized
// operands, keeping the Conv's attributes.

// CHECK-LABEL: func.func @conv
// CHECK-SAME:    (%[[XQ:[^:]+]]: tensor<1x2x4x4xi8>)
// CHECK:         %[[Y:.+]] = kiln.qlinear_conv(%[[XQ]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xi32>) -> tensor<1x3x4x4xi8>
// CHECK-NOT:     kiln.conv
// CHECK-NOT:     kiln.quantize_linear
// CHECK:         return %[[Y]]
func.func @conv(%xq: tensor<1x2x4x4xi8>) -> tensor<1x3x4x4xi8> {
  %xs = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<1> : tensor<3x2x3x3xi8>
  %ws = kiln.constant dense<[0.25, 0.125, 0.5]> : tensor<3xf32>
  %wz = kiln.constant dense<0> : tensor<3xi8>
  %bq = kiln.constant dense<[1, 2, 3]> : tensor<3xi32>
  %bs = kiln.constant dense<[0.125, 0.0625, 0.25]> : tensor<3xf32>
  %bz = kiln.constant dense<0> : tensor<3xi32>
  %ys = kiln.constant dense<0.1> : tensor<f32>
  %x = kiln.dequantize_linear(%xq, %xs, %z) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 0 : i64} : (tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x2x3x3xf32>
  %b = kiln.dequantize_linear(%bq, %bs, %bz) {axis = 0 : i64} : (tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %c = kiln.conv(%x, %w, %b) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %y = kiln.quantize_linear(%c, %ys, %z) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x4x4xi8>
  return %y : tensor<1x3x4x4xi8>
}

// -----

// A QDQ MatMul with per-column weight scales (axis -1: the last dim)
// becomes QLinearMatMul.

// CHECK-LABEL: func.func @matmul
// CHECK:         kiln.qlinear_matmul({{.*}}) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>, tensor<8x6xi8>, tensor<6xf32>, tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<4x6xi8>
// CHECK-NOT:     kiln.matmul
func.func @matmul(%aq: tensor<4x8xi8>) -> tensor<4x6xi8> {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<1> : tensor<8x6xi8>
  %ws = kiln.constant dense<0.25> : tensor<6xf32>
  %wz = kiln.constant dense<0> : tensor<6xi8>
  %a = kiln.dequantize_linear(%aq, %s, %z) : (tensor<4x8xi8>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = -1 : i64} : (tensor<8x6xi8>, tensor<6xf32>, tensor<6xi8>) -> tensor<8x6xf32>
  %m = kiln.matmul(%a, %w) : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %y = kiln.quantize_linear(%m, %s, %z) : (tensor<4x6xf32>, tensor<f32>, tensor<i8>) -> tensor<4x6xi8>
  return %y : tensor<4x6xi8>
}

// -----

// Not folded: a bias whose scale is not x_scale * w_scale (0.2 where 0.125
// is), a MatMul weight quantized along the wrong axis, a Relu between the
// Conv and its QuantizeLinear, a Conv result with a second user.

// CHECK-LABEL: func.func @bias_scale
// CHECK:         kiln.conv
// CHECK:         kiln.quantize_linear
// CHECK-NOT:     kiln.qlinear_conv
func.func @bias_scale(%xq: tensor<1x2x4x4xi8>) -> tensor<1x1x2x2xi8> {
  %xs = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<1> : tensor<1x2x3x3xi8>
  %ws = kiln.constant dense<0.25> : tensor<1xf32>
  %wz = kiln.constant dense<0> : tensor<1xi8>
  %bq = kiln.constant dense<1> : tensor<1xi32>
  %bs = kiln.constant dense<0.2> : tensor<1xf32>
  %bz = kiln.constant dense<0> : tensor<1xi32>
  %x = kiln.dequantize_linear(%xq, %xs, %z) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 0 : i64} : (tensor<1x2x3x3xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<1x2x3x3xf32>
  %b = kiln.dequantize_linear(%bq, %bs, %bz) {axis = 0 : i64} : (tensor<1xi32>, tensor<1xf32>, tensor<1xi32>) -> tensor<1xf32>
  %c = kiln.conv(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %y = kiln.quantize_linear(%c, %xs, %z) : (tensor<1x1x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x2x2xi8>
  return %y : tensor<1x1x2x2xi8>
}

// CHECK-LABEL: func.func @wrong_axis
// CHECK:         kiln.matmul
// CHECK-NOT:     kiln.qlinear_matmul
func.func @wrong_axis(%aq: tensor<4x6xi8>) -> tensor<4x6xi8> {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<1> : tensor<6x6xi8>
  %ws = kiln.constant dense<0.25> : tensor<6xf32>
  %wz = kiln.constant dense<0> : tensor<6xi8>
  %a = kiln.dequantize_linear(%aq, %s, %z) : (tensor<4x6xi8>, tensor<f32>, tensor<i8>) -> tensor<4x6xf32>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 0 : i64} : (tensor<6x6xi8>, tensor<6xf32>, tensor<6xi8>) -> tensor<6x6xf32>
  %m = kiln.matmul(%a, %w) : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
  %y = kiln.quantize_linear(%m, %s, %z) : (tensor<4x6xf32>, tensor<f32>, tensor<i8>) -> tensor<4x6xi8>
  return %y : tensor<4x6xi8>
}

// CHECK-LABEL: func.func @relu_between
// CHECK:         kiln.matmul
// CHECK:         kiln.relu
// CHECK-NOT:     kiln.qlinear_matmul
func.func @relu_between(%aq: tensor<4x6xi8>) -> tensor<4x6xi8> {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<1> : tensor<6x6xi8>
  %a = kiln.dequantize_linear(%aq, %s, %z) : (tensor<4x6xi8>, tensor<f32>, tensor<i8>) -> tensor<4x6xf32>
  %w = kiln.dequantize_linear(%wq, %s, %z) : (tensor<6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<6x6xf32>
  %m = kiln.matmul(%a, %w) : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
  %r = kiln.relu(%m) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = kiln.quantize_linear(%r, %s, %z) : (tensor<4x6xf32>, tensor<f32>, tensor<i8>) -> tensor<4x6xi8>
  return %y : tensor<4x6xi8>
}

// CHECK-LABEL: func.func @second_user
// CHECK:         kiln.matmul
// CHECK-NOT:     kiln.qlinear_matmul
func.func @second_user(%aq: tensor<4x6xi8>) -> (tensor<4x6xi8>, tensor<4x6xf32>) {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<1> : tensor<6x6xi8>
  %a = kiln.dequantize_linear(%aq, %s, %z) : (tensor<4x6xi8>, tensor<f32>, tensor<i8>) -> tensor<4x6xf32>
  %w = kiln.dequantize_linear(%wq, %s, %z) : (tensor<6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<6x6xf32>
  %m = kiln.matmul(%a, %w) : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
  %y = kiln.quantize_linear(%m, %s, %z) : (tensor<4x6xf32>, tensor<f32>, tensor<i8>) -> tensor<4x6xi8>
  return %y, %m : tensor<4x6xi8>, tensor<4x6xf32>
}

// -----

// A product of two activations (attention's Q K^T) stays in float: the
// integer kernels are for constant weights.

// CHECK-LABEL: func.func @runtime_weight
// CHECK:         kiln.matmul
// CHECK-NOT:     kiln.qlinear_matmul
func.func @runtime_weight(%aq: tensor<4x6xi8>, %bq: tensor<6x6xi8>) -> tensor<4x6xi8> {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %a = kiln.dequantize_linear(%aq, %s, %z) : (tensor<4x6xi8>, tensor<f32>, tensor<i8>) -> tensor<4x6xf32>
  %b = kiln.dequantize_linear(%bq, %s, %z) : (tensor<6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<6x6xf32>
  %m = kiln.matmul(%a, %b) : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
  %y = kiln.quantize_linear(%m, %s, %z) : (tensor<4x6xf32>, tensor<f32>, tensor<i8>) -> tensor<4x6xi8>
  return %y : tensor<4x6xi8>
}

// -----

// A Gemm stays in float; its constant weight, dequantized per output
// channel (axis 0: scales 0.5 and 0.25, zero points 1 and -2), becomes the
// float32 constant (x - zp) * scale. The activation's DequantizeLinear
// stays.

// CHECK-LABEL: func.func @gemm_weight
// CHECK:         %[[A:.+]] = kiln.dequantize_linear
// CHECK:         %[[W:.+]] = kiln.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 2.000000e+00], [0.000000e+00, 5.000000e-01, 1.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT:     kiln.dequantize_linear
// CHECK:         kiln.gemm(%[[A]], %[[W]])
func.func @gemm_weight(%aq: tensor<4x3xi8>) -> tensor<4x2xf32> {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<[[1, 3, 5], [-2, 0, 2]]> : tensor<2x3xi8>
  %ws = kiln.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %wz = kiln.constant dense<[1, -2]> : tensor<2xi8>
  %a = kiln.dequantize_linear(%aq, %s, %z) : (tensor<4x3xi8>, tensor<f32>, tensor<i8>) -> tensor<4x3xf32>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 0 : i64} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3xf32>
  %g = kiln.gemm(%a, %w) {transB = 1 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  return %g : tensor<4x2xf32>
}

// -----

// A blockwise-quantized constant weight (block_size 2 along axis 1, the
// last block short: 3 = 2 + 1; scales [[0.5, 1], [0.25, 2]], zero points
// [[1, 0], [-2, 1]]) is evaluated per block: element (r, c) takes the
// parameters at (r, c / 2).

// CHECK-LABEL: func.func @gemm_weight_blocked
// CHECK:         %[[W:.+]] = kiln.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, 5.000000e+00], [0.000000e+00, 5.000000e-01, 2.000000e+00]]> : tensor<2x3xf32>
// CHECK-NOT:     kiln.dequantize_linear
// CHECK:         kiln.gemm(%{{.+}}, %[[W]])
func.func @gemm_weight_blocked(%a: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %wq = kiln.constant dense<[[1, 3, 5], [-2, 0, 2]]> : tensor<2x3xi8>
  %ws = kiln.constant dense<[[0.5, 1.0], [0.25, 2.0]]> : tensor<2x2xf32>
  %wz = kiln.constant dense<[[1, 0], [-2, 1]]> : tensor<2x2xi8>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 1 : i64, block_size = 2 : i64} : (tensor<2x3xi8>, tensor<2x2xf32>, tensor<2x2xi8>) -> tensor<2x3xf32>
  %g = kiln.gemm(%a, %w) {transB = 1 : i64} : (tensor<4x3xf32>, tensor<2x3xf32>) -> tensor<4x2xf32>
  return %g : tensor<4x2xf32>
}

// -----

// A QDQ Gemm (a classifier's: transB, per-row weight scales of B [N, K],
// the int32 bias) becomes the 1x1 QLinearConv it is: A reshaped to
// [M, K, 1, 1], B's bytes as [N, K, 1, 1] (in the order they were), the
// bias added before the requantization, the result reshaped to [M, N].
// Without transB, B [K, N] is reordered to [N, K] at compile time.

// CHECK-LABEL: func.func @gemm
// CHECK-SAME:    (%[[AQ:[^:]+]]: tensor<4x2xi8>)
// CHECK:         %[[S4:.+]] = kiln.constant dense<[4, 2, 1, 1]> : tensor<4xi64>
// CHECK:         %[[A4:.+]] = kiln.reshape(%[[AQ]], %[[S4]]) : (tensor<4x2xi8>, tensor<4xi64>) -> tensor<4x2x1x1xi8>
// CHECK:         %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}1]], {{\[\[}}2]]], {{\[\[\[}}3]], {{\[\[}}4]]], {{\[\[\[}}5]], {{\[\[}}6]]]]> : tensor<3x2x1x1xi8>
// CHECK:         %[[Y4:.+]] = kiln.qlinear_conv(%[[A4]], %{{.+}}, %{{.+}}, %[[W]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (tensor<4x2x1x1xi8>, tensor<f32>, tensor<i8>, tensor<3x2x1x1xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xi32>) -> tensor<4x3x1x1xi8>
// CHECK:         %[[S2:.+]] = kiln.constant dense<[4, 3]> : tensor<2xi64>
// CHECK:         %[[Y:.+]] = kiln.reshape(%[[Y4]], %[[S2]]) : (tensor<4x3x1x1xi8>, tensor<2xi64>) -> tensor<4x3xi8>
// CHECK-NOT:     kiln.gemm
// CHECK:         return %[[Y]]
func.func @gemm(%aq: tensor<4x2xi8>) -> tensor<4x3xi8> {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi8>
  %ws = kiln.constant dense<[0.25, 0.125, 0.5]> : tensor<3xf32>
  %wz = kiln.constant dense<0> : tensor<3xi8>
  %bq = kiln.constant dense<[1, 2, 3]> : tensor<3xi32>
  %bs = kiln.constant dense<[0.125, 0.0625, 0.25]> : tensor<3xf32>
  %bz = kiln.constant dense<0> : tensor<3xi32>
  %a = kiln.dequantize_linear(%aq, %s, %z) : (tensor<4x2xi8>, tensor<f32>, tensor<i8>) -> tensor<4x2xf32>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 0 : i64} : (tensor<3x2xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x2xf32>
  %b = kiln.dequantize_linear(%bq, %bs, %bz) {axis = 0 : i64} : (tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %g = kiln.gemm(%a, %w, %b) {transB = 1 : i64} : (tensor<4x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %y = kiln.quantize_linear(%g, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  return %y : tensor<4x3xi8>
}

// CHECK-LABEL: func.func @gemm_kn
// CHECK:         kiln.constant dense<{{\[\[\[\[}}1]], {{\[\[}}2]]], {{\[\[\[}}3]], {{\[\[}}4]]], {{\[\[\[}}5]], {{\[\[}}6]]]]> : tensor<3x2x1x1xi8>
// CHECK:         kiln.qlinear_conv
// CHECK-NOT:     kiln.gemm
func.func @gemm_kn(%aq: tensor<4x2xi8>) -> tensor<4x3xi8> {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<[[1, 3, 5], [2, 4, 6]]> : tensor<2x3xi8>
  %ws = kiln.constant dense<[0.25, 0.125, 0.5]> : tensor<3xf32>
  %wz = kiln.constant dense<0> : tensor<3xi8>
  %a = kiln.dequantize_linear(%aq, %s, %z) : (tensor<4x2xi8>, tensor<f32>, tensor<i8>) -> tensor<4x2xf32>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 1 : i64} : (tensor<2x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xf32>
  %g = kiln.gemm(%a, %w) : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %y = kiln.quantize_linear(%g, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  return %y : tensor<4x3xi8>
}

// Not folded: A transposed, alpha not 1 (the integer product would need
// another scale), weight scales along K.

// CHECK-LABEL: func.func @gemm_left_alone
// CHECK-COUNT-3: kiln.gemm
// CHECK-NOT:     kiln.qlinear_conv
func.func @gemm_left_alone(%aq: tensor<2x4xi8>, %bq: tensor<4x2xi8>) -> (tensor<4x3xi8>, tensor<4x3xi8>, tensor<4x3xi8>) {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<1> : tensor<3x2xi8>
  %ws = kiln.constant dense<[0.25, 0.125, 0.5]> : tensor<3xf32>
  %wz = kiln.constant dense<0> : tensor<3xi8>
  %wks = kiln.constant dense<[0.25, 0.5]> : tensor<2xf32>
  %wkz = kiln.constant dense<0> : tensor<2xi8>
  %at = kiln.dequantize_linear(%aq, %s, %z) : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
  %a = kiln.dequantize_linear(%bq, %s, %z) : (tensor<4x2xi8>, tensor<f32>, tensor<i8>) -> tensor<4x2xf32>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 0 : i64} : (tensor<3x2xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x2xf32>
  %wk = kiln.dequantize_linear(%wq, %wks, %wkz) {axis = 1 : i64} : (tensor<3x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<3x2xf32>
  %g0 = kiln.gemm(%at, %w) {transA = 1 : i64, transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  %y0 = kiln.quantize_linear(%g0, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  %g1 = kiln.gemm(%a, %w) {alpha = 2.0 : f32, transB = 1 : i64} : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  %y1 = kiln.quantize_linear(%g1, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  %g2 = kiln.gemm(%a, %wk) {transB = 1 : i64} : (tensor<4x2xf32>, tensor<3x2xf32>) -> tensor<4x3xf32>
  %y2 = kiln.quantize_linear(%g2, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<i8>) -> tensor<4x3xi8>
  return %y0, %y1, %y2 : tensor<4x3xi8>, tensor<4x3xi8>, tensor<4x3xi8>
}
