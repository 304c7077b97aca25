// RUN: kiln-opt %s -split-input-file -kiln-cpu-image-loops='vector-bits=512' | FileCheck %s

// A residual block at batch 2: a Relu that two convolutions read, a zero
// pad, a 3x3 and a 1x1 convolution starting from one shared bias
// broadcast, and the Add + Relu of both. Tiled from the Add + Relu, one
// loop over the images holds the pad, a copy of the bias broadcast for
// each convolution, both convolutions and the Add + Relu, all on one
// image; the Relu that both convolutions read stays outside (in the loop
// it would be computed twice), computed once for the batch.

#bias = affine_map<(n, f, h, w) -> (f)>
#id = affine_map<(n, f, h, w) -> (n, f, h, w)>

// CHECK-LABEL: func.func @block
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8x16x16xf32>, %[[W1:[^:]+]]: tensor<32x8x3x3xf32>, %[[W2:[^:]+]]: tensor<32x8x1x1xf32>, %[[B:[^:]+]]: tensor<32xf32>
// CHECK:         %[[E:.+]] = tensor.empty() : tensor<2x32x16x16xf32>
// CHECK:         %[[R:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<2x8x16x16xf32>)
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         %[[LOOP:.+]] = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[E]]) -> (tensor<2x32x16x16xf32>)
// CHECK:           %[[XI:.+]] = tensor.extract_slice %[[R]][%[[I]], 0, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK:           %[[P:.+]] = tensor.pad %[[XI]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           %[[B1:.+]] = linalg.generic {{.+}} ins(%[[B]] : tensor<32xf32>) outs(%{{.+}} : tensor<1x32x16x16xf32>)
// CHECK:           %[[C1:.+]] = linalg.conv_2d_nchw_fchw {{.+}} ins(%[[P]], %[[W1]] : tensor<1x8x18x18xf32>, tensor<32x8x3x3xf32>) outs(%[[B1]] : tensor<1x32x16x16xf32>)
// CHECK:           %[[XI2:.+]] = tensor.extract_slice %[[R]][%[[I]], 0, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK:           %[[B2:.+]] = linalg.generic {{.+}} ins(%[[B]] : tensor<32xf32>) outs(%{{.+}} : tensor<1x32x16x16xf32>)
// CHECK:           %[[C2:.+]] = linalg.conv_2d_nchw_fchw {{.+}} ins(%[[XI2]], %[[W2]] : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>) outs(%[[B2]] : tensor<1x32x16x16xf32>)
// CHECK:           %[[OUT:.+]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0, 0] [1, 32, 16, 16] [1, 1, 1, 1]
// CHECK:           %[[S:.+]] = linalg.generic {{.+}} ins(%[[C1]], %[[C2]] : tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>) outs(%[[OUT]] : tensor<1x32x16x16xf32>)
// CHECK:             arith.addf
// CHECK:             arith.maximumf
// CHECK:           %[[INS:.+]] = tensor.insert_slice %[[S]] into %[[ACC]][%[[I]], 0, 0, 0] [1, 32, 16, 16] [1, 1, 1, 1]
// CHECK:           scf.yield %[[INS]]
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         return %[[LOOP]]
func.func @block(%x: tensor<2x8x16x16xf32>, %w1: tensor<32x8x3x3xf32>, %w2: tensor<32x8x1x1xf32>, %b: tensor<32xf32>) -> tensor<2x32x16x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x16x16xf32>
  %bb = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<32xf32>) outs(%e : tensor<2x32x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x32x16x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x8x16x16xf32>) outs(%x : tensor<2x8x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<2x8x16x16xf32>
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %z : f32
  } : tensor<2x8x16x16xf32> to tensor<2x8x18x18xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w1 : tensor<2x8x18x18xf32>, tensor<32x8x3x3xf32>) outs(%bb : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r, %w2 : tensor<2x8x16x16xf32>, tensor<32x8x1x1xf32>) outs(%bb : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %c2 : tensor<2x32x16x16xf32>, tensor<2x32x16x16xf32>) outs(%e : tensor<2x32x16x16xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %a = arith.addf %in, %in2 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<2x32x16x16xf32>
  return %s : tensor<2x32x16x16xf32>
}

