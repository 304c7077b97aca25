// RUN: kiln-opt %s -split-input-file -kiln-fuse-layers | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-fuse-layers -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// LayerNorm as the TorchScript exporter writes it below opset 17: the mean,
// the centered value feeding the square and the division, the variance,
// epsilon, then the scale and the bias. One LayerNormalization over the
// last axis, named after the chain's first node.

// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:    (%[[X:.+]]: tensor<2x8x32xf32>, %[[G:.+]]: tensor<32xf32>, %[[B:.+]]: tensor<32xf32>)
// CHECK-NEXT:    %[[Y:.+]] = kiln.layer_normalization(%[[X]], %[[G]], %[[B]]) {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK-NEXT:    return %[[Y]]
// LOC:         kiln.layer_normalization{{.*}} loc(#[[LN:.+]])
// LOC:         #[[LN]] = loc("LayerNormalization(/ln/ReduceMean)"
func.func @layer_norm(%x: tensor<2x8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %eps = kiln.constant dense<9.99999996E-13> : tensor<f32>
  %axes = kiln.constant dense<-1> : tensor<1xi64>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %0 = kiln.reduce_mean(%x, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32> loc("/ln/ReduceMean")
  %1 = kiln.sub(%x, %0) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %2 = kiln.pow(%1, %two) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %3 = kiln.reduce_mean(%2, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %4 = kiln.add(%3, %eps) : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %5 = kiln.sqrt(%4) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %6 = kiln.div(%1, %5) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %7 = kiln.mul(%6, %g) : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %8 = kiln.add(%b, %7) : (tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %8 : tensor<2x8x32xf32>
}

// -----

// Over the last two axes (positive), the square as Mul(d, d), the
// reciprocal square root as Reciprocal then Mul, and no scale or bias: a
// scale of ones over the normalized dims.

// CHECK-LABEL: func.func @layer_norm_two_axes
// CHECK:         %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<8x32xf32>
// CHECK:         kiln.layer_normalization(%{{.+}}, %[[ONES]]) {axis = 1 : i64, epsilon = 1.000000e-03 : f32
// CHECK-NOT:     kiln.reduce_mean
func.func @layer_norm_two_axes(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %eps = kiln.constant dense<1.0e-3> : tensor<1xf32>
  %axes = kiln.constant dense<[2, 1]> : tensor<2xi64>
  %0 = kiln.reduce_mean(%x, %axes) : (tensor<2x8x32xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
  %1 = kiln.sub(%x, %0) : (tensor<2x8x32xf32>, tensor<2x1x1xf32>) -> tensor<2x8x32xf32>
  %2 = kiln.mul(%1, %1) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %3 = kiln.reduce_mean(%2, %axes) : (tensor<2x8x32xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
  %4 = kiln.add(%eps, %3) : (tensor<1xf32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %5 = kiln.sqrt(%4) : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %6 = kiln.reciprocal(%5) : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %7 = kiln.mul(%6, %1) : (tensor<2x1x1xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %7 : tensor<2x8x32xf32>
}

// -----

// Chains that must stay as they are:
// - a mean over a middle axis (not trailing);
// - a scale that varies over a dim that is not normalized ([2, 1, 1]
//   against [2, 8, 32] normalized over the last axis): the normalization
//   fuses, the Mul stays after it;
// - an epsilon that is a runtime input;
// - a centered value with a user outside the chain.

// CHECK-LABEL: func.func @layer_norm_middle_axis
// CHECK-NOT:     kiln.layer_normalization
// CHECK:         kiln.div
func.func @layer_norm_middle_axis(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %0 = kiln.reduce_mean(%x, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x1x32xf32>
  %1 = kiln.sub(%x, %0) : (tensor<2x8x32xf32>, tensor<2x1x32xf32>) -> tensor<2x8x32xf32>
  %2 = kiln.pow(%1, %two) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %3 = kiln.reduce_mean(%2, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x1x32xf32>
  %4 = kiln.add(%3, %eps) : (tensor<2x1x32xf32>, tensor<f32>) -> tensor<2x1x32xf32>
  %5 = kiln.sqrt(%4) : (tensor<2x1x32xf32>) -> tensor<2x1x32xf32>
  %6 = kiln.div(%1, %5) : (tensor<2x8x32xf32>, tensor<2x1x32xf32>) -> tensor<2x8x32xf32>
  return %6 : tensor<2x8x32xf32>
}

// CHECK-LABEL: func.func @layer_norm_scale_mismatch
// CHECK:         %[[N:.+]] = kiln.layer_normalization(%{{.+}}, %{{.+}}) {axis = 2 : i64
// CHECK:         kiln.mul(%[[N]], %{{.+}}) : (tensor<2x8x32xf32>, tensor<2x1x1xf32>)
func.func @layer_norm_scale_mismatch(%x: tensor<2x8x32xf32>, %g: tensor<2x1x1xf32>) -> tensor<2x8x32xf32> {
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %axes = kiln.constant dense<-1> : tensor<1xi64>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %0 = kiln.reduce_mean(%x, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %1 = kiln.sub(%x, %0) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %2 = kiln.pow(%1, %two) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %3 = kiln.reduce_mean(%2, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %4 = kiln.add(%3, %eps) : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %5 = kiln.sqrt(%4) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %6 = kiln.div(%1, %5) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %7 = kiln.mul(%6, %g) : (tensor<2x8x32xf32>, tensor<2x1x1xf32>) -> tensor<2x8x32xf32>
  return %7 : tensor<2x8x32xf32>
}

// CHECK-LABEL: func.func @layer_norm_runtime_eps
// CHECK-NOT:     kiln.layer_normalization
// CHECK:         kiln.div
func.func @layer_norm_runtime_eps(%x: tensor<2x8x32xf32>, %eps: tensor<f32>) -> tensor<2x8x32xf32> {
  %axes = kiln.constant dense<-1> : tensor<1xi64>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %0 = kiln.reduce_mean(%x, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %1 = kiln.sub(%x, %0) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %2 = kiln.pow(%1, %two) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %3 = kiln.reduce_mean(%2, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %4 = kiln.add(%3, %eps) : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %5 = kiln.sqrt(%4) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %6 = kiln.div(%1, %5) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  return %6 : tensor<2x8x32xf32>
}

// CHECK-LABEL: func.func @layer_norm_shared_center
// CHECK-NOT:     kiln.layer_normalization
// CHECK-NOT:     kiln.rms_normalization
// CHECK:         kiln.div
func.func @layer_norm_shared_center(%x: tensor<2x8x32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %axes = kiln.constant dense<-1> : tensor<1xi64>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %0 = kiln.reduce_mean(%x, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %1 = kiln.sub(%x, %0) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %2 = kiln.pow(%1, %two) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %3 = kiln.reduce_mean(%2, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %4 = kiln.add(%3, %eps) : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %5 = kiln.sqrt(%4) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %6 = kiln.div(%1, %5) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  return %6, %1 : tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

// -----

// RMSNorm as both exporters write it: Pow, ReduceMean, Add, Sqrt, then
// Reciprocal (torch.export) or Div(1, .) (TorchScript), Mul(x, .), Mul by
// the weight.

// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME:    (%[[X:.+]]: tensor<2x8x32xf32>, %[[W:.+]]: tensor<32xf32>)
// CHECK-NEXT:    %[[A:.+]] = kiln.rms_normalization(%[[X]], %[[W]]) {axis = 2 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT:    %[[B:.+]] = kiln.rms_normalization(%[[X]], %[[W]]) {axis = 2 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @rms_norm(%x: tensor<2x8x32xf32>, %w: tensor<32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  %eps = kiln.constant dense<1.0e-6> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %axes = kiln.constant dense<2> : tensor<1xi64>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %0 = kiln.pow(%x, %two) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %1 = kiln.reduce_mean(%0, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %2 = kiln.add(%1, %eps) : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %3 = kiln.sqrt(%2) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %4 = kiln.reciprocal(%3) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %5 = kiln.mul(%x, %4) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %6 = kiln.mul(%5, %w) : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %10 = kiln.pow(%x, %two) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %11 = kiln.reduce_mean(%10, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %12 = kiln.add(%11, %eps) : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %13 = kiln.sqrt(%12) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %14 = kiln.div(%one, %13) : (tensor<f32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %15 = kiln.mul(%x, %14) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %16 = kiln.mul(%15, %w) : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %6, %16 : tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

// -----

// An RMSNorm whose mean of squares has another user, and one that divides
// by something other than 1, stay.

// CHECK-LABEL: func.func @rms_norm_not
// CHECK-NOT:     kiln.rms_normalization
func.func @rms_norm_not(%x: tensor<2x8x32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x1xf32>, tensor<2x8x32xf32>) {
  %eps = kiln.constant dense<1.0e-6> : tensor<f32>
  %three = kiln.constant dense<3.0> : tensor<f32>
  %axes = kiln.constant dense<-1> : tensor<1xi64>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %0 = kiln.pow(%x, %two) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %1 = kiln.reduce_mean(%0, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %2 = kiln.add(%1, %eps) : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %3 = kiln.sqrt(%2) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %4 = kiln.div(%x, %3) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %10 = kiln.pow(%x, %two) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %11 = kiln.reduce_mean(%10, %axes) : (tensor<2x8x32xf32>, tensor<1xi64>) -> tensor<2x8x1xf32>
  %12 = kiln.add(%11, %eps) : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %13 = kiln.sqrt(%12) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %14 = kiln.div(%three, %13) : (tensor<f32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %15 = kiln.mul(%x, %14) : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  return %4, %1, %15 : tensor<2x8x32xf32>, tensor<2x8x1xf32>, tensor<2x8x32xf32>
}

// -----

// GELU, erf form, in the TorchScript exporter's association (x * a, then
// * 0.5) and torch.export's (0.5 * a, then * x), with x / sqrt(2) or
// x * sqrt(1/2).

// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME:    (%[[X:.+]]: tensor<4x16xf32>)
// CHECK-NEXT:    %[[A:.+]] = kiln.gelu(%[[X]]) : (tensor<4x16xf32>)
// CHECK-NEXT:    %[[B:.+]] = kiln.gelu(%[[X]]) : (tensor<4x16xf32>)
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @gelu_erf(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %rsqrt2 = kiln.constant dense<0.707106769> : tensor<1xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.div(%x, %sqrt2) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %1 = kiln.erf(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = kiln.add(%1, %one) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %3 = kiln.mul(%x, %2) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = kiln.mul(%3, %half) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %10 = kiln.mul(%rsqrt2, %x) : (tensor<1xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %11 = kiln.erf(%10) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %12 = kiln.add(%one, %11) : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %13 = kiln.mul(%half, %12) : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %14 = kiln.mul(%x, %13) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %4, %14 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// GELU, tanh form: x^3 as two Muls with every constant first (TorchScript
// exporter), and as Pow with 0.5 * x computed aside (GPT-2's gelu_new).

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME:    (%[[X:.+]]: tensor<4x16xf32>)
// CHECK-NEXT:    %[[A:.+]] = kiln.gelu(%[[X]]) {approximate = "tanh"}
// CHECK-NEXT:    %[[B:.+]] = kiln.gelu(%[[X]]) {approximate = "tanh"}
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @gelu_tanh(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %k = kiln.constant dense<0.797884583> : tensor<f32>
  %c = kiln.constant dense<0.044715> : tensor<f32>
  %three = kiln.constant dense<3.0> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.mul(%x, %x) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = kiln.mul(%x, %0) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = kiln.mul(%c, %1) : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = kiln.add(%x, %2) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = kiln.mul(%k, %3) : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %5 = kiln.tanh(%4) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %6 = kiln.add(%one, %5) : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %7 = kiln.mul(%x, %6) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %8 = kiln.mul(%half, %7) : (tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %10 = kiln.mul(%x, %half) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %11 = kiln.pow(%x, %three) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %12 = kiln.mul(%11, %c) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %13 = kiln.add(%x, %12) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %14 = kiln.mul(%13, %k) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %15 = kiln.tanh(%14) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %16 = kiln.add(%15, %one) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %17 = kiln.mul(%10, %16) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %8, %17 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Not GELU: a wrong constant (x / 2 instead of x / sqrt(2)), and an erf
// whose 1 + erf has a second user.

// CHECK-LABEL: func.func @gelu_not
// CHECK-NOT:     kiln.gelu
func.func @gelu_not(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %sqrt2 = kiln.constant dense<1.41421354> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %0 = kiln.div(%x, %two) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %1 = kiln.erf(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = kiln.add(%1, %one) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %3 = kiln.mul(%x, %2) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %4 = kiln.mul(%3, %half) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %10 = kiln.div(%x, %sqrt2) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %11 = kiln.erf(%10) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %12 = kiln.add(%11, %one) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %13 = kiln.mul(%x, %12) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %14 = kiln.mul(%13, %half) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %4, %14, %12 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// SiLU: x * sigmoid(x), either order, is Swish with alpha 1; a sigmoid of
// one value times another value is not.

// CHECK-LABEL: func.func @silu
// CHECK-SAME:    (%[[X:.+]]: tensor<4x16xf32>, %[[Z:.+]]: tensor<4x16xf32>)
// CHECK-NEXT:    %[[A:.+]] = kiln.swish(%[[X]]) : (tensor<4x16xf32>)
// CHECK-NEXT:    %[[S:.+]] = kiln.sigmoid(%[[X]])
// CHECK-NEXT:    %[[B:.+]] = kiln.mul(%[[S]], %[[Z]])
// CHECK-NEXT:    return %[[A]], %[[B]]
func.func @silu(%x: tensor<4x16xf32>, %z: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = kiln.sigmoid(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = kiln.mul(%0, %x) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = kiln.sigmoid(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = kiln.mul(%2, %z) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %1, %3 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Attention as a hand-written module writes it: K^T a Transpose of K, the
// product divided by sqrt(d), softmax, times V. K goes to the op as it is
// (the Transpose composed with the swap is the identity); the scale is
// 1 / sqrt(16).

// CHECK-LABEL: func.func @attention
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x4x8x16xf32>, %[[K:.+]]: tensor<2x4x8x16xf32>, %[[V:.+]]: tensor<2x4x8x16xf32>)
// CHECK-NEXT:    %[[Y:.+]] = kiln.attention(%[[Q]], %[[K]], %[[V]]) {scale = 2.500000e-01 : f32}
// CHECK-NEXT:    return %[[Y]]
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %c4 = kiln.constant dense<4.0> : tensor<f32>
  %kt = kiln.transpose(%k) {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x8x16xf32>) -> tensor<2x4x16x8xf32>
  %s = kiln.matmul(%q, %kt) : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %d = kiln.div(%s, %c4) : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %p = kiln.softmax(%d) {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y = kiln.matmul(%p, %v) : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// SDPA as the exporters write Hugging Face's attention: K^T a [0, 2, 3, 1]
// Transpose of the [B, S, H, D] view, Q and K^T each times d^-1/4, an
// additive mask, then the guard Where(IsNaN(P), 0, P). Behind a finite
// mask (a Where between 0 and float32 min) the guard goes; behind a -inf
// one it stays as kiln.zero_nan_rows. K is the [B, S, H, D] view
// transposed by [0, 2, 1, 3].

// CHECK-LABEL: func.func @sdpa
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x4x8x16xf32>, %[[KV:.+]]: tensor<1x8x4x16xf32>, %[[V:.+]]: tensor<1x4x8x16xf32>, %[[C:.+]]: tensor<1x1x8x8xi1>)
// CHECK-DAG:     %[[FINITE:.+]] = kiln.where(%[[C]]
// CHECK-DAG:     %[[NEGINF:.+]] = kiln.where(%[[C]]
// CHECK:         %[[K:.+]] = kiln.transpose(%[[KV]]) {perm = array<i64: 0, 2, 1, 3>}
// CHECK:         %[[A:.+]] = kiln.attention(%[[Q]], %[[K]], %[[V]], %[[FINITE]]) {scale = 2.500000e-01 : f32}
// CHECK:         %[[K2:.+]] = kiln.transpose(%[[KV]]) {perm = array<i64: 0, 2, 1, 3>}
// CHECK:         %[[B:.+]] = kiln.attention(%[[Q]], %[[K2]], %[[V]], %[[NEGINF]]) {kiln.zero_nan_rows, scale = 2.500000e-01 : f32}
// CHECK-NOT:     kiln.softmax
// CHECK:         return %[[A]], %[[B]]
func.func @sdpa(%q: tensor<1x4x8x16xf32>, %kv: tensor<1x8x4x16xf32>, %v: tensor<1x4x8x16xf32>, %c: tensor<1x1x8x8xi1>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) {
  %half = kiln.constant dense<0.5> : tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %min = kiln.constant dense<-3.40282347E+38> : tensor<f32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<f32>
  %finite = kiln.where(%c, %zero, %min) : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x8x8xf32>
  %neginf = kiln.where(%c, %zero, %ninf) : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x8x8xf32>
  %kt = kiln.transpose(%kv) {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x4x16xf32>) -> tensor<1x4x16x8xf32>
  %qs = kiln.mul(%q, %half) : (tensor<1x4x8x16xf32>, tensor<f32>) -> tensor<1x4x8x16xf32>
  %ks = kiln.mul(%kt, %half) : (tensor<1x4x16x8xf32>, tensor<f32>) -> tensor<1x4x16x8xf32>
  %s = kiln.matmul(%qs, %ks) : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
  %b = kiln.add(%s, %finite) : (tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p = kiln.softmax(%b) {axis = -1 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %n = kiln.is_nan(%p) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xi1>
  %g = kiln.where(%n, %zero, %p) : (tensor<1x4x8x8xi1>, tensor<f32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y = kiln.matmul(%g, %v) : (tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  %kt2 = kiln.transpose(%kv) {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x4x16xf32>) -> tensor<1x4x16x8xf32>
  %qs2 = kiln.mul(%q, %half) : (tensor<1x4x8x16xf32>, tensor<f32>) -> tensor<1x4x8x16xf32>
  %ks2 = kiln.mul(%kt2, %half) : (tensor<1x4x16x8xf32>, tensor<f32>) -> tensor<1x4x16x8xf32>
  %s2 = kiln.matmul(%qs2, %ks2) : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
  %b2 = kiln.add(%neginf, %s2) : (tensor<1x1x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p2 = kiln.softmax(%b2) {axis = 3 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %n2 = kiln.is_nan(%p2) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xi1>
  %g2 = kiln.where(%n2, %zero, %p2) : (tensor<1x4x8x8xi1>, tensor<f32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y2 = kiln.matmul(%g2, %v) : (tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %y, %y2 : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
}

// -----

// Not attention:
// - a mask that broadcasts over the keys ([1, 1, 8, 1]: one value per
//   query row);
// - a softmax over the query axis;
// - scores with a second user;
// - K with one batch where Q has two (MatMul broadcasts it);
// - a scalar mask (one value for every key).

// CHECK-LABEL: func.func @attention_not
// CHECK-NOT:     kiln.attention
func.func @attention_not(%q: tensor<2x4x8x16xf32>, %kt: tensor<2x4x16x8xf32>, %kt1: tensor<1x4x16x8xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<1x1x8x1xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %s = kiln.matmul(%q, %kt) : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %b = kiln.add(%s, %m) : (tensor<2x4x8x8xf32>, tensor<1x1x8x1xf32>) -> tensor<2x4x8x8xf32>
  %p = kiln.softmax(%b) {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y = kiln.matmul(%p, %v) : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %s2 = kiln.matmul(%q, %kt) : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %p2 = kiln.softmax(%s2) {axis = 2 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y2 = kiln.matmul(%p2, %v) : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %s3 = kiln.matmul(%q, %kt) : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %p3 = kiln.softmax(%s3) {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y3 = kiln.matmul(%p3, %v) : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %s4 = kiln.matmul(%q, %kt1) : (tensor<2x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %p4 = kiln.softmax(%s4) {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y4 = kiln.matmul(%p4, %v) : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %c = kiln.constant dense<1.0> : tensor<f32>
  %s5 = kiln.matmul(%q, %kt) : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %b5 = kiln.add(%s5, %c) : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %p5 = kiln.softmax(%b5) {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %y5 = kiln.matmul(%p5, %v) : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y, %y2, %y3, %s3, %y4, %y5 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}
