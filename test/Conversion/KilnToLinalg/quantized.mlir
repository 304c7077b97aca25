// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// ConvInteger on uint8 with a scalar input zero point and a per-output-
// channel weight zero point: each operand less its zero point is widened
// to i32 with extui (unsigned), then the named 2-D convolution accumulates
// in i32 from zero.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-DAG: #[[$OUTCH:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @conv_integer_u8
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x4x4xi8> {kiln.element_type = ui8}, %[[W:[^:]+]]: tensor<3x2x3x3xi8> {kiln.element_type = ui8}, %[[XZ:[^:]+]]: tensor<i8> {kiln.element_type = ui8}, %[[WZ:[^:]+]]: tensor<3xi8> {kiln.element_type = ui8}
// CHECK:         %[[XC:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]], %[[XZ]] : tensor<1x2x4x4xi8>, tensor<i8>) outs(%{{.+}} : tensor<1x2x4x4xi32>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: i8, %[[Z:[^:]+]]: i8, %{{[^:]+}}: i32):
// CHECK-NEXT:      %[[VW:.+]] = arith.extui %[[V]] : i8 to i32
// CHECK-NEXT:      %[[ZW:.+]] = arith.extui %[[Z]] : i8 to i32
// CHECK-NEXT:      %[[D:.+]] = arith.subi %[[VW]], %[[ZW]] : i32
// CHECK-NEXT:      linalg.yield %[[D]] : i32
// CHECK:         %[[WC:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$OUTCH]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[W]], %[[WZ]] : tensor<3x2x3x3xi8>, tensor<3xi8>) outs(%{{.+}} : tensor<3x2x3x3xi32>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: i8, %[[Z:[^:]+]]: i8, %{{[^:]+}}: i32):
// CHECK-NEXT:      %[[VW:.+]] = arith.extui %[[V]] : i8 to i32
// CHECK-NEXT:      %[[ZW:.+]] = arith.extui %[[Z]] : i8 to i32
// CHECK-NEXT:      %[[D:.+]] = arith.subi %[[VW]], %[[ZW]] : i32
// CHECK-NEXT:      linalg.yield %[[D]] : i32
// CHECK:         %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK:         %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.+}} : tensor<1x3x2x2xi32>)
// CHECK:         %[[R:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[XC]], %[[WC]] : tensor<1x2x4x4xi32>, tensor<3x2x3x3xi32>) outs(%[[ACC]] : tensor<1x3x2x2xi32>)
// CHECK:         return %[[R]] : tensor<1x3x2x2xi32>
func.func @conv_integer_u8(%x: tensor<1x2x4x4xui8>, %w: tensor<3x2x3x3xui8>, %xz: tensor<ui8>, %wz: tensor<3xui8>) -> tensor<1x3x2x2xi32> {
  %0 = kiln.conv_integer(%x, %w, %xz, %wz) : (tensor<1x2x4x4xui8>, tensor<3x2x3x3xui8>, tensor<ui8>, tensor<3xui8>) -> tensor<1x3x2x2xi32>
  return %0 : tensor<1x3x2x2xi32>
}

// -----

// ConvInteger on int8 without zero points: the raw 8-bit product (no i32
// copies of the operands; the contraction sign-extends each byte), its
// input padded with an i8 zero, from a zero accumulator.

// CHECK-LABEL: func.func @conv_integer_i8_no_zp
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x4x4xi8>, %[[W:[^:]+]]: tensor<3x2x3x3xi8>)
// CHECK-DAG:     %[[Z8:.+]] = arith.constant 0 : i8
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK-NOT:     linalg.generic
// CHECK:         %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           tensor.yield %[[Z8]] : i8
// CHECK:         } : tensor<1x2x4x4xi8> to tensor<1x2x6x6xi8>
// CHECK:         %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.+}} : tensor<1x3x2x2xi32>)
// CHECK:         %[[R:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x2x6x6xi8>, tensor<3x2x3x3xi8>) outs(%[[ACC]] : tensor<1x3x2x2xi32>)
// CHECK:         return %[[R]]
func.func @conv_integer_i8_no_zp(%x: tensor<1x2x4x4xi8>, %w: tensor<3x2x3x3xi8>) -> tensor<1x3x2x2xi32> {
  %0 = kiln.conv_integer(%x, %w) {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xi8>, tensor<3x2x3x3xi8>) -> tensor<1x3x2x2xi32>
  return %0 : tensor<1x3x2x2xi32>
}

