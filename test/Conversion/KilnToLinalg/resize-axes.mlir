// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// Scales for the axes listed (3 then 2): dim 2 is scaled by 3, dim 3 by 2;
// the dims not listed read their own index, with no coordinate math.

// CHECK-LABEL: func.func @axes
// CHECK:         linalg.generic
// CHECK:           %[[I0:.+]] = linalg.index 0 : index
// CHECK:           %[[I1:.+]] = linalg.index 1 : index
// CHECK:           linalg.index 2 : index
// CHECK:           arith.constant 3.000000e+00 : f32
// CHECK:           linalg.index 3 : index
// CHECK:           arith.constant 2.000000e+00 : f32
// CHECK:           tensor.extract %{{.+}}[%[[I0]], %[[I1]], %{{.+}}, %{{.+}}] : tensor<1x2x2x2xf32>
func.func @axes(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x6x4xf32> {
  %s = kiln.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %0 = kiln.resize(%x, none, %s, none) {axes = array<i64: 3, 2>} : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x6x4xf32>
  return %0 : tensor<1x2x6x4xf32>
}

// -----

// not_larger with constant sizes (3, 3) for a 4x8 plane: one scale for
// both axes, min(3/4, 3/8) = 0.375 (the output 2x3; its extents alone
// would give dim 2 a scale of 0.5).

// CHECK-LABEL: func.func @not_larger
// CHECK:         linalg.generic
// CHECK:           linalg.index 2 : index
// CHECK-NOT:       linalg.index 3
// CHECK:           arith.constant 3.750000e-01 : f32
// CHECK:           linalg.index 3 : index
// CHECK:           arith.constant 3.750000e-01 : f32
func.func @not_larger(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x2x3xf32> {
  %sz = kiln.constant dense<[3, 3]> : tensor<2xi64>
  %0 = kiln.resize(%x, none, none, %sz) {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger"} : (tensor<1x1x4x8xf32>, tensor<2xi64>) -> tensor<1x1x2x3xf32>
  return %0 : tensor<1x1x2x3xf32>
}

// -----

// not_smaller with sizes known at run time: the scale is the largest of
// sizes[k] / in over the axes, computed in the body.

// CHECK-LABEL: func.func @not_smaller_runtime
// CHECK-SAME:    %[[SZ:[^:]+]]: tensor<2xi64>
// CHECK:         linalg.generic
// CHECK:           tensor.extract %[[SZ]]
// CHECK:           arith.divf
// CHECK:           tensor.extract %[[SZ]]
// CHECK:           arith.divf
// CHECK:           arith.maximumf
func.func @not_smaller_runtime(%x: tensor<1x1x2x4xf32>, %sz: tensor<2xi64>) -> tensor<1x1x4x8xf32> {
  %0 = kiln.resize(%x, none, none, %sz) {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_smaller"} : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// half_pixel_symmetric: half_pixel's coordinate shifted by in / 2 * (1 -
// out / (in * scale)).

// CHECK-LABEL: func.func @half_pixel_symmetric
// CHECK:         linalg.generic
// CHECK:           arith.addf %{{.+}}, %{{.+}} : f32
// CHECK:           arith.divf
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:           arith.divf
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:           arith.addf
func.func @half_pixel_symmetric(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x6xf32> {
  %s = kiln.constant dense<[1.0, 1.0, 1.0, 1.6]> : tensor<4xf32>
  %0 = kiln.resize(%x, none, %s, none) {coordinate_transformation_mode = "half_pixel_symmetric", mode = "linear"} : (tensor<1x1x4x4xf32>, tensor<4xf32>) -> tensor<1x1x4x6xf32>
  return %0 : tensor<1x1x4x6xf32>
}
