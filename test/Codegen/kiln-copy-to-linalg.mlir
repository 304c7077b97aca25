// RUN: kiln-opt %s -split-input-file -kiln-copy-to-linalg | FileCheck %s

// A copy between strided views becomes a linalg.copy; a copy of a slice
// onto itself through reshapes (what bufferization leaves after an image
// loop's contraction wrote its slice in place) is dropped.

// CHECK-LABEL: func.func @copies
// CHECK-SAME:    %[[A:[^:]+]]: memref<4xf32, strided<[2]>>, %[[B:[^:]+]]: memref<4xf32>
// CHECK:         linalg.copy ins(%[[A]] : memref<4xf32, strided<[2]>>) outs(%[[B]] : memref<4xf32>)
// CHECK-NOT:     memref.copy
// CHECK-NOT:     linalg.copy
// CHECK:         return
func.func @copies(%a: memref<4xf32, strided<[2]>>, %b: memref<4xf32>, %big: memref<2x3x4xf32>, %i: index) {
  memref.copy %a, %b : memref<4xf32, strided<[2]>> to memref<4xf32>
  %s = memref.subview %big[%i, 0, 0] [1, 3, 4] [1, 1, 1] : memref<2x3x4xf32> to memref<1x3x4xf32, strided<[12, 4, 1], offset: ?>>
  %f = memref.collapse_shape %s [[0, 1, 2]] : memref<1x3x4xf32, strided<[12, 4, 1], offset: ?>> into memref<12xf32, strided<[1], offset: ?>>
  %e = memref.expand_shape %f [[0, 1, 2]] output_shape [1, 3, 4] : memref<12xf32, strided<[1], offset: ?>> into memref<1x3x4xf32, strided<[12, 4, 1], offset: ?>>
  memref.copy %e, %s : memref<1x3x4xf32, strided<[12, 4, 1], offset: ?>> to memref<1x3x4xf32, strided<[12, 4, 1], offset: ?>>
  return
}

// -----

// Kept: the other image's slice, and a transpose of a matrix onto the
// matrix (a view, but one that moves elements).

// CHECK-LABEL: func.func @not_onto_itself
// CHECK-COUNT-2: linalg.copy
// CHECK-NOT:     memref.copy
func.func @not_onto_itself(%big: memref<2x3x4xf32>, %i: index, %j: index, %sq: memref<4x4xf32>) {
  %s = memref.subview %big[%i, 0, 0] [1, 3, 4] [1, 1, 1] : memref<2x3x4xf32> to memref<1x3x4xf32, strided<[12, 4, 1], offset: ?>>
  %t = memref.subview %big[%j, 0, 0] [1, 3, 4] [1, 1, 1] : memref<2x3x4xf32> to memref<1x3x4xf32, strided<[12, 4, 1], offset: ?>>
  memref.copy %s, %t : memref<1x3x4xf32, strided<[12, 4, 1], offset: ?>> to memref<1x3x4xf32, strided<[12, 4, 1], offset: ?>>
  %tr = memref.transpose %sq (d0, d1) -> (d1, d0) : memref<4x4xf32> to memref<4x4xf32, strided<[1, 4]>>
  memref.copy %tr, %sq : memref<4x4xf32, strided<[1, 4]>> to memref<4x4xf32>
  return
}
