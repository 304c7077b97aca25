// RUN: kiln-opt %s -kiln-flatten-globals | FileCheck %s

// A rank-4 constant global becomes 1-D over the same data, and its use an
// expand_shape back to the original type; 1-D and non-constant globals
// stay as they are.

// CHECK-DAG: memref.global "private" constant @w : memref<24xf32> = dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01, 1.600000e+01, 1.700000e+01, 1.800000e+01, 1.900000e+01, 2.000000e+01, 2.100000e+01, 2.200000e+01, 2.300000e+01]>
// CHECK-DAG: memref.global "private" constant @b : memref<4xf32>
// CHECK-DAG: memref.global "private" @state : memref<2x2xf32>
memref.global "private" constant @w : memref<2x3x2x2xf32> = dense<[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]], [[8.0, 9.0], [10.0, 11.0]]], [[[12.0, 13.0], [14.0, 15.0]], [[16.0, 17.0], [18.0, 19.0]], [[20.0, 21.0], [22.0, 23.0]]]]>
memref.global "private" constant @b : memref<4xf32> = dense<1.0>
memref.global "private" @state : memref<2x2xf32>

// CHECK-LABEL: func.func @use
// CHECK:         %[[F:.+]] = memref.get_global @w : memref<24xf32>
// CHECK:         %[[W:.+]] = memref.expand_shape %[[F]] {{\[\[}}0, 1, 2, 3]] output_shape [2, 3, 2, 2] : memref<24xf32> into memref<2x3x2x2xf32>
// CHECK:         memref.get_global @b : memref<4xf32>
// CHECK:         memref.get_global @state : memref<2x2xf32>
// CHECK:         return %[[W]]
func.func @use() -> (memref<2x3x2x2xf32>, memref<4xf32>, memref<2x2xf32>) {
  %0 = memref.get_global @w : memref<2x3x2x2xf32>
  %1 = memref.get_global @b : memref<4xf32>
  %2 = memref.get_global @state : memref<2x2xf32>
  return %0, %1, %2 : memref<2x3x2x2xf32>, memref<4xf32>, memref<2x2xf32>
}
