// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// tf_crop_and_resize: the roi is read at run time (start at d, end at
// rank + d), each sample coordinate is start * (in - 1) + x * (end - start)
// * (in - 1) / (out - 1), and a sample outside [0, in - 1] takes the
// extrapolation value.

// CHECK-LABEL: func.func @crop
// CHECK-SAME:    %[[X:[^:]+]]: tensor<1x1x4x4xf32>, %[[ROI:[^:]+]]: tensor<8xf32>
// CHECK:         linalg.generic
// CHECK-DAG:       tensor.extract %[[ROI]][%{{.+}}] : tensor<8xf32>
// CHECK-DAG:       arith.cmpf olt
// CHECK-DAG:       arith.cmpf ogt
// CHECK:           arith.ori %{{.+}}, %{{.+}} : i1
// CHECK:           %[[V:.+]] = tensor.extract %[[X]]
// CHECK-NEXT:      %[[E:.+]] = arith.constant 1.000000e+01 : f32
// CHECK-NEXT:      %[[R:.+]] = arith.select %{{.+}}, %[[E]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[R]]
func.func @crop(%x: tensor<1x1x4x4xf32>, %roi: tensor<8xf32>, %sizes: tensor<4xi64>) -> tensor<1x1x3x3xf32> {
  %0 = kiln.resize(%x, %roi, none, %sizes) {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 10.0 : f32} : (tensor<1x1x4x4xf32>, tensor<8xf32>, tensor<4xi64>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}
