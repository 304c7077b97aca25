// RUN: kiln-opt %s -split-input-file -kiln-math-approximation="ops=erf,exp,tanh" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-math-approximation | FileCheck %s --check-prefix=NONE

// The named f32 ops become arith and math.fma (scalars and vectors alike).

// CHECK-LABEL: func.func @approximated
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.tanh
// CHECK:         math.fma
// CHECK:         return
// NONE-LABEL:  func.func @approximated
// NONE:          math.erf
// NONE:          math.exp
// NONE:          math.tanh
func.func @approximated(%x: f32, %v: vector<8xf32>) -> (f32, vector<8xf32>, f32) {
  %0 = math.erf %x : f32
  %1 = math.exp %v : vector<8xf32>
  %2 = math.tanh %x : f32
  return %0, %1, %2 : f32, vector<8xf32>, f32
}

// -----

// Left alone: an op not named (log), and f64 (the approximations are f32
// only; libm computes it).

// CHECK-LABEL: func.func @left_alone
// CHECK:         math.log %{{.+}} : f32
// CHECK:         math.erf %{{.+}} : f64
// CHECK-NOT:     math.fma
func.func @left_alone(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.log %x : f32
  %1 = math.erf %y : f64
  return %0, %1 : f32, f64
}

// -----

// Powers with small constant exponents become products (for any type,
// whatever ops are named); other exponents stay.

// CHECK-LABEL: func.func @powers
// CHECK-NOT:     math.powf %{{.+}}, %{{.+}} : f32
// CHECK:         %[[SQ:.+]] = arith.mulf %[[X:.+]], %[[X]] : f32
// CHECK:         arith.mulf %[[X]], %[[SQ]] : f32
// CHECK:         math.powf %{{.+}}, %{{.+}} : f64
// NONE-LABEL:  func.func @powers
// NONE-NOT:      math.powf %{{.+}}, %{{.+}} : f32
func.func @powers(%x: f32, %y: f64) -> (f32, f64) {
  %three = arith.constant 3.0 : f32
  %e = arith.constant 2.5 : f64
  %0 = math.powf %x, %three : f32
  %1 = math.powf %y, %e : f64
  return %0, %1 : f32, f64
}
