// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions,kiln-gpu-form-kernels))' | FileCheck %s
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{tf32=true}))' | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{min-size=128}))' | FileCheck %s --check-prefix=MIN
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{fold-padding=false}))' | FileCheck %s --check-prefix=NOFOLD
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{vector-bytes=0}))' | FileCheck %s --check-prefix=NOVEC
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{stages=1}))' | FileCheck %s --check-prefix=STAGES1
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{wide-min-blocks=1}))' | FileCheck %s --check-prefix=WIDE
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{half-tile=64x64x64/32x16}))' | FileCheck %s --check-prefix=TILE
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{wgmma=true wide-min-blocks=1 wgmma-tile=128x128x32}))' | FileCheck %s --check-prefix=WGMMA
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{wgmma=true wide-min-blocks=1 wgmma-tile=128x256x64}))' | FileCheck %s --check-prefix=WGDYN
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{wgmma=true wide-min-blocks=1}))' | FileCheck %s --check-prefix=WGDEFAULT
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{wgmma=true wide-min-blocks=2 wgmma-tile=128x256x64,64x64x32}))' | FileCheck %s --check-prefix=WGLIST
// RUN: not kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{wgmma=true wgmma-tile=128x96x64}))' 2>&1 | FileCheck %s --check-prefix=BADWG
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{wgmma=true}))' | FileCheck %s --check-prefix=NOWGMMA
// RUN: not kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{half-tile=64x64x32/32x48}))' 2>&1 | FileCheck %s --check-prefix=BADTILE
// RUN: not kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{wide-tile=512x512x32/16x16}))' 2>&1 | FileCheck %s --check-prefix=BADWIDE
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{unroll-k-loop=false}))' | FileCheck %s --check-prefix=NOUNROLL
// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions{fp8=true}))' | FileCheck %s --check-prefix=FP8
// BADTILE: kiln-gpu-contractions: half-tile '64x64x32/32x48': every size must be a power of two
// BADWIDE: kiln-gpu-contractions: wide-tile '512x512x32/16x16': the tile needs 64 to 1024 threads
// BADWG: kiln-gpu-contractions: wgmma-tile '128x96x64': M is 64, 128, 192 or 256 (warpgroups of 64 rows), N a multiple of 64 up to 256, K 32 or 64

#a = affine_map<(m, k, n) -> (m, k)>
#b = affine_map<(m, k, n) -> (k, n)>
#c = affine_map<(m, k, n) -> (m, n)>

// A 100x70 * 70x50 product: one launch of (2 x 1) blocks of 128 threads,
// A and B tiles in shared memory ([k][m] and [k][n], rows padded by one),
// a K loop of 5 steps carrying 32 f32 accumulators per thread, barriers
// around the products, guarded loads where the tiles overhang, and an
// epilogue that adds each accumulator to its output element.
// kiln-gpu-form-kernels keeps the launch, names it and records its cost.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: kiln.kernel_costs = {k0_mm = array<i64: 700000, 62000>}
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[G:.*]], {{.*}}) threads({{.*}}) in (%{{.*}} = %[[T:.*]], {{.*}}) module(@kiln_kernels) function(@k0_mm)
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<16x65xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x65xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[ACC:.*]]:32 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (f32, f32
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %[[AS]]
// CHECK: memref.store %{{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[AS]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: memref.load %arg2
// CHECK: arith.addf %{{.*}}, %[[ACC]]#0
// CHECK: memref.store %{{.*}}, %arg2
// CHECK-NOT: linalg.generic
// TF32-LABEL: func.func @matmul
// TF32: workgroup(%{{.*}} : memref<16x72xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x72xf32, #gpu.address_space<workgroup>>)
// TF32: scf.for {{.*}} -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// TF32: arith.bitcast %{{.*}} : f32 to i32
// TF32: arith.andi
// TF32-COUNT-16: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// TF32: vector.extract %{{.*}}[0, 0] : f32 from vector<2x2xf32>
// MIN-LABEL: func.func @matmul
// MIN-NOT: gpu.launch
// MIN: linalg.generic
func.func @matmul(%x: memref<100x70xf32>, %w: memref<70x50xf32>, %y: memref<100x50xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<100x70xf32>, memref<70x50xf32>) outs(%y : memref<100x50xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } loc("mm")
  return
}

// -----

