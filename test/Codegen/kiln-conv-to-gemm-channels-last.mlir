// RUN: kiln-opt %s -split-input-file -kiln-conv-to-gemm | FileCheck %s

// A 3x3 convolution with a 7x7 output plane (49 < channels-last-below = 64)
// and 32 output channels (two register tiles of 16): the windows are copied
// into [n, oh, ow, c, kh, kw], the bias broadcast is rebuilt as
// [n, oh, ow, f], the GEMM contracts [n, p, k] with the weights as [f, k]
// into [n, p, f], and the result is transposed back to NCHW.

// CHECK-DAG: #[[$BIAS:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[$WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
// CHECK-DAG: #[[$COLS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$W:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @conv3x3
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x8x9x9xf32>, %[[W:[^:]+]]: tensor<32x8x3x3xf32>, %[[B:[^:]+]]: tensor<32xf32>
// CHECK:         %[[WK:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<32x8x3x3xf32> into tensor<32x72xf32>
// CHECK:         %[[COL:.+]] = linalg.generic {indexing_maps = [#[[$WIN]], #{{.+}}], {{.*}} ins(%[[X]] : tensor<1x8x9x9xf32>) outs(%{{.+}} : tensor<1x7x7x8x3x3xf32>)
// CHECK:         %[[COLS:.+]] = tensor.collapse_shape %[[COL]] {{\[}}[0], [1, 2], [3, 4, 5]] : tensor<1x7x7x8x3x3xf32> into tensor<1x49x72xf32>
// CHECK:         %[[INIT:.+]] = linalg.generic {indexing_maps = [#[[$BIAS]], #{{.+}}], {{.*}} ins(%[[B]] : tensor<32xf32>) outs(%{{.+}} : tensor<1x7x7x32xf32>)
// CHECK:         %[[ACC:.+]] = tensor.collapse_shape %[[INIT]] {{\[}}[0], [1, 2], [3]] : tensor<1x7x7x32xf32> into tensor<1x49x32xf32>
// CHECK:         %[[G:.+]] = linalg.generic {indexing_maps = [#[[$COLS]], #[[$W]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[COLS]], %[[WK]] : tensor<1x49x72xf32>, tensor<32x72xf32>) outs(%[[ACC]] : tensor<1x49x32xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[E:.+]] = tensor.expand_shape %[[G]] {{\[}}[0], [1, 2], [3]] output_shape [1, 7, 7, 32]
// CHECK:         %[[T:.+]] = linalg.transpose ins(%[[E]] : tensor<1x7x7x32xf32>) outs(%{{.+}} : tensor<1x32x7x7xf32>) permutation = [0, 3, 1, 2]
// CHECK:         return %[[T]]
// The NCHW bias broadcast is gone.
// CHECK-NOT:     tensor<1x32x7x7xf32>) {
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv3x3(%x: tensor<1x8x9x9xf32>, %w: tensor<32x8x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x7x7xf32> {
  %e = tensor.empty() : tensor<1x32x7x7xf32>
  %acc = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : tensor<32xf32>) outs(%e : tensor<1x32x7x7xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x32x7x7xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x9x9xf32>, tensor<32x8x3x3xf32>) outs(%acc : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  return %0 : tensor<1x32x7x7xf32>
}

// -----

// A 1x1 stride-1 convolution: the input itself, transposed to
// [n, oh, ow, c], is the GEMM's left-hand side; a zero fill is rebuilt in
// the [n, oh, ow, f] layout.

// CHECK-LABEL: func.func @pointwise
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x8x4x4xf32>
// CHECK:         %[[XT:.+]] = linalg.transpose ins(%[[X]] : tensor<2x8x4x4xf32>) outs(%{{.+}} : tensor<2x4x4x8xf32>) permutation = [0, 2, 3, 1]
// CHECK:         %[[COLS:.+]] = tensor.collapse_shape %[[XT]] {{\[}}[0], [1, 2], [3]] : tensor<2x4x4x8xf32> into tensor<2x16x8xf32>
// CHECK:         %[[FILL:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x4x4x16xf32>)
// CHECK:         linalg.generic {{.+}} ins(%[[COLS]], %{{.+}} : tensor<2x16x8xf32>, tensor<16x8xf32>) outs(%{{.+}} : tensor<2x16x16xf32>)
// CHECK:         linalg.transpose ins(%{{.+}} : tensor<2x4x4x16xf32>) outs(%{{.+}} : tensor<2x16x4x4xf32>) permutation = [0, 3, 1, 2]
func.func @pointwise(%x: tensor<2x8x4x4xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<2x16x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x4x4xf32>) -> tensor<2x16x4x4xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x8x4x4xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<2x16x4x4xf32>) -> tensor<2x16x4x4xf32>
  return %0 : tensor<2x16x4x4xf32>
}

