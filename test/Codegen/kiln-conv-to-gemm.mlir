// RUN: kiln-opt %s -split-input-file --kiln-conv-to-gemm=channels-last-below=0 | FileCheck %s

// A 3x3 convolution at stride 2: the windows are copied into a
// [n, c, kh, kw, oh, ow] tensor (ow innermost, read at the stride), which
// collapses to [n, c*kh*kw, oh*ow]; the GEMM contracts it with the weights
// as [f, c*kh*kw] into the accumulator as [n, f, oh*ow].

// CHECK-DAG: #[[$WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-DAG: #[[$LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[$RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @conv3x3
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x9x9xf32>, %[[W:[^:]+]]: tensor<4x3x3x3xf32>, %[[ACC:[^:]+]]: tensor<2x4x4x4xf32>
// CHECK:         %[[COL:.+]] = linalg.generic {indexing_maps = [#[[$WIN]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<2x3x9x9xf32>) outs(%{{.+}} : tensor<2x3x3x3x4x4xf32>)
// CHECK:         %[[RHS:.+]] = tensor.collapse_shape %[[COL]] {{\[}}[0], [1, 2, 3], [4, 5]] : tensor<2x3x3x3x4x4xf32> into tensor<2x27x16xf32>
// CHECK:         %[[LHS:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK:         %[[C:.+]] = tensor.collapse_shape %[[ACC]] {{\[}}[0], [1], [2, 3]] : tensor<2x4x4x4xf32> into tensor<2x4x16xf32>
// CHECK:         %[[G:.+]] = linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[LHS]], %[[RHS]] : tensor<4x27xf32>, tensor<2x27x16xf32>) outs(%[[C]] : tensor<2x4x16xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[R:.+]] = tensor.expand_shape %[[G]] {{\[}}[0], [1], [2, 3]] output_shape [2, 4, 4, 4]
// CHECK:         return %[[R]]
func.func @conv3x3(%x: tensor<2x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %acc: tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%acc : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// Dilation scales the window offsets.

// CHECK-DAG: #[[$WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 + d2 * 2, d5 + d3 * 3)>
// CHECK-LABEL: func.func @dilated
// CHECK:         linalg.generic {indexing_maps = [#[[$WIN]],
func.func @dilated(%x: tensor<1x2x8x9xf32>, %w: tensor<2x2x3x3xf32>, %acc: tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<[2, 3]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x8x9xf32>, tensor<2x2x3x3xf32>) outs(%acc : tensor<1x2x4x3xf32>) -> tensor<1x2x4x3xf32>
  return %0 : tensor<1x2x4x3xf32>
}

// -----

// A 1x1 convolution at stride 1 needs no copy: the input, collapsed, is
// the right-hand side.

// CHECK-LABEL: func.func @pointwise
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x8x5x5xf32>
// CHECK:         %[[RHS:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0], [1], [2, 3]] : tensor<1x8x5x5xf32> into tensor<1x8x25xf32>
// CHECK-NOT:     tensor<1x8x1x1x5x5xf32>
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %[[RHS]] : tensor<16x8xf32>, tensor<1x8x25xf32>)
func.func @pointwise(%x: tensor<1x8x5x5xf32>, %w: tensor<16x8x1x1xf32>, %acc: tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x5x5xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  return %0 : tensor<1x16x5x5xf32>
}

// -----

// Integer and dynamically shaped convolutions are left alone.

// CHECK-LABEL: func.func @left_alone
// CHECK:         linalg.conv_2d_nchw_fchw {{.+}} tensor<1x2x5x5xi32>
// CHECK:         linalg.conv_2d_nchw_fchw {{.+}} tensor<?x2x5x5xf32>
// CHECK-NOT:     tensor.collapse_shape
func.func @left_alone(%x: tensor<1x2x5x5xi32>, %w: tensor<2x2x3x3xi32>, %acc: tensor<1x2x3x3xi32>,
                      %y: tensor<?x2x5x5xf32>, %v: tensor<2x2x3x3xf32>, %bcc: tensor<?x2x3x3xf32>) -> (tensor<1x2x3x3xi32>, tensor<?x2x3x3xf32>) {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x5x5xi32>, tensor<2x2x3x3xi32>) outs(%acc : tensor<1x2x3x3xi32>) -> tensor<1x2x3x3xi32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y, %v : tensor<?x2x5x5xf32>, tensor<2x2x3x3xf32>) outs(%bcc : tensor<?x2x3x3xf32>) -> tensor<?x2x3x3xf32>
  return %0, %1 : tensor<1x2x3x3xi32>, tensor<?x2x3x3xf32>
}

