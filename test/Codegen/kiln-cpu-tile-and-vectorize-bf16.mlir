// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize="vector-bits=512 register-tile-m=8 bf16-dot=true" | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize="vector-bits=512 register-tile-m=8" | FileCheck %s --check-prefix=WIDEN
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize="vector-bits=256 register-tile-m=6 bf16-dot=true" | FileCheck %s --check-prefix=B256

// Contractions of f16/bf16 inputs summed in f32 (kiln-mixed-precision's
// products) get register tiles as f32 ones do, as wide as the f32
// accumulators' vectors.

// A bf16 MatMul with bf16-dot: k steps by two; per step, the two rows of
// the 32 columns interleaved (one shuffle per vector of 16 lanes), each
// of the 8 rows' pair of k broadcast as one 32-bit value, and one
// vdpbf16ps per row and vector: 16 for the 8x32 tile.
// CHECK-LABEL: func.func @bf16_matmul
// CHECK:         scf.for %{{.+}} = %c0 to %c16 step %c8
// CHECK:           scf.for %{{.+}} = %c0 to %c64 step %c2 iter_args({{.+}}) -> ({{.+}}, vector<8x32xf32>)
// CHECK:             %[[B:.+]] = vector.transfer_read {{.+}} : tensor<2x32xbf16>, vector<2x32xbf16>
// CHECK-COUNT-2:     vector.shuffle {{.+}} : vector<32xbf16>, vector<32xbf16>
// CHECK:             vector.bitcast {{.+}} : vector<2xbf16> to vector<1xi32>
// CHECK:             vector.broadcast {{.+}} : vector<1xi32> to vector<16xi32>
// CHECK-COUNT-16:    x86vector.avx512.dot {{.+}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT:         vector.contract
// Without bf16-dot, each value is widened once loaded and the tile is an
// f32 outer product per step of k.
// WIDEN-LABEL: func.func @bf16_matmul
// WIDEN:         scf.for %{{.+}} = %c0 to %c64 step %c1
// WIDEN:           arith.extf {{.+}} : vector<8x1xbf16> to vector<8x1xf32>
// WIDEN:           arith.extf {{.+}} : vector<1x32xbf16> to vector<1x32xf32>
// WIDEN:           vector.contract {{.+}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// WIDEN-NOT:     x86vector
// 256-bit vectors (AVX-512 VL): tiles of 6 rows by two 8-lane vectors
// (16 columns), 12 dot products per step.
// B256-LABEL: func.func @bf16_matmul
// B256:         scf.for %{{.+}} = %c0 to %c64 step %c2
// B256-COUNT-12: x86vector.avx512.dot {{.+}} : vector<16xbf16> -> vector<8xf32>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @bf16_matmul(%a: tensor<16x64xbf16>, %b: tensor<64x32xbf16>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<16x64xbf16>, tensor<64x32xbf16>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// -----

// An odd K: steps of one, no dot products.
// CHECK-LABEL: func.func @odd_k
// CHECK:         scf.for %{{.+}} = %c0 to %c63 step %c1
// CHECK:           vector.contract {{.+}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT:     x86vector
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @odd_k(%a: tensor<16x63xbf16>, %b: tensor<63x32xbf16>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<16x63xbf16>, tensor<63x32xbf16>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// -----

// f16 inputs: widened, never bf16 dot products.
// CHECK-LABEL: func.func @f16_matmul
// CHECK:         scf.for %{{.+}} = %c0 to %c64 step %c1
// CHECK:           arith.extf {{.+}} : vector<8x1xf16> to vector<8x1xf32>
// CHECK:           vector.contract {{.+}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT:     x86vector
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @f16_matmul(%a: tensor<16x64xf16>, %b: tensor<64x32xf16>, %c: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<16x64xf16>, tensor<64x32xf16>) outs(%c : tensor<16x32xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// -----

// 8 columns, less than a vector of 16 lanes: k steps by two but the tile
// stays a contraction of widened values (two outer products).
// CHECK-LABEL: func.func @narrow
// CHECK:         scf.for %{{.+}} = %c0 to %c64 step %c2
// CHECK:           vector.contract {{.+}} : vector<8x2xf32>, vector<2x8xf32> into vector<8x8xf32>
// CHECK-NOT:     x86vector
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @narrow(%a: tensor<16x64xbf16>, %b: tensor<64x8xbf16>, %c: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<16x64xbf16>, tensor<64x8xbf16>) outs(%c : tensor<16x8xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