// -----

// The bias broadcast as kiln-collapse-elementwise leaves it, [n, f, oh * ow]
// expanded back to NCHW, is rebuilt in the [n, oh, ow, f] layout too,
// not transposed.

// CHECK-DAG: #[[$BIASC:.+]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @collapsed_bias
// CHECK-SAME:    %{{[^:]+}}: tensor<1x8x4x4xf32>, %{{[^:]+}}: tensor<16x8x1x1xf32>, %[[B:[^:]+]]: tensor<16xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$BIASC]], #{{.+}}], {{.*}} ins(%[[B]] : tensor<16xf32>) outs(%{{.+}} : tensor<1x4x4x16xf32>)
// CHECK-NOT:     permutation = [0, 2, 3, 1]
// CHECK:         permutation = [0, 3, 1, 2]
#bias3 = affine_map<(d0, d1, d2) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @collapsed_bias(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>, %b: tensor<16xf32>) -> tensor<1x16x4x4xf32> {
  %e = tensor.empty() : tensor<1x16x16xf32>
  %acc3 = linalg.generic {indexing_maps = [#bias3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%b : tensor<16xf32>) outs(%e : tensor<1x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x16x16xf32>
  %acc = tensor.expand_shape %acc3 [[0], [1], [2, 3]] output_shape [1, 16, 4, 4] : tensor<1x16x16xf32> into tensor<1x16x4x4xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

// Constant weights: the windows are copied from the input transposed to
// [n, h, w, c] (its zero plane pad applied after the transpose) with
// k = (kh, kw, c), so each tap copies a contiguous run of channels, and
// the weights become a constant reordered to [f, kh, kw, c] at compile
// time (w[f, c, kh, kw] = c + 2 * (kh * 2 + kw) + 16 * f below, so the
// reordered first row is 0, 1, 2, 3, 4, 5, 6, 7 read as c-major runs).

// CHECK-DAG: #[[$NHWC:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d3, d2 + d4, d5)>
// CHECK-LABEL: func.func @taps_major
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x7x7xf32>
// CHECK:         %[[W:.+]] = arith.constant dense_resource<kiln_taps_major> : tensor<16x2x2x2xf32>
// CHECK:         %[[XT:.+]] = linalg.transpose ins(%[[X]] : tensor<1x2x7x7xf32>) outs(%{{.+}} : tensor<1x7x7x2xf32>) permutation = [0, 2, 3, 1]
// CHECK:         %[[P:.+]] = tensor.pad %[[XT]] low[0, 1, 1, 0] high[0, 0, 0, 0]
// CHECK:         %[[COL:.+]] = linalg.generic {indexing_maps = [#[[$NHWC]], #{{.+}}], {{.*}} ins(%[[P]] : tensor<1x8x8x2xf32>) outs(%{{.+}} : tensor<1x7x7x2x2x2xf32>)
// CHECK:         tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<16x2x2x2xf32> into tensor<16x8xf32>
func.func @taps_major(%x: tensor<1x2x7x7xf32>) -> tensor<1x16x7x7xf32> {
  %w = arith.constant dense<[[[[0.0, 2.0], [4.0, 6.0]], [[1.0, 3.0], [5.0, 7.0]]], [[[16.0, 18.0], [20.0, 22.0]], [[17.0, 19.0], [21.0, 23.0]]], [[[32.0, 34.0], [36.0, 38.0]], [[33.0, 35.0], [37.0, 39.0]]], [[[48.0, 50.0], [52.0, 54.0]], [[49.0, 51.0], [53.0, 55.0]]], [[[64.0, 66.0], [68.0, 70.0]], [[65.0, 67.0], [69.0, 71.0]]], [[[80.0, 82.0], [84.0, 86.0]], [[81.0, 83.0], [85.0, 87.0]]], [[[96.0, 98.0], [100.0, 102.0]], [[97.0, 99.0], [101.0, 103.0]]], [[[112.0, 114.0], [116.0, 118.0]], [[113.0, 115.0], [117.0, 119.0]]], [[[128.0, 130.0], [132.0, 134.0]], [[129.0, 131.0], [133.0, 135.0]]], [[[144.0, 146.0], [148.0, 150.0]], [[145.0, 147.0], [149.0, 151.0]]], [[[160.0, 162.0], [164.0, 166.0]], [[161.0, 163.0], [165.0, 167.0]]], [[[176.0, 178.0], [180.0, 182.0]], [[177.0, 179.0], [181.0, 183.0]]], [[[192.0, 194.0], [196.0, 198.0]], [[193.0, 195.0], [197.0, 199.0]]], [[[208.0, 210.0], [212.0, 214.0]], [[209.0, 211.0], [213.0, 215.0]]], [[[224.0, 226.0], [228.0, 230.0]], [[225.0, 227.0], [229.0, 231.0]]], [[[240.0, 242.0], [244.0, 246.0]], [[241.0, 243.0], [245.0, 247.0]]]]> : tensor<16x2x2x2xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x2x7x7xf32> to tensor<1x2x8x8xf32>
  %e = tensor.empty() : tensor<1x16x7x7xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x7x7xf32>) -> tensor<1x16x7x7xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x2x8x8xf32>, tensor<16x2x2x2xf32>) outs(%acc : tensor<1x16x7x7xf32>) -> tensor<1x16x7x7xf32>
  return %0 : tensor<1x16x7x7xf32>
}

