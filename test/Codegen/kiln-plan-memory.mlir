// RUN: kiln-opt %s -split-input-file -kiln-plan-memory | FileCheck %s

// Three 1 KiB buffers in a chain: %a dies when %c is born, so %c reuses
// %a's bytes; %b overlaps both. The arena (2 KiB) becomes the last argument
// of @main and equals the lower bound; without planning it would be 3 KiB.

// CHECK-LABEL: module attributes {kiln.memory_plan = {arena_bytes = 2048 : i64, buffers = 3 : i64, lower_bound_bytes = 2048 : i64, unplanned_bytes = 3072 : i64}}
// CHECK:       func.func @main(%[[IN:.+]]: memref<256xf32>, %[[OUT:.+]]: memref<256xf32>, %[[ARENA:.+]]: memref<2048xi8>)
// CHECK:         %[[OA:.+]] = arith.constant 0 : index
// CHECK:         memref.view %[[ARENA]][%[[OA]]][] : memref<2048xi8> to memref<256xf32>
// CHECK:         %[[OB:.+]] = arith.constant 1024 : index
// CHECK:         memref.view %[[ARENA]][%[[OB]]][] : memref<2048xi8> to memref<256xf32>
// CHECK:         %[[OC:.+]] = arith.constant 0 : index
// CHECK:         memref.view %[[ARENA]][%[[OC]]][] : memref<2048xi8> to memref<256xf32>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.dealloc
func.func @main(%in: memref<256xf32>, %out: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  linalg.copy ins(%in : memref<256xf32>) outs(%a : memref<256xf32>)
  %b = memref.alloc() : memref<256xf32>
  linalg.copy ins(%a : memref<256xf32>) outs(%b : memref<256xf32>)
  %c = memref.alloc() : memref<256xf32>
  linalg.copy ins(%b : memref<256xf32>) outs(%c : memref<256xf32>)
  linalg.copy ins(%c : memref<256xf32>) outs(%out : memref<256xf32>)
  memref.dealloc %a : memref<256xf32>
  return
}

// -----

// A buffer used through a view stays live until the view's last use: %a is
// read (through its reshape) after %b is written, so they cannot share.

// CHECK-LABEL: module attributes {kiln.memory_plan = {arena_bytes = 128 : i64, buffers = 2 : i64, lower_bound_bytes = 128 : i64, unplanned_bytes = 128 : i64}}
// CHECK:         memref.view %{{.+}}[%{{.+}}][] : memref<128xi8> to memref<4x4xf32>
// CHECK:         memref.view %{{.+}}[%{{.+}}][] : memref<128xi8> to memref<16xf32>
func.func @main(%in: memref<16xf32>, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<4x4xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  linalg.copy ins(%in : memref<16xf32>) outs(%flat : memref<16xf32>)
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%in : memref<16xf32>) outs(%b : memref<16xf32>)
  linalg.add ins(%flat, %b : memref<16xf32>, memref<16xf32>) outs(%out : memref<16xf32>)
  return
}

// -----

// A returned buffer escapes and keeps its own allocation; with nothing to
// plan, @main takes no arena.

// CHECK-LABEL: module attributes {kiln.memory_plan = {arena_bytes = 0 : i64, buffers = 0 : i64, lower_bound_bytes = 0 : i64, unplanned_bytes = 0 : i64}}
// CHECK:         func.func @main(%{{.+}}: memref<8xf32>) -> memref<8xf32>
// CHECK:         memref.alloc() : memref<8xf32>
func.func @main(%in: memref<8xf32>) -> memref<8xf32> {
  %a = memref.alloc() : memref<8xf32>
  linalg.copy ins(%in : memref<8xf32>) outs(%a : memref<8xf32>)
  return %a : memref<8xf32>
}

// -----

// An image loop's buffers: %t and %u, allocated in the body of a
// sequential scf.for (%u in a nested one), move before the loop and are
// planned, one buffer for every iteration; %p, allocated per thread in an
// scf.forall, and %a and %y, which a loop carries to its next iteration,
// stay where they are.

// CHECK-LABEL: module attributes {kiln.memory_plan = {arena_bytes = 128 : i64, buffers = 2 : i64
// CHECK:       func.func @main(
// CHECK:         memref.view %{{.+}}[%{{.+}}][] : memref<128xi8> to memref<16xf32>
// CHECK:         memref.view %{{.+}}[%{{.+}}][] : memref<128xi8> to memref<16xf32>
// CHECK:         scf.for
// CHECK-NOT:       memref.view
// CHECK:           scf.for
// CHECK:             scf.forall
// CHECK:               memref.alloc() : memref<4xf32>
// CHECK:           %[[A:.+]] = memref.alloc() : memref<16xf32>
// CHECK:           scf.for {{.+}} iter_args(%{{.+}} = %[[A]])
// CHECK:             memref.alloc() : memref<16xf32>
func.func @main(%in: memref<2x16xf32>, %out: memref<2x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %src = memref.subview %in[%i, 0] [1, 16] [1, 1] : memref<2x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    %t = memref.alloc() : memref<16xf32>
    linalg.copy ins(%src : memref<16xf32, strided<[1], offset: ?>>) outs(%t : memref<16xf32>)
    scf.for %j = %c0 to %c1 step %c1 {
      %u = memref.alloc() : memref<16xf32>
      linalg.copy ins(%t : memref<16xf32>) outs(%u : memref<16xf32>)
      scf.forall (%k) in (4) {
        %p = memref.alloc() : memref<4xf32>
        %s = memref.subview %u[0] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1]>>
        linalg.copy ins(%s : memref<4xf32, strided<[1]>>) outs(%p : memref<4xf32>)
      }
    }
    %a = memref.alloc() : memref<16xf32>
    linalg.copy ins(%t : memref<16xf32>) outs(%a : memref<16xf32>)
    %r = scf.for %j = %c0 to %c1 step %c1 iter_args(%acc = %a) -> (memref<16xf32>) {
      %y = memref.alloc() : memref<16xf32>
      linalg.copy ins(%acc : memref<16xf32>) outs(%y : memref<16xf32>)
      scf.yield %y : memref<16xf32>
    }
    %dst = memref.subview %out[%i, 0] [1, 16] [1, 1] : memref<2x16xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.copy ins(%r : memref<16xf32>) outs(%dst : memref<16xf32, strided<[1], offset: ?>>)
  }
  return
}
