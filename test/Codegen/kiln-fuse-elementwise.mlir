// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise))' | FileCheck %s

// An elementwise producer read once per consumer iteration (a bias add
// after GELU's erf) fuses: one generic remains, with erf and the add.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @fuses_into_elementwise
// CHECK:         linalg.generic
// CHECK:           math.erf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
func.func @fuses_into_elementwise(%x: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// The same producer feeding a matmul, which reads it through (m, k) and
// would recompute erf for every n: it stays a separate generic.

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
// CHECK-LABEL: func.func @no_fusion_into_matmul
// CHECK:         %[[G:.+]] = linalg.generic
// CHECK:           math.erf
// CHECK:         linalg.generic {{.*}} ins(%[[G]], %{{.+}} :
// CHECK-NOT:       math.erf
// CHECK:           arith.mulf
func.func @no_fusion_into_matmul(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%z : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%g, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %t = arith.mulf %p, %q : f32
    %u = arith.addf %o, %t : f32
    linalg.yield %u : f32
  } -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// A producer with a second use is not fused (it would be computed twice).

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @no_fusion_multi_use
// CHECK-COUNT-2: linalg.generic
func.func @no_fusion_multi_use(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %g, %s : tensor<4x8xf32>, tensor<4x8xf32>
}
