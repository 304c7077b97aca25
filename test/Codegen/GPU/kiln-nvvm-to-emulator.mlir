// RUN: kiln-opt %s -split-input-file -kiln-nvvm-to-emulator -verify-diagnostics | FileCheck %s

// Special registers, the barrier and shuffles become calls through the
// hook table (hook 0 with the register's number, hook 1, hook 2 with the
// shuffle's kind); pointers lose their address
// space; shared memory becomes a thread-local global; libdevice calls
// become C library calls, and rsqrt gets a definition.

// CHECK: llvm.mlir.global external @kiln_emu_hooks() {{.*}} : !llvm.array<6 x ptr>
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

// Dynamic shared memory (an external zero-length array) becomes an
// internal thread-local array of the most a launch may ask for (227 KiB;
// the runtime refuses launches that ask for more).
// CHECK: llvm.mlir.global internal thread_local @__dynamic_shmem__0() {addr_space = 0 : i32, alignment = 1024 : i64} : !llvm.array<232448 x i8>
// CHECK-LABEL: llvm.func @dyn(
llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
llvm.func @dyn(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %s = llvm.mlir.addressof @__dynamic_shmem__0 : !llvm.ptr<3>
  %v = llvm.load %s : !llvm.ptr<3> -> i8
  llvm.store %v, %p : i8, !llvm.ptr<1>
  llvm.return
}

// -----

