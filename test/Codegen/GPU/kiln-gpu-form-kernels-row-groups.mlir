// RUN: kiln-opt %s -split-input-file \
// RUN:   -pass-pipeline='builtin.module(func.func(kiln-gpu-form-kernels{block-size=128}))' \
// RUN:   | FileCheck %s
// RUN: kiln-opt %s -split-input-file \
// RUN:   -pass-pipeline='builtin.module(func.func(kiln-gpu-form-kernels{block-size=128 row-groups=false}))' \
// RUN:   | FileCheck %s --check-prefix=OFF

// A row's fill, its sum over 64 elements and the elementwise pass that
// divides each element by it (the shape of a normalization or a softmax)
// share rows 0..3: one kernel of a block per row. The fill runs on the
// row's first thread, the sum is the block's tree reduction, and the
// division walks the row's 64 elements strided by the 64 threads, a
// barrier between the loops. Without row groups they are three kernels.

// CHECK-LABEL: func.func @normalize
// CHECK-SAME: kiln.kernel_costs = {k0 = array<i64
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{(_[0-9]+)?}}, {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c64{{(_[0-9]+)?}}, {{.*}}) module(@kiln_kernels) function(@k0) workgroup(%[[SMEM:.*]] : memref<64xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %{{.*}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK:   memref.store %{{.*}}, %arg1[%[[BX]]]
// CHECK: }
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %[[TX]] to %{{.*}} step %{{.*}} iter_args
// CHECK:   memref.load %arg0[%[[BX]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[SMEM]][%[[TX]]]
// CHECK: gpu.shuffle
// CHECK: memref.store %{{.*}}, %arg1[%[[BX]]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[J:.*]] = %[[TX]] to %{{.*}} step %{{.*}} {
// CHECK:   %[[X:.*]] = memref.load %arg0[%[[BX]], %[[J]]]
// CHECK:   %[[S:.*]] = memref.load %arg1[%[[BX]]]
// CHECK:   %[[Y:.*]] = arith.divf %[[X]], %[[S]] : f32
// CHECK:   memref.store %[[Y]], %arg2[%[[BX]], %[[J]]]
// CHECK: }
// CHECK-NEXT: gpu.terminator
// CHECK-NOT: gpu.launch
// OFF-LABEL: func.func @normalize
// OFF-COUNT-3: gpu.launch
func.func @normalize(%x: memref<4x64xf32>, %sum: memref<4xf32>,
                     %y: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %zero, %sum[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x64xf32>
      %acc = memref.load %sum[%i] : memref<4xf32>
      %s = arith.addf %v, %acc : f32
      memref.store %s, %sum[%i] : memref<4xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c64) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x64xf32>
    %s = memref.load %sum[%i] : memref<4xf32>
    %d = arith.divf %v, %s : f32
    memref.store %d, %y[%i, %j] : memref<4x64xf32>
    scf.reduce
  }
  return
}

// -----

// A consumer that reads another row of the sum (row 0 for every row) needs
// every block's sum first: it stays its own kernel.

// CHECK-LABEL: func.func @other_row
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
func.func @other_row(%x: memref<4x64xf32>, %sum: memref<4xf32>,
                     %y: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x64xf32>
      %acc = memref.load %sum[%i] : memref<4xf32>
      %s = arith.addf %v, %acc : f32
      memref.store %s, %sum[%i] : memref<4xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c64) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x64xf32>
    %s = memref.load %sum[%c0] : memref<4xf32>
    %d = arith.divf %v, %s : f32
    memref.store %d, %y[%i, %j] : memref<4x64xf32>
    scf.reduce
  }
  return
}

// -----

// The consumer's output shares arena bytes with the reduction's input
// (the memory plan may do so once the reduction has read it): block 0
// would overwrite what block 1 still has to sum. Two kernels.

// CHECK-LABEL: func.func @aliasing
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
func.func @aliasing(%arena: memref<2048xi8>, %sum: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %x = memref.view %arena[%c0][] : memref<2048xi8> to memref<4x64xf32>
  %y = memref.view %arena[%c1024][] : memref<2048xi8> to memref<4x64xf32>
  %w = memref.view %arena[%c0][] : memref<2048xi8> to memref<4x64xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x64xf32>
      %acc = memref.load %sum[%i] : memref<4xf32>
      %s = arith.addf %v, %acc : f32
      memref.store %s, %sum[%i] : memref<4xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c64) step (%c1, %c1) {
    %v = memref.load %y[%i, %j] : memref<4x64xf32>
    %s = memref.load %sum[%i] : memref<4xf32>
    %d = arith.divf %v, %s : f32
    memref.store %d, %w[%i, %j] : memref<4x64xf32>
    scf.reduce
  }
  return
}

