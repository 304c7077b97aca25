// RUN: kiln-opt %s -split-input-file -kiln-fold-batch-norm | FileCheck %s

// A BatchNormalization after a Conv with constant weights folds into the
// Conv: W'[f] = W[f] * s[f], b'[f] = (b[f] - mean[f]) * s[f] + beta[f] with
// s = gamma / sqrt(var + eps). Here s = [2, 0.5] (gamma [2, 1], var [1, 4]
// less eps), so W' = [2, 2, 0.5, 0.5], b' = [(1-1)*2+3, (2-0)*0.5-1].

// CHECK-LABEL: func.func @fold
// CHECK-DAG:     %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}5.000000e-01]], {{\[\[}}5.000000e-01]]]]> : tensor<2x2x1x1xf32>
// CHECK-DAG:     %[[B:.+]] = kiln.constant dense<[3.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK:         %[[Y:.+]] = kiln.conv(%{{.+}}, %[[W]], %[[B]])
// CHECK-NOT:     kiln.batch_normalization
// CHECK:         return %[[Y]]
func.func @fold(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = kiln.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %beta = kiln.constant dense<[3.0, -1.0]> : tensor<2xf32>
  %m = kiln.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %v = kiln.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %c = kiln.conv(%x, %w, %b) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = kiln.batch_normalization(%c, %g, %beta, %m, %v) {epsilon = 0.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A Conv whose result has another user keeps its BatchNormalization.

// CHECK-LABEL: func.func @shared_conv
// CHECK:         kiln.conv
// CHECK:         kiln.batch_normalization
func.func @shared_conv(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = kiln.constant dense<1.0> : tensor<2x2x1x1xf32>
  %s = kiln.constant dense<1.0> : tensor<2xf32>
  %c = kiln.conv(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y = kiln.batch_normalization(%c, %s, %s, %s, %s) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Statistics that are not constants (graph inputs) are not folded.

// CHECK-LABEL: func.func @runtime_stats
// CHECK:         kiln.batch_normalization
func.func @runtime_stats(%x: tensor<1x2x4x4xf32>, %m: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<1.0> : tensor<2x2x1x1xf32>
  %s = kiln.constant dense<1.0> : tensor<2xf32>
  %c = kiln.conv(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y = kiln.batch_normalization(%c, %s, %s, %m, %s) : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
