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
