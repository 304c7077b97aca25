// RUN: kiln-opt %s -split-input-file -kiln-cpu-avx2-dot | FileCheck %s

// Four chained adds of the products of lanes q, q + 4, ... (q = 0..3, in
// any order) of one signed a and one signed b, the last add marked by
// kiln-cpu-int8-gemm{signed-dot}: per 32-byte half, |a| (math.absi, i.e.
// vpabsb), b with a's signs (vpsignb), the pairwise products in int16
// (vpmaddubsw) and their pairs in int32 (vpmaddwd by ones); the halves
// joined and added to the accumulator.

// CHECK-LABEL: func.func @dot
// CHECK-SAME:    %[[ACC:[^:]+]]: vector<16xi32>, %[[A:[^:]+]]: vector<64xi8>, %[[B:[^:]+]]: vector<64xi8>
// CHECK-DAG:     %[[ONES:.+]] = arith.constant dense<1> : vector<16xi16>
// CHECK-DAG:     %[[A0:.+]] = vector.extract_strided_slice %[[A]] {offsets = [0], sizes = [32], strides = [1]} : vector<64xi8> to vector<32xi8>
// CHECK-DAG:     %[[B0:.+]] = vector.extract_strided_slice %[[B]] {offsets = [0], sizes = [32], strides = [1]} : vector<64xi8> to vector<32xi8>
// CHECK:         %[[ABS0:.+]] = math.absi %[[A0]] : vector<32xi8>
// CHECK:         %[[SGN0:.+]] = llvm.call_intrinsic "llvm.x86.avx2.psign.b"(%[[B0]], %[[A0]]) : (vector<32xi8>, vector<32xi8>) -> vector<32xi8>
// CHECK:         %[[P0:.+]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%[[ABS0]], %[[SGN0]]) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// CHECK:         %[[S0:.+]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[P0]], %[[ONES]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK:         vector.extract_strided_slice %[[A]] {offsets = [32], sizes = [32], strides = [1]}
// CHECK:         %[[S1:.+]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK:         %[[SUM:.+]] = vector.shuffle %[[S0]], %[[S1]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi32>, vector<8xi32>
// CHECK:         %[[R:.+]] = arith.addi %[[ACC]], %[[SUM]] : vector<16xi32>
// CHECK-NEXT:    return %[[R]]