// -----

// A loop over other rows (2 of them, not 4) does not join the reduction's
// kernel.

// CHECK-LABEL: func.func @other_rows
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
func.func @other_rows(%x: memref<4x64xf32>, %sum: memref<4xf32>,
                      %y: memref<2x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x64xf32>
      %acc = memref.load %sum[%i] : memref<4xf32>
      %s = arith.addf %v, %acc : f32
      memref.store %s, %sum[%i] : memref<4xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c64) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x64xf32>
    %s = memref.load %sum[%i] : memref<4xf32>
    %d = arith.divf %v, %s : f32
    memref.store %d, %y[%i, %j] : memref<2x64xf32>
    scf.reduce
  }
  return
}

// -----

// Pointwise groups: a bias broadcast, a 9-element window sum into it (too
// short for a block per output) and a Relu after it run over the same
// 4x16 points, each writing only its own point: one kernel of a thread per
// point (64 threads), the loops one after another under one guard, no
// barrier. Without row groups they are three kernels.

// CHECK-LABEL: func.func @pointwise
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{(_[0-9]+)?}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c64{{(_[0-9]+)?}}, {{.*}}) module(@kiln_kernels) function(@k0) {
// CHECK-NOT: gpu.barrier
// CHECK: scf.if
// CHECK:   memref.load %arg1
// CHECK:   memref.store %{{.*}}, %arg2
// CHECK:   scf.for
// CHECK:   memref.load %arg2
// CHECK:   memref.store %{{.*}}, %arg2
// CHECK:   arith.maximumf
// CHECK:   memref.store %{{.*}}, %arg3
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// OFF-LABEL: func.func @pointwise
// OFF-COUNT-3: gpu.launch
func.func @pointwise(%x: memref<4x24xf32>, %b: memref<16xf32>, %acc: memref<4x16xf32>,
                     %y: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %v = memref.load %b[%j] : memref<16xf32>
    memref.store %v, %acc[%i, %j] : memref<4x16xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    scf.for %k = %c0 to %c9 step %c1 {
      %p = arith.addi %j, %k : index
      %v = memref.load %x[%i, %p] : memref<4x24xf32>
      %a = memref.load %acc[%i, %j] : memref<4x16xf32>
      %s = arith.addf %v, %a : f32
      memref.store %s, %acc[%i, %j] : memref<4x16xf32>
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %v = memref.load %acc[%i, %j] : memref<4x16xf32>
    %r = arith.maximumf %v, %zero : f32
    memref.store %r, %y[%i, %j] : memref<4x16xf32>
    scf.reduce
  }
  return
}

// -----

// A loop that reads its neighbour's point of what the group wrote (a
// shift) would need the other thread's result: it is not merged.

// CHECK-LABEL: func.func @neighbour
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
func.func @neighbour(%a: memref<65xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %a[%i] : memref<65xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %n = arith.addi %i, %c1 : index
    %v = memref.load %a[%n] : memref<65xf32>
    memref.store %v, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// An activation that writes its result transposed (channels-last, for
// the convolution after it), its loop over the transposed space: its
// dimensions are reordered to read the window sum's output at the sum's
// own point, and the three loops run as one kernel of a thread per point,
// the activation's store transposed.

// CHECK-LABEL: func.func @transposed_activation
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1{{(_[0-9]+)?}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %c64{{(_[0-9]+)?}}, {{.*}}) module(@kiln_kernels) function(@k0) {
// CHECK:   scf.for
// CHECK:   memref.store %{{.*}}, %arg2
// CHECK:   %[[V:.*]] = memref.load %arg2[%[[I:.*]], %[[J:.*]]] : memref<4x16xf32>
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[V]]
// CHECK:   memref.store %[[R]], %arg3[%[[J]], %[[I]]] : memref<16x4xf32>
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// OFF-LABEL: func.func @transposed_activation
// OFF-COUNT-3: gpu.launch
func.func @transposed_activation(%x: memref<4x24xf32>, %b: memref<16xf32>, %acc: memref<4x16xf32>,
                                 %y: memref<16x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %v = memref.load %b[%j] : memref<16xf32>
    memref.store %v, %acc[%i, %j] : memref<4x16xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    scf.for %k = %c0 to %c9 step %c1 {
      %p = arith.addi %j, %k : index
      %v = memref.load %x[%i, %p] : memref<4x24xf32>
      %a = memref.load %acc[%i, %j] : memref<4x16xf32>
      %s = arith.addf %v, %a : f32
      memref.store %s, %acc[%i, %j] : memref<4x16xf32>
    }
    scf.reduce
  }
  scf.parallel (%c, %n) = (%c0, %c0) to (%c16, %c4) step (%c1, %c1) {
    %v = memref.load %acc[%n, %c] : memref<4x16xf32>
    %r = arith.maximumf %v, %zero : f32
    memref.store %r, %y[%c, %n] : memref<16x4xf32>
    scf.reduce
  }
  return
}

// -----

// Not merged: a transposed reader that also reads another point of what
// the sum wrote (a neighbour along n) needs another thread's result; it
// keeps its own kernel (its dimensions reordered all the same).

// CHECK-LABEL: func.func @transposed_neighbour
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
func.func @transposed_neighbour(%x: memref<4x24xf32>, %acc: memref<5x16xf32>,
                                %y: memref<16x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    scf.for %k = %c0 to %c9 step %c1 {
      %p = arith.addi %j, %k : index
      %v = memref.load %x[%i, %p] : memref<4x24xf32>
      %a = memref.load %acc[%i, %j] : memref<5x16xf32>
      %s = arith.addf %v, %a : f32
      memref.store %s, %acc[%i, %j] : memref<5x16xf32>
    }
    scf.reduce
  }
  scf.parallel (%c, %n) = (%c0, %c0) to (%c16, %c4) step (%c1, %c1) {
    %v = memref.load %acc[%n, %c] : memref<5x16xf32>
    %n1 = arith.addi %n, %c1 : index
    %w = memref.load %acc[%n1, %c] : memref<5x16xf32>
    %r = arith.addf %v, %w : f32
    memref.store %r, %y[%c, %n] : memref<16x4xf32>
    scf.reduce
  }
  return
}

