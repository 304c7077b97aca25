// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels=min-kernels=2 | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels | FileCheck %s --check-prefix=FEW

// Two loop nests over views of the arena: each moves into a private
// noinline function and is called. The constants (loop bounds, the view's
// offset) and the views are cloned into the callee, which takes the arena
// itself; a scalar read before the loops (a load) is passed. The caller
// keeps only the calls and what they need.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[ARENA:.+]]: memref<512xi8>, %[[S:.+]]: memref<f32>)
// CHECK:         %[[X:.+]] = memref.load %[[S]][] : memref<f32>
// CHECK:         call @main_kernel_0(%[[ARENA]], %[[X]]) : (memref<512xi8>, f32) -> ()
// CHECK:         %[[R:.+]] = call @main_kernel_1(%[[ARENA]]) : (memref<512xi8>) -> f32
// CHECK:         memref.store %[[R]], %[[S]][] : memref<f32>
// CHECK-NOT:     scf.for
// CHECK:         return
// CHECK:       func.func private @main_kernel_0(%[[A0:.+]]: memref<512xi8>, %[[X0:.+]]: f32)
// CHECK-SAME:    attributes {passthrough = ["noinline"]}
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[V0:.+]] = memref.view %[[A0]][%{{.+}}][] : memref<512xi8> to memref<64xf32>
// CHECK:         scf.for %{{.+}} = %{{.+}} to %[[C64]]
// CHECK:           memref.store %[[X0]], %[[V0]]
// CHECK:         return
// CHECK:       func.func private @main_kernel_1(%[[A1:.+]]: memref<512xi8>) -> f32
// CHECK:         %[[SUM:.+]] = scf.for
// CHECK:         return %[[SUM]] : f32

// FEW-LABEL: func.func @main
// FEW:         scf.for
// FEW:         scf.for
// FEW-NOT:     func.func private
func.func @main(%arena: memref<512xi8>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.view %arena[%c0][] : memref<512xi8> to memref<64xf32>
  %b = memref.view %arena[%c256][] : memref<512xi8> to memref<64xf32>
  %x = memref.load %s[] : memref<f32>
  scf.for %i = %c0 to %c64 step %c1 {
    memref.store %x, %a[%i] : memref<64xf32>
  }
  %sum = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %a[%i] : memref<64xf32>
    %w = memref.load %b[%i] : memref<64xf32>
    %p = arith.mulf %v, %w : f32
    %n = arith.addf %acc, %p : f32
    scf.yield %n : f32
  }
  memref.store %sum, %s[] : memref<f32>
  return
}

// -----

// A loop that reads a memref of dynamic shape (which the bare-pointer
// calling convention cannot pass) stays in place; the other is outlined.

// CHECK-LABEL: func.func @dynamic
// CHECK:         scf.for
// CHECK:           memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<?xf32>
// CHECK:         call @dynamic_kernel_1
// CHECK:       func.func private @dynamic_kernel_1
// CHECK-NOT:   func.func private @dynamic_kernel_0
func.func @dynamic(%d: memref<?xf32>, %m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %d[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %one, %m[%i] : memref<8xf32>
  }
  return
}
