// RUN: kiln-opt %s -kiln-plan-memory | FileCheck %s --check-prefix=PLAIN
// RUN: kiln-opt %s '-kiln-plan-memory=attention-inputs-live=true' | FileCheck %s --check-prefix=LIVE

// An attention chain (kiln::matchAttentionChain) whose Q is an
// intermediate buffer. Planned plainly, Q's range ends at the scores'
// contraction, so the buffers the chain allocates after it may take Q's
// bytes (230400 bytes in all). With attention-inputs-live, Q lives to
// the chain's last op (the output's rounding into %res), where the one
// flash-attention kernel that replaces the chain still reads it: Q gets
// bytes [262144, 294912) that no other buffer of the chain shares, and
// the arena grows to 295936.
// PLAIN: kiln.memory_plan = {arena_bytes = 230400
// PLAIN: %[[Q:.*]] = memref.view %{{.*}}[%c196608{{.*}}] : memref<230400xi8> to memref<1x2x128x64xf16>
// PLAIN: memref.view %{{.*}}[%c229376{{.*}}] : memref<230400xi8> to memref<1x2x128xf32>
// LIVE: kiln.memory_plan = {arena_bytes = 295936
// LIVE: memref.view %{{.*}}[%c262144{{.*}}] : memref<295936xi8> to memref<1x2x128x64xf16>
// LIVE: memref.view %{{.*}}[%c0{{.*}}] : memref<295936xi8> to memref<1x2x128x128xf32>
// LIVE: memref.view %{{.*}}[%c294912{{.*}}] : memref<295936xi8> to memref<1x2x128xf32>
// LIVE: memref.view %{{.*}}[%c131072{{.*}}] : memref<295936xi8> to memref<1x2x128x128xf16>
// LIVE: memref.view %{{.*}}[%c196608{{.*}}] : memref<295936xi8> to memref<1x2x128x64xf32>
module {
func.func @main(%qin: memref<1x2x128x64xf16>, %k: memref<1x2x128x64xf16>, %v: memref<1x2x128x64xf16>, %mask: memref<1x1x1x128xf16>, %res: memref<1x2x128x64xf16>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %scale = arith.constant 1.250000e-01 : f32
  %c0 = arith.constant 0 : index
  %c131072 = arith.constant 131072 : index
  %c132096 = arith.constant 132096 : index
  %q = memref.alloc() : memref<1x2x128x64xf16>
  memref.copy %qin, %q : memref<1x2x128x64xf16> to memref<1x2x128x64xf16>
  %s = memref.alloc() : memref<1x2x128x128xf32>
  %r = memref.alloc() : memref<1x2x128xf32>
  %p = memref.alloc() : memref<1x2x128x128xf16>
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
  %o = memref.alloc() : memref<1x2x128x64xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<1x2x128x64xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : memref<1x2x128x128xf16>, memref<1x2x128x64xf16>) outs(%o : memref<1x2x128x64xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %0 = arith.extf %in_1 : f16 to f32
    %1 = arith.extf %in : f16 to f32
    %2 = arith.mulf %1, %0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x2x128x64xf32>) outs(%res : memref<1x2x128x64xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  }
  return
}
}
