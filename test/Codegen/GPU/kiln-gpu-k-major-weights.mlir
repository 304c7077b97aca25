// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-k-major-weights))' --split-input-file | FileCheck %s

// A MatMul's [K, N] int8 weight is stored [N, K] and read through
// (n, k): the bytes transposed (0x0102 0x0304 0x0506 rows of 2 become
// columns), once for the two products that read it.
// CHECK-DAG: #[[$A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$BT:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @matmul_kn
// CHECK: %[[W:.*]] = arith.constant dense_resource<kiln_k_major> : tensor<2x3xi8>
// CHECK: linalg.generic {indexing_maps = [#[[$A]], #[[$BT]], {{.*}}]{{.*}} ins(%{{.*}}, %[[W]] : tensor<4x3xi8>, tensor<2x3xi8>)
// CHECK: linalg.generic {indexing_maps = [#[[$A]], #[[$BT]], {{.*}}]{{.*}} ins(%{{.*}}, %[[W]] : tensor<4x3xi8>, tensor<2x3xi8>)
// CHECK: {-#
// CHECK: kiln_k_major: "0x01000000010305020406"
#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>
func.func @matmul_kn(%x: tensor<4x3xi8>, %acc: tensor<4x2xi32>) -> (tensor<4x2xi32>, tensor<4x2xi32>) {
  %w = arith.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi8>
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<4x3xi8>, tensor<3x2xi8>) outs(%acc : tensor<4x2xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<4x2xi32>
  %1 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<4x3xi8>, tensor<3x2xi8>) outs(%acc : tensor<4x2xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<4x2xi32>
  return %0, %1 : tensor<4x2xi32>, tensor<4x2xi32>
}

// -----

// Left as they are: a weight already K-major ([N, K], read (n, k)); a
// weight that is not a constant; an f16 constant (16-bit tiles read
// either side through ldmatrix .trans); a splat; a generic with no
// reduction.
// CHECK-LABEL: func.func @unchanged
// CHECK: %[[WT:.*]] = arith.constant dense<{{\[\[}}1, 3, 5], [2, 4, 6]]> : tensor<2x3xi8>
// CHECK: %[[WH:.*]] = arith.constant dense<{{.*}}> : tensor<3x2xf16>
// CHECK: %[[WS:.*]] = arith.constant dense<7> : tensor<3x2xi8>
// CHECK: ins(%{{.*}}, %[[WT]] : tensor<4x3xi8>, tensor<2x3xi8>)
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<4x3xi8>, tensor<3x2xi8>)
// CHECK: ins(%{{.*}}, %[[WH]] : tensor<4x3xf16>, tensor<3x2xf16>)
// CHECK: ins(%{{.*}}, %[[WS]] : tensor<4x3xi8>, tensor<3x2xi8>)
// CHECK: ins(%[[WS]] : tensor<3x2xi8>)
// CHECK-NOT: kiln_k_major
#a2 = affine_map<(m, k, n) -> (m, k)>
#bt = affine_map<(m, k, n) -> (n, k)>
#b2 = affine_map<(m, k, n) -> (k, n)>
#c2 = affine_map<(m, k, n) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
func.func @unchanged(%x: tensor<4x3xi8>, %y: tensor<3x2xi8>, %h: tensor<4x3xf16>, %acc: tensor<4x2xi32>, %facc: tensor<4x2xf32>) -> (tensor<4x2xi32>, tensor<4x2xi32>, tensor<4x2xf32>, tensor<4x2xi32>, tensor<3x2xi8>) {
  %wt = arith.constant dense<[[1, 3, 5], [2, 4, 6]]> : tensor<2x3xi8>
  %wh = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf16>
  %ws = arith.constant dense<7> : tensor<3x2xi8>
  %0 = linalg.generic {indexing_maps = [#a2, #bt, #c2], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %wt : tensor<4x3xi8>, tensor<2x3xi8>) outs(%acc : tensor<4x2xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<4x2xi32>
  %1 = linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %y : tensor<4x3xi8>, tensor<3x2xi8>) outs(%acc : tensor<4x2xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<4x2xi32>
  %2 = linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%h, %wh : tensor<4x3xf16>, tensor<3x2xf16>) outs(%facc : tensor<4x2xf32>) {
  ^bb0(%p: f16, %q: f16, %o: f32):
    %pe = arith.extf %p : f16 to f32
    %qe = arith.extf %q : f16 to f32
    %m = arith.mulf %pe, %qe : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  %3 = linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %ws : tensor<4x3xi8>, tensor<3x2xi8>) outs(%acc : tensor<4x2xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pe = arith.extsi %p : i8 to i32
    %qe = arith.extsi %q : i8 to i32
    %m = arith.muli %pe, %qe : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<4x2xi32>
  %e = tensor.empty() : tensor<3x2xi8>
  %4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ws : tensor<3x2xi8>) outs(%e : tensor<3x2xi8>) {
  ^bb0(%p: i8, %o: i8):
    linalg.yield %p : i8
  } -> tensor<3x2xi8>
  return %0, %1, %2, %3, %4 : tensor<4x2xi32>, tensor<4x2xi32>, tensor<4x2xf32>, tensor<4x2xi32>, tensor<3x2xi8>
}
