// RUN: kiln-opt %s -split-input-file -kiln-pack-weights="vector-bits=128" --mlir-elide-resource-strings-if-larger=1000 | FileCheck %s

// A 3x2 @ 2x12 f32 matmul with a constant right-hand side, 4-lane vectors:
// n = 12 is not a multiple of two vectors (8) but of one, so nr = 4 and the
// weight becomes three contiguous 2x4 panels, packed[n/4][k][n%4]:
// [0 1 2 3 12 13 14 15], [4 5 6 7 16 17 18 19], [8 9 10 11 20 21 22 23].
// The matmul becomes a generic with n split (n/4 in its place, n%4 last)
// that writes a 3x3x4 view of the accumulator.

// CHECK-DAG:   #[[$A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
// CHECK-DAG:   #[[$B:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
// CHECK-DAG:   #[[$C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[X:.+]]: tensor<3x2xf32>, %[[ACC:.+]]: tensor<3x12xf32>)
// CHECK:         %[[P:.+]] = arith.constant dense_resource<[[BLOB:.+]]> : tensor<3x2x4xf32>
// CHECK:         %[[E:.+]] = tensor.expand_shape %[[ACC]] {{\[}}[0], [1, 2]] output_shape [3, 3, 4]
// CHECK:         %[[G:.+]] = linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK-SAME:      ins(%[[X]], %[[P]] : tensor<3x2xf32>, tensor<3x2x4xf32>) outs(%[[E]] : tensor<3x3x4xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2]] : tensor<3x3x4xf32> into tensor<3x12xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     linalg.matmul
// CHECK:         [[BLOB]]: "0x{{[0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F]}}000000000000803F00000040000040400000404100005041000060410000704100008040
// CHECK-SAME:      0000A0400000C0400000E04000008041000088410000904100009841000000410000104100002041000030410000A0410000A8410000B0410000B841"
func.func @matmul(%x: tensor<3x2xf32>, %acc: tensor<3x12xf32>) -> tensor<3x12xf32> {
  %w = arith.constant dense<[[0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11.], [12., 13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23.]]> : tensor<2x12xf32>
  %0 = linalg.matmul ins(%x, %w : tensor<3x2xf32>, tensor<2x12xf32>) outs(%acc : tensor<3x12xf32>) -> tensor<3x12xf32>
  return %0 : tensor<3x12xf32>
}

// -----

// Gemm's transB: the weight is stored [n, k] and transposed; the transpose
// folds into the packing, which gives the same panels as above.

// CHECK-LABEL: func.func @transposed
// CHECK:         arith.constant dense_resource<[[BLOB:.+]]> : tensor<3x2x4xf32>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic
// CHECK:         [[BLOB]]: "0x{{[0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F][0-9A-F]}}000000000000803F00000040000040400000404100005041000060410000704100008040
// CHECK-SAME:      0000A0400000C0400000E04000008041000088410000904100009841000000410000104100002041000030410000A0410000A8410000B0410000B841"
func.func @transposed(%x: tensor<3x2xf32>, %acc: tensor<3x12xf32>) -> tensor<3x12xf32> {
  %w = arith.constant dense<[[0., 12.], [1., 13.], [2., 14.], [3., 15.], [4., 16.], [5., 17.], [6., 18.], [7., 19.], [8., 20.], [9., 21.], [10., 22.], [11., 23.]]> : tensor<12x2xf32>
  %e = tensor.empty() : tensor<2x12xf32>
  %t = linalg.transpose ins(%w : tensor<12x2xf32>) outs(%e : tensor<2x12xf32>) permutation = [1, 0]
  %0 = linalg.matmul ins(%x, %t : tensor<3x2xf32>, tensor<2x12xf32>) outs(%acc : tensor<3x12xf32>) -> tensor<3x12xf32>
  return %0 : tensor<3x12xf32>
}

// -----

// A batched contraction (batch dim b on both sides): the panels keep b
// outermost, packed[b][n/8][k][n%8], with 16 columns in two panels of two
// 4-lane vectors.

