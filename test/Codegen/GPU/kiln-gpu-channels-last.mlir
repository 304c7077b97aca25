// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-channels-last))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-channels-last,kiln-sink-transposes))' | FileCheck %s --check-prefix=SINK
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-channels-last{group-bytes=64}))' | FileCheck %s --check-prefix=WIDE

// A padded 3x3 convolution with constant weights and a bias, a Relu, then
// a 1x1 convolution (ResNet's pattern). Each convolution becomes
// conv_2d_nhwc_fhwc: the input transposed to NHWC and padded after the
// transpose, the weights reordered to [f, kh, kw, c] at compile time
// (a new constant), the bias broadcast rebuilt in NHWC, the result
// transposed back. With kiln-sink-transposes the transposes around the
// Relu cancel: one transpose in, one out.
// CHECK-LABEL: func.func @chain
// CHECK:       %[[W1:.+]] = arith.constant dense_resource<kiln_taps_major{{.*}}> : tensor<8x3x3x4xf32>
// CHECK:       %[[XT:.+]] = linalg.transpose ins(%arg0 : tensor<1x4x6x6xf32>) outs(%{{.+}} : tensor<1x6x6x4xf32>) permutation = [0, 2, 3, 1]
// CHECK:       %[[XP:.+]] = tensor.pad %[[XT]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:       } : tensor<1x6x6x4xf32> to tensor<1x8x8x4xf32>
// CHECK:       %[[B:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<8xf32>) outs(%{{.+}} : tensor<1x6x6x8xf32>)
// CHECK:       %[[C1:.+]] = linalg.conv_2d_nhwc_fhwc {{.+}} ins(%[[XP]], %[[W1]] : tensor<1x8x8x4xf32>, tensor<8x3x3x4xf32>) outs(%[[B]] : tensor<1x6x6x8xf32>)
// CHECK:       linalg.transpose ins(%[[C1]] : tensor<1x6x6x8xf32>) outs(%{{.+}} : tensor<1x8x6x6xf32>) permutation = [0, 3, 1, 2]
// CHECK:       %[[W2:.+]] = arith.constant dense_resource<kiln_taps_major{{.*}}> : tensor<4x1x1x8xf32>
// CHECK:       linalg.conv_2d_nhwc_fhwc {{.+}} ins(%{{.+}}, %[[W2]] : tensor<1x6x6x8xf32>, tensor<4x1x1x8xf32>)
// CHECK-NOT:   linalg.conv_2d_nchw_fchw
// SINK-LABEL: func.func @chain
// SINK-COUNT-2: linalg.transpose
// SINK-NOT:     linalg.transpose
// SINK:         return
// WIDE-LABEL: func.func @chain
// WIDE-NOT:   linalg.conv_2d_nhwc_fhwc
#b4 = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @chain(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %w1 = arith.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<8x4x3x3xf32>
  %w2 = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]]]> : tensor<4x8x1x1xf32>
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x4x6x6xf32> to tensor<1x4x8x8xf32>
  %e1 = tensor.empty() : tensor<1x8x6x6xf32>
  %init1 = linalg.generic {indexing_maps = [#b4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%bias : tensor<8xf32>) outs(%e1 : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x6x6xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xp, %w1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) outs(%init1 : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<1x8x6x6xf32>) outs(%e1 : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x6x6xf32>
  %e2 = tensor.empty() : tensor<1x4x6x6xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r, %w2 : tensor<1x8x6x6xf32>, tensor<4x8x1x1xf32>) outs(%init2 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %c2 : tensor<1x4x6x6xf32>
}

// -----

// Half-precision operands accumulated in f32, the result rounded to f16
// by the op after: the rounding (an elementwise op that changes the
// element type) moves past the transpose too. Weights that are not
// constants are transposed at run time.
// CHECK-LABEL: func.func @half
// CHECK:       %[[WT:.+]] = linalg.transpose ins(%arg1 : tensor<8x8x3x3xf16>) outs(%{{.+}} : tensor<8x3x3x8xf16>) permutation = [0, 2, 3, 1]
// CHECK:       %[[F:.+]] = linalg.fill {{.+}} -> tensor<1x4x4x8xf32>
// CHECK:       linalg.conv_2d_nhwc_fhwc {{.+}} ins(%{{.+}}, %[[WT]] : tensor<1x6x6x8xf16>, tensor<8x3x3x8xf16>) outs(%[[F]] : tensor<1x4x4x8xf32>)
// SINK-LABEL: func.func @half
// SINK:         %[[C:.+]] = linalg.conv_2d_nhwc_fhwc
// SINK:         %[[T:.+]] = linalg.generic {{.+}} ins(%[[C]] : tensor<1x4x4x8xf32>) outs(%{{.+}} : tensor<1x4x4x8xf16>)
// SINK:           arith.truncf
// SINK:         linalg.transpose ins(%[[T]] : tensor<1x4x4x8xf16>) outs(%{{.+}} : tensor<1x8x4x4xf16>) permutation = [0, 3, 1, 2]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @half(%x: tensor<1x8x6x6xf16>, %w: tensor<8x8x3x3xf16>) -> tensor<1x8x4x4xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x6x6xf16>, tensor<8x8x3x3xf16>) outs(%init : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %eh = tensor.empty() : tensor<1x8x4x4xf16>
  %h = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x8x4x4xf32>) outs(%eh : tensor<1x8x4x4xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<1x8x4x4xf16>
  return %h : tensor<1x8x4x4xf16>
}

