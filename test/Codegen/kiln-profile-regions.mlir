// RUN: kiln-opt %s -split-input-file -kiln-profile-regions | FileCheck %s

// Each computation of @main (here a fill and a copy) gets a mark with its
// number before it, and one more mark closes the last region; constants,
// weights and views get none. The module records the region names: the
// ONNX node from the location, and the op; a node's second computation of
// the same kind is numbered ("Fill_0 (linalg.fill #2)").

// CHECK: module attributes {{{.*}}kiln.profile_regions = ["Fill_0 (linalg.fill)", "Fill_0 (linalg.fill #2)", "memref.copy", "memref.copy #2"]}
// CHECK-LABEL: func.func @main
// CHECK: %[[V:.*]] = memref.view
// CHECK: %[[C0:.*]] = arith.constant 0 : i32
// CHECK: call @kiln_profile_mark(%[[C0]]) : (i32) -> ()
// CHECK: linalg.fill
// CHECK: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: call @kiln_profile_mark(%[[C1]]) : (i32) -> ()
// CHECK: linalg.fill
// CHECK: %[[C2:.*]] = arith.constant 2 : i32
// CHECK: call @kiln_profile_mark(%[[C2]]) : (i32) -> ()
// CHECK: memref.copy
// CHECK: %[[C3:.*]] = arith.constant 3 : i32
// CHECK: call @kiln_profile_mark(%[[C3]]) : (i32) -> ()
// CHECK: memref.copy
// CHECK: %[[C4:.*]] = arith.constant 4 : i32
// CHECK: call @kiln_profile_mark(%[[C4]]) : (i32) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @kiln_profile_mark(i32)
func.func @main(%out: memref<4xf32>, %arena: memref<16xi8>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %v = memref.view %arena[%c0][] : memref<16xi8> to memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%v : memref<4xf32>) loc("Fill_0")
  linalg.fill ins(%zero : f32) outs(%v : memref<4xf32>) loc("Fill_0")
  memref.copy %v, %out : memref<4xf32> to memref<4xf32>
  memref.copy %v, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A module without @main is left alone.

// CHECK-NOT: kiln_profile_mark
// CHECK-NOT: kiln.profile_regions
func.func @other(%out: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<4xf32>)
  return
}