// -----

// A strided 1x1 convolution of an NCHW input that no transpose computes
// (ResNet's downsamples after an NCHW block) copies the positions it
// reads straight from NCHW, a quarter of the input at stride 2, instead of
// transposing the whole input first.

// CHECK-DAG: #[[$STRIDED:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>
// CHECK-LABEL: func.func @strided_pointwise
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x8x8x8xf32>
// CHECK-NOT:     linalg.transpose ins(%[[X]]
// CHECK:         linalg.generic {indexing_maps = [#[[$STRIDED]], #{{.+}}], {{.*}} ins(%[[X]] : tensor<1x8x8x8xf32>) outs(%{{.+}} : tensor<1x4x4x8x1x1xf32>)
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x16x8xf32>, tensor<16x8xf32>) outs(%{{.+}} : tensor<1x16x16xf32>)
func.func @strided_pointwise(%x: tensor<1x8x8x8xf32>) -> tensor<1x16x4x4xf32> {
  %w = arith.constant dense<[[[[0.0]], [[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]]], [[[8.0]], [[9.0]], [[10.0]], [[11.0]], [[12.0]], [[13.0]], [[14.0]], [[15.0]]], [[[16.0]], [[17.0]], [[18.0]], [[19.0]], [[20.0]], [[21.0]], [[22.0]], [[23.0]]], [[[24.0]], [[25.0]], [[26.0]], [[27.0]], [[28.0]], [[29.0]], [[30.0]], [[31.0]]], [[[32.0]], [[33.0]], [[34.0]], [[35.0]], [[36.0]], [[37.0]], [[38.0]], [[39.0]]], [[[40.0]], [[41.0]], [[42.0]], [[43.0]], [[44.0]], [[45.0]], [[46.0]], [[47.0]]], [[[48.0]], [[49.0]], [[50.0]], [[51.0]], [[52.0]], [[53.0]], [[54.0]], [[55.0]]], [[[56.0]], [[57.0]], [[58.0]], [[59.0]], [[60.0]], [[61.0]], [[62.0]], [[63.0]]], [[[64.0]], [[65.0]], [[66.0]], [[67.0]], [[68.0]], [[69.0]], [[70.0]], [[71.0]]], [[[72.0]], [[73.0]], [[74.0]], [[75.0]], [[76.0]], [[77.0]], [[78.0]], [[79.0]]], [[[80.0]], [[81.0]], [[82.0]], [[83.0]], [[84.0]], [[85.0]], [[86.0]], [[87.0]]], [[[88.0]], [[89.0]], [[90.0]], [[91.0]], [[92.0]], [[93.0]], [[94.0]], [[95.0]]], [[[96.0]], [[97.0]], [[98.0]], [[99.0]], [[100.0]], [[101.0]], [[102.0]], [[103.0]]], [[[104.0]], [[105.0]], [[106.0]], [[107.0]], [[108.0]], [[109.0]], [[110.0]], [[111.0]]], [[[112.0]], [[113.0]], [[114.0]], [[115.0]], [[116.0]], [[117.0]], [[118.0]], [[119.0]]], [[[120.0]], [[121.0]], [[122.0]], [[123.0]], [[124.0]], [[125.0]], [[126.0]], [[127.0]]]]> : tensor<16x8x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

// Negative: where a transpose (a channels-last result brought back to
// NCHW, here with a Relu in the same generic) feeds the input, through
// elementwise ops and the reshapes kiln-collapse-elementwise leaves, the
// whole input is transposed to channels-last, which kiln-sink-transposes
// cancels.

// CHECK-LABEL: func.func @strided_pointwise_after_transpose
// CHECK:         %[[R:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<1x8x8x8xf32>) outs(%{{.+}} : tensor<1x8x8x8xf32>)
// CHECK:         %[[F:.+]] = tensor.collapse_shape %[[R]]
// CHECK:         %[[E:.+]] = tensor.expand_shape %[[F]]
// CHECK:         linalg.transpose ins(%[[E]] : tensor<1x8x8x8xf32>) outs(%{{.+}} : tensor<1x8x8x8xf32>) permutation = [0, 2, 3, 1]
func.func @strided_pointwise_after_transpose(%nhwc: tensor<1x8x8x8xf32>) -> tensor<1x16x4x4xf32> {
  %w = arith.constant dense<[[[[0.0]], [[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]]], [[[8.0]], [[9.0]], [[10.0]], [[11.0]], [[12.0]], [[13.0]], [[14.0]], [[15.0]]], [[[16.0]], [[17.0]], [[18.0]], [[19.0]], [[20.0]], [[21.0]], [[22.0]], [[23.0]]], [[[24.0]], [[25.0]], [[26.0]], [[27.0]], [[28.0]], [[29.0]], [[30.0]], [[31.0]]], [[[32.0]], [[33.0]], [[34.0]], [[35.0]], [[36.0]], [[37.0]], [[38.0]], [[39.0]]], [[[40.0]], [[41.0]], [[42.0]], [[43.0]], [[44.0]], [[45.0]], [[46.0]], [[47.0]]], [[[48.0]], [[49.0]], [[50.0]], [[51.0]], [[52.0]], [[53.0]], [[54.0]], [[55.0]]], [[[56.0]], [[57.0]], [[58.0]], [[59.0]], [[60.0]], [[61.0]], [[62.0]], [[63.0]]], [[[64.0]], [[65.0]], [[66.0]], [[67.0]], [[68.0]], [[69.0]], [[70.0]], [[71.0]]], [[[72.0]], [[73.0]], [[74.0]], [[75.0]], [[76.0]], [[77.0]], [[78.0]], [[79.0]]], [[[80.0]], [[81.0]], [[82.0]], [[83.0]], [[84.0]], [[85.0]], [[86.0]], [[87.0]]], [[[88.0]], [[89.0]], [[90.0]], [[91.0]], [[92.0]], [[93.0]], [[94.0]], [[95.0]]], [[[96.0]], [[97.0]], [[98.0]], [[99.0]], [[100.0]], [[101.0]], [[102.0]], [[103.0]]], [[[104.0]], [[105.0]], [[106.0]], [[107.0]], [[108.0]], [[109.0]], [[110.0]], [[111.0]]], [[[112.0]], [[113.0]], [[114.0]], [[115.0]], [[116.0]], [[117.0]], [[118.0]], [[119.0]]], [[[120.0]], [[121.0]], [[122.0]], [[123.0]], [[124.0]], [[125.0]], [[126.0]], [[127.0]]]]> : tensor<16x8x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<1x8x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%nhwc : tensor<1x8x8x8xf32>) outs(%re : tensor<1x8x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x8x8xf32>
  %flat = tensor.collapse_shape %r [[0, 1, 2, 3]] : tensor<1x8x8x8xf32> into tensor<512xf32>
  %x = tensor.expand_shape %flat [[0, 1, 2, 3]] output_shape [1, 8, 8, 8] : tensor<512xf32> into tensor<1x8x8x8xf32>
  %e = tensor.empty() : tensor<1x16x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

// Any other accumulator is transposed into the channels-last layout.

// CHECK-LABEL: func.func @other_init
// CHECK-SAME:    %[[ACC:[^:]+]]: tensor<1x16x4x4xf32>
// CHECK:         linalg.transpose ins(%[[ACC]] : tensor<1x16x4x4xf32>) outs(%{{.+}} : tensor<1x4x4x16xf32>) permutation = [0, 2, 3, 1]
func.func @other_init(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>, %acc: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

// Stay NCHW: output channels that are not whole register tiles (24 of
// 16-wide tiles), and a plane of 64 elements (8x8), which 16-wide register
// tiles divide: its panel is packed, [n, p / 16, k, 16].

// CHECK-LABEL: func.func @stays_nchw
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<24x8xf32>, tensor<1x8x16xf32>) outs(%{{.+}} : tensor<1x24x16xf32>)
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<16x8xf32>, tensor<1x4x8x16xf32>) outs(%{{.+}} : tensor<1x16x4x16xf32>)
// CHECK-NOT:     linalg.transpose
func.func @stays_nchw(%x: tensor<1x8x4x4xf32>, %w: tensor<24x8x1x1xf32>, %acc: tensor<1x24x4x4xf32>,
                      %x8: tensor<1x8x8x8xf32>, %w8: tensor<16x8x1x1xf32>, %acc8: tensor<1x16x8x8xf32>)
    -> (tensor<1x24x4x4xf32>, tensor<1x16x8x8xf32>) {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x4x4xf32>, tensor<24x8x1x1xf32>) outs(%acc : tensor<1x24x4x4xf32>) -> tensor<1x24x4x4xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x8, %w8 : tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>) outs(%acc8 : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  return %0, %1 : tensor<1x24x4x4xf32>, tensor<1x16x8x8xf32>
}