func.func @dot(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>) -> vector<16xi32> {
  %x0 = vector.shuffle %a, %a [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %y0 = vector.shuffle %b, %b [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %xe0 = arith.extsi %x0 : vector<16xi8> to vector<16xi32>
  %ye0 = arith.extsi %y0 : vector<16xi8> to vector<16xi32>
  %p0 = arith.muli %xe0, %ye0 : vector<16xi32>
  %s0 = arith.addi %acc, %p0 : vector<16xi32>
  %x1 = vector.shuffle %a, %a [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %y1 = vector.shuffle %b, %b [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %xe1 = arith.extsi %x1 : vector<16xi8> to vector<16xi32>
  %ye1 = arith.extsi %y1 : vector<16xi8> to vector<16xi32>
  %p1 = arith.muli %xe1, %ye1 : vector<16xi32>
  %s1 = arith.addi %s0, %p1 : vector<16xi32>
  %x2 = vector.shuffle %a, %a [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %y2 = vector.shuffle %b, %b [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %xe2 = arith.extsi %x2 : vector<16xi8> to vector<16xi32>
  %ye2 = arith.extsi %y2 : vector<16xi8> to vector<16xi32>
  %p2 = arith.muli %xe2, %ye2 : vector<16xi32>
  %s2 = arith.addi %s1, %p2 : vector<16xi32>
  %x3 = vector.shuffle %a, %a [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %y3 = vector.shuffle %b, %b [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %xe3 = arith.extsi %x3 : vector<16xi8> to vector<16xi32>
  %ye3 = arith.extsi %y3 : vector<16xi8> to vector<16xi32>
  %p3 = arith.muli %xe3, %ye3 : vector<16xi32>
  %s3 = arith.addi %s2, %p3 {kiln.avx2_dot} : vector<16xi32>
  return %s3 : vector<16xi32>
}

// CHECK-LABEL: func.func @reordered
// CHECK-COUNT-2: llvm.x86.avx2.pmadd.ub.sw
// CHECK-NOT:     arith.muli

func.func @reordered(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>) -> vector<16xi32> {
  %x0 = vector.shuffle %a, %a [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %y0 = vector.shuffle %b, %b [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %xe0 = arith.extsi %x0 : vector<16xi8> to vector<16xi32>
  %ye0 = arith.extsi %y0 : vector<16xi8> to vector<16xi32>
  %p0 = arith.muli %xe0, %ye0 : vector<16xi32>
  %s0 = arith.addi %acc, %p0 : vector<16xi32>
  %x1 = vector.shuffle %a, %a [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %y1 = vector.shuffle %b, %b [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %xe1 = arith.extsi %x1 : vector<16xi8> to vector<16xi32>
  %ye1 = arith.extsi %y1 : vector<16xi8> to vector<16xi32>
  %p1 = arith.muli %xe1, %ye1 : vector<16xi32>
  %s1 = arith.addi %s0, %p1 : vector<16xi32>
  %x2 = vector.shuffle %a, %a [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %y2 = vector.shuffle %b, %b [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %xe2 = arith.extsi %x2 : vector<16xi8> to vector<16xi32>
  %ye2 = arith.extsi %y2 : vector<16xi8> to vector<16xi32>
  %p2 = arith.muli %xe2, %ye2 : vector<16xi32>
  %s2 = arith.addi %s1, %p2 : vector<16xi32>
  %x3 = vector.shuffle %a, %a [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %y3 = vector.shuffle %b, %b [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %xe3 = arith.extsi %x3 : vector<16xi8> to vector<16xi32>
  %ye3 = arith.extsi %y3 : vector<16xi8> to vector<16xi32>
  %p3 = arith.muli %xe3, %ye3 : vector<16xi32>
  %s3 = arith.addi %s2, %p3 {kiln.avx2_dot} : vector<16xi32>
  return %s3 : vector<16xi32>
}

// -----

// Left alone: an unmarked chain (the weights may hold a -128, which
// vpsignb cannot negate), and a marked chain whose a is unsigned.

// CHECK-LABEL: func.func @unmarked
// CHECK-NOT:     llvm.call_intrinsic
// CHECK-LABEL: func.func @unsigned_a
// CHECK-NOT:     llvm.call_intrinsic

func.func @unmarked(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>) -> vector<16xi32> {
  %x0 = vector.shuffle %a, %a [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %y0 = vector.shuffle %b, %b [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %xe0 = arith.extsi %x0 : vector<16xi8> to vector<16xi32>
  %ye0 = arith.extsi %y0 : vector<16xi8> to vector<16xi32>
  %p0 = arith.muli %xe0, %ye0 : vector<16xi32>
  %s0 = arith.addi %acc, %p0 : vector<16xi32>
  %x1 = vector.shuffle %a, %a [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %y1 = vector.shuffle %b, %b [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %xe1 = arith.extsi %x1 : vector<16xi8> to vector<16xi32>
  %ye1 = arith.extsi %y1 : vector<16xi8> to vector<16xi32>
  %p1 = arith.muli %xe1, %ye1 : vector<16xi32>
  %s1 = arith.addi %s0, %p1 : vector<16xi32>
  %x2 = vector.shuffle %a, %a [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %y2 = vector.shuffle %b, %b [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %xe2 = arith.extsi %x2 : vector<16xi8> to vector<16xi32>
  %ye2 = arith.extsi %y2 : vector<16xi8> to vector<16xi32>
  %p2 = arith.muli %xe2, %ye2 : vector<16xi32>
  %s2 = arith.addi %s1, %p2 : vector<16xi32>
  %x3 = vector.shuffle %a, %a [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %y3 = vector.shuffle %b, %b [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %xe3 = arith.extsi %x3 : vector<16xi8> to vector<16xi32>
  %ye3 = arith.extsi %y3 : vector<16xi8> to vector<16xi32>
  %p3 = arith.muli %xe3, %ye3 : vector<16xi32>
  %s3 = arith.addi %s2, %p3 : vector<16xi32>
  return %s3 : vector<16xi32>
}
func.func @unsigned_a(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>) -> vector<16xi32> {
  %x0 = vector.shuffle %a, %a [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %y0 = vector.shuffle %b, %b [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %xe0 = arith.extui %x0 : vector<16xi8> to vector<16xi32>
  %ye0 = arith.extsi %y0 : vector<16xi8> to vector<16xi32>
  %p0 = arith.muli %xe0, %ye0 : vector<16xi32>
  %s0 = arith.addi %acc, %p0 : vector<16xi32>
  %x1 = vector.shuffle %a, %a [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %y1 = vector.shuffle %b, %b [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %xe1 = arith.extui %x1 : vector<16xi8> to vector<16xi32>
  %ye1 = arith.extsi %y1 : vector<16xi8> to vector<16xi32>
  %p1 = arith.muli %xe1, %ye1 : vector<16xi32>
  %s1 = arith.addi %s0, %p1 : vector<16xi32>
  %x2 = vector.shuffle %a, %a [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %y2 = vector.shuffle %b, %b [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %xe2 = arith.extui %x2 : vector<16xi8> to vector<16xi32>
  %ye2 = arith.extsi %y2 : vector<16xi8> to vector<16xi32>
  %p2 = arith.muli %xe2, %ye2 : vector<16xi32>
  %s2 = arith.addi %s1, %p2 : vector<16xi32>
  %x3 = vector.shuffle %a, %a [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %y3 = vector.shuffle %b, %b [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %xe3 = arith.extui %x3 : vector<16xi8> to vector<16xi32>
  %ye3 = arith.extsi %y3 : vector<16xi8> to vector<16xi32>
  %p3 = arith.muli %xe3, %ye3 : vector<16xi32>
  %s3 = arith.addi %s2, %p3 {kiln.avx2_dot} : vector<16xi32>
  return %s3 : vector<16xi32>
}
