// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise{fold-transposes=true}))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise))' | FileCheck %s --check-prefix=OFF

// A transposed weight (Gemm with transB) feeding a contraction: with
// fold-transposes the contraction reads the weight through (n, k), and
// no transpose remains; without, the transpose stays.
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$W]], #{{.*}}]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<64x128xf32>, tensor<80x128xf32>)
// OFF-LABEL: func.func @gemm_trans_b
// OFF: linalg.transpose
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
func.func @gemm_trans_b(%x: tensor<64x128xf32>, %w: tensor<80x128xf32>, %acc: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %e = tensor.empty() : tensor<128x80xf32>
  %t = linalg.transpose ins(%w : tensor<80x128xf32>) outs(%e : tensor<128x80xf32>) permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %t : tensor<64x128xf32>, tensor<128x80xf32>) outs(%acc : tensor<64x80xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x80xf32>
  return %r : tensor<64x80xf32>
}

// -----

// A transpose with two uses is not folded (it would be read twice), and a
// producer that computes (here: exp) is still fused only where no work
// repeats.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
func.func @kept(%x: tensor<64x128xf32>, %w: tensor<80x128xf32>, %acc: tensor<64x80xf32>) -> (tensor<64x80xf32>, tensor<64x80xf32>) {
  %e = tensor.empty() : tensor<128x80xf32>
  %t = linalg.transpose ins(%w : tensor<80x128xf32>) outs(%e : tensor<128x80xf32>) permutation = [1, 0]
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %t : tensor<64x128xf32>, tensor<128x80xf32>) outs(%acc : tensor<64x80xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x80xf32>
  %r2 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %t : tensor<64x128xf32>, tensor<128x80xf32>) outs(%acc : tensor<64x80xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x80xf32>
  return %r, %r2 : tensor<64x80xf32>, tensor<64x80xf32>
}
