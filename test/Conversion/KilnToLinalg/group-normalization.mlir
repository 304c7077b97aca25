// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// GroupNormalization: X [2, 6, 5, 4] seen as [2, 3, 2, 5, 4] (3 groups of
// 2 channels), normalized over each (n, g) like InstanceNormalization,
// the per-channel scale and bias seen as [3, 2] and read at (g, c), the
// result collapsed back.

// CHECK-LABEL: func.func @per_channel
// CHECK-SAME:    (%[[X:.+]]: tensor<2x6x5x4xf32>, %[[S:.+]]: tensor<6xf32>, %[[B:.+]]: tensor<6xf32>)
// CHECK:         %[[XG:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 3, 2, 5, 4]
// CHECK:         linalg.generic {{.+}} ins(%[[XG]] : tensor<2x3x2x5x4xf32>) outs(%{{.+}} : tensor<2x3xf32>)
// CHECK:         %[[SG:.+]] = tensor.expand_shape %[[S]] {{\[}}[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK:         %[[BG:.+]] = tensor.expand_shape %[[B]] {{\[}}[0, 1]] output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK:         %[[Y:.+]] = linalg.generic {indexing_maps = [#map, #map1, #[[GC:map[0-9]*]], #[[GC]], #map], {{.+}} ins(%{{.+}}, %{{.+}}, %[[SG]], %[[BG]] : tensor<2x3x2x5x4xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>)
// CHECK:         tensor.collapse_shape %[[Y]] {{\[}}[0], [1, 2], [3], [4]] : tensor<2x3x2x5x4xf32> into tensor<2x6x5x4xf32>
func.func @per_channel(%x: tensor<2x6x5x4xf32>, %s: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<2x6x5x4xf32> {
  %0 = kiln.group_normalization(%x, %s, %b) {num_groups = 3 : i64} : (tensor<2x6x5x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5x4xf32>
  return %0 : tensor<2x6x5x4xf32>
}

// -----

// Opset 18's scale and bias per group: read at g (the only loop of 4).

// CHECK-LABEL: func.func @per_group
// CHECK-SAME:    (%[[X:.+]]: tensor<2x8x10xf32>, %[[S:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK-NOT:     tensor.expand_shape %[[S]]
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %[[S]], %[[B]] : tensor<2x4x2x10xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>)
func.func @per_group(%x: tensor<2x8x10xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x8x10xf32> {
  %0 = kiln.group_normalization(%x, %s, %b) {num_groups = 4 : i64} : (tensor<2x8x10xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x8x10xf32>
  return %0 : tensor<2x8x10xf32>
}