// -----

// A bias broadcast from the weights that bufferization left before
// unrelated work (the product that makes the window sum's input) moves
// down to the sum that accumulates into it: the product is one kernel,
// the broadcast and the sum another. A broadcast whose buffer the work
// after it reads stays where it is.

// CHECK-LABEL: func.func @sunk_init
// CHECK: gpu.launch {{.*}} function(@k0_make_input)
// CHECK:   memref.store %{{.*}}, %arg1
// CHECK: gpu.launch {{.*}} function(@k1_bias)
// CHECK:   memref.get_global @bias
// CHECK:   memref.store %{{.*}}, %arg2
// CHECK:   scf.for
// CHECK-NOT: gpu.launch
// CHECK-LABEL: func.func @init_read_between
// CHECK: gpu.launch {{.*}} function(@k0_bias)
// CHECK: gpu.launch {{.*}} function(@k1_reader)
// CHECK: gpu.launch {{.*}} function(@k2_sum)
memref.global "private" constant @bias : memref<16xf32> = dense<1.0>
func.func @sunk_init(%x0: memref<4x24xf32>, %x: memref<4x24xf32>, %acc: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %b = memref.get_global @bias : memref<16xf32>
    %v = memref.load %b[%j] : memref<16xf32>
    memref.store %v, %acc[%i, %j] : memref<4x16xf32>
    scf.reduce
  } loc("bias")
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c24) step (%c1, %c1) {
    %v = memref.load %x0[%i, %j] : memref<4x24xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %x[%i, %j] : memref<4x24xf32>
    scf.reduce
  } loc("make_input")
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    scf.for %k = %c0 to %c9 step %c1 {
      %p = arith.addi %j, %k : index
      %v = memref.load %x[%i, %p] : memref<4x24xf32>
      %a = memref.load %acc[%i, %j] : memref<4x16xf32>
      %s = arith.addf %v, %a : f32
      memref.store %s, %acc[%i, %j] : memref<4x16xf32>
    }
    scf.reduce
  } loc("sum")
  return
}
func.func @init_read_between(%x: memref<4x24xf32>, %acc: memref<4x16xf32>, %z: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    %b = memref.get_global @bias : memref<16xf32>
    %v = memref.load %b[%j] : memref<16xf32>
    memref.store %v, %acc[%i, %j] : memref<4x16xf32>
    scf.reduce
  } loc("bias")
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %acc[%i, %j] : memref<4x16xf32>
    memref.store %v, %z[%i, %j] : memref<4x8xf32>
    scf.reduce
  } loc("reader")
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c16) step (%c1, %c1) {
    scf.for %k = %c0 to %c9 step %c1 {
      %p = arith.addi %j, %k : index
      %v = memref.load %x[%i, %p] : memref<4x24xf32>
      %a = memref.load %acc[%i, %j] : memref<4x16xf32>
      %s = arith.addf %v, %a : f32
      memref.store %s, %acc[%i, %j] : memref<4x16xf32>
    }
    scf.reduce
  } loc("sum")
  return
}
