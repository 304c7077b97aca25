// RUN: kiln-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(kiln-gpu-contractions))' | FileCheck %s

// A split product of kiln-gpu-split-k (K 1024 in 2 splits: the partials
// [2, 64, 64], the split dim d3 a batch dim of the tile) and the sum of
// its partials with a bias and a Relu, in a module with the split
// counters: one kernel. Each block stores its partial tile; then a fence,
// a barrier, and thread 0 counts the block done on its tile's counter
// (atomic add), keeps the verdict (the count before it was 1: the last of
// 2) in shared memory, and sets the counter back to 0 when it was the last.
// The last block fences again and, for each of its elements, loads both
// partials and runs the sum's body into the sum's output. The sum's
// generic goes.

// CHECK-LABEL: func.func @split_sum
// CHECK-DAG:     %[[COUNTERS:.*]] = memref.get_global @kiln_split_k_counters : memref<16xi32>
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:           memref.store %{{.*}}, %[[PART:.*]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x64x64xf32>
// CHECK:           nvvm.memory.barrier <gpu>
// CHECK-NEXT:      gpu.barrier
// CHECK:           scf.if
// CHECK:             %[[DONE:.*]] = memref.atomic_rmw addi %{{.*}}, %[[COUNTERS]][%{{.*}}] : (i32, memref<16xi32>) -> i32
// CHECK:             %[[LAST:.*]] = arith.cmpi eq, %[[DONE]], %c1_i32{{.*}} : i32
// CHECK:             memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<16x65xf32, #gpu.address_space<workgroup>>
// CHECK:             scf.if %[[LAST]] {
// CHECK:               memref.store %c0_i32{{.*}}, %[[COUNTERS]][%{{.*}}] : memref<16xi32>
// CHECK:           gpu.barrier
// CHECK:           %[[FLAG:.*]] = memref.load %{{.*}} : memref<16x65xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[SUMS:.*]] = arith.cmpf une, %[[FLAG]]
// CHECK:           scf.if %[[SUMS]] {
// CHECK-NEXT:        nvvm.memory.barrier <gpu>
// The partials are read coalesced: thread t takes column t mod 64 of rows
// t / 64, t / 64 + 2, ...
// CHECK-NEXT:        %[[ROW:.*]] = arith.divui %[[TID:.*]], %c64 : index
// CHECK-NEXT:        %[[COL:.*]] = arith.remui %[[TID]], %c64 : index
// CHECK-NEXT:        %[[R0:.*]] = arith.addi %{{.*}}, %[[ROW]] : index
// CHECK:             %[[C0:.*]] = arith.addi %{{.*}}, %[[COL]] : index
// CHECK:             %[[S0:.*]] = arith.constant 0 : index
// CHECK-NEXT:        memref.load %[[PART]][%[[S0]], %[[R0]], %[[C0]]] : memref<2x64x64xf32>
// CHECK-NEXT:        %[[S1:.*]] = arith.constant 1 : index
// CHECK-NEXT:        memref.load %[[PART]][%[[S1]], %[[R0]], %[[C0]]] : memref<2x64x64xf32>
// CHECK:             arith.addf
// CHECK:             arith.addf
// CHECK:             arith.maximumf
// CHECK:             memref.store %{{.*}}, %arg3[%{{.*}}, %{{.*}}] : memref<64x64xf32>
// CHECK:           gpu.terminator
// CHECK-NOT:     linalg.generic
// CHECK:         return
#a = affine_map<(m, n, k, s) -> (m, s, k)>
#b = affine_map<(m, n, k, s) -> (s, k, n)>
#p = affine_map<(m, n, k, s) -> (s, m, n)>
#p0 = affine_map<(m, n) -> (0, m, n)>
#p1 = affine_map<(m, n) -> (1, m, n)>
#bias = affine_map<(m, n) -> (n)>
#id = affine_map<(m, n) -> (m, n)>
module {
  memref.global "private" @kiln_split_k_counters : memref<16xi32> = dense<0>
  func.func @split_sum(%x: memref<64x2x512xf32>, %w: memref<2x512x64xf32>, %bias: memref<64xf32>,
                       %y: memref<64x64xf32>, %arena: memref<32768xi8>) {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %part = memref.view %arena[%c0][] : memref<32768xi8> to memref<2x64x64xf32>
    linalg.fill ins(%zero : f32) outs(%part : memref<2x64x64xf32>)
    linalg.generic {indexing_maps = [#a, #b, #p], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%x, %w : memref<64x2x512xf32>, memref<2x512x64xf32>) outs(%part : memref<2x64x64xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %m = arith.mulf %i, %j : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#p0, #p1, #bias, #id], iterator_types = ["parallel", "parallel"]}
        ins(%part, %part, %bias : memref<2x64x64xf32>, memref<2x64x64xf32>, memref<64xf32>) outs(%y : memref<64x64xf32>) {
    ^bb0(%p0: f32, %p1: f32, %b: f32, %o: f32):
      %s0 = arith.addf %b, %p0 : f32
      %s1 = arith.addf %s0, %p1 : f32
      %r = arith.maximumf %s1, %zero : f32
      linalg.yield %r : f32
    }
    return
  }
}

// -----

// Without the module's counters, the sum stays a generic of its own (a
// kernel of kiln-gpu-form-kernels).

// CHECK-LABEL: func.func @no_counters
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         gpu.launch
// CHECK:         gpu.terminator
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x64x64xf32>, memref<2x64x64xf32>, memref<64xf32>)
#a = affine_map<(m, n, k, s) -> (m, s, k)>
#b = affine_map<(m, n, k, s) -> (s, k, n)>
#p = affine_map<(m, n, k, s) -> (s, m, n)>
#p0 = affine_map<(m, n) -> (0, m, n)>
#p1 = affine_map<(m, n) -> (1, m, n)>
#bias = affine_map<(m, n) -> (n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @no_counters(%x: memref<64x2x512xf32>, %w: memref<2x512x64xf32>, %bias: memref<64xf32>,
                       %y: memref<64x64xf32>, %arena: memref<32768xi8>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %part = memref.view %arena[%c0][] : memref<32768xi8> to memref<2x64x64xf32>
  linalg.fill ins(%zero : f32) outs(%part : memref<2x64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #p], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<64x2x512xf32>, memref<2x512x64xf32>) outs(%part : memref<2x64x64xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#p0, #p1, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%part, %part, %bias : memref<2x64x64xf32>, memref<2x64x64xf32>, memref<64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%p0: f32, %p1: f32, %b: f32, %o: f32):
    %s0 = arith.addf %b, %p0 : f32
    %s1 = arith.addf %s0, %p1 : f32
    linalg.yield %s1 : f32
  }
  return
}

// -----

// Not the last block's: the sum's output shares bytes with the product's
// input (another block may still read them); a sum that reads one split
// twice and the other not at all; too few counters (the two 64x64
// tiles of a split 64x128 output need 2, the module has 1).

// CHECK-LABEL: func.func @overlaps_input
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         gpu.terminator
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @split_read_twice
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         gpu.terminator
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @too_few_counters
// CHECK-NOT:     memref.atomic_rmw
// CHECK:         gpu.terminator
// CHECK:         linalg.generic
#a = affine_map<(m, n, k, s) -> (m, s, k)>
#b = affine_map<(m, n, k, s) -> (s, k, n)>
#p = affine_map<(m, n, k, s) -> (s, m, n)>
#p0 = affine_map<(m, n) -> (0, m, n)>
#p1 = affine_map<(m, n) -> (1, m, n)>
#id = affine_map<(m, n) -> (m, n)>
module {
  memref.global "private" @kiln_split_k_counters : memref<1xi32> = dense<0>
  func.func @overlaps_input(%w: memref<2x512x64xf32>, %arena: memref<311296xi8>) {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c32768 = arith.constant 32768 : index
    %part = memref.view %arena[%c0][] : memref<311296xi8> to memref<2x64x64xf32>
    %x = memref.view %arena[%c32768][] : memref<311296xi8> to memref<64x2x512xf32>
    %y = memref.view %arena[%c32768][] : memref<311296xi8> to memref<64x64xf32>
    linalg.fill ins(%zero : f32) outs(%part : memref<2x64x64xf32>)
    linalg.generic {indexing_maps = [#a, #b, #p], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%x, %w : memref<64x2x512xf32>, memref<2x512x64xf32>) outs(%part : memref<2x64x64xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %m = arith.mulf %i, %j : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#p0, #p1, #id], iterator_types = ["parallel", "parallel"]}
        ins(%part, %part : memref<2x64x64xf32>, memref<2x64x64xf32>) outs(%y : memref<64x64xf32>) {
    ^bb0(%p0: f32, %p1: f32, %o: f32):
      %s1 = arith.addf %p0, %p1 : f32
      linalg.yield %s1 : f32
    }
    return
  }
  func.func @split_read_twice(%x: memref<64x2x512xf32>, %w: memref<2x512x64xf32>,
                              %y: memref<64x64xf32>, %arena: memref<32768xi8>) {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %part = memref.view %arena[%c0][] : memref<32768xi8> to memref<2x64x64xf32>
    linalg.fill ins(%zero : f32) outs(%part : memref<2x64x64xf32>)
    linalg.generic {indexing_maps = [#a, #b, #p], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%x, %w : memref<64x2x512xf32>, memref<2x512x64xf32>) outs(%part : memref<2x64x64xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %m = arith.mulf %i, %j : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#p0, #p0, #id], iterator_types = ["parallel", "parallel"]}
        ins(%part, %part : memref<2x64x64xf32>, memref<2x64x64xf32>) outs(%y : memref<64x64xf32>) {
    ^bb0(%p0: f32, %p1: f32, %o: f32):
      %s1 = arith.addf %p0, %p1 : f32
      linalg.yield %s1 : f32
    }
    return
  }
  func.func @too_few_counters(%x: memref<64x2x512xf32>, %w: memref<2x512x128xf32>,
                              %y: memref<64x128xf32>, %arena: memref<65536xi8>) {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %part = memref.view %arena[%c0][] : memref<65536xi8> to memref<2x64x128xf32>
    linalg.fill ins(%zero : f32) outs(%part : memref<2x64x128xf32>)
    linalg.generic {indexing_maps = [#a, #b, #p], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%x, %w : memref<64x2x512xf32>, memref<2x512x128xf32>) outs(%part : memref<2x64x128xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %m = arith.mulf %i, %j : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#p0, #p1, #id], iterator_types = ["parallel", "parallel"]}
        ins(%part, %part : memref<2x64x128xf32>, memref<2x64x128xf32>) outs(%y : memref<64x128xf32>) {
    ^bb0(%p0: f32, %p1: f32, %o: f32):
      %s1 = arith.addf %p0, %p1 : f32
      linalg.yield %s1 : f32
    }
    return
  }
}