// -----

// Mixed signedness: a uint8 input without a zero point (extui only) and an
// int8 weight with a per-output-channel int8 zero point (extsi both).

// CHECK-DAG: #[[$OUTCH:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @conv_integer_mixed
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x4x4xi8> {kiln.element_type = ui8}, %[[W:[^:]+]]: tensor<3x2x3x3xi8>, %[[WZ:[^:]+]]: tensor<3xi8>)
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : tensor<1x2x4x4xi8>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: i8, %{{[^:]+}}: i32):
// CHECK-NEXT:      %[[VW:.+]] = arith.extui %[[V]] : i8 to i32
// CHECK-NEXT:      linalg.yield %[[VW]] : i32
// CHECK:         linalg.generic {indexing_maps = [#{{.+}}, #[[$OUTCH]], #{{.+}}], {{.*}} ins(%[[W]], %[[WZ]] : tensor<3x2x3x3xi8>, tensor<3xi8>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: i8, %[[Z:[^:]+]]: i8, %{{[^:]+}}: i32):
// CHECK-NEXT:      %[[VW:.+]] = arith.extsi %[[V]] : i8 to i32
// CHECK-NEXT:      %[[ZW:.+]] = arith.extsi %[[Z]] : i8 to i32
// CHECK-NEXT:      arith.subi %[[VW]], %[[ZW]] : i32
// CHECK:         linalg.conv_2d_nchw_fchw
func.func @conv_integer_mixed(%x: tensor<1x2x4x4xui8>, %w: tensor<3x2x3x3xi8>, %wz: tensor<3xi8>) -> tensor<1x3x2x2xi32> {
  %0 = kiln.conv_integer(%x, %w, none, %wz) : (tensor<1x2x4x4xui8>, tensor<3x2x3x3xi8>, tensor<3xi8>) -> tensor<1x3x2x2xi32>
  return %0 : tensor<1x3x2x2xi32>
}

// -----

// A 1-D ConvInteger is the 2-D one over a plane one row high (its
// operands widened to i32, then given a unit dim 2), the named
// convolution in i32.

// CHECK-LABEL: func.func @conv_integer_1d
// CHECK:         linalg.generic {{.*}} ins(%{{.+}} : tensor<1x2x5xi8>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      linalg.yield
// CHECK:         linalg.generic {{.*}} ins(%{{.+}} : tensor<3x2x2xi8>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      linalg.yield
// CHECK:         %[[C:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x2x1x5xi32>, tensor<3x2x1x2xi32>) outs(%{{.+}} : tensor<1x3x1x4xi32>)
// CHECK:         tensor.collapse_shape %[[C]] {{\[}}[0], [1], [2, 3]] : tensor<1x3x1x4xi32> into tensor<1x3x4xi32>
func.func @conv_integer_1d(%x: tensor<1x2x5xi8>, %w: tensor<3x2x2xi8>) -> tensor<1x3x4xi32> {
  %0 = kiln.conv_integer(%x, %w) : (tensor<1x2x5xi8>, tensor<3x2x2xi8>) -> tensor<1x3x4xi32>
  return %0 : tensor<1x3x4xi32>
}

// -----

