// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-vectorize))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-vectorize{max-bytes=8}))' | FileCheck %s --check-prefix=B8
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-vectorize{max-bytes=0}))' | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-vectorize,convert-linalg-to-parallel-loops,kiln-gpu-form-kernels))' | FileCheck %s --check-prefix=KERNEL

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// x - mean[row] + bias[col] over 8x64 f32: a parallel loop with step 4
// along the rows, 16-byte aligned loads of x and bias and a 16-byte store,
// the per-row mean loaded once per thread and broadcast.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to ({{.*}}) step (%{{.*}}, %[[C4]])
// CHECK-DAG: %[[X:.*]] = vector.load %arg0[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK-DAG: %[[M:.*]] = vector.load %arg1[%[[I]]] : memref<8xf32>, vector<f32>
// CHECK-DAG: %[[B:.*]] = vector.load %arg2[%[[J]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK: %[[MB:.*]] = vector.broadcast %[[M]] : vector<f32> to vector<4xf32>
// CHECK: %[[S:.*]] = arith.subf %[[X]], %[[MB]] : vector<4xf32>
// CHECK: %[[R:.*]] = arith.addf %[[S]], %[[B]] : vector<4xf32>
// CHECK: vector.store %[[R]], %arg3[%[[I]], %[[J]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK-NOT: linalg.generic
// B8-LABEL: func.func @elementwise
// B8: vector.load %arg0{{.*}} {alignment = 8 : i64} : memref<8x64xf32>, vector<2xf32>
// OFF-LABEL: func.func @elementwise
// OFF: linalg.generic
// OFF-NOT: vector.load
// One kernel, a thread per 4 elements: 8 x 16 threads.
// KERNEL-LABEL: func.func @elementwise
// KERNEL-SAME: kiln.kernel_costs = {k0 = array<i64: 1024, 4384>}
// KERNEL: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c128{{.*}}, {{.*}})
// KERNEL: vector.load
// KERNEL: vector.store
func.func @elementwise(%x: memref<8x64xf32>, %mean: memref<8xf32>, %bias: memref<64xf32>, %out: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#id2, #row, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean, %bias : memref<8x64xf32>, memref<8xf32>, memref<64xf32>) outs(%out : memref<8x64xf32>) {
  ^bb0(%a: f32, %m: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    %r = arith.addf %s, %b : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Mixed widths: the widest operand (f32) sets W = 4, so the f16 input is
// read 8 bytes at a time. An f16-only op takes 8 elements per thread.
// CHECK-LABEL: func.func @mixed
// CHECK: vector.load %arg0{{.*}} {alignment = 8 : i64} : memref<4x32xf16>, vector<4xf16>
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK: vector.store %{{.*}}, %arg1{{.*}} {alignment = 16 : i64} : memref<4x32xf32>, vector<4xf32>
// CHECK: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<4x32xf16>, vector<8xf16>
// CHECK: vector.store %{{.*}}, %arg2{{.*}} {alignment = 16 : i64} : memref<4x32xf16>, vector<8xf16>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mixed(%x: memref<4x32xf16>, %y: memref<4x32xf32>, %z: memref<4x32xf16>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x32xf16>) outs(%y : memref<4x32xf32>) {
  ^bb0(%a: f16, %o: f32):
    %e = arith.extf %a : f16 to f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x32xf16>) outs(%z : memref<4x32xf16>) {
  ^bb0(%a: f16, %o: f16):
    %n = arith.negf %a : f16
    linalg.yield %n : f16
  }
  return
}

// -----

// A fill, and a copy out of a column slice at offset 32 (a multiple of 4,
// as is the row stride 96): both vectorized.
// CHECK-LABEL: func.func @fill_and_slice
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK: vector.store %[[Z]], %arg1{{.*}} {alignment = 16 : i64} : memref<2x32xf32>, vector<4xf32>
// CHECK: %[[V:.*]] = vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<2x96xf32>, vector<4xf32>
// CHECK: vector.store %[[V]], %arg1
func.func @fill_and_slice(%src: memref<2x96xf32>, %dst: memref<2x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dst : memref<2x32xf32>)
  %s = memref.subview %src[0, 32] [2, 32] [1, 1] : memref<2x96xf32> to memref<2x32xf32, strided<[96, 1], offset: 32>>
  linalg.copy ins(%s : memref<2x32xf32, strided<[96, 1], offset: 32>>) outs(%dst : memref<2x32xf32>)
  return
}

// -----

// Left as they are (one element per thread later): an innermost size that
// is not a multiple of 4; a transposed input (its innermost dimension is
// not the loop's); a slice at offset 2 (groups of 4 not 16-byte aligned);
// a slice whose row stride (6) is not a multiple of 4; a reduction; an op
// that reads its indices; i1 elements.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: linalg.copy
// CHECK-NOT: vector.
// CHECK: linalg.copy
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: linalg.generic
// CHECK-NOT: vector.
#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#red = affine_map<(d0, d1) -> (d0)>
func.func @kept(%a: memref<4x6xf32>, %b: memref<4x6xf32>, %sq: memref<8x8xf32>, %sq2: memref<8x8xf32>,
                %wide: memref<4x12xf32>, %narrow: memref<4x4xf32>, %rows: memref<4xf32>,
                %bits: memref<4x16xi1>, %bits2: memref<4x16xi1>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x6xf32>) outs(%b : memref<4x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sq : memref<8x8xf32>) outs(%sq2 : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  %off = memref.subview %wide[0, 2] [4, 4] [1, 1] : memref<4x12xf32> to memref<4x4xf32, strided<[12, 1], offset: 2>>
  linalg.copy ins(%off : memref<4x4xf32, strided<[12, 1], offset: 2>>) outs(%narrow : memref<4x4xf32>)
  %odd = memref.subview %a[0, 0] [4, 4] [1, 1] : memref<4x6xf32> to memref<4x4xf32, strided<[6, 1]>>
  linalg.copy ins(%odd : memref<4x4xf32, strided<[6, 1]>>) outs(%narrow : memref<4x4xf32>)
  linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%narrow : memref<4x4xf32>) outs(%rows : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%narrow : memref<4x4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bits : memref<4x16xi1>) outs(%bits2 : memref<4x16xi1>) {
  ^bb0(%x: i1, %o: i1):
    linalg.yield %x : i1
  }
  return
}
