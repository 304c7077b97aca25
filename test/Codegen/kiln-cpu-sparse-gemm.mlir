// RUN: kiln-opt %s -split-input-file -kiln-cpu-sparse-gemm=min-weight-bytes=0 | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-sparse-gemm="min-weight-bytes=0 vector-bits=256" | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s -split-input-file -kiln-cpu-sparse-gemm="min-weight-bytes=0 vector-bits=128" | FileCheck %s --check-prefix=SSE

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#o = affine_map<(m, k, n) -> (m, n)>

// A 2:4-marked product of 3 rows with a constant [16, 16] weight (two
// non-zeros per group of four along k in each column) keeps the weight
// compressed: 8 values and one 16-bit mask per column and chunk of 16 k
// (16 x 8 f32, 16 i16), in blocks of 4 columns (from three rows on). Each
// chunk is expanded with vector.expandload, multiplied into one 16-lane
// accumulator per row and column, and summed across lanes at the end,
// added to what the output held (the init). The record names the node
// and the bytes, dense and compressed.

// CHECK:       module attributes {kiln.sparse_kernels = [{dense_bytes = 1024 : i64, kernel = "sparse", name = "fc", sparse_bytes = 544 : i64}]}
// CHECK-DAG:   memref.global "private" constant @kiln_sparse_values : memref<128xf32> = dense_resource<kiln_sparse_values> {alignment = 64 : i64}
// CHECK-DAG:   memref.global "private" constant @kiln_sparse_masks : memref<16xi16> = dense_resource<kiln_sparse_masks> {alignment = 64 : i64}
// CHECK-LABEL: func.func @three_rows
// CHECK-SAME:    (%[[X:.+]]: tensor<3x16xf32>, %[[INIT:.+]]: tensor<3x16xf32>)
// CHECK-DAG:     %[[VALS:.+]] = memref.get_global @kiln_sparse_values : memref<128xf32>
// CHECK-DAG:     %[[MASKS:.+]] = memref.get_global @kiln_sparse_masks : memref<16xi16>
// CHECK:         scf.forall (%[[BLK:.+]]) in (4) shared_outs(%[[O:.+]] = %[[INIT]]) -> (tensor<3x16xf32>)
// CHECK:           %[[SLICE:.+]] = tensor.extract_slice %[[O]][0, %{{.+}}] [3, 4] [1, 1]
// CHECK:           scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[D:.+]] = %[[SLICE]]) -> (tensor<3x4xf32>)
// CHECK:             scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-COUNT-4:       vector.load %[[MASKS]][%{{.+}}] : memref<16xi16>, vector<1xi16>
// CHECK:               vector.bitcast %{{.+}} : vector<1xi16> to vector<16xi1>
// CHECK:               vector.expandload %[[VALS]][%{{.+}}], %{{.+}}, %{{.+}} : memref<128xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK:               vector.transfer_read %[[X]]
// CHECK-COUNT-4:       vector.fma
// CHECK-COUNT-4:     vector.reduction <add>
// CHECK:             vector.transfer_read %[[D]]
// CHECK:             vector.from_elements
// CHECK:             vector.transfer_write
// CHECK:         tensor.parallel_insert_slice
// CHECK-NOT:     linalg.generic

// With 256-bit vectors (AVX2, which has no vexpandps) the chunks are 8 k: 4 values
// and an 8-bit mask each (16 x 2 x 4 f32, 32 i8: the same 544 bytes). Each
// chunk's 4 values are loaded into the low half of a vector whose high half
// is zero and permuted into place by the mask's row of a 256 x 8 table
// (lanes extracted at the row's indices, marked for kiln-cpu-avx2-dot to
// make one vpermps); blocks of 2 columns from three rows on (6 of the 16
// registers accumulate).