// MatMulInteger: A's zero point is per row (dim 0 of A), B's per column
// (dim 1 of B); uint8 A widens with extui, int8 B with extsi; the product
// accumulates in i32.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$MA:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$MB:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$MC:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul_integer
// CHECK-SAME:    %[[A:[^:]+]]: tensor<2x4xi8> {kiln.element_type = ui8}, %[[B:[^:]+]]: tensor<4x3xi8>, %[[AZ:[^:]+]]: tensor<2xi8> {kiln.element_type = ui8}, %[[BZ:[^:]+]]: tensor<3xi8>)
// CHECK:         %[[AC:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], {{.*}} ins(%[[A]], %[[AZ]] : tensor<2x4xi8>, tensor<2xi8>) outs(%{{.+}} : tensor<2x4xi32>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: i8, %[[Z:[^:]+]]: i8, %{{[^:]+}}: i32):
// CHECK-NEXT:      %[[VW:.+]] = arith.extui %[[V]] : i8 to i32
// CHECK-NEXT:      %[[ZW:.+]] = arith.extui %[[Z]] : i8 to i32
// CHECK-NEXT:      arith.subi %[[VW]], %[[ZW]] : i32
// CHECK:         %[[BC:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$COL]], #[[$ID]]], {{.*}} ins(%[[B]], %[[BZ]] : tensor<4x3xi8>, tensor<3xi8>) outs(%{{.+}} : tensor<4x3xi32>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: i8, %[[Z:[^:]+]]: i8, %{{[^:]+}}: i32):
// CHECK-NEXT:      %[[VW:.+]] = arith.extsi %[[V]] : i8 to i32
// CHECK-NEXT:      %[[ZW:.+]] = arith.extsi %[[Z]] : i8 to i32
// CHECK-NEXT:      arith.subi %[[VW]], %[[ZW]] : i32
// CHECK:         %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK:         %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.+}} : tensor<2x3xi32>)
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#[[$MA]], #[[$MB]], #[[$MC]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[AC]], %[[BC]] : tensor<2x4xi32>, tensor<4x3xi32>) outs(%[[ACC]] : tensor<2x3xi32>)
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: i32, %[[Y:[^:]+]]: i32, %[[O:[^:]+]]: i32):
// CHECK-NEXT:      %[[M:.+]] = arith.muli %[[X]], %[[Y]] : i32
// CHECK-NEXT:      %[[S:.+]] = arith.addi %[[O]], %[[M]] : i32
// CHECK-NEXT:      linalg.yield %[[S]] : i32
// CHECK:         return %[[R]] : tensor<2x3xi32>
func.func @matmul_integer(%a: tensor<2x4xui8>, %b: tensor<4x3xi8>, %az: tensor<2xui8>, %bz: tensor<3xi8>) -> tensor<2x3xi32> {
  %0 = kiln.matmul_integer(%a, %b, %az, %bz) : (tensor<2x4xui8>, tensor<4x3xi8>, tensor<2xui8>, tensor<3xi8>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// QLinearMatMul with a per-row a_scale and a per-column b_scale: after
// the i32 matmul, y = saturate(roundeven(acc * (a_scale * b_scale /
// y_scale)) + y_zero_point) in [0, 255], converted with fptoui.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @qlinear_matmul
// CHECK-SAME:    %[[A:[^:]+]]: tensor<2x4xi8> {kiln.element_type = ui8}, %[[AS:[^:]+]]: tensor<2xf32>, %[[AZ:[^:]+]]: tensor<i8> {kiln.element_type = ui8}, %[[B:[^:]+]]: tensor<4x3xi8>, %[[BS:[^:]+]]: tensor<3xf32>, %[[BZ:[^:]+]]: tensor<3xi8>, %[[YS:[^:]+]]: tensor<f32>, %[[YZ:[^:]+]]: tensor<i8> {kiln.element_type = ui8})
// CHECK-SAME:    -> (tensor<2x3xi8> {kiln.element_type = ui8})
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]], {{.*}} ins(%[[A]], %[[AZ]] : tensor<2x4xi8>, tensor<i8>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extui
// CHECK-NEXT:      arith.extui
// CHECK-NEXT:      arith.subi
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$COL]], #[[$ID]]], {{.*}} ins(%[[B]], %[[BZ]] : tensor<4x3xi8>, tensor<3xi8>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      arith.subi
// CHECK:         %[[ACC:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} {{.*}} outs(%{{.+}} : tensor<2x3xi32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.muli
// CHECK-NEXT:      arith.addi
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$COL]], #[[$SCALAR]], #[[$SCALAR]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[ACC]], %[[AS]], %[[BS]], %[[YS]], %[[YZ]] : tensor<2x3xi32>, tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<i8>) outs(%{{.+}} : tensor<2x3xi8>)
// CHECK-NEXT:    ^bb0(%[[I:[^:]+]]: i32, %[[SA:[^:]+]]: f32, %[[SB:[^:]+]]: f32, %[[SY:[^:]+]]: f32, %[[ZY:[^:]+]]: i8, %{{[^:]+}}: i8):
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[SA]], %[[SB]] : f32
// CHECK-NEXT:      %[[SC:.+]] = arith.divf %[[P]], %[[SY]] : f32
// CHECK-NEXT:      %[[F:.+]] = arith.sitofp %[[I]] : i32 to f32
// CHECK-NEXT:      %[[X:.+]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT:      %[[ZF:.+]] = arith.uitofp %[[ZY]] : i8 to f32
// CHECK-NEXT:      %[[RND:.+]] = math.roundeven %[[X]] : f32
// CHECK-NEXT:      %[[ADD:.+]] = arith.addf %[[RND]], %[[ZF]] : f32
// CHECK-NEXT:      %[[LO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[MAX:.+]] = arith.maximumf %[[ADD]], %[[LO]] : f32
// CHECK-NEXT:      %[[HI:.+]] = arith.constant 2.550000e+02 : f32
// CHECK-NEXT:      %[[MIN:.+]] = arith.minimumf %[[MAX]], %[[HI]] : f32
// CHECK-NEXT:      %[[Q:.+]] = arith.fptoui %[[MIN]] : f32 to i8
// CHECK-NEXT:      linalg.yield %[[Q]] : i8
// CHECK:         return %[[R]] : tensor<2x3xi8>
func.func @qlinear_matmul(%a: tensor<2x4xui8>, %as: tensor<2xf32>, %az: tensor<ui8>, %b: tensor<4x3xi8>, %bs: tensor<3xf32>, %bz: tensor<3xi8>, %ys: tensor<f32>, %yz: tensor<ui8>) -> tensor<2x3xui8> {
  %0 = kiln.qlinear_matmul(%a, %as, %az, %b, %bs, %bz, %ys, %yz) : (tensor<2x4xui8>, tensor<2xf32>, tensor<ui8>, tensor<4x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// QLinearConv on int8 with an int32 bias: the bias, broadcast along the
// output channel, initialises the i32 accumulator; the per-channel
// w_scale follows the output channel in the requantize, which clamps to
// [-128, 127] and converts with fptosi.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-DAG: #[[$FCH:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-DAG: #[[$CH:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @qlinear_conv
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x4x4xi8>, %[[XS:[^:]+]]: tensor<f32>, %[[XZ:[^:]+]]: tensor<i8>, %[[W:[^:]+]]: tensor<3x2x3x3xi8>, %[[WS:[^:]+]]: tensor<3xf32>, %[[WZ:[^:]+]]: tensor<3xi8>, %[[YS:[^:]+]]: tensor<f32>, %[[YZ:[^:]+]]: tensor<i8>, %[[BIAS:[^:]+]]: tensor<3xi32>)
// CHECK:         %[[XC:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ID]]], {{.*}} ins(%[[X]], %[[XZ]] : tensor<1x2x4x4xi8>, tensor<i8>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      arith.subi
// CHECK:         %[[WC:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$FCH]], #[[$ID]]], {{.*}} ins(%[[W]], %[[WZ]] : tensor<3x2x3x3xi8>, tensor<3xi8>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      arith.subi
// CHECK:         %[[P:.+]] = tensor.pad %[[XC]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         %[[INIT:.+]] = linalg.generic {indexing_maps = [#[[$CH]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[BIAS]] : tensor<3xi32>) outs(%{{.+}} : tensor<1x3x4x4xi32>)
// CHECK:         %[[ACC:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %[[WC]] : tensor<1x2x6x6xi32>, tensor<3x2x3x3xi32>) outs(%[[INIT]] : tensor<1x3x4x4xi32>)
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$CH]], #[[$SCALAR]], #[[$SCALAR]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[ACC]], %[[XS]], %[[WS]], %[[YS]], %[[YZ]] : tensor<1x3x4x4xi32>, tensor<f32>, tensor<3xf32>, tensor<f32>, tensor<i8>) outs(%{{.+}} : tensor<1x3x4x4xi8>)
// CHECK-NEXT:    ^bb0(%[[I:[^:]+]]: i32, %[[SA:[^:]+]]: f32, %[[SB:[^:]+]]: f32, %[[SY:[^:]+]]: f32, %[[ZY:[^:]+]]: i8, %{{[^:]+}}: i8):
// CHECK-NEXT:      %[[PR:.+]] = arith.mulf %[[SA]], %[[SB]] : f32
// CHECK-NEXT:      %[[SC:.+]] = arith.divf %[[PR]], %[[SY]] : f32
// CHECK-NEXT:      %[[F:.+]] = arith.sitofp %[[I]] : i32 to f32
// CHECK-NEXT:      %[[XF:.+]] = arith.mulf %[[F]], %[[SC]] : f32
// CHECK-NEXT:      %[[ZF:.+]] = arith.sitofp %[[ZY]] : i8 to f32
// CHECK-NEXT:      %[[RND:.+]] = math.roundeven %[[XF]] : f32
// CHECK-NEXT:      %[[ADD:.+]] = arith.addf %[[RND]], %[[ZF]] : f32
// CHECK-NEXT:      %[[LO:.+]] = arith.constant -1.280000e+02 : f32
// CHECK-NEXT:      %[[MAX:.+]] = arith.maximumf %[[ADD]], %[[LO]] : f32
// CHECK-NEXT:      %[[HI:.+]] = arith.constant 1.270000e+02 : f32
// CHECK-NEXT:      %[[MIN:.+]] = arith.minimumf %[[MAX]], %[[HI]] : f32
// CHECK-NEXT:      %[[Q:.+]] = arith.fptosi %[[MIN]] : f32 to i8
// CHECK-NEXT:      linalg.yield %[[Q]] : i8
// CHECK:         return %[[R]] : tensor<1x3x4x4xi8>
func.func @qlinear_conv(%x: tensor<1x2x4x4xi8>, %xs: tensor<f32>, %xz: tensor<i8>, %w: tensor<3x2x3x3xi8>, %ws: tensor<3xf32>, %wz: tensor<3xi8>, %ys: tensor<f32>, %yz: tensor<i8>, %bias: tensor<3xi32>) -> tensor<1x3x4x4xi8> {
  %0 = kiln.qlinear_conv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %bias) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<3x2x3x3xi8>, tensor<3xf32>, tensor<3xi8>, tensor<f32>, tensor<i8>, tensor<3xi32>) -> tensor<1x3x4x4xi8>
  return %0 : tensor<1x3x4x4xi8>
}

