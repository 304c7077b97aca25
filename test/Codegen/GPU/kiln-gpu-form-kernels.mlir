// RUN: kiln-opt %s -split-input-file \
// RUN:   -pass-pipeline='builtin.module(func.func(kiln-gpu-form-kernels{block-size=128}))' \
// RUN:   | FileCheck %s

// A 2-D parallel loop of 2x300 iterations becomes one launch of
// ceil(600/128) = 5 blocks of 128 threads: the linear id is guarded by the
// trip count and delinearized (innermost dim fastest). Constants are
// cloned into the kernel; views and weights stay on the host. The function
// records what each kernel computes and moves for the profiler: 600 adds;
// the 300 weights and the 600 outputs, 3600 bytes.

// CHECK-LABEL: func.func @parallel
// CHECK-SAME: attributes {kiln.kernel_costs = {k0 = array<i64: 600, 3600>}}
// CHECK: %[[G:.*]] = memref.get_global @w
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C5]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) module(@kiln_kernels) function(@k0)
// CHECK-DAG: %[[K300:.*]] = arith.constant 300 : index
// CHECK-DAG: %[[K600:.*]] = arith.constant 600 : index
// CHECK-DAG: %[[K128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[M:.*]] = arith.muli %[[BX]], %[[K128]] : index
// CHECK: %[[ID:.*]] = arith.addi %[[M]], %[[TX]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[K600]] : index
// CHECK: scf.if %[[IN]] {
// CHECK:   %[[J:.*]] = arith.remui %[[ID]], %[[K300]] : index
// CHECK:   %[[I:.*]] = arith.divui %[[ID]], %[[K300]] : index
// CHECK:   %[[V:.*]] = memref.load %[[G]][%[[J]]]
// CHECK:   %[[S:.*]] = arith.addf %[[V]], %[[ZERO]] : f32
// CHECK:   memref.store %[[S]], %arg0[%[[I]], %[[J]]]
// CHECK: }
// CHECK: gpu.terminator
// CHECK-NOT: scf.parallel
memref.global "private" constant @w : memref<300xf32> = dense<1.0>
func.func @parallel(%out: memref<2x300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c300 = arith.constant 300 : index
  %zero = arith.constant 0.0 : f32
  %w = memref.get_global @w : memref<300xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c300) step (%c1, %c1) {
    %v = memref.load %w[%j] : memref<300xf32>
    %s = arith.addf %v, %zero : f32
    memref.store %s, %out[%i, %j] : memref<2x300xf32>
    scf.reduce
  }
  return
}

// -----

// A loop with a lower bound and a step: ivs are lb + pos * step. A loop of
// 10 iterations gets one block of 32 threads.

// CHECK-LABEL: func.func @strided
// CHECK: gpu.launch
// CHECK-DAG: %[[K3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[K4:.*]] = arith.constant 4 : index
// CHECK: scf.if
// CHECK:   %[[T:.*]] = arith.muli %{{.*}}, %[[K3]] : index
// CHECK:   %[[IV:.*]] = arith.addi %[[T]], %[[K4]] : index
// CHECK:   memref.store %{{.*}}, %arg0[%[[IV]]]
func.func @strided(%out: memref<40xf32>) {
  %c4 = arith.constant 4 : index
  %c3 = arith.constant 3 : index
  %c34 = arith.constant 34 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c4) to (%c34) step (%c3) {
    memref.store %one, %out[%i] : memref<40xf32>
    scf.reduce
  }
  return
}

// -----

// A value loaded on the device and used by a later op keeps both in one
// one-thread launch; a parallel loop inside it becomes an scf.for nest, a
// static allocation a per-thread alloca, and deallocations go.

