// RUN: kiln-opt %s -split-input-file -convert-kiln-to-linalg | FileCheck %s

// BitCast keeps the bits: arith.bitcast between types of one width (the
// unsigned result as its signless integer), a bool (a byte, 0 or 1) zero-
// extended, and to a bool the byte compared with zero.

// CHECK-LABEL: func.func @bit_cast
// CHECK:         linalg.generic
// CHECK:           arith.bitcast %{{.+}} : f32 to i32
// CHECK:         linalg.generic
// CHECK:           arith.bitcast %{{.+}} : i16 to bf16
// CHECK:         linalg.generic
// CHECK:           arith.extui %{{.+}} : i1 to i8
// CHECK:         linalg.generic
// CHECK:           %[[Z:.+]] = arith.constant 0 : i8
// CHECK:           arith.cmpi ne, %{{.+}}, %[[Z]] : i8
// CHECK:         linalg.generic
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: i8, %{{.+}}: i8):
// CHECK-NEXT:      linalg.yield %[[IN]] : i8
func.func @bit_cast(%a: tensor<2x3xf32>, %b: tensor<4xi16>, %c: tensor<3xi1>, %d: tensor<3xui8>, %e: tensor<5xi8>) -> (tensor<2x3xui32>, tensor<4xbf16>, tensor<3xui8>, tensor<3xi1>, tensor<5xui8>) {
  %0 = kiln.bit_cast(%a) {to = 12 : i64} : (tensor<2x3xf32>) -> tensor<2x3xui32>
  %1 = kiln.bit_cast(%b) {to = 16 : i64} : (tensor<4xi16>) -> tensor<4xbf16>
  %2 = kiln.bit_cast(%c) {to = 2 : i64} : (tensor<3xi1>) -> tensor<3xui8>
  %3 = kiln.bit_cast(%d) {to = 9 : i64} : (tensor<3xui8>) -> tensor<3xi1>
  %4 = kiln.bit_cast(%e) {to = 2 : i64} : (tensor<5xi8>) -> tensor<5xui8>
  return %0, %1, %2, %3, %4 : tensor<2x3xui32>, tensor<4xbf16>, tensor<3xui8>, tensor<3xi1>, tensor<5xui8>
}
