// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-fold-pads))' | FileCheck %s

// A depthwise 3x3 window over a zero-padded input: the generic reads the
// pad's source itself. Each padded dim's position is the map's result less
// the low padding, checked against the source size unsigned (a position
// before the source wraps past its end), clamped, and the zero selected
// outside; the unpadded dims (n, c) are read as they are. The pad goes.

// CHECK-DAG: #[[$HMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d2 + d4)>
// CHECK-DAG: #[[$WMAP:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3 + d5)>
// CHECK-LABEL: func.func @depthwise
// CHECK-SAME:    (%[[X:.+]]: tensor<1x4x8x8xf32>, %[[W:.+]]: tensor<4x1x3x3xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[W]] : tensor<4x1x3x3xf32>)
// CHECK:         ^bb0(%[[WT:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-DAG:       %[[N:.+]] = linalg.index 0
// CHECK-DAG:       %[[C:.+]] = linalg.index 1
// CHECK:           %[[H:.+]] = affine.apply #[[$HMAP]]
// CHECK:           %[[W2:.+]] = affine.apply #[[$WMAP]]
// CHECK:           %[[HS:.+]] = arith.subi %[[H]], %c1
// CHECK:           %[[HOK:.+]] = arith.cmpi ult, %[[HS]], %c8
// CHECK:           %[[HI:.+]] = arith.select %[[HOK]], %[[HS]], %c0
// CHECK:           %[[WS:.+]] = arith.subi %[[W2]], %c1
// CHECK:           %[[WOK:.+]] = arith.cmpi ult, %[[WS]], %c8
// CHECK:           %[[OK:.+]] = arith.andi %[[HOK]], %[[WOK]]
// CHECK:           %[[WI:.+]] = arith.select %[[WOK]], %[[WS]], %c0
// CHECK:           %[[E:.+]] = tensor.extract %[[X]][%{{.+}}, %{{.+}}, %[[HI]], %[[WI]]]
// CHECK:           %[[IN:.+]] = arith.select %[[OK]], %[[E]], %{{.+}} : f32
// CHECK:           arith.mulf %[[IN]], %[[WT]]
#in = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh + kh, ow + kw)>
#wt = affine_map<(n, c, oh, ow, kh, kw) -> (c, 0, kh, kw)>
#out = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, ow)>
func.func @depthwise(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>, %init: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %y = linalg.generic {indexing_maps = [#in, #wt, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%p, %w : tensor<1x4x10x10xf32>, tensor<4x1x3x3xf32>) outs(%init : tensor<1x4x8x8xf32>) {
  ^bb0(%i: f32, %wt: f32, %o: f32):
    %m = arith.mulf %i, %wt : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// A named max pool over a pad of -inf: generalized, then read through with
// -inf selected outside the source.

// CHECK-LABEL: func.func @max_pool
// CHECK-SAME:    (%[[X:.+]]: tensor<1x2x6x6xf32>
// CHECK-DAG:     %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NOT:     tensor.pad
// CHECK-NOT:     linalg.pooling_nchw_max
// CHECK:         linalg.generic
// CHECK:           %[[E:.+]] = tensor.extract %[[X]]
// CHECK:           %[[IN:.+]] = arith.select %{{.+}}, %[[E]], %[[NEGINF]] : f32
// CHECK:           arith.maximumf %{{.+}}, %[[IN]]
func.func @max_pool(%x: tensor<1x2x6x6xf32>, %init: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %neginf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 0, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %neginf : f32
  } : tensor<1x2x6x6xf32> to tensor<1x2x7x7xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%p, %k : tensor<1x2x7x7xf32>, tensor<3x3xf32>) outs(%init : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A convolution the tiled GEMM kernel computes keeps its pad: that kernel
// reads a zero-padded input through in its own tile loads.

// CHECK-LABEL: func.func @tiled_conv
// CHECK:         tensor.pad
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @tiled_conv(%x: tensor<1x16x8x8xf32>, %w: tensor<32x16x3x3xf32>, %init: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x16x8x8xf32> to tensor<1x16x10x10xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%p, %w : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%init : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  return %y : tensor<1x32x8x8xf32>
}

// -----

// A pad with a second user stays (the padded tensor is needed anyway), and
// so does a pad whose padding is not static or whose value is not a
// constant defined outside it.

// CHECK-LABEL: func.func @not_foldable
// CHECK-COUNT-3: tensor.pad
// CHECK-NOT:     tensor.extract
func.func @not_foldable(%x: tensor<8xf32>, %n: index, %v: f32, %init: tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>, tensor<?xf32>, tensor<10xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<8xf32> to tensor<10xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%p : tensor<10xf32>) outs(%init : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<10xf32>
  %q = tensor.pad %x low[%n] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<8xf32> to tensor<?xf32>
  %dyn = tensor.empty(%n) : tensor<?xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%q : tensor<?xf32>) outs(%dyn : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<?xf32>
  %r = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<8xf32> to tensor<10xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%r : tensor<10xf32>) outs(%init : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<10xf32>
  return %y, %p, %z, %u : tensor<10xf32>, tensor<10xf32>, tensor<?xf32>, tensor<10xf32>
}

// -----

// A sum over the rows of a padded tensor whose only input is the pad: read
// through, the reduced loop would be in no operand (the op would not
// verify: nothing gives its bounds). It keeps the pad.

// CHECK-LABEL: func.func @reduction_of_pad
// CHECK:         %[[P:.+]] = tensor.pad
// CHECK:         linalg.generic {{.*}} ins(%[[P]] : tensor<3x6xf32>)
func.func @reduction_of_pad(%x: tensor<2x2xf32>, %init: tensor<6xf32>) -> tensor<6xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 2] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<2x2xf32> to tensor<3x6xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%p : tensor<3x6xf32>) outs(%init : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  return %s : tensor<6xf32>
}
