// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Result types that contradict the op's shape function are rejected.
func.func @relu_wrong_shape(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'kiln.relu' op result #0 has type 'tensor<3xf32>' but its operands imply 'tensor<4xf32>'}}
  %0 = kiln.relu(%x) : (tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Multidirectional broadcasting needs equal extents or 1.
func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operands are not broadcast-compatible: dimension 1 is 3 in one operand and 4 in another}}
  %0 = kiln.add(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A comparison yields i1, not the operand element type.
func.func @equal_wrong_element(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result #0 has type 'tensor<3xf32>' but its operands imply 'tensor<3xi1>'}}
  %0 = kiln.equal(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{contraction dimensions differ: 3 vs 4}}
  %0 = kiln.matmul(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{input has 3 channels but weight expects 2 x group 1}}
  %0 = kiln.conv(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_group_outputs(%x: tensor<1x8x8xf32>, %w: tensor<6x2x3xf32>) -> tensor<1x6x6xf32> {
  // expected-error @+1 {{weight has 6 output channels, not a multiple of group 4}}
  %0 = kiln.conv(%x, %w) {group = 4 : i64} : (tensor<1x8x8xf32>, tensor<6x2x3xf32>) -> tensor<1x6x6xf32>
  return %0 : tensor<1x6x6xf32>
}

// -----

func.func @reshape_two_inferred(%x: tensor<6xf32>) -> tensor<?x?xf32> {
  %s = kiln.constant dense<[-1, -1]> : tensor<2xi64>
  // expected-error @+1 {{shape has more than one -1}}
  %0 = kiln.reshape(%x, %s) : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

func.func @reshape_count(%x: tensor<6xf32>) -> tensor<4x2xf32> {
  %s = kiln.constant dense<[4, 2]> : tensor<2xi64>
  // expected-error @+1 {{cannot reshape 6 elements into 8}}
  %0 = kiln.reshape(%x, %s) : (tensor<6xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{perm is not a permutation of 0..1}}
  %0 = kiln.transpose(%x) {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @concat_axis(%a: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0 = kiln.concat(%a, %a) {axis = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Operands must be tensors (or kiln sequences and optionals).
func.func @not_a_tensor(%x: f32) -> tensor<f32> {
  // expected-error @+1 {{operand #0 must be a tensor, !kiln.seq or !kiln.opt, got 'f32'}}
  %0 = "kiln.relu"(%x) : (f32) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A required operand cannot be `none`.
func.func @missing_required(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{missing required operand #1}}
  %0 = kiln.add(%x, none) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @too_many_operands(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{too many operands: expected at most 1}}
  %0 = kiln.relu(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @squeeze_non_unit(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %axes = kiln.constant dense<[0]> : tensor<1xi64>
  // expected-error @+1 {{cannot squeeze axis 0 of extent 2}}
  %0 = kiln.squeeze(%x, %axes) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
