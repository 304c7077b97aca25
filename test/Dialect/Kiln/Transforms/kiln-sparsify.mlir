// RUN: kiln-opt %s -split-input-file -kiln-sparsify | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-sparsify=mode=force | FileCheck %s --check-prefix=FORCE
// RUN: not kiln-opt %s -kiln-sparsify=mode=always 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: kiln-opt %s -split-input-file -kiln-sparsify=convolutions=false | FileCheck %s --check-prefix=NOCONV

// MODE: mode must be on or force, not 'always'

// A MatMul whose constant [K, N] weight has at most two non-zeros in each
// group of four consecutive k of each column is marked 2:4 (a group with
// fewer non-zeros counts too). The module records it.

// CHECK:       module attributes {kiln.sparsity_layers = [{k = 4 : i64, n = 2 : i64, name = "fc", op = "matmul", reason = "", sparse = true, weight_bytes = 32 : i64}]}
// CHECK-LABEL: func.func @two_of_four
// CHECK:         kiln.matmul(%{{.+}}, %{{.+}}) {kiln.sparsity = "2:4"}
// FORCE-LABEL: func.func @two_of_four
// FORCE:         kiln.matmul(%{{.+}}, %{{.+}}) {kiln.sparsity = "2:4"}
func.func @two_of_four(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
  %w = kiln.constant dense<[[1.0, 0.0], [0.0, 2.0], [0.0, 0.0], [3.0, 4.0]]> : tensor<4x2xf32>
  %y = kiln.matmul(%x, %w) : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32> loc("fc")
  return %y : tensor<1x2xf32>
}

// -----

// A group of four with three non-zeros (3:4) is not 2:4: the op stays
// dense and the record says why. Forced, the two largest magnitudes of
// that group stay (3 and -4 of column 0; column 1 is already 2:4), one
// value is zeroed.

// CHECK:       reason = "not 2:4 along K: 1 of 2 groups of four have more than two non-zeros", sparse = false
// CHECK-LABEL: func.func @three_of_four
// CHECK-NOT:     kiln.sparsity =
// CHECK:         return
// FORCE:       module attributes {kiln.sparsity_layers = [{k = 4 : i64, n = 2 : i64, name = "fc", op = "matmul", pruned = 1 : i64, pruned_norm = {{.+}} : f64, reason = "", sparse = true, weight_bytes = 32 : i64}]}
// FORCE-LABEL: func.func @three_of_four
// FORCE:         %[[P:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, 0.000000e+00], [3.000000e+00, 2.000000e+00], [-4.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<4x2xf32>
// FORCE:         kiln.matmul(%{{.+}}, %[[P]]) {kiln.sparsity = "2:4"}
func.func @three_of_four(%x: tensor<1x4xf32>) -> tensor<1x2xf32> {
  %w = kiln.constant dense<[[1.0, 0.0], [3.0, 2.0], [-4.0, 0.0], [0.0, 1.0]]> : tensor<4x2xf32>
  %y = kiln.matmul(%x, %w) : (tensor<1x4xf32>, tensor<4x2xf32>) -> tensor<1x2xf32> loc("fc")
  return %y : tensor<1x2xf32>
}

// -----

// Gemm with transB reads its [N, K] weight along its rows: 2:4 there.
// The same values read as [K, N] (no transB) are 2:4 along N only, the
// wrong axis: dense, and the record names the axis. Forced, the second is
// pruned along its K (its columns).