// -----

// channels-last-below=0 turns the channels-last form off.

// RUN: kiln-opt %s -split-input-file --kiln-conv-to-gemm=channels-last-below=0 | FileCheck %s --check-prefix=OFF
// OFF-NOT: linalg.transpose
// OFF-NOT: tensor<1x7x7x8x3x3xf32>

// -----

// A 10x10 plane (100 elements, at least channels-last-below) that no
// register tile width divides (16, 8), with output channels a whole number
// of tiles: it would be vectorized with a peeled remainder from an unpacked
// panel, so it goes channels-last too. With pack-panels=false it stays NCHW.

// RUN: kiln-opt %s -split-input-file --kiln-conv-to-gemm=pack-panels=false | FileCheck %s --check-prefix=NOPACK
// CHECK-LABEL: func.func @unpackable_plane
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x100x8xf32>, tensor<16x8xf32>) outs(%{{.+}} : tensor<1x100x16xf32>)
// CHECK:         linalg.transpose
// NOPACK-LABEL:  func.func @unpackable_plane
// NOPACK-NOT:    linalg.transpose
// NOPACK:        linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<16x8xf32>, tensor<1x8x100xf32>) outs(%{{.+}} : tensor<1x16x100xf32>)
func.func @unpackable_plane(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x1x1xf32>, %acc: tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x10x10xf32>, tensor<16x8x1x1xf32>) outs(%acc : tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  return %0 : tensor<1x16x10x10xf32>
}

