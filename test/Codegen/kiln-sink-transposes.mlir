// RUN: kiln-opt %s -split-input-file -kiln-sink-transposes | FileCheck %s

// Two channels-last GEMM results transposed back to NCHW, a residual
// Add + Relu over them collapsed to one dim (kiln-collapse-elementwise's
// form), and the next 1x1 convolution's transpose of that to
// channels-last: the Add + Relu runs over the channels-last tensors and
// both transposes around it cancel.

// CHECK-LABEL: func.func @residual
// CHECK-SAME:    %[[A:[^:]+]]: tensor<1x7x7x32xf32>, %[[B:[^:]+]]: tensor<1x7x7x32xf32>
// CHECK-NOT:     linalg.transpose
// CHECK-DAG:     %[[FA:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1, 2, 3]] : tensor<1x7x7x32xf32> into tensor<1568xf32>
// CHECK-DAG:     %[[FB:.+]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1, 2, 3]] : tensor<1x7x7x32xf32> into tensor<1568xf32>
// CHECK:         %[[R:.+]] = linalg.generic {{.+}} ins(%[[FA]], %[[FB]] : tensor<1568xf32>, tensor<1568xf32>) outs(%{{.+}} : tensor<1568xf32>)
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:         %[[X:.+]] = tensor.expand_shape %[[R]] {{\[}}[0, 1, 2, 3]] output_shape [1, 7, 7, 32]
// CHECK-NOT:     linalg.transpose
// CHECK:         return %[[X]]
#id1 = affine_map<(d0) -> (d0)>
func.func @residual(%a: tensor<1x7x7x32xf32>, %b: tensor<1x7x7x32xf32>) -> tensor<1x7x7x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x7x7xf32>
  %ta = linalg.transpose ins(%a : tensor<1x7x7x32xf32>) outs(%e : tensor<1x32x7x7xf32>) permutation = [0, 3, 1, 2]
  %tb = linalg.transpose ins(%b : tensor<1x7x7x32xf32>) outs(%e : tensor<1x32x7x7xf32>) permutation = [0, 3, 1, 2]
  %fa = tensor.collapse_shape %ta [[0, 1, 2, 3]] : tensor<1x32x7x7xf32> into tensor<1568xf32>
  %fb = tensor.collapse_shape %tb [[0, 1, 2, 3]] : tensor<1x32x7x7xf32> into tensor<1568xf32>
  %fe = tensor.collapse_shape %e [[0, 1, 2, 3]] : tensor<1x32x7x7xf32> into tensor<1568xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%fa, %fb : tensor<1568xf32>, tensor<1568xf32>) outs(%fe : tensor<1568xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1568xf32>
  %nchw = tensor.expand_shape %r [[0, 1, 2, 3]] output_shape [1, 32, 7, 7] : tensor<1568xf32> into tensor<1x32x7x7xf32>
  %e2 = tensor.empty() : tensor<1x7x7x32xf32>
  %back = linalg.transpose ins(%nchw : tensor<1x32x7x7xf32>) outs(%e2 : tensor<1x7x7x32xf32>) permutation = [0, 2, 3, 1]
  return %back : tensor<1x7x7x32xf32>
}

// -----

// An uncollapsed elementwise op (identity maps of rank 4) with a scalar
// operand moves too; its result, read as NCHW (returned), is transposed
// after it.

