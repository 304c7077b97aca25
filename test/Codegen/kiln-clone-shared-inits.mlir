// RUN: kiln-opt %s -split-input-file -kiln-clone-shared-inits | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-clone-shared-inits -cse | FileCheck %s --check-prefix=CSE

// Two matmuls writing into one zero fill: the second gets its own fill
// (and tensor.empty) right before it, tagged so that CSE keeps the two
// apart.

// CHECK-LABEL: func.func @shared_fill
// CHECK:         %[[E0:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[F0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E0]] : tensor<4x8xf32>)
// CHECK:         linalg.matmul {{.+}} outs(%[[F0]] : tensor<4x8xf32>)
// CHECK:         %[[E1:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[F1:.+]] = linalg.fill {kiln.init_clone = 0 : i64} ins(%{{.+}} : f32) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK:         linalg.matmul {{.+}} outs(%[[F1]] : tensor<4x8xf32>)
// CSE-LABEL:   func.func @shared_fill
// CSE-COUNT-2:   linalg.fill
func.func @shared_fill(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A bias broadcast (reading a constant) shared by two writers through
// reshapes, and also read directly: both writers get clones, the reader
// keeps the original.

// CHECK-LABEL: func.func @shared_broadcast
// CHECK-COUNT-3: linalg.broadcast
// CHECK:         return %{{.+}}, %{{.+}}, %[[ORIG:.+]] :
func.func @shared_broadcast(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> (tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<4x8xf32>) {
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.broadcast ins(%bias : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %0 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x0 = tensor.expand_shape %0 [[0, 1], [2]] output_shape [2, 2, 8] : tensor<4x8xf32> into tensor<2x2x8xf32>
  %x1 = tensor.expand_shape %1 [[0, 1], [2]] output_shape [2, 2, 8] : tensor<4x8xf32> into tensor<2x2x8xf32>
  return %x0, %x1, %init : tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<4x8xf32>
}

// -----

// Left alone: a fill with one writer, and an init computed from a
// function argument (not cheap to recompute: a copy is what it costs).

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     kiln.init_clone
// CHECK-COUNT-1: linalg.fill
// CHECK-COUNT-1: linalg.broadcast
func.func @left_alone(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>, %v: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %init = linalg.broadcast ins(%v : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %1 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A padded convolution's clone goes before its input's tensor.pad, so
// that its buffer is live while the pad copies the source (the GPU path
// then reads the source in place).

// CHECK-LABEL: func.func @before_pad
// CHECK:         %[[B0:.+]] = linalg.broadcast
// CHECK:         linalg.conv_2d_nchw_fchw {{.+}} outs(%[[B0]] :
// CHECK:         %[[B1:.+]] = linalg.broadcast {{.+}} {kiln.init_clone = 0 : i64}
// CHECK:         %[[P:.+]] = tensor.pad
// CHECK:         linalg.conv_2d_nchw_fchw {{.+}} ins(%[[P]], {{.+}} outs(%[[B1]] :
func.func @before_pad(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %w3: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %init = linalg.broadcast ins(%bias : tensor<4xf32>) outs(%e : tensor<1x4x8x8xf32>) dimensions = [0, 2, 3]
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) outs(%init : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p = tensor.pad %0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w3 : tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%init : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %1 : tensor<1x4x8x8xf32>
}

// -----

// CSE also merges the reshapes of a shared broadcast: two contractions
// write into the one expand_shape of it (so the broadcast has one use).
// Each writer gets its own reshape and then its own broadcast.

// CHECK-LABEL: func.func @shared_through_reshape
// CHECK:         %[[B0:.+]] = linalg.broadcast
// CHECK:         %[[X0:.+]] = tensor.expand_shape %[[B0]]
// CHECK:         linalg.generic {{.+}} outs(%[[X0]] :
// CHECK:         %[[B1:.+]] = linalg.broadcast {{.+}} {kiln.init_clone = 0 : i64}
// CHECK:         %[[X1:.+]] = tensor.expand_shape %[[B1]]
// CHECK:         linalg.generic {{.+}} outs(%[[X1]] :
// CSE-LABEL:   func.func @shared_through_reshape
// CSE-COUNT-2:   linalg.broadcast
#lhs = affine_map<(n, f, p, k) -> (f, k)>
#rhs = affine_map<(n, f, p, k) -> (n, k, p)>
#out = affine_map<(n, f, p, k) -> (n, f, p)>
func.func @shared_through_reshape(%w: tensor<8x16xf32>, %x: tensor<1x16x4xf32>) -> (tensor<1x8x4xf32>, tensor<1x8x4xf32>) {
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %init = linalg.broadcast ins(%bias : tensor<8xf32>) outs(%e : tensor<8x4xf32>) dimensions = [1]
  %acc = tensor.expand_shape %init [[0, 1], [2]] output_shape [1, 8, 4] : tensor<8x4xf32> into tensor<1x8x4xf32>
  %0 = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%w, %x : tensor<8x16xf32>, tensor<1x16x4xf32>) outs(%acc : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4xf32>
  %1 = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%w, %x : tensor<8x16xf32>, tensor<1x16x4xf32>) outs(%acc : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4xf32>
  return %0, %1 : tensor<1x8x4xf32>, tensor<1x8x4xf32>
}