// AVX2:        module attributes {kiln.sparse_kernels = [{dense_bytes = 1024 : i64, kernel = "sparse", name = "fc", sparse_bytes = 544 : i64}], kiln.sparse_shared_bytes = 8192 : i64}
// AVX2-DAG:    memref.global "private" constant @kiln_sparse_permutes : memref<2048xi32> = dense_resource<kiln_sparse_permutes> {alignment = 64 : i64}
// AVX2-DAG:    memref.global "private" constant @kiln_sparse_masks : memref<32xi8> = dense_resource<kiln_sparse_masks> {alignment = 64 : i64}
// AVX2-DAG:    memref.global "private" constant @kiln_sparse_values : memref<128xf32> = dense_resource<kiln_sparse_values> {alignment = 64 : i64}
// AVX2-LABEL:  func.func @three_rows
// AVX2-DAG:      %[[VALS:.+]] = memref.get_global @kiln_sparse_values : memref<128xf32>
// AVX2-DAG:      %[[MASKS:.+]] = memref.get_global @kiln_sparse_masks : memref<32xi8>
// AVX2-DAG:      %[[PERM:.+]] = memref.get_global @kiln_sparse_permutes : memref<2048xi32>
// AVX2:          scf.forall (%{{.+}}) in (8) shared_outs(%{{.+}}) -> (tensor<3x16xf32>)
// AVX2:            scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// AVX2:              %[[HALF:.+]] = vector.load %[[VALS]][%{{.+}}] : memref<128xf32>, vector<4xf32>
// AVX2:              %[[WIDE:.+]] = vector.shuffle %[[HALF]], %{{.+}} [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xf32>, vector<4xf32>
// AVX2:              %[[BYTE:.+]] = memref.load %[[MASKS]][%{{.+}}] : memref<32xi8>
// AVX2:              %[[ROW:.+]] = arith.index_castui %[[BYTE]] : i8 to index
// AVX2:              %[[AT:.+]] = arith.muli %[[ROW]], %{{.+}} : index
// AVX2:              %[[IDX:.+]] = vector.load %[[PERM]][%[[AT]]] : memref<2048xi32>, vector<8xi32>
// AVX2-COUNT-8:      vector.extract %[[WIDE]][%{{.+}}] : f32 from vector<8xf32>
// AVX2:              vector.from_elements {{.+}} {kiln.avx2_permute} : vector<8xf32>
// AVX2:              vector.load %[[VALS]]
// AVX2:              vector.from_elements {{.+}} {kiln.avx2_permute} : vector<8xf32>
// AVX2:              vector.transfer_read %{{.+}} : tensor<3x16xf32>, vector<8xf32>
// AVX2-COUNT-2:      vector.fma
// AVX2:            vector.reduction <add>
// AVX2:          tensor.parallel_insert_slice
// AVX2-NOT:      linalg.generic
// AVX2:          return

// Narrower vectors have neither expansion: the product stays dense.

