// RUN: kiln-opt %s -split-input-file -kiln-cpu-prefetch-panels | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-prefetch-panels=unroll=1 | FileCheck %s --check-prefix=ONE

// The loops of a packed 3x3 convolution's GEMM at 49 rows (512 -> 512
// channels, K = 4608) as kiln-cpu-tile-and-vectorize writes them, after
// bufferization: a forall over the 16 panels [1, 4608, 32] (576 KiB each),
// 6 row tiles of 8 rows, a k loop of 4608 steps. Row tiles 1-5 prefetch
// the next panel: 9216 lines over 5 x 4608 steps, 26215 / 65536 of a line
// per step, from the block's offset + 147456 elements, clamped to the
// global's last element; row tile 0 its own block's start. The k loop is
// unrolled by 4 (its four contractions in one step) and each unrolled step
// issues the two prefetches that cover its four steps' 1.6 lines, at the
// line of its first step and the one after. The peeled last row (a k loop
// not in a row loop) none, and stays one step at a time.

// CHECK-LABEL: func.func @packed_panels
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[K:.+]] = arith.constant 4608 : index
// CHECK-DAG:     %[[RATE:.+]] = arith.constant 26215 : index
// CHECK-DAG:     %[[REGION:.+]] = arith.constant 147456 : index
// CHECK-DAG:     %[[LAST:.+]] = arith.constant 2359295 : index
// CHECK:         scf.forall
// CHECK:           %[[BLOCK:.+]] = memref.subview %{{.+}}[%{{.+}}, 0, 0] [1, 4608, 32] [1, 1, 1]
// CHECK:           %[[BASE:.+]], %[[OFF:.+]], %{{.+}}:3, %{{.+}}:3 = memref.extract_strided_metadata %[[BLOCK]]
// CHECK:           %[[FLAT:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [2359296], strides: [1]
// CHECK:           scf.for %[[ROW:.+]] = %{{.+}} to %c48 step %c8
// CHECK:             %[[T:.+]] = arith.divui
// CHECK:             %[[FIRST:.+]] = arith.cmpi eq, %[[T]]
// CHECK:             %[[TM1:.+]] = arith.subi %[[T]], %[[C1]]
// CHECK:             %[[START:.+]] = arith.muli %[[TM1]], %[[K]]
// CHECK:             %[[NEXT:.+]] = arith.addi %[[OFF]], %[[REGION]]
// CHECK:             %[[STEP:.+]] = arith.constant 4 : index
// CHECK:             scf.for %[[KI:.+]] = %{{.+}} to %c4608{{.*}} step %[[STEP]]
// CHECK:               %[[G:.+]] = arith.divui %{{.+}}, %[[STEP]]
// CHECK:               %[[I:.+]] = arith.muli %[[G]], %[[C4]]
// CHECK:               %[[S:.+]] = arith.addi %[[START]], %[[I]]
// CHECK:               %[[SR:.+]] = arith.muli %[[S]], %[[RATE]]
// CHECK:               %[[J:.+]] = arith.shrui %[[SR]], %[[C16]]
// CHECK:               %[[AT0:.+]] = arith.addi %[[NEXT]]
// CHECK:               %[[AT1:.+]] = arith.minui %[[AT0]], %[[LAST]]
// CHECK:               %[[AT:.+]] = arith.select %[[FIRST]], %[[OFF]], %[[AT1]]
// CHECK:               memref.prefetch %[[FLAT]][%[[AT]]], read, locality<2>, data
// CHECK:               %[[J1:.+]] = arith.addi %[[J]]
// CHECK:               memref.prefetch %[[FLAT]]
// CHECK-NOT:           memref.prefetch
// CHECK-COUNT-4:       vector.contract
// CHECK-NOT:           vector.contract
// CHECK:               scf.yield
// CHECK:           scf.for %{{.+}} = %{{.+}} to %c4608{{.*}} step %c1
// CHECK-NOT:         memref.prefetch
// CHECK:             vector.contract
// CHECK-NOT:         vector.contract
// CHECK:             scf.yield
// With unroll=1 a prefetch in every step, the k loop not unrolled.
// ONE-LABEL: func.func @packed_panels
// ONE:         scf.for %{{.+}} = %{{.+}} to %c4608{{.*}} step %c1
// ONE:           memref.prefetch
// ONE-NOT:       memref.prefetch
// ONE:           vector.contract
// ONE-NOT:       vector.contract
// ONE:           scf.yield
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>
#map4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
memref.global "private" constant @w : memref<2359296xf32> = dense<1.0> {alignment = 64 : i64}
func.func @packed_panels(%x: memref<1x49x4608xf32>, %y: memref<1x49x16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c48 = arith.constant 48 : index
  %c4608 = arith.constant 4608 : index
  %pad = ub.poison : f32
  %zero8 = arith.constant dense<0.0> : vector<1x8x1x32xf32>
  %zero1 = arith.constant dense<0.0> : vector<1x1x1x32xf32>
  %g = memref.get_global @w : memref<2359296xf32>
  %w = memref.expand_shape %g [[0, 1, 2]] output_shape [16, 4608, 32] : memref<2359296xf32> into memref<16x4608x32xf32>
  scf.forall (%n) in (16) {
    %panel = memref.subview %w[%n, 0, 0] [1, 4608, 32] [1, 1, 1] : memref<16x4608x32xf32> to memref<1x4608x32xf32, strided<[147456, 32, 1], offset: ?>>
    %out = memref.subview %y[0, 0, %n, 0] [1, 49, 1, 32] [1, 1, 1, 1] : memref<1x49x16x32xf32> to memref<1x49x1x32xf32, strided<[25088, 512, 32, 1], offset: ?>>
    scf.for %m = %c0 to %c48 step %c8 {
      %tile = memref.subview %out[0, %m, 0, 0] [1, 8, 1, 32] [1, 1, 1, 1] : memref<1x49x1x32xf32, strided<[25088, 512, 32, 1], offset: ?>> to memref<1x8x1x32xf32, strided<[25088, 512, 32, 1], offset: ?>>
      %acc = scf.for %k = %c0 to %c4608 step %c1 iter_args(%a = %zero8) -> (vector<1x8x1x32xf32>) {
        %b = memref.subview %panel[0, %k, 0] [1, 1, 32] [1, 1, 1] : memref<1x4608x32xf32, strided<[147456, 32, 1], offset: ?>> to memref<1x1x32xf32, strided<[147456, 32, 1], offset: ?>>
        %xa = memref.subview %x[0, %m, %k] [1, 8, 1] [1, 1, 1] : memref<1x49x4608xf32> to memref<1x8x1xf32, strided<[225792, 4608, 1], offset: ?>>
        %va = vector.transfer_read %xa[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<1x8x1xf32, strided<[225792, 4608, 1], offset: ?>>, vector<1x8x1xf32>
        %vb = vector.transfer_read %b[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<1x1x32xf32, strided<[147456, 32, 1], offset: ?>>, vector<1x1x32xf32>
        %r = vector.contract {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"], kind = #vector.kind<add>} %va, %vb, %a : vector<1x8x1xf32>, vector<1x1x32xf32> into vector<1x8x1x32xf32>
        scf.yield %r : vector<1x8x1x32xf32>
      }
      vector.transfer_write %acc, %tile[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x8x1x32xf32>, memref<1x8x1x32xf32, strided<[25088, 512, 32, 1], offset: ?>>
    }
    %last = memref.subview %out[0, 48, 0, 0] [1, 1, 1, 32] [1, 1, 1, 1] : memref<1x49x1x32xf32, strided<[25088, 512, 32, 1], offset: ?>> to memref<1x1x1x32xf32, strided<[25088, 512, 32, 1], offset: ?>>
    %acc1 = scf.for %k = %c0 to %c4608 step %c1 iter_args(%a = %zero1) -> (vector<1x1x1x32xf32>) {
      %b = memref.subview %panel[0, %k, 0] [1, 1, 32] [1, 1, 1] : memref<1x4608x32xf32, strided<[147456, 32, 1], offset: ?>> to memref<1x1x32xf32, strided<[147456, 32, 1], offset: ?>>
      %xa = memref.subview %x[0, 48, %k] [1, 1, 1] [1, 1, 1] : memref<1x49x4608xf32> to memref<1x1x1xf32, strided<[225792, 4608, 1], offset: ?>>
      %va = vector.transfer_read %xa[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<1x1x1xf32, strided<[225792, 4608, 1], offset: ?>>, vector<1x1x1xf32>
      %vb = vector.transfer_read %b[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<1x1x32xf32, strided<[147456, 32, 1], offset: ?>>, vector<1x1x32xf32>
      %r = vector.contract {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"], kind = #vector.kind<add>} %va, %vb, %a : vector<1x1x1xf32>, vector<1x1x32xf32> into vector<1x1x1x32xf32>
      scf.yield %r : vector<1x1x1x32xf32>
    }
    vector.transfer_write %acc1, %last[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x1x1x32xf32>, memref<1x1x1x32xf32, strided<[25088, 512, 32, 1], offset: ?>>
  }
  return
}

// -----

// Two row tiles of a [1, 64, 256] panel block (64 KiB): the region's 1024
// lines over the 64 steps of one tile, four prefetches a step (the cap),
// sixteen in each step of the k loop unrolled by 4.

// CHECK-LABEL: func.func @few_steps
// CHECK:         %[[STEP:.+]] = arith.constant 4 : index
// CHECK:         scf.for %{{.+}} = %{{.+}} to %c64{{.*}} step %[[STEP]]
// CHECK-COUNT-16:  memref.prefetch
// CHECK-NOT:       memref.prefetch
// CHECK:           vector.contract
#map2 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3, d4)>
#map4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
memref.global "private" constant @w : memref<65536xf32> = dense<1.0> {alignment = 64 : i64}
func.func @few_steps(%x: memref<1x16x64xf32>, %y: memref<1x16x4x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = ub.poison : f32
  %zero8 = arith.constant dense<0.0> : vector<1x8x1x256xf32>
  %g = memref.get_global @w : memref<65536xf32>
  %w = memref.expand_shape %g [[0, 1, 2]] output_shape [4, 64, 256] : memref<65536xf32> into memref<4x64x256xf32>
  scf.forall (%n) in (4) {
    %panel = memref.subview %w[%n, 0, 0] [1, 64, 256] [1, 1, 1] : memref<4x64x256xf32> to memref<1x64x256xf32, strided<[16384, 256, 1], offset: ?>>
    %out = memref.subview %y[0, 0, %n, 0] [1, 16, 1, 256] [1, 1, 1, 1] : memref<1x16x4x256xf32> to memref<1x16x1x256xf32, strided<[16384, 1024, 256, 1], offset: ?>>
    scf.for %m = %c0 to %c16 step %c8 {
      %tile = memref.subview %out[0, %m, 0, 0] [1, 8, 1, 256] [1, 1, 1, 1] : memref<1x16x1x256xf32, strided<[16384, 1024, 256, 1], offset: ?>> to memref<1x8x1x256xf32, strided<[16384, 1024, 256, 1], offset: ?>>
      %acc = scf.for %k = %c0 to %c64 step %c1 iter_args(%a = %zero8) -> (vector<1x8x1x256xf32>) {
        %b = memref.subview %panel[0, %k, 0] [1, 1, 256] [1, 1, 1] : memref<1x64x256xf32, strided<[16384, 256, 1], offset: ?>> to memref<1x1x256xf32, strided<[16384, 256, 1], offset: ?>>
        %xa = memref.subview %x[0, %m, %k] [1, 8, 1] [1, 1, 1] : memref<1x16x64xf32> to memref<1x8x1xf32, strided<[1024, 64, 1], offset: ?>>
        %va = vector.transfer_read %xa[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<1x8x1xf32, strided<[1024, 64, 1], offset: ?>>, vector<1x8x1xf32>
        %vb = vector.transfer_read %b[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<1x1x256xf32, strided<[16384, 256, 1], offset: ?>>, vector<1x1x256xf32>
        %r = vector.contract {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"], kind = #vector.kind<add>} %va, %vb, %a : vector<1x8x1xf32>, vector<1x1x256xf32> into vector<1x8x1x256xf32>
        scf.yield %r : vector<1x8x1x256xf32>
      }
      vector.transfer_write %acc, %tile[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x8x1x256xf32>, memref<1x8x1x256xf32, strided<[16384, 1024, 256, 1], offset: ?>>
    }
  }
  return
}

// -----

// Negatives: a weight that is an argument, not a constant global; a block
// that is not contiguous (32 columns of a [4608, 512] weight read in
// place); a block under min-bytes (a [1, 64, 32] panel, 8 KiB); one row
// tile (8 rows).

// CHECK-LABEL: func.func @negatives
// CHECK-NOT:     memref.prefetch
// CHECK:         return
#map2 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d1)>
memref.global "private" constant @w2 : memref<2359296xf32> = dense<1.0> {alignment = 64 : i64}
memref.global "private" constant @small : memref<32768xf32> = dense<1.0> {alignment = 64 : i64}
func.func @negatives(%x: memref<48x4608xf32>, %warg: memref<4608x512xf32>, %y: memref<48x512xf32>, %xs: memref<48x64xf32>, %x8: memref<8x4608xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %c4608 = arith.constant 4608 : index
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<8x32xf32>
  %g = memref.get_global @w2 : memref<2359296xf32>
  %wc = memref.expand_shape %g [[0, 1]] output_shape [4608, 512] : memref<2359296xf32> into memref<4608x512xf32>
  %gs = memref.get_global @small : memref<32768xf32>
  %ws = memref.expand_shape %gs [[0, 1, 2]] output_shape [16, 64, 32] : memref<32768xf32> into memref<16x64x32xf32>
  %gp = memref.expand_shape %g [[0, 1, 2]] output_shape [16, 4608, 32] : memref<2359296xf32> into memref<16x4608x32xf32>
  // An argument's block.
  scf.forall (%n) in (16) {
    %n32 = arith.muli %n, %c8 : index
    %panel = memref.subview %warg[0, %n32] [4608, 32] [1, 1] : memref<4608x512xf32> to memref<4608x32xf32, strided<[512, 1], offset: ?>>
    scf.for %m = %c0 to %c48 step %c8 {
      %acc = scf.for %k = %c0 to %c4608 step %c1 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %vb = vector.transfer_read %panel[%k, %c0], %pad {in_bounds = [true, true]} : memref<4608x32xf32, strided<[512, 1], offset: ?>>, vector<1x32xf32>
        %va = vector.transfer_read %x[%m, %k], %pad {in_bounds = [true, true]} : memref<48x4608xf32>, vector<8x1xf32>
        %r = vector.contract {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %a : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
        scf.yield %r : vector<8x32xf32>
      }
      vector.transfer_write %acc, %y[%m, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<48x512xf32>
    }
  }
  // A constant's block that is not contiguous.
  scf.forall (%n) in (16) {
    %n32 = arith.muli %n, %c8 : index
    %panel = memref.subview %wc[0, %n32] [4608, 32] [1, 1] : memref<4608x512xf32> to memref<4608x32xf32, strided<[512, 1], offset: ?>>
    scf.for %m = %c0 to %c48 step %c8 {
      %acc = scf.for %k = %c0 to %c4608 step %c1 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %vb = vector.transfer_read %panel[%k, %c0], %pad {in_bounds = [true, true]} : memref<4608x32xf32, strided<[512, 1], offset: ?>>, vector<1x32xf32>
        %va = vector.transfer_read %x[%m, %k], %pad {in_bounds = [true, true]} : memref<48x4608xf32>, vector<8x1xf32>
        %r = vector.contract {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %a : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
        scf.yield %r : vector<8x32xf32>
      }
      vector.transfer_write %acc, %y[%m, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<48x512xf32>
    }
  }
  // A block under min-bytes.
  scf.forall (%n) in (16) {
    %panel = memref.subview %ws[%n, 0, 0] [1, 64, 32] [1, 1, 1] : memref<16x64x32xf32> to memref<1x64x32xf32, strided<[2048, 32, 1], offset: ?>>
    scf.for %m = %c0 to %c48 step %c8 {
      %acc = scf.for %k = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %vb = vector.transfer_read %panel[%c0, %k, %c0], %pad {in_bounds = [true, true]} : memref<1x64x32xf32, strided<[2048, 32, 1], offset: ?>>, vector<1x32xf32>
        %va = vector.transfer_read %xs[%m, %k], %pad {in_bounds = [true, true]} : memref<48x64xf32>, vector<8x1xf32>
        %r = vector.contract {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %a : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
        scf.yield %r : vector<8x32xf32>
      }
      vector.transfer_write %acc, %y[%m, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<48x512xf32>
    }
  }
  // One row tile.
  scf.forall (%n) in (16) {
    %panel = memref.subview %gp[%n, 0, 0] [1, 4608, 32] [1, 1, 1] : memref<16x4608x32xf32> to memref<1x4608x32xf32, strided<[147456, 32, 1], offset: ?>>
    scf.for %m = %c0 to %c8 step %c8 {
      %acc = scf.for %k = %c0 to %c4608 step %c1 iter_args(%a = %zero) -> (vector<8x32xf32>) {
        %vb = vector.transfer_read %panel[%c0, %k, %c0], %pad {in_bounds = [true, true]} : memref<1x4608x32xf32, strided<[147456, 32, 1], offset: ?>>, vector<1x32xf32>
        %va = vector.transfer_read %x8[%m, %k], %pad {in_bounds = [true, true]} : memref<8x4608xf32>, vector<8x1xf32>
        %r = vector.contract {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %va, %vb, %a : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
        scf.yield %r : vector<8x32xf32>
      }
      vector.transfer_write %acc, %y[%m, %c0] {in_bounds = [true, true]} : vector<8x32xf32>, memref<48x512xf32>
    }
  }
  return
}