// CHECK:       name = "kn", op = "gemm", reason = "not 2:4 along K: 1 of 4 groups of four have more than two non-zeros (it is 2:4 along N, which is not the reduction dim)", sparse = false
// CHECK-LABEL: func.func @gemm_axes
// CHECK:         kiln.gemm(%{{.+}}, %{{.+}}) {kiln.sparsity = "2:4", transB = 1 : i64}
// CHECK:         kiln.gemm(%{{.+}}, %{{.+}}) : (tensor<4x4xf32>
// FORCE:       name = "kn", op = "gemm", pruned = 2 : i64
// FORCE-LABEL: func.func @gemm_axes
// FORCE:         kiln.gemm(%{{.+}}, %{{.+}}) {kiln.sparsity = "2:4", transB = 1 : i64}
// FORCE:         %[[P:.+]] = kiln.constant dense_resource<kn_2to4> : tensor<4x4xf32>
// FORCE:         kiln.gemm(%{{.+}}, %[[P]]) {kiln.sparsity = "2:4"} : (tensor<4x4xf32>
// (Its values: test/e2e/sparsity.test checks forced modules against ONNX
// Runtime on weights pruned the same way.)
func.func @gemm_axes(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %w = kiln.constant dense<[[1.0, 2.0, 0.0, 0.0], [3.0, 4.0, 0.0, 0.0], [5.0, 0.0, 6.0, 0.0], [7.0, 0.0, 0.0, 8.0]]> : tensor<4x4xf32>
  %a = kiln.gemm(%x, %w) {transB = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("nk")
  %b = kiln.gemm(%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("kn")
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Not eligible, each with its reason: a weight that is a function
// argument (not a constant), K not a multiple of 4, a float64 weight, a
// grouped convolution. Forcing prunes none of them.

// CHECK: name = "runtime_weight", op = "matmul", reason = "the weight is not a constant", sparse = false
// CHECK: name = "k6", op = "matmul", reason = "K = 6 is not a multiple of 4", sparse = false
// CHECK: name = "double", op = "matmul", reason = "the weight is not f32, f16 or bf16", sparse = false
// CHECK: name = "conv", op = "conv", reason = "a grouped convolution (group 2)", sparse = false
// CHECK-LABEL: func.func @ineligible
// CHECK-NOT:     kiln.sparsity =
// FORCE-LABEL: func.func @ineligible
// FORCE-NOT:     kiln.sparsity =
// FORCE-NOT:     pruned
func.func @ineligible(%x: tensor<1x8xf32>, %v: tensor<8x4xf32>, %x6: tensor<1x6xf32>, %h: tensor<1x8xf64>, %img: tensor<1x8x4x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf64>, tensor<1x4x4x4xf32>) {
  %a = kiln.matmul(%x, %v) : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32> loc("runtime_weight")
  %w6 = kiln.constant dense<1.0> : tensor<6x4xf32>
  %b = kiln.matmul(%x6, %w6) : (tensor<1x6xf32>, tensor<6x4xf32>) -> tensor<1x4xf32> loc("k6")
  %wh = kiln.constant dense<0.0> : tensor<8x4xf64>
  %c = kiln.matmul(%h, %wh) : (tensor<1x8xf64>, tensor<8x4xf64>) -> tensor<1x4xf64> loc("double")
  %wc = kiln.constant dense<0.0> : tensor<4x4x1x1xf32>
  %d = kiln.conv(%img, %wc) {group = 2 : i64} : (tensor<1x8x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32> loc("conv")
  return %a, %b, %c, %d : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf64>, tensor<1x4x4x4xf32>
}

// -----

// 2-D convolutions: 2:4 along the input channels c at each output channel
// and window tap. %w (f = 2, c = 4, 1x2 taps) keeps two channels per tap:
// marked, K = C x taps = 8, N = F = 2. %t has four non-zero channels at
// tap 0 (one at tap 1): not marked, and forcing keeps that tap's two
// largest (3 and -4). Stay dense: 6 channels, a runtime
// weight, a 1-D convolution. With convolutions=false (the CPU target)
// none is marked.

// CHECK: name = "c24", op = "conv", reason = "", sparse = true, weight_bytes = 64 : i64
// CHECK: name = "taps", op = "conv", reason = "not 2:4 along the input channels: 1 of 2 groups of four have more than two non-zeros", sparse = false
// CHECK: name = "c6", op = "conv", reason = "C = 6 input channels is not a multiple of 4", sparse = false
// CHECK: name = "wrt", op = "conv", reason = "the weight is not a constant", sparse = false
// CHECK: name = "c1d", op = "conv", reason = "not a 2-D convolution (a rank-3 weight)", sparse = false
// CHECK-LABEL: func.func @convolutions
// CHECK:         kiln.conv(%{{.+}}, %{{.+}}) {kiln.sparsity = "2:4"}
// CHECK-NOT:     kiln.sparsity =
// FORCE: name = "taps", op = "conv", pruned = 2 : i64
// FORCE-LABEL: func.func @convolutions
// FORCE:         %[[P:.+]] = kiln.constant dense<{{\[\[\[}}[0.000000e+00, 0.000000e+00]], {{\[\[}}0.000000e+00, 2.000000e+00]], {{\[\[}}3.000000e+00, 0.000000e+00]], {{\[\[}}-4.000000e+00, 0.000000e+00]]]]> : tensor<1x4x1x2xf32>
// FORCE:         kiln.conv(%{{.+}}, %[[P]]) {kiln.sparsity = "2:4"}
// NOCONV: name = "c24", op = "conv", reason = "a convolution: this target runs convolutions dense (the GPU's mma.sp kernels take them)", sparse = false
// NOCONV-LABEL: func.func @convolutions
// NOCONV-NOT:     kiln.sparsity =
// NOCONV:         return
func.func @convolutions(%x: tensor<1x4x3x3xf32>, %x6: tensor<1x6x3x3xf32>, %v: tensor<2x4x1x2xf32>, %x1: tensor<1x4x5xf32>) -> (tensor<1x2x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x4xf32>) {
  %w = kiln.constant dense<[[[[1.0, 0.0]], [[0.0, 2.0]], [[3.0, 4.0]], [[0.0, 0.0]]], [[[0.0, 5.0]], [[6.0, 0.0]], [[0.0, 7.0]], [[8.0, 0.0]]]]> : tensor<2x4x1x2xf32>
  %a = kiln.conv(%x, %w) : (tensor<1x4x3x3xf32>, tensor<2x4x1x2xf32>) -> tensor<1x2x3x2xf32> loc("c24")
  %t = kiln.constant dense<[[[[1.0, 0.0]], [[0.5, 2.0]], [[3.0, 0.0]], [[-4.0, 0.0]]]]> : tensor<1x4x1x2xf32>
  %b = kiln.conv(%x, %t) : (tensor<1x4x3x3xf32>, tensor<1x4x1x2xf32>) -> tensor<1x1x3x2xf32> loc("taps")
  %w6 = kiln.constant dense<0.0> : tensor<1x6x1x2xf32>
  %c = kiln.conv(%x6, %w6) : (tensor<1x6x3x3xf32>, tensor<1x6x1x2xf32>) -> tensor<1x1x3x2xf32> loc("c6")
  %d = kiln.conv(%x, %v) : (tensor<1x4x3x3xf32>, tensor<2x4x1x2xf32>) -> tensor<1x2x3x2xf32> loc("wrt")
  %w1 = kiln.constant dense<0.0> : tensor<2x4x2xf32>
  %e = kiln.conv(%x1, %w1) : (tensor<1x4x5xf32>, tensor<2x4x2xf32>) -> tensor<1x2x4xf32> loc("c1d")
  return %a, %b, %c, %d, %e : tensor<1x2x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x4xf32>
}

// -----

// Half-precision weights (a model exported in f16 or bf16, for the GPU's
// sparse kernels) are checked the same way: an f16 weight that is 2:4 is
// marked; a bf16 one with four non-zeros in a group is not, and forcing
// keeps its two largest (3 and 4), writing the pruned weight as bf16.

// CHECK: name = "h16", op = "matmul", reason = "", sparse = true, weight_bytes = 16 : i64
// CHECK: name = "hb", op = "matmul", reason = "not 2:4 along K: 1 of 2 groups of four have more than two non-zeros", sparse = false, weight_bytes = 16 : i64
// FORCE: name = "hb", op = "matmul", pruned = 2 : i64
// FORCE-LABEL: func.func @half
// FORCE:         %[[P:.+]] = kiln.constant dense<{{\[}}[0.000000e+00, 0.000000e+00], [0.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00], [4.000000e+00, 0.000000e+00]]> : tensor<4x2xbf16>
// FORCE:         kiln.matmul(%{{.+}}, %[[P]]) {kiln.sparsity = "2:4"}
func.func @half(%x: tensor<1x4xf16>, %y: tensor<1x4xbf16>) -> (tensor<1x2xf16>, tensor<1x2xbf16>) {
  %w = kiln.constant dense<[[1.0, 0.0], [0.0, 5.0], [3.0, 6.0], [0.0, 0.0]]> : tensor<4x2xf16>
  %a = kiln.matmul(%x, %w) : (tensor<1x4xf16>, tensor<4x2xf16>) -> tensor<1x2xf16> loc("h16")
  %v = kiln.constant dense<[[1.0, 0.0], [2.0, 5.0], [3.0, 6.0], [4.0, 0.0]]> : tensor<4x2xbf16>
  %b = kiln.matmul(%y, %v) : (tensor<1x4xbf16>, tensor<4x2xbf16>) -> tensor<1x2xbf16> loc("hb")
  return %a, %b : tensor<1x2xf16>, tensor<1x2xbf16>
}

// -----

// The integer products (a QDQ model's, --precision=int8's): QLinearMatMul
// and MatMulInteger with a constant int8 weight whose zero point is 0 are
// checked on the stored bytes; a QDQ Gemm's 1x1 QLinearConv of 1x1 planes
// (what kiln-fold-qdq writes) reads its [F, C, 1, 1] weight as [N, K].
// Other integer convolutions (a 1x1 one of wider planes, a 3x3 one) are
// checked as convolutions: 2:4 along the input channels at each tap (the
// GPU's sparse kernels), on the CPU not marked (NOCONV). Stay dense: a
// non-zero weight zero point (of a product and of a 3x3 convolution), a
// uint8 weight, an integer convolution of two groups. Forced, the int8
// weight keeps its two
// largest magnitudes per group (3 and -4), written as int8.

// CHECK: name = "qmm", op = "qlinear_matmul", reason = "", sparse = true, weight_bytes = 8 : i64
// CHECK: name = "mmi", op = "matmul_integer", reason = "", sparse = true, weight_bytes = 8 : i64
// CHECK: name = "qgemm", op = "qlinear_conv", reason = "", sparse = true, weight_bytes = 8 : i64
// CHECK: name = "zp", op = "qlinear_matmul", reason = "the weight's zero point is not a constant 0", sparse = false
// CHECK: name = "u8", op = "matmul_integer", reason = "the integer weight is not int8", sparse = false
// CHECK: k = 4 : i64, n = 2 : i64, name = "plane", op = "qlinear_conv", reason = "", sparse = true, weight_bytes = 8 : i64
// CHECK: k = 36 : i64, n = 2 : i64, name = "win", op = "conv_integer", reason = "", sparse = true, weight_bytes = 72 : i64
// CHECK: name = "winzp", op = "conv_integer", reason = "the weight's zero point is not a constant 0", sparse = false
// CHECK: name = "grouped", op = "qlinear_conv", reason = "a grouped convolution (group 2)", sparse = false
// NOCONV: name = "plane", op = "qlinear_conv", reason = "a convolution: this target runs convolutions dense (the GPU's mma.sp kernels take them)", sparse = false
// NOCONV: name = "win", op = "conv_integer", reason = "a convolution: this target runs convolutions dense (the GPU's mma.sp kernels take them)", sparse = false
// CHECK: name = "qmm3", op = "qlinear_matmul", reason = "not 2:4 along K: 1 of 2 groups of four have more than two non-zeros", sparse = false
// CHECK-LABEL: func.func @integer
// CHECK:         kiln.qlinear_matmul({{.+}}) {kiln.sparsity = "2:4"}
// CHECK:         kiln.matmul_integer({{.+}}) {kiln.sparsity = "2:4"
// CHECK:         kiln.qlinear_conv({{.+}}) {kiln.sparsity = "2:4"}
// CHECK:         kiln.qlinear_conv({{.+}}) {kiln.sparsity = "2:4"}
// CHECK:         kiln.conv_integer({{.+}}) {kiln.sparsity = "2:4"}
// FORCE: name = "qmm3", op = "qlinear_matmul", pruned = 1 : i64
// FORCE-LABEL: func.func @integer
// FORCE:         %[[P:.+]] = kiln.constant dense<{{\[\[}}0, 0], [3, 2], [-4, 0], [0, 1]]> : tensor<4x2xi8>
// FORCE:         kiln.qlinear_matmul(%{{.+}}, %{{.+}}, %{{.+}}, %[[P]], {{.+}}) {kiln.sparsity = "2:4"}
func.func @integer(%x: tensor<1x4xi8>, %img: tensor<1x4x1x1xi8>, %wide: tensor<1x4x2x2xi8>, %xu: tensor<1x4xui8>, %wide3: tensor<1x4x3x3xi8>) -> (tensor<1x2xi8>, tensor<1x2xi32>, tensor<1x2x1x1xi8>, tensor<1x2xi8>, tensor<1x2xi32>, tensor<1x2x2x2xi8>, tensor<1x2x1x1xi32>, tensor<1x2x1x1xi32>, tensor<1x2x2x2xi8>, tensor<1x2xi8>) {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %z2 = kiln.constant dense<0> : tensor<2xi8>
  %nz = kiln.constant dense<[0, 3]> : tensor<2xi8>
  %w = kiln.constant dense<[[1, 0], [0, 2], [0, 0], [3, 4]]> : tensor<4x2xi8>
  %a = kiln.qlinear_matmul(%x, %s, %z, %w, %s, %z2, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x2xi8>, tensor<f32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2xi8> loc("qmm")
  %b = kiln.matmul_integer(%x, %w) : (tensor<1x4xi8>, tensor<4x2xi8>) -> tensor<1x2xi32> loc("mmi")
  %wc = kiln.constant dense<[[[[1]], [[0]], [[0]], [[2]]], [[[0]], [[3]], [[4]], [[0]]]]> : tensor<2x4x1x1xi8>
  %c = kiln.qlinear_conv(%img, %s, %z, %wc, %s, %z2, %s, %z) : (tensor<1x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<2x4x1x1xi8>, tensor<f32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x1x1xi8> loc("qgemm")
  %d = kiln.qlinear_matmul(%x, %s, %z, %w, %s, %nz, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x2xi8>, tensor<f32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2xi8> loc("zp")
  %wu = kiln.constant dense<[[1, 0], [0, 2], [0, 0], [3, 4]]> : tensor<4x2xui8>
  %e = kiln.matmul_integer(%xu, %wu) : (tensor<1x4xui8>, tensor<4x2xui8>) -> tensor<1x2xi32> loc("u8")
  %f = kiln.qlinear_conv(%wide, %s, %z, %wc, %s, %z2, %s, %z) : (tensor<1x4x2x2xi8>, tensor<f32>, tensor<i8>, tensor<2x4x1x1xi8>, tensor<f32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8> loc("plane")
  %ww = kiln.constant dense<[[[[1, 0, 2], [0, 1, 0], [3, 0, 0]], [[0, 0, 1], [2, 0, 0], [0, 4, 0]], [[0, 5, 0], [0, 0, 0], [0, 0, 6]], [[2, 0, 0], [0, 3, 0], [0, 0, 0]]], [[[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[2, 2, 2], [2, 2, 2], [2, 2, 2]]]]> : tensor<2x4x3x3xi8>
  %h = kiln.conv_integer(%wide3, %ww) : (tensor<1x4x3x3xi8>, tensor<2x4x3x3xi8>) -> tensor<1x2x1x1xi32> loc("win")
  %one = kiln.constant dense<1> : tensor<i8>
  %i = kiln.conv_integer(%wide3, %ww, %z, %one) : (tensor<1x4x3x3xi8>, tensor<2x4x3x3xi8>, tensor<i8>, tensor<i8>) -> tensor<1x2x1x1xi32> loc("winzp")
  %wg = kiln.constant dense<[[[[1]], [[0]]], [[[0]], [[3]]]]> : tensor<2x2x1x1xi8>
  %j = kiln.qlinear_conv(%wide, %s, %z, %wg, %s, %z2, %s, %z) {group = 2 : i64} : (tensor<1x4x2x2xi8>, tensor<f32>, tensor<i8>, tensor<2x2x1x1xi8>, tensor<f32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8> loc("grouped")
  %w3 = kiln.constant dense<[[1, 0], [3, 2], [-4, 0], [0, 1]]> : tensor<4x2xi8>
  %g = kiln.qlinear_matmul(%x, %s, %z, %w3, %s, %z2, %s, %z) : (tensor<1x4xi8>, tensor<f32>, tensor<i8>, tensor<4x2xi8>, tensor<f32>, tensor<2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2xi8> loc("qmm3")
  return %a, %b, %c, %d, %e, %f, %h, %i, %j, %g : tensor<1x2xi8>, tensor<1x2xi32>, tensor<1x2x1x1xi8>, tensor<1x2xi8>, tensor<1x2xi32>, tensor<1x2x2x2xi8>, tensor<1x2x1x1xi32>, tensor<1x2x1x1xi32>, tensor<1x2x2x2xi8>, tensor<1x2xi8>
}