// -----

// A stride-2 1x1 convolution reads rows and columns 0..14 of its 16x16
// plane; the loop's slice of the input is the whole plane of the image,
// a view kiln-conv-to-gemm reads in place, not the 15x15 window tiling
// computes.

// CHECK-LABEL: func.func @stride2
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8x16x16xf32>
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK:           %[[XI:.+]] = tensor.extract_slice %[[X]][%[[I]], 0, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1] : tensor<2x8x16x16xf32> to tensor<1x8x16x16xf32>
// CHECK:           linalg.conv_2d_nchw_fchw {{.+}} ins(%[[XI]], %{{.+}} : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>) outs(%{{.+}} : tensor<1x32x8x8xf32>)
func.func @stride2(%x: tensor<2x8x16x16xf32>, %w: tensor<32x8x1x1xf32>, %init: tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x8x16x16xf32>, tensor<32x8x1x1xf32>) outs(%init : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  return %c : tensor<2x32x8x8xf32>
}

// -----

// Left alone: batch 1 (nothing to loop over), a 7x7-plane convolution
// that kiln-conv-to-gemm computes channels-last (its GEMM wants the
// batch's rows), and an elementwise op that no panel convolution feeds.

// CHECK-LABEL: func.func @batch_one
// CHECK-NOT:     scf.for
// CHECK:         linalg.conv_2d_nchw_fchw {{.+}} -> tensor<1x32x16x16xf32>
func.func @batch_one(%x: tensor<1x8x16x16xf32>, %w: tensor<32x8x1x1xf32>, %init: tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x16x16xf32>, tensor<32x8x1x1xf32>) outs(%init : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %c : tensor<1x32x16x16xf32>
}

// CHECK-LABEL: func.func @channels_last
// CHECK-NOT:     scf.for
// CHECK:         linalg.conv_2d_nchw_fchw {{.+}} -> tensor<2x32x7x7xf32>
func.func @channels_last(%x: tensor<2x8x7x7xf32>, %w: tensor<32x8x1x1xf32>, %init: tensor<2x32x7x7xf32>) -> tensor<2x32x7x7xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x8x7x7xf32>, tensor<32x8x1x1xf32>) outs(%init : tensor<2x32x7x7xf32>) -> tensor<2x32x7x7xf32>
  return %c : tensor<2x32x7x7xf32>
}

#id4 = affine_map<(n, f, h, w) -> (n, f, h, w)>
// CHECK-LABEL: func.func @no_conv
// CHECK-NOT:     scf.for
// CHECK:         linalg.generic
func.func @no_conv(%x: tensor<2x8x16x16xf32>) -> tensor<2x8x16x16xf32> {
  %z = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x8x16x16xf32>) outs(%x : tensor<2x8x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<2x8x16x16xf32>
  return %r : tensor<2x8x16x16xf32>
}

// A batch only known at run time.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-NOT:     scf.for
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @dynamic_batch(%x: tensor<?x8x16x16xf32>, %w: tensor<32x8x1x1xf32>, %init: tensor<?x32x16x16xf32>) -> tensor<?x32x16x16xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x8x16x16xf32>, tensor<32x8x1x1xf32>) outs(%init : tensor<?x32x16x16xf32>) -> tensor<?x32x16x16xf32>
  return %c : tensor<?x32x16x16xf32>
}

// -----

// A 16x16-plane convolution and its Relu, then a 7x7-plane one that
// kiln-conv-to-gemm computes channels-last on that Relu's result: the
// first two run one image at a time, the last keeps the batch (its GEMM's
// rows) outside the loop.

