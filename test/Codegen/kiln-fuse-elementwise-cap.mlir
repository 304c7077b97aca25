// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise))' | FileCheck %s --check-prefix=ONE
// RUN: kiln-opt %s -pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise{max-fused-ops=4}))' | FileCheck %s --check-prefix=CAP

// A chain of four elementwise generics (two operations a body, the yield
// included). By default (max-fused-ops=128) it fuses into one. With a cap
// of 4 a fusion is refused where the two bodies hold more than 4
// operations together: the first two fuse (2 + 2), the result (3) takes
// no third (3 + 2), and the last two fuse: two generics remain, the chain
// cut after the second op.

// ONE-LABEL: func.func @chain
// ONE:         linalg.generic
// ONE:           math.exp
// ONE-NEXT:      math.tanh
// ONE-NEXT:      math.sin
// ONE-NEXT:      math.cos
// ONE-NOT:     linalg.generic

// CAP-LABEL: func.func @chain
// CAP:         %[[A:.+]] = linalg.generic
// CAP:           math.exp
// CAP-NEXT:      math.tanh
// CAP-NEXT:      linalg.yield
// CAP:         linalg.generic {{.*}} ins(%[[A]] :
// CAP:           math.sin
// CAP-NEXT:      math.cos
// CAP-NEXT:      linalg.yield
// CAP-NOT:     linalg.generic

#id = affine_map<(d0) -> (d0)>
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%0 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%1 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sin %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%2 : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.cos %a : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %3 : tensor<16xf32>
}
