// RUN: kiln-opt %s -split-input-file -kiln-profile-regions | FileCheck %s

// kiln-profile-regions records, per region, the arithmetic the compiler
// counts (`kiln.profile_flops`) and the least bytes the region moves
// (`kiln.profile_bytes`: each buffer from outside it once), for the
// profiler's roofline.
//
// Elementwise generic over 8x16: two ops per element (256); it reads %a
// twice and %b once, and writes %out: 3 buffers of 512 bytes (%a once).
// The matmul: 2 x 4 x 8 x 16 = 1024 FLOPs; (32 + 128 + 64) x 4 bytes. The
// fill: no arithmetic, 256 bytes. The copy: 512 + 512 bytes.

// CHECK: module attributes {
// CHECK-SAME: kiln.profile_bytes = array<i64: 1536, 896, 256, 1024>
// CHECK-SAME: kiln.profile_flops = array<i64: 256, 1024, 0, 0>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: memref<8x16xf32>, %b: memref<8x16xf32>,
                %out: memref<8x16xf32>, %lhs: memref<4x8xf32>,
                %rhs: memref<8x16xf32>, %acc: memref<4x16xf32>,
                %copy: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %a, %b : memref<8x16xf32>, memref<8x16xf32>, memref<8x16xf32>)
      outs(%out : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %z : f32
    linalg.yield %s : f32
  }
  linalg.matmul ins(%lhs, %rhs : memref<4x8xf32>, memref<8x16xf32>)
                outs(%acc : memref<4x16xf32>)
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%acc : memref<4x16xf32>)
  memref.copy %out, %copy : memref<8x16xf32> to memref<8x16xf32>
  return
}

// -----

// Tiled code as kiln-cpu-tile-and-vectorize leaves it: a forall of 2 over
// a loop of 4 steps of a 6x16x1 vector.contract (2 x 96 FLOPs each) is
// 1536 FLOPs. Index arithmetic, transfers and views count nothing. The
// weights come from a global read inside the region (6 x 4 x 16 f32); the
// output is 12 x 16 f32.

// CHECK: module attributes {
// CHECK-SAME: kiln.profile_bytes = array<i64: 2304>
// CHECK-SAME: kiln.profile_flops = array<i64: 1536>
memref.global "private" constant @w : memref<6x4x16xf32> = dense<1.0>
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#res = affine_map<(m, n, k) -> (m, n)>
func.func @main(%out: memref<12x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %f0 = arith.constant 0.0 : f32
  scf.forall (%i) in (2) {
    %w = memref.get_global @w : memref<6x4x16xf32>
    %row = arith.muli %i, %c6 : index
    %acc0 = vector.transfer_read %out[%row, %c0], %f0
        : memref<12x16xf32>, vector<6x16xf32>
    %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%r = %acc0)
        -> (vector<6x16xf32>) {
      %l = vector.transfer_read %w[%c0, %k, %c0], %f0
          : memref<6x4x16xf32>, vector<6x1xf32>
      %rr = vector.transfer_read %w[%c0, %k, %c0], %f0
          : memref<6x4x16xf32>, vector<1x16xf32>
      %c = vector.contract {indexing_maps = [#lhs, #rhs, #res],
                            iterator_types = ["parallel", "parallel",
                                              "reduction"],
                            kind = #vector.kind<add>}
          %l, %rr, %r : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
      scf.yield %c : vector<6x16xf32>
    }
    vector.transfer_write %acc, %out[%row, %c0]
        : vector<6x16xf32>, memref<12x16xf32>
  }
  return
}

// -----

// Counted: a fused multiply-add (2 per element, on vector<8xf32>: 16), the
// dearest case of an scf.index_switch (2 of 1 and 2), the dearer branch of
// an scf.if (3 of 1 and 3), comparisons and selects of data
// (10 x (1 + 3) = 40). Free: casts, constants, index arithmetic and
// comparisons, and the bounds checks of a padded read (the conjunction of
// index comparisons and the select on it). An f16 buffer is 2 bytes per element and an i1 buffer 1 byte.

// CHECK: module attributes {
// CHECK-SAME: kiln.profile_bytes = array<i64: 24, 40>
// CHECK-SAME: kiln.profile_flops = array<i64: 18, 40>
func.func @main(%h: memref<8xf16>, %mask: memref<8xi1>, %f: memref<8xf32>,
                %v: vector<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c0 to %c1 step %c1 {
    %r = math.fma %v, %v, %v : vector<8xf32>
    %x0 = vector.extract %v[0] : f32 from vector<8xf32>
    %sw = scf.index_switch %i -> f32
    case 0 {
      %a = arith.addf %x0, %x0 : f32
      scf.yield %a : f32
    }
    default {
      %a = arith.addf %x0, %x0 : f32
      %b = arith.mulf %a, %a : f32
      scf.yield %b : f32
    }
    %e = arith.truncf %r : vector<8xf32> to vector<8xf16>
    vector.transfer_write %e, %h[%c0] : vector<8xf16>, memref<8xf16>
    %z = arith.constant dense<false> : vector<8xi1>
    vector.transfer_write %z, %mask[%c0] : vector<8xi1>, memref<8xi1>
  }
  scf.for %i = %c0 to %c10 step %c1 {
    %j = arith.remui %i, %c8 : index
    %inside = arith.cmpi ult, %j, %c8 : index
    %above = arith.cmpi uge, %j, %c1 : index
    %both = arith.andi %inside, %above : i1
    %x0 = memref.load %f[%j] : memref<8xf32>
    %x = arith.select %both, %x0, %x0 : f32
    %p = arith.cmpf olt, %x, %x : f32
    %s = scf.if %p -> (f32) {
      %n = arith.negf %x : f32
      scf.yield %n : f32
    } else {
      %a = arith.addf %x, %x : f32
      %b = arith.mulf %a, %x : f32
      %y = arith.select %p, %a, %b : f32
      scf.yield %y : f32
    }
    memref.store %s, %f[%j] : memref<8xf32>
    %l = memref.load %mask[%j] : memref<8xi1>
    %ext = arith.extui %l : i1 to i32
  }
  return
}

// -----

// Not known statically: a loop whose bound is a value, a loop of a kind the
// count does not know (-1). A region that computes nothing is known to be
// free whatever its trip count; a buffer of dynamic shape has no static
// size (-1 bytes). A global read twice is counted once.

// CHECK: module attributes {
// CHECK-SAME: kiln.profile_bytes = array<i64: 32, -1, 32>
// CHECK-SAME: kiln.profile_flops = array<i64: -1, 0, -1>
memref.global "private" constant @g : memref<8xf32> = dense<1.0>
func.func @main(%f: memref<8xf32>, %n: index, %d: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %f[%c0] : memref<8xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %f[%c0] : memref<8xf32>
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<?xf32>)
  affine.for %i = 0 to 8 {
    %g1 = memref.get_global @g : memref<8xf32>
    %g2 = memref.get_global @g : memref<8xf32>
    %x = memref.load %g1[%i] : memref<8xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %g2[%i] : memref<8xf32>
  }
  return
}