// -----

// DynamicQuantizeLinear: max and min of x, each starting from 0 (so the
// range always holds 0); scale = (max - min) / 255; zero point =
// saturate(roundeven(-min / scale)); y = saturate(roundeven(x / scale) +
// zp), all as uint8.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$S:.+]] = affine_map<() -> ()>
// CHECK-LABEL: func.func @dynamic_quantize_linear
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3xf32>)
// CHECK-SAME:    -> (tensor<2x3xi8> {kiln.element_type = ui8}, tensor<f32>, tensor<i8> {kiln.element_type = ui8})
// CHECK:         %[[Z0:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[HI0:.+]] = linalg.fill ins(%[[Z0]] : f32) outs(%{{.+}} : tensor<f32>)
// CHECK:         %[[HI:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ALL]]], iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<2x3xf32>) outs(%[[HI0]] : tensor<f32>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: f32, %[[A:[^:]+]]: f32):
// CHECK-NEXT:      %[[M:.+]] = arith.maximumf %[[V]], %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK:         %[[Z1:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[LO0:.+]] = linalg.fill ins(%[[Z1]] : f32) outs(%{{.+}} : tensor<f32>)
// CHECK:         %[[LO:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ALL]]], iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<2x3xf32>) outs(%[[LO0]] : tensor<f32>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: f32, %[[A:[^:]+]]: f32):
// CHECK-NEXT:      %[[M:.+]] = arith.minimumf %[[V]], %[[A]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK:         %[[SCALE:.+]] = linalg.generic {indexing_maps = [#[[$S]], #[[$S]], #[[$S]]], iterator_types = []} ins(%[[HI]], %[[LO]] : tensor<f32>, tensor<f32>) outs(%{{.+}} : tensor<f32>)
// CHECK-NEXT:    ^bb0(%[[H:[^:]+]]: f32, %[[L:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[C255:.+]] = arith.constant 2.550000e+02 : f32
// CHECK-NEXT:      %[[D:.+]] = arith.subf %[[H]], %[[L]] : f32
// CHECK-NEXT:      %[[Q:.+]] = arith.divf %[[D]], %[[C255]] : f32
// CHECK-NEXT:      linalg.yield %[[Q]] : f32
// CHECK:         %[[ZP:.+]] = linalg.generic {indexing_maps = [#[[$S]], #[[$S]], #[[$S]]], iterator_types = []} ins(%[[LO]], %[[SCALE]] : tensor<f32>, tensor<f32>) outs(%{{.+}} : tensor<i8>)
// CHECK-NEXT:    ^bb0(%[[L:[^:]+]]: f32, %[[SC:[^:]+]]: f32, %{{[^:]+}}: i8):
// CHECK-NEXT:      %[[N:.+]] = arith.negf %[[L]] : f32
// CHECK-NEXT:      %[[DV:.+]] = arith.divf %[[N]], %[[SC]] : f32
// CHECK-NEXT:      %[[RND:.+]] = math.roundeven %[[DV]] : f32
// CHECK-NEXT:      %[[C0:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[MX:.+]] = arith.maximumf %[[RND]], %[[C0]] : f32
// CHECK-NEXT:      %[[C255:.+]] = arith.constant 2.550000e+02 : f32
// CHECK-NEXT:      %[[MN:.+]] = arith.minimumf %[[MX]], %[[C255]] : f32
// CHECK-NEXT:      %[[U:.+]] = arith.fptoui %[[MN]] : f32 to i8
// CHECK-NEXT:      linalg.yield %[[U]] : i8
// CHECK:         %[[Y:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ALL]], #[[$ALL]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[SCALE]], %[[ZP]] : tensor<2x3xf32>, tensor<f32>, tensor<i8>) outs(%{{.+}} : tensor<2x3xi8>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: f32, %[[SC:[^:]+]]: f32, %[[Z:[^:]+]]: i8, %{{[^:]+}}: i8):
// CHECK-NEXT:      %[[ZF:.+]] = arith.uitofp %[[Z]] : i8 to f32
// CHECK-NEXT:      %[[DV:.+]] = arith.divf %[[V]], %[[SC]] : f32
// CHECK-NEXT:      %[[RND:.+]] = math.roundeven %[[DV]] : f32
// CHECK-NEXT:      %[[ADD:.+]] = arith.addf %[[RND]], %[[ZF]] : f32
// CHECK-NEXT:      %[[C0:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[MX:.+]] = arith.maximumf %[[ADD]], %[[C0]] : f32
// CHECK-NEXT:      %[[C255:.+]] = arith.constant 2.550000e+02 : f32
// CHECK-NEXT:      %[[MN:.+]] = arith.minimumf %[[MX]], %[[C255]] : f32
// CHECK-NEXT:      %[[U:.+]] = arith.fptoui %[[MN]] : f32 to i8
// CHECK-NEXT:      linalg.yield %[[U]] : i8
// CHECK:         return %[[Y]], %[[SCALE]], %[[ZP]] : tensor<2x3xi8>, tensor<f32>, tensor<i8>
func.func @dynamic_quantize_linear(%x: tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) {
  %0:3 = kiln.dynamic_quantize_linear(%x) : (tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>)
  return %0#0, %0#1, %0#2 : tensor<2x3xui8>, tensor<f32>, tensor<ui8>
}

