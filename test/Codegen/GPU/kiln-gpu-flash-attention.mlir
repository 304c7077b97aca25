// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-flash-attention))' --split-input-file --verify-diagnostics | FileCheck %s

// The Attention lowering's bufferized chain (scores, scale and mask in
// place, softmax, rounded probabilities, context, the output's rounding)
// becomes one launch: blocks of 128 threads over 64-row tiles of each
// batch index (2 heads x 2 row tiles), K and V tiles in workgroup memory,
// a loop over the two 64-key tiles carrying 8 output accumulators, the
// running maxima and sums; mma.sync products, quad shuffles, and the
// output's rounding applied before the store. Nothing of the chain stays.
// CHECK-LABEL: func.func @fused
// CHECK-NOT: linalg.
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}) workgroup({{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} = %{{.*}} to %c2{{.*}} iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, f32, f32, f32, f32)
// CHECK: gpu.barrier
// CHECK: nvgpu.mma.sync
// CHECK: gpu.shuffle  xor
// CHECK: math.exp
// CHECK: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK: arith.divf
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: arith.extf
// CHECK: memref.store {{.*}} : memref<1x2x128x64xf32>
// CHECK: kiln.cost = array<i64:
// CHECK-NOT: linalg.
// CHECK: return
func.func @fused(%q: memref<1x2x128x64xf16>, %k: memref<1x2x128x64xf16>, %v: memref<1x2x128x64xf16>, %mask: memref<1x1x1x128xf16>, %o: memref<1x2x128x64xf32>, %arena: memref<262144xi8>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 1.250000e-01 : f32
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c132096 = arith.constant 132096 : index
  %s = memref.view %arena[%c0][] : memref<262144xi8> to memref<1x2x128x128xf32>
  %r = memref.view %arena[%c131072][] : memref<262144xi8> to memref<1x2x128xf32>
  %p = memref.view %arena[%c132096][] : memref<262144xi8> to memref<1x2x128x128xf16>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2x128x64xf16>, memref<1x2x128x64xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x128x128xf32>, memref<1x1x1x128xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f16, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  }
  linalg.fill ins(%nan : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%p : memref<1x2x128x128xf16>) {
  ^bb0(%in: f32, %in_1: f32, %out: f16):
    %0 = arith.divf %in, %in_1 : f32
    %1 = arith.truncf %0 : f32 to f16
    linalg.yield %1 : f16
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2x128x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x2x128x128xf16>, memref<1x2x128x64xf16>) outs(%o : memref<1x2x128x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x2x128x64xf32>) outs(%o : memref<1x2x128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.truncf %in : f32 to f16
    %1 = arith.extf %0 : f16 to f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// SDPA's NaN guard on the probabilities: a row whose sum is not positive
// (every score -inf, or a NaN) is stored as zeros.
// CHECK-LABEL: func.func @nan_guard
// CHECK: gpu.launch
// CHECK: %[[POS:.*]] = arith.cmpf ogt
// CHECK: arith.divf
// CHECK: arith.select %[[POS]]
// CHECK-NOT: linalg.
// CHECK: return
func.func @nan_guard(%q: memref<1x2x128x64xf16>, %k: memref<1x2x128x64xf16>, %v: memref<1x2x128x64xf16>, %mask: memref<1x1x1x128xf16>, %o: memref<1x2x128x64xf32>, %arena: memref<262144xi8>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 1.250000e-01 : f32
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c132096 = arith.constant 132096 : index
  %s = memref.view %arena[%c0][] : memref<262144xi8> to memref<1x2x128x128xf32>
  %r = memref.view %arena[%c131072][] : memref<262144xi8> to memref<1x2x128xf32>
  %p = memref.view %arena[%c132096][] : memref<262144xi8> to memref<1x2x128x128xf16>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2x128x64xf16>, memref<1x2x128x64xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x128x128xf32>, memref<1x1x1x128xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f16, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  }
  linalg.fill ins(%nan : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%p : memref<1x2x128x128xf16>) {
  ^bb0(%in: f32, %in_1: f32, %out: f16):
    %0 = arith.divf %in, %in_1 : f32
    %1 = arith.cmpf uno, %0, %0 : f32
    %2 = arith.select %1, %zero, %0 : f32
    %3 = arith.truncf %2 : f32 to f16
    linalg.yield %3 : f16
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2x128x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x2x128x128xf16>, memref<1x2x128x64xf16>) outs(%o : memref<1x2x128x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x2x128x64xf32>) outs(%o : memref<1x2x128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.truncf %in : f32 to f16
    %1 = arith.extf %0 : f16 to f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Negative: the scores are read again after the chain: unchanged.
// CHECK-LABEL: func.func @scores_read_after
// CHECK-NOT: gpu.launch
// CHECK-COUNT-8: linalg.generic
// CHECK: return
func.func @scores_read_after(%q: memref<1x2x128x64xf16>, %k: memref<1x2x128x64xf16>, %v: memref<1x2x128x64xf16>, %mask: memref<1x1x1x128xf16>, %o: memref<1x2x128x64xf32>, %arena: memref<262144xi8>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 1.250000e-01 : f32
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c132096 = arith.constant 132096 : index
  %s = memref.view %arena[%c0][] : memref<262144xi8> to memref<1x2x128x128xf32>
  %r = memref.view %arena[%c131072][] : memref<262144xi8> to memref<1x2x128xf32>
  %p = memref.view %arena[%c132096][] : memref<262144xi8> to memref<1x2x128x128xf16>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2x128x64xf16>, memref<1x2x128x64xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x128x128xf32>, memref<1x1x1x128xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f16, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  }
  linalg.fill ins(%nan : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%p : memref<1x2x128x128xf16>) {
  ^bb0(%in: f32, %in_1: f32, %out: f16):
    %0 = arith.divf %in, %in_1 : f32
    %1 = arith.truncf %0 : f32 to f16
    linalg.yield %1 : f16
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2x128x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x2x128x128xf16>, memref<1x2x128x64xf16>) outs(%o : memref<1x2x128x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x2x128x64xf32>) outs(%o : memref<1x2x128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.truncf %in : f32 to f16
    %1 = arith.extf %0 : f16 to f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : memref<1x2x128x128xf32>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Negative: the scores start from ones, not zeros: unchanged.
// CHECK-LABEL: func.func @scores_from_ones
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @scores_from_ones(%q: memref<1x2x128x64xf16>, %k: memref<1x2x128x64xf16>, %v: memref<1x2x128x64xf16>, %mask: memref<1x1x1x128xf16>, %o: memref<1x2x128x64xf32>, %arena: memref<262144xi8>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 1.250000e-01 : f32
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c132096 = arith.constant 132096 : index
  %s = memref.view %arena[%c0][] : memref<262144xi8> to memref<1x2x128x128xf32>
  %r = memref.view %arena[%c131072][] : memref<262144xi8> to memref<1x2x128xf32>
  %p = memref.view %arena[%c132096][] : memref<262144xi8> to memref<1x2x128x128xf16>
  linalg.fill ins(%one : f32) outs(%s : memref<1x2x128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2x128x64xf16>, memref<1x2x128x64xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x128x128xf32>, memref<1x1x1x128xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f16, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  }
  linalg.fill ins(%nan : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%p : memref<1x2x128x128xf16>) {
  ^bb0(%in: f32, %in_1: f32, %out: f16):
    %0 = arith.divf %in, %in_1 : f32
    %1 = arith.truncf %0 : f32 to f16
    linalg.yield %1 : f16
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2x128x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x2x128x128xf16>, memref<1x2x128x64xf16>) outs(%o : memref<1x2x128x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x2x128x64xf32>) outs(%o : memref<1x2x128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.truncf %in : f32 to f16
    %1 = arith.extf %0 : f16 to f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Negative: the output shares the arena's bytes with Q (a plan made
// without attention-inputs-live): the kernel would overwrite Q as it
// reads it, so the chain stays, with a remark.
// CHECK-LABEL: func.func @output_overlaps_q
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @output_overlaps_q(%q: memref<1x2x128x64xf16>, %k: memref<1x2x128x64xf16>, %v: memref<1x2x128x64xf16>, %mask: memref<1x1x1x128xf16>, %o: memref<1x2x128x64xf32>, %arena: memref<262144xi8>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 1.250000e-01 : f32
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c132096 = arith.constant 132096 : index
  %s = memref.view %arena[%c0][] : memref<262144xi8> to memref<1x2x128x128xf32>
  %r = memref.view %arena[%c131072][] : memref<262144xi8> to memref<1x2x128xf32>
  %p = memref.view %arena[%c132096][] : memref<262144xi8> to memref<1x2x128x128xf16>
  %qa = memref.view %arena[%c132096][] : memref<262144xi8> to memref<1x2x128x64xf16>
  %oa = memref.view %arena[%c132096][] : memref<262144xi8> to memref<1x2x128x64xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x128x128xf32>)
  // expected-remark @below {{its output may share memory with an input}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qa, %k : memref<1x2x128x64xf16>, memref<1x2x128x64xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x128x128xf32>, memref<1x1x1x128xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f16, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  }
  linalg.fill ins(%nan : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%p : memref<1x2x128x128xf16>) {
  ^bb0(%in: f32, %in_1: f32, %out: f16):
    %0 = arith.divf %in, %in_1 : f32
    %1 = arith.truncf %0 : f32 to f16
    linalg.yield %1 : f16
  }
  linalg.fill ins(%zero : f32) outs(%oa : memref<1x2x128x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x2x128x128xf16>, memref<1x2x128x64xf16>) outs(%oa : memref<1x2x128x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%oa : memref<1x2x128x64xf32>) outs(%oa : memref<1x2x128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.truncf %in : f32 to f16
    %1 = arith.extf %0 : f16 to f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Negative: heads of 8 (the kernel takes Q/K heads that are multiples of
// 16): the chain stays, with a remark.
// CHECK-LABEL: func.func @heads_of_8
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @heads_of_8(%q: memref<1x2x128x8xf16>, %k: memref<1x2x128x8xf16>, %v: memref<1x2x128x8xf16>, %mask: memref<1x1x1x128xf16>, %o: memref<1x2x128x8xf32>, %arena: memref<262144xi8>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 1.250000e-01 : f32
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c132096 = arith.constant 132096 : index
  %s = memref.view %arena[%c0][] : memref<262144xi8> to memref<1x2x128x128xf32>
  %r = memref.view %arena[%c131072][] : memref<262144xi8> to memref<1x2x128xf32>
  %p = memref.view %arena[%c132096][] : memref<262144xi8> to memref<1x2x128x128xf16>
  linalg.fill ins(%zero : f32) outs(%s : memref<1x2x128x128xf32>)
  // expected-remark @below {{the head size of Q and K is not a multiple of 16 up to 128}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : memref<1x2x128x8xf16>, memref<1x2x128x8xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : memref<1x2x128x128xf32>, memref<1x1x1x128xf16>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f16, %out: f32):
    %0 = arith.mulf %in, %scale : f32
    %1 = arith.extf %in_1 : f16 to f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  }
  linalg.fill ins(%nan : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maxnumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%s : memref<1x2x128x128xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.subf %in, %in_1 : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<1x2x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : memref<1x2x128x128xf32>) outs(%r : memref<1x2x128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %r : memref<1x2x128x128xf32>, memref<1x2x128xf32>) outs(%p : memref<1x2x128x128xf16>) {
  ^bb0(%in: f32, %in_1: f32, %out: f16):
    %0 = arith.divf %in, %in_1 : f32
    %1 = arith.truncf %0 : f32 to f16
    linalg.yield %1 : f16
  }
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2x128x8xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x2x128x128xf16>, memref<1x2x128x8xf16>) outs(%o : memref<1x2x128x8xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x2x128x8xf32>) outs(%o : memref<1x2x128x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.truncf %in : f32 to f16
    %1 = arith.extf %0 : f16 to f32
    linalg.yield %1 : f32
  }
  return
}