// CHECK-LABEL: func.func @rank4
// CHECK-SAME:    %[[A:[^:]+]]: tensor<1x7x7x32xf32>
// CHECK:         %[[R:.+]] = linalg.generic {{.+}} ins(%[[A]], %{{.+}} : tensor<1x7x7x32xf32>, f32) outs(%{{.+}} : tensor<1x7x7x32xf32>)
// CHECK:         %[[T:.+]] = linalg.transpose ins(%[[R]] : tensor<1x7x7x32xf32>) outs(%{{.+}} : tensor<1x32x7x7xf32>) permutation = [0, 3, 1, 2]
// CHECK:         return %[[T]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sc4 = affine_map<(d0, d1, d2, d3) -> ()>
func.func @rank4(%a: tensor<1x7x7x32xf32>, %s: f32) -> tensor<1x32x7x7xf32> {
  %e = tensor.empty() : tensor<1x32x7x7xf32>
  %ta = linalg.transpose ins(%a : tensor<1x7x7x32xf32>) outs(%e : tensor<1x32x7x7xf32>) permutation = [0, 3, 1, 2]
  %r = linalg.generic {indexing_maps = [#id4, #sc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ta, %s : tensor<1x32x7x7xf32>, f32) outs(%e : tensor<1x32x7x7xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<1x32x7x7xf32>
  return %r : tensor<1x32x7x7xf32>
}

// -----

// Left alone: an operand that is not a transpose (the NCHW input of a
// residual add), two transposes by different permutations, and an op
// whose body reads its init when the init is not transposed.

// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: linalg.generic {{.+}} ins(%{{.+}} : tensor<1x32x7x7xf32>
// CHECK-NOT:     linalg.generic
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @left_alone(%a: tensor<1x7x7x32xf32>, %x: tensor<1x32x7x7xf32>, %c: tensor<1x7x32x7xf32>) -> (tensor<1x32x7x7xf32>, tensor<1x32x7x7xf32>, tensor<1x32x7x7xf32>) {
  %e = tensor.empty() : tensor<1x32x7x7xf32>
  %ta = linalg.transpose ins(%a : tensor<1x7x7x32xf32>) outs(%e : tensor<1x32x7x7xf32>) permutation = [0, 3, 1, 2]
  %tc = linalg.transpose ins(%c : tensor<1x7x32x7xf32>) outs(%e : tensor<1x32x7x7xf32>) permutation = [0, 2, 1, 3]
  %0 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ta, %x : tensor<1x32x7x7xf32>, tensor<1x32x7x7xf32>) outs(%e : tensor<1x32x7x7xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<1x32x7x7xf32>
  %1 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ta, %tc : tensor<1x32x7x7xf32>, tensor<1x32x7x7xf32>) outs(%e : tensor<1x32x7x7xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<1x32x7x7xf32>
  %3 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ta : tensor<1x32x7x7xf32>) outs(%x : tensor<1x32x7x7xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<1x32x7x7xf32>
  return %0, %1, %3 : tensor<1x32x7x7xf32>, tensor<1x32x7x7xf32>, tensor<1x32x7x7xf32>
}

// -----

// A broadcast operand (a quantized model's per-channel scale, read along
// NCHW's dim 1; a scalar tensor) does not hold the op back: it is read
// through the permutation (the channel is dim 3 channels-last).

// CHECK-DAG:   #[[$CH:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG:   #[[$SC:.+]] = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME:    %[[A:[^:]+]]: tensor<1x7x7x32xf32>, %[[S:[^:]+]]: tensor<32xf32>, %[[Z:[^:]+]]: tensor<f32>
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[$CH]], #[[$SC]], #{{.+}}], {{.+}} ins(%[[A]], %[[S]], %[[Z]] : tensor<1x7x7x32xf32>, tensor<32xf32>, tensor<f32>) outs(%{{.+}} : tensor<1x7x7x32xf32>)
// CHECK:         %[[T:.+]] = linalg.transpose ins(%[[R]] : tensor<1x7x7x32xf32>) outs(%{{.+}} : tensor<1x32x7x7xf32>) permutation = [0, 3, 1, 2]
// CHECK:         return %[[T]]
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
#sc = affine_map<(d0, d1, d2, d3) -> ()>
#idb = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @broadcast(%a: tensor<1x7x7x32xf32>, %s: tensor<32xf32>, %z: tensor<f32>) -> tensor<1x32x7x7xf32> {
  %e = tensor.empty() : tensor<1x32x7x7xf32>
  %ta = linalg.transpose ins(%a : tensor<1x7x7x32xf32>) outs(%e : tensor<1x32x7x7xf32>) permutation = [0, 3, 1, 2]
  %0 = linalg.generic {indexing_maps = [#idb, #ch, #sc, #idb], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ta, %s, %z : tensor<1x32x7x7xf32>, tensor<32xf32>, tensor<f32>) outs(%e : tensor<1x32x7x7xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %t = arith.addf %m, %r : f32
    linalg.yield %t : f32
  } -> tensor<1x32x7x7xf32>
  return %0 : tensor<1x32x7x7xf32>
}
