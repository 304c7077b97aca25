// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// Elementwise ops with ONNX broadcasting become one linalg.generic each; a
// broadcast operand's size-1 or missing dims get constant or dropped
// indexing expressions.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_relu
// CHECK:         %[[ADD:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%{{.+}}, %{{.+}} : tensor<2x3xf32>, tensor<3xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK:           arith.maximumf
// CHECK-NOT:     kiln.
func.func @add_relu(%x: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add(%x, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = kiln.relu(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// A 2-D Conv pads its input with tensor.pad and becomes the named
// linalg.conv_2d_nchw_fchw, accumulating into the bias broadcast along the
// channel dim (no separate pass adds it).

// CHECK-DAG: #[[$CHAN:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @conv
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x3x8x8xf32>, %[[W:[^:]+]]: tensor<4x3x3x3xf32>, %[[B:[^:]+]]: tensor<4xf32>
// CHECK:         %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         %[[INIT:.+]] = linalg.generic {indexing_maps = [#[[$CHAN]], #{{.+}}]{{.*}} ins(%[[B]] : tensor<4xf32>)
// CHECK:         %[[R:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x4x4xf32>)
// CHECK:         return %[[R]]
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv(%x, %w, %b) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// A 1-D convolution is the 2-D one over a plane one row high: its
// operands gain a unit dim 2, the window's stride and dilation along it
// are 1, and the result drops it again.

// CHECK-LABEL: func.func @conv1d
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x3x9xf32>, %[[W:[^:]+]]: tensor<4x3x2xf32>
// CHECK-DAG:     %[[X2:.+]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [1, 3, 1, 9]
// CHECK-DAG:     %[[W2:.+]] = tensor.expand_shape %[[W]] {{\[}}[0], [1], [2, 3]] output_shape [4, 3, 1, 2]
// CHECK:         %[[C:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>} ins(%[[X2]], %[[W2]] : tensor<1x3x1x9xf32>, tensor<4x3x1x2xf32>) outs(%{{.+}} : tensor<1x4x1x4xf32>)
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[C]] {{\[}}[0], [1], [2, 3]] : tensor<1x4x1x4xf32> into tensor<1x4x4xf32>
// CHECK:         return %[[R]]
// CHECK-LABEL: func.func @conv1d_padded
// CHECK:         tensor.pad %{{.+}} low[0, 0, 0, 1] high[0, 0, 0, 2]
// CHECK:         linalg.conv_2d_nchw_fchw {{.+}} outs(%{{.+}} : tensor<1x4x1x10xf32>)
func.func @conv1d(%x: tensor<1x3x9xf32>, %w: tensor<4x3x2xf32>) -> tensor<1x4x4xf32> {
  %0 = kiln.conv(%x, %w) {strides = array<i64: 2>, dilations = array<i64: 2>} : (tensor<1x3x9xf32>, tensor<4x3x2xf32>) -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}
func.func @conv1d_padded(%x: tensor<1x3x9xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x10xf32> {
  %0 = kiln.conv(%x, %w) {pads = array<i64: 1, 2>} : (tensor<1x3x9xf32>, tensor<4x3x3xf32>) -> tensor<1x4x10xf32>
  return %0 : tensor<1x4x10xf32>
}

// -----

// A depthwise convolution (one input and one output channel per group) is
// one generic over (n, c, oh, ow, kh, kw) on the operands as they are: the
// weight's second dim is read at 0. Other grouped convolutions of up to 16
// groups are one NCHW convolution per group on its channel slices of the
// input, the weight and the accumulator; more groups use the NGCHW form on
// reshaped operands.

// CHECK-DAG:   #[[$DWIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
// CHECK-DAG:   #[[$DWW:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, 0, d4, d5)>
// CHECK-DAG:   #[[$DWOUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {indexing_maps = [#[[$DWIN]], #[[$DWW]], #[[$DWOUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:      ins(%{{.+}}, %{{.+}} : tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.conv_2d_ngchw_gfchw
// CHECK-LABEL: func.func @grouped(
// CHECK-NOT:     linalg.conv_2d_ngchw_gfchw
// CHECK-DAG:     %[[X0:.+]] = tensor.extract_slice %[[X:.+]][0, 0, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1]
// CHECK-DAG:     %[[X1:.+]] = tensor.extract_slice %[[X]][0, 2, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1]
// CHECK-DAG:     %[[W0:.+]] = tensor.extract_slice %[[W:.+]][0, 0, 0, 0] [3, 2, 3, 3] [1, 1, 1, 1]
// CHECK-DAG:     %[[W1:.+]] = tensor.extract_slice %[[W]][3, 0, 0, 0] [3, 2, 3, 3] [1, 1, 1, 1]
// CHECK-DAG:     linalg.conv_2d_nchw_fchw {{.*}}ins(%[[X0]], %[[W0]] : tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>)
// CHECK-DAG:     linalg.conv_2d_nchw_fchw {{.*}}ins(%[[X1]], %[[W1]] : tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>)
// CHECK-DAG:     tensor.insert_slice %{{.+}} into %{{.+}}[0, 3, 0, 0] [1, 3, 6, 6] [1, 1, 1, 1]
// CHECK-LABEL: func.func @many_groups
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 24, 2, 8, 8]
// CHECK:         linalg.conv_2d_ngchw_gfchw
// CHECK-SAME:      -> tensor<1x24x2x6x6xf32>
func.func @depthwise(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv(%x, %w) {group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
func.func @grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = kiln.conv(%x, %w) {group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return %0 : tensor<1x6x6x6xf32>
}
func.func @many_groups(%x: tensor<1x48x8x8xf32>, %w: tensor<48x2x3x3xf32>) -> tensor<1x48x6x6xf32> {
  %0 = kiln.conv(%x, %w) {group = 24 : i64} : (tensor<1x48x8x8xf32>, tensor<48x2x3x3xf32>) -> tensor<1x48x6x6xf32>
  return %0 : tensor<1x48x6x6xf32>
}

// -----

// A grouped 1-D convolution takes the 2-D form's groups (here one
// convolution per group); a grouped 3-D one is the contraction above, with
// c over one group's input channels and output channel f reading those of
// its group: (f floordiv (F / group)) * (C / group) + c.

// CHECK-DAG: #[[$DIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 + d2, d3 + d6, d4 + d7, d5 + d8)>
// CHECK-LABEL: func.func @grouped1d
// CHECK:         tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [1, 4, 1, 8]
// CHECK-COUNT-2: linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.+}}, %{{.+}} : tensor<1x2x1x8xf32>, tensor<3x2x1x3xf32>) outs(%{{.+}} : tensor<1x3x1x4xf32>)
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x6x1x4xf32> into tensor<1x6x4xf32>
// CHECK-LABEL: func.func @depthwise3d
// CHECK:         linalg.generic {indexing_maps = [#[[$DIN]], #{{.+}}, #{{.+}}]
// CHECK-SAME:      ins(%{{.+}}, %{{.+}} : tensor<1x4x4x4x4xf32>, tensor<4x1x2x2x2xf32>)
func.func @grouped1d(%x: tensor<1x4x8xf32>, %w: tensor<6x2x3xf32>) -> tensor<1x6x4xf32> {
  %0 = kiln.conv(%x, %w) {group = 2 : i64, dilations = array<i64: 2>} : (tensor<1x4x8xf32>, tensor<6x2x3xf32>) -> tensor<1x6x4xf32>
  return %0 : tensor<1x6x4xf32>
}
func.func @depthwise3d(%x: tensor<1x4x4x4x4xf32>, %w: tensor<4x1x2x2x2xf32>) -> tensor<1x4x3x3x3xf32> {
  %0 = kiln.conv(%x, %w) {group = 4 : i64} : (tensor<1x4x4x4x4xf32>, tensor<4x1x2x2x2xf32>) -> tensor<1x4x3x3x3xf32>
  return %0 : tensor<1x4x3x3x3xf32>
}

// -----

// Pooling is a reduction over the window dims. MaxPool starts from -inf
// (and pads with it); AveragePool divides by a count that pooling a tensor
// of ones computes, so padding is excluded by default.

// CHECK-LABEL: func.func @pools
// CHECK-DAG:     %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK:         linalg.fill ins(%[[NEGINF]]
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:           arith.maximumf
// CHECK:         tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:           arith.addf
// CHECK:         arith.divf
func.func @pools(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) {
  %0 = kiln.max_pool(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %1 = kiln.average_pool(%x) {kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %0, %1 : tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>
}

// -----

// LpPool sums |x|^p over each window (the padding adds zeros) and takes
// the p-th root: p = 2 squares and takes a square root, other p go through
// math.powf. GlobalLpPool reduces every spatial dim the same way.
// LpNormalization divides by the norm along its axis, 0 where it is 0.

// CHECK-LABEL: func.func @lp_ops
// CHECK:         linalg.generic
// CHECK:           arith.mulf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:           arith.addf
// CHECK:         math.sqrt
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK:           math.absf
// CHECK:           math.powf
// CHECK:           arith.addf
// CHECK:         math.powf
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:           math.absf
// CHECK-NOT:       math.powf
// CHECK:         linalg.generic
// CHECK:           arith.divf
// CHECK:           arith.cmpf oeq
// CHECK:           arith.select
func.func @lp_ops(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) {
  %0 = kiln.lp_pool(%x) {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>
  %1 = kiln.global_lp_pool(%x) {p = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  %2 = kiln.lp_normalization(%x) {p = 1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %0, %1, %2 : tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>
}

// -----

// MatMul in every form is one contraction over (batch..., m, k, n), the
// reduction before the contiguous n; a broadcast batch dim is a constant 0.

// CHECK-LABEL: func.func @matmuls
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME:      ins(%{{.+}}, %{{.+}} : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]
func.func @matmuls(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<5x2x3xf32>) -> (tensor<2x4xf32>, tensor<5x2x4xf32>) {
  %0 = kiln.matmul(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = kiln.matmul(%c, %b) : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<5x2x4xf32>
}

// -----

// Vector operands contribute no m (A) or n (B) loop: a dot product is one
// reduction, a vector times a batch of matrices (batch, k, n), a batch of
// matrices times a vector (batch..., m, k).

// CHECK-DAG: #[[$K:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$S:.+]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[$VA:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[$VB:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$VO:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$MA:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$MB:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[$MO:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul_vectors
// CHECK:         linalg.generic {indexing_maps = [#[[$K]], #[[$K]], #[[$S]]], iterator_types = ["reduction"]}
// CHECK:         linalg.generic {indexing_maps = [#[[$VA]], #[[$VB]], #[[$VO]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK:         linalg.generic {indexing_maps = [#[[$MA]], #[[$MB]], #[[$MO]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
func.func @matmul_vectors(%v: tensor<3xf32>, %w: tensor<3xf32>, %b: tensor<2x3x4xf32>, %m: tensor<2x5x4x3xf32>) -> (tensor<f32>, tensor<2x4xf32>, tensor<2x5x4xf32>) {
  %0 = kiln.matmul(%v, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %1 = kiln.matmul(%v, %b) : (tensor<3xf32>, tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %2 = kiln.matmul(%m, %w) : (tensor<2x5x4x3xf32>, tensor<3xf32>) -> tensor<2x5x4xf32>
  return %0, %1, %2 : tensor<f32>, tensor<2x4xf32>, tensor<2x5x4xf32>
}

// -----

// Mish is x * tanh(softplus(x)), softplus taken as x past 20 (where
// exp(x) nears f32's range and log1p(exp(x)) is x to f32 precision).

// CHECK-LABEL: func.func @mish
// CHECK:         linalg.generic
// CHECK:           %[[E:.+]] = math.exp %[[X:[^ ]+]] : f32
// CHECK:           %[[SP:.+]] = math.log1p %[[E]] : f32
// CHECK:           %[[BIG:.+]] = arith.cmpf ogt, %[[X]], %{{.+}} : f32
// CHECK:           %[[S:.+]] = arith.select %[[BIG]], %[[X]], %[[SP]] : f32
// CHECK:           %[[T:.+]] = math.tanh %[[S]] : f32
// CHECK:           arith.mulf %[[X]], %[[T]] : f32
func.func @mish(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.mish(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Softmax goes through linalg.softmax's decomposition: max, exp, sum, div.

// CHECK-LABEL: func.func @softmax
// CHECK:         arith.maxnumf
// CHECK:         math.exp
// CHECK:         arith.addf
// CHECK:         arith.divf
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = kiln.softmax(%x) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Data movement: Reshape, Transpose, Concat, Slice, Gather.

// CHECK-LABEL: func.func @movement
// CHECK:         tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK:         linalg.transpose ins(%{{.+}} : tensor<2x3xf32>) outs(%{{.+}} : tensor<3x2xf32>) permutation = [1, 0]
// CHECK:         tensor.insert_slice
// CHECK:         tensor.insert_slice
// CHECK:         tensor.extract_slice %{{.+}}[0, 1] [2, 2] [1, 1]
// CHECK:         tensor.extract
func.func @movement(%x: tensor<2x3xf32>, %i: tensor<4xi64>) -> (tensor<6xf32>, tensor<3x2xf32>, tensor<4x3xf32>, tensor<2x2xf32>, tensor<4x3xf32>) {
  %s = kiln.constant dense<[6]> : tensor<1xi64>
  %0 = kiln.reshape(%x, %s) : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  %1 = kiln.transpose(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = kiln.concat(%x, %x) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %st = kiln.constant dense<[1]> : tensor<1xi64>
  %en = kiln.constant dense<[3]> : tensor<1xi64>
  %ax = kiln.constant dense<[1]> : tensor<1xi64>
  %3 = kiln.slice(%x, %st, %en, %ax) : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x2xf32>
  %4 = kiln.gather(%x, %i) : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  return %0, %1, %2, %3, %4 : tensor<6xf32>, tensor<3x2xf32>, tensor<4x3xf32>, tensor<2x2xf32>, tensor<4x3xf32>
}

// -----

// Unsigned integers: the lowering computes on signless integers and picks
// the unsigned forms (divui, cmpi ult, uitofp, fptoui); the signature
// keeps the ONNX element type in `kiln.element_type`. An integer divisor
// of 0 becomes 1 before the division (division by zero is undefined
// behaviour in LLVM, and a vectorized tail reads its inactive lanes as
// 0). QuantizeLinear
// rounds half to even, adds the zero point and saturates to [0, 255].

// CHECK-LABEL: func.func @unsigned
// CHECK-SAME:    %{{.+}}: tensor<4xi8> {kiln.element_type = ui8}, %{{.+}}: tensor<4xi8> {kiln.element_type = ui8}, %{{.+}}: tensor<f32>, %{{.+}}: tensor<i8> {kiln.element_type = ui8})
// CHECK-SAME:    -> (tensor<4xi8> {kiln.element_type = ui8}, tensor<4xi1>, tensor<4xf32>, tensor<4xi8> {kiln.element_type = ui8})
// CHECK:         %[[ZERO:.+]] = arith.cmpi eq, %[[B:.+]], %{{.+}} : i8
// CHECK:         %[[D:.+]] = arith.select %[[ZERO]], %{{.+}}, %[[B]] : i8
// CHECK:         arith.divui %{{.+}}, %[[D]] : i8
// CHECK:         arith.cmpi ult, %{{.+}}, %{{.+}} : i8
// CHECK:         arith.uitofp %{{.+}} : i8 to f32
// CHECK:         arith.uitofp %{{.+}} : i8 to f32
// CHECK:         arith.divf
// CHECK:         math.roundeven
// CHECK:         arith.addf
// CHECK:         arith.constant 0.000000e+00 : f32
// CHECK:         arith.constant 2.550000e+02 : f32
// CHECK:         arith.fptoui %{{.+}} : f32 to i8
// CHECK-NOT:     ui8>
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xf32>, tensor<4xui8>) {
  %0 = kiln.div(%a, %b) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = kiln.less(%a, %b) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %2 = kiln.cast(%0) {to = f32} : (tensor<4xui8>) -> tensor<4xf32>
  %3 = kiln.quantize_linear(%2, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  return %0, %1, %2, %3 : tensor<4xui8>, tensor<4xi1>, tensor<4xf32>, tensor<4xui8>
}

// -----

// DequantizeLinear per channel (axis 1): the scale and zero point follow
// dim 1; int8 data is read signed.

// CHECK-DAG: #[[$CH:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @dequant
// CHECK:         linalg.generic {indexing_maps = [#{{.+}}, #[[$CH]], #[[$CH]], #{{.+}}]
// CHECK:           arith.sitofp %{{.+}} : i8 to f32
// CHECK:           arith.sitofp %{{.+}} : i8 to f32
// CHECK:           arith.subf
// CHECK:           arith.mulf
func.func @dequant(%x: tensor<2x3xi8>, %s: tensor<3xf32>, %z: tensor<3xi8>) -> tensor<2x3xf32> {
  %0 = kiln.dequantize_linear(%x, %s, %z) : (tensor<2x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// ReduceMax and ReduceMin over booleans order false < true: the i1 values
// compare unsigned, from false (max) and true (min).

// CHECK-LABEL: func.func @reduce_bool
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: linalg.fill ins(%[[FALSE]] : i1)
// CHECK: arith.maxui
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: linalg.fill ins(%[[TRUE]] : i1)
// CHECK: arith.minui
func.func @reduce_bool(%x: tensor<2x3xi1>) -> (tensor<2xi1>, tensor<2xi1>) {
  %axes = kiln.constant dense<1> : tensor<1xi64>
  %0 = kiln.reduce_max(%x, %axes) {keepdims = 0 : i64} : (tensor<2x3xi1>, tensor<1xi64>) -> tensor<2xi1>
  %1 = kiln.reduce_min(%x, %axes) {keepdims = 0 : i64} : (tensor<2x3xi1>, tensor<1xi64>) -> tensor<2xi1>
  return %0, %1 : tensor<2xi1>, tensor<2xi1>
}

// -----

// Cast and QuantizeLinear to float8: with `saturate` (the default) the
// value is first clamped to the largest finite magnitude (448 for
// f8E4M3FN, here in f16; infinities clamp too, NaN stays), then rounded by
// arith.truncf; with saturate = 0 it is not clamped. QuantizeLinear adds
// the zero point (as f32) before clamping, with no rounding to integers.
// CHECK-LABEL: func.func @to_float8
// CHECK:         arith.constant 4.480000e+02 : f16
// CHECK:         arith.cmpf ogt
// CHECK:         arith.cmpf olt
// CHECK:         arith.truncf %{{.+}} : f16 to f8E4M3FN
// CHECK:         linalg.generic
// CHECK-NOT:     arith.cmpf
// CHECK:         arith.truncf %{{.+}} : f32 to f8E5M2
// CHECK:         linalg.generic
// CHECK:         arith.extf %{{.+}} : f8E4M3FN to f32
// CHECK:         arith.divf
// CHECK:         arith.addf
// CHECK:         arith.constant 4.480000e+02 : f32
// CHECK-NOT:     math.roundeven
// CHECK:         arith.truncf %{{.+}} : f32 to f8E4M3FN
func.func @to_float8(%h: tensor<4xf16>, %x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<f8E4M3FN>) -> (tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xf8E4M3FN>) {
  %0 = kiln.cast(%h) {to = f8E4M3FN} : (tensor<4xf16>) -> tensor<4xf8E4M3FN>
  %1 = kiln.cast(%x) {to = f8E5M2, saturate = 0 : i64} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  %2 = kiln.quantize_linear(%x, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %0, %1, %2 : tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xf8E4M3FN>
}

// -----

// Bitwise ops on integers (broadcast as any elementwise op); BitwiseNot
// flips every bit.
// CHECK-LABEL: func.func @bitwise
// CHECK:         arith.andi %{{.+}}, %{{.+}} : i32
// CHECK:         arith.ori %{{.+}}, %{{.+}} : i32
// CHECK:         arith.xori %{{.+}}, %{{.+}} : i32
// CHECK:         %[[ONES:.+]] = arith.constant -1 : i8
// CHECK:         arith.xori %{{.+}}, %[[ONES]] : i8
func.func @bitwise(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %c: tensor<4xui8>) -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<4xui8>) {
  %0 = kiln.bitwise_and(%a, %b) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %1 = kiln.bitwise_or(%a, %b) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %2 = kiln.bitwise_xor(%a, %b) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %3 = kiln.bitwise_not(%c) : (tensor<4xui8>) -> tensor<4xui8>
  return %0, %1, %2, %3 : tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<4xui8>
}

// -----

// RotaryEmbedding is one generic over its output with no inputs: each
// element reads itself, its partner (here the other half of the head) and
// the cache entries of its position, clamped into the cache.

// CHECK-LABEL: func.func @rotary
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(
// CHECK:           tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<1x2x3x8xf32>
// CHECK:           tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : tensor<1x2x3x8xf32>
// CHECK:           tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<1x3xi64>
// CHECK:           arith.maxsi
// CHECK:           arith.minsi
// CHECK:           tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<4x4xf32>
// CHECK:           arith.subf
// CHECK:           arith.addf
// CHECK:           arith.select
func.func @rotary(%x: tensor<1x2x3x8xf32>, %c: tensor<4x4xf32>, %p: tensor<1x3xi64>) -> tensor<1x2x3x8xf32> {
  %0 = kiln.rotary_embedding(%x, %c, %c, %p) : (tensor<1x2x3x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<1x3xi64>) -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// Concat skips an empty part, whose offset (the end of the dim) no slice
// may start at.

// CHECK-LABEL: func.func @concat_empty
// CHECK:         tensor.insert_slice %{{.+}} into %{{.+}}[0, 0] [2, 3] [1, 1]
// CHECK-NOT:     tensor.insert_slice
// CHECK:         return
func.func @concat_empty(%a: tensor<2x3xf32>, %e: tensor<2x0xf32>) -> tensor<2x3xf32> {
  %0 = kiln.concat(%a, %e) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x0xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
