// RUN: kiln-opt %s -split-input-file -kiln-cpu-vnni-dot | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-vnni-dot=bits=256 | FileCheck %s --check-prefix=B256

// Four chained adds of the products of lanes q, q + 4, ... (q = 0..3, in
// any order) of one unsigned a and one signed b: one vpdpbusd.

// CHECK-LABEL: func.func @dot
// CHECK-SAME:    %[[ACC:[^:]+]]: vector<16xi32>, %[[A:[^:]+]]: vector<64xi8>, %[[B:[^:]+]]: vector<64xi8>
// CHECK:         %[[R:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[ACC]], %[[A]], %[[B]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK-NEXT:    return %[[R]]

// With bits=256 (AVX-VNNI): two 256-bit vpdpbusd on the halves (lanes 0-7
// from bytes 0-31, lanes 8-15 from bytes 32-63), joined.
// B256-LABEL: func.func @dot
// B256-SAME:    %[[ACC:[^:]+]]: vector<16xi32>, %[[A:[^:]+]]: vector<64xi8>, %[[B:[^:]+]]: vector<64xi8>
// B256-DAG:     %[[C0:.+]] = vector.extract_strided_slice %[[ACC]] {offsets = [0], sizes = [8], strides = [1]} : vector<16xi32> to vector<8xi32>
// B256-DAG:     %[[A0:.+]] = vector.extract_strided_slice %[[A]] {offsets = [0], sizes = [32], strides = [1]} : vector<64xi8> to vector<32xi8>
// B256-DAG:     %[[B0:.+]] = vector.extract_strided_slice %[[B]] {offsets = [0], sizes = [32], strides = [1]} : vector<64xi8> to vector<32xi8>
// B256:         %[[LO:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%[[C0]], %[[A0]], %[[B0]]) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// B256-DAG:     %[[C1:.+]] = vector.extract_strided_slice %[[ACC]] {offsets = [8], sizes = [8], strides = [1]}
// B256-DAG:     %[[A1:.+]] = vector.extract_strided_slice %[[A]] {offsets = [32], sizes = [32], strides = [1]}
// B256-DAG:     %[[B1:.+]] = vector.extract_strided_slice %[[B]] {offsets = [32], sizes = [32], strides = [1]}
// B256:         %[[HI:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%[[C1]], %[[A1]], %[[B1]])
// B256:         %[[R:.+]] = vector.shuffle %[[LO]], %[[HI]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xi32>, vector<8xi32>
// B256-NEXT:    return %[[R]]
// B256-NOT:     vpdpbusd.512

func.func @dot(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>, %c: vector<64xi8>) -> vector<16xi32> {
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
  %s3 = arith.addi %s2, %p3 : vector<16xi32>
  return %s3 : vector<16xi32>
}

// CHECK-LABEL: func.func @reordered
// CHECK:         llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"

func.func @reordered(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>, %c: vector<64xi8>) -> vector<16xi32> {
  %x0 = vector.shuffle %a, %a [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %y0 = vector.shuffle %b, %b [2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62] : vector<64xi8>, vector<64xi8>
  %xe0 = arith.extui %x0 : vector<16xi8> to vector<16xi32>
  %ye0 = arith.extsi %y0 : vector<16xi8> to vector<16xi32>
  %p0 = arith.muli %xe0, %ye0 : vector<16xi32>
  %s0 = arith.addi %acc, %p0 : vector<16xi32>
  %x1 = vector.shuffle %a, %a [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %y1 = vector.shuffle %b, %b [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60] : vector<64xi8>, vector<64xi8>
  %xe1 = arith.extui %x1 : vector<16xi8> to vector<16xi32>
  %ye1 = arith.extsi %y1 : vector<16xi8> to vector<16xi32>
  %p1 = arith.muli %xe1, %ye1 : vector<16xi32>
  %s1 = arith.addi %s0, %p1 : vector<16xi32>
  %x2 = vector.shuffle %a, %a [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %y2 = vector.shuffle %b, %b [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %xe2 = arith.extui %x2 : vector<16xi8> to vector<16xi32>
  %ye2 = arith.extsi %y2 : vector<16xi8> to vector<16xi32>
  %p2 = arith.muli %xe2, %ye2 : vector<16xi32>
  %s2 = arith.addi %s1, %p2 : vector<16xi32>
  %x3 = vector.shuffle %a, %a [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %y3 = vector.shuffle %b, %b [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %xe3 = arith.extui %x3 : vector<16xi8> to vector<16xi32>
  %ye3 = arith.extsi %y3 : vector<16xi8> to vector<16xi32>
  %p3 = arith.muli %xe3, %ye3 : vector<16xi32>
  %s3 = arith.addi %s2, %p3 : vector<16xi32>
  return %s3 : vector<16xi32>
}

// -----

// Not a dot product of one (a, b): three terms; a term of another b; a
// repeated lane group; a signed a (vpdpbusd reads a as unsigned).

// CHECK-LABEL: func.func @three
// CHECK-NOT:     llvm.call_intrinsic
// CHECK-LABEL: func.func @other_b
// CHECK-NOT:     llvm.call_intrinsic
// CHECK-LABEL: func.func @repeated
// CHECK-NOT:     llvm.call_intrinsic
// CHECK-LABEL: func.func @signed_a
// CHECK-NOT:     llvm.call_intrinsic

func.func @three(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>, %c: vector<64xi8>) -> vector<16xi32> {
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
  return %s2 : vector<16xi32>
}
func.func @other_b(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>, %c: vector<64xi8>) -> vector<16xi32> {
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
  %y3 = vector.shuffle %c, %c [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %xe3 = arith.extui %x3 : vector<16xi8> to vector<16xi32>
  %ye3 = arith.extsi %y3 : vector<16xi8> to vector<16xi32>
  %p3 = arith.muli %xe3, %ye3 : vector<16xi32>
  %s3 = arith.addi %s2, %p3 : vector<16xi32>
  return %s3 : vector<16xi32>
}
func.func @repeated(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>, %c: vector<64xi8>) -> vector<16xi32> {
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
  %x2 = vector.shuffle %a, %a [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %y2 = vector.shuffle %b, %b [1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61] : vector<64xi8>, vector<64xi8>
  %xe2 = arith.extui %x2 : vector<16xi8> to vector<16xi32>
  %ye2 = arith.extsi %y2 : vector<16xi8> to vector<16xi32>
  %p2 = arith.muli %xe2, %ye2 : vector<16xi32>
  %s2 = arith.addi %s1, %p2 : vector<16xi32>
  %x3 = vector.shuffle %a, %a [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %y3 = vector.shuffle %b, %b [3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63] : vector<64xi8>, vector<64xi8>
  %xe3 = arith.extui %x3 : vector<16xi8> to vector<16xi32>
  %ye3 = arith.extsi %y3 : vector<16xi8> to vector<16xi32>
  %p3 = arith.muli %xe3, %ye3 : vector<16xi32>
  %s3 = arith.addi %s2, %p3 : vector<16xi32>
  return %s3 : vector<16xi32>
}
func.func @signed_a(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>, %c: vector<64xi8>) -> vector<16xi32> {
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
