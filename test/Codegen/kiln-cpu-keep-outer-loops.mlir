// RUN: kiln-opt %s -split-input-file -kiln-cpu-keep-outer-loops | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-keep-outer-loops=min-inner-trips=1000 | FileCheck %s --check-prefix=HIGH
// RUN: kiln-opt %s -split-input-file -kiln-cpu-keep-outer-loops -convert-scf-to-cf | FileCheck %s --check-prefix=CF

// A thread's 16 rows of a row sum, each over 768 elements: the row loop
// is marked not to unroll; the long inner loop is not (LLVM may still
// vectorize and unroll it). After convert-scf-to-cf the mark is on the
// row loop's back edge.

// CHECK:       #[[$UNROLL:.+]] = #llvm.loop_unroll<disable = true>
// CHECK:       #[[$KEEP:.+]] = #llvm.loop_annotation<unroll = #[[$UNROLL]]>
// CHECK-LABEL: func.func @rows
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK-NOT:       loop_annotation
// CHECK:           memref.store
// CHECK:         } {loop_annotation = #[[$KEEP]]}
// HIGH-LABEL:  func.func @rows
// HIGH-NOT:      loop_annotation
// HIGH:          return
// CF:          #[[$UNROLL:.+]] = #llvm.loop_unroll<disable = true>
// CF:          #[[$KEEP:.+]] = #llvm.loop_annotation<unroll = #[[$UNROLL]]>
// CF-LABEL:    func.func @rows
// CF:            cf.br ^bb3(
// CF:            cf.br ^bb3({{.*}} : index, f32){{$}}
// CF-NOT:        loop_annotation
// CF:            cf.br ^bb1({{.*}}) {loop_annotation = #[[$KEEP]]}
func.func @rows(%a: memref<16x768xf32>, %o: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c768 = arith.constant 768 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    %s = scf.for %j = %c0 to %c768 step %c1 iter_args(%acc = %z) -> f32 {
      %v = memref.load %a[%i, %j] : memref<16x768xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    memref.store %s, %o[%i] : memref<16xf32>
  }
  return
}

// -----

// A 3x3 window inside a loop over 64 outputs: the inner loops are short,
// LLVM unrolls them whole, so nothing is marked; the output loop holds
// only short loops too.

// CHECK-LABEL: func.func @window
// CHECK-NOT:     loop_annotation
// CHECK:         return
func.func @window(%a: memref<66xf32>, %o: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %k = %c0 to %c3 step %c1 {
      %j = arith.addi %i, %k : index
      %v = memref.load %a[%j] : memref<66xf32>
      %w = memref.load %o[%i] : memref<64xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %o[%i] : memref<64xf32>
    }
  }
  return
}

// -----

// Loops of unknown trip count and while loops count as long, at any
// depth: both enclosing loops are marked, the innermost is not.

// CHECK:       #[[$KEEP2:.+]] = #llvm.loop_annotation
// CHECK-LABEL: func.func @dynamic
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:             }
// CHECK-NEXT:      } {loop_annotation = #[[$KEEP2:.+]]}
// CHECK-NEXT:    } {loop_annotation = #[[$KEEP2]]}
// CHECK-LABEL: func.func @while
// CHECK:         scf.for
// CHECK:           scf.while
// CHECK:         } {loop_annotation
func.func @dynamic(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c2 step %c1 {
      scf.for %k = %c0 to %n step %c1 {
        memref.store %z, %a[%k] : memref<?xf32>
      }
    }
  }
  return
}
func.func @while(%a: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %lim = arith.constant 1.0e3 : f32
  scf.for %i = %c0 to %c2 step %c1 {
    scf.while : () -> () {
      %v = memref.load %a[] : memref<f32>
      %c = arith.cmpf olt, %v, %lim : f32
      scf.condition(%c)
    } do {
      %v = memref.load %a[] : memref<f32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %a[] : memref<f32>
      scf.yield
    }
  }
  return
}