// SSE:         module attributes {kiln.sparse_kernels = [{dense_bytes = 1024 : i64, kernel = "dense", name = "fc", reason = "no AVX-512 or AVX2 (the kernel expands with vexpandps or vpermps)"}]}
// SSE-LABEL:   func.func @three_rows
// SSE:           linalg.generic
// SSE-NOT:         kiln.sparsity
func.func @three_rows(%x: tensor<3x16xf32>, %init: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %w = arith.constant dense<[[1.0, 0.0, 0.0, 1.1875, 1.25, 0.0, 0.0, 1.4375, 1.5, 0.0, 0.0, 1.6875, 1.75, 0.0, 0.0, 1.9375], [2.0, 2.0625, 0.0, 0.0, 2.25, 2.3125, 0.0, 0.0, 2.5, 2.5625, 0.0, 0.0, 2.75, 2.8125, 0.0, 0.0], [0.0, 3.0625, 3.125, 0.0, 0.0, 3.3125, 3.375, 0.0, 0.0, 3.5625, 3.625, 0.0, 0.0, 3.8125, 3.875, 0.0], [0.0, 0.0, 4.125, 4.1875, 0.0, 0.0, 4.375, 4.4375, 0.0, 0.0, 4.625, 4.6875, 0.0, 0.0, 4.875, 4.9375], [0.0, 0.0, 5.125, 5.1875, 0.0, 0.0, 5.375, 5.4375, 0.0, 0.0, 5.625, 5.6875, 0.0, 0.0, 5.875, 5.9375], [6.0, 0.0, 0.0, 6.1875, 6.25, 0.0, 0.0, 6.4375, 6.5, 0.0, 0.0, 6.6875, 6.75, 0.0, 0.0, 6.9375], [7.0, 7.0625, 0.0, 0.0, 7.25, 7.3125, 0.0, 0.0, 7.5, 7.5625, 0.0, 0.0, 7.75, 7.8125, 0.0, 0.0], [0.0, 8.0625, 8.125, 0.0, 0.0, 8.3125, 8.375, 0.0, 0.0, 8.5625, 8.625, 0.0, 0.0, 8.8125, 8.875, 0.0], [0.0, 9.0625, 9.125, 0.0, 0.0, 9.3125, 9.375, 0.0, 0.0, 9.5625, 9.625, 0.0, 0.0, 9.8125, 9.875, 0.0], [0.0, 0.0, 10.125, 10.1875, 0.0, 0.0, 10.375, 10.4375, 0.0, 0.0, 10.625, 10.6875, 0.0, 0.0, 10.875, 10.9375], [11.0, 0.0, 0.0, 11.1875, 11.25, 0.0, 0.0, 11.4375, 11.5, 0.0, 0.0, 11.6875, 11.75, 0.0, 0.0, 11.9375], [12.0, 12.0625, 0.0, 0.0, 12.25, 12.3125, 0.0, 0.0, 12.5, 12.5625, 0.0, 0.0, 12.75, 12.8125, 0.0, 0.0], [13.0, 13.0625, 0.0, 0.0, 13.25, 13.3125, 0.0, 0.0, 13.5, 13.5625, 0.0, 0.0, 13.75, 13.8125, 0.0, 0.0], [0.0, 14.0625, 14.125, 0.0, 0.0, 14.3125, 14.375, 0.0, 0.0, 14.5625, 14.625, 0.0, 0.0, 14.8125, 14.875, 0.0], [0.0, 0.0, 15.125, 15.1875, 0.0, 0.0, 15.375, 15.4375, 0.0, 0.0, 15.625, 15.6875, 0.0, 0.0, 15.875, 15.9375], [16.0, 0.0, 0.0, 16.1875, 16.25, 0.0, 0.0, 16.4375, 16.5, 0.0, 0.0, 16.6875, 16.75, 0.0, 0.0, 16.9375]]> : tensor<16x16xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<3x16xf32>, tensor<16x16xf32>) outs(%init : tensor<3x16xf32>) attrs = {kiln.sparsity = "2:4"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x16xf32> loc("fc")
  return %y : tensor<3x16xf32>
}

// -----

#a = affine_map<(b, m, k, n) -> (b, m, k)>
#bt = affine_map<(b, m, k, n) -> (k, n)>
#o = affine_map<(b, m, k, n) -> (b, m, n)>

// One row ([1, 1, 16] collapsed to [1, 16]), the weight behind a 2-D
// transpose (Gemm's transB): blocks of 8 columns, the row tile outside any
// row loop, the result expanded back.

