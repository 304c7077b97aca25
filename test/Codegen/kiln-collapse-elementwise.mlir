// RUN: kiln-opt %s -split-input-file -kiln-collapse-elementwise | FileCheck %s

// Dequantize-add-Relu-quantize over a 14x14 plane, with a per-channel
// scale and a scalar zero point: the plane's two dims (contiguous in every
// map; the per-channel and scalar maps do not read them) become one loop
// of 196.

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
#sc = affine_map<(n, c, h, w) -> ()>

// CHECK-DAG:   #[[$ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$CH:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG:   #[[$SC:.+]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @plane
// CHECK:         %[[A:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x8x14x14xf32> into tensor<1x8x196xf32>
// CHECK:         %[[G:.+]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$CH]], #[[$SC]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[A]], %{{.+}}, %{{.+}} : tensor<1x8x196xf32>, tensor<8xf32>, tensor<i8>)
// CHECK:         tensor.expand_shape %[[G]] {{\[}}[0], [1], [2, 3]] output_shape [1, 8, 14, 14] : tensor<1x8x196xi8> into tensor<1x8x14x14xi8>
func.func @plane(%x: tensor<1x8x14x14xf32>, %s: tensor<8xf32>, %z: tensor<i8>) -> tensor<1x8x14x14xi8> {
  %e = tensor.empty() : tensor<1x8x14x14xi8>
  %0 = linalg.generic {indexing_maps = [#id, #ch, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %s, %z : tensor<1x8x14x14xf32>, tensor<8xf32>, tensor<i8>) outs(%e : tensor<1x8x14x14xi8>) {
  ^bb0(%a: f32, %b: f32, %c: i8, %o: i8):
    %m = arith.mulf %a, %b : f32
    %q = arith.fptosi %m : f32 to i8
    %r = arith.addi %q, %c : i8
    linalg.yield %r : i8
  } -> tensor<1x8x14x14xi8>
  return %0 : tensor<1x8x14x14xi8>
}

// -----

// Left alone: an innermost loop of 56 (long enough to vectorize), a
// broadcast along a plane dim (not contiguous: its map reads h only), a
// reduction.

#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#row = affine_map<(n, c, h, w) -> (h)>
#red = affine_map<(n, c, h, w) -> (n, c, h)>

// CHECK-LABEL: func.func @long_rows
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {{.*}} ins(%{{.+}} : tensor<1x8x56x56xf32>)
func.func @long_rows(%x: tensor<1x8x56x56xf32>) -> tensor<1x8x56x56xf32> {
  %e = tensor.empty() : tensor<1x8x56x56xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x8x56x56xf32>) outs(%e : tensor<1x8x56x56xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<1x8x56x56xf32>
  return %0 : tensor<1x8x56x56xf32>
}

// CHECK-LABEL: func.func @row_broadcast
// CHECK-NOT:     tensor.collapse_shape
func.func @row_broadcast(%x: tensor<1x8x14x14xf32>, %r: tensor<14xf32>) -> tensor<1x8x14x14xf32> {
  %e = tensor.empty() : tensor<1x8x14x14xf32>
  %0 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %r : tensor<1x8x14x14xf32>, tensor<14xf32>) outs(%e : tensor<1x8x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x8x14x14xf32>
  return %0 : tensor<1x8x14x14xf32>
}

// CHECK-LABEL: func.func @reduction
// CHECK-NOT:     tensor.collapse_shape
func.func @reduction(%x: tensor<1x8x14x14xf32>, %init: tensor<1x8x14xf32>) -> tensor<1x8x14xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x8x14x14xf32>) outs(%init : tensor<1x8x14xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<1x8x14xf32>
  return %0 : tensor<1x8x14xf32>
}
