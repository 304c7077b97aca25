// RUN: kiln-opt %s -split-input-file -kiln-gpu-sparse-weights | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-gpu-sparse-weights=convolutions=true | FileCheck %s --check-prefix=CONV

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#o = affine_map<(m, k, n) -> (m, n)>

// A 2:4-marked f16 product whose constant weight is [N = 16, K = 32]
// behind a transpose (a Gemm with transB): rows 0-7 keep positions 0 and 2
// of each group of four in k 0-15 and 0 and 1 in k 16-31, rows 8-15
// positions 1 and 3, then 2 and 3; the first kept value is 1, the second
// 2. The kept values are [16][16] (1, 2, 1, 2, ...: 0x3C00 0x4000); the
// metadata one block of 16 rows and one step of 32 k, 16 words: word
// (g, h) for k 0-15 (h = 0) is 0xDDDD8888 (rows g: 0b1000 = positions 0
// and 2 per group; rows g + 8: 0b1101 = 1 and 3), for k 16-31 (h = 1)
// 0xEEEE4444. The weight becomes a global naming both, read through
// bufferization.to_tensor; the mark goes and the record says sparse, 576
// of 1024 bytes.

// CHECK:       module attributes {kiln.sparse_kernels = [{dense_bytes = 1024 : i64, kernel = "sparse", name = "fc", sparse_bytes = 576 : i64}]}
// CHECK-DAG:   memref.global "private" constant @kiln_sparse_weight : memref<16x32xf16> = dense<{{.+}}> {alignment = 64 : i64, kiln.sparse_k = 32 : i64, kiln.sparse_k_dim = 1 : i64, kiln.sparse_meta = @kiln_sparse_meta, kiln.sparse_n = 16 : i64, kiln.sparse_values = @kiln_sparse_values}
// CHECK-DAG:   memref.global "private" constant @kiln_sparse_meta : memref<16xi32> = dense<[-572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844]>
// CHECK-DAG:   memref.global "private" constant @kiln_sparse_values : memref<256xf16> = dense<"0x{{(003C0040)+}}">
// CHECK-LABEL: func.func @nk
// CHECK-NOT:     arith.constant
// CHECK:         %[[G:.+]] = memref.get_global @kiln_sparse_weight : memref<16x32xf16>
// CHECK:         %[[W:.+]] = bufferization.to_tensor %[[G]] restrict : memref<16x32xf16> to tensor<16x32xf16>
// CHECK:         linalg.transpose ins(%[[W]] : tensor<16x32xf16>)
// CHECK:         linalg.generic
// CHECK-NOT:     kiln.sparsity
// CHECK-SAME:    {{$}}
func.func @nk(%x: tensor<3x32xf16>, %init: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %w = arith.constant dense<[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]> : tensor<16x32xf16>
  %e = tensor.empty() : tensor<32x16xf16>
  %t = linalg.transpose ins(%w : tensor<16x32xf16>) outs(%e : tensor<32x16xf16>) permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %t : tensor<3x32xf16>, tensor<32x16xf16>) outs(%init : tensor<3x16xf32>) attrs = {kiln.sparsity = "2:4"} {
    ^bb0(%in: f16, %in_w: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_w : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<3x16xf32> loc("fc")
  return %r : tensor<3x16xf32>
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#o = affine_map<(m, k, n) -> (m, n)>

// The same weight stored [K, N] (a MatMul's): k is the global's dim 0, and
// the compressed form is the same.

// CHECK-LABEL: module attributes {kiln.sparse_kernels = [{dense_bytes = 1024 : i64, kernel = "sparse", name = "mm", sparse_bytes = 576 : i64}]}
// CHECK-DAG:   memref.global "private" constant @kiln_sparse_weight : memref<32x16xf16> = dense<{{.+}}> {alignment = 64 : i64, kiln.sparse_k = 32 : i64, kiln.sparse_k_dim = 0 : i64,
// CHECK-DAG:   memref.global "private" constant @kiln_sparse_meta : memref<16xi32> = dense<[-572684152, -286374844,
// CHECK-DAG:   memref.global "private" constant @kiln_sparse_values : memref<256xf16> = dense<"0x{{(003C0040)+}}">
// CHECK:         %[[G:.+]] = memref.get_global @kiln_sparse_weight : memref<32x16xf16>
// CHECK:         %[[W:.+]] = bufferization.to_tensor %[[G]] restrict
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %[[W]] : tensor<3x32xf16>, tensor<32x16xf16>)
func.func @kn(%x: tensor<3x32xf16>, %init: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %w = arith.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]]> : tensor<32x16xf16>
  %r = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<3x32xf16>, tensor<32x16xf16>) outs(%init : tensor<3x16xf32>) attrs = {kiln.sparsity = "2:4"} {
    ^bb0(%in: f16, %in_w: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_w : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<3x16xf32> loc("mm")
  return %r : tensor<3x16xf32>
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#o = affine_map<(m, k, n) -> (m, n)>

// Stay dense, the mark removed, each with its reason: a group of four
// with three non-zeros (after rounding to f16), a weight that is an
// argument, a float32 product.

// CHECK-LABEL: module attributes {kiln.sparse_kernels = [{dense_bytes = 1024 : i64, kernel = "dense", name = "three", reason = "not 2:4 along K in f16: 1 groups of four have more than two non-zeros"}, {kernel = "dense", name = "arg", reason = "the weight is not a constant"}, {kernel = "dense", name = "f32", reason = "a float32 product (--keep-precision?): the sparse tensor-core kernels are f16/bf16"}]}
// CHECK-NOT:   memref.global
// CHECK-NOT:   kiln.sparsity
func.func @dense(%x: tensor<3x32xf16>, %init: tensor<3x16xf32>, %wa: tensor<32x16xf16>, %xf: tensor<3x32xf32>, %wf: tensor<32x16xf32>) -> (tensor<3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>) {
  %w = arith.constant dense<[[1.0, 3.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]> : tensor<16x32xf16>
  %e = tensor.empty() : tensor<32x16xf16>
  %t = linalg.transpose ins(%w : tensor<16x32xf16>) outs(%e : tensor<32x16xf16>) permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %t : tensor<3x32xf16>, tensor<32x16xf16>) outs(%init : tensor<3x16xf32>) attrs = {kiln.sparsity = "2:4"} {
    ^bb0(%in: f16, %in_w: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_w : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<3x16xf32> loc("three")
  %r2 = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %wa : tensor<3x32xf16>, tensor<32x16xf16>) outs(%init : tensor<3x16xf32>) attrs = {kiln.sparsity = "2:4"} {
    ^bb0(%in: f16, %in_w: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_w : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<3x16xf32> loc("arg")
  %wc = arith.constant dense<1.0> : tensor<32x16xf32>
  %r3 = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xf, %wc : tensor<3x32xf32>, tensor<32x16xf32>) outs(%init : tensor<3x16xf32>) attrs = {kiln.sparsity = "2:4"} {
    ^bb0(%in: f32, %in_w: f32, %out: f32):
      %2 = arith.mulf %in, %in_w : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<3x16xf32> loc("f32")
  return %r, %r2, %r3 : tensor<3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#o = affine_map<(m, k, n) -> (m, n)>

// One transposed constant read by two marked products: compressed once
// (one weight global), each product reading it through a transpose of its
// own, so that each transpose folds into its product. A splat zero weight
// is 2:4 too.

// CHECK-LABEL: module attributes {kiln.sparse_kernels = [{dense_bytes = 1024 : i64, kernel = "sparse", name = "p1", sparse_bytes = 576 : i64}, {dense_bytes = 1024 : i64, kernel = "sparse", name = "p2", sparse_bytes = 576 : i64}, {dense_bytes = 1024 : i64, kernel = "sparse", name = "zero", sparse_bytes = 576 : i64}]}
// CHECK-COUNT-2: memref.global "private" constant @kiln_sparse_weight
// CHECK-NOT:     memref.global "private" constant @kiln_sparse_weight
// CHECK-LABEL: func.func @shared
// CHECK:         %[[G1:.+]] = memref.get_global @[[W:kiln_sparse_weight[_0-9]*]] : memref<16x32xf16>
// CHECK:         %[[T1:.+]] = bufferization.to_tensor %[[G1]]
// CHECK:         linalg.transpose ins(%[[T1]] : tensor<16x32xf16>)
// CHECK:         %[[G2:.+]] = memref.get_global @[[W]] : memref<16x32xf16>
// CHECK:         %[[T2:.+]] = bufferization.to_tensor %[[G2]]
// CHECK:         linalg.transpose ins(%[[T2]] : tensor<16x32xf16>)
func.func @shared(%x: tensor<3x32xf16>, %init: tensor<3x16xf32>) -> (tensor<3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>) {
  %w = arith.constant dense<[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0], [0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]> : tensor<16x32xf16>
  %e = tensor.empty() : tensor<32x16xf16>
  %t = linalg.transpose ins(%w : tensor<16x32xf16>) outs(%e : tensor<32x16xf16>) permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %t : tensor<3x32xf16>, tensor<32x16xf16>) outs(%init : tensor<3x16xf32>) attrs = {kiln.sparsity = "2:4"} {
    ^bb0(%in: f16, %in_w: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_w : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<3x16xf32> loc("p1")
  %r2 = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %t : tensor<3x32xf16>, tensor<32x16xf16>) outs(%init : tensor<3x16xf32>) attrs = {kiln.sparsity = "2:4"} {
    ^bb0(%in: f16, %in_w: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_w : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<3x16xf32> loc("p2")
  %z = arith.constant dense<0.0> : tensor<32x16xf16>
  %r3 = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %z : tensor<3x32xf16>, tensor<32x16xf16>) outs(%init : tensor<3x16xf32>) attrs = {kiln.sparsity = "2:4"} {
    ^bb0(%in: f16, %in_w: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_w : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<3x16xf32> loc("zero")
  return %r, %r2, %r3 : tensor<3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>
}

// -----

// Convolutions (the second run, convolutions=true, after
// kiln-gpu-channels-last): a channels-last one whose constant weight is
// [F = 16, KH = 1, KW = 2, C = 16] is the product's [N = 16, K = 32] with
// K = (kh, kw, c): here the rows of @nk's weight, so the same kept values
// and metadata. A marked NCHW convolution stays dense: its kernel walks K
// as (c, kh, kw). The first run leaves both marked, for the second.

// CONV:       module attributes {kiln.sparse_kernels = [{dense_bytes = 1024 : i64, kernel = "sparse", name = "conv", sparse_bytes = 576 : i64}, {kernel = "dense", name = "nchw", reason = "an NCHW convolution (channels not in whole 16-byte runs, or --gpu-channels-last=false): its kernel walks K as (c, kh, kw), where the 2:4 groups of input channels are not consecutive"}]}
// CONV-DAG:   memref.global "private" constant @kiln_sparse_weight : memref<16x1x2x16xf16> = dense<{{.+}}> {alignment = 64 : i64, kiln.sparse_k = 32 : i64, kiln.sparse_k_dim = 1 : i64, kiln.sparse_meta = @kiln_sparse_meta, kiln.sparse_n = 16 : i64, kiln.sparse_values = @kiln_sparse_values}
// CONV-DAG:   memref.global "private" constant @kiln_sparse_meta : memref<16xi32> = dense<[-572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844, -572684152, -286374844]>
// CONV-DAG:   memref.global "private" constant @kiln_sparse_values : memref<256xf16> = dense<"0x{{(003C0040)+}}">
// CONV-LABEL: func.func @convolutions
// CONV:         %[[G:.+]] = memref.get_global @kiln_sparse_weight : memref<16x1x2x16xf16>
// CONV:         %[[W:.+]] = bufferization.to_tensor %[[G]] restrict : memref<16x1x2x16xf16> to tensor<16x1x2x16xf16>
// CONV:         linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.+}}, %[[W]] : tensor<1x4x5x16xf16>, tensor<16x1x2x16xf16>)
// CONV-NOT:     kiln.sparsity
// CONV:         linalg.conv_2d_nchw_fchw
// CONV-NOT:     kiln.sparsity
// CHECK-LABEL: func.func @convolutions
// CHECK:         linalg.conv_2d_nhwc_fhwc {{.+}}kiln.sparsity = "2:4"
// CHECK:         linalg.conv_2d_nchw_fchw {{.+}}kiln.sparsity = "2:4"
func.func @convolutions(%x: tensor<1x4x5x16xf16>, %init: tensor<1x4x4x16xf32>, %xn: tensor<1x16x4x5xf16>, %initn: tensor<1x16x4x4xf32>) -> (tensor<1x4x4x16xf32>, tensor<1x16x4x4xf32>) {
  %w = arith.constant dense<[[[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0], [1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]]], [[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0], [1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]]], [[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0], [1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]]], [[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0], [1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]]], [[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0], [1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]]], [[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0], [1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]]], [[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0], [1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]]], [[[1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0], [1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0]]], [[[0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]], [[[0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]], [[[0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]], [[[0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]], [[[0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]], [[[0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]], [[[0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]], [[[0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 2.0]]]]> : tensor<16x1x2x16xf16>
  %c = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, kiln.sparsity = "2:4"} ins(%x, %w : tensor<1x4x5x16xf16>, tensor<16x1x2x16xf16>) outs(%init : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32> loc("conv")
  %wn = arith.constant dense<0.0> : tensor<16x16x1x2xf16>
  %n = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, kiln.sparsity = "2:4"} ins(%xn, %wn : tensor<1x16x4x5xf16>, tensor<16x16x1x2xf16>) outs(%initn : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> loc("nchw")
  return %c, %n : tensor<1x4x4x16xf32>, tensor<1x16x4x4xf32>
}