// CHECK-LABEL: func.func @transposed
// CHECK:         tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<1x1x16xf32> into tensor<1x16xf32>
// CHECK:         scf.forall (%{{.+}}) in (2)
// CHECK-COUNT-8:   vector.expandload
// CHECK-COUNT-8:   vector.fma
// CHECK:         tensor.expand_shape %{{.+}} {{\[\[}}0, 1], [2]] output_shape [1, 1, 16] : tensor<1x16xf32> into tensor<1x1x16xf32>
func.func @transposed(%x: tensor<1x1x16xf32>, %init: tensor<1x1x16xf32>) -> tensor<1x1x16xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 0.0, 0.0, 0.0, 6.0, 7.0, 0.0, 0.0, 0.0, 11.0, 12.0, 13.0, 0.0, 0.0, 16.0], [0.0, 2.0625, 3.0625, 0.0, 0.0, 0.0, 7.0625, 8.0625, 9.0625, 0.0, 0.0, 12.0625, 13.0625, 14.0625, 0.0, 0.0], [0.0, 0.0, 3.125, 4.125, 5.125, 0.0, 0.0, 8.125, 9.125, 10.125, 0.0, 0.0, 0.0, 14.125, 15.125, 0.0], [1.1875, 0.0, 0.0, 4.1875, 5.1875, 6.1875, 0.0, 0.0, 0.0, 10.1875, 11.1875, 0.0, 0.0, 0.0, 15.1875, 16.1875], [1.25, 2.25, 0.0, 0.0, 0.0, 6.25, 7.25, 0.0, 0.0, 0.0, 11.25, 12.25, 13.25, 0.0, 0.0, 16.25], [0.0, 2.3125, 3.3125, 0.0, 0.0, 0.0, 7.3125, 8.3125, 9.3125, 0.0, 0.0, 12.3125, 13.3125, 14.3125, 0.0, 0.0], [0.0, 0.0, 3.375, 4.375, 5.375, 0.0, 0.0, 8.375, 9.375, 10.375, 0.0, 0.0, 0.0, 14.375, 15.375, 0.0], [1.4375, 0.0, 0.0, 4.4375, 5.4375, 6.4375, 0.0, 0.0, 0.0, 10.4375, 11.4375, 0.0, 0.0, 0.0, 15.4375, 16.4375], [1.5, 2.5, 0.0, 0.0, 0.0, 6.5, 7.5, 0.0, 0.0, 0.0, 11.5, 12.5, 13.5, 0.0, 0.0, 16.5], [0.0, 2.5625, 3.5625, 0.0, 0.0, 0.0, 7.5625, 8.5625, 9.5625, 0.0, 0.0, 12.5625, 13.5625, 14.5625, 0.0, 0.0], [0.0, 0.0, 3.625, 4.625, 5.625, 0.0, 0.0, 8.625, 9.625, 10.625, 0.0, 0.0, 0.0, 14.625, 15.625, 0.0], [1.6875, 0.0, 0.0, 4.6875, 5.6875, 6.6875, 0.0, 0.0, 0.0, 10.6875, 11.6875, 0.0, 0.0, 0.0, 15.6875, 16.6875], [1.75, 2.75, 0.0, 0.0, 0.0, 6.75, 7.75, 0.0, 0.0, 0.0, 11.75, 12.75, 13.75, 0.0, 0.0, 16.75], [0.0, 2.8125, 3.8125, 0.0, 0.0, 0.0, 7.8125, 8.8125, 9.8125, 0.0, 0.0, 12.8125, 13.8125, 14.8125, 0.0, 0.0], [0.0, 0.0, 3.875, 4.875, 5.875, 0.0, 0.0, 8.875, 9.875, 10.875, 0.0, 0.0, 0.0, 14.875, 15.875, 0.0], [1.9375, 0.0, 0.0, 4.9375, 5.9375, 6.9375, 0.0, 0.0, 0.0, 10.9375, 11.9375, 0.0, 0.0, 0.0, 15.9375, 16.9375]]> : tensor<16x16xf32>
  %e = tensor.empty() : tensor<16x16xf32>
  %t = linalg.transpose ins(%w : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) permutation = [1, 0]
  %y = linalg.generic {indexing_maps = [#a, #bt, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %t : tensor<1x1x16xf32>, tensor<16x16xf32>) outs(%init : tensor<1x1x16xf32>) attrs = {kiln.sparsity = "2:4"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x1x16xf32>
  return %y : tensor<1x1x16xf32>
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#o = affine_map<(m, k, n) -> (m, n)>

// Stay dense, the mark removed, each with its reason: 5 rows (over
// max-rows 4), K = 20 (not a multiple of 16), a weight with a group of
// three non-zeros, and an unmarked product (left alone, not recorded).

// CHECK:       module attributes {kiln.sparse_kernels = [{dense_bytes = 1024 : i64, kernel = "dense", name = "rows", reason = "5 rows: compute-bound, the dense register tiles are faster (--cpu-sparse-max-rows=4)"}, {dense_bytes = 1280 : i64, kernel = "dense", name = "k20", reason = "K = 20 is not a multiple of 16"}, {dense_bytes = 1024 : i64, kernel = "dense", name = "three", reason = "the weight is not 2:4 along K"}]}
// CHECK-LABEL: func.func @dense
// CHECK-NOT:     kiln.sparsity
// CHECK-NOT:     vector.expandload
// CHECK-COUNT-4: linalg.generic
func.func @dense(%x: tensor<5x16xf32>, %i5: tensor<5x16xf32>, %x20: tensor<1x20xf32>, %x1: tensor<1x16xf32>, %i1: tensor<1x16xf32>) -> (tensor<5x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {
  %w = arith.constant dense<[[1.0, 0.0, 0.0, 1.1875, 1.25, 0.0, 0.0, 1.4375, 1.5, 0.0, 0.0, 1.6875, 1.75, 0.0, 0.0, 1.9375], [2.0, 2.0625, 0.0, 0.0, 2.25, 2.3125, 0.0, 0.0, 2.5, 2.5625, 0.0, 0.0, 2.75, 2.8125, 0.0, 0.0], [0.0, 3.0625, 3.125, 0.0, 0.0, 3.3125, 3.375, 0.0, 0.0, 3.5625, 3.625, 0.0, 0.0, 3.8125, 3.875, 0.0], [0.0, 0.0, 4.125, 4.1875, 0.0, 0.0, 4.375, 4.4375, 0.0, 0.0, 4.625, 4.6875, 0.0, 0.0, 4.875, 4.9375], [0.0, 0.0, 5.125, 5.1875, 0.0, 0.0, 5.375, 5.4375, 0.0, 0.0, 5.625, 5.6875, 0.0, 0.0, 5.875, 5.9375], [6.0, 0.0, 0.0, 6.1875, 6.25, 0.0, 0.0, 6.4375, 6.5, 0.0, 0.0, 6.6875, 6.75, 0.0, 0.0, 6.9375], [7.0, 7.0625, 0.0, 0.0, 7.25, 7.3125, 0.0, 0.0, 7.5, 7.5625, 0.0, 0.0, 7.75, 7.8125, 0.0, 0.0], [0.0, 8.0625, 8.125, 0.0, 0.0, 8.3125, 8.375, 0.0, 0.0, 8.5625, 8.625, 0.0, 0.0, 8.8125, 8.875, 0.0], [0.0, 9.0625, 9.125, 0.0, 0.0, 9.3125, 9.375, 0.0, 0.0, 9.5625, 9.625, 0.0, 0.0, 9.8125, 9.875, 0.0], [0.0, 0.0, 10.125, 10.1875, 0.0, 0.0, 10.375, 10.4375, 0.0, 0.0, 10.625, 10.6875, 0.0, 0.0, 10.875, 10.9375], [11.0, 0.0, 0.0, 11.1875, 11.25, 0.0, 0.0, 11.4375, 11.5, 0.0, 0.0, 11.6875, 11.75, 0.0, 0.0, 11.9375], [12.0, 12.0625, 0.0, 0.0, 12.25, 12.3125, 0.0, 0.0, 12.5, 12.5625, 0.0, 0.0, 12.75, 12.8125, 0.0, 0.0], [13.0, 13.0625, 0.0, 0.0, 13.25, 13.3125, 0.0, 0.0, 13.5, 13.5625, 0.0, 0.0, 13.75, 13.8125, 0.0, 0.0], [0.0, 14.0625, 14.125, 0.0, 0.0, 14.3125, 14.375, 0.0, 0.0, 14.5625, 14.625, 0.0, 0.0, 14.8125, 14.875, 0.0], [0.0, 0.0, 15.125, 15.1875, 0.0, 0.0, 15.375, 15.4375, 0.0, 0.0, 15.625, 15.6875, 0.0, 0.0, 15.875, 15.9375], [16.0, 0.0, 0.0, 16.1875, 16.25, 0.0, 0.0, 16.4375, 16.5, 0.0, 0.0, 16.6875, 16.75, 0.0, 0.0, 16.9375]]> : tensor<16x16xf32>
  %w20 = arith.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<20x16xf32>
  %d = arith.constant dense<[[1.0, 0.0, 0.0, 1.1875, 1.25, 0.0, 0.0, 1.4375, 1.5, 0.0, 0.0, 1.6875, 1.75, 0.0, 0.0, 1.9375], [2.0, 2.0625, 0.0, 0.0, 2.25, 2.3125, 0.0, 0.0, 2.5, 2.5625, 0.0, 0.0, 2.75, 2.8125, 0.0, 0.0], [0.0, 3.0625, 3.125, 0.0, 0.0, 3.3125, 3.375, 0.0, 0.0, 3.5625, 3.625, 0.0, 0.0, 3.8125, 3.875, 0.0], [9.0, 0.0, 4.125, 4.1875, 0.0, 0.0, 4.375, 4.4375, 0.0, 0.0, 4.625, 4.6875, 0.0, 0.0, 4.875, 4.9375], [0.0, 0.0, 5.125, 5.1875, 0.0, 0.0, 5.375, 5.4375, 0.0, 0.0, 5.625, 5.6875, 0.0, 0.0, 5.875, 5.9375], [6.0, 0.0, 0.0, 6.1875, 6.25, 0.0, 0.0, 6.4375, 6.5, 0.0, 0.0, 6.6875, 6.75, 0.0, 0.0, 6.9375], [7.0, 7.0625, 0.0, 0.0, 7.25, 7.3125, 0.0, 0.0, 7.5, 7.5625, 0.0, 0.0, 7.75, 7.8125, 0.0, 0.0], [0.0, 8.0625, 8.125, 0.0, 0.0, 8.3125, 8.375, 0.0, 0.0, 8.5625, 8.625, 0.0, 0.0, 8.8125, 8.875, 0.0], [0.0, 9.0625, 9.125, 0.0, 0.0, 9.3125, 9.375, 0.0, 0.0, 9.5625, 9.625, 0.0, 0.0, 9.8125, 9.875, 0.0], [0.0, 0.0, 10.125, 10.1875, 0.0, 0.0, 10.375, 10.4375, 0.0, 0.0, 10.625, 10.6875, 0.0, 0.0, 10.875, 10.9375], [11.0, 0.0, 0.0, 11.1875, 11.25, 0.0, 0.0, 11.4375, 11.5, 0.0, 0.0, 11.6875, 11.75, 0.0, 0.0, 11.9375], [12.0, 12.0625, 0.0, 0.0, 12.25, 12.3125, 0.0, 0.0, 12.5, 12.5625, 0.0, 0.0, 12.75, 12.8125, 0.0, 0.0], [13.0, 13.0625, 0.0, 0.0, 13.25, 13.3125, 0.0, 0.0, 13.5, 13.5625, 0.0, 0.0, 13.75, 13.8125, 0.0, 0.0], [0.0, 14.0625, 14.125, 0.0, 0.0, 14.3125, 14.375, 0.0, 0.0, 14.5625, 14.625, 0.0, 0.0, 14.8125, 14.875, 0.0], [0.0, 0.0, 15.125, 15.1875, 0.0, 0.0, 15.375, 15.4375, 0.0, 0.0, 15.625, 15.6875, 0.0, 0.0, 15.875, 15.9375], [16.0, 0.0, 0.0, 16.1875, 16.25, 0.0, 0.0, 16.4375, 16.5, 0.0, 0.0, 16.6875, 16.75, 0.0, 0.0, 16.9375]]> : tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<5x16xf32>, tensor<16x16xf32>) outs(%i5 : tensor<5x16xf32>) attrs = {kiln.sparsity = "2:4"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<5x16xf32> loc("rows")
  %k = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x20, %w20 : tensor<1x20xf32>, tensor<20x16xf32>) outs(%i1 : tensor<1x16xf32>) attrs = {kiln.sparsity = "2:4"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32> loc("k20")
  %t = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x1, %d : tensor<1x16xf32>, tensor<16x16xf32>) outs(%i1 : tensor<1x16xf32>) attrs = {kiln.sparsity = "2:4"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32> loc("three")
  %u = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x1, %w : tensor<1x16xf32>, tensor<16x16xf32>) outs(%i1 : tensor<1x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32>
  return %r, %k, %t, %u : tensor<5x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>
}

// -----

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#o = affine_map<(m, k, n) -> (m, n)>

// Two sparse products in one module share AVX2's permutation table: one
// global, read by both kernels, and its 8 KiB counted once.

// CHECK-LABEL: func.func @shared_table
// CHECK-COUNT-2: scf.forall
// AVX2:        module attributes {kiln.sparse_kernels = [{{.+}}name = "p1"{{.+}}name = "p2"{{.+}}}], kiln.sparse_shared_bytes = 8192 : i64}
// AVX2-COUNT-1: @kiln_sparse_permutes : memref<2048xi32>
// AVX2-NOT:    memref.global {{.+}}permutes
// AVX2-LABEL:  func.func @shared_table
// AVX2-COUNT-2: memref.get_global @kiln_sparse_permutes : memref<2048xi32>
func.func @shared_table(%x: tensor<1x16xf32>, %init: tensor<1x16xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>) {
  %w = arith.constant dense<[[1.0, 0.0, 0.0, 1.1875, 1.25, 0.0, 0.0, 1.4375, 1.5, 0.0, 0.0, 1.6875, 1.75, 0.0, 0.0, 1.9375], [2.0, 2.0625, 0.0, 0.0, 2.25, 2.3125, 0.0, 0.0, 2.5, 2.5625, 0.0, 0.0, 2.75, 2.8125, 0.0, 0.0], [0.0, 3.0625, 3.125, 0.0, 0.0, 3.3125, 3.375, 0.0, 0.0, 3.5625, 3.625, 0.0, 0.0, 3.8125, 3.875, 0.0], [0.0, 0.0, 4.125, 4.1875, 0.0, 0.0, 4.375, 4.4375, 0.0, 0.0, 4.625, 4.6875, 0.0, 0.0, 4.875, 4.9375], [0.0, 0.0, 5.125, 5.1875, 0.0, 0.0, 5.375, 5.4375, 0.0, 0.0, 5.625, 5.6875, 0.0, 0.0, 5.875, 5.9375], [6.0, 0.0, 0.0, 6.1875, 6.25, 0.0, 0.0, 6.4375, 6.5, 0.0, 0.0, 6.6875, 6.75, 0.0, 0.0, 6.9375], [7.0, 7.0625, 0.0, 0.0, 7.25, 7.3125, 0.0, 0.0, 7.5, 7.5625, 0.0, 0.0, 7.75, 7.8125, 0.0, 0.0], [0.0, 8.0625, 8.125, 0.0, 0.0, 8.3125, 8.375, 0.0, 0.0, 8.5625, 8.625, 0.0, 0.0, 8.8125, 8.875, 0.0], [0.0, 9.0625, 9.125, 0.0, 0.0, 9.3125, 9.375, 0.0, 0.0, 9.5625, 9.625, 0.0, 0.0, 9.8125, 9.875, 0.0], [0.0, 0.0, 10.125, 10.1875, 0.0, 0.0, 10.375, 10.4375, 0.0, 0.0, 10.625, 10.6875, 0.0, 0.0, 10.875, 10.9375], [11.0, 0.0, 0.0, 11.1875, 11.25, 0.0, 0.0, 11.4375, 11.5, 0.0, 0.0, 11.6875, 11.75, 0.0, 0.0, 11.9375], [12.0, 12.0625, 0.0, 0.0, 12.25, 12.3125, 0.0, 0.0, 12.5, 12.5625, 0.0, 0.0, 12.75, 12.8125, 0.0, 0.0], [13.0, 13.0625, 0.0, 0.0, 13.25, 13.3125, 0.0, 0.0, 13.5, 13.5625, 0.0, 0.0, 13.75, 13.8125, 0.0, 0.0], [0.0, 14.0625, 14.125, 0.0, 0.0, 14.3125, 14.375, 0.0, 0.0, 14.5625, 14.625, 0.0, 0.0, 14.8125, 14.875, 0.0], [0.0, 0.0, 15.125, 15.1875, 0.0, 0.0, 15.375, 15.4375, 0.0, 0.0, 15.625, 15.6875, 0.0, 0.0, 15.875, 15.9375], [16.0, 0.0, 0.0, 16.1875, 16.25, 0.0, 0.0, 16.4375, 16.5, 0.0, 0.0, 16.6875, 16.75, 0.0, 0.0, 16.9375]]> : tensor<16x16xf32>
  %y = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x16xf32>, tensor<16x16xf32>) outs(%init : tensor<1x16xf32>) attrs = {kiln.sparsity = "2:4"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32> loc("p1")
  %z = linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%y, %w : tensor<1x16xf32>, tensor<16x16xf32>) outs(%init : tensor<1x16xf32>) attrs = {kiln.sparsity = "2:4"} {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32> loc("p2")
  return %y, %z : tensor<1x16xf32>, tensor<1x16xf32>
}