// -----

// A 3x3 convolution whose 8x8 output plane two 8-lane vectors divide: the
// windows are written packed, [n, p / 16, c, kh, kw, 16], by an scf.forall
// over (batch, block of 16 positions): each block's positions split into
// rows and columns once (vector divisions), then for each channel every
// tap's two vectors are gathered from the flat input, masked where the
// window leaves the plane (an unsigned compare each way), into one
// [kh, kw, 2, 8] vector that is written once per channel (a chain of a
// write per vector made bufferization's in-place analysis cubic). The GEMM
// contracts the [f, k] weights with the [n, p / 16, k, 16] panels into a
// [n, f, p / 16, 16] view of the accumulator.

// CHECK-DAG: #[[$PW:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>
// CHECK-DAG: #[[$PRHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4, d3)>
// CHECK-DAG: #[[$POUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @packed_panel
// CHECK-SAME:    (%[[X:.+]]: tensor<1x4x10x10xf32>
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2, 3]] : tensor<1x4x10x10xf32> into tensor<400xf32>
// CHECK:         %[[COL:.+]] = scf.forall (%{{.+}}, %{{.+}}) in (1, 4) shared_outs(%{{.+}}) -> (tensor<1x4x4x3x3x16xf32>)
// CHECK-COUNT-2:   arith.divui %{{.+}}, %{{.+}} : vector<8xi32>
// CHECK:           scf.for
// CHECK-COUNT-18:    vector.gather %[[FLAT]][%{{.+}}] [%{{.+}}], %{{.+}}, %{{.+}} : tensor<400xf32>, vector<8xi32>, vector<8xi1>, vector<8xf32> into vector<8xf32>
// CHECK-NOT:         vector.gather
// CHECK-NOT:         vector.transfer_write
// CHECK:             %[[PANEL:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2], [3, 4]] output_shape [4, 3, 3, 2, 8] : tensor<4x3x3x16xf32> into tensor<4x3x3x2x8xf32>
// CHECK:             %[[W:.+]] = vector.transfer_write %{{.+}}, %[[PANEL]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] {in_bounds = [true, true, true, true]} : vector<3x3x2x8xf32>, tensor<4x3x3x2x8xf32>
// CHECK-NOT:         vector.transfer_write
// CHECK:             tensor.collapse_shape %[[W]] {{\[}}[0], [1], [2], [3, 4]] : tensor<4x3x3x2x8xf32> into tensor<4x3x3x16xf32>
// CHECK:         %[[RHS:.+]] = tensor.collapse_shape %[[COL]] {{\[}}[0], [1], [2, 3, 4], [5]] : tensor<1x4x4x3x3x16xf32> into tensor<1x4x36x16xf32>
// CHECK:         %[[G:.+]] = linalg.generic {indexing_maps = [#[[$PW]], #[[$PRHS]], #[[$POUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[RHS]] : tensor<8x36xf32>, tensor<1x4x36x16xf32>) outs(%{{.+}} : tensor<1x8x4x16xf32>)
// CHECK:         %[[F:.+]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1], [2, 3]] : tensor<1x8x4x16xf32> into tensor<1x8x64xf32>
// CHECK:         tensor.expand_shape %[[F]] {{\[}}[0], [1], [2, 3]] output_shape [1, 8, 8, 8]
func.func @packed_panel(%x: tensor<1x4x10x10xf32>, %w: tensor<8x4x3x3xf32>, %acc: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// -----

// The same with bf16 input and weights summed into f32 (--precision=bf16):
// the panel is packed as bf16 by the same vector code, vectors of bf16 as
// wide as the f32 accumulators' (8 lanes here), and the GEMM widens what
// it reads.

// CHECK-LABEL: func.func @bf16_packed_panel
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1, 2, 3]] : tensor<1x4x10x10xbf16> into tensor<400xbf16>
// CHECK:         scf.forall (%{{.+}}, %{{.+}}) in (1, 4) shared_outs(%{{.+}}) -> (tensor<1x4x4x3x3x16xbf16>)
// CHECK-COUNT-18:    vector.gather %[[FLAT]][%{{.+}}] [%{{.+}}], %{{.+}}, %{{.+}} : tensor<400xbf16>, vector<8xi32>, vector<8xi1>, vector<8xbf16> into vector<8xbf16>
// CHECK-NOT:         linalg.generic {{.+}} outs(%{{.+}} : tensor<1x4x4x3x3x16xbf16>)
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<8x36xbf16>, tensor<1x4x36x16xbf16>) outs(%{{.+}} : tensor<1x8x4x16xf32>)
// CHECK:           arith.extf {{.+}} : bf16 to f32
func.func @bf16_packed_panel(%x: tensor<1x4x10x10xbf16>, %w: tensor<8x4x3x3xbf16>, %acc: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x10x10xbf16>, tensor<8x4x3x3xbf16>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// -----

// The same convolution of a zero-padded 8x8 input: the gathers read the
// pad's source (its padding is the masked-off lanes), so the padded copy
// is not needed. A 1x1 stride-1 convolution's blocks are runs of its
// input plane: plain vector reads, no gathers.

// CHECK-LABEL: func.func @padded_panel
// CHECK-SAME:    (%[[X:.+]]: tensor<1x4x8x8xf32>
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2, 3]] : tensor<1x4x8x8xf32> into tensor<256xf32>
// CHECK-COUNT-18: vector.gather %[[FLAT]]
// CHECK-LABEL: func.func @pointwise_panel
// CHECK-SAME:    (%[[X:.+]]: tensor<1x4x8x8xf32>
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2, 3]] : tensor<1x4x8x8xf32> into tensor<256xf32>
// CHECK:         scf.forall (%{{.+}}, %{{.+}}) in (1, 4) shared_outs(%{{.+}}) -> (tensor<1x4x4x1x1x16xf32>)
// CHECK-NOT:       vector.gather
// CHECK-COUNT-2:   vector.transfer_read %[[FLAT]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<256xf32>, vector<8xf32>
// CHECK-NOT:       vector.gather
func.func @padded_panel(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %acc: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x10x10xf32>, tensor<8x4x3x3xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}
func.func @pointwise_panel(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x1x1xf32>, %acc: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<8x4x1x1xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// -----

// At stride 1 along the row, a vector of 8 positions in one output row
// reads a run of 8 consecutive input elements per tap: where the run is
// inside the plane (decided once per block, before the channel loop), a
// plain vector read replaces the gather, which stays for vectors that
// cross a row or reach into the padding. 1x2 windows on a 9-wide plane,
// two vectors per block: four taps-by-vector branches per channel. At
// stride 2 along the row a run is the even lanes of two consecutive
// vectors (two loads, one shuffle) where both lie in the row; at stride 3,
// gathers only.

// CHECK-LABEL: func.func @runs
// CHECK-SAME:    (%[[X:.+]]: tensor<1x1x8x9xf32>
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2, 3]] : tensor<1x1x8x9xf32> into tensor<72xf32>
// CHECK:         scf.for
// CHECK:           scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK:             vector.transfer_read %[[FLAT]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<72xf32>, vector<8xf32>
// CHECK:           } else {
// CHECK:             vector.gather %[[FLAT]]
// CHECK:           scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK:             vector.transfer_read %[[FLAT]]
// CHECK:           } else {
// CHECK:             vector.gather %[[FLAT]]
// CHECK:           scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK:             vector.transfer_read %[[FLAT]]
// CHECK:           } else {
// CHECK:             vector.gather %[[FLAT]]
// CHECK:           scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK:             vector.transfer_read %[[FLAT]]
// CHECK:           } else {
// CHECK:             vector.gather %[[FLAT]]
// CHECK-NOT:       scf.if
// CHECK-LABEL: func.func @strided_row
// CHECK:         %[[SFLAT:.+]] = tensor.collapse_shape
// CHECK:         scf.for
// CHECK:           scf.if %{{.+}} -> (vector<8xf32>) {
// CHECK:             %[[LO:.+]] = vector.transfer_read %[[SFLAT]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<136xf32>, vector<8xf32>
// CHECK:             %[[HI:.+]] = vector.transfer_read %[[SFLAT]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<136xf32>, vector<8xf32>
// CHECK:             vector.shuffle %[[LO]], %[[HI]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<8xf32>, vector<8xf32>
// CHECK:           } else {
// CHECK:             vector.gather %[[SFLAT]]
// CHECK-LABEL: func.func @stride3_row
// CHECK-NOT:       scf.if
// CHECK:           vector.gather
// CHECK-NOT:       scf.if
func.func @runs(%x: tensor<1x1x8x9xf32>, %w: tensor<8x1x1x2xf32>, %acc: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x8x9xf32>, tensor<8x1x1x2xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}
func.func @strided_row(%x: tensor<1x1x8x17xf32>, %w: tensor<8x1x1x2xf32>, %acc: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>} ins(%x, %w : tensor<1x1x8x17xf32>, tensor<8x1x1x2xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}
func.func @stride3_row(%x: tensor<1x1x8x25xf32>, %w: tensor<8x1x1x2xf32>, %acc: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[1, 3]> : tensor<2xi64>} ins(%x, %w : tensor<1x1x8x25xf32>, tensor<8x1x1x2xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

// -----

// bf16 input and weights summed into f32 (--precision=bf16): the windows
// are copied as bf16, the GEMM widens each product's operands and
// accumulates in f32.

// CHECK-LABEL: func.func @bf16_conv
// CHECK:         %[[COL:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<2x3x9x9xbf16>) outs(%{{.+}} : tensor<2x3x3x3x4x4xbf16>)
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<4x27xbf16>, tensor<2x27x16xbf16>) outs(%{{.+}} : tensor<2x4x16xf32>)
// CHECK:           arith.extf {{.+}} : bf16 to f32
// CHECK:           arith.extf {{.+}} : bf16 to f32
// CHECK:           arith.mulf {{.+}} : f32
// CHECK:           arith.addf {{.+}} : f32
// CHECK:         tensor.expand_shape {{.+}} : tensor<2x4x16xf32> into tensor<2x4x4x4xf32>
func.func @bf16_conv(%x: tensor<2x3x9x9xbf16>, %w: tensor<4x3x3x3xbf16>, %acc: tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x3x9x9xbf16>, tensor<4x3x3x3xbf16>) outs(%acc : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// Inputs of different types, or an f16 input into an f64 accumulator, are
// no widening of half values: left alone.

// CHECK-LABEL: func.func @mixed_inputs
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @mixed_inputs(%x: tensor<2x3x9x9xbf16>, %w: tensor<4x3x3x3xf32>, %acc: tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x3x9x9xbf16>, tensor<4x3x3x3xf32>) outs(%acc : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// CHECK-LABEL: func.func @f16_into_f64
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @f16_into_f64(%x: tensor<2x3x9x9xf16>, %w: tensor<4x3x3x3xf16>, %acc: tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x3x9x9xf16>, tensor<4x3x3x3xf16>) outs(%acc : tensor<2x4x4x4xf64>) -> tensor<2x4x4x4xf64>
  return %0 : tensor<2x4x4x4xf64>
}

// -----

// A grouped convolution in the NGCHW form (more groups than the lowering
// splits) is one batched GEMM over the groups: the windows copied into a
// [n, g, c, kh, kw, oh, ow] tensor, collapsed to [n, g, k, p], contracted
// with the weights as [g, f, k] into the accumulator as [n, g, f, p]; the
// group is a batch dim of both operands.

// CHECK-DAG: #[[$GWIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d5 * 2 + d3, d6 * 2 + d4 * 2)>
// CHECK-DAG: #[[$GLHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>
// CHECK-DAG: #[[$GRHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[$GOUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @grouped
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x2x9x9xf32>, %[[W:[^:]+]]: tensor<3x4x2x3x3xf32>, %[[ACC:[^:]+]]: tensor<2x3x4x4x3xf32>
// CHECK:         %[[COL:.+]] = linalg.generic {indexing_maps = [#[[$GWIN]], #{{.+}}], {{.+}}} ins(%[[X]] : tensor<2x3x2x9x9xf32>) outs(%{{.+}} : tensor<2x3x2x3x3x4x3xf32>)
// CHECK:         %[[RHS:.+]] = tensor.collapse_shape %[[COL]] {{\[}}[0], [1], [2, 3, 4], [5, 6]] : tensor<2x3x2x3x3x4x3xf32> into tensor<2x3x18x12xf32>
// CHECK:         %[[LHS:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1], [2, 3, 4]] : tensor<3x4x2x3x3xf32> into tensor<3x4x18xf32>
// CHECK:         %[[C:.+]] = tensor.collapse_shape %[[ACC]] {{\[}}[0], [1], [2], [3, 4]] : tensor<2x3x4x4x3xf32> into tensor<2x3x4x12xf32>
// CHECK:         %[[G:.+]] = linalg.generic {indexing_maps = [#[[$GLHS]], #[[$GRHS]], #[[$GOUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[LHS]], %[[RHS]] : tensor<3x4x18xf32>, tensor<2x3x18x12xf32>) outs(%[[C]] : tensor<2x3x4x12xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[R:.+]] = tensor.expand_shape %[[G]] {{\[}}[0], [1], [2], [3, 4]] output_shape [2, 3, 4, 4, 3]
// CHECK:         return %[[R]]
func.func @grouped(%x: tensor<2x3x2x9x9xf32>, %w: tensor<3x4x2x3x3xf32>, %acc: tensor<2x3x4x4x3xf32>) -> tensor<2x3x4x4x3xf32> {
  %0 = linalg.conv_2d_ngchw_gfchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x3x2x9x9xf32>, tensor<3x4x2x3x3xf32>) outs(%acc : tensor<2x3x4x4x3xf32>) -> tensor<2x3x4x4x3xf32>
  return %0 : tensor<2x3x4x4x3xf32>
}