// -----

// An absent A zero point: B's unsigned zero point is still read unsigned
// (the flags follow the ONNX input, not the operand position), and an
// [M, 1] A zero point broadcasts along K.

// CHECK-LABEL: func.func @matmul_integer_absent_zp
// CHECK:         linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<4x3xi8>, tensor<3xi8>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: i8, %[[Z:[^:]+]]: i8, %{{[^:]+}}: i32):
// CHECK-NEXT:      arith.extui %[[V]] : i8 to i32
// CHECK-NEXT:      arith.extui %[[Z]] : i8 to i32
func.func @matmul_integer_absent_zp(%a: tensor<2x4xi8>, %b: tensor<4x3xui8>, %bz: tensor<3xui8>) -> tensor<2x3xi32> {
  %0 = kiln.matmul_integer(%a, %b, none, %bz) : (tensor<2x4xi8>, tensor<4x3xui8>, tensor<3xui8>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$ROWCOL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @matmul_integer_row_zp
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$ROWCOL]], #[[$ID]]], {{.*}} ins(%{{.+}}, %{{.+}} : tensor<2x4xi8>, tensor<2x1xi8>)
func.func @matmul_integer_row_zp(%a: tensor<2x4xi8>, %b: tensor<4x3xi8>, %az: tensor<2x1xi8>) -> tensor<2x3xi32> {
  %0 = kiln.matmul_integer(%a, %b, %az) : (tensor<2x4xi8>, tensor<4x3xi8>, tensor<2x1xi8>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// QLinearConv with constant int8 weights (zero zero points) and a constant
// bias: the convolution reads the int8 input and weights as they are
// (sign-extended by the named op), the input padded with its zero point
// (3), and the accumulator starts at bias - 3 * (the weights' sum per
// output channel): [10 - 3 * 18, -5 - 3 * -9] = [-44, 22]. No i32 copies
// of the operands.

// CHECK-LABEL: func.func @qlinear_conv_raw
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x2x4x4xi8>
// CHECK-DAG:     %[[OFF:.+]] = arith.constant dense<[-44, 22]> : tensor<2xi32>
// CHECK-DAG:     %[[W:.+]] = arith.constant dense<{{.+}}> : tensor<2x2x3x3xi8>
// CHECK-DAG:     %[[ZP:.+]] = arith.constant 3 : i8
// CHECK:         %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:           tensor.yield %[[ZP]] : i8
// CHECK:         %[[INIT:.+]] = linalg.generic {{.*}} ins(%[[OFF]] : tensor<2xi32>)
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %[[W]] : tensor<1x2x6x6xi8>, tensor<2x2x3x3xi8>) outs(%[[INIT]] : tensor<1x2x4x4xi32>)
// CHECK-NOT:     tensor<1x2x4x4xi32>) outs({{.*}}xi32>) {
func.func @qlinear_conv_raw(%x: tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8> {
  %xs = kiln.constant dense<0.5> : tensor<f32>
  %xz = kiln.constant dense<3> : tensor<i8>
  %w = kiln.constant dense<[[[[1, 1, 1], [1, 1, 1], [1, 1, 1]], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]], [[[-1, -1, -1], [-1, -1, -1], [-1, -1, -1]], [[0, 0, 0], [0, 0, 0], [0, 0, 0]]]]> : tensor<2x2x3x3xi8>
  %ws = kiln.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %wz = kiln.constant dense<0> : tensor<2xi8>
  %ys = kiln.constant dense<1.0> : tensor<f32>
  %yz = kiln.constant dense<0> : tensor<i8>
  %bias = kiln.constant dense<[10, -5]> : tensor<2xi32>
  %0 = kiln.qlinear_conv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %bias) {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<2x2x3x3xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>, tensor<2xi32>) -> tensor<1x2x4x4xi8>
  return %0 : tensor<1x2x4x4xi8>
}

