// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels=min-kernels=2 | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-cpu-outline-kernels | FileCheck %s --check-prefix=FEW

// Two loop nests over views of the arena: each moves into a private
// noinline function and is called. The constants (loop bounds) are cloned
// into the callee; the views of the arena, buffers the calling convention
// passes, are passed, as is a scalar read before the loops (a load). The
// caller keeps only the calls and what they need.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[ARENA:.+]]: memref<512xi8>, %[[S:.+]]: memref<f32>)
// CHECK-DAG:     %[[A:.+]] = memref.view %[[ARENA]][%{{.+}}][] : memref<512xi8> to memref<64xf32>
// CHECK-DAG:     %[[B:.+]] = memref.view %[[ARENA]][%{{.+}}][] : memref<512xi8> to memref<64xf32>
// CHECK-DAG:     %[[X:.+]] = memref.load %[[S]][] : memref<f32>
// CHECK:         call @main_kernel_0(%[[A]], %[[X]]) : (memref<64xf32>, f32) -> ()
// CHECK:         %[[R:.+]] = call @main_kernel_1(%[[B]], %[[A]]) : (memref<64xf32>, memref<64xf32>) -> f32
// CHECK:         memref.store %[[R]], %[[S]][] : memref<f32>
// CHECK-NOT:     scf.for
// CHECK:         return
// CHECK:       func.func private @main_kernel_0(%[[V0:.+]]: memref<64xf32>, %[[X0:.+]]: f32)
// CHECK-SAME:    attributes {passthrough = ["noinline"]}
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK:         scf.for %{{.+}} = %{{.+}} to %[[C64]]
// CHECK:           memref.store %[[X0]], %[[V0]]
// CHECK:         return
// CHECK:       func.func private @main_kernel_1(%{{.+}}: memref<64xf32>, %{{.+}}: memref<64xf32>) -> f32
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

// -----

// Loop nests that differ only in the buffers they read and write (the same
// layer on other weights and other arena slots) share one function: the
// first is called three times, on each nest's buffers. A nest that differs
// in a constant (its scale) or in a buffer's shape gets its own.

// CHECK-LABEL: func.func @layers
// CHECK-SAME:    (%[[ARENA:.+]]: memref<1024xi8>)
// CHECK-DAG:     %[[W0:.+]] = memref.get_global @w0 : memref<64xf32>
// CHECK-DAG:     %[[W1:.+]] = memref.get_global @w1 : memref<64xf32>
// CHECK-DAG:     %[[W2:.+]] = memref.get_global @w2 : memref<64xf32>
// CHECK-DAG:     %[[A:.+]] = memref.view %[[ARENA]][%{{.+}}][] : memref<1024xi8> to memref<64xf32>
// CHECK-DAG:     %[[B:.+]] = memref.view %[[ARENA]][%{{.+}}][] : memref<1024xi8> to memref<64xf32>
// CHECK-DAG:     %[[C:.+]] = memref.view %[[ARENA]][%{{.+}}][] : memref<1024xi8> to memref<32xf32>
// CHECK:         call @layers_kernel_0(%[[A]], %[[W0]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK:         call @layers_kernel_0(%[[B]], %[[W1]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK:         call @layers_kernel_2(%[[A]], %[[W2]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK:         call @layers_kernel_0(%[[A]], %[[W2]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK:         call @layers_kernel_4(%[[C]]) : (memref<32xf32>) -> ()
// CHECK:       func.func private @layers_kernel_0(
// CHECK:         arith.constant 2.000000e+00 : f32
// CHECK:       func.func private @layers_kernel_2(
// CHECK:         arith.constant 3.000000e+00 : f32
// CHECK:       func.func private @layers_kernel_4(
// CHECK-NOT:   func.func private @layers_kernel_1
// CHECK-NOT:   func.func private @layers_kernel_3
memref.global "private" constant @w0 : memref<64xf32> = dense<1.0>
memref.global "private" constant @w1 : memref<64xf32> = dense<2.0>
memref.global "private" constant @w2 : memref<64xf32> = dense<3.0>
func.func @layers(%arena: memref<1024xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %w0 = memref.get_global @w0 : memref<64xf32>
  %w1 = memref.get_global @w1 : memref<64xf32>
  %w2 = memref.get_global @w2 : memref<64xf32>
  %a = memref.view %arena[%c0][] : memref<1024xi8> to memref<64xf32>
  %b = memref.view %arena[%c256][] : memref<1024xi8> to memref<64xf32>
  %c = memref.view %arena[%c512][] : memref<1024xi8> to memref<32xf32>
  scf.for %i = %c0 to %c64 step %c1 {
    %w = memref.load %w0[%i] : memref<64xf32>
    %p = arith.mulf %w, %two : f32
    memref.store %p, %a[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %w = memref.load %w1[%i] : memref<64xf32>
    %p = arith.mulf %w, %two : f32
    memref.store %p, %b[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %w = memref.load %w2[%i] : memref<64xf32>
    %p = arith.mulf %w, %three : f32
    memref.store %p, %a[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %w = memref.load %w2[%i] : memref<64xf32>
    %p = arith.mulf %w, %two : f32
    memref.store %p, %a[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c32 step %c1 {
    memref.store %two, %c[%i] : memref<32xf32>
  }
  return
}
