// RUN: kiln-opt %s -split-input-file -kiln-infer-shapes -verify-diagnostics

// Operands that contradict each other are an error, never a guess: the
// verifier, which runs the same shape functions as the pass, rejects them
// before the pass runs.
func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<?x4xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{operands are not broadcast-compatible}}
  %0 = kiln.add(%a, %b) : (tensor<2x3xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A loop-carried value whose shape changes between iterations is refused
// by name.
func.func @carried_shape_change(%x: tensor<3xf32>) -> tensor<*xf32> {
  %m = kiln.constant dense<2> : tensor<i64>
  // expected-error @+1 {{'kiln.loop' op carried value #0 enters the loop as 'tensor<3xf32>' but the body yields 'tensor<6xf32>': a loop-carried value that changes shape between iterations is not supported}}
  %0 = kiln.loop(%m, none, %x) : (tensor<i64>, tensor<3xf32>) -> tensor<*xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<*xf32>):
    %1 = kiln.concat(%v, %v) {axis = 0 : i64} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
    kiln.yield %c, %1 : tensor<i1>, tensor<*xf32>
  }
  return %0 : tensor<*xf32>
}

// -----

// SequenceMap over two known sequences of different lengths.
func.func @sequence_map_lengths(%a: tensor<2xf32>, %b: tensor<2xf32>) -> !kiln.seq<tensor<*xf32>> {
  %s = kiln.sequence_construct(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
  %t = kiln.sequence_construct(%a) : (tensor<2xf32>) -> !kiln.seq<tensor<2xf32>>
  // expected-error @+1 {{maps sequences of lengths 2 and 1; they must have one length}}
  %m = kiln.sequence_map(%s, %t) : (!kiln.seq<tensor<2xf32>>, !kiln.seq<tensor<2xf32>>) -> !kiln.seq<tensor<*xf32>> {
  ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):
    %0 = kiln.add(%x, %y) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    kiln.yield %0 : tensor<2xf32>
  }
  return %m : !kiln.seq<tensor<*xf32>>
}

// -----

// CenterCropPad whose constant shape has more entries than its axes.
func.func @center_crop_pad_entries(%x: tensor<9x5xf32>) -> tensor<*xf32> {
  %s = kiln.constant dense<[6, 7, 8]> : tensor<3xi64>
  // expected-error @+1 {{'kiln.center_crop_pad' op shape has 3 entries for 2 axes}}
  %0 = kiln.center_crop_pad(%x, %s) : (tensor<9x5xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// AffineGrid with a size of 3 entries.
func.func @affine_grid_size_entries(%theta: tensor<1x2x3xf32>) -> tensor<*xf32> {
  %size = kiln.constant dense<[1, 5, 6]> : tensor<3xi64>
  // expected-error @+1 {{'kiln.affine_grid' op size must have 4 entries (N, C, H, W) or 5 (N, C, D, H, W), not 3}}
  %0 = kiln.affine_grid(%theta, %size) : (tensor<1x2x3xf32>, tensor<3xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// AffineGrid with a theta that is not an affine matrix.
func.func @affine_grid_theta(%theta: tensor<1x4x4xf32>, %size: tensor<4xi64>) -> tensor<*xf32> {
  // expected-error @+1 {{'kiln.affine_grid' op theta must be [N, 2, 3] or [N, 3, 4], not 'tensor<1x4x4xf32>'}}
  %0 = kiln.affine_grid(%theta, %size) : (tensor<1x4x4xf32>, tensor<4xi64>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// BitCast to a type of another width.
func.func @bit_cast_width(%x: tensor<2xf32>) -> tensor<*xi64> {
  // expected-error @+1 {{'kiln.bit_cast' op to = 7 ('i64', 64 bits) is not the width of the input's 'f32' (32 bits): BitCast keeps the bit width}}
  %0 = kiln.bit_cast(%x) {to = 7 : i64} : (tensor<2xf32>) -> tensor<*xi64>
  return %0 : tensor<*xi64>
}

// -----

// BitCast to a string.
func.func @bit_cast_string(%x: tensor<2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'kiln.bit_cast' op to = 8 is not a numeric data type}}
  %0 = kiln.bit_cast(%x) {to = 8 : i64} : (tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// DeformConv's offsets cover the output: spatial dims that contradict the
// window are refused.
func.func @deform_conv_offset_dims(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>, %o: tensor<1x18x5x5xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'kiln.deform_conv' op offset has spatial dim 2 of 5 but the window gives 7}}
  %0 = kiln.deform_conv(%x, %w, %o, none, none) : (tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>, tensor<1x18x5x5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// A run-time position among elements whose shapes differ along two axes:
// no one run-time Slice gives each.
func.func @run_time_position_two_axes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>, %p: tensor<i64>) -> tensor<*xf32> {
  %s = kiln.sequence_construct(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> !kiln.seq<tensor<*xf32>>
  // expected-error @+1 {{'kiln.sequence_at' op chooses at run time among sequence elements whose shapes differ along more than one axis ('tensor<2x3xf32>' and 'tensor<4x5xf32>')}}
  %e = kiln.sequence_at(%s, %p) : (!kiln.seq<tensor<*xf32>>, tensor<i64>) -> tensor<*xf32>
  return %e : tensor<*xf32>
}

// -----

// A run-time position given as a float.
func.func @run_time_position_float(%a: tensor<2xf32>, %b: tensor<2xf32>, %p: tensor<f32>) -> tensor<*xf32> {
  %s = kiln.sequence_construct(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> !kiln.seq<tensor<*xf32>>
  // expected-error @+1 {{'kiln.sequence_at' op needs a position of one integer, got 'tensor<f32>'}}
  %e = kiln.sequence_at(%s, %p) : (!kiln.seq<tensor<*xf32>>, tensor<f32>) -> tensor<*xf32>
  return %e : tensor<*xf32>
}

// -----

// A Loop of run-time trip count that edits a sequence other than by
// appending: its iterations cannot be predicated, and the error says so.
module attributes {kiln.max_sequence_loop_trips = 3 : i64} {
func.func @main(%x: tensor<2xf32>, %m: tensor<i64>) -> (!kiln.seq<tensor<*xf32>> {kiln.name = "s"}) {
  %s = kiln.sequence_construct(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> !kiln.seq<tensor<*xf32>>
  %t = kiln.constant dense<true> : tensor<i1>
  // expected-error @+1 {{'kiln.loop' op carried sequence #0 changes other than by appending in an iteration; with a trip count known only at run time, Kiln supports loops that append (pin the trip count with --input-value)}}
  %r = kiln.loop(%m, %t, %s) : (tensor<i64>, tensor<i1>, !kiln.seq<tensor<*xf32>>) -> !kiln.seq<tensor<*xf32>> {
  ^bb0(%i: tensor<i64>, %ci: tensor<i1>, %acc: !kiln.seq<tensor<*xf32>>):
    %1 = kiln.sequence_erase(%acc) : (!kiln.seq<tensor<*xf32>>) -> !kiln.seq<tensor<*xf32>>
    kiln.yield %ci, %1 : tensor<i1>, !kiln.seq<tensor<*xf32>>
  }
  return %r : !kiln.seq<tensor<*xf32>>
}
}