// -----

// Integer and dynamically shaped grouped convolutions are left alone.

// CHECK-LABEL: func.func @grouped_left_alone
// CHECK:         linalg.conv_2d_ngchw_gfchw {{.+}} tensor<1x2x2x5x5xi32>
// CHECK:         linalg.conv_2d_ngchw_gfchw {{.+}} tensor<?x2x2x5x5xf32>
// CHECK-NOT:     tensor.collapse_shape
func.func @grouped_left_alone(%x: tensor<1x2x2x5x5xi32>, %w: tensor<2x2x2x3x3xi32>, %acc: tensor<1x2x2x3x3xi32>,
                              %y: tensor<?x2x2x5x5xf32>, %v: tensor<2x2x2x3x3xf32>, %bcc: tensor<?x2x2x3x3xf32>) -> (tensor<1x2x2x3x3xi32>, tensor<?x2x2x3x3xf32>) {
  %0 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x2x5x5xi32>, tensor<2x2x2x3x3xi32>) outs(%acc : tensor<1x2x2x3x3xi32>) -> tensor<1x2x2x3x3xi32>
  %1 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y, %v : tensor<?x2x2x5x5xf32>, tensor<2x2x2x3x3xf32>) outs(%bcc : tensor<?x2x2x3x3xf32>) -> tensor<?x2x2x3x3xf32>
  return %0, %1 : tensor<1x2x2x3x3xi32>, tensor<?x2x2x3x3xf32>
}
