// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg -verify-diagnostics | FileCheck %s

// Results whose extent depends on the data are computed into their static
// upper bound by scf.for loops carrying the tensors; the function returns
// the bound, marked with the data-dependent dim, and after all the outputs
// one tensor<i64> per such output with its valid extent.

// NonZero: every element writes its coordinates at column `count`, which a
// nonzero one keeps by advancing it. The bound is the element count.
// CHECK-LABEL: func.func @nonzero
// CHECK-SAME:    -> (tensor<2x6xi64> {kiln.dynamic_dim = 1 : i64, kiln.extent_result = 1 : i64}, tensor<i64>)
// CHECK:         %[[R:.+]]:2 = scf.for {{.*}} iter_args(%[[OUT:.+]] = %{{.+}}, %[[N:.+]] = %{{.+}}) -> (tensor<2x6xi64>, index)
// CHECK:           arith.cmpf une
// CHECK:           tensor.insert %{{.+}} into %[[OUT]][%{{.+}}, %[[N]]]
// CHECK:           arith.select
// CHECK:           scf.yield
// CHECK:         %[[E:.+]] = arith.index_cast %[[R]]#1 : index to i64
// CHECK:         %[[T:.+]] = tensor.from_elements %[[E]] : tensor<i64>
// CHECK:         return %[[R]]#0, %[[T]] : tensor<2x6xi64>, tensor<i64>
func.func @nonzero(%x: tensor<2x3xf32>) -> tensor<2x?xi64> {
  %0 = kiln.non_zero(%x) : (tensor<2x3xf32>) -> tensor<2x?xi64>
  return %0 : tensor<2x?xi64>
}

// -----

// Compress along an inner axis: slice i is copied to position `count`; the
// bound is the shorter of the axis and the condition.
// CHECK-LABEL: func.func @compress_axis
// CHECK-SAME:    -> (tensor<2x3xi32> {kiln.dynamic_dim = 1 : i64, kiln.extent_result = 1 : i64}, tensor<i64>)
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[OUT:.+]] = %{{.+}}, %[[N:.+]] = %{{.+}}) -> (tensor<2x3xi32>, index)
// CHECK:           tensor.extract %{{.+}}[%[[I]]] : tensor<3xi1>
// CHECK:           tensor.extract_slice %{{.+}}[0, %[[I]]] [2, 1] [1, 1] : tensor<2x5xi32> to tensor<2x1xi32>
// CHECK:           tensor.insert_slice %{{.+}} into %[[OUT]][0, %[[N]]] [2, 1] [1, 1]
func.func @compress_axis(%x: tensor<2x5xi32>, %c: tensor<3xi1>) -> tensor<2x?xi32> {
  %0 = kiln.compress(%x, %c) {axis = -1 : i64} : (tensor<2x5xi32>, tensor<3xi1>) -> tensor<2x?xi32>
  return %0 : tensor<2x?xi32>
}

// -----

