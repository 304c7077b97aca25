// RUN: kiln-opt %s -split-input-file -canonicalize | FileCheck %s

// The Shape -> Gather -> Unsqueeze -> Concat chain that exporters emit for
// `x.view(x.size(0), -1)` folds to a constant once the shape is static.

// CHECK-LABEL: func.func @shape_chain
// CHECK-DAG:     %[[S:.+]] = kiln.constant dense<[2, -1]> : tensor<2xi64>
// CHECK:         %[[R:.+]] = kiln.reshape(%{{.+}}, %[[S]]) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
// CHECK-NOT:     kiln.shape
// CHECK-NOT:     kiln.gather
// CHECK:         return %[[R]]
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %shape = kiln.shape(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %zero = kiln.constant dense<0> : tensor<i64>
  %n = kiln.gather(%shape, %zero) : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %axes = kiln.constant dense<[0]> : tensor<1xi64>
  %n1 = kiln.unsqueeze(%n, %axes) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %minus1 = kiln.constant dense<[-1]> : tensor<1xi64>
  %target = kiln.concat(%n1, %minus1) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %y = kiln.reshape(%x, %target) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  return %y : tensor<2x12xf32>
}

// -----

// A dynamic dim blocks folding of Shape: nothing may be invented.

// CHECK-LABEL: func.func @shape_dynamic
// CHECK:         kiln.shape
func.func @shape_dynamic(%x: tensor<?x3xf32>) -> tensor<2xi64> {
  %shape = kiln.shape(%x) : (tensor<?x3xf32>) -> tensor<2xi64>
  return %shape : tensor<2xi64>
}

// -----

// Elementwise arithmetic on small constants, with broadcasting; integer
// division truncates as ONNX's does and division by zero is left alone.

// CHECK-LABEL: func.func @arith
// CHECK-DAG:     kiln.constant dense<[5, 7, 9]> : tensor<3xi64>
// CHECK-DAG:     kiln.constant dense<[-1, 0, 1]> : tensor<3xi64>
// CHECK-DAG:     kiln.constant dense<[8.000000e+00, 1.000000e+01, 1.200000e+01]> : tensor<3xf32>
// CHECK-DAG:     kiln.constant dense<[-3, 2]> : tensor<2xi64>
// CHECK:         kiln.div
// CHECK-NOT:     kiln.add
// CHECK-NOT:     kiln.mul
func.func @arith() -> (tensor<3xi64>, tensor<3xi64>, tensor<3xf32>, tensor<2xi64>, tensor<2xi64>) {
  %a = kiln.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = kiln.constant dense<[4, 5, 6]> : tensor<3xi64>
  %two = kiln.constant dense<2> : tensor<i64>
  %0 = kiln.add(%a, %b) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = kiln.sub(%a, %two) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %f = kiln.constant dense<[4.0, 5.0, 6.0]> : tensor<3xf32>
  %ftwo = kiln.constant dense<2.0> : tensor<f32>
  %2 = kiln.mul(%f, %ftwo) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %n = kiln.constant dense<[-7, 5]> : tensor<2xi64>
  %3 = kiln.div(%n, %two) : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %zero = kiln.constant dense<[0, 1]> : tensor<2xi64>
  %4 = kiln.div(%n, %zero) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0, %1, %2, %3, %4 : tensor<3xi64>, tensor<3xi64>, tensor<3xf32>, tensor<2xi64>, tensor<2xi64>
}

// -----

// Identity and same-type Cast disappear; integer Cast of a constant folds.

