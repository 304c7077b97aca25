// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-reductions-innermost))' | FileCheck %s

// A mean over the middle axis of [1, 128, 32] (loops n, s, c with s
// reducing) gets its loops as (n, c, s): the maps follow the interchange,
// the body is the same.

// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @middle_axis
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:   arith.addf
func.func @middle_axis(%x: memref<1x128x32xf32>, %y: memref<1x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, s, c) -> (n, s, c)>, affine_map<(n, s, c) -> (n, c)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<1x128x32xf32>) outs(%y : memref<1x32xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.addf %i, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Reductions already innermost, and elementwise generics, are left alone.

// CHECK-LABEL: func.func @already_innermost
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel"]
func.func @already_innermost(%x: memref<4x8xf32>, %y: memref<4xf32>, %z: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.addf %i, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%z : memref<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  return
}
