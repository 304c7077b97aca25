// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg -verify-diagnostics

// Dynamic shapes are not lowered: the error says how to fix the model.
func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{needs static shapes to lower (got 'tensor<?x3xf32>'); give the inputs static shapes with --input-shape}}
  %0 = kiln.relu(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// An op without a lowering is named, never silently dropped.
func.func @unsupported(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.lp_normalization' op is not lowered to linalg yet}}
  %0 = kiln.lp_normalization(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Run-time reduction axes lower only where the result shape tells which
// dims are reduced: here either dim could have been dropped.
func.func @dynamic_axes(%x: tensor<3x3xf32>, %axes: tensor<1xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{axes must be constant to lower when the result shape does not tell which dims are reduced}}
  %0 = kiln.reduce_sum(%x, %axes) {keepdims = 0 : i64} : (tensor<3x3xf32>, tensor<1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
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
  // expected-error @+1 {{result type 'tensor<4x3xf32>' does not match the equation's output shape}}
  %0 = kiln.einsum(%a) {equation = "ij->i"} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
