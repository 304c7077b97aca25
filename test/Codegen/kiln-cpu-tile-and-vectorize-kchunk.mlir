// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize="k-chunk-bytes=0" | FileCheck %s --check-prefix=OFF

// The automatic reduction chunks (k-chunk-bytes=-1, the default). A
// weight-left MatMul, y[512, 49] = W[512, 4608] x[4608, 49]: the vectorized
// panel is the activation read in place, its rows (196 bytes) wider than
// the 16-lane register tile, so each block's slice touches 4608 x 128
// bytes, past panel-bytes, for 16 row tiles: k is swept in 16 KiB chunks
// (256 k of 16 lanes) around the row tiles, first, middle and last.

// CHECK-LABEL: func.func @weight_left
// CHECK:         scf.forall
// CHECK:           %[[FIRST:.+]] = scf.for %{{.+}} = %c0 to %c64 step %c4
// CHECK:             scf.for %{{.+}} = %c0 to %c256 step %c1
// CHECK:           %[[MID:.+]] = scf.for %{{.+}} = %c256 to %c4352 step %c256 iter_args(%{{.+}} = %[[FIRST]])
// CHECK:             scf.for %{{.+}} = %c0 to %c64 step %c4
// CHECK:           scf.for %{{.+}} = %c0 to %c64 step %c4 iter_args(%{{.+}} = %[[MID]])
// OFF-LABEL: func.func @weight_left
// OFF-NOT:     step %c256
// OFF:         scf.for %{{.+}} = %c0 to %c4608 step %c1
// OFF-NOT:     step %c256
#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @weight_left(%w: tensor<512x4608xf32>, %x: tensor<4608x49xf32>) -> tensor<512x49xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<512x49xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<512x49xf32>) -> tensor<512x49xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "reduction", "parallel"]} ins(%w, %x : tensor<512x4608xf32>, tensor<4608x49xf32>) outs(%1 : tensor<512x49xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %3 = arith.mulf %in, %in_1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<512x49xf32>
  return %2 : tensor<512x49xf32>
}

// -----

// Negative: the same product with a shorter reduction (K = 1024, which
// forced chunks of 16 KiB would split): the block's slice (1024 x 128
// bytes) fits panel-bytes, one sweep.

// CHECK-LABEL: func.func @weight_left_short_k
// CHECK-NOT:     step %c256
// CHECK:         scf.for %{{.+}} = %c0 to %c1024 step %c1
// CHECK-NOT:     step %c256
#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @weight_left_short_k(%w: tensor<512x1024xf32>, %x: tensor<1024x49xf32>) -> tensor<512x49xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<512x49xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<512x49xf32>) -> tensor<512x49xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "reduction", "parallel"]} ins(%w, %x : tensor<512x1024xf32>, tensor<1024x49xf32>) outs(%1 : tensor<512x49xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %3 = arith.mulf %in, %in_1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<512x49xf32>
  return %2 : tensor<512x49xf32>
}

// -----

// Negative: too few row tiles (16 rows: 4 of 4 per block) to share a
// chunk; one sweep.

// CHECK-LABEL: func.func @weight_left_few_rows
// CHECK-NOT:     step %c256
// CHECK:         scf.for %{{.+}} = %c0 to %c4608 step %c1
#map = affine_map<(d0, d1, d2) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @weight_left_few_rows(%w: tensor<16x4608xf32>, %x: tensor<4608x49xf32>) -> tensor<16x49xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<16x49xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<16x49xf32>) -> tensor<16x49xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "reduction", "parallel"]} ins(%w, %x : tensor<16x4608xf32>, tensor<4608x49xf32>) outs(%1 : tensor<16x49xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %3 = arith.mulf %in, %in_1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<16x49xf32>
  return %2 : tensor<16x49xf32>
}

// -----

// Negative: a packed weight panel ([N / nr, K, nr], what kiln-pack-weights
// writes for a constant right-hand side) is read contiguously: one sweep
// even though its slice (4608 x 64 bytes) is past panel-bytes.

// CHECK-LABEL: func.func @packed
// CHECK-NOT:     step %c256
// CHECK:         scf.for %{{.+}} = %c0 to %c4608 step %c1
// CHECK-NOT:     step %c256
func.func @packed(%x: tensor<64x4608xf32>, %w: tensor<32x4608x16xf32>) -> tensor<64x32x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<64x32x16xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x32x16xf32>) -> tensor<64x32x16xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(m, j, n, k) -> (m, k)>, affine_map<(m, j, n, k) -> (j, k, n)>, affine_map<(m, j, n, k) -> (m, j, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<64x4608xf32>, tensor<32x4608x16xf32>) outs(%1 : tensor<64x32x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %3 = arith.mulf %in, %in_1 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<64x32x16xf32>
  return %2 : tensor<64x32x16xf32>
}
