// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// TopK ranks by counting: a reduction over a second loop i counts the
// elements that precede x_j (greater, or equal at a lower index); a second
// generic picks, for output position r along the axis, the x_j of rank r
// and its index j. K comes from the result shape (the k input is unused).

// CHECK-DAG: #[[$J:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$I:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @top_k_largest
// CHECK-SAME:    %[[X:[^:]+]]: tensor<3x4xf32>
// CHECK:         %[[RANKS:.+]] = linalg.generic {indexing_maps = [#[[$J]], #[[$I]], #[[$J]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[X]] : tensor<3x4xf32>, tensor<3x4xf32>) outs(%{{.+}} : tensor<3x4xi64>)
// CHECK-NEXT:    ^bb0(%[[XJ:[^:]+]]: f32, %[[XI:[^:]+]]: f32, %[[ACC:[^:]+]]: i64):
// CHECK:           arith.cmpf ogt, %[[XI]], %[[XJ]] : f32
// CHECK:           arith.cmpf oeq, %[[XI]], %[[XJ]] : f32
// CHECK:           %[[J:.+]] = linalg.index 1 : index
// CHECK:           %[[I:.+]] = linalg.index 2 : index
// CHECK:           arith.cmpi ult, %[[I]], %[[J]] : index
// CHECK:           arith.extui
// CHECK:           arith.addi %[[ACC]]
// CHECK:         %[[SEL:.+]]:2 = linalg.generic {indexing_maps = [#[[$I]], #[[$I]], #[[$J]], #[[$J]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[RANKS]] : tensor<3x4xf32>, tensor<3x4xi64>) outs(%{{.+}}, %{{.+}} : tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK:           %[[R:.+]] = linalg.index 1 : index
// CHECK:           %[[R64:.+]] = arith.index_cast %[[R]] : index to i64
// CHECK:           %[[HIT:.+]] = arith.cmpi eq, %{{.+}}, %[[R64]] : i64
// CHECK:           arith.select %[[HIT]]
// CHECK:           arith.select %[[HIT]]
// CHECK:         return %[[SEL]]#0, %[[SEL]]#1
func.func @top_k_largest(%x: tensor<3x4xf32>, %k: tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = kiln.topk(%x, %k) {axis = -1 : i64} : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

// Smallest on integers along axis 0: the order is slt, and the axis loop
// is d0.

// CHECK-LABEL: func.func @top_k_smallest_int
// CHECK:         linalg.generic
// CHECK:           arith.cmpi slt, %{{.+}}, %{{.+}} : i32
// CHECK:           arith.cmpi eq, %{{.+}}, %{{.+}} : i32
// CHECK:           %[[J:.+]] = linalg.index 0 : index
// CHECK:           %[[I:.+]] = linalg.index 2 : index
// CHECK:           arith.cmpi ult, %[[I]], %[[J]] : index
// CHECK:         linalg.generic {{.*}} outs(%{{.+}}, %{{.+}} : tensor<1x3xi32>, tensor<1x3xi64>)
// CHECK:           linalg.index 0 : index
func.func @top_k_smallest_int(%x: tensor<4x3xi32>, %k: tensor<1xi64>) -> (tensor<1x3xi32>, tensor<1x3xi64>) {
  %v, %i = kiln.topk(%x, %k) {axis = 0 : i64, largest = 0 : i64} : (tensor<4x3xi32>, tensor<1xi64>) -> (tensor<1x3xi32>, tensor<1x3xi64>)
  return %v, %i : tensor<1x3xi32>, tensor<1x3xi64>
}

// -----

// Unsigned integers compare unsigned: 2^63 and above are the largest
// uint64 values, not negative ones.

// CHECK-LABEL: func.func @top_k_unsigned
// CHECK:         linalg.generic
// CHECK:           arith.cmpi ugt, %{{.+}}, %{{.+}} : i64
// CHECK-LABEL: func.func @top_k_signed
// CHECK:         linalg.generic
// CHECK:           arith.cmpi sgt, %{{.+}}, %{{.+}} : i64
func.func @top_k_unsigned(%x: tensor<5xui64>, %k: tensor<1xi64>) -> (tensor<2xui64>, tensor<2xi64>) {
  %v, %i = kiln.topk(%x, %k) : (tensor<5xui64>, tensor<1xi64>) -> (tensor<2xui64>, tensor<2xi64>)
  return %v, %i : tensor<2xui64>, tensor<2xi64>
}
func.func @top_k_signed(%x: tensor<5xi64>, %k: tensor<1xi64>) -> (tensor<2xi64>, tensor<2xi64>) {
  %v, %i = kiln.topk(%x, %k) : (tensor<5xi64>, tensor<1xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  return %v, %i : tensor<2xi64>, tensor<2xi64>
}

// -----

// Hann (periodic): N is the run-time size; w = 0.5 - 0.5 cos(2 pi n / N).

// CHECK-LABEL: func.func @hann_window
// CHECK-SAME:    %[[S:[^:]+]]: tensor<i64>
// CHECK:         %[[SZ:.+]] = tensor.extract %[[S]][] : tensor<i64>
// CHECK:         %[[N:.+]] = arith.sitofp %[[SZ]] : i64 to f64
// CHECK-NOT:     arith.subf
// CHECK:         %[[STEP:.+]] = arith.divf %{{.+}}, %[[N]] : f64
// CHECK:         linalg.generic {{.*}} outs(%{{.+}} : tensor<8xf64>)
// CHECK:           %[[I:.+]] = linalg.index 0
// CHECK:           %[[I64:.+]] = arith.index_cast %[[I]]
// CHECK:           %[[IF:.+]] = arith.sitofp %[[I64]] : i64 to f64
// CHECK:           arith.mulf %[[IF]], %[[STEP]] : f64
// CHECK-COUNT-1:   math.cos
// CHECK-NOT:       math.cos
// CHECK:           linalg.yield %{{.+}} : f64
func.func @hann_window(%n: tensor<i64>) -> tensor<8xf64> {
  %0 = kiln.hann_window(%n) : (tensor<i64>) -> tensor<8xf64>
  return %0 : tensor<8xf64>
}

// -----

// Hamming (symmetric, int32 output): N = size - 1, computed in f32 and
// converted to the output type.

// CHECK-LABEL: func.func @hamming_window_symmetric
// CHECK:         tensor.extract %{{.+}}[%{{.+}}] : tensor<1xi32>
// CHECK:         %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[N:.+]] = arith.subf %{{.+}}, %[[ONE]] : f32
// CHECK:         arith.divf %{{.+}}, %[[N]] : f32
// CHECK:         linalg.generic
// CHECK:           %[[ALPHA:.+]] = arith.constant 0.543478251 : f32
// CHECK:           math.cos
// CHECK:           %[[BETA:.+]] = arith.constant -0.456521749 : f32
// CHECK:           arith.mulf %{{.+}}, %[[BETA]] : f32
// CHECK:           arith.addf %[[ALPHA]], %{{.+}} : f32
// CHECK:           arith.fptosi %{{.+}} : f32 to i32
func.func @hamming_window_symmetric(%n: tensor<1xi32>) -> tensor<8xi32> {
  %0 = kiln.hamming_window(%n) {periodic = 0 : i64, output_datatype = 6 : i64} : (tensor<1xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// Blackman: 0.42 - 0.5 cos(theta) + 0.08 cos(2 theta).

// CHECK-LABEL: func.func @blackman_window
// CHECK:         linalg.generic
// CHECK:           math.cos
// CHECK:           arith.constant -5.000000e-01 : f32
// CHECK:           math.cos
// CHECK:           arith.constant 8.000000e-02 : f32
// CHECK-NOT:       math.cos
// CHECK:           linalg.yield
func.func @blackman_window(%n: tensor<i32>) -> tensor<10xf32> {
  %0 = kiln.blackman_window(%n) : (tensor<i32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// DFT of a real input along axis 1 with a run-time dft_length N: a sum
// over the input's extent t (masked to t < N) in f64, the angle
// 2 pi ((k t) mod N) / N; then truncated to f32.

// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, 0)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @dft_real
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x10x10x1xf32>, %[[L:[^:]+]]: tensor<i64>
// CHECK:         %[[N:.+]] = tensor.extract %[[L]][] : tensor<i64>
// CHECK:         %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<1x10x10x1xf32>) outs(%{{.+}} : tensor<1x10x10x2xf64>)
// CHECK:           %[[T:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK:           %[[KT:.+]] = arith.muli %{{.+}}, %[[T]] : i64
// CHECK:           arith.remui %[[KT]], %[[N]] : i64
// CHECK:           math.cos
// CHECK:           math.sin
// CHECK:           %[[IN:.+]] = arith.cmpi slt, %[[T]], %[[N]] : i64
// CHECK:           arith.select %[[IN]]
// CHECK:         %[[R:.+]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x10x10x2xf64>) outs(%{{.+}} : tensor<1x10x10x2xf32>)
// CHECK:           arith.truncf
// CHECK:         return %[[R]]
func.func @dft_real(%x: tensor<1x10x10x1xf32>, %l: tensor<i64>) -> tensor<1x10x10x2xf32> {
  %a = kiln.constant dense<1> : tensor<i64>
  %0 = kiln.dft(%x, %l, %a) : (tensor<1x10x10x1xf32>, tensor<i64>, tensor<i64>) -> tensor<1x10x10x2xf32>
  return %0 : tensor<1x10x10x2xf32>
}

// -----

// Inverse DFT of a complex input (default axis -2): the real and imaginary
// parts are two inputs, the exponent positive (sin negated), the sum
// divided by N, and no mask without dft_length.

// CHECK-DAG: #[[$RE:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, 0)>
// CHECK-DAG: #[[$IM:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, 1)>
// CHECK-LABEL: func.func @dft_inverse_complex
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x5x2xf32>
// CHECK-DAG:     %[[N:.+]] = arith.constant 5 : i64
// CHECK:         linalg.generic {indexing_maps = [#[[$RE]], #[[$IM]], #{{.+}}], {{.*}} ins(%[[X]], %[[X]] : tensor<2x5x2xf32>, tensor<2x5x2xf32>)
// CHECK:           arith.remui %{{.+}}, %[[N]] : i64
// CHECK:           %[[SIN:.+]] = math.sin
// CHECK:           arith.negf %[[SIN]]
// CHECK:           %[[TERM:.+]] = arith.select
// CHECK:           %[[NF:.+]] = arith.sitofp %[[N]] : i64 to f64
// CHECK:           %[[SCALED:.+]] = arith.divf %[[TERM]], %[[NF]] : f64
// CHECK-NOT:       arith.cmpi slt
// CHECK:           arith.addf %{{.+}}, %[[SCALED]] : f64
func.func @dft_inverse_complex(%x: tensor<2x5x2xf32>) -> tensor<2x5x2xf32> {
  %0 = kiln.dft(%x, none, none) {inverse = 1 : i64} : (tensor<2x5x2xf32>) -> tensor<2x5x2xf32>
  return %0 : tensor<2x5x2xf32>
}

// -----

// STFT with a window: a sum over the window (the generic's one input) of
// signal[b, f * step + t] * w[t], the sample index clamped into the signal;
// L is the window's length.

// CHECK-DAG: #[[$W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
// CHECK-LABEL: func.func @stft_window
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x128x1xf32>, %[[S:[^:]+]]: tensor<i64>, %[[W:[^:]+]]: tensor<16xf32>
// CHECK:         %[[L:.+]] = arith.constant 16 : i64
// CHECK:         %[[STEP:.+]] = tensor.extract %[[S]][] : tensor<i64>
// CHECK:         linalg.generic {indexing_maps = [#[[$W]], #{{.+}}], {{.*}} ins(%[[W]] : tensor<16xf32>) outs(%{{.+}} : tensor<1x15x9x2xf64>)
// CHECK-NEXT:    ^bb0(%[[WT:[^:]+]]: f32,
// CHECK:           %[[START:.+]] = arith.muli %{{.+}}, %[[STEP]] : i64
// CHECK:           %[[POS:.+]] = arith.addi %[[START]], %{{.+}} : i64
// CHECK:           %[[LAST:.+]] = arith.constant 127 : i64
// CHECK:           arith.minsi %[[POS]], %[[LAST]] : i64
// CHECK:           %[[V:.+]] = tensor.extract %[[X]]
// CHECK:           %[[V64:.+]] = arith.extf %[[V]]
// CHECK:           %[[W64:.+]] = arith.extf %[[WT]]
// CHECK:           arith.mulf %[[V64]], %[[W64]] : f64
// CHECK:           arith.remui %{{.+}}, %[[L]] : i64
// CHECK-NOT:       arith.cmpi slt
// CHECK:           linalg.yield
func.func @stft_window(%x: tensor<1x128x1xf32>, %s: tensor<i64>, %w: tensor<16xf32>) -> tensor<1x15x9x2xf32> {
  %0 = kiln.stft(%x, %s, %w, none) : (tensor<1x128x1xf32>, tensor<i64>, tensor<16xf32>) -> tensor<1x15x9x2xf32>
  return %0 : tensor<1x15x9x2xf32>
}

// -----

// STFT of a complex signal with a run-time frame_length: the sum runs over
// the signal's length, masked to t < frame_length.

// CHECK-LABEL: func.func @stft_frame_length
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x32x2xf32>, %{{[^:]+}}: tensor<i64>, %[[FL:[^:]+]]: tensor<i64>
// CHECK:         %[[L:.+]] = tensor.extract %[[FL]][] : tensor<i64>
// CHECK:         %[[T:.+]] = tensor.empty() : tensor<32xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[T]] : tensor<32xf32>) outs(%{{.+}} : tensor<1x3x8x2xf64>)
// CHECK-COUNT-2:   tensor.extract %[[X]]
// CHECK:           arith.remui %{{.+}}, %[[L]] : i64
// CHECK:           arith.cmpi slt, %{{.+}}, %[[L]] : i64
func.func @stft_frame_length(%x: tensor<1x32x2xf32>, %s: tensor<i64>, %l: tensor<i64>) -> tensor<1x3x8x2xf32> {
  %0 = kiln.stft(%x, %s, none, %l) {onesided = 0 : i64} : (tensor<1x32x2xf32>, tensor<i64>, tensor<i64>) -> tensor<1x3x8x2xf32>
  return %0 : tensor<1x3x8x2xf32>
}

// -----

// MelWeightMatrix: the mel edges are computed once from the run-time
// scalars; each element computes its column's three bin points
// (floor((dft_length + 1) hz / sample_rate)) and selects the falling edge,
// the rising edge or the peak.

// CHECK-LABEL: func.func @mel_weight_matrix
// CHECK-COUNT-2: math.log1p
// CHECK:         linalg.generic {{.*}} outs(%{{.+}} : tensor<9x8xf32>)
// CHECK-COUNT-3:   math.expm1
// CHECK-NOT:       math.expm1
// CHECK-COUNT-3:   arith.select
// CHECK:           arith.truncf %{{.+}} : f64 to f32
func.func @mel_weight_matrix(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<f32>, %e: tensor<f32>) -> tensor<9x8xf32> {
  %0 = kiln.mel_weight_matrix(%a, %b, %c, %d, %e) : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<9x8xf32>
  return %0 : tensor<9x8xf32>
}

// -----

// Det: an scf.for over the columns carries the matrices and the
// determinants; each step finds the pivot rows (a reduction), multiplies
// the determinants in place, builds the swapped and eliminated matrices and
// copies them back into the carried tensor.

// CHECK-LABEL: func.func @det_batched
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x3x3xf32>
// CHECK:         %[[MATS:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x3x3xf32> into tensor<6x3x3xf32>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK:         %[[LOOP:.+]]:2 = scf.for %[[K:.+]] = %[[C0]] to %[[C3]] step %{{.+}} iter_args(%[[A:.+]] = %[[MATS]], %[[D:.+]] = %{{.+}}) -> (tensor<6x3x3xf32>, tensor<6xf32>)
// CHECK:           %[[PIV:.+]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:             math.absf
// CHECK:             arith.cmpf ogt
// CHECK:           %[[ND:.+]] = linalg.generic {{.*}} ins(%[[PIV]]#1 : tensor<6xi64>) outs(%[[D]] : tensor<6xf32>)
// CHECK:             arith.negf
// CHECK:             arith.mulf
// CHECK:           %[[NA:.+]] = linalg.generic {{.*}} ins(%[[PIV]]#1 : tensor<6xi64>) outs(%{{.+}} : tensor<6x3x3xf32>)
// CHECK:             arith.divf
// CHECK:             arith.subf
// CHECK:           %[[CP:.+]] = linalg.copy ins(%[[NA]] : tensor<6x3x3xf32>) outs(%[[A]] : tensor<6x3x3xf32>)
// CHECK:           scf.yield %[[CP]], %[[ND]]
// CHECK:         %[[R:.+]] = tensor.expand_shape %[[LOOP]]#1 {{\[}}[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
// CHECK:         return %[[R]]
func.func @det_batched(%x: tensor<2x3x3x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.det(%x) : (tensor<2x3x3x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A run-time axis (opset 20): the result [1, 10, 10, 2] is x's transform
// along axes 1 and 2 (and 0, of extent 1), so the axis, made non-negative,
// picks one of three static transforms with scf.if; any other gives NaNs.

// CHECK-LABEL: func.func @dft_runtime_axis
// CHECK:         %[[A:.+]] = tensor.extract %{{.+}}[] : tensor<i64>
// CHECK:         %[[NEG:.+]] = arith.cmpi slt, %[[A]], %{{.+}} : i64
// CHECK:         %[[AX:.+]] = arith.select %[[NEG]]
// CHECK:         arith.cmpi eq, %[[AX]], %c0_i64
// CHECK:         scf.if
// CHECK:           linalg.generic
// CHECK:         } else {
// CHECK:           arith.cmpi eq, %[[AX]], %c1_i64
// CHECK:           scf.if
// CHECK:             arith.cmpi eq, %[[AX]], %c2_i64
// CHECK:             linalg.fill ins(%cst{{.*}} : f32)
func.func @dft_runtime_axis(%x: tensor<1x10x10x1xf32>, %a: tensor<i64>) -> tensor<1x10x10x2xf32> {
  %0 = kiln.dft(%x, none, %a) : (tensor<1x10x10x1xf32>, tensor<i64>) -> tensor<1x10x10x2xf32>
  return %0 : tensor<1x10x10x2xf32>
}

// -----

// An inverse one-sided transform (irfft): 6 bins to 10 real samples, one
// generic over (dims of y, k < 10) that folds the bins past 5 onto their
// conjugates (10 - k, imaginary part negated) and sums Re(X e^(i theta)) / 10.

// CHECK-LABEL: func.func @irfft
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}} : tensor<10xf64>) outs(%{{.+}} : tensor<1x10x1xf64>)
// CHECK:           %[[K:.+]] = linalg.index 3 : index
// CHECK:           %[[UP:.+]] = arith.cmpi ugt, %[[K]], %c5 : index
// CHECK:           %[[FOLD:.+]] = arith.subi %c10, %[[K]] : index
// CHECK:           %[[BIN:.+]] = arith.select %[[UP]], %[[FOLD]], %[[K]] : index
// CHECK:           tensor.extract %{{.+}}[%{{.+}}, %[[BIN]], %c0] : tensor<1x6x2xf32>
// CHECK:           tensor.extract %{{.+}}[%{{.+}}, %[[BIN]], %c1] : tensor<1x6x2xf32>
// CHECK:           arith.negf
// CHECK-DAG:       math.cos
// CHECK-DAG:       math.sin
// CHECK:           arith.subf
func.func @irfft(%x: tensor<1x6x2xf32>) -> tensor<1x10x1xf32> {
  %a = kiln.constant dense<1> : tensor<i64>
  %0 = kiln.dft(%x, none, %a) {inverse = 1 : i64, onesided = 1 : i64} : (tensor<1x6x2xf32>, tensor<i64>) -> tensor<1x10x1xf32>
  return %0 : tensor<1x10x1xf32>
}