// f16 operands with an f32 accumulator (the inputs extended in the body):
// tensor cores m16n8k16, K in steps of 32, and no guards where the sizes
// are multiples of the tiles. Each shared tile keeps its operand's
// contiguous side contiguous (A [m][k], B [k][n]), three buffers deep: the
// first two steps' tiles are copied 16 bytes at a time with cp.async
// before the loop, and each step copies the tile two steps ahead, loads
// its fragments with ldmatrix (B's transposed), multiplies, and waits for
// the next tile.
// With unroll-k-loop=false the loop over K (the one with the barriers)
// carries an llvm.loop_annotation that disables unrolling (ptxas sees
// `.pragma "nounroll"`; test/e2e/gpu-unroll-k-loop.test).
// NOUNROLL: #llvm.loop_unroll<disable = true>
// NOUNROLL: func.func @matmul_f16
// NOUNROLL: scf.for
// NOUNROLL: gpu.barrier
// NOUNROLL: } {llvm.loop_annotation = #
// CHECK-LABEL: func.func @matmul_f16
// CHECK: workgroup(%[[AS:.*]] : memref<3x64x40xf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<3x32x72xf16, #gpu.address_space<workgroup>>)
// CHECK-NOT: scf.if
// CHECK: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}], %[[AS]][%c0, %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<128x64xf16> to memref<3x64x40xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %arg1[%{{.*}}, %{{.*}}], %[[BS]][%c0, %{{.*}}, %{{.*}}], 8 {bypassL1} : memref<64x64xf16> to memref<3x32x72xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}], %[[AS]][%c1{{.*}}, %{{.*}}, %{{.*}}], 8 {bypassL1}
// CHECK: %[[G:.*]] = nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[G]] {numGroups = 1 : i32}
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: arith.select
// CHECK: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}], %[[AS]][%{{.*}}, %{{.*}}, %{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: %[[N:.*]] = nvgpu.device_async_create_group
// CHECK: nvgpu.ldmatrix %[[AS]][%{{.*}}, %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<3x64x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %[[BS]][%{{.*}}, %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = true} : memref<3x32x72xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-COUNT-8: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: nvgpu.device_async_wait %[[N]] {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// With wide tiles (at least wide-min-blocks of them; by default 128x128
// with steps of 32 and 4 warps of 64x64): 128 threads, two stages (three
// would pass 48 KiB), 4 A and 4 B ldmatrix and 32 mma per step of 16.
// WIDE-LABEL: func.func @matmul_f16
// WIDE: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c128, {{.*}}) workgroup(%[[AS:.*]] : memref<2x128x40xf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<2x32x136xf16, #gpu.address_space<workgroup>>)
// WIDE: scf.for
// WIDE-COUNT-4: nvgpu.ldmatrix %[[AS]]
// WIDE-COUNT-4: nvgpu.ldmatrix %[[BS]]
// WIDE-COUNT-32: nvgpu.mma.sync
// With wgmma (sm_90a), the wide tile's products become a 128x128 tile of
// two warpgroups: one shared buffer per stage holding A's tile then B's
// (swizzled; see the pass's description), its address taken once for the
// descriptors; per step, a wait for the tile's copies, the async-proxy
// fence and a barrier, two m64n128k16 wgmma from descriptors (A K-major:
// 64-byte swizzle, atoms 512 bytes apart; B [k][n], MN-major: 128-byte
// swizzle, atoms 1024 bytes apart along N and 2048 along K), a wait that
// leaves them in flight, a barrier before the buffer of the step before
// is refilled; the accumulators are a struct of 64 f32 per thread,
// waited for after the loop.
// WGMMA-LABEL: func.func @matmul_f16
// WGMMA: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256, {{.*}}) workgroup(%[[S:.*]] : memref<3x8192xf16, #gpu.address_space<workgroup>>)
// WGMMA: memref.extract_aligned_pointer_as_index %[[S]]
// WGMMA: %[[ZERO:.*]] = llvm.mlir.zero : !llvm.struct<(f32, {{.*}})>
// WGMMA: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}], %[[S]][%c0, %{{.*}}], 8 {bypassL1}
// WGMMA: arith.xori
// WGMMA: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]])
// WGMMA-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// WGMMA-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// WGMMA-NEXT: gpu.barrier
// WGMMA: nvvm.wgmma.fence.aligned
// WGMMA: arith.constant -9223371899415756800 : i64
// WGMMA: arith.constant 4611686568187396096 : i64
// WGMMA: %[[W0:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[ACC]], <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// WGMMA: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[W0]], <m = 64, n = 128, k = 16>
// WGMMA-NEXT: nvvm.wgmma.commit.group.sync.aligned
// WGMMA-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// WGMMA-NEXT: gpu.barrier
// WGMMA: nvgpu.device_async_copy
// WGMMA: scf.yield
// WGMMA: nvvm.wgmma.wait.group.sync.aligned 0
// WGMMA-NEXT: nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// WGMMA: llvm.extractvalue %{{.*}}[63]
// A 128x256x64 wgmma tile (the first of the default list): 128 f32
// accumulators per thread, three stages of 48 KiB, past static
// shared memory's 48 KiB: the launch's dynamic shared memory, viewed as
// the stages' buffer. A K-major (rows of 64 k, 128 bytes): 128-byte
// swizzle, atoms 1024 bytes apart; B [k][n]: atoms 1024 bytes apart along
// N and 4096 along K. Four m64n256k16 per step of 64 k.
// WGDYN-LABEL: func.func @matmul_f16
// WGDYN: %[[BYTES:.*]] = arith.constant 147456 : i32
// WGDYN: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c256, {{.*}}) dynamic_shared_memory_size %[[BYTES]]
// WGDYN-NOT: workgroup(
// WGDYN: %[[DYN:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// WGDYN: %[[S:.*]] = memref.view %[[DYN]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3x24576xf16, #gpu.address_space<workgroup>>
// WGDYN: memref.extract_aligned_pointer_as_index %[[S]]
// WGDYN: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}], %[[S]][%c0, %{{.*}}], 8 {bypassL1}
// WGDYN: scf.for
// WGDYN: arith.constant 4611686293305360384 : i64
// WGDYN: arith.constant 4611687117943209984 : i64
// WGDYN-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>
// WGDYN-NEXT: nvvm.wgmma.commit.group.sync.aligned
// WGDYN: llvm.extractvalue %{{.*}}[127]
// The default list passes over 128x256x64 where 128x128x64 covers the
// output (64 columns here) with fewer outputs: three stages of 32 KiB.
// WGDEFAULT-LABEL: func.func @matmul_f16
// WGDEFAULT: arith.constant 98304 : i32
// WGDEFAULT: memref.view {{.*}} to memref<3x16384xf16, #gpu.address_space<workgroup>>
// WGDEFAULT-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// A list of wgmma tiles: the first that gives wide-min-blocks blocks (2
// here: 128x256 gives one, 64x64 two, in one warpgroup).
// WGLIST-LABEL: func.func @matmul_f16
// WGLIST: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c128, {{.*}}) workgroup(%{{.*}} : memref<3x4096xf16, #gpu.address_space<workgroup>>)
// WGLIST: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>
// wgmma takes the wide tile's place only: with no wide-min-blocks, none.
// NOWGMMA-LABEL: func.func @matmul_f16
// NOWGMMA-NOT: nvvm.wgmma
// NOWGMMA: nvgpu.mma.sync
// Other tile shapes: 8 warps of 32x16 in a 64x64 tile; steps of 64.
// TILE-LABEL: func.func @matmul_f16
// TILE: threads({{.*}}) in (%{{.*}} = %c256, {{.*}}) workgroup(%{{.*}} : memref<2x64x72xf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2x64x72xf16, #gpu.address_space<workgroup>>)
// TILE: scf.for
// TILE-COUNT-2: nvgpu.ldmatrix
// TILE-COUNT-4: nvgpu.mma.sync
// With one buffer the tiles are staged through registers: 16-byte global
// loads, then stores, and a barrier before and after the products.
// STAGES1-LABEL: func.func @matmul_f16
// STAGES1: workgroup(%[[AS:.*]] : memref<64x40xf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<32x72xf16, #gpu.address_space<workgroup>>)
// STAGES1-NOT: nvgpu.device_async
// STAGES1: vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<128x64xf16>, vector<8xf16>
// STAGES1: memref.store %{{.*}}, %[[AS]]
// STAGES1: vector.load %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x64xf16>, vector<8xf16>
// STAGES1: memref.store %{{.*}}, %[[BS]]
// STAGES1: gpu.barrier
// STAGES1: nvgpu.ldmatrix %[[AS]][%{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false}
// STAGES1: nvgpu.ldmatrix %[[BS]][%{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = true}
// STAGES1: nvgpu.mma.sync
// STAGES1: gpu.barrier
#a2 = affine_map<(m, n, k) -> (m, k)>
#b2 = affine_map<(m, n, k) -> (k, n)>
#c2 = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_f16(%x: memref<128x64xf16>, %w: memref<64x64xf16>, %y: memref<128x64xf32>) {
  linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<128x64xf16>, memref<64x64xf16>) outs(%y : memref<128x64xf32>) {
  ^bb0(%i: f16, %j: f16, %o: f32):
    %ie = arith.extf %i : f16 to f32
    %je = arith.extf %j : f16 to f32
    %p = arith.mulf %ie, %je : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left as they are: a dynamic size, a body that is not a multiply-add,
// integers, a narrow product (N = 8), a dimension only the output has (a
// broadcast), a reduction only one input reads, an output not indexed by
// a projected permutation.
// CHECK-LABEL: func.func @not_tiled
// CHECK-NOT: workgroup
// CHECK-NOT: nvgpu
#a3 = affine_map<(m, k, n) -> (m, k)>
#b3 = affine_map<(m, k, n) -> (k, n)>
#c3 = affine_map<(m, k, n) -> (m, n)>
#a4 = affine_map<(m, n, r, k) -> (m, k)>
#b4 = affine_map<(m, n, r, k) -> (k, n)>
#c4 = affine_map<(m, n, r, k) -> (m, n, r)>
#a7 = affine_map<(m, n, r, k) -> (m, k, r)>
#c7 = affine_map<(m, n, r, k) -> (m, n)>
#c8 = affine_map<(m, k, n) -> (m + n)>
func.func @not_tiled(%xd: memref<?x70xf32>, %w: memref<70x50xf32>, %yd: memref<?x50xf32>,
                     %x: memref<100x70xf32>, %y: memref<100x50xf32>,
                     %xi: memref<100x70xi32>, %wi: memref<70x50xi32>, %yi: memref<100x50xi32>,
                     %w8: memref<70x8xf32>, %y8: memref<100x8xf32>,
                     %x4: memref<64x70xf32>, %w4: memref<70x64xf32>, %y4: memref<64x64x4xf32>,
                     %x7: memref<64x70x4xf32>, %y7: memref<64x64xf32>, %yp: memref<149xf32>) {
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%xd, %w : memref<?x70xf32>, memref<70x50xf32>) outs(%yd : memref<?x50xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<100x70xf32>, memref<70x50xf32>) outs(%y : memref<100x50xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.addf %i, %j : f32
    %s = arith.maximumf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%xi, %wi : memref<100x70xi32>, memref<70x50xi32>) outs(%yi : memref<100x50xi32>) {
  ^bb0(%i: i32, %j: i32, %o: i32):
    %p = arith.muli %i, %j : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  }
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w8 : memref<100x70xf32>, memref<70x8xf32>) outs(%y8 : memref<100x8xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a4, #b4, #c4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x4, %w4 : memref<64x70xf32>, memref<70x64xf32>) outs(%y4 : memref<64x64x4xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a7, #b4, #c7], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x7, %w4 : memref<64x70x4xf32>, memref<70x64xf32>) outs(%y7 : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#a3, #b3, #c8], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<100x70xf32>, memref<70x50xf32>) outs(%yp : memref<149xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A batched product with B transposed ([b][n][k]): the batch index comes
// from the block id (n tile fastest, then m tile, then batch). Both
// operands are read along k, their contiguous dim, 4 floats per load
// (one element per load with vector-bytes=0).
// CHECK-LABEL: func.func @batched
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c12
// CHECK: scf.for
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<3x256x32xf32>, vector<4xf32>
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<3x64x32xf32>, vector<4xf32>
// NOVEC-LABEL: func.func @batched
// NOVEC-NOT: vector.load
// NOVEC: memref.load %arg1[%{{.*}}, %{{.*}}, %{{.*}}] : memref<3x64x32xf32>
// NOVEC-NOT: vector.load
#a5 = affine_map<(b, m, n, k) -> (b, m, k)>
#b5 = affine_map<(b, m, n, k) -> (b, n, k)>
#c5 = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batched(%x: memref<3x256x32xf32>, %w: memref<3x64x32xf32>, %y: memref<3x256x64xf32>) {
  linalg.generic {indexing_maps = [#a5, #b5, #c5], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<3x256x32xf32>, memref<3x64x32xf32>) outs(%y : memref<3x256x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A convolution's GEMM over an im2col copy: out[n, f, p] += w[f, k] *
// col[n, k, p]. N is (n, p) flattened, 2 x 256 = 8 tiles of 64: 8 blocks.
// The weights' rows (27) are not groups of 4: one element per load; the
// columns' p is (4 per load, guarded as a group where K overhangs).
// CHECK-LABEL: func.func @conv_gemm
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c8
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}] : memref<32x27xf32>
// CHECK: scf.if %{{.*}} -> (vector<4xf32>)
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<2x27x256xf32>, vector<4xf32>
// CHECK: arith.constant dense<0.000000e+00> : vector<4xf32>
#a6 = affine_map<(n, f, p, k) -> (f, k)>
#b6 = affine_map<(n, f, p, k) -> (n, k, p)>
#c6 = affine_map<(n, f, p, k) -> (n, f, p)>
func.func @conv_gemm(%w: memref<32x27xf32>, %col: memref<2x27x256xf32>, %y: memref<2x32x256xf32>) {
  linalg.generic {indexing_maps = [#a6, #b6, #c6], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %col : memref<32x27xf32>, memref<2x27x256xf32>) outs(%y : memref<2x32x256xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Two K dimensions, flattened: K = 7 x 10 = 70, walked in 5 steps of 16
// (the last one guarded: k < 70), each k split into (k1, k2) to index the
// operands.
// CHECK-LABEL: func.func @two_k_dims
// CHECK: gpu.launch
// CHECK: scf.for %{{.*}} = %c0 to %c5 step %c1
// CHECK: arith.remui %{{.*}}, %c10
// CHECK: arith.divui %{{.*}}, %c10
// CHECK: arith.cmpi ult, %{{.*}}, %c70
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}] : memref<64x7x10xf32>
#a9 = affine_map<(m, n, k1, k2) -> (m, k1, k2)>
#b9 = affine_map<(m, n, k1, k2) -> (k1, k2, n)>
#c9 = affine_map<(m, n, k1, k2) -> (m, n)>
func.func @two_k_dims(%x: memref<64x7x10xf32>, %w: memref<7x10x64xf32>, %y: memref<64x64xf32>) {
  linalg.generic {indexing_maps = [#a9, #b9, #c9], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<64x7x10xf32>, memref<7x10x64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named convolution as an implicit GEMM: A is the filter (M = 32 output
// channels, K = 8 x 3 x 3 = 72), B the input read in place at
// (n, c, 2 oh + kh, 2 ow + kw) (N = 2 x 7 x 7 = 98): 2 n tiles, 1 m tile.
// The output's innermost dimension (ow) is in N, the tiles' columns.
// CHECK-LABEL: func.func @conv_named
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2
// CHECK: memref.load %arg1[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<32x8x3x3xf32>
// CHECK: arith.muli %{{.*}}, %c2
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x8x16x16xf32>
// CHECK: memref.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x32x7x7xf32>
// CHECK-NOT: linalg.conv
func.func @conv_named(%x: memref<2x8x16x16xf32>, %w: memref<32x8x3x3xf32>, %y: memref<2x32x7x7xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : memref<2x8x16x16xf32>, memref<32x8x3x3xf32>) outs(%y : memref<2x32x7x7xf32>)
  return
}

// -----

// A grouped convolution: the group is a batch dimension (in both inputs
// and the output), each block one group's tile: 2 groups x 1 x 2 tiles.
// CHECK-LABEL: func.func @conv_grouped
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4
// CHECK-NOT: linalg.conv
func.func @conv_grouped(%x: memref<1x2x16x10x12xf32>, %w: memref<2x24x16x3x3xf32>, %y: memref<1x2x24x8x10xf32>) {
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x2x16x10x12xf32>, memref<2x24x16x3x3xf32>) outs(%y : memref<1x2x24x8x10xf32>)
  return
}

// -----

// A padded convolution's input (a zero fill, then the source copied into
// the interior) is read from the source in place: index - 1 per padded
// spatial dim, guarded by index - 1 < 8 (unsigned: below zero wraps). The
// fill and the copy are gone; the padded buffer's view stays unused.
// CHECK-LABEL: func.func @padded_folded
// CHECK: %[[SRC:.*]] = memref.view %arg0[%c0][] : memref<8192xi8> to memref<1x4x8x8xf32>
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK: gpu.launch
// CHECK: arith.subi %{{.*}}, %c1
// CHECK: arith.cmpi ult, %{{.*}}, %c8
// CHECK: memref.load %[[SRC]][
// NOFOLD-LABEL: func.func @padded_folded
// NOFOLD: linalg.fill
// NOFOLD: linalg.copy
func.func @padded_folded(%arena: memref<8192xi8>, %w: memref<16x4x3x3xf32>, %y: memref<1x16x8x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %src = memref.view %arena[%c0][] : memref<8192xi8> to memref<1x4x8x8xf32>
  %pad = memref.view %arena[%c1024][] : memref<8192xi8> to memref<1x4x10x10xf32>
  linalg.fill ins(%cst : f32) outs(%pad : memref<1x4x10x10xf32>)
  %in = memref.subview %pad[0, 0, 1, 1] [1, 4, 8, 8] [1, 1, 1, 1] : memref<1x4x10x10xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  linalg.copy ins(%src : memref<1x4x8x8xf32>) outs(%in : memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%pad, %w : memref<1x4x10x10xf32>, memref<16x4x3x3xf32>) outs(%y : memref<1x16x8x8xf32>)
  return
}

// -----

// A padded channels-last f16 convolution (kiln-gpu-channels-last's form):
// K runs over (kh, kw, c) with the 16 channels contiguous, so each group
// of 8 is one 16-byte cp.async from the source in place, inside or
// outside the padding as a whole (rows and columns - 1, guarded; the
// channels are not padded), zero-filled (no bytes read) outside. The
// weights [f, kh, kw, c] are 16-byte groups too (guarded: K 144 is not
// a whole number of steps). In NCHW (@padded_folded)
// a group along a row could straddle the padding, and each element is
// loaded alone.
// CHECK-LABEL: func.func @padded_nhwc
// CHECK: %[[SRC:.*]] = memref.view %arg0[%c0][] : memref<16384xi8> to memref<1x8x8x16xf16>
// CHECK-NOT: linalg.copy
// CHECK: gpu.launch
// CHECK: arith.subi %{{.*}}, %c1
// CHECK: arith.cmpi ult, %{{.*}}, %c8
// CHECK: nvgpu.device_async_copy %[[SRC]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}, 8, %{{.*}} {bypassL1} : memref<1x8x8x16xf16> to
// CHECK: nvgpu.device_async_copy %arg1[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}, 8, %{{.*}} {bypassL1} : memref<32x3x3x16xf16> to
// CHECK-NOT: memref.load %[[SRC]]
// CHECK: nvgpu.mma.sync
func.func @padded_nhwc(%arena: memref<16384xi8>, %w: memref<32x3x3x16xf16>, %y: memref<1x8x8x32xf32>) {
  %cst = arith.constant 0.0 : f16
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %src = memref.view %arena[%c0][] : memref<16384xi8> to memref<1x8x8x16xf16>
  %pad = memref.view %arena[%c4096][] : memref<16384xi8> to memref<1x10x10x16xf16>
  linalg.fill ins(%cst : f16) outs(%pad : memref<1x10x10x16xf16>)
  %in = memref.subview %pad[0, 1, 1, 0] [1, 8, 8, 16] [1, 1, 1, 1] : memref<1x10x10x16xf16> to memref<1x8x8x16xf16, strided<[1600, 160, 16, 1], offset: 176>>
  linalg.copy ins(%src : memref<1x8x8x16xf16>) outs(%in : memref<1x8x8x16xf16, strided<[1600, 160, 16, 1], offset: 176>>)
  linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%pad, %w : memref<1x10x10x16xf16>, memref<32x3x3x16xf16>) outs(%y : memref<1x8x8x32xf32>)
  return
}

// -----

// Not folded: the convolution's output takes the source's bytes (the
// memory plan may reuse them once the copy has read the source), or the
// padded buffer has a second reader.
// CHECK-LABEL: func.func @padded_kept
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: gpu.launch
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: gpu.launch
func.func @padded_kept(%arena: memref<8192xi8>, %w: memref<16x4x3x3xf32>, %x: memref<1x4x8x8xf32>,
                       %y1: memref<1x16x8x8xf32>, %y2: memref<1x16x8x8xf32>) {
  %cst = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %c4096 = arith.constant 4096 : index
  %src = memref.view %arena[%c0][] : memref<8192xi8> to memref<1x4x8x8xf32>
  %pad = memref.view %arena[%c1024][] : memref<8192xi8> to memref<1x4x10x10xf32>
  %out = memref.view %arena[%c0][] : memref<8192xi8> to memref<1x16x8x8xf32>
  linalg.fill ins(%cst : f32) outs(%pad : memref<1x4x10x10xf32>)
  %in = memref.subview %pad[0, 0, 1, 1] [1, 4, 8, 8] [1, 1, 1, 1] : memref<1x4x10x10xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  linalg.copy ins(%src : memref<1x4x8x8xf32>) outs(%in : memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%pad, %w : memref<1x4x10x10xf32>, memref<16x4x3x3xf32>) outs(%out : memref<1x16x8x8xf32>)
  %pad2 = memref.view %arena[%c4096][] : memref<8192xi8> to memref<1x4x10x10xf32>
  linalg.fill ins(%cst : f32) outs(%pad2 : memref<1x4x10x10xf32>)
  %in2 = memref.subview %pad2[0, 0, 1, 1] [1, 4, 8, 8] [1, 1, 1, 1] : memref<1x4x10x10xf32> to memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>
  linalg.copy ins(%x : memref<1x4x8x8xf32>) outs(%in2 : memref<1x4x8x8xf32, strided<[400, 100, 10, 1], offset: 11>>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%pad2, %w : memref<1x4x10x10xf32>, memref<16x4x3x3xf32>) outs(%y1 : memref<1x16x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%pad2, %w : memref<1x4x10x10xf32>, memref<16x4x3x3xf32>) outs(%y2 : memref<1x16x8x8xf32>)
  return
}

// -----

// bf16 on tensor cores: nvvm.mma.sync m16n8k16 directly (upstream's
// nvgpu.mma.sync has no bf16 lowering), two bf16 per 32-bit register (the
// first in the low half), f32 accumulators, the bf16 output rounded once.
// CHECK-LABEL: func.func @matmul_bf16
// CHECK: workgroup(%{{.*}} : memref<3x64x40xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<3x32x72xbf16, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.ldmatrix {{.*}} -> vector<4x2xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: nvgpu.mma.sync
#a10 = affine_map<(m, n, k) -> (m, k)>
#b10 = affine_map<(m, n, k) -> (k, n)>
#c10 = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_bf16(%x: memref<64x64xbf16>, %w: memref<64x64xbf16>, %y: memref<64x64xbf16>) {
  linalg.generic {indexing_maps = [#a10, #b10, #c10], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<64x64xbf16>, memref<64x64xbf16>) outs(%y : memref<64x64xbf16>) {
  ^bb0(%i: bf16, %j: bf16, %o: bf16):
    %p = arith.mulf %i, %j : bf16
    %s = arith.addf %o, %p : bf16
    linalg.yield %s : bf16
  }
  return
}

// -----

// Groups of 4 that would not start 16-byte aligned: A is a slice at
// offset 1 (one element per load); B starts at offset 4 with a row stride
// of 68 (4 per load). A 1x1 convolution's input is read 4 positions per
// load (the position steps the address by one, 8 x 8 per channel); its
// 3x3 counterpart's window is not.
// CHECK-LABEL: func.func @alignment
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<64x64xf32, strided<[65, 1], offset: 1>>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<64x64xf32, strided<[68, 1], offset: 4>>, vector<4xf32>
// CHECK: gpu.launch
// CHECK: vector.load %arg3[{{.*}}] {alignment = 16 : i64} : memref<2x16x8x8xf32>, vector<4xf32>
// CHECK: gpu.launch
// CHECK-NOT: vector.load
// CHECK: return
#a9 = affine_map<(m, n, k) -> (m, k)>
#b9 = affine_map<(m, n, k) -> (k, n)>
#c9 = affine_map<(m, n, k) -> (m, n)>
func.func @alignment(%x: memref<64x65xf32>, %w: memref<64x68xf32>, %y: memref<64x64xf32>,
                     %img: memref<2x16x8x8xf32>, %w1: memref<32x16x1x1xf32>, %o1: memref<2x32x8x8xf32>,
                     %w3: memref<32x16x3x3xf32>, %o3: memref<2x32x6x6xf32>) {
  %a = memref.subview %x[0, 1] [64, 64] [1, 1] : memref<64x65xf32> to memref<64x64xf32, strided<[65, 1], offset: 1>>
  %b = memref.subview %w[0, 4] [64, 64] [1, 1] : memref<64x68xf32> to memref<64x64xf32, strided<[68, 1], offset: 4>>
  linalg.generic {indexing_maps = [#a9, #b9, #c9], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<64x64xf32, strided<[65, 1], offset: 1>>, memref<64x64xf32, strided<[68, 1], offset: 4>>)
      outs(%y : memref<64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %w1 : memref<2x16x8x8xf32>, memref<32x16x1x1xf32>) outs(%o1 : memref<2x32x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %w3 : memref<2x16x8x8xf32>, memref<32x16x3x3xf32>) outs(%o3 : memref<2x32x6x6xf32>)
  return
}

// -----

// 8-bit integers sign-extended into an i32 accumulator (a quantized
// model's contraction): tensor cores m16n8k32 s8 with i32 accumulators,
// K in steps of 64 (the 16-bit tiles' bytes a row). 8-bit fragments have
// no transposing ldmatrix, so both shared tiles are k-contiguous ([m][k]
// and [n][k], rows padded by 16 bytes): A, read along k, is copied by
// cp.async 16 bytes at a time; B, read along n, is loaded 16 bytes at a
// time and stored transposed, byte by byte. The epilogue adds integers.
// CHECK-LABEL: func.func @matmul_int8
// CHECK: workgroup(%[[AS:.*]] : memref<3x64x80xi8, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<3x64x80xi8, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}], %[[AS]][%c0, %{{.*}}, %{{.*}}], 16 {bypassL1} : memref<128x64xi8> to memref<3x64x80xi8, #gpu.address_space<workgroup>>
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<64x64xi8>, vector<16xi8>
// CHECK-COUNT-16: memref.store %{{.*}}, %[[BS]][%c0, %{{.*}}, %{{.*}}] : memref<3x64x80xi8, #gpu.address_space<workgroup>>
// CHECK: scf.for {{.*}} -> (vector<2x2xi32>, vector<2x2xi32>, vector<2x2xi32>, vector<2x2xi32>, vector<2x2xi32>, vector<2x2xi32>, vector<2x2xi32>, vector<2x2xi32>)
// CHECK: nvgpu.ldmatrix %[[AS]][%{{.*}}, %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<3x64x80xi8, #gpu.address_space<workgroup>> -> vector<4x4xi8>
// CHECK: nvgpu.ldmatrix %[[BS]][%{{.*}}, %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<3x64x80xi8, #gpu.address_space<workgroup>> -> vector<4x4xi8>
// CHECK-COUNT-8: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 32]} : (vector<4x4xi8>, vector<2x4xi8>, vector<2x2xi32>) -> vector<2x2xi32>
// CHECK: nvgpu.ldmatrix %[[AS]]
// CHECK: scf.yield
// CHECK: %[[OLD:.*]] = memref.load %arg2
// CHECK: arith.addi %[[OLD]], %{{.*}} : i32
// CHECK: memref.store %{{.*}}, %arg2
// Not 8-bit signed products: zero-extended (unsigned) bytes, and 8-bit
// operands summed in i16, stay loops.
// CHECK-LABEL: func.func @int8_not_tiled
// CHECK-NOT: nvgpu
// CHECK: return
#a9 = affine_map<(m, k, n) -> (m, k)>
#b9 = affine_map<(m, k, n) -> (k, n)>
#c9 = affine_map<(m, k, n) -> (m, n)>
func.func @matmul_int8(%x: memref<128x64xi8>, %w: memref<64x64xi8>, %y: memref<128x64xi32>) {
  linalg.generic {indexing_maps = [#a9, #b9, #c9], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<128x64xi8>, memref<64x64xi8>) outs(%y : memref<128x64xi32>) {
  ^bb0(%i: i8, %j: i8, %o: i32):
    %ei = arith.extsi %i : i8 to i32
    %ej = arith.extsi %j : i8 to i32
    %p = arith.muli %ei, %ej : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  }
  return
}
func.func @int8_not_tiled(%x: memref<128x64xi8>, %w: memref<64x64xi8>, %y: memref<128x64xi32>,
                          %y16: memref<128x64xi16>) {
  linalg.generic {indexing_maps = [#a9, #b9, #c9], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<128x64xi8>, memref<64x64xi8>) outs(%y : memref<128x64xi32>) {
  ^bb0(%i: i8, %j: i8, %o: i32):
    %ei = arith.extui %i : i8 to i32
    %ej = arith.extsi %j : i8 to i32
    %p = arith.muli %ei, %ej : i32
    %s = arith.addi %o, %p : i32
    linalg.yield %s : i32
  }
  linalg.generic {indexing_maps = [#a9, #b9, #c9], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<128x64xi8>, memref<64x64xi8>) outs(%y16 : memref<128x64xi16>) {
  ^bb0(%i: i8, %j: i8, %o: i16):
    %ei = arith.extsi %i : i8 to i16
    %ej = arith.extsi %j : i8 to i16
    %p = arith.muli %ei, %ej : i16
    %s = arith.addi %o, %p : i16
    linalg.yield %s : i16
  }
  return
}

// -----

// float8 e4m3 operands held as bytes (kiln-gpu-fold-dequantize's form: i8
// bitcast to f8E4M3FN and extended to f32 in the body). With fp8=true the
// int8 tiles' layout (64 k a step, k-contiguous [m][k] and [n][k] tiles,
// cp.async along k, ldmatrix of bytes) with f32 accumulators and the
// NVPTX intrinsic of mma.sync m16n8k32 e4m3 (NVVM's mma op does not list
// the dense float8 shapes); without it the product stays a loop.
// FP8-LABEL: func.func @matmul_fp8
// FP8: workgroup(%[[AS:.*]] : memref<3x64x80xi8, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<3x64x80xi8, #gpu.address_space<workgroup>>)
// FP8: nvgpu.device_async_copy %arg0[%{{.*}}, %{{.*}}], %[[AS]][%c0, %{{.*}}, %{{.*}}], 16 {bypassL1}
// FP8: scf.for {{.*}} -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// FP8: nvgpu.ldmatrix %[[AS]][%{{.*}}, %{{.*}}, %{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<3x64x80xi8, #gpu.address_space<workgroup>> -> vector<4x4xi8>
// FP8: nvgpu.ldmatrix %[[BS]]
// FP8-COUNT-8: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32"({{.*}}) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// FP8: arith.addf
// CHECK-LABEL: func.func @matmul_fp8
// CHECK-NOT: nvgpu
// CHECK: return
#a10 = affine_map<(m, k, n) -> (m, k)>
#b10 = affine_map<(m, k, n) -> (k, n)>
#c10 = affine_map<(m, k, n) -> (m, n)>
func.func @matmul_fp8(%x: memref<128x64xi8>, %w: memref<64x64xi8>, %y: memref<128x64xf32>) {
  linalg.generic {indexing_maps = [#a10, #b10, #c10], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<128x64xi8>, memref<64x64xi8>) outs(%y : memref<128x64xf32>) {
  ^bb0(%i: i8, %j: i8, %o: f32):
    %i8 = arith.bitcast %i : i8 to f8E4M3FN
    %ei = arith.extf %i8 : f8E4M3FN to f32
    %j8 = arith.bitcast %j : i8 to f8E4M3FN
    %ej = arith.extf %j8 : f8E4M3FN to f32
    %p = arith.mulf %ei, %ej : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}