// -----

// A 1x1 QLinearConv of 1x1 planes (a QDQ Gemm, as kiln-fold-qdq writes
// one) is computed as the product of the [M, C] input and the [F, C]
// weight, read along its rows (n, k), from zero, then the offsets (bias -
// 3 * the weights' sums: [1 - 3 * 3, 2 - 3 * -1] = [-8, 5]) added per
// column; kiln-sparsify's mark goes to the product.

// CHECK-LABEL: func.func @qlinear_conv_gemm
// CHECK-DAG:     %[[OFF:.+]] = arith.constant dense<[-8, 5]> : tensor<2xi32>
// CHECK:         %[[A:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2, 3]] : tensor<3x4x1x1xi8> into tensor<3x4xi8>
// CHECK:         %[[W:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0], [1, 2, 3]] : tensor<2x4x1x1xi8> into tensor<2x4xi8>
// CHECK:         %[[Z:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%{{.+}} : tensor<3x2xi32>)
// CHECK:         %[[P:.+]] = linalg.generic {indexing_maps = [#[[MK:.+]], #[[NK:.+]], #[[MN:.+]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[A]], %[[W]] : tensor<3x4xi8>, tensor<2x4xi8>) outs(%[[Z]] : tensor<3x2xi32>) attrs = {kiln.sparsity = "2:4"}
// CHECK:           arith.extsi
// CHECK:           arith.extsi
// CHECK:           arith.muli
// CHECK:           arith.addi
// CHECK:         linalg.generic {{.+}} ins(%[[P]], %[[OFF]] : tensor<3x2xi32>, tensor<2xi32>)
// CHECK:         tensor.expand_shape %{{.+}} {{\[\[}}0], [1, 2, 3]] output_shape [3, 2, 1, 1] : tensor<3x2xi32> into tensor<3x2x1x1xi32>
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
func.func @qlinear_conv_gemm(%x: tensor<3x4x1x1xi8>) -> tensor<3x2x1x1xi8> {
  %xs = kiln.constant dense<0.5> : tensor<f32>
  %xz = kiln.constant dense<3> : tensor<i8>
  %w = kiln.constant dense<[[[[1]], [[0]], [[0]], [[2]]], [[[0]], [[-3]], [[2]], [[0]]]]> : tensor<2x4x1x1xi8>
  %ws = kiln.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %wz = kiln.constant dense<0> : tensor<2xi8>
  %ys = kiln.constant dense<1.0> : tensor<f32>
  %yz = kiln.constant dense<0> : tensor<i8>
  %bias = kiln.constant dense<[1, 2]> : tensor<2xi32>
  %0 = kiln.qlinear_conv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %bias) {kiln.sparsity = "2:4"} : (tensor<3x4x1x1xi8>, tensor<f32>, tensor<i8>, tensor<2x4x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>, tensor<2xi32>) -> tensor<3x2x1x1xi8>
  return %0 : tensor<3x2x1x1xi8>
}

