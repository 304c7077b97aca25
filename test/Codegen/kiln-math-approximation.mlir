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
