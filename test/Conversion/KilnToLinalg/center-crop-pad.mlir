// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// CenterCropPad: along a listed axis whose output is shorter, the middle
// window (from (in - out) / 2, rounded down: 20 -> 10 from 5, 9 -> 6 from
// 1); where it is longer, the input centered in zeros ((out - in) / 2
// before, the rest after: 10 -> 13 is 1 before and 2 after). Unlisted
// axes keep their size. The sizes come from the output type; a shape
// known only at run time is taken as the type says.

// CHECK-LABEL: func.func @crop_and_pad
// CHECK-SAME:    (%[[X:.+]]: tensor<20x10x3xf32>, %{{.+}}: tensor<2xi64>)
// CHECK:         %[[W:.+]] = tensor.extract_slice %[[X]][5, 0, 0] [10, 10, 3] [1, 1, 1] : tensor<20x10x3xf32> to tensor<10x10x3xf32>
// CHECK:         %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[P:.+]] = tensor.pad %[[W]] low[0, 1, 0] high[0, 2, 0]
// CHECK:           tensor.yield %[[Z]] : f32
// CHECK:         } : tensor<10x10x3xf32> to tensor<10x13x3xf32>
// CHECK:         return %[[P]]
func.func @crop_and_pad(%x: tensor<20x10x3xf32>, %s: tensor<2xi64>) -> tensor<10x13x3xf32> {
  %0 = kiln.center_crop_pad(%x, %s) {axes = array<i64: 0, -2>} : (tensor<20x10x3xf32>, tensor<2xi64>) -> tensor<10x13x3xf32>
  return %0 : tensor<10x13x3xf32>
}

// -----

// An odd difference: the crop starts at (9 - 6) / 2 = 1, the pad puts
// (8 - 5) / 2 = 1 before and 2 after. A constant shape agreeing with the
// output type; integers pad with 0.

// CHECK-LABEL: func.func @odd
// CHECK:         tensor.extract_slice %{{.+}}[1, 0] [6, 5] [1, 1] : tensor<9x5xi32> to tensor<6x5xi32>
// CHECK:         tensor.pad %{{.+}} low[0, 1] high[0, 2]
// CHECK:         } : tensor<6x5xi32> to tensor<6x8xi32>
func.func @odd(%x: tensor<9x5xi32>) -> tensor<6x8xi32> {
  %s = arith.constant dense<[6, 8]> : tensor<2xi64>
  %0 = kiln.center_crop_pad(%x, %s) : (tensor<9x5xi32>, tensor<2xi64>) -> tensor<6x8xi32>
  return %0 : tensor<6x8xi32>
}

// -----

// Unsigned elements move as their signless bytes.

// CHECK-LABEL: func.func @unsigned
// CHECK:         tensor.pad %{{.+}} low[0, 1] high[0, 2]
// CHECK:         } : tensor<6x5xi8> to tensor<6x8xi8>
func.func @unsigned(%x: tensor<9x5xui8>, %s: tensor<2xi64>) -> tensor<6x8xui8> {
  %0 = kiln.center_crop_pad(%x, %s) : (tensor<9x5xui8>, tensor<2xi64>) -> tensor<6x8xui8>
  return %0 : tensor<6x8xui8>
}
