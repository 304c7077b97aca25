// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// Attention with grouped queries (4 query heads on 2 K/V heads), a bool
// mask and the causal flag: scores are one contraction over the head size
// whose K map reads head h floordiv 2; the scale, the mask (-inf where
// false) and the causal limit (key j <= query i) are one elementwise pass;
// softmax over the keys; the product with V reads head h floordiv 2 too.

// CHECK-DAG:   #[[$Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG:   #[[$K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-DAG:   #[[$V:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
// CHECK-LABEL: func.func @gqa_causal
// CHECK:         %[[S:.+]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK:         %[[B:.+]] = linalg.generic
// CHECK-SAME:      ins(%[[S]], %{{.+}} : tensor<1x4x8x8xf32>, tensor<1x1x8x8xi1>)
// CHECK:           %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK:           %[[SCALED:.+]] = arith.mulf %{{.+}}, %cst{{.*}} : f32
// CHECK:           %[[MASKED:.+]] = arith.select %{{.+}}, %[[SCALED]], %[[NEGINF]] : f32
// CHECK:           %[[I:.+]] = linalg.index 2
// CHECK:           %[[J:.+]] = linalg.index 3
// CHECK:           %[[SEEN:.+]] = arith.cmpi sle, %[[J]]
// CHECK:           arith.select %[[SEEN]], %[[MASKED]], %[[NEGINF]] : f32
// CHECK:         math.exp
// CHECK:         arith.divf
// CHECK:         linalg.generic {indexing_maps = [#[[$Q]], #[[$V]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      outs(%{{.+}} : tensor<1x4x8x16xf32>)
func.func @gqa_causal(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x1x8x8xi1>) -> tensor<1x4x8x16xf32> {
  %0 = kiln.attention(%q, %k, %v, %m) {is_causal = 1 : i64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x8x8xi1>) -> tensor<1x4x8x16xf32>
  return %0 : tensor<1x4x8x16xf32>
}

// -----

// 3-D inputs ([batch, sequence, heads * size]) are split into heads
// (expand_shape, transpose) and the output merged back; f16 multiplies Q
// by K as f16 (a contraction that extends both, exact in f32, as tensor
// cores do), computes the softmax in f32, rounds the probabilities to f16
// for the product with V (accumulated in f32) and rounds the output once;
// kiln.zero_nan_rows (from kiln-fuse-layers) zeroes NaN probabilities.

// CHECK-LABEL: func.func @three_d_f16
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [2, 6, 4, 8] : tensor<2x6x32xf16> into tensor<2x6x4x8xf16>
// CHECK:         linalg.transpose
// CHECK:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x4x6x8xf16>, tensor<2x4x6x8xf16>) outs(%{{.+}} : tensor<2x4x6x6xf32>)
// CHECK-NEXT:    ^bb0(%{{.+}}: f16, %{{.+}}: f16, %{{.+}}: f32):
// CHECK-NEXT:      arith.extf %{{.+}} : f16 to f32
// CHECK-NEXT:      arith.extf %{{.+}} : f16 to f32
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:         arith.cmpf uno
// CHECK:         arith.truncf %{{.+}} : f32 to f16
// CHECK:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x4x6x6xf16>, tensor<2x4x6x8xf16>) outs(%{{.+}} : tensor<2x4x6x8xf32>)
// CHECK:         arith.truncf %{{.+}} : f32 to f16
// CHECK:         linalg.transpose
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<2x6x4x8xf16> into tensor<2x6x32xf16>
func.func @three_d_f16(%q: tensor<2x6x32xf16>, %k: tensor<2x6x32xf16>, %v: tensor<2x6x32xf16>) -> tensor<2x6x32xf16> {
  %0 = kiln.attention(%q, %k, %v) {q_num_heads = 4 : i64, kv_num_heads = 4 : i64, kiln.zero_nan_rows} : (tensor<2x6x32xf16>, tensor<2x6x32xf16>, tensor<2x6x32xf16>) -> tensor<2x6x32xf16>
  return %0 : tensor<2x6x32xf16>
}
