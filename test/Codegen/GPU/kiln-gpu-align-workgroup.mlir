// RUN: kiln-opt %s -pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm,kiln-gpu-align-workgroup))' | FileCheck %s
// RUN: kiln-opt %s -pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm))' | FileCheck %s --check-prefix=BEFORE

// Every shared-memory buffer is aligned to 16 bytes (cp.async and ldmatrix
// need it; an f16 buffer alone would be aligned to 2), and one already
// aligned further keeps its alignment. Private buffers and globals in
// other address spaces are left alone.
// BEFORE: llvm.mlir.global internal @__wg_k_0() {addr_space = 3 : i32} : !llvm.array<40 x f16>
// CHECK-LABEL: gpu.module @m
// CHECK-DAG: llvm.mlir.global internal @__wg_k_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<40 x f16>
// CHECK-DAG: llvm.mlir.global internal @__wg_k_1() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<8 x f16>
// CHECK-DAG: llvm.mlir.global internal @__wg_k_2() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
// CHECK-DAG: llvm.mlir.global internal @g() {addr_space = 1 : i32, alignment = 2 : i64} : !llvm.array<4 x f16>
gpu.module @m {
  llvm.mlir.global internal @g() {addr_space = 1 : i32, alignment = 2 : i64} : !llvm.array<4 x f16>
  gpu.func @k(%out: memref<8xf16>) workgroup(%a : memref<40xf16, #gpu.address_space<workgroup>>, %b : memref<8xf16, #gpu.address_space<workgroup>>, %c : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64}) private(%p : memref<2xf32, #gpu.address_space<private>>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<40xf16, #gpu.address_space<workgroup>>
    memref.store %v, %b[%c0] : memref<8xf16, #gpu.address_space<workgroup>>
    %w = memref.load %b[%c0] : memref<8xf16, #gpu.address_space<workgroup>>
    memref.store %w, %out[%c0] : memref<8xf16>
    %f = memref.load %c[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    memref.store %f, %p[%c0] : memref<2xf32, #gpu.address_space<private>>
    gpu.return
  }
}

// A module with wgmma: its buffers, the dynamic shared memory's too, start
// on 1024-byte boundaries, where the swizzled layouts' pattern repeats.
// BEFORE: llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: gpu.module @m2
// CHECK-DAG: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-DAG: llvm.mlir.global internal @__wg_wg_0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<8192 x f16>
gpu.module @m2 {
  gpu.func @wg(%d: i64, %out: memref<8xi8>) workgroup(%s : memref<8192xf16, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %x = memref.load %dyn[%c0] : memref<?xi8, #gpu.address_space<workgroup>>
    memref.store %x, %out[%c0] : memref<8xi8>
    %h = memref.load %s[%c0] : memref<8192xf16, #gpu.address_space<workgroup>>
    %z = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
    %r = nvvm.wgmma.mma_async %d, %d, %z, #nvvm.shape<m = 64, n = 16, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
    gpu.return
  }
}

// Without wgmma, dynamic shared memory keeps a 16-byte alignment. It is
// made an external declaration: NVPTX prints that as `.extern .shared
// .b8 name[]`, the start of the launch's dynamic shared memory (an
// internal one is a one-byte static variable).
// CHECK-LABEL: gpu.module @m3
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
gpu.module @m3 {
  gpu.func @k3(%out: memref<8xi8>) kernel {
    %c0 = arith.constant 0 : index
    %dyn = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %x = memref.load %dyn[%c0] : memref<?xi8, #gpu.address_space<workgroup>>
    memref.store %x, %out[%c0] : memref<8xi8>
    gpu.return
  }
}
