// RUN: kiln-opt %s -convert-kiln-to-linalg=conv1d-as-2d=false | FileCheck %s

// With conv1d-as-2d=false (the GPU pipeline's setting) a 1-D convolution
// stays one contraction whose loops run (n, f, c, k, o), the output row
// innermost, its input map carrying the stride and dilation; a grouped one
// reads channel (f floordiv (F / group)) * (C / group) + c.

// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4 * 2 + d3 * 2)>
// CHECK-DAG: #[[$W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>
// CHECK-DAG: #[[$GIN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, (d1 floordiv 3) * 2 + d2, d4 + d3 * 2)>
// CHECK-LABEL: func.func @conv1d
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$W]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      outs(%{{.+}} : tensor<1x4x4xf32>)
// CHECK-LABEL: func.func @grouped1d
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         linalg.generic {indexing_maps = [#[[$GIN]], #[[$W]], #{{.+}}], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-SAME:      ins(%{{.+}}, %{{.+}} : tensor<1x4x8xf32>, tensor<6x2x3xf32>)
func.func @conv1d(%x: tensor<1x3x9xf32>, %w: tensor<4x3x2xf32>) -> tensor<1x4x4xf32> {
  %0 = kiln.conv(%x, %w) {strides = array<i64: 2>, dilations = array<i64: 2>} : (tensor<1x3x9xf32>, tensor<4x3x2xf32>) -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}
func.func @grouped1d(%x: tensor<1x4x8xf32>, %w: tensor<6x2x3xf32>) -> tensor<1x6x4xf32> {
  %0 = kiln.conv(%x, %w) {group = 2 : i64, dilations = array<i64: 2>} : (tensor<1x4x8xf32>, tensor<6x2x3xf32>) -> tensor<1x6x4xf32>
  return %0 : tensor<1x6x4xf32>
}
