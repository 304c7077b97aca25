// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// Einsum is one linalg.generic: a loop per label in first-seen order, the
// labels missing from the output reductions, the product of the inputs
// accumulated into a zero-filled output.

// CHECK-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @einsum_batch_matmul
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4xf32>, %[[Y:[^:]+]]: tensor<2x4x5xf32>)
// CHECK:         %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<2x3x5xf32>)
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[X]], %[[Y]] : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%[[ACC]] : tensor<2x3x5xf32>)
// CHECK-NEXT:    ^bb0(%[[U:[^:]+]]: f32, %[[V:[^:]+]]: f32, %[[O:[^:]+]]: f32):
// CHECK-NEXT:      %[[M:.+]] = arith.mulf %[[U]], %[[V]] : f32
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[O]], %[[M]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         return %[[R]]
func.func @einsum_batch_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = kiln.einsum(%a, %b) {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// A transpose: no reduction, the output map permuted.

// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @einsum_transpose
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel"]} ins(%{{.+}} : tensor<3x4xf32>) outs(%{{.+}} : tensor<4x3xf32>)
// CHECK-NEXT:    ^bb0(%[[U:[^:]+]]: f32, %[[O:[^:]+]]: f32):
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[O]], %[[U]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
func.func @einsum_transpose(%a: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %0 = kiln.einsum(%a) {equation = "ij->ji"} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// The implicit output holds the labels used once, in alphabetical order
// ("ij,jk" is "ij,jk->ik"); integers multiply and add with muli/addi.

// CHECK-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @einsum_implicit
// CHECK:         %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK:         %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : i32)
// CHECK:         linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<3x4xi32>, tensor<4x5xi32>) outs(%[[ACC]] : tensor<3x5xi32>)
// CHECK-NEXT:    ^bb0(%[[U:[^:]+]]: i32, %[[V:[^:]+]]: i32, %[[O:[^:]+]]: i32):
// CHECK-NEXT:      %[[M:.+]] = arith.muli %[[U]], %[[V]] : i32
// CHECK-NEXT:      %[[S:.+]] = arith.addi %[[O]], %[[M]] : i32
// CHECK-NEXT:      linalg.yield %[[S]] : i32
func.func @einsum_implicit(%a: tensor<3x4xi32>, %b: tensor<4x5xi32>) -> tensor<3x5xi32> {
  %0 = kiln.einsum(%a, %b) {equation = "ij,jk"} : (tensor<3x4xi32>, tensor<4x5xi32>) -> tensor<3x5xi32>
  return %0 : tensor<3x5xi32>
}

// -----

// The implicit output is alphabetical, not first-seen: "ba,ac" is
// "ba,ac->bc" with loops (b, a, c).

// CHECK-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @einsum_implicit_order
// CHECK:         linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<3x4xf32>, tensor<4x5xf32>) outs(%{{.+}} : tensor<3x5xf32>)
func.func @einsum_implicit_order(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = kiln.einsum(%a, %b) {equation = "ba,ac"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// A repeated label reads the diagonal: one loop indexing both dims.

// CHECK-DAG: #[[$DIAG:.+]] = affine_map<(d0) -> (d0, d0)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @einsum_diagonal
// CHECK:         linalg.generic {indexing_maps = [#[[$DIAG]], #[[$OUT]]], iterator_types = ["parallel"]} ins(%{{.+}} : tensor<3x3xf32>) outs(%{{.+}} : tensor<3xf32>)
// CHECK-NEXT:    ^bb0(%[[U:[^:]+]]: f32, %[[O:[^:]+]]: f32):
// CHECK-NEXT:      arith.addf %[[O]], %[[U]] : f32
func.func @einsum_diagonal(%a: tensor<3x3xf32>) -> tensor<3xf32> {
  %0 = kiln.einsum(%a) {equation = "ii->i"} : (tensor<3x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// The ellipsis covers the trailing-aligned leading dims (the most any
// input has, here 2), as the first loops; a size-1 ellipsis dim of one
// input against a larger one broadcasts (constant 0 index), and an input
// with fewer ellipsis dims indexes only the trailing ones.

// CHECK-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d3)>
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func.func @einsum_ellipsis
// CHECK:         linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%{{.+}}, %{{.+}} : tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) outs(%{{.+}} : tensor<2x5x3x6xf32>)
// CHECK-NEXT:    ^bb0(%[[U:[^:]+]]: f32, %[[V:[^:]+]]: f32, %[[O:[^:]+]]: f32):
// CHECK-NEXT:      %[[M:.+]] = arith.mulf %[[U]], %[[V]] : f32
// CHECK-NEXT:      arith.addf %[[O]], %[[M]] : f32
func.func @einsum_ellipsis(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = kiln.einsum(%a, %b) {equation = "...ij,...jk->...ik"} : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  return %0 : tensor<2x5x3x6xf32>
}

// -----

// A sum over a dropped label is a reduction loop.

// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @einsum_sum
// CHECK:         %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<3xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<3x4xf32>) outs(%[[ACC]] : tensor<3xf32>)
// CHECK-NEXT:    ^bb0(%[[U:[^:]+]]: f32, %[[O:[^:]+]]: f32):
// CHECK-NEXT:      arith.addf %[[O]], %[[U]] : f32
func.func @einsum_sum(%a: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = kiln.einsum(%a) {equation = "ij->i"} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// LRN with an even size (4): x^2 is zero-padded on the channel dim by
// floor(3/2) = 1 below and ceil(3/2) = 2 above, summed over a window of 4
// (loop d4 reading channel d1 + d4), then y = x / (bias + alpha / size *
// sum) ^ beta.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$WIN:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d4, d2, d3)>
// CHECK-DAG: #[[$K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @lrn
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x5x2x2xf32>)
// CHECK:         %[[SQ:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x5x2x2xf32>)
// CHECK-NEXT:    ^bb0(%[[U:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[M:.+]] = arith.mulf %[[U]], %[[U]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK:         %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[P:.+]] = tensor.pad %[[SQ]] low[0, 1, 0, 0] high[0, 2, 0, 0]
// CHECK:           tensor.yield %[[ZERO]] : f32
// CHECK:         } : tensor<1x5x2x2xf32> to tensor<1x8x2x2xf32>
// CHECK:         %[[W:.+]] = tensor.empty() : tensor<4xf32>
// CHECK:         %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$WIN]], #[[$K]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %[[W]] : tensor<1x8x2x2xf32>, tensor<4xf32>) outs(%{{.+}} : tensor<1x5x2x2xf32>)
// CHECK-NEXT:    ^bb0(%[[U:[^:]+]]: f32, %{{[^:]+}}: f32, %[[O:[^:]+]]: f32):
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[O]], %[[U]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ID]]], {{.*}} ins(%[[X]], %[[SUM]] : tensor<1x5x2x2xf32>, tensor<1x5x2x2xf32>)
// CHECK-NEXT:    ^bb0(%[[XV:[^:]+]]: f32, %[[SV:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[AS:.+]] = arith.constant 5.000000e-05 : f32
// CHECK-NEXT:      %[[SC:.+]] = arith.mulf %[[SV]], %[[AS]] : f32
// CHECK-NEXT:      %[[BIAS:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[BASE:.+]] = arith.addf %[[SC]], %[[BIAS]] : f32
// CHECK-NEXT:      %[[BETA:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[DEN:.+]] = math.powf %[[BASE]], %[[BETA]] : f32
// CHECK-NEXT:      %[[Y:.+]] = arith.divf %[[XV]], %[[DEN]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK:         return %[[R]]
func.func @lrn(%x: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32> {
  %0 = kiln.lrn(%x) {size = 4 : i64, alpha = 2.0e-4 : f32, beta = 0.5 : f32, bias = 2.0 : f32} : (tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32>
  return %0 : tensor<1x5x2x2xf32>
}

// -----

// LRN with an odd size (3) pads symmetrically, 1 each side, and defaults
// alpha (1e-4, over size 3), beta (0.75) and bias (1).

// CHECK-LABEL: func.func @lrn_defaults
// CHECK:         tensor.pad %{{.+}} low[0, 1, 0] high[0, 1, 0]
// CHECK:         } : tensor<2x4x3xf32> to tensor<2x6x3xf32>
// CHECK:         tensor.empty() : tensor<3xf32>
// CHECK:         arith.constant 3.33333337E-5 : f32
// CHECK:         arith.constant 1.000000e+00 : f32
// CHECK:         arith.constant 7.500000e-01 : f32
// CHECK:         math.powf
func.func @lrn_defaults(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %0 = kiln.lrn(%x) {size = 3 : i64} : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}

// -----

// ReverseSequence with the defaults (time_axis 0, batch_axis 1): the
// lengths follow the batch dim; inside the length the time index t
// becomes len - 1 - t, past it t, and the element is extracted there.

// CHECK-DAG: #[[$BATCH:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @reverse_sequence
// CHECK-SAME:    %[[X:[^:]+]]: tensor<4x3x2xf32>, %[[L:[^:]+]]: tensor<3xi64>)
// CHECK:         linalg.generic {indexing_maps = [#[[$BATCH]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[L]] : tensor<3xi64>) outs(%{{.+}} : tensor<4x3x2xf32>)
// CHECK-NEXT:    ^bb0(%[[LEN:[^:]+]]: i64, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[I0:.+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[I1:.+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[I2:.+]] = linalg.index 2 : index
// CHECK-NEXT:      %[[N:.+]] = arith.index_cast %[[LEN]] : i64 to index
// CHECK-NEXT:      %[[IN:.+]] = arith.cmpi slt, %[[I0]], %[[N]] : index
// CHECK-NEXT:      %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[LAST:.+]] = arith.subi %[[N]], %[[ONE]] : index
// CHECK-NEXT:      %[[REV:.+]] = arith.subi %[[LAST]], %[[I0]] : index
// CHECK-NEXT:      %[[T:.+]] = arith.select %[[IN]], %[[REV]], %[[I0]] : index
// CHECK-NEXT:      %[[E:.+]] = tensor.extract %[[X]][%[[T]], %[[I1]], %[[I2]]] : tensor<4x3x2xf32>
// CHECK-NEXT:      linalg.yield %[[E]] : f32
func.func @reverse_sequence(%x: tensor<4x3x2xf32>, %l: tensor<3xi64>) -> tensor<4x3x2xf32> {
  %0 = kiln.reverse_sequence(%x, %l) : (tensor<4x3x2xf32>, tensor<3xi64>) -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}

// -----

// ReverseSequence with batch_axis 0 and time_axis 1: the lengths follow
// dim 0 and dim 1 is the one reversed.

// CHECK-DAG: #[[$BATCH:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @reverse_sequence_batch_major
// CHECK-SAME:    %[[X:[^:]+]]: tensor<3x4xf32>, %[[L:[^:]+]]: tensor<3xi32>)
// CHECK:         linalg.generic {indexing_maps = [#[[$BATCH]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[L]] : tensor<3xi32>) outs(%{{.+}} : tensor<3x4xf32>)
// CHECK-NEXT:    ^bb0(%[[LEN:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[I0:.+]] = linalg.index 0 : index
// CHECK-NEXT:      %[[I1:.+]] = linalg.index 1 : index
// CHECK-NEXT:      %[[N:.+]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK-NEXT:      %[[IN:.+]] = arith.cmpi slt, %[[I1]], %[[N]] : index
// CHECK-NEXT:      %[[ONE:.+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[LAST:.+]] = arith.subi %[[N]], %[[ONE]] : index
// CHECK-NEXT:      %[[REV:.+]] = arith.subi %[[LAST]], %[[I1]] : index
// CHECK-NEXT:      %[[T:.+]] = arith.select %[[IN]], %[[REV]], %[[I1]] : index
// CHECK-NEXT:      %[[E:.+]] = tensor.extract %[[X]][%[[I0]], %[[T]]] : tensor<3x4xf32>
// CHECK-NEXT:      linalg.yield %[[E]] : f32
func.func @reverse_sequence_batch_major(%x: tensor<3x4xf32>, %l: tensor<3xi32>) -> tensor<3x4xf32> {
  %0 = kiln.reverse_sequence(%x, %l) {batch_axis = 0 : i64, time_axis = 1 : i64} : (tensor<3x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// MeanVarianceNormalization with the default axes (0, 2, 3): the sum of x
// over those dims (kept as size 1), the centred values x - sum / 40 (the
// count 2 * 4 * 5), the sum of their squares, then centred /
// (sqrt(sumsq / 40) + 1e-9). Two passes, not E[x^2] - E[x]^2, which
// cancels in float where the spread is small beside the mean.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$KEPT:.+]] = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
// CHECK-LABEL: func.func @mvn
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3x4x5xf32>)
// CHECK:         %[[Z0:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[A0:.+]] = linalg.fill ins(%[[Z0]] : f32) outs(%{{.+}} : tensor<1x3x1x1xf32>)
// CHECK:         %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$KEPT]]], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%[[X]] : tensor<2x3x4x5xf32>) outs(%[[A0]] : tensor<1x3x1x1xf32>)
// CHECK-NEXT:    ^bb0(%[[U:[^:]+]]: f32, %[[O:[^:]+]]: f32):
// CHECK-NEXT:      arith.addf %[[O]], %[[U]] : f32
// CHECK:         %[[C:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$KEPT]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]], %[[SUM]] : tensor<2x3x4x5xf32>, tensor<1x3x1x1xf32>)
// CHECK-NEXT:    ^bb0(%[[XV:[^:]+]]: f32, %[[S:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[N:.+]] = arith.constant 4.000000e+01 : f32
// CHECK-NEXT:      %[[MEAN:.+]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      %[[D:.+]] = arith.subf %[[XV]], %[[MEAN]] : f32
// CHECK-NEXT:      linalg.yield %[[D]] : f32
// CHECK:         %[[SQ:.+]] = linalg.generic {{.*}} ins(%[[C]] : tensor<2x3x4x5xf32>)
// CHECK-NEXT:    ^bb0(%[[V:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      arith.mulf %[[V]], %[[V]] : f32
// CHECK:         %[[Z1:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[A1:.+]] = linalg.fill ins(%[[Z1]] : f32) outs(%{{.+}} : tensor<1x3x1x1xf32>)
// CHECK:         %[[SUMSQ:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$KEPT]]], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%[[SQ]] : tensor<2x3x4x5xf32>) outs(%[[A1]] : tensor<1x3x1x1xf32>)
// CHECK-NEXT:    ^bb0(%[[U2:[^:]+]]: f32, %[[O2:[^:]+]]: f32):
// CHECK-NEXT:      arith.addf %[[O2]], %[[U2]] : f32
// CHECK:         %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$KEPT]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[C]], %[[SUMSQ]] : tensor<2x3x4x5xf32>, tensor<1x3x1x1xf32>)
// CHECK-NEXT:    ^bb0(%[[CV:[^:]+]]: f32, %[[SS:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:      %[[EPS:.+]] = arith.constant 9.99999971E-10 : f32
// CHECK-NEXT:      %[[N2:.+]] = arith.constant 4.000000e+01 : f32
// CHECK-NEXT:      %[[VAR:.+]] = arith.divf %[[SS]], %[[N2]] : f32
// CHECK-NEXT:      %[[SD:.+]] = math.sqrt %[[VAR]] : f32
// CHECK-NEXT:      %[[DEN:.+]] = arith.addf %[[SD]], %[[EPS]] : f32
// CHECK-NEXT:      %[[Y:.+]] = arith.divf %[[CV]], %[[DEN]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// CHECK:         return %[[R]]
func.func @mvn(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = kiln.mean_variance_normalization(%x) : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// MVN over explicit axes (a negative one counts from the end; a repeated
// one counts once): the last dim of 4, so the count is 4.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$KEPT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-LABEL: func.func @mvn_axes
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$KEPT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}} : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<2x3x1xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$KEPT]], #[[$ID]]]
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.constant 4.000000e+00 : f32
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$KEPT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}} : tensor<2x3x4xf32>) outs(%{{.+}} : tensor<2x3x1xf32>)
// CHECK:           arith.addf
// CHECK:         linalg.generic {indexing_maps = [#[[$ID]], #[[$KEPT]], #[[$ID]]]
// CHECK-NEXT:    ^bb0
// CHECK:           arith.constant 4.000000e+00 : f32
// CHECK-NEXT:      arith.divf
// CHECK-NEXT:      math.sqrt
func.func @mvn_axes(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kiln.mean_variance_normalization(%x) {axes = array<i64: -1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Run-time axes where the result shape fits two sets of reduced dims
// (dim 0 or dim 1 of a 3x3): a bit mask of the axes picks one of two
// static reductions in an scf.index_switch.

// CHECK-LABEL: func.func @reduce_runtime_axes_ambiguous
// CHECK:         tensor.extract %{{.+}}[%{{.+}}] : tensor<1xi64>
// CHECK:         arith.shli
// CHECK:         arith.select
// CHECK:         scf.index_switch %{{.+}} -> tensor<3xf32>
// CHECK:         case 1 {
// CHECK:           linalg.generic
// CHECK:         default {
// CHECK:           linalg.generic
func.func @reduce_runtime_axes_ambiguous(%x: tensor<3x3xf32>, %axes: tensor<1xi64>) -> tensor<3xf32> {
  %0 = kiln.reduce_sum(%x, %axes) {keepdims = 0 : i64} : (tensor<3x3xf32>, tensor<1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Col2Im: one generic over (n, c, y, x, k) summing, for each of the 6
// kernel offsets (k by the run-time block shape read once), the column of
// the block covering the pixel, or zero where none does.

// CHECK-DAG: #[[$K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d4)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @col2im
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x12x6xf32>, %{{[^:]+}}: tensor<2xi64>, %[[B:[^:]+]]: tensor<2xi64>
// CHECK:         tensor.extract %[[B]][%{{.+}}] : tensor<2xi64>
// CHECK:         tensor.extract %[[B]][%{{.+}}] : tensor<2xi64>
// CHECK:         linalg.generic {indexing_maps = [#[[$K]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}} : tensor<6xf32>) outs(%{{.+}} : tensor<1x2x4x4xf32>)
// CHECK:           arith.remui
// CHECK:           arith.divui
// CHECK:           %[[V:.+]] = tensor.extract %[[X]][%{{.+}}, %{{.+}}, %{{.+}}] : tensor<1x12x6xf32>
// CHECK:           arith.select %{{.+}}, %[[V]]
// CHECK:           arith.addf
func.func @col2im(%x: tensor<1x12x6xf32>, %img: tensor<2xi64>, %blk: tensor<2xi64>) -> tensor<1x2x4x4xf32> {
  %0 = kiln.col2_im(%x, %img, %blk) {strides = array<i64: 2, 1>} : (tensor<1x12x6xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}