// A statically typed result (the model's claim for one data set) is
// data-dependent all the same: its extent is reported at run time.
// CHECK-LABEL: func.func @compress_flat
// CHECK-SAME:    -> (tensor<5xf32> {kiln.dynamic_dim = 0 : i64, kiln.extent_result = 1 : i64}, tensor<i64>)
func.func @compress_flat(%x: tensor<3x2xf32>, %c: tensor<5xi1>) -> tensor<2xf32> {
  %0 = kiln.compress(%x, %c) : (tensor<3x2xf32>, tensor<5xi1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// NonMaxSuppression with a constant max_output_boxes_per_class: at most
// min(3, 6 boxes) per batch and class, 1 batch, 2 classes.
// CHECK-LABEL: func.func @nms
// CHECK-SAME:    -> (tensor<6x3xi64> {kiln.dynamic_dim = 0 : i64, kiln.extent_result = 1 : i64}, tensor<i64>)
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for {{.*}} -> (tensor<6xi1>)
// CHECK:             scf.for {{.*}} -> (tensor<6x3xi64>, index, tensor<6xi1>)
// CHECK:               scf.for {{.*}} -> (index, f32)
// CHECK:               scf.if %{{.+}} -> (tensor<6x3xi64>, index, tensor<6xi1>)
func.func @nms(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %iou: tensor<1xf32>) -> tensor<?x3xi64> {
  %m = kiln.constant dense<3> : tensor<1xi64>
  %0 = kiln.non_max_suppression(%b, %s, %m, %iou) : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

// NonMaxSuppression whose maximum is an input: num_boxes per class.
// CHECK-LABEL: func.func @nms_input_max
// CHECK-SAME:    -> (tensor<12x3xi64> {kiln.dynamic_dim = 0 : i64, kiln.extent_result = 1 : i64}, tensor<i64>)
func.func @nms_input_max(%b: tensor<2x6x4xf32>, %s: tensor<2x1x6xf32>, %m: tensor<1xi64>) -> tensor<?x3xi64> {
  %0 = kiln.non_max_suppression(%b, %s, %m) {center_point_box = 1 : i64} : (tensor<2x6x4xf32>, tensor<2x1x6xf32>, tensor<1xi64>) -> tensor<?x3xi64>
  return %0 : tensor<?x3xi64>
}

// -----

// Unique along an axis: Y, indices and counts are data-dependent (each with
// its extent), inverse_indices is not. Sorting ranks the distinct slices
// and scatters them.
// CHECK-LABEL: func.func @unique_axis
// CHECK-SAME:    -> (tensor<2x4x2xf32> {kiln.dynamic_dim = 1 : i64, kiln.extent_result = 4 : i64}, tensor<4xi64> {kiln.dynamic_dim = 0 : i64, kiln.extent_result = 5 : i64}, tensor<4xi64>, tensor<4xi64> {kiln.dynamic_dim = 0 : i64, kiln.extent_result = 6 : i64}, tensor<i64>, tensor<i64>, tensor<i64>)
// CHECK:         %[[FIRST:.+]]:5 = scf.for {{.*}} -> (tensor<2x4x2xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, index)
// CHECK:           tensor.insert_slice %{{.+}} into %{{.+}}[0, %{{.+}}, 0] [2, 1, 2] [1, 1, 1]
// CHECK:         scf.for %{{.+}} = %{{.+}} to %[[FIRST]]#4
// CHECK:         return
func.func @unique_axis(%x: tensor<2x4x2xf32>) -> (tensor<2x?x2xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>) {
  %y, %i, %inv, %c = kiln.unique(%x) {axis = 1 : i64} : (tensor<2x4x2xf32>) -> (tensor<2x?x2xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>)
  return %y, %i, %inv, %c : tensor<2x?x2xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>
}

// -----

// Unsorted Unique of the elements, Y alone.
// CHECK-LABEL: func.func @unique_unsorted
// CHECK-SAME:    -> (tensor<6xi64> {kiln.dynamic_dim = 0 : i64, kiln.extent_result = 1 : i64}, tensor<i64>)
func.func @unique_unsorted(%x: tensor<2x3xi64>) -> tensor<?xi64> {
  %y = kiln.unique(%x) {sorted = 0 : i64} : (tensor<2x3xi64>) -> tensor<?xi64>
  return %y : tensor<?xi64>
}

// -----

// Only graph outputs may have a data-dependent shape.
func.func @consumed(%x: tensor<2x3xf32>) -> tensor<2x?xi64> {
  // expected-error @+1 {{'kiln.non_zero' op result #0: a data-dependent shape is supported only on a graph output}}
  %0 = kiln.non_zero(%x) : (tensor<2x3xf32>) -> tensor<2x?xi64>
  %1 = kiln.neg(%0) : (tensor<2x?xi64>) -> tensor<2x?xi64>
  return %1 : tensor<2x?xi64>
}

// -----

// Also when it is returned as well.
func.func @returned_and_consumed(%x: tensor<4xi32>) -> (tensor<?xi32>, tensor<?xi32>) {
  // expected-error @+1 {{'kiln.unique' op result #0: a data-dependent shape is supported only on a graph output}}
  %y = kiln.unique(%x) : (tensor<4xi32>) -> tensor<?xi32>
  %1 = kiln.neg(%y) : (tensor<?xi32>) -> tensor<?xi32>
  return %y, %1 : tensor<?xi32>, tensor<?xi32>
}

// -----

// A Slice with run-time starts and ends along one axis (an element of a
// sequence split or indexed at run time): the start and end are wrapped
// and clamped to [0, 5], and slices start..end-1 copied to the front of a
// tensor of the input's shape; the count is end - start, at least 0.
// CHECK-LABEL: func.func @slice_run_time
// CHECK-SAME:    -> (tensor<2x5xf32> {kiln.dynamic_dim = 1 : i64, kiln.extent_result = 1 : i64}, tensor<i64>)
// CHECK:         arith.maxsi
// CHECK:         arith.minsi
// CHECK:         %[[D:.+]] = arith.subi
// CHECK:         %[[C:.+]] = arith.maxsi %[[D]]
// CHECK:         %[[N:.+]] = arith.index_cast %[[C]] : i64 to index
// CHECK:         %[[R:.+]] = scf.for %[[I:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[OUT:.+]] = %{{.+}}) -> (tensor<2x5xf32>)
// CHECK:           %[[SRC:.+]] = arith.addi %{{.+}}, %[[I]] : index
// CHECK:           tensor.extract_slice %{{.+}}[0, %[[SRC]]] [2, 1] [1, 1] : tensor<2x5xf32> to tensor<2x1xf32>
// CHECK:           tensor.insert_slice %{{.+}} into %[[OUT]][0, %[[I]]] [2, 1] [1, 1]
// CHECK:         return %[[R]], %{{.+}} : tensor<2x5xf32>, tensor<i64>
func.func @slice_run_time(%x: tensor<2x5xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<2x?xf32> {
  %a = kiln.constant dense<1> : tensor<1xi64>
  %0 = kiln.slice(%x, %s, %e, %a) : (tensor<2x5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// Only a graph output may have such an extent.
func.func @slice_run_time_used(%x: tensor<5xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{'kiln.slice' op result #0: a data-dependent shape is supported only on a graph output}}
  %0 = kiln.slice(%x, %s, %e) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  %1 = kiln.neg(%0) : (tensor<?xf32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

// A step other than 1 is not data-dependent here: the general lowering
// needs the static shape.
func.func @slice_run_time_step(%x: tensor<5xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>) -> tensor<?xf32> {
  %a = kiln.constant dense<0> : tensor<1xi64>
  %st = kiln.constant dense<2> : tensor<1xi64>
  // expected-error @+1 {{'kiln.slice' op needs static shapes to lower}}
  %0 = kiln.slice(%x, %s, %e, %a, %st) : (tensor<5xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