// CHECK-DAG:   #[[$B:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2, d4)>
// CHECK-DAG:   #[[$C:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-LABEL: func.func @batched
// CHECK:         arith.constant dense_resource<{{.+}}> : tensor<2x2x3x8xf32>
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [2, 5, 2, 8]
// CHECK:         linalg.generic {indexing_maps = [#{{.+}}, #[[$B]], #[[$C]]], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]}
#a = affine_map<(b, m, k, n) -> (b, m, k)>
#b = affine_map<(b, m, k, n) -> (b, k, n)>
#c = affine_map<(b, m, k, n) -> (b, m, n)>
func.func @batched(%x: tensor<2x5x3xf32>, %acc: tensor<2x5x16xf32>) -> tensor<2x5x16xf32> {
  %w = arith.constant dense<[[[0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12., 13., 14., 15.], [0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12., 13., 14., 15.], [0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12., 13., 14., 15.]], [[0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12., 13., 14., 15.], [0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12., 13., 14., 15.], [0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12., 13., 14., 16.]]]> : tensor<2x3x16xf32>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<2x5x3xf32>, tensor<2x3x16xf32>) outs(%acc : tensor<2x5x16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x5x16xf32>
  return %0 : tensor<2x5x16xf32>
}

// -----

// Left alone: a right-hand side that is not a constant, a splat constant
// (every panel would be the same), n no wider than two vectors (8), and n
// that no vector width divides (10).

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     dense_resource
// CHECK-NOT:     linalg.generic
// CHECK-COUNT-4: linalg.matmul
func.func @left_alone(%x: tensor<3x2xf32>, %w: tensor<2x12xf32>, %acc: tensor<3x12xf32>,
                      %acc8: tensor<3x8xf32>, %acc10: tensor<3x10xf32>)
    -> (tensor<3x12xf32>, tensor<3x12xf32>, tensor<3x8xf32>, tensor<3x10xf32>) {
  %0 = linalg.matmul ins(%x, %w : tensor<3x2xf32>, tensor<2x12xf32>) outs(%acc : tensor<3x12xf32>) -> tensor<3x12xf32>
  %splat = arith.constant dense<1.0> : tensor<2x12xf32>
  %1 = linalg.matmul ins(%x, %splat : tensor<3x2xf32>, tensor<2x12xf32>) outs(%acc : tensor<3x12xf32>) -> tensor<3x12xf32>
  %w8 = arith.constant dense<[[0., 1., 2., 3., 4., 5., 6., 7.], [8., 9., 10., 11., 12., 13., 14., 15.]]> : tensor<2x8xf32>
  %2 = linalg.matmul ins(%x, %w8 : tensor<3x2xf32>, tensor<2x8xf32>) outs(%acc8 : tensor<3x8xf32>) -> tensor<3x8xf32>
  %w10 = arith.constant dense<[[0., 1., 2., 3., 4., 5., 6., 7., 8., 9.], [10., 11., 12., 13., 14., 15., 16., 17., 18., 19.]]> : tensor<2x10xf32>
  %3 = linalg.matmul ins(%x, %w10 : tensor<3x2xf32>, tensor<2x10xf32>) outs(%acc10 : tensor<3x10xf32>) -> tensor<3x10xf32>
  return %0, %1, %2, %3 : tensor<3x12xf32>, tensor<3x12xf32>, tensor<3x8xf32>, tensor<3x10xf32>
}

// -----

// bf16 weights of a product summed in f32 (--precision=bf16): packed the
// same way, panels as wide as the f32 accumulators' vectors (4 lanes
// here), two bytes an element: [0 1 2 3 12 13 14 15] ... as bf16.

// CHECK-LABEL: func.func @bf16_weights
// CHECK:         %[[P:.+]] = arith.constant dense_resource<[[BLOB:.+]]> : tensor<3x2x4xbf16>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.+}}, %[[P]] : tensor<3x2xbf16>, tensor<3x2x4xbf16>) outs(%{{.+}} : tensor<3x3x4xf32>)
// CHECK:           arith.extf
// CHECK:         [[BLOB]]: "0x{{[0-9A-F]+}}0000803F0040404040415041604170418040A040C040E04080418841904198410041104120413041A041A841B041B841"
func.func @bf16_weights(%x: tensor<3x2xbf16>, %acc: tensor<3x12xf32>) -> tensor<3x12xf32> {
  %w = arith.constant dense<[[0., 1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11.], [12., 13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23.]]> : tensor<2x12xbf16>
  %0 = linalg.matmul ins(%x, %w : tensor<3x2xbf16>, tensor<2x12xbf16>) outs(%acc : tensor<3x12xf32>) -> tensor<3x12xf32>
  return %0 : tensor<3x12xf32>
}