// -----

// Left NCHW: three input channels (12 bytes, not a whole 16-byte run)
// with weights that are not constants, 13 output channels (a narrow
// GEMM), i32 operands (not 8-bit).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: linalg.conv_2d_nchw_fchw
// CHECK-NOT:     linalg.conv_2d_nhwc_fhwc
// CHECK-NOT:     linalg.transpose
func.func @kept(%rgb: tensor<1x3x8x8xf32>, %w1: tensor<8x3x3x3xf32>, %x: tensor<1x8x8x8xf32>, %w2: tensor<13x8x1x1xf32>,
                %q: tensor<1x16x8x8xi32>, %w3: tensor<16x16x1x1xi32>) -> (tensor<1x8x6x6xf32>, tensor<1x13x8x8xf32>, tensor<1x16x8x8xi32>) {
  %zero = arith.constant 0.0 : f32
  %izero = arith.constant 0 : i32
  %e1 = tensor.empty() : tensor<1x8x6x6xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%rgb, %w1 : tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) outs(%i1 : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %e2 = tensor.empty() : tensor<1x13x8x8xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x13x8x8xf32>) -> tensor<1x13x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w2 : tensor<1x8x8x8xf32>, tensor<13x8x1x1xf32>) outs(%i2 : tensor<1x13x8x8xf32>) -> tensor<1x13x8x8xf32>
  %e3 = tensor.empty() : tensor<1x16x8x8xi32>
  %i3 = linalg.fill ins(%izero : i32) outs(%e3 : tensor<1x16x8x8xi32>) -> tensor<1x16x8x8xi32>
  %c3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%q, %w3 : tensor<1x16x8x8xi32>, tensor<16x16x1x1xi32>) outs(%i3 : tensor<1x16x8x8xi32>) -> tensor<1x16x8x8xi32>
  return %c1, %c2, %c3 : tensor<1x8x6x6xf32>, tensor<1x13x8x8xf32>, tensor<1x16x8x8xi32>
}

// -----

