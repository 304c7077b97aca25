// RUN: kiln-opt %s -split-input-file -kiln-nvvm-to-emulator -verify-diagnostics | FileCheck %s

// Special registers, the barrier and shuffles become calls through the
// hook table (hook 0 with the register's number, hook 1, hook 2 with the
// shuffle's kind); pointers lose their address
// space; shared memory becomes a thread-local global; libdevice calls
// become C library calls, and rsqrt gets a definition.

// CHECK: llvm.mlir.global external @kiln_emu_hooks() {{.*}} : !llvm.array<3 x ptr>
// CHECK: llvm.mlir.global internal thread_local @smem() {{.*}} : !llvm.array<32 x f32>
// CHECK-LABEL: llvm.func @k(%{{.*}}: !llvm.ptr)
// CHECK-NOT: nvvm.
// CHECK: %[[R:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[T:.*]] = llvm.mlir.addressof @kiln_emu_hooks : !llvm.ptr
// CHECK: %[[S:.*]] = llvm.getelementptr %[[T]][0, 0]
// CHECK: %[[F:.*]] = llvm.load %[[S]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.call %[[F]](%[[R]]) : !llvm.ptr, (i32) -> i32
// CHECK: llvm.mlir.constant(6 : i32) : i32
// CHECK: llvm.getelementptr %{{.*}}[0, 1]
// CHECK: llvm.call %{{.*}}() : !llvm.ptr, () -> ()
// CHECK: %[[K:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.getelementptr %{{.*}}[0, 2]
// CHECK: %[[P:.*]] = llvm.call %{{.*}}(%[[K]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (i32, i32, i32, i32, i32) -> i64
// CHECK: llvm.trunc %[[P]] : i64 to i32
// CHECK: llvm.call @expf(
// CHECK: llvm.call @__nv_rsqrtf(
// CHECK: llvm.func @expf(f32) -> f32
// CHECK: llvm.func internal @__nv_rsqrtf(%{{.*}}: f32) -> f32
// CHECK:   llvm.intr.sqrt
// CHECK:   llvm.fdiv
llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<32 x f32>
llvm.func @k(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %bid = nvvm.read.ptx.sreg.ctaid.x : i32
  %sum = llvm.add %tid, %bid : i32
  %f = llvm.sitofp %sum : i32 to f32
  %s = llvm.mlir.addressof @smem : !llvm.ptr<3>
  %g = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr
  llvm.store %f, %g : f32, !llvm.ptr
  nvvm.barrier0
  %m = llvm.mlir.constant(-1 : i32) : i32
  %o = llvm.mlir.constant(1 : i32) : i32
  %c = llvm.mlir.constant(31 : i32) : i32
  %x = nvvm.shfl.sync bfly %m, %sum, %o, %c : i32 -> i32
  %e = llvm.call @__nv_expf(%f) : (f32) -> f32
  %r = llvm.call @__nv_rsqrtf(%e) : (f32) -> f32
  llvm.store %r, %p : f32, !llvm.ptr<1>
  llvm.return
}
llvm.func @__nv_expf(f32) -> f32
llvm.func @__nv_rsqrtf(f32) -> f32

// -----

// An NVVM operation the emulator does not implement is an error naming it.
llvm.func @clock() -> i32 attributes {nvvm.kernel} {
  // expected-error @+1 {{is not implemented by the kernel emulator}}
  %r = nvvm.read.ptx.sreg.clock : i32
  llvm.return %r : i32
}
