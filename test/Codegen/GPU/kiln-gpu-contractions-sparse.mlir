// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions))' 2>&1 | FileCheck %s
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{stages=1}))' 2>&1 | FileCheck %s --check-prefix=STAGES1

#x = affine_map<(m, k, n) -> (m, k)>
#w = affine_map<(m, k, n) -> (n, k)>
#o = affine_map<(m, k, n) -> (m, n)>

// A product whose [N = 64, K = 32] weight kiln-gpu-sparse-weights
// compressed (the global names the kept values and the metadata): the
// weight is the tile's A (M = 64 rows of it, N = the 40 rows of x), its
// kept values arrive in [stage][m][k / 2] shared tiles (16 values and 8 of
// padding per row) by 16-byte cp.async copies from the values global, each
// warp reads its rows' metadata words from the metadata global, and each
// step of 32 k runs mma.sp m16n8k32 (selector 0) on 2 x 4 tiles per warp.
// The dense weight is not read.
// CHECK-LABEL: func.func @sparse
// CHECK-DAG: %[[VALS:.*]] = memref.get_global @kiln_sparse_values : memref<1024xf16>
// CHECK-DAG: %[[META:.*]] = memref.get_global @kiln_sparse_meta : memref<64xi32>
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<3x64x24xf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<3x64x40xf16, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref<64x32xf16>
// CHECK: nvgpu.device_async_copy %[[VALS]][%{{.*}}], %[[AS]][%{{.*}}, %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<1024xf16> to memref<3x64x24xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK-NOT: memref<64x32xf16>
// CHECK: memref.load %[[META]][%{{.*}}] : memref<64xi32>
// CHECK-NOT: memref<64x32xf16>
// CHECK-COUNT-8: nvvm.mma.sp.sync {{.*}} sparseMetadata[%{{.*}}] selector[%{{.*}}] {shape = #nvvm.shape<m = 16, n = 8, k = 32>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvgpu.mma.sync
// CHECK-NOT: memref<64x32xf16>
// STAGES1-LABEL: func.func @sparse
// STAGES1: workgroup(%[[AS:.*]] : memref<64x24xf16, #gpu.address_space<workgroup>>
// STAGES1: vector.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<1024xf16>, vector<8xf16>
// STAGES1-COUNT-8: memref.store %{{.*}}, %[[AS]]
// STAGES1: nvvm.mma.sp.sync
memref.global "private" constant @kiln_sparse_values : memref<1024xf16> = dense<0.0>
memref.global "private" constant @kiln_sparse_meta : memref<64xi32> = dense<1145324612>
memref.global "private" constant @kiln_sparse_weight : memref<2048xf16> = dense<0.0> {kiln.sparse_k = 32 : i64, kiln.sparse_k_dim = 1 : i64, kiln.sparse_meta = @kiln_sparse_meta, kiln.sparse_n = 64 : i64, kiln.sparse_values = @kiln_sparse_values}
func.func @sparse(%x: memref<40x32xf16>, %out: memref<40x64xf32>) {
  %g = memref.get_global @kiln_sparse_weight : memref<2048xf16>
  %w = memref.expand_shape %g [[0, 1]] output_shape [64, 32] : memref<2048xf16> into memref<64x32xf16>
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<40x32xf16>, memref<64x32xf16>) outs(%out : memref<40x64xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %0 = arith.extf %a : f16 to f32
    %1 = arith.extf %b : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#x = affine_map<(m, k, n) -> (m, k)>
#w = affine_map<(m, k, n) -> (n, k)>
#o = affine_map<(m, k, n) -> (m, n)>

// A compressed weight whose recorded N is not the product's: the product
// reads the dense weight with mma.sync, and a warning says why.
// CHECK: warning: kiln-gpu-contractions: the 2:4 weight of node '' is read dense: the product's M and K are not the weight's
// CHECK-LABEL: func.func @mismatch
// CHECK: gpu.launch
// CHECK-NOT: nvvm.mma.sp.sync
// CHECK: nvgpu.mma.sync
memref.global "private" constant @kiln_sparse_values : memref<1024xf16> = dense<0.0>
memref.global "private" constant @kiln_sparse_meta : memref<64xi32> = dense<1145324612>
memref.global "private" constant @kiln_sparse_weight : memref<2048xf16> = dense<0.0> {kiln.sparse_k = 32 : i64, kiln.sparse_k_dim = 1 : i64, kiln.sparse_meta = @kiln_sparse_meta, kiln.sparse_n = 96 : i64, kiln.sparse_values = @kiln_sparse_values}
func.func @mismatch(%x: memref<40x32xf16>, %out: memref<40x64xf32>) {
  %g = memref.get_global @kiln_sparse_weight : memref<2048xf16>
  %w = memref.expand_shape %g [[0, 1]] output_shape [64, 32] : memref<2048xf16> into memref<64x32xf16>
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<40x32xf16>, memref<64x32xf16>) outs(%out : memref<40x64xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %0 = arith.extf %a : f16 to f32
    %1 = arith.extf %b : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#x = affine_map<(m, k, n) -> (m, k)>
#w = affine_map<(m, k, n) -> (k, n)>
#o = affine_map<(m, k, n) -> (m, n)>

// A weight stored [K = 48, N = 40] (k is the global's dim 0): 40 rows
// overhang the 64-row tile, so the metadata block of the rows past them is
// clamped to the last (their kept values are zeros), and K pads to 64: two
// steps of 32.
// CHECK-LABEL: func.func @kn_edges
// CHECK-DAG: memref.get_global @kiln_sparse_values : memref<1280xf16>
// CHECK-DAG: memref.get_global @kiln_sparse_meta : memref<96xi32>
// CHECK: gpu.launch
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2{{.*}} step
// CHECK: arith.minui %{{.*}}, %c2{{.*}} : index
// CHECK: nvvm.mma.sp.sync
// CHECK-NOT: memref.load %{{.*}} : memref<48x40xf16>
memref.global "private" constant @kiln_sparse_values : memref<1280xf16> = dense<0.0>
memref.global "private" constant @kiln_sparse_meta : memref<96xi32> = dense<1145324612>
memref.global "private" constant @kiln_sparse_weight : memref<1920xf16> = dense<0.0> {kiln.sparse_k = 48 : i64, kiln.sparse_k_dim = 0 : i64, kiln.sparse_meta = @kiln_sparse_meta, kiln.sparse_n = 40 : i64, kiln.sparse_values = @kiln_sparse_values}
func.func @kn_edges(%x: memref<24x48xf16>, %out: memref<24x40xf32>) {
  %g = memref.get_global @kiln_sparse_weight : memref<1920xf16>
  %w = memref.expand_shape %g [[0, 1]] output_shape [48, 40] : memref<1920xf16> into memref<48x40xf16>
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<24x48xf16>, memref<48x40xf16>) outs(%out : memref<24x40xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %0 = arith.extf %a : f16 to f32
    %1 = arith.extf %b : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// A channels-last convolution (what kiln-gpu-channels-last writes) whose
// [F = 64, KH = 1, KW = 2, C = 16] weight kiln-gpu-sparse-weights
// compressed as [N = 64, K = 32], K = (kh, kw, c): the product's three
// reduction dims in that order. The weight is the tile's A, read from the
// kept values and metadata; the input is read in place (the implicit
// GEMM's B, K = 32 over (kh, kw, c)).
// CHECK-LABEL: func.func @conv_nhwc
// CHECK-DAG: %[[VALS:.*]] = memref.get_global @kiln_sparse_values : memref<1024xf16>
// CHECK-DAG: %[[META:.*]] = memref.get_global @kiln_sparse_meta : memref<64xi32>
// CHECK: gpu.launch
// CHECK: nvgpu.device_async_copy %[[VALS]]
// CHECK: memref.load %[[META]][%{{.*}}] : memref<64xi32>
// CHECK: nvvm.mma.sp.sync {{.*}} {shape = #nvvm.shape<m = 16, n = 8, k = 32>}
// CHECK-NOT: nvgpu.mma.sync
memref.global "private" constant @kiln_sparse_values : memref<1024xf16> = dense<0.0>
memref.global "private" constant @kiln_sparse_meta : memref<64xi32> = dense<1145324612>
memref.global "private" constant @kiln_sparse_weight : memref<64x1x2x16xf16> = dense<0.0> {kiln.sparse_k = 32 : i64, kiln.sparse_k_dim = 1 : i64, kiln.sparse_meta = @kiln_sparse_meta, kiln.sparse_n = 64 : i64, kiln.sparse_values = @kiln_sparse_values}
func.func @conv_nhwc(%x: memref<1x4x5x16xf16>, %out: memref<1x4x4x64xf32>) {
  %w = memref.get_global @kiln_sparse_weight : memref<64x1x2x16xf16>
  linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x4x5x16xf16>, memref<64x1x2x16xf16>) outs(%out : memref<1x4x4x64xf32>)
  return
}

// -----

// A compressed convolution weight read with its reduction dims in another
// order than the product's (here (c, kw) of a [F, C, KW] weight against
// loops (kw, c)): the flattened K of its rows is not the one the tile
// walks, so the product reads the dense weight, and a warning says why.
// CHECK: warning: kiln-gpu-contractions: the 2:4 weight of node '' is read dense: the weight is not read along the product's K
// CHECK-LABEL: func.func @conv_k_order
// CHECK-NOT: nvvm.mma.sp.sync
// CHECK: nvgpu.mma.sync
#in = affine_map<(n, ow, f, kw, c) -> (n, ow + kw, c)>
#wt = affine_map<(n, ow, f, kw, c) -> (f, c, kw)>
#ot = affine_map<(n, ow, f, kw, c) -> (n, ow, f)>
memref.global "private" constant @kiln_sparse_values : memref<1024xf16> = dense<0.0>
memref.global "private" constant @kiln_sparse_meta : memref<64xi32> = dense<1145324612>
memref.global "private" constant @kiln_sparse_weight : memref<64x16x2xf16> = dense<0.0> {kiln.sparse_k = 32 : i64, kiln.sparse_k_dim = 1 : i64, kiln.sparse_meta = @kiln_sparse_meta, kiln.sparse_n = 64 : i64, kiln.sparse_values = @kiln_sparse_values}
func.func @conv_k_order(%x: memref<1x33x16xf16>, %out: memref<1x32x64xf32>) {
  %w = memref.get_global @kiln_sparse_weight : memref<64x16x2xf16>
  linalg.generic {indexing_maps = [#in, #wt, #ot], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : memref<1x33x16xf16>, memref<64x16x2xf16>) outs(%out : memref<1x32x64xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %0 = arith.extf %a : f16 to f32
    %1 = arith.extf %b : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

#x = affine_map<(m, k, n) -> (m, k)>
#w = affine_map<(m, k, n) -> (n, k)>
#o = affine_map<(m, k, n) -> (m, n)>

// An int8 product (signed bytes into i32) with a compressed [N = 64,
// K = 64] weight: 8-bit tiles step 64 k, one mma.sp m16n8k64 (s8 into s32,
// .satfinite) per 16x8 tile; the kept bytes arrive in [stage][m][32 + 16]
// tiles by 16-byte cp.async copies (16 values), and each lane reads its
// own metadata word (32 per 16 rows and 64 k).
// CHECK-LABEL: func.func @sparse_int8
// CHECK-DAG: %[[VALS:.*]] = memref.get_global @kiln_sparse_values : memref<2048xi8>
// CHECK-DAG: %[[META:.*]] = memref.get_global @kiln_sparse_meta : memref<128xi32>
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<3x64x48xi8, #gpu.address_space<workgroup>>, %{{.*}} : memref<3x64x80xi8, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy %[[VALS]][%{{.*}}], %[[AS]][%{{.*}}, %{{.*}}, %{{.*}}], 16 {bypassL1} : memref<2048xi8> to memref<3x64x48xi8, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: memref.load %[[META]][%{{.*}}] : memref<128xi32>
// CHECK-COUNT-8: nvvm.mma.sp.sync {{.*}} sparseMetadata[%{{.*}}] selector[%{{.*}}] {intOverflowBehavior = #nvvm.mma_int_overflow<satfinite>, multiplicandAPtxType = #nvvm.mma_type<s8>, multiplicandBPtxType = #nvvm.mma_type<s8>, shape = #nvvm.shape<m = 16, n = 8, k = 64>} : (i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NOT: nvgpu.mma.sync
// CHECK-NOT: memref<64x64xi8>
memref.global "private" constant @kiln_sparse_values : memref<2048xi8> = dense<0>
memref.global "private" constant @kiln_sparse_meta : memref<128xi32> = dense<1145324612>
memref.global "private" constant @kiln_sparse_weight : memref<4096xi8> = dense<0> {kiln.sparse_k = 64 : i64, kiln.sparse_k_dim = 1 : i64, kiln.sparse_meta = @kiln_sparse_meta, kiln.sparse_n = 64 : i64, kiln.sparse_values = @kiln_sparse_values}
func.func @sparse_int8(%x: memref<40x64xi8>, %out: memref<40x64xi32>) {
  %g = memref.get_global @kiln_sparse_weight : memref<4096xi8>
  %w = memref.expand_shape %g [[0, 1]] output_shape [64, 64] : memref<4096xi8> into memref<64x64xi8>
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : memref<40x64xi8>, memref<64x64xi8>) outs(%out : memref<40x64xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extsi %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}
