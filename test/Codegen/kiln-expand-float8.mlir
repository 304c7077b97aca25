// RUN: kiln-opt %s -split-input-file -kiln-expand-float8 | FileCheck %s

// f32 to f8E4M3FN (bias 7, 3 mantissa bits): the f32 bits rounded to 3
// mantissa bits (nearest even: add 2^19 - 1 and the lowest kept bit, shift
// by 20) and rebiased (less 120 << 3); magnitudes under 2^-6 counted in
// quanta of 2^-9 (x * 512, rounded to even); past 0x7E (448) or infinite:
// NaN (0x7F); the sign in bit 7; stored as i8.
// CHECK-LABEL: func.func @to_e4m3fn(
// CHECK-DAG:     %[[HALF:.+]] = arith.constant 524287 : i32
// CHECK-DAG:     %[[REBIAS:.+]] = arith.constant 960 : i32
// CHECK-DAG:     %[[SMALL:.+]] = arith.constant 1015021568 : i32
// CHECK-DAG:     %[[SCALE:.+]] = arith.constant 5.120000e+02 : f32
// CHECK-DAG:     %[[MAX:.+]] = arith.constant 126 : i32
// CHECK:         %[[BITS:.+]] = arith.bitcast %{{.+}} : f32 to i32
// CHECK:         arith.addi %{{.+}}, %[[HALF]] : i32
// CHECK:         arith.subi %{{.+}}, %[[REBIAS]] : i32
// CHECK:         arith.cmpi ult, %{{.+}}, %[[SMALL]] : i32
// CHECK:         arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK:         math.roundeven
// CHECK:         arith.cmpi sgt, %{{.+}}, %[[MAX]] : i32
// CHECK:         %[[BYTE:.+]] = arith.trunci %{{.+}} : i32 to i8
// CHECK:         %[[R:.+]] = arith.bitcast %[[BYTE]] : i8 to f8E4M3FN
// CHECK:         return %[[R]]
// CHECK-NOT:     arith.truncf
func.func @to_e4m3fn(%x: f32) -> f8E4M3FN {
  %a = arith.truncf %x : f32 to f8E4M3FN
  return %a : f8E4M3FN
}

// -----

// From f16 through f32 (exact); f8E5M2FNUZ: NaN and overflow are 0x80, no
// negative zero. Vectors element by element.
// CHECK-LABEL: func.func @fnuz_and_vectors(
// CHECK-DAG:     arith.constant 128 : i32
// CHECK:         arith.extf %{{.+}} : f16 to f32
// CHECK:         arith.bitcast %{{.+}} : i8 to f8E5M2FNUZ
// CHECK:         arith.bitcast %{{.+}} : vector<4xf32> to vector<4xi32>
// CHECK:         arith.trunci %{{.+}} : vector<4xi32> to vector<4xi8>
// CHECK:         arith.bitcast %{{.+}} : vector<4xi8> to vector<4xf8E5M2>
// CHECK-NOT:     arith.truncf
func.func @fnuz_and_vectors(%h: f16, %v: vector<4xf32>) -> (f8E5M2FNUZ, vector<4xf8E5M2>) {
  %b = arith.truncf %h : f16 to f8E5M2FNUZ
  %c = arith.truncf %v : vector<4xf32> to vector<4xf8E5M2>
  return %b, %c : f8E5M2FNUZ, vector<4xf8E5M2>
}

// -----

// From float8: the byte widened and decoded to f32 bits (subnormals as
// mant * 2^-10 for f8E4M3FNUZ: bias 8), then narrowed to f16 where asked.
// Conversions between other types stay.
// CHECK-LABEL: func.func @from_float8(
// CHECK-DAG:     arith.constant 9.765625E-4 : f32
// CHECK:         %[[B:.+]] = arith.bitcast %{{.+}} : f8E4M3FNUZ to i8
// CHECK:         arith.extui %[[B]] : i8 to i32
// CHECK:         arith.bitcast %{{.+}} : i32 to f32
// CHECK:         arith.bitcast %{{.+}} : f8E5M2 to i8
// CHECK:         arith.truncf %{{.+}} : f32 to f16
// CHECK:         arith.truncf %{{.+}} : f32 to f16
// CHECK-NOT:     arith.extf %{{.+}} : f8
func.func @from_float8(%a: f8E4M3FNUZ, %b: f8E5M2, %x: f32) -> (f32, f16, f16) {
  %0 = arith.extf %a : f8E4M3FNUZ to f32
  %1 = arith.extf %b : f8E5M2 to f16
  %2 = arith.truncf %x : f32 to f16
  return %0, %1, %2 : f32, f16, f16
}

// -----

// f4E2M1FN (bias 1, 1 mantissa bit): the same rounding, the sign in bit
// 3, stored as i4; overflow saturates at 0x7 (6), no NaN.
// CHECK-LABEL: func.func @float4(
// CHECK-DAG:     arith.constant 7 : i32
// CHECK:         arith.trunci %{{.+}} : i32 to i4
// CHECK:         arith.bitcast %{{.+}} : i4 to f4E2M1FN
// CHECK:         arith.bitcast %{{.+}} : f4E2M1FN to i4
// CHECK:         arith.extui %{{.+}} : i4 to i32
// CHECK-NOT:     arith.truncf %{{.+}} to f4
func.func @float4(%x: f32) -> f32 {
  %a = arith.truncf %x : f32 to f4E2M1FN
  %b = arith.extf %a : f4E2M1FN to f32
  return %b : f32
}
