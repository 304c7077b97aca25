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

// Run-time reduction axes cannot be lowered to a static reduction.
func.func @dynamic_axes(%x: tensor<2x3xf32>, %axes: tensor<1xi64>) -> tensor<2x1xf32> {
  // expected-error @+1 {{axes must be constant to lower}}
  %0 = kiln.reduce_sum(%x, %axes) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
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