// CHECK-LABEL: func.func @identity_cast
// CHECK-DAG:     %[[C:.+]] = kiln.constant dense<[1, -2]> : tensor<2xi32>
// CHECK:         return %arg0, %arg0, %[[C]]
func.func @identity_cast(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xi32>) {
  %0 = kiln.identity(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = kiln.cast(%x) {to = f32} : (tensor<2xf32>) -> tensor<2xf32>
  %c = kiln.constant dense<[1, -2]> : tensor<2xi64>
  %2 = kiln.cast(%c) {to = i32} : (tensor<2xi64>) -> tensor<2xi32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xi32>
}

// -----

// The scale SDPA's TorchScript export computes from Q's shape folds: an
// integer Cast to float (16777217 rounds to nearest even), then Sqrt and
// Div. A float Cast and a float8 target stay (rounding and saturation
// modes), and so does Sqrt of f16.

// CHECK-LABEL: func.func @scale_from_shape
// CHECK-DAG:     %[[F:.+]] = kiln.constant dense<[6.400000e+01, 0x4B800000]> : tensor<2xf32>
// CHECK-DAG:     %[[S:.+]] = kiln.constant dense<1.250000e-01> : tensor<1xf32>
// CHECK-DAG:     kiln.cast(%{{.+}}) {to = f16}
// CHECK-DAG:     kiln.cast(%{{.+}}) {to = f8E4M3FN}
// CHECK-DAG:     kiln.sqrt(%{{.+}}) : (tensor<1xf16>)
// CHECK:         return %[[F]], %[[S]]
func.func @scale_from_shape() -> (tensor<2xf32>, tensor<1xf32>, tensor<1xf16>, tensor<1xf8E4M3FN>, tensor<1xf16>) {
  %n = kiln.constant dense<[64, 16777217]> : tensor<2xi64>
  %d = kiln.constant dense<64> : tensor<1xi64>
  %one = kiln.constant dense<1.0> : tensor<1xf32>
  %h = kiln.constant dense<2.0> : tensor<1xf16>
  %0 = kiln.cast(%n) {to = f32} : (tensor<2xi64>) -> tensor<2xf32>
  %1 = kiln.cast(%d) {to = f32} : (tensor<1xi64>) -> tensor<1xf32>
  %2 = kiln.sqrt(%1) : (tensor<1xf32>) -> tensor<1xf32>
  %3 = kiln.div(%one, %2) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %4 = kiln.cast(%one) {to = f16} : (tensor<1xf32>) -> tensor<1xf16>
  %5 = kiln.cast(%d) {to = f8E4M3FN} : (tensor<1xi64>) -> tensor<1xf8E4M3FN>
  %6 = kiln.sqrt(%h) : (tensor<1xf16>) -> tensor<1xf16>
  return %0, %3, %4, %5, %6 : tensor<2xf32>, tensor<1xf32>, tensor<1xf16>, tensor<1xf8E4M3FN>, tensor<1xf16>
}

// -----

// Reshape-like ops of a constant fold into a constant of the new shape.

// CHECK-LABEL: func.func @reshape_const
// CHECK:         kiln.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK:         kiln.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
func.func @reshape_const() -> (tensor<2x2xi64>, tensor<4xi64>) {
  %c = kiln.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %s = kiln.constant dense<[2, 2]> : tensor<2xi64>
  %0 = kiln.reshape(%c, %s) : (tensor<4xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %1 = kiln.flatten(%0) {axis = 0 : i64} : (tensor<2x2xi64>) -> tensor<1x4xi64>
  %axes = kiln.constant dense<[0]> : tensor<1xi64>
  %2 = kiln.squeeze(%1, %axes) : (tensor<1x4xi64>, tensor<1xi64>) -> tensor<4xi64>
  return %0, %2 : tensor<2x2xi64>, tensor<4xi64>
}

// -----

// Integer Mod folds with the divisor's sign (fmod = 0) or the dividend's
// (fmod = 1); a zero divisor is left to run time.

// CHECK-LABEL: func.func @fold_mod
// CHECK-DAG:     kiln.constant dense<[1, -2, 2, -1]> : tensor<4xi64>
// CHECK-DAG:     kiln.constant dense<[1, 1, -1, -1]> : tensor<4xi64>
// CHECK:         kiln.mod
func.func @fold_mod() -> (tensor<4xi64>, tensor<4xi64>, tensor<1xi64>) {
  %a = kiln.constant dense<[7, 7, -7, -7]> : tensor<4xi64>
  %b = kiln.constant dense<[3, -3, 3, -3]> : tensor<4xi64>
  %z = kiln.constant dense<0> : tensor<1xi64>
  %0 = kiln.mod(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = kiln.mod(%a, %b) {fmod = 1 : i64} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = kiln.mod(%z, %z) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %0, %1, %2 : tensor<4xi64>, tensor<4xi64>, tensor<1xi64>
}

// -----

// A Reshape of a Reshape (or a Flatten) to a shape without 0 entries
// reshapes the first one's input; one with a 0 (copy that dim from its
// input) keeps reading the first Reshape.
// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME:    (%[[X:.+]]: tensor<2x16xi1>)
// CHECK:         %[[A:.+]] = kiln.reshape(%[[X]], %{{.+}}) : (tensor<2x16xi1>, tensor<4xi64>) -> tensor<2x1x1x16xi1>
// CHECK:         %[[F:.+]] = kiln.flatten(%[[X]])
// CHECK:         %[[B:.+]] = kiln.reshape(%[[F]], %{{.+}}) : (tensor<32x1xi1>, tensor<3xi64>) -> tensor<32x1x1xi1>
// CHECK:         return %[[A]], %[[B]]
func.func @reshape_chain(%x: tensor<2x16xi1>) -> (tensor<2x1x1x16xi1>, tensor<32x1x1xi1>) {
  %s5 = kiln.constant dense<[2, 1, 1, 16, 1]> : tensor<5xi64>
  %s4 = kiln.constant dense<[2, 1, 1, 16]> : tensor<4xi64>
  %s3 = kiln.constant dense<[0, 1, 1]> : tensor<3xi64>
  %a = kiln.reshape(%x, %s5) : (tensor<2x16xi1>, tensor<5xi64>) -> tensor<2x1x1x16x1xi1>
  %b = kiln.reshape(%a, %s4) : (tensor<2x1x1x16x1xi1>, tensor<4xi64>) -> tensor<2x1x1x16xi1>
  %f = kiln.flatten(%x) {axis = 2 : i64} : (tensor<2x16xi1>) -> tensor<32x1xi1>
  %c = kiln.reshape(%f, %s3) : (tensor<32x1xi1>, tensor<3xi64>) -> tensor<32x1x1xi1>
  return %b, %c : tensor<2x1x1x16xi1>, tensor<32x1x1xi1>
}

// -----

// Comparisons and logic on constants, as ONNX's expanded functions (the
// Attention-23 function's is_causal and GQA head count) compute shapes:
// signed integer order, NaN unordered, bitwise logic on i1.

// CHECK-LABEL: func.func @compare_logic
// CHECK-DAG:     %[[LT:.+]] = kiln.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG:     %[[LE:.+]] = kiln.constant dense<[true, true, false]> : tensor<3xi1>
// CHECK-DAG:     %[[GT:.+]] = kiln.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG:     %[[FGE:.+]] = kiln.constant dense<[true, false]> : tensor<2xi1>
// CHECK-DAG:     %[[AND:.+]] = kiln.constant dense<false> : tensor<3xi1>
// CHECK-DAG:     %[[OR:.+]] = kiln.constant dense<true> : tensor<3xi1>
// CHECK-DAG:     %[[XOR:.+]] = kiln.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NOT:     kiln.less
// CHECK-NOT:     kiln.greater
// CHECK-NOT:     kiln.and
// CHECK-NOT:     kiln.or
// CHECK-NOT:     kiln.xor
// CHECK-NOT:     kiln.not
// CHECK:         return %[[LT]], %[[LE]], %[[GT]], %[[FGE]], %[[AND]], %[[OR]], %[[XOR]]
func.func @compare_logic() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<2xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %a = kiln.constant dense<[-4, 2, 7]> : tensor<3xi64>
  %b = kiln.constant dense<[2]> : tensor<1xi64>
  %lt = kiln.less(%a, %b) : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi1>
  %le = kiln.less_or_equal(%a, %b) : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi1>
  %gt = kiln.greater(%a, %b) : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi1>
  %f = kiln.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>
  %g = kiln.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %fge = kiln.greater_or_equal(%f, %g) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %nlt = kiln.not(%lt) : (tensor<3xi1>) -> tensor<3xi1>
  %and = kiln.and(%lt, %nlt) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %or = kiln.or(%lt, %nlt) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %xor = kiln.xor(%lt, %gt) : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %lt, %le, %gt, %fge, %and, %or, %xor : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<2xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// -----

// Min and Max of constants: any number of operands with broadcasting,
// unsigned order for unsigned types, NaN wins for floats.

// CHECK-LABEL: func.func @min_max
// CHECK-DAG:     %[[MIN:.+]] = kiln.constant dense<[-4, 1, 3]> : tensor<3xi64>
// CHECK-DAG:     %[[MAX:.+]] = kiln.constant dense<[5, 5, 7]> : tensor<3xi64>
// CHECK-DAG:     %[[UMAX:.+]] = kiln.constant dense<[255, 2]> : tensor<2xui8>
// CHECK-DAG:     %[[FMIN:.+]] = kiln.constant dense<[0x7FC00000, -1.000000e+00]> : tensor<2xf32>
// CHECK-NOT:     kiln.min
// CHECK-NOT:     kiln.max
// CHECK:         return %[[MIN]], %[[MAX]], %[[UMAX]], %[[FMIN]]
func.func @min_max() -> (tensor<3xi64>, tensor<3xi64>, tensor<2xui8>, tensor<2xf32>) {
  %a = kiln.constant dense<[-4, 2, 7]> : tensor<3xi64>
  %b = kiln.constant dense<[5]> : tensor<1xi64>
  %c = kiln.constant dense<[0, 1, 3]> : tensor<3xi64>
  %min = kiln.min(%a, %b, %c) : (tensor<3xi64>, tensor<1xi64>, tensor<3xi64>) -> tensor<3xi64>
  %max = kiln.max(%a, %b, %c) : (tensor<3xi64>, tensor<1xi64>, tensor<3xi64>) -> tensor<3xi64>
  %u = kiln.constant dense<[255, 1]> : tensor<2xui8>
  %v = kiln.constant dense<[2]> : tensor<1xui8>
  %umax = kiln.max(%u, %v) : (tensor<2xui8>, tensor<1xui8>) -> tensor<2xui8>
  %f = kiln.constant dense<[0x7FC00000, 3.0]> : tensor<2xf32>
  %g = kiln.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %fmin = kiln.min(%f, %g) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %min, %max, %umax, %fmin : tensor<3xi64>, tensor<3xi64>, tensor<2xui8>, tensor<2xf32>
}

// -----

// Where with both sides the same value, or a constant condition, is that
// side even when the sides are not constants; a condition that is not a
// splat, or a side whose type is not the result's (it broadcasts), stays.

// CHECK-LABEL: func.func @where_sides
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<4xf32>, %[[Y:[^:]+]]: tensor<4xf32>, %[[C:[^:]+]]: tensor<4xi1>, %[[S:[^:]+]]: tensor<1xf32>)
// CHECK:         %[[B:.+]] = kiln.where(%{{.+}}, %[[S]], %[[X]]) : (tensor<1xi1>, tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         %[[W:.+]] = kiln.where(%{{.+}}, %[[X]], %[[Y]])
// CHECK:         return %[[X]], %[[X]], %[[Y]], %[[B]], %[[W]]
func.func @where_sides(%x: tensor<4xf32>, %y: tensor<4xf32>, %c: tensor<4xi1>, %s: tensor<1xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %same = kiln.where(%c, %x, %x) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = kiln.constant dense<true> : tensor<1xi1>
  %f = kiln.constant dense<false> : tensor<4xi1>
  %picked = kiln.where(%t, %x, %y) : (tensor<1xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %other = kiln.where(%f, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %bcast = kiln.where(%t, %s, %x) : (tensor<1xi1>, tensor<1xf32>, tensor<4xf32>) -> tensor<4xf32>
  %mixed = kiln.constant dense<[true, false, true, false]> : tensor<4xi1>
  %kept = kiln.where(%mixed, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %same, %picked, %other, %bcast, %kept : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
