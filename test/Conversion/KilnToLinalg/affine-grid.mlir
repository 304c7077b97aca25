// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// AffineGrid, 2-D: each output element (n, h, w, c) is theta[n, c, 0] * x
// + theta[n, c, 1] * y + theta[n, c, 2], x and y the pixel centers of w
// and h in [-1, 1] ((2i + 1) / e - 1); with align_corners the corners
// (i * 2 / (e - 1) - 1, 2/5 for a width of 6).

// CHECK-LABEL: func.func @grid_2d
// CHECK-SAME:    (%[[T:.+]]: tensor<2x2x3xf32>, %{{.+}}: tensor<4xi64>)
// CHECK:         linalg.generic {{.+}} outs(%{{.+}} : tensor<2x5x6x2xf32>)
// CHECK-DAG:       %[[N:.+]] = linalg.index 0 : index
// CHECK-DAG:       %[[C:.+]] = linalg.index 3 : index
// CHECK-DAG:       %[[W:.+]] = linalg.index 2 : index
// CHECK-DAG:       %[[H:.+]] = linalg.index 1 : index
// CHECK-DAG:       arith.constant 6.000000e+00 : f32
// CHECK-DAG:       arith.constant 5.000000e+00 : f32
// CHECK:           %[[T0:.+]] = tensor.extract %[[T]][%[[N]], %[[C]], %{{.+}}] : tensor<2x2x3xf32>
// CHECK:           arith.mulf %[[T0]]
// CHECK:           tensor.extract %[[T]]
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:           tensor.extract %[[T]]
// CHECK:           %[[R:.+]] = arith.addf
// CHECK:           linalg.yield %[[R]] : f32
func.func @grid_2d(%theta: tensor<2x2x3xf32>, %size: tensor<4xi64>) -> tensor<2x5x6x2xf32> {
  %0 = kiln.affine_grid(%theta, %size) : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<2x5x6x2xf32>
  return %0 : tensor<2x5x6x2xf32>
}

// -----

// CHECK-LABEL: func.func @grid_3d_corners
// CHECK:         linalg.generic {{.+}} outs(%{{.+}} : tensor<1x4x5x6x3xf32>)
// CHECK-DAG:       arith.constant 4.000000e-01 : f32
// CHECK-DAG:       arith.constant 5.000000e-01 : f32
// CHECK-DAG:       arith.constant 0.666666686 : f32
// CHECK-COUNT-4:   tensor.extract
func.func @grid_3d_corners(%theta: tensor<1x3x4xf32>) -> tensor<1x4x5x6x3xf32> {
  %size = arith.constant dense<[1, 1, 4, 5, 6]> : tensor<5xi64>
  %0 = kiln.affine_grid(%theta, %size) {align_corners = 1 : i64} : (tensor<1x3x4xf32>, tensor<5xi64>) -> tensor<1x4x5x6x3xf32>
  return %0 : tensor<1x4x5x6x3xf32>
}