// mma.sync (tf32 m16n8k8, f16 m16n8k16) becomes hook 3 with the kind
// (0, 1), the lane's ten A, B and C registers stored as 32-bit words into
// a stack array made in the entry block, and the four D registers loaded
// back from another.
// CHECK-LABEL: llvm.func @mma(
// CHECK: llvm.alloca %{{.*}} x i32
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr
// CHECK: %[[KIND:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.getelementptr %{{.*}}[0, 3]
// CHECK: llvm.call %{{.*}}(%[[KIND]], %{{.*}}, %{{.*}}) : !llvm.ptr, (i32, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: llvm.bitcast %{{.*}} : vector<2xf16> to i32
// CHECK: llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.call
// CHECK-NOT: nvvm.
llvm.func @mma(%a: i32, %c: f32, %h: vector<2xf16>, %p: !llvm.ptr) attributes {nvvm.kernel} {
  %d = nvvm.mma.sync A[%a, %a, %a, %a] B[%a, %a] C[%c, %c, %c, %c]
    {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
     multiplicandAPtxType = #nvvm.mma_type<tf32>,
     multiplicandBPtxType = #nvvm.mma_type<tf32>,
     shape = #nvvm.shape<m = 16, n = 8, k = 8>}
    : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
  %e = nvvm.mma.sync A[%h, %h, %h, %h] B[%h, %h] C[%c, %c, %c, %c]
    {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
     shape = #nvvm.shape<m = 16, n = 8, k = 16>}
    : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
  %x = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
  %y = llvm.extractvalue %e[3] : !llvm.struct<(f32, f32, f32, f32)>
  %z = llvm.fadd %x, %y : f32
  llvm.store %z, %p : f32, !llvm.ptr
  llvm.return
}

// -----

// mma.sp.sync m16n8k32 (f16, bf16) becomes hook 3 with kind 3 or 4: 14
// words, the A, B and C registers, then the metadata and the selector.
// CHECK-LABEL: llvm.func @mma_sp(
// CHECK-DAG: %[[N:.*]] = llvm.mlir.constant(14 : i32) : i32
// CHECK-DAG: llvm.alloca %[[N]] x i32
// CHECK: llvm.getelementptr %{{.*}}[12] : (!llvm.ptr) -> !llvm.ptr, i32
// CHECK: llvm.store %[[META:.*]], %{{.*}} : i32, !llvm.ptr
// CHECK: llvm.getelementptr %{{.*}}[13] : (!llvm.ptr) -> !llvm.ptr, i32
// CHECK: llvm.store %[[SEL:.*]], %{{.*}} : i32, !llvm.ptr
// CHECK: %[[KIND:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK: llvm.call %{{.*}}(%[[KIND]], %{{.*}}, %{{.*}}) : !llvm.ptr, (i32, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: llvm.mlir.constant(4 : i32) : i32
// CHECK: llvm.call
// CHECK-NOT: nvvm.
llvm.func @mma_sp(%a: i32, %c: f32, %h: vector<2xf16>, %meta: i32, %p: !llvm.ptr) attributes {nvvm.kernel} {
  %sel = llvm.mlir.constant(0 : i32) : i32
  %d = nvvm.mma.sp.sync A[%h, %h, %h, %h] B[%h, %h, %h, %h] C[%c, %c, %c, %c]
    sparseMetadata[%meta] selector[%sel]
    {shape = #nvvm.shape<m = 16, n = 8, k = 32>}
    : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
  %e = nvvm.mma.sp.sync A[%a, %a, %a, %a] B[%a, %a, %a, %a] C[%c, %c, %c, %c]
    sparseMetadata[%meta] selector[%sel]
    {multiplicandAPtxType = #nvvm.mma_type<bf16>,
     multiplicandBPtxType = #nvvm.mma_type<bf16>,
     shape = #nvvm.shape<m = 16, n = 8, k = 32>}
    : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
  %x = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
  %y = llvm.extractvalue %e[3] : !llvm.struct<(f32, f32, f32, f32)>
  %z = llvm.fadd %x, %y : f32
  llvm.store %z, %p : f32, !llvm.ptr
  llvm.return
}

// -----

// mma.sp.sync m16n8k64 s8 (.satfinite, s32 accumulators) becomes kind 7
// with 14 words, its D registers read back as i32.
// CHECK-LABEL: llvm.func @mma_sp_s8(
// CHECK-DAG: %[[N:.*]] = llvm.mlir.constant(14 : i32) : i32
// CHECK-DAG: llvm.alloca %[[N]] x i32
// CHECK: %[[KIND:.*]] = llvm.mlir.constant(7 : i32) : i32
// CHECK: llvm.call %{{.*}}(%[[KIND]], %{{.*}}, %{{.*}}) : !llvm.ptr, (i32, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK-NOT: nvvm.
llvm.func @mma_sp_s8(%a: i32, %c: i32, %meta: i32, %p: !llvm.ptr) attributes {nvvm.kernel} {
  %sel = llvm.mlir.constant(0 : i32) : i32
  %d = nvvm.mma.sp.sync A[%a, %a, %a, %a] B[%a, %a, %a, %a] C[%c, %c, %c, %c]
    sparseMetadata[%meta] selector[%sel]
    {intOverflowBehavior = #nvvm.mma_int_overflow<satfinite>,
     multiplicandAPtxType = #nvvm.mma_type<s8>,
     multiplicandBPtxType = #nvvm.mma_type<s8>,
     shape = #nvvm.shape<m = 16, n = 8, k = 64>}
    : (i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
  %x = llvm.extractvalue %d[0] : !llvm.struct<(i32, i32, i32, i32)>
  llvm.store %x, %p : i32, !llvm.ptr
  llvm.return
}

// -----

// ldmatrix becomes hook 4 with the number of matrices and whether it
// transposes (layout col), the lane's row address, and a stack array of
// four words that its registers are loaded back from. A cp.async copy is
// made at once: a memcpy of the source size, then a memset of the rest of
// the copy size; without a source size, a memcpy of all of it. Commits
// and waits go.
// CHECK-LABEL: llvm.func @ldmatrix_cp_async(
// CHECK: %[[OUT:.*]] = llvm.alloca %{{.*}} x i32
// CHECK: %[[NUM:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK: %[[TRANS:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.getelementptr %{{.*}}[0, 4]
// CHECK: llvm.call %{{.*}}(%[[NUM]], %[[TRANS]], %{{.*}}, %[[OUT]]) : !llvm.ptr, (i32, i32, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: %[[SIZE:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK: "llvm.intr.memcpy"(%{{.*}}, %{{.*}}, %[[SRC:.*]]) <{isVolatile = false}>
// CHECK: %[[REST:.*]] = llvm.sub %[[SIZE]], %[[SRC]]
// CHECK: %[[TAIL:.*]] = llvm.getelementptr %{{.*}}[%[[SRC]]] : (!llvm.ptr, i32) -> !llvm.ptr, i8
// CHECK: "llvm.intr.memset"(%[[TAIL]], %{{.*}}, %[[REST]]) <{isVolatile = false}>
// CHECK: "llvm.intr.memcpy"(%{{.*}}, %{{.*}}, %{{.*}}) <{isVolatile = false}>
// CHECK-NOT: llvm.intr.memset
// CHECK-NOT: nvvm.
// CHECK: llvm.return
llvm.func @ldmatrix_cp_async(%s: !llvm.ptr<3>, %g: !llvm.ptr<1>, %n: i32, %p: !llvm.ptr) attributes {nvvm.kernel} {
  %l = nvvm.ldmatrix %s {num = 4 : i32, layout = #nvvm.mma_layout<col>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>, eltType = #nvvm.ld_st_matrix_elt_type<b16>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
  %w = llvm.extractvalue %l[2] : !llvm.struct<(i32, i32, i32, i32)>
  llvm.store %w, %p : i32, !llvm.ptr
  nvvm.cp.async.shared.global %s, %g, 16, cache = cg, %n : !llvm.ptr<3>, !llvm.ptr<1>, i32
  nvvm.cp.async.shared.global %s, %g, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
  nvvm.cp.async.commit.group
  nvvm.cp.async.wait.group 0
  llvm.return
}

// -----

// wgmma: the shared buffer's address made an integer is stored as the
// window and becomes 0 (descriptors are offsets from it); each
// wgmma.mma_async becomes hook 5 with the type (0: f16), N, the transpose
// bits (A M-major: 1, B N-major: 2), both descriptors, the window and
// stack arrays of the lane's N / 2 accumulators in and out; the fences,
// commits and waits go (the product is made at once).
// CHECK: llvm.mlir.global internal thread_local @kiln_emu_shared_window() {{.*}} : !llvm.ptr
// CHECK-LABEL: llvm.func @wgmma(
// CHECK: %[[IN:.*]] = llvm.alloca %{{.*}} x f32
// CHECK: %[[OUT:.*]] = llvm.alloca %{{.*}} x f32
// CHECK: %[[W:.*]] = llvm.mlir.addressof @kiln_emu_shared_window : !llvm.ptr
// CHECK: llvm.store %{{.*}}, %[[W]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[Z:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NOT: nvvm.
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK: %[[WIN:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: %[[TY:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[N:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK: %[[TR:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.getelementptr %{{.*}}[0, 5]
// CHECK: llvm.call %{{.*}}(%[[TY]], %[[N]], %[[TR]], %{{.*}}, %{{.*}}, %[[WIN]], %[[IN]], %[[OUT]]) : !llvm.ptr, (i32, i32, i32, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK-COUNT-8: llvm.load %{{.*}} : !llvm.ptr -> f32
llvm.mlir.global internal @tiles() {addr_space = 3 : i32} : !llvm.array<1024 x f16>
llvm.func @wgmma(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %s = llvm.mlir.addressof @tiles : !llvm.ptr<3>
  %base = llvm.ptrtoint %s : !llvm.ptr<3> to i64
  %fields = llvm.mlir.constant(4611686568187396096 : i64) : i64
  %d = llvm.or %base, %fields : i64
  %z = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  nvvm.wgmma.fence.aligned
  %r = nvvm.wgmma.mma_async %d, %d, %z, #nvvm.shape<m = 64, n = 16, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <row>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  %v = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  llvm.store %v, %out : f32, !llvm.ptr<1>
  llvm.return
}

// -----

// A kernel with wgmma may make one shared pointer an integer: the
// emulator reads its descriptors relative to it.
llvm.mlir.global internal @a() {addr_space = 3 : i32} : !llvm.array<64 x f16>
llvm.mlir.global internal @b() {addr_space = 3 : i32} : !llvm.array<64 x f16>
llvm.func @two_windows() attributes {nvvm.kernel} {
  %pa = llvm.mlir.addressof @a : !llvm.ptr<3>
  %pb = llvm.mlir.addressof @b : !llvm.ptr<3>
  %da = llvm.ptrtoint %pa : !llvm.ptr<3> to i64
  // expected-error @+1 {{converts a second shared-memory pointer to an integer in a kernel with wgmma}}
  %db = llvm.ptrtoint %pb : !llvm.ptr<3> to i64
  %z = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  %r = nvvm.wgmma.mma_async %da, %db, %z, #nvvm.shape<m = 64, n = 16, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  llvm.return
}

// -----

// An s8 wgmma (m64nNk32, s32 accumulators, .satfinite) is hook 5 with type
// 2, its accumulators in i32 stack arrays.
// CHECK-LABEL: llvm.func @wgmma_s8(
// CHECK: %[[IN:.*]] = llvm.alloca %{{.*}} x i32
// CHECK: %[[OUT:.*]] = llvm.alloca %{{.*}} x i32
// CHECK-NOT: nvvm.
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr
// CHECK: %[[TY:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.call %{{.*}}(%[[TY]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]])
// CHECK-COUNT-8: llvm.load %{{.*}} : !llvm.ptr -> i32
llvm.mlir.global internal @tiles8() {addr_space = 3 : i32} : !llvm.array<2048 x i8>
llvm.func @wgmma_s8(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %s = llvm.mlir.addressof @tiles8 : !llvm.ptr<3>
  %d = llvm.ptrtoint %s : !llvm.ptr<3> to i64
  %z = llvm.mlir.zero : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)>
  %r = nvvm.wgmma.mma_async %d, %d, %z, #nvvm.shape<m = 64, n = 16, k = 32>, D [<s32>, #nvvm.wgmma_scale_out<one>, <satfinite>], A [<s8>, #nvvm.wgmma_scale_in<one>, <row>], B [<s8>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)> -> !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)>
  %v = llvm.extractvalue %r[0] : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)>
  llvm.store %v, %out : i32, !llvm.ptr<1>
  llvm.return
}

// -----

// An s8 wgmma that wraps instead of clamping (no .satfinite) is not
// modelled.
llvm.mlir.global internal @tiles8w() {addr_space = 3 : i32} : !llvm.array<2048 x i8>
llvm.func @wgmma_s8_wrap() attributes {nvvm.kernel} {
  %s = llvm.mlir.addressof @tiles8w : !llvm.ptr<3>
  %d = llvm.ptrtoint %s : !llvm.ptr<3> to i64
  %z = llvm.mlir.zero : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)>
  // expected-error @+1 {{is not implemented by the kernel emulator}}
  %r = nvvm.wgmma.mma_async %d, %d, %z, #nvvm.shape<m = 64, n = 16, k = 32>, D [<s32>, #nvvm.wgmma_scale_out<one>], A [<s8>, #nvvm.wgmma_scale_in<one>, <row>], B [<s8>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)> -> !llvm.struct<(i32, i32, i32, i32, i32, i32, i32, i32)>
  llvm.return
}

// -----

// A wgmma the emulator does not model (here: the accumulators not added,
// scale-d zero) is an error naming it.
llvm.func @wgmma_scale_zero(%d: i64) attributes {nvvm.kernel} {
  %z = llvm.mlir.zero : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  // expected-error @+1 {{is not implemented by the kernel emulator}}
  %r = nvvm.wgmma.mma_async %d, %d, %z, #nvvm.shape<m = 64, n = 16, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<zero>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
  llvm.return
}

// -----

// An mma the emulator does not model (here: f16 accumulators) is an
// error naming it.
llvm.func @mma_f16_acc(%a: vector<2xf16>) attributes {nvvm.kernel} {
  // expected-error @+1 {{is not implemented by the kernel emulator}}
  %d = nvvm.mma.sync A[%a, %a, %a, %a] B[%a, %a] C[%a, %a]
    {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
     shape = #nvvm.shape<m = 16, n = 8, k = 16>}
    : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> !llvm.struct<(vector<2xf16>, vector<2xf16>)>
  llvm.return
}

// -----

// An NVVM operation the emulator does not implement is an error naming it.
llvm.func @clock() -> i32 attributes {nvvm.kernel} {
  // expected-error @+1 {{is not implemented by the kernel emulator}}
  %r = nvvm.read.ptx.sreg.clock : i32
  llvm.return %r : i32
}

// -----

// The split sum's counting (kiln-gpu-contractions): the GPU-scope fence
// goes (blocks run one after another), and the atomic add stays an
// atomic add on a host pointer.
// CHECK-LABEL: llvm.func @count(%{{.*}}: !llvm.ptr)
// CHECK-NOT: nvvm.memory.barrier
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} acq_rel : !llvm.ptr, i32
// CHECK-NOT: nvvm.memory.barrier
// CHECK: llvm.return
llvm.func @count(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
  nvvm.memory.barrier <gpu>
  %one = llvm.mlir.constant(1 : i32) : i32
  %old = llvm.atomicrmw add %p, %one acq_rel : !llvm.ptr<1>, i32
  nvvm.memory.barrier <gpu>
  llvm.return
}
