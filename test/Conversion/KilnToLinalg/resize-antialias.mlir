// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// antialias=1, linear, dim 2 halved: the triangle filter stretched to 4
// taps from ceil(c) - 2 (the tap left of the source coordinate c, less
// one), the weights normalized by their sum. One generic: the other dims
// read their own index.

// CHECK-LABEL: func.func @linear_half
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x1x8x6xf32>
// CHECK:         linalg.generic
// CHECK:           math.ceil
// CHECK-COUNT-4:   tensor.extract %[[X]]
// CHECK-NOT:       tensor.extract %[[X]]
// CHECK:           arith.divf
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.generic
func.func @linear_half(%x: tensor<1x1x8x6xf32>) -> tensor<1x1x4x6xf32> {
  %s = kiln.constant dense<[1.0, 1.0, 0.5, 1.0]> : tensor<4xf32>
  %0 = kiln.resize(%x, none, %s, none) {antialias = 1 : i64, mode = "linear"} : (tensor<1x1x8x6xf32>, tensor<4xf32>) -> tensor<1x1x4x6xf32>
  return %0 : tensor<1x1x4x6xf32>
}

// -----

// Cubic on two axes (sizes 4 and 3 of 8 and 8: scales 0.5 and 0.375):
// one generic per axis, 8 and then 12 taps; the stage between them is
// f32, the last one f16.

// CHECK-LABEL: func.func @cubic_two_axes
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x1x8x8xf16>
// CHECK:         %[[A:.+]] = linalg.generic
// CHECK-COUNT-8:   tensor.extract %[[X]]{{.*}} : tensor<1x1x8x8xf16>
// CHECK-NOT:       tensor.extract %[[X]]
// CHECK:           linalg.yield %{{.+}} : f32
// CHECK:         } -> tensor<1x1x4x8xf32>
// CHECK:         linalg.generic
// CHECK-COUNT-12:  tensor.extract %[[A]]{{.*}} : tensor<1x1x4x8xf32>
// CHECK-NOT:       tensor.extract %[[A]]
// CHECK:           arith.truncf %{{.+}} : f32 to f16
// CHECK:         } -> tensor<1x1x4x3xf16>
func.func @cubic_two_axes(%x: tensor<1x1x8x8xf16>) -> tensor<1x1x4x3xf16> {
  %sz = kiln.constant dense<[4, 3]> : tensor<2xi64>
  %0 = kiln.resize(%x, none, none, %sz) {antialias = 1 : i64, axes = array<i64: 2, 3>, mode = "cubic"} : (tensor<1x1x8x8xf16>, tensor<2xi64>) -> tensor<1x1x4x3xf16>
  return %0 : tensor<1x1x4x3xf16>
}

// -----

// Upscaling: the filter keeps its width (2 linear taps).

// CHECK-LABEL: func.func @linear_up
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x1x4x4xf32>
// CHECK:         linalg.generic
// CHECK-COUNT-2:   tensor.extract %[[X]]
// CHECK-NOT:       tensor.extract %[[X]]
// CHECK:           linalg.yield
func.func @linear_up(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x8xf32> {
  %s = kiln.constant dense<[1.0, 1.0, 1.0, 2.0]> : tensor<4xf32>
  %0 = kiln.resize(%x, none, %s, none) {antialias = 1 : i64, mode = "linear"} : (tensor<1x1x4x4xf32>, tensor<4xf32>) -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// antialias does not change nearest: one generic, one read.

// CHECK-LABEL: func.func @nearest
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x1x8x8xf32>
// CHECK:         linalg.generic
// CHECK-COUNT-1:   tensor.extract %[[X]]
// CHECK-NOT:       tensor.extract %[[X]]
// CHECK:           linalg.yield
func.func @nearest(%x: tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32> {
  %s = kiln.constant dense<[1.0, 1.0, 0.5, 0.5]> : tensor<4xf32>
  %0 = kiln.resize(%x, none, %s, none) {antialias = 1 : i64} : (tensor<1x1x8x8xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Scales read at run time: the filter's scale is min(scale, 1) from the
// body; the window is sized for the smallest scale the output's extent
// allows (4 / 8 = 0.5 on dim 2: 4 taps). Dims 0, 1 and 3, listed with
// in = out, keep the plain 2 taps.

// CHECK-LABEL: func.func @runtime_scales
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x1x8x6xf32>, %[[S:[^:]+]]: tensor<4xf32>
// CHECK:         %[[A:.+]] = linalg.generic
// CHECK-COUNT-2:   tensor.extract %[[X]]
// CHECK-NOT:       tensor.extract %[[X]]
// CHECK:         %[[B:.+]] = linalg.generic
// CHECK-COUNT-2:   tensor.extract %[[A]]
// CHECK-NOT:       tensor.extract %[[A]]
// CHECK:         %[[C:.+]] = linalg.generic
// CHECK:           tensor.extract %[[S]]
// CHECK:           arith.minimumf
// CHECK-COUNT-4:   tensor.extract %[[B]]
// CHECK-NOT:       tensor.extract %[[B]]
// CHECK:         linalg.generic
// CHECK-COUNT-2:   tensor.extract %[[C]]
// CHECK-NOT:       tensor.extract %[[C]]
func.func @runtime_scales(%x: tensor<1x1x8x6xf32>, %s: tensor<4xf32>) -> tensor<1x1x4x6xf32> {
  %0 = kiln.resize(%x, none, %s, none) {antialias = 1 : i64, mode = "linear"} : (tensor<1x1x8x6xf32>, tensor<4xf32>) -> tensor<1x1x4x6xf32>
  return %0 : tensor<1x1x4x6xf32>
}