// -----

// QLinearMatMul with uint8 activations and constant int8 weights: the
// activations are flipped to int8 (xor -128, so the zero point 130 becomes
// 2), the matmul sign-extends both, and an elementwise add applies
// -2 * (column sums [6, -3]) = [-12, 6] before the requantization.

// CHECK-LABEL: func.func @qlinear_matmul_raw_u8
// CHECK-SAME:    %[[A:[^:]+]]: tensor<2x3xi8> {kiln.element_type = ui8}
// CHECK:         %[[F:.+]] = linalg.generic {{.*}} ins(%[[A]] : tensor<2x3xi8>)
// CHECK:           arith.xori %{{.+}}, %c-128_i8 : i8
// CHECK:         %[[OFF:.+]] = arith.constant dense<[-12, 6]> : tensor<2xi32>
// CHECK:         %[[MM:.+]] = linalg.generic {{.*}} ins(%[[F]], %{{.+}} : tensor<2x3xi8>, tensor<3x2xi8>) outs(%{{.+}} : tensor<2x2xi32>)
// CHECK:           arith.extsi
// CHECK:           arith.extsi
// CHECK:           arith.muli
// CHECK:         linalg.generic {{.*}} ins(%[[MM]], %[[OFF]] : tensor<2x2xi32>, tensor<2xi32>)
func.func @qlinear_matmul_raw_u8(%a: tensor<2x3xui8>) -> tensor<2x2xui8> {
  %as = kiln.constant dense<0.5> : tensor<f32>
  %az = kiln.constant dense<130> : tensor<ui8>
  %b = kiln.constant dense<[[1, -1], [2, -1], [3, -1]]> : tensor<3x2xi8>
  %bs = kiln.constant dense<[0.25, 0.5]> : tensor<2xf32>
  %bz = kiln.constant dense<0> : tensor<2xi8>
  %ys = kiln.constant dense<1.0> : tensor<f32>
  %yz = kiln.constant dense<128> : tensor<ui8>
  %0 = kiln.qlinear_matmul(%a, %as, %az, %b, %bs, %bz, %ys, %yz) : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<3x2xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<ui8>) -> tensor<2x2xui8>
  return %0 : tensor<2x2xui8>
}

// -----

// Blocked (de)quantization: the scale and zero point are read at the
// element's index with the axis' divided by block_size.

// CHECK-DAG: #[[$BLK:.+]] = affine_map<(d0, d1) -> (d0, d1 floordiv 4)>
// CHECK-LABEL: func.func @dequantize_blocked
// CHECK:         linalg.generic {indexing_maps = [#{{.+}}, #[[$BLK]], #[[$BLK]], #{{.+}}]
// CHECK-SAME:      ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<3x10xi8>, tensor<3x3xf32>, tensor<3x3xi8>)
// CHECK:           arith.sitofp
// CHECK:           arith.subf
// CHECK:           arith.mulf
func.func @dequantize_blocked(%x: tensor<3x10xi8>, %s: tensor<3x3xf32>, %z: tensor<3x3xi8>) -> tensor<3x10xf32> {
  %0 = kiln.dequantize_linear(%x, %s, %z) {axis = 1 : i64, block_size = 4 : i64} : (tensor<3x10xi8>, tensor<3x3xf32>, tensor<3x3xi8>) -> tensor<3x10xf32>
  return %0 : tensor<3x10xf32>
}
