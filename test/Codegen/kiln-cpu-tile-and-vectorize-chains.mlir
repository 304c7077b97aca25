// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize=vector-bits=256 | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-tile-and-vectorize=vector-bits=512 | FileCheck %s --check-prefix=AVX512

#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>

// A long elementwise chain (a QDQ model's QuantizeLinear + DequantizeLinear
// around an Erf, twice: 16 ops an element) is latency-bound element by
// element: split over threads, then its innermost loop tiled by four
// vectors (32 lanes of 8) and vectorized at that width, so that each op is
// four independent vector ops in a row. With 16-lane vectors, 64 a step.

// CHECK-LABEL: func.func @qdq_chain
// CHECK:         scf.forall
// CHECK:           scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}}
// CHECK:             scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c32
// CHECK:               vector.transfer_read {{.+}} : tensor<{{.+}}xf32>, vector<1x32xf32>
// CHECK:               arith.divf {{.+}} : vector<1x32xf32>
// CHECK:               math.roundeven {{.+}} : vector<1x32xf32>
// CHECK:               arith.fptosi {{.+}} : vector<1x32xf32> to vector<1x32xi8>
// CHECK:               math.erf {{.+}} : vector<1x32xf32>
// CHECK:               vector.transfer_write {{.+}} : vector<1x32xf32>, tensor<{{.+}}xf32>
// CHECK-NOT:     linalg.generic
// AVX512-LABEL:  func.func @qdq_chain
// AVX512:          math.erf {{.+}} : vector<1x64xf32>
func.func @qdq_chain(%x: tensor<128x3072xf32>, %scale: tensor<f32>) -> tensor<128x3072xf32> {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %e = tensor.empty() : tensor<128x3072xf32>
  %r = linalg.generic {indexing_maps = [#id, #s, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %scale : tensor<128x3072xf32>, tensor<f32>) outs(%e : tensor<128x3072xf32>) {
  ^bb0(%v: f32, %sc: f32, %o: f32):
    %0 = arith.divf %v, %sc : f32
    %1 = math.roundeven %0 : f32
    %2 = arith.maximumf %1, %lo : f32
    %3 = arith.minimumf %2, %hi : f32
    %4 = arith.fptosi %3 : f32 to i8
    %5 = arith.sitofp %4 : i8 to f32
    %6 = arith.mulf %5, %sc : f32
    %7 = math.erf %6 : f32
    %8 = arith.divf %7, %sc : f32
    %9 = math.roundeven %8 : f32
    %10 = arith.maximumf %9, %lo : f32
    %11 = arith.minimumf %10, %hi : f32
    %12 = arith.fptosi %11 : f32 to i8
    %13 = arith.sitofp %12 : i8 to f32
    %14 = arith.mulf %13, %sc : f32
    %15 = arith.addf %14, %v : f32
    linalg.yield %15 : f32
  } -> tensor<128x3072xf32>
  return %r : tensor<128x3072xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Short chains stay scalar loops for LLVM's vectorizer (here one op an
// element), and so does a long chain whose innermost extent four vectors
// do not divide (100).

// CHECK-LABEL: func.func @not_chains
// CHECK-NOT:     vector.
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK-NOT:     vector.
// CHECK:         linalg.generic
// CHECK:           math.erf
// CHECK-NOT:     vector.
func.func @not_chains(%x: tensor<128x3072xf32>, %y: tensor<128x100xf32>) -> (tensor<128x3072xf32>, tensor<128x100xf32>) {
  %e = tensor.empty() : tensor<128x3072xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<128x3072xf32>) outs(%e : tensor<128x3072xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = arith.addf %v, %v : f32
    linalg.yield %0 : f32
  } -> tensor<128x3072xf32>
  %e2 = tensor.empty() : tensor<128x100xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<128x100xf32>) outs(%e2 : tensor<128x100xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = math.erf %v : f32
    %1 = math.erf %0 : f32
    %2 = math.erf %1 : f32
    %3 = math.erf %2 : f32
    %4 = math.erf %3 : f32
    %5 = math.erf %4 : f32
    %6 = math.erf %5 : f32
    %7 = math.erf %6 : f32
    %8 = math.erf %7 : f32
    %9 = math.erf %8 : f32
    %10 = math.erf %9 : f32
    %11 = math.erf %10 : f32
    linalg.yield %11 : f32
  } -> tensor<128x100xf32>
  return %a, %b : tensor<128x3072xf32>, tensor<128x100xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The threshold: a chain of 12 ops an element is vectorized, one of 11 is
// left to LLVM's vectorizer.

// CHECK-LABEL: func.func @threshold
// CHECK:         scf.forall
// CHECK-COUNT-12:  math.erf {{.+}} : vector<1x32xf32>
// CHECK:           vector.transfer_write
// CHECK:         scf.forall
// CHECK-NOT:       vector.
// CHECK:           linalg.generic
// CHECK-COUNT-11:    math.erf %{{.+}} : f32
// CHECK-NOT:       vector.
// CHECK:         return
func.func @threshold(%x: tensor<128x3072xf32>) -> (tensor<128x3072xf32>, tensor<128x3072xf32>) {
  %e = tensor.empty() : tensor<128x3072xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<128x3072xf32>) outs(%e : tensor<128x3072xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = math.erf %v : f32
    %1 = math.erf %0 : f32
    %2 = math.erf %1 : f32
    %3 = math.erf %2 : f32
    %4 = math.erf %3 : f32
    %5 = math.erf %4 : f32
    %6 = math.erf %5 : f32
    %7 = math.erf %6 : f32
    %8 = math.erf %7 : f32
    %9 = math.erf %8 : f32
    %10 = math.erf %9 : f32
    %11 = math.erf %10 : f32
    linalg.yield %11 : f32
  } -> tensor<128x3072xf32>
  %e2 = tensor.empty() : tensor<128x3072xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<128x3072xf32>) outs(%e2 : tensor<128x3072xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = math.erf %v : f32
    %1 = math.erf %0 : f32
    %2 = math.erf %1 : f32
    %3 = math.erf %2 : f32
    %4 = math.erf %3 : f32
    %5 = math.erf %4 : f32
    %6 = math.erf %5 : f32
    %7 = math.erf %6 : f32
    %8 = math.erf %7 : f32
    %9 = math.erf %8 : f32
    %10 = math.erf %9 : f32
    linalg.yield %10 : f32
  } -> tensor<128x3072xf32>
  return %a, %b : tensor<128x3072xf32>, tensor<128x3072xf32>
}