#id5 = affine_map<(n, f, h, w) -> (n, f, h, w)>
// CHECK-LABEL: func.func @into_channels_last
// CHECK:         %[[LOOP:.+]] = scf.for
// CHECK:           linalg.conv_2d_nchw_fchw {{.+}} -> tensor<1x32x16x16xf32>
// CHECK:           linalg.generic
// CHECK:           scf.yield
// CHECK:         linalg.conv_2d_nchw_fchw {{.+}} ins(%[[LOOP]], %{{.+}} : tensor<2x32x16x16xf32>, tensor<32x32x4x4xf32>) {{.+}} -> tensor<2x32x7x7xf32>
func.func @into_channels_last(%x: tensor<2x8x16x16xf32>, %w: tensor<32x8x1x1xf32>, %init: tensor<2x32x16x16xf32>, %w2: tensor<32x32x4x4xf32>, %init2: tensor<2x32x7x7xf32>) -> tensor<2x32x7x7xf32> {
  %z = arith.constant 0.0 : f32
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x8x16x16xf32>, tensor<32x8x1x1xf32>) outs(%init : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<2x32x16x16xf32>) outs(%init : tensor<2x32x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<2x32x16x16xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%r, %w2 : tensor<2x32x16x16xf32>, tensor<32x32x4x4xf32>) outs(%init2 : tensor<2x32x7x7xf32>) -> tensor<2x32x7x7xf32>
  return %c2 : tensor<2x32x7x7xf32>
}

// -----

// MobileNetV2's residual: %c0 feeds the 1x1 convolution %c1 and, past an
// op that does not move into loops (here a call; there the depthwise
// convolution), the residual Add. The Add's loop is built first and reads
// a slice of %c0, which keeps %c0 out of %c1's loop too: it runs in a loop
// of its own, once, and both loops read slices of its result.

#id6 = affine_map<(n, f, h, w) -> (n, f, h, w)>
func.func private @opaque(tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
// CHECK-LABEL: func.func @shared_across_loops
// CHECK:         %[[L0:.+]] = scf.for
// CHECK:           linalg.conv_2d_nchw_fchw {{.+}} -> tensor<1x32x16x16xf32>
// CHECK-NOT:       linalg.conv_2d_nchw_fchw
// CHECK:           scf.yield
// CHECK:         %[[L1:.+]] = scf.for
// CHECK:           tensor.extract_slice %[[L0]]
// CHECK:           linalg.conv_2d_nchw_fchw {{.+}} -> tensor<1x32x16x16xf32>
// CHECK-NOT:       linalg.conv_2d_nchw_fchw
// CHECK:           scf.yield
// CHECK:         call @opaque(%[[L1]])
// CHECK:         scf.for
// CHECK:           tensor.extract_slice %[[L0]]
// CHECK:           linalg.conv_2d_nchw_fchw {{.+}} -> tensor<1x32x16x16xf32>
// CHECK-NOT:       linalg.conv_2d_nchw_fchw
// CHECK:           scf.yield
func.func @shared_across_loops(%x: tensor<2x8x16x16xf32>, %w0: tensor<32x8x1x1xf32>, %w: tensor<32x32x1x1xf32>, %init: tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32> {
  %c0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w0 : tensor<2x8x16x16xf32>, tensor<32x8x1x1xf32>) outs(%init : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c0, %w : tensor<2x32x16x16xf32>, tensor<32x32x1x1xf32>) outs(%init : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %d = func.call @opaque(%c1) : (tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%d, %w : tensor<2x32x16x16xf32>, tensor<32x32x1x1xf32>) outs(%init : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %s = linalg.generic {indexing_maps = [#id6, #id6, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c0, %c2 : tensor<2x32x16x16xf32>, tensor<2x32x16x16xf32>) outs(%init : tensor<2x32x16x16xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %a = arith.addf %in, %in2 : f32
    linalg.yield %a : f32
  } -> tensor<2x32x16x16xf32>
  return %s : tensor<2x32x16x16xf32>
}
