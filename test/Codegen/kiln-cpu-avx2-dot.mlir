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

// -----

// A marked vector.from_elements whose lane l is v[index_cast(p[l])]
// (kiln-cpu-sparse-gemm's AVX2 expansion of 2:4 weights) becomes one
// vpermps.

// CHECK-LABEL: func.func @permute
// CHECK-SAME:    (%[[V:.+]]: vector<8xf32>, %[[P:.+]]: vector<8xi32>)
// CHECK:         %[[R:.+]] = llvm.call_intrinsic "llvm.x86.avx2.permps"(%[[V]], %[[P]]) : (vector<8xf32>, vector<8xi32>) -> vector<8xf32>
// CHECK-NOT:     vector.from_elements
// CHECK:         return %[[R]]
func.func @permute(%v: vector<8xf32>, %p: vector<8xi32>) -> vector<8xf32> {
  %p0 = vector.extract %p[0] : i32 from vector<8xi32>
  %i0 = arith.index_cast %p0 : i32 to index
  %e0 = vector.extract %v[%i0] : f32 from vector<8xf32>
  %p1 = vector.extract %p[1] : i32 from vector<8xi32>
  %i1 = arith.index_cast %p1 : i32 to index
  %e1 = vector.extract %v[%i1] : f32 from vector<8xf32>
  %p2 = vector.extract %p[2] : i32 from vector<8xi32>
  %i2 = arith.index_cast %p2 : i32 to index
  %e2 = vector.extract %v[%i2] : f32 from vector<8xf32>
  %p3 = vector.extract %p[3] : i32 from vector<8xi32>
  %i3 = arith.index_cast %p3 : i32 to index
  %e3 = vector.extract %v[%i3] : f32 from vector<8xf32>
  %p4 = vector.extract %p[4] : i32 from vector<8xi32>
  %i4 = arith.index_cast %p4 : i32 to index
  %e4 = vector.extract %v[%i4] : f32 from vector<8xf32>
  %p5 = vector.extract %p[5] : i32 from vector<8xi32>
  %i5 = arith.index_cast %p5 : i32 to index
  %e5 = vector.extract %v[%i5] : f32 from vector<8xf32>
  %p6 = vector.extract %p[6] : i32 from vector<8xi32>
  %i6 = arith.index_cast %p6 : i32 to index
  %e6 = vector.extract %v[%i6] : f32 from vector<8xf32>
  %p7 = vector.extract %p[7] : i32 from vector<8xi32>
  %i7 = arith.index_cast %p7 : i32 to index
  %e7 = vector.extract %v[%i7] : f32 from vector<8xf32>
  %r = vector.from_elements %e0, %e1, %e2, %e3, %e4, %e5, %e6, %e7 {kiln.avx2_permute} : vector<8xf32>
  return %r : vector<8xf32>
}

// -----

// Not permutations vpermps computes: unmarked, lanes out of order (lane 1
// reads p[2]), and lanes from two vectors. They stay as they are.

// CHECK-LABEL: func.func @not_permutes
// CHECK-NOT:     llvm.call_intrinsic
// CHECK-COUNT-3: vector.from_elements
// CHECK-NOT:     llvm.call_intrinsic
func.func @not_permutes(%v: vector<8xf32>, %w: vector<8xf32>, %p: vector<8xi32>) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>) {
  %p0 = vector.extract %p[0] : i32 from vector<8xi32>
  %i0 = arith.index_cast %p0 : i32 to index
  %e0 = vector.extract %v[%i0] : f32 from vector<8xf32>
  %p1 = vector.extract %p[1] : i32 from vector<8xi32>
  %i1 = arith.index_cast %p1 : i32 to index
  %e1 = vector.extract %v[%i1] : f32 from vector<8xf32>
  %f1 = vector.extract %w[%i1] : f32 from vector<8xf32>
  %p2 = vector.extract %p[2] : i32 from vector<8xi32>
  %i2 = arith.index_cast %p2 : i32 to index
  %e2 = vector.extract %v[%i2] : f32 from vector<8xf32>
  %p3 = vector.extract %p[3] : i32 from vector<8xi32>
  %i3 = arith.index_cast %p3 : i32 to index
  %e3 = vector.extract %v[%i3] : f32 from vector<8xf32>
  %p4 = vector.extract %p[4] : i32 from vector<8xi32>
  %i4 = arith.index_cast %p4 : i32 to index
  %e4 = vector.extract %v[%i4] : f32 from vector<8xf32>
  %p5 = vector.extract %p[5] : i32 from vector<8xi32>
  %i5 = arith.index_cast %p5 : i32 to index
  %e5 = vector.extract %v[%i5] : f32 from vector<8xf32>
  %p6 = vector.extract %p[6] : i32 from vector<8xi32>
  %i6 = arith.index_cast %p6 : i32 to index
  %e6 = vector.extract %v[%i6] : f32 from vector<8xf32>
  %p7 = vector.extract %p[7] : i32 from vector<8xi32>
  %i7 = arith.index_cast %p7 : i32 to index
  %e7 = vector.extract %v[%i7] : f32 from vector<8xf32>
  %unmarked = vector.from_elements %e0, %e1, %e2, %e3, %e4, %e5, %e6, %e7 : vector<8xf32>
  %reordered = vector.from_elements %e0, %e2, %e1, %e3, %e4, %e5, %e6, %e7 {kiln.avx2_permute} : vector<8xf32>
  %mixed = vector.from_elements %e0, %f1, %e2, %e3, %e4, %e5, %e6, %e7 {kiln.avx2_permute} : vector<8xf32>
  return %unmarked, %reordered, %mixed : vector<8xf32>, vector<8xf32>, vector<8xf32>
}
