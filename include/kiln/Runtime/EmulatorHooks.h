/*===- EmulatorHooks.h - the kernel emulator's calling contract ----*- C -*-===*
 *
 * GPU kernels compiled for the emulator (`kiln-nvvm-to-emulator`) call the
 * runtime through a table of function pointers, the global
 * `kiln_emu_hooks` of their shared object, which the runtime fills after
 * loading it. Each kernel `K` gets an entry `void kiln_emu_K(void **params)`
 * whose `params[i]` points to the value of the kernel's argument i, as
 * `cuLaunchKernel`'s kernelParams do.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_EMULATORHOOKS_H
#define KILN_RUNTIME_EMULATORHOOKS_H

#define KILN_EMU_HOOKS_SYMBOL "kiln_emu_hooks"
#define KILN_EMU_ENTRY_PREFIX "kiln_emu_"

/* Hook numbers (indices into kiln_emu_hooks). */
#define KILN_EMU_HOOK_SREG 0    /* int32_t (*)(int32_t reg) */
#define KILN_EMU_HOOK_BARRIER 1 /* void (*)(void): bar.sync 0 */
/* int64_t (*)(int32_t kind, int32_t mask, int32_t value, int32_t offset,
               int32_t clamp): shfl.sync; kind 0 bfly, 1 up, 2 down, 3 idx
   (NVVM's numbering); the result's low 32 bits are the value read, bit 32
   whether the source lane was in range. */
#define KILN_EMU_HOOK_SHFL 2
/* void (*)(int32_t kind, const uint32_t *in, float *out): mma.sync (or
   mma.sp.sync) of one warp with f32 (or s32) accumulators; `in` holds the
   lane's A, B and C registers in order (each 32 bits), for mma.sp followed by
   its metadata register and the sparsity selector, `out` receives its
   four D registers. */
#define KILN_EMU_HOOK_MMA 3
/* void (*)(int32_t num, int32_t trans, const void *row, uint32_t *out):
   ldmatrix.sync.aligned.m8n8.xNUM[.trans].shared.b16 of one warp; `row` is
   the lane's row address, `out` receives its NUM registers. cp.async
   copies need no hook: the emulator's code copies them at once
   (zero-filling past the source size) and waits on nothing. */
#define KILN_EMU_HOOK_LDMATRIX 4
/* void (*)(int32_t type, int32_t n, int32_t trans, int64_t descA,
            int64_t descB, const void *window, const void *in, void *out):
   wgmma.mma_async.sync.aligned of one lane of a warpgroup (scale-d 1):
   m64nNk16.f32.TYPE.TYPE for f16 and bf16, m64nNk32.s32.s8.s8.satfinite
   and m64nNk32.f32.e4m3.e4m3 (8-bit operands are K-major only), A and B
   in shared memory as the matrix descriptors give them (no swizzling or
   32-, 64- or 128-byte swizzling; bit 0 of `trans` A is M-major, bit 1 B
   is N-major), their start addresses relative to `window`, the
   last shared address the kernel converted to an integer (see
   kiln-nvvm-to-emulator); `in` and `out` hold the lane's N / 2
   accumulator registers (f32, or s32 for s8). The product is made at once:
   wgmma's fences, commits and waits need no hook. */
#define KILN_EMU_HOOK_WGMMA 5
#define KILN_EMU_NUM_HOOKS 6

/* A kernel's dynamic shared memory (the zero-length `.shared` array that
   gpu.dynamic_shared_memory lowers to) becomes a thread-local array of
   this many bytes, the most a block of sm_90 may opt in to (227 KiB); a
   launch that asks for more is refused. */
#define KILN_EMU_DYNAMIC_SHARED_BYTES 232448

/* The multiplicand types of KILN_EMU_HOOK_WGMMA. */
#define KILN_EMU_WGMMA_F16 0
#define KILN_EMU_WGMMA_BF16 1
#define KILN_EMU_WGMMA_S8 2
#define KILN_EMU_WGMMA_E4M3 3

/* The mma shapes and input types, the argument of KILN_EMU_HOOK_MMA. */
#define KILN_EMU_MMA_M16N8K8_TF32 0  /* A: 4 regs, B: 2, C: 4 */
#define KILN_EMU_MMA_M16N8K16_F16 1  /* A: 4 regs (f16x2), B: 2, C: 4 */
#define KILN_EMU_MMA_M16N8K16_BF16 2 /* A: 4 regs (bf16x2), B: 2, C: 4 */
/* mma.sp.sync m16n8k32 (2:4 sparse A, 16 x 16 kept values): A: 4 regs,
   B: 4, C: 4, metadata: 1, selector: 1. */
#define KILN_EMU_MMA_SP_M16N8K32_F16 3
#define KILN_EMU_MMA_SP_M16N8K32_BF16 4
/* mma.sync m16n8k32 row.col s32.s8.s8.s32 .satfinite: A: 4 regs (four s8
   each), B: 2, C: 4 (s32); `out` receives the four D registers' s32 bits. */
#define KILN_EMU_MMA_M16N8K32_S8 5
/* mma.sync m16n8k32 row.col f32.e4m3.e4m3.f32: A: 4 regs (four float8
   e4m3 each), B: 2, C: 4 (f32). */
#define KILN_EMU_MMA_M16N8K32_E4M3 6
/* mma.sp.sync m16n8k64 row.col s32.s8.s8.s32 .satfinite (2:4 sparse A,
   16 x 32 kept bytes): A: 4 regs (four s8 each), B: 4, C: 4 (s32),
   metadata: 1, selector: 1 (0); `out` receives the D registers' s32 bits. */
#define KILN_EMU_MMA_SP_M16N8K64_S8 7

/* Special registers, the argument of KILN_EMU_HOOK_SREG. */
#define KILN_EMU_SREG_TID_X 0
#define KILN_EMU_SREG_TID_Y 1
#define KILN_EMU_SREG_TID_Z 2
#define KILN_EMU_SREG_NTID_X 3
#define KILN_EMU_SREG_NTID_Y 4
#define KILN_EMU_SREG_NTID_Z 5
#define KILN_EMU_SREG_CTAID_X 6
#define KILN_EMU_SREG_CTAID_Y 7
#define KILN_EMU_SREG_CTAID_Z 8
#define KILN_EMU_SREG_NCTAID_X 9
#define KILN_EMU_SREG_NCTAID_Y 10
#define KILN_EMU_SREG_NCTAID_Z 11
#define KILN_EMU_SREG_LANEID 12
#define KILN_EMU_SREG_WARPSIZE 13

#endif /* KILN_RUNTIME_EMULATORHOOKS_H */