// An RGB stem with constant weights: the three channels (12 bytes) are
// widened to one 16-byte run with zeros, in the input (a zero fill, the
// transposed input inserted, then the pad of the plane) and in the
// weights (the fourth channel of every tap zero; their values are checked
// end to end: test/e2e/gpu-emulator.test's stem has three channels).
// CHECK-LABEL: func.func @stem
// CHECK:       %[[W:.+]] = arith.constant dense_resource<kiln_taps_major{{.*}}> : tensor<8x1x1x4xf32>
// CHECK:       %[[T:.+]] = linalg.generic {{.+}} ins(%arg0 : tensor<1x3x8x8xf32>) outs(%{{.+}} : tensor<1x8x8x3xf32>)
// CHECK:       %[[Z:.+]] = linalg.fill {{.+}} -> tensor<1x8x8x4xf32>
// CHECK:       %[[I:.+]] = tensor.insert_slice %[[T]] into %[[Z]][0, 0, 0, 0] [1, 8, 8, 3] [1, 1, 1, 1]
// CHECK:       %[[P:.+]] = tensor.pad %[[I]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:       linalg.conv_2d_nhwc_fhwc {{.+}} ins(%[[P]], %[[W]] : tensor<1x10x10x4xf32>, tensor<8x1x1x4xf32>)
func.func @stem(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x10x10xf32> {
  %zero = arith.constant 0.0 : f32
  %w = arith.constant dense<[[[[1.0]], [[2.0]], [[3.0]]], [[[1.0]], [[2.0]], [[3.0]]], [[[1.0]], [[2.0]], [[3.0]]], [[[1.0]], [[2.0]], [[3.0]]], [[[1.0]], [[2.0]], [[3.0]]], [[[1.0]], [[2.0]], [[3.0]]], [[[1.0]], [[2.0]], [[3.0]]], [[[1.0]], [[2.0]], [[3.0]]]]> : tensor<8x3x1x1xf32>
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %e = tensor.empty() : tensor<1x8x10x10xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xp, %w : tensor<1x3x10x10xf32>, tensor<8x3x1x1xf32>) outs(%init : tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32>
  return %c : tensor<1x8x10x10xf32>
}

// -----

// 8-bit convolutions into i32 (a quantized model): channels-last too, the
// input's pad with its zero point (-128) applied after the transpose, the
// bias broadcast rebuilt in NHWC. With kiln-sink-transposes the
// transposes around the requantization between the two convolutions
// cancel.
// CHECK-LABEL: func.func @int8_chain
// CHECK:       %[[XT:.+]] = linalg.transpose ins(%arg0 : tensor<1x16x8x8xi8>) outs(%{{.+}} : tensor<1x8x8x16xi8>) permutation = [0, 2, 3, 1]
// CHECK:       %[[XP:.+]] = tensor.pad %[[XT]] low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:         tensor.yield %c-128_i8 : i8
// CHECK:       } : tensor<1x8x8x16xi8> to tensor<1x10x10x16xi8>
// CHECK:       %[[B:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<32xi32>) outs(%{{.+}} : tensor<1x8x8x32xi32>)
// CHECK:       linalg.conv_2d_nhwc_fhwc {{.+}} ins(%[[XP]], %{{.+}} : tensor<1x10x10x16xi8>, tensor<32x3x3x16xi8>) outs(%[[B]] : tensor<1x8x8x32xi32>)
// CHECK:       linalg.conv_2d_nhwc_fhwc {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x8x8x32xi8>, tensor<32x1x1x32xi8>)
// CHECK-NOT:   linalg.conv_2d_nchw_fchw
// SINK-LABEL: func.func @int8_chain
// SINK-COUNT-2: linalg.transpose ins(%{{.+}} : tensor<{{.+}}xi8>)
// SINK:       %[[C1:.+]] = linalg.conv_2d_nhwc_fhwc
// SINK:       %[[Q:.+]] = linalg.generic {{.+}} ins(%[[C1]] : tensor<1x8x8x32xi32>) outs(%{{.+}} : tensor<1x8x8x32xi8>)
// SINK:       linalg.conv_2d_nhwc_fhwc {{.+}} ins(%[[Q]], %{{.+}} : tensor<1x8x8x32xi8>, tensor<32x1x1x32xi8>)
// SINK:       linalg.transpose ins(%{{.+}} : tensor<1x8x8x32xi32>) outs(%{{.+}} : tensor<1x32x8x8xi32>)
// SINK-NOT:   linalg.transpose
#bias = affine_map<(n, c, h, w) -> (c)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @int8_chain(%x: tensor<1x16x8x8xi8>) -> tensor<1x32x8x8xi32> {
  %zp = arith.constant -128 : i8
  %w1 = arith.constant dense<3> : tensor<32x16x3x3xi8>
  %w2 = arith.constant dense<-2> : tensor<32x32x1x1xi8>
  %b1 = arith.constant dense<7> : tensor<32xi32>
  %izero = arith.constant 0 : i32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zp : i8
  } : tensor<1x16x8x8xi8> to tensor<1x16x10x10xi8>
  %e = tensor.empty() : tensor<1x32x8x8xi32>
  %i1 = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b1 : tensor<32xi32>) outs(%e : tensor<1x32x8x8xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  } -> tensor<1x32x8x8xi32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xp, %w1 : tensor<1x16x10x10xi8>, tensor<32x16x3x3xi8>) outs(%i1 : tensor<1x32x8x8xi32>) -> tensor<1x32x8x8xi32>
  %e8 = tensor.empty() : tensor<1x32x8x8xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<1x32x8x8xi32>) outs(%e8 : tensor<1x32x8x8xi8>) {
  ^bb0(%in: i32, %out: i8):
    %t = arith.trunci %in : i32 to i8
    linalg.yield %t : i8
  } -> tensor<1x32x8x8xi8>
  %i2 = linalg.fill ins(%izero : i32) outs(%e : tensor<1x32x8x8xi32>) -> tensor<1x32x8x8xi32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%q, %w2 : tensor<1x32x8x8xi8>, tensor<32x32x1x1xi8>) outs(%i2 : tensor<1x32x8x8xi32>) -> tensor<1x32x8x8xi32>
  return %c2 : tensor<1x32x8x8xi32>
}