// CHECK-LABEL: func.func @sequential
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{(_[0-9]+)?}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c1{{(_[0-9]+)?}}, {{.*}}) module(@kiln_kernels) function(@k0)
// CHECK:   %[[N:.*]] = memref.load %arg0[]
// CHECK:   scf.for %[[I:.*]] = %{{.*}} to %[[N]]
// CHECK:     %[[T:.*]] = memref.alloca() : memref<4xf32>
// CHECK:     memref.store %{{.*}}, %[[T]]
// CHECK-NOT: memref.dealloc
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
func.func @sequential(%n: memref<index>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %count = memref.load %n[] : memref<index>
  scf.parallel (%i) = (%c0) to (%count) step (%c1) {
    %tmp = memref.alloc() : memref<4xf32>
    memref.store %one, %tmp[%c0] : memref<4xf32>
    %v = memref.load %tmp[%c0] : memref<4xf32>
    memref.store %v, %out[%i] : memref<8xf32>
    memref.dealloc %tmp : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// A loop without iterations needs no launch; a host-only function none.

// CHECK-LABEL: func.func @empty
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @empty(%out: memref<0xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c0) step (%c1) {
    memref.store %one, %out[%i] : memref<0xf32>
    scf.reduce
  }
  return
}

// -----

// Two loops over different spaces give two kernels, numbered in order, in
// one module.

// CHECK-LABEL: func.func @two
// CHECK: gpu.launch {{.*}} module(@kiln_kernels) function(@k0)
// CHECK: gpu.launch {{.*}} module(@kiln_kernels) function(@k1)
func.func @two(%a: memref<64xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %one, %a[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c32) step (%c1) {
    %v = memref.load %a[%i] : memref<64xf32>
    memref.store %v, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// A sum over rows of 1000: one block of 128 threads per row (block-size)
// with a shared-memory buffer; each thread folds elements tid, tid + 128,
// ... starting from the identity (-0.0 for addf), then tree steps in
// shared memory down to 32 partials (a barrier after each step), five
// butterfly shuffles within warp 0, and thread 0 adds the row's total into
// the output.

// CHECK-LABEL: func.func @row_sum
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{(_[0-9]+)?}}, {{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128{{(_[0-9]+)?}}, {{.*}}) module(@kiln_kernels) function(@k0) workgroup(%[[SMEM:.*]] : memref<128xf32, #gpu.address_space<workgroup>>)
// CHECK-DAG: %[[K1000:.*]] = arith.constant 1000 : index
// CHECK-DAG: %[[K128:.*]] = arith.constant 128 : index
// CHECK: %[[ID:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[P:.*]] = scf.for %[[K:.*]] = %[[TX]] to %[[K1000]] step %[[K128]] iter_args(%[[ACC:.*]] = %[[ID]]) -> (f32) {
// CHECK:   %[[V:.*]] = memref.load %arg0[%[[BX]], %[[K]]]
// CHECK:   %[[S:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CHECK:   scf.yield %[[S]] : f32
// CHECK: memref.store %[[P]], %[[SMEM]][%[[TX]]]
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %[[TX]], %c64
// CHECK: scf.if
// CHECK:   arith.addf
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %[[TX]], %c32
// CHECK: scf.if
// CHECK:   arith.addf
// CHECK: gpu.barrier
// CHECK: %[[W0:.*]] = arith.cmpi ult, %[[TX]], %c32
// CHECK: scf.if %[[W0]] {
// CHECK:   %[[W:.*]] = memref.load %[[SMEM]][%[[TX]]]
// CHECK:   %[[S16:.*]], %{{.*}} = gpu.shuffle  xor %[[W]], %c16_i32{{.*}} : f32
// CHECK:   arith.addf %[[S16]], %[[W]] : f32
// CHECK:   gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK:   gpu.shuffle  xor %{{.*}}, %c4_i32
// CHECK:   gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK:   gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[TX]]
// CHECK:   scf.if %[[FIRST]] {
// CHECK:     %[[OLD:.*]] = memref.load %arg1[%[[BX]]]
// CHECK:     %[[NEW:.*]] = arith.addf %{{.*}}, %[[OLD]] : f32
// CHECK:     memref.store %[[NEW]], %arg1[%[[BX]]]
// CHECK-NOT: gpu.barrier
func.func @row_sum(%x: memref<4x1000xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c1000 = arith.constant 1000 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c1000 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x1000xf32>
      %acc = memref.load %out[%i] : memref<4xf32>
      %s = arith.addf %v, %acc : f32
      memref.store %s, %out[%i] : memref<4xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A reduction shorter than reduction-min-size (32) stays one thread per
// output, which accumulates in a register and stores once.

// CHECK-LABEL: func.func @short_rows
// CHECK: gpu.launch
// CHECK-NOT: workgroup
// CHECK: scf.if
// CHECK:   %[[ID:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:   %[[T:.*]] = scf.for %{{.*}} iter_args(%[[A:.*]] = %[[ID]]) -> (f32) {
// CHECK:     %[[V:.*]] = memref.load %arg0
// CHECK:     %[[S:.*]] = arith.addf %[[V]], %[[A]] : f32
// CHECK:     scf.yield %[[S]]
// CHECK:   %[[OLD:.*]] = memref.load %arg1
// CHECK:   %[[NEW:.*]] = arith.addf %[[T]], %[[OLD]] : f32
// CHECK:   memref.store %[[NEW]], %arg1
func.func @short_rows(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x8xf32>
      %acc = memref.load %out[%i] : memref<4xf32>
      %s = arith.addf %v, %acc : f32
      memref.store %s, %out[%i] : memref<4xf32>
    }
    scf.reduce
  }
  return
}
