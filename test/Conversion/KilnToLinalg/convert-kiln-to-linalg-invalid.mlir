// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg -verify-diagnostics

// Dynamic shapes are not lowered: the error says how to fix the model.
func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{needs static shapes to lower (got 'tensor<?x3xf32>'); give the inputs static shapes with --input-shape}}
  %0 = kiln.relu(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// An op without a lowering is named, never silently dropped.
func.func @unsupported(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.bernoulli' op is not lowered to linalg yet}}
  %0 = kiln.bernoulli(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The Lp ops' p: LpNormalization defines 1 and 2, the pools any p >= 1.
func.func @lp_norm_p(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.lp_normalization' op p must be 1 or 2, not 3}}
  %0 = kiln.lp_normalization(%x) {p = 3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @lp_pool_p(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+1 {{'kiln.lp_pool' op p must be at least 1, not 0}}
  %0 = kiln.lp_pool(%x) {kernel_shape = array<i64: 2, 2>, p = 0 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Run-time reduction axes: the result shape must fit some set of
// reduced dims.
func.func @dynamic_axes(%x: tensor<3x3xf32>, %axes: tensor<1xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{result shape fits no set of reduced dims}}
  %0 = kiln.reduce_sum(%x, %axes) {keepdims = 0 : i64} : (tensor<3x3xf32>, tensor<1xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Unsigned integers reach only the lowerings that honour them; elsewhere
// the op says so rather than computing with signed semantics.
func.func @unsigned_reduce(%x: tensor<2x3xui8>) -> tensor<1x1xui8> {
  // expected-error @+1 {{'kiln.reduce_max' op element type 'ui8' is not supported by the lowering yet}}
  %0 = kiln.reduce_max(%x) : (tensor<2x3xui8>) -> tensor<1x1xui8>
  return %0 : tensor<1x1xui8>
}

// -----

// Einsum labels are letters.
func.func @einsum_invalid_char(%a: tensor<3x4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.einsum' op equation 'i1->i' has an invalid character '1'}}
  %0 = kiln.einsum(%a) {equation = "i1->i"} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// One einsum term per input.
func.func @einsum_term_count(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'kiln.einsum' op equation 'ij->ij' names 1 inputs but the op has 2}}
  %0 = kiln.einsum(%a, %b) {equation = "ij->ij"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Without an ellipsis, a term has one label per dim of its input.
func.func @einsum_rank_mismatch(%a: tensor<2x3x4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.einsum' op term ij has 2 labels for an input of rank 3}}
  %0 = kiln.einsum(%a) {equation = "ij->ij"} : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Every output label must come from an input.
func.func @einsum_unknown_output_label(%a: tensor<3x4xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{'kiln.einsum' op output label 'k' appears in no input}}
  %0 = kiln.einsum(%a) {equation = "ij->ik"} : (tensor<3x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// LRN's window cannot be empty.
func.func @lrn_size_zero(%x: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32> {
  // expected-error @+1 {{'kiln.lrn' op size must be positive, got 0}}
  %0 = kiln.lrn(%x) {size = 0 : i64} : (tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32>
  return %0 : tensor<1x5x2x2xf32>
}

// -----

// ReverseSequence's batch and time axes must differ.
func.func @reverse_sequence_same_axes(%x: tensor<4x3xf32>, %l: tensor<3xi64>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'kiln.reverse_sequence' op batch_axis 1 and time_axis 1 must be distinct dims of the rank-2 input}}
  %0 = kiln.reverse_sequence(%x, %l) {batch_axis = 1 : i64, time_axis = 1 : i64} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// MeanVarianceNormalization's axes must be dims of the input.
func.func @mvn_axis_out_of_range(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+1 {{'kiln.mean_variance_normalization' op axis -4 is out of range for rank 3}}
  %0 = kiln.mean_variance_normalization(%x) {axes = array<i64: 0, -4>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @matmul_integer_bad_zp(%a: tensor<2x4xi8>, %b: tensor<4x3xi8>, %az: tensor<3xi8>) -> tensor<2x3xi32> {
  // expected-error @+1 {{zero point of type 'tensor<3xi8>' does not fit its operand of type 'tensor<2x4xi8>'}}
  %0 = kiln.matmul_integer(%a, %b, %az) : (tensor<2x4xi8>, tensor<4x3xi8>, tensor<3xi8>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @einsum_ellipsis_rank(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{term ...ijk has 3 labels for an input of rank 2}}
  %0 = kiln.einsum(%x) {equation = "...ijk->ij"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @einsum_extent_mismatch(%a: tensor<3x4xf32>, %b: tensor<3x5xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{input of type 'tensor<3x5xf32>' disagrees with the other inputs on the extent of dim 0}}
  %0 = kiln.einsum(%a, %b) {equation = "ij,jk->ik"} : (tensor<3x4xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @einsum_result_type(%a: tensor<3x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result #0 has type 'tensor<4x3xf32>' but its operands imply 'tensor<3xf32>'}}
  %0 = kiln.einsum(%a) {equation = "ij->i"} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// GridSample, RoiAlign and MaxUnpool name each attribute value and operand
// they do not lower.
func.func @grid_sample_mode(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'kiln.grid_sample' op mode 'area' is not supported}}
  %0 = kiln.grid_sample(%x, %g) {mode = "area"} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @grid_sample_padding(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'kiln.grid_sample' op padding_mode 'wrap' is not supported}}
  %0 = kiln.grid_sample(%x, %g) {padding_mode = "wrap"} : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @grid_sample_grid_shape(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x3xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'kiln.grid_sample' op needs a grid of shape (N, D1, ..., Dr, r) for an input of r spatial dims}}
  %0 = kiln.grid_sample(%x, %g) : (tensor<1x1x4x4xf32>, tensor<1x2x2x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @grid_sample_int_grid(%x: tensor<1x1x4x4xf32>, %g: tensor<1x2x2x2xi64>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'kiln.grid_sample' op needs a float grid}}
  %0 = kiln.grid_sample(%x, %g) : (tensor<1x1x4x4xf32>, tensor<1x2x2x2xi64>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @grid_sample_int_linear(%x: tensor<1x1x4x4xi32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xi32> {
  // expected-error @+1 {{'kiln.grid_sample' op interpolating integers is not lowered yet}}
  %0 = kiln.grid_sample(%x, %g) : (tensor<1x1x4x4xi32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xi32>
  return %0 : tensor<1x1x2x2xi32>
}

// -----

func.func @roi_align_mode(%x: tensor<1x1x8x8xf32>, %r: tensor<2x4xf32>, %b: tensor<2xi64>) -> tensor<2x1x1x1xf32> {
  // expected-error @+1 {{'kiln.roi_align' op mode 'sum' is not supported}}
  %0 = kiln.roi_align(%x, %r, %b) {mode = "sum"} : (tensor<1x1x8x8xf32>, tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x1x1x1xf32>
  return %0 : tensor<2x1x1x1xf32>
}

// -----

func.func @roi_align_ctm(%x: tensor<1x1x8x8xf32>, %r: tensor<2x4xf32>, %b: tensor<2xi64>) -> tensor<2x1x1x1xf32> {
  // expected-error @+1 {{'kiln.roi_align' op coordinate_transformation_mode 'align_corners' is not supported}}
  %0 = kiln.roi_align(%x, %r, %b) {coordinate_transformation_mode = "align_corners"} : (tensor<1x1x8x8xf32>, tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x1x1x1xf32>
  return %0 : tensor<2x1x1x1xf32>
}

// -----

func.func @roi_align_rois(%x: tensor<1x1x8x8xf32>, %r: tensor<2x5xf32>, %b: tensor<2xi64>) -> tensor<2x1x1x1xf32> {
  // expected-error @+1 {{'kiln.roi_align' op needs a 4-D input and rois of shape (R, 4)}}
  %0 = kiln.roi_align(%x, %r, %b) : (tensor<1x1x8x8xf32>, tensor<2x5xf32>, tensor<2xi64>) -> tensor<2x1x1x1xf32>
  return %0 : tensor<2x1x1x1xf32>
}

// -----

func.func @roi_align_int(%x: tensor<1x1x8x8xi32>, %r: tensor<2x4xf32>, %b: tensor<2xi64>) -> tensor<2x1x1x1xi32> {
  // expected-error @+1 {{'kiln.roi_align' op needs float input and rois}}
  %0 = kiln.roi_align(%x, %r, %b) : (tensor<1x1x8x8xi32>, tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x1x1x1xi32>
  return %0 : tensor<2x1x1x1xi32>
}

// -----

func.func @max_unpool_shape_mismatch(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> tensor<1x1x5x5xf32> {
  %s = kiln.constant dense<[1, 1, 6, 6]> : tensor<4xi64>
  // expected-error @+1 {{'kiln.max_unpool' op output_shape does not match the result type}}
  %0 = kiln.max_unpool(%x, %i, %s) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

func.func @max_unpool_small(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> tensor<1x1x3x3xf32> {
  %s = kiln.constant dense<[1, 1, 3, 3]> : tensor<4xi64>
  // expected-error @+1 {{'kiln.max_unpool' op output shape [1, 1, 3, 3] cannot hold the unpooled shape [1, 1, 4, 4] (it may only extend the spatial dims)}}
  %0 = kiln.max_unpool(%x, %i, %s) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>, tensor<4xi64>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @max_unpool_kernel(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xi64>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'kiln.max_unpool' op needs a positive kernel_shape and strides and non-negative pads for each of the 2 spatial dims}}
  %0 = kiln.max_unpool(%x, %i) {kernel_shape = array<i64: 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @max_unpool_indices(%x: tensor<1x1x2x2xf32>, %i: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'kiln.max_unpool' op needs X and integer indices I of one shape with spatial dims}}
  %0 = kiln.max_unpool(%x, %i) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Recurrent ops: an attribute value ONNX does not define is named.
func.func @rnn_direction(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error @+1 {{'kiln.rnn' op unknown direction 'sideways'}}
  %0 = kiln.rnn(%x, %w, %r) {hidden_size = 5 : i64, direction = "sideways"} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (none, tensor<1x2x5xf32>)
  return %0 : tensor<1x2x5xf32>
}

// -----

func.func @rnn_layout(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error @+1 {{'kiln.rnn' op unknown layout 2}}
  %0 = kiln.rnn(%x, %w, %r) {layout = 2 : i64} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (none, tensor<1x2x5xf32>)
  return %0 : tensor<1x2x5xf32>
}

// -----

// Activation functions outside the ONNX list are not lowered.
func.func @gru_activation(%x: tensor<4x2x3xf32>, %w: tensor<1x15x3xf32>, %r: tensor<1x15x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error @+1 {{'kiln.gru' op activation function 'Gelu' is not supported}}
  %0 = kiln.gru(%x, %w, %r) {activations = ["Sigmoid", "Gelu"]} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>) -> (none, tensor<1x2x5xf32>)
  return %0 : tensor<1x2x5xf32>
}

// -----

// A bidirectional op names the activation functions of both directions.
func.func @lstm_activations(%x: tensor<4x2x3xf32>, %w: tensor<2x20x3xf32>, %r: tensor<2x20x5xf32>) -> tensor<2x2x5xf32> {
  // expected-error @+1 {{'kiln.lstm' op expects 6 activation functions (per direction: 3), got 3}}
  %0 = kiln.lstm(%x, %w, %r) {direction = "bidirectional", activations = ["Sigmoid", "Tanh", "Tanh"]} : (tensor<4x2x3xf32>, tensor<2x20x3xf32>, tensor<2x20x5xf32>) -> (none, tensor<2x2x5xf32>)
  return %0 : tensor<2x2x5xf32>
}

// -----

// Operand shapes must agree with hidden_size and the gates of the cell.
func.func @rnn_hidden_size(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error @+1 {{'kiln.rnn' op hidden_size 4 disagrees with R's shape 'tensor<1x5x5xf32>'}}
  %0 = kiln.rnn(%x, %w, %r) {hidden_size = 4 : i64} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (none, tensor<1x2x5xf32>)
  return %0 : tensor<1x2x5xf32>
}

// -----

func.func @rnn_bias_shape(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>, %b: tensor<1x8xf32>) -> tensor<1x2x5xf32> {
  // expected-error @+1 {{'kiln.rnn' op expects B of shape [1, 10] and X's element type, got 'tensor<1x8xf32>'}}
  %0 = kiln.rnn(%x, %w, %r, %b) : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>, tensor<1x8xf32>) -> (none, tensor<1x2x5xf32>)
  return %0 : tensor<1x2x5xf32>
}

// -----

func.func @top_k_axis(%x: tensor<3x4xf32>, %k: tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  // expected-error @+1 {{'kiln.topk' op axis 2 is out of range for rank 2}}
  %v, %i = kiln.topk(%x, %k) {axis = 2 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

func.func @top_k_shape(%x: tensor<3x4xf32>, %k: tensor<1xi64>) -> (tensor<3x5xf32>, tensor<3x5xi64>) {
  // expected-error @+1 {{'kiln.topk' op needs values and indices of one shape, the input's but for at most its extent along the axis}}
  %v, %i = kiln.topk(%x, %k) {axis = 1 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  return %v, %i : tensor<3x5xf32>, tensor<3x5xi64>
}

// -----

func.func @hann_window_rank(%n: tensor<i32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'kiln.hann_window' op needs a result of rank 1, got 'tensor<2x5xf32>'}}
  %0 = kiln.hann_window(%n) : (tensor<i32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @dft_components(%x: tensor<1x10x3xf32>) -> tensor<1x10x2xf32> {
  // expected-error @+1 {{'kiln.dft' op needs an input whose last dim is 1 (real) or 2 (complex), got 'tensor<1x10x3xf32>'}}
  %0 = kiln.dft(%x, none, none) : (tensor<1x10x3xf32>) -> tensor<1x10x2xf32>
  return %0 : tensor<1x10x2xf32>
}

// -----

func.func @dft_axis_none_fits(%x: tensor<2x10x1xf32>, %a: tensor<i64>) -> tensor<3x7x2xf32> {
  // expected-error @+1 {{'kiln.dft' op result type 'tensor<3x7x2xf32>' is not the transform of 'tensor<2x10x1xf32>' along any axis}}
  %0 = kiln.dft(%x, none, %a) : (tensor<2x10x1xf32>, tensor<i64>) -> tensor<3x7x2xf32>
  return %0 : tensor<3x7x2xf32>
}

// -----

func.func @irfft_length(%x: tensor<1x6x2xf32>, %l: tensor<i64>) -> tensor<1x10x1xf32> {
  // expected-error @+1 {{'kiln.dft' op an inverse one-sided transform with dft_length is not lowered yet}}
  %0 = kiln.dft(%x, %l) {inverse = 1 : i64, onesided = 1 : i64} : (tensor<1x6x2xf32>, tensor<i64>) -> tensor<1x10x1xf32>
  return %0 : tensor<1x10x1xf32>
}

// -----

func.func @dft_axis_range(%x: tensor<1x10x1xf32>) -> tensor<1x10x2xf32> {
  %a = kiln.constant dense<2> : tensor<i64>
  // expected-error @+1 {{'kiln.dft' op axis 2 is out of range for an input of rank 3}}
  %0 = kiln.dft(%x, none, %a) : (tensor<1x10x1xf32>, tensor<i64>) -> tensor<1x10x2xf32>
  return %0 : tensor<1x10x2xf32>
}

// -----

func.func @dft_result(%x: tensor<2x10x1xf32>) -> tensor<1x10x2xf32> {
  // expected-error @+1 {{'kiln.dft' op result type 'tensor<1x10x2xf32>' is not the complex transform of 'tensor<2x10x1xf32>' along axis 1}}
  %0 = kiln.dft(%x, none, none) : (tensor<2x10x1xf32>) -> tensor<1x10x2xf32>
  return %0 : tensor<1x10x2xf32>
}

// -----

func.func @stft_signal(%x: tensor<1x128xf32>, %s: tensor<i64>, %w: tensor<16xf32>) -> tensor<1x15x9x2xf32> {
  // expected-error @+1 {{'kiln.stft' op needs a signal of shape [batch, length, 1 or 2], got 'tensor<1x128xf32>'}}
  %0 = kiln.stft(%x, %s, %w, none) : (tensor<1x128xf32>, tensor<i64>, tensor<16xf32>) -> tensor<1x15x9x2xf32>
  return %0 : tensor<1x15x9x2xf32>
}

// -----

func.func @stft_result(%x: tensor<1x128x1xf32>, %s: tensor<i64>, %w: tensor<16xf32>) -> tensor<1x15x9xf32> {
  // expected-error @+1 {{'kiln.stft' op needs a result of shape [batch, frames, bins, 2], got 'tensor<1x15x9xf32>'}}
  %0 = kiln.stft(%x, %s, %w, none) : (tensor<1x128x1xf32>, tensor<i64>, tensor<16xf32>) -> tensor<1x15x9xf32>
  return %0 : tensor<1x15x9xf32>
}

// -----

func.func @stft_no_length(%x: tensor<1x128x1xf32>, %s: tensor<i64>) -> tensor<1x15x9x2xf32> {
  // expected-error @+1 {{'kiln.stft' op needs a window or a frame_length}}
  %0 = kiln.stft(%x, %s, none, none) : (tensor<1x128x1xf32>, tensor<i64>) -> tensor<1x15x9x2xf32>
  return %0 : tensor<1x15x9x2xf32>
}

// -----

func.func @mel_weight_matrix_rank(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<f32>, %e: tensor<f32>) -> tensor<72xf32> {
  // expected-error @+1 {{'kiln.mel_weight_matrix' op needs a result of rank 2, got 'tensor<72xf32>'}}
  %0 = kiln.mel_weight_matrix(%a, %b, %c, %d, %e) : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<72xf32>
  return %0 : tensor<72xf32>
}

// -----

func.func @det_not_square(%x: tensor<3x2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.det' op needs float square matrices [..., M, M] and a result of the batch shape, got 'tensor<3x2x3xf32>' -> 'tensor<3xf32>'}}
  %0 = kiln.det(%x) : (tensor<3x2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @crop_without_roi(%x: tensor<1x1x4x4xf32>, %sizes: tensor<4xi64>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{tf_crop_and_resize needs a roi of 8 values}}
  %0 = kiln.resize(%x, none, none, %sizes) {coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x1x4x4xf32>, tensor<4xi64>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// A crop's output extent does not bound the scale, which sizes the
// antialiasing filter: run-time scales are refused.
func.func @antialias_crop_runtime_scales(%x: tensor<1x1x8x8xf32>, %roi: tensor<8xf32>, %s: tensor<4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{'kiln.resize' op antialiased tf_crop_and_resize needs constant scales or sizes (its filter's width follows the scale)}}
  %0 = kiln.resize(%x, %roi, %s, none) {antialias = 1 : i64, coordinate_transformation_mode = "tf_crop_and_resize", mode = "linear"} : (tensor<1x1x8x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// Downscaling by 1/256 with the cubic filter would take 1024 taps a sample.
func.func @antialias_too_wide(%x: tensor<1x1x1x2048xf32>) -> tensor<1x1x1x8xf32> {
  %s = kiln.constant dense<[1.0, 1.0, 1.0, 0.00390625]> : tensor<4xf32>
  // expected-error @+1 {{'kiln.resize' op antialiased downscaling along axis 3 by 0.00390625 needs 1024 taps; at most 256 are lowered}}
  %0 = kiln.resize(%x, none, %s, none) {antialias = 1 : i64, mode = "cubic"} : (tensor<1x1x1x2048xf32>, tensor<4xf32>) -> tensor<1x1x1x8xf32>
  return %0 : tensor<1x1x1x8xf32>
}

// -----

func.func @momentum_mode(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // expected-error @+1 {{'kiln.momentum' op mode 'heavy_ball' is not one of 'standard', 'nesterov'}}
  %0:2 = kiln.momentum(%r, %t, %x, %g, %v) {alpha = 0.9 : f32, beta = 0.1 : f32, mode = "heavy_ball", norm_coefficient = 0.0 : f32} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

func.func @adagrad_inputs(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.adagrad' op needs 3 inputs per optimized tensor after R and T, got 2}}
  %0 = kiln.adagrad(%r, %t, %x, %g) : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @adam_results(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>, %h: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // expected-error @+1 {{'kiln.adam' op needs 3 results for 1 optimized tensors, got 2}}
  %0:2 = kiln.adam(%r, %t, %x, %g, %v, %h) : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

func.func @adagrad_state_type(%r: tensor<f32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %h: tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>) {
  // expected-error @+1 {{'kiln.adagrad' op needs the gradient and states of input #0 of its type 'tensor<2xf32>'}}
  %0:2 = kiln.adagrad(%r, %t, %x, %g, %h) : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<3xf32>
}

// -----

func.func @momentum_vector_r(%r: tensor<2xf32>, %t: tensor<i64>, %x: tensor<2xf32>, %g: tensor<2xf32>, %v: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // expected-error @+1 {{'kiln.momentum' op needs scalar R and T, got 'tensor<2xf32>'}}
  %0:2 = kiln.momentum(%r, %t, %x, %g, %v) {alpha = 0.9 : f32, beta = 0.1 : f32, mode = "standard", norm_coefficient = 0.0 : f32} : (tensor<2xf32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Attention refuses by name what it does not lower.
func.func @attention_window(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  // expected-error @+1 {{sliding-window attention is not lowered yet}}
  %0 = kiln.attention(%q, %q, %q) {left_window_size = 2 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

func.func @attention_heads(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>) -> tensor<1x3x4x8xf32> {
  // expected-error @+1 {{needs K and V of one head count that divides Q's}}
  %0 = kiln.attention(%q, %k, %k) : (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x3x4x8xf32>
  return %0 : tensor<1x3x4x8xf32>
}

// -----

// A Loop's scan output is as long as the loop runs: here the body decides,
// and the scan output feeds another op (a graph output would take the
// data-dependent extent).
func.func @loop_scan_unknown_trips(%x: tensor<3xf32>, %c: tensor<i1>) -> tensor<?x3xf32> {
  %m = kiln.constant dense<4> : tensor<i64>
  // expected-error @+1 {{'kiln.loop' op scan output #0 has type 'tensor<?x3xf32>': its length is the number of iterations, which is known at compile time only for a constant trip count M}}
  %0:2 = kiln.loop(%m, %c, %x) : (tensor<i64>, tensor<i1>, tensor<3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>) {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %v: tensor<3xf32>):
    %1 = kiln.less(%i, %m) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    kiln.yield %1, %v, %v : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  }
  %2 = kiln.relu(%0#1) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}

// -----

func.func @if_shape_per_branch(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'kiln.if' op result #0: the branches yield 'tensor<2xf32>' and 'tensor<3xf32>'; an If whose result shape depends on the branch taken is not supported yet}}
  %0 = kiln.if(%c) : (tensor<i1>) -> tensor<?xf32> {
    kiln.yield %x : tensor<2xf32>
  } {
    kiln.yield %y : tensor<3xf32>
  }
  return %0 : tensor<?xf32>
}

// -----

// RotaryEmbedding: the rotated dims come in pairs, and a 3-D input says
// how many heads it holds.
func.func @rotary_odd(%x: tensor<1x2x3x8xf32>, %c: tensor<4x2xf32>, %p: tensor<1x3xi64>) -> tensor<1x2x3x8xf32> {
  // expected-error @+1 {{'kiln.rotary_embedding' op rotary_embedding_dim 5 must be even and at most the head size 8}}
  %0 = kiln.rotary_embedding(%x, %c, %c, %p) {rotary_embedding_dim = 5 : i64} : (tensor<1x2x3x8xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x3xi64>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

func.func @rotary_heads(%x: tensor<1x3x8xf32>, %c: tensor<1x3x4xf32>) -> tensor<1x3x8xf32> {
  // expected-error @+1 {{'kiln.rotary_embedding' op a 3-D input needs num_heads dividing its hidden size 8}}
  %0 = kiln.rotary_embedding(%x, %c, %c) : (tensor<1x3x8xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}

// -----

func.func @rotary_cache(%x: tensor<1x2x3x8xf32>, %c: tensor<4x3xf32>, %p: tensor<1x3xi64>) -> tensor<1x2x3x8xf32> {
  // expected-error @+1 {{'kiln.rotary_embedding' op cos and sin caches must be [positions, 4] (half the rotated dims)}}
  %0 = kiln.rotary_embedding(%x, %c, %c, %p) : (tensor<1x2x3x8xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<1x3xi64>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

func.func @resize_axis_range(%x: tensor<1x1x2x2xf32>, %s: tensor<1xf32>) -> tensor<1x1x2x4xf32> {
  // expected-error @+1 {{'kiln.resize' op axis 4 is out of range for rank 4}}
  %0 = kiln.resize(%x, none, %s, none) {axes = array<i64: 4>} : (tensor<1x1x2x2xf32>, tensor<1xf32>) -> tensor<1x1x2x4xf32>
  return %0 : tensor<1x1x2x4xf32>
}

// -----

func.func @resize_axis_repeated(%x: tensor<1x1x2x2xf32>, %s: tensor<2xf32>) -> tensor<1x1x2x4xf32> {
  // expected-error @+1 {{'kiln.resize' op axis 3 is repeated}}
  %0 = kiln.resize(%x, none, %s, none) {axes = array<i64: 3, -1>} : (tensor<1x1x2x2xf32>, tensor<2xf32>) -> tensor<1x1x2x4xf32>
  return %0 : tensor<1x1x2x4xf32>
}

// -----

func.func @resize_scales_per_axis(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<1x1x2x4xf32> {
  // expected-error @+1 {{'kiln.resize' op needs one scale per axis (1)}}
  %0 = kiln.resize(%x, none, %s, none) {axes = array<i64: 3>} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x2x4xf32>
  return %0 : tensor<1x1x2x4xf32>
}

// -----

func.func @resize_policy(%x: tensor<1x1x2x2xf32>, %sz: tensor<4xi64>) -> tensor<1x1x2x4xf32> {
  // expected-error @+1 {{'kiln.resize' op keep_aspect_ratio_policy 'fit' is not one of stretch, not_larger, not_smaller}}
  %0 = kiln.resize(%x, none, none, %sz) {keep_aspect_ratio_policy = "fit"} : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<1x1x2x4xf32>
  return %0 : tensor<1x1x2x4xf32>
}

// -----

func.func @resize_policy_sizes(%x: tensor<1x1x2x2xf32>, %sz: tensor<4xi64>) -> tensor<1x1x2x4xf32> {
  // expected-error @+1 {{'kiln.resize' op keep_aspect_ratio_policy 'not_larger' needs sizes, one per axis}}
  %0 = kiln.resize(%x, none, none, %sz) {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger"} : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<1x1x2x4xf32>
  return %0 : tensor<1x1x2x4xf32>
}

// -----

// BitCast to another width: the verifier's shape rule refuses it.
func.func @bit_cast_width(%x: tensor<2xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{'kiln.bit_cast' op to = 7 ('i64', 64 bits) is not the width of the input's 'f32' (32 bits): BitCast keeps the bit width}}
  %0 = kiln.bit_cast(%x) {to = 7 : i64} : (tensor<2xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @group_norm_groups(%x: tensor<2x6x4xf32>, %s: tensor<6xf32>) -> tensor<2x6x4xf32> {
  // expected-error @+1 {{'kiln.group_normalization' op needs num_groups (4) to divide the channels (6)}}
  %0 = kiln.group_normalization(%x, %s, %s) {num_groups = 4 : i64} : (tensor<2x6x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

func.func @group_norm_params(%x: tensor<2x6x4xf32>, %s: tensor<2xf32>) -> tensor<2x6x4xf32> {
  // expected-error @+1 {{'kiln.group_normalization' op needs a scale and bias per channel (6) or per group (3), not 2}}
  %0 = kiln.group_normalization(%x, %s, %s) {num_groups = 3 : i64} : (tensor<2x6x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

// CenterCropPad whose constant shape disagrees with its output type (the
// verifier runs the op's shape rule).
func.func @center_crop_pad_shape(%x: tensor<9x5xf32>) -> tensor<6x8xf32> {
  %s = arith.constant dense<[6, 7]> : tensor<2xi64>
  // expected-error @+1 {{result #0 has type 'tensor<6x8xf32>' but its operands imply 'tensor<6x7xf32>'}}
  %0 = kiln.center_crop_pad(%x, %s) : (tensor<9x5xf32>, tensor<2xi64>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

// CenterCropPad changing a dim its axes do not list.
func.func @center_crop_pad_axes(%x: tensor<9x5xf32>, %s: tensor<1xi64>) -> tensor<6x8xf32> {
  // expected-error @+1 {{result #0 has type 'tensor<6x8xf32>' but its operands imply 'tensor<?x5xf32>'}}
  %0 = kiln.center_crop_pad(%x, %s) {axes = array<i64: 0>} : (tensor<9x5xf32>, tensor<1xi64>) -> tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

// CenterCropPad with an axis out of range.
func.func @center_crop_pad_range(%x: tensor<9x5xf32>, %s: tensor<1xi64>) -> tensor<6x5xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = kiln.center_crop_pad(%x, %s) {axes = array<i64: 2>} : (tensor<9x5xf32>, tensor<1xi64>) -> tensor<6x5xf32>
  return %0 : tensor<6x5xf32>
}

// -----

// AffineGrid whose constant size disagrees with its grid.
func.func @affine_grid_size(%theta: tensor<1x2x3xf32>) -> tensor<1x5x6x2xf32> {
  %size = arith.constant dense<[1, 1, 5, 7]> : tensor<4xi64>
  // expected-error @+1 {{result #0 has type 'tensor<1x5x6x2xf32>' but its operands imply 'tensor<1x5x7x2xf32>'}}
  %0 = kiln.affine_grid(%theta, %size) : (tensor<1x2x3xf32>, tensor<4xi64>) -> tensor<1x5x6x2xf32>
  return %0 : tensor<1x5x6x2xf32>
}

// -----

// AffineGrid with a 3-D theta for a 2-D grid.
func.func @affine_grid_rank(%theta: tensor<1x3x4xf32>, %size: tensor<4xi64>) -> tensor<1x5x6x2xf32> {
  // expected-error @+1 {{theta 'tensor<1x3x4xf32>' does not match a size of 4 entries}}
  %0 = kiln.affine_grid(%theta, %size) : (tensor<1x3x4xf32>, tensor<4xi64>) -> tensor<1x5x6x2xf32>
  return %0 : tensor<1x5x6x2xf32>
}

// -----

func.func @linear_attention_needs_decay(%q: tensor<1x5x8xf32>, %k: tensor<1x5x4xf32>, %v: tensor<1x5x6xf32>, %beta: tensor<1x5x2xf32>) -> (tensor<1x5x12xf32>, tensor<1x2x2x3xf32>) {
  // expected-error @+1 {{'kiln.linear_attention' op update_rule 'gated_delta' needs decay input}}
  %o, %s = kiln.linear_attention(%q, %k, %v, none, none, %beta) {q_num_heads = 4 : i64, kv_num_heads = 2 : i64} : (tensor<1x5x8xf32>, tensor<1x5x4xf32>, tensor<1x5x6xf32>, tensor<1x5x2xf32>) -> (tensor<1x5x12xf32>, tensor<1x2x2x3xf32>)
  return %o, %s : tensor<1x5x12xf32>, tensor<1x2x2x3xf32>
}

// -----

func.func @linear_attention_heads(%q: tensor<1x5x9xf32>, %k: tensor<1x5x6xf32>, %v: tensor<1x5x6xf32>) -> (tensor<1x5x9xf32>, tensor<1x2x3x3xf32>) {
  // expected-error @+1 {{'kiln.linear_attention' op q_num_heads 3 must be a positive multiple of kv_num_heads 2}}
  %o, %s = kiln.linear_attention(%q, %k, %v) {q_num_heads = 3 : i64, kv_num_heads = 2 : i64, update_rule = "linear"} : (tensor<1x5x9xf32>, tensor<1x5x6xf32>, tensor<1x5x6xf32>) -> (tensor<1x5x9xf32>, tensor<1x2x3x3xf32>)
  return %o, %s : tensor<1x5x9xf32>, tensor<1x2x3x3xf32>
}

// -----

func.func @causal_conv_bad_weight(%x: tensor<1x2x5xf32>, %w: tensor<3x1x4xf32>) -> (tensor<1x2x5xf32>, tensor<1x2x3xf32>) {
  // expected-error @+1 {{'kiln.causal_conv_with_state' op needs input [B, C, L] and weight [C, 1, k]}}
  %y, %s = kiln.causal_conv_with_state(%x, %w, none, none) : (tensor<1x2x5xf32>, tensor<3x1x4xf32>) -> (tensor<1x2x5xf32>, tensor<1x2x3xf32>)
  return %y, %s : tensor<1x2x5xf32>, tensor<1x2x3xf32>
}

// -----

func.func @tensor_scatter_long_update(%c: tensor<2x4x5xf32>, %u: tensor<2x6x5xf32>) -> tensor<2x4x5xf32> {
  // expected-error @+1 {{'kiln.tensor_scatter' op needs an update of the cache's shape but for at most its length along axis 1}}
  %0 = kiln.tensor_scatter(%c, %u) : (tensor<2x4x5xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

func.func @quantize_blocked_scale_shape(%x: tensor<3x10xf32>, %s: tensor<3x2xf32>, %z: tensor<3x2xi8>) -> tensor<3x10xi8> {
  // expected-error @+1 {{with block_size 4 along axis 1 needs a scale and zero point of the input's shape but ceil(n / block_size) along the axis, not 'tensor<3x2xf32>'}}
  %0 = kiln.quantize_linear(%x, %s, %z) {axis = 1 : i64, block_size = 4 : i64} : (tensor<3x10xf32>, tensor<3x2xf32>, tensor<3x2xi8>) -> tensor<3x10xi8>
  return %0 : tensor<3x10xi8>
}

// -----

func.func @col2im_channels(%x: tensor<1x5x6xf32>, %img: tensor<2xi64>, %blk: tensor<2xi64>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{needs input [N, C * prod(block_shape), L], a block_shape of one value per image dim and an output [N, C, image dims...]}}
  %0 = kiln.col2_im(%x, %img, %blk) : (tensor<1x5x6xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// DeformConv's offsets: 2 channels per tap and offset group.
func.func @deform_conv_offset_channels(%x: tensor<1x4x6x6xf32>, %w: tensor<6x4x3x3xf32>, %o: tensor<1x10x4x4xf32>) -> tensor<1x6x4x4xf32> {
  // expected-error @+1 {{'kiln.deform_conv' op needs an offset of shape [1, 18, 4, 4], got 'tensor<1x10x4x4xf32>'}}
  %0 = kiln.deform_conv(%x, %w, %o, none, none) : (tensor<1x4x6x6xf32>, tensor<6x4x3x3xf32>, tensor<1x10x4x4xf32>) -> tensor<1x6x4x4xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// -----

// Only the 2-D form of DeformConv is lowered.
func.func @deform_conv_1d(%x: tensor<1x2x8xf32>, %w: tensor<3x2x3xf32>, %o: tensor<1x6x6xf32>) -> tensor<1x3x6xf32> {
  // expected-error @+1 {{'kiln.deform_conv' op only the 2-D form (4-D input, weight and offset) is lowered}}
  %0 = kiln.deform_conv(%x, %w, %o, none, none) : (tensor<1x2x8xf32>, tensor<3x2x3xf32>, tensor<1x6x6xf32>) -> tensor<1x3x6xf32>
  return %0 : tensor<1x3x6xf32>
}

// -----

// TfIdfVectorizer: string pools are not lowered.
func.func @tfidf_strings(%x: tensor<4xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.tf_idf_vectorizer' op string n-grams (pool_strings) are not lowered; integer pools (pool_int64s) are}}
  %0 = kiln.tf_idf_vectorizer(%x) {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 1>, pool_strings = ["a", "b"]} : (tensor<4xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// TfIdfVectorizer: a weight per pool n-gram.
func.func @tfidf_short_weights(%x: tensor<4xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.tf_idf_vectorizer' op needs a weight for each of the pool's 2 n-grams, got 1}}
  %0 = kiln.tf_idf_vectorizer(%x) {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TFIDF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 1>, pool_int64s = array<i64: 3, 4>, weights = array<f32: 1.0>} : (tensor<4xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// TfIdfVectorizer: the output is [B, max(ngram_indexes) + 1] floats.
func.func @tfidf_result_shape(%x: tensor<2x4xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.tf_idf_vectorizer' op needs a float32 result of shape [2, 2], got 'tensor<2x3xf32>'}}
  %0 = kiln.tf_idf_vectorizer(%x) {max_gram_length = 1 : i64, max_skip_count = 0 : i64, min_gram_length = 1 : i64, mode = "TF", ngram_counts = array<i64: 0>, ngram_indexes = array<i64: 0, 1>, pool_int64s = array<i64: 3, 4>} : (tensor<2x4xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