// -----

// A 12x12 plane (144 = 9 x 16) with 32 output channels. With 512-bit
// vectors (16 f32 lanes) its register tile along the plane would be one
// vector wide (144 is not a multiple of 32): 8 accumulators, a broadcast
// per FMA, so it goes channels-last, tiles two vectors of channels wide.
// With 256-bit vectors the 16-wide tile is two vectors and divides the
// plane: it stays NCHW, its panel packed.

// RUN: kiln-opt %s -split-input-file --kiln-conv-to-gemm=vector-bits=512 | FileCheck %s --check-prefix=WIDE
// CHECK-LABEL: func.func @one_vector_tile
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<32x8xf32>, tensor<1x9x8x16xf32>) outs(%{{.+}} : tensor<1x32x9x16xf32>)
// CHECK-NOT:     linalg.transpose
// WIDE-LABEL:    func.func @one_vector_tile
// WIDE:          linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x144x8xf32>, tensor<32x8xf32>) outs(%{{.+}} : tensor<1x144x32xf32>)
// WIDE:          linalg.transpose
func.func @one_vector_tile(%x: tensor<1x8x12x12xf32>, %w: tensor<32x8x1x1xf32>, %acc: tensor<1x32x12x12xf32>) -> tensor<1x32x12x12xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x12x12xf32>, tensor<32x8x1x1xf32>) outs(%acc : tensor<1x32x12x12xf32>) -> tensor<1x32x12x12xf32>
  return %0 : tensor<1x32x12x12xf32>
}

