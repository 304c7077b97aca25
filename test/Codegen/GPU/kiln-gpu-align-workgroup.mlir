// RUN: kiln-opt %s -pass-pipeline='builtin.module(gpu.module(gpu.func(kiln-gpu-align-workgroup)))' | FileCheck %s
// RUN: kiln-opt %s -pass-pipeline='builtin.module(gpu.module(gpu.func(kiln-gpu-align-workgroup),convert-gpu-to-nvvm))' | FileCheck %s --check-prefix=NVVM

// Every workgroup buffer is aligned to 16 bytes (cp.async and ldmatrix
// need it; an f16 buffer alone would be aligned to 2), and one already
// aligned further keeps its alignment. Private buffers are left alone.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME: workgroup(%{{.*}} : memref<40xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<8xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>> {llvm.align = 64 : i64})
// CHECK-SAME: private(%{{.*}} : memref<2xf32, #gpu.address_space<private>>)
// NVVM: llvm.mlir.global internal @__wg_k_0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<40 x f16>
// NVVM: llvm.mlir.global internal @__wg_k_1() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<8 x f16>
// NVVM: llvm.mlir.global internal @__wg_k_2() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<4 x f32>
gpu.module @m {
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

// A kernel with wgmma: its buffers start on 1024-byte boundaries, where
// the swizzled layouts' pattern repeats.
// CHECK-LABEL: gpu.func @wg
// CHECK-SAME: workgroup(%{{.*}} : memref<8192xf16, #gpu.address_space<workgroup>> {llvm.align = 1024 : i64})
gpu.module @m2 {
  gpu.func @wg(%d: i64) workgroup(%s : memref<8192xf16, #gpu.address_space<workgroup>>) kernel {
    %z = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
    %r = nvvm.wgmma.mma_async %d, %d, %z, #nvvm.shape<m = 64, n = 16, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
    gpu.return
  }
}
