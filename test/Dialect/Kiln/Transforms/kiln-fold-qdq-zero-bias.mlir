// RUN: kiln-opt %s -kiln-fold-qdq | FileCheck %s

// A zero int32 bias folds whatever its scale (quantizers share one zero
// bias among convolutions whose input scales differ): here 0.3, not
// x_scale * w_scale = 0.125.

// CHECK-LABEL: func.func @zero_bias
// CHECK:         kiln.qlinear_conv
// CHECK-NOT:     kiln.conv(
func.func @zero_bias(%xq: tensor<1x2x4x4xi8>) -> tensor<1x1x2x2xi8> {
  %xs = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %wq = kiln.constant dense<1> : tensor<1x2x3x3xi8>
  %ws = kiln.constant dense<0.25> : tensor<1xf32>
  %wz = kiln.constant dense<0> : tensor<1xi8>
  %bq = kiln.constant dense<0> : tensor<1xi32>
  %bs = kiln.constant dense<0.3> : tensor<1xf32>
  %bz = kiln.constant dense<0> : tensor<1xi32>
  %x = kiln.dequantize_linear(%xq, %xs, %z) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %w = kiln.dequantize_linear(%wq, %ws, %wz) {axis = 0 : i64} : (tensor<1x2x3x3xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<1x2x3x3xf32>
  %b = kiln.dequantize_linear(%bq, %bs, %bz) {axis = 0 : i64} : (tensor<1xi32>, tensor<1xf32>, tensor<1xi32>) -> tensor<1xf32>
  %c = kiln.conv(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %y = kiln.quantize_linear(%c, %xs, %z) : (tensor<1x1x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x2x2xi8>
  return %y : tensor<1x1x2x2xi8>
}