// -----

// Output channels that one vector divides but two do not, eight vectors or
// more (72 with 256-bit f32 vectors, as SqueezeNet's 1000 classes): on a
// 13x13 plane (169, which no register tile width divides) they go
// channels-last too, in two-vector tiles whose last one is half used (the
// weight packed padded to 80 by kiln-pack-weights). Under eight vectors (40
// channels) they stay NCHW, in one-vector tiles along the plane.

// CHECK-LABEL: func.func @whole_vectors
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<1x169x8xf32>, tensor<72x8xf32>) outs(%{{.+}} : tensor<1x169x72xf32>)
// CHECK:         linalg.transpose ins(%{{.+}} : tensor<1x13x13x72xf32>) outs(%{{.+}} : tensor<1x72x13x13xf32>) permutation = [0, 3, 1, 2]
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<40x8xf32>, tensor<1x8x169xf32>) outs(%{{.+}} : tensor<1x40x169xf32>)
// CHECK-NOT:     linalg.transpose
func.func @whole_vectors(%x: tensor<1x8x13x13xf32>, %w: tensor<72x8x1x1xf32>, %acc: tensor<1x72x13x13xf32>,
                         %w40: tensor<40x8x1x1xf32>, %acc40: tensor<1x40x13x13xf32>)
    -> (tensor<1x72x13x13xf32>, tensor<1x40x13x13xf32>) {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x13x13xf32>, tensor<72x8x1x1xf32>) outs(%acc : tensor<1x72x13x13xf32>) -> tensor<1x72x13x13xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w40 : tensor<1x8x13x13xf32>, tensor<40x8x1x1xf32>) outs(%acc40 : tensor<1x40x13x13xf32>) -> tensor<1x40x13x13xf32>
  return %0, %1 : tensor<1x72x13x13xf32>, tensor<1x40x13x13xf32>
}
