//===- Emulator.cpp - GPU kernels run on the CPU --------------------------===//
//
// The emulator runs the host-code build of a module's kernels (the NVVM
// kernels with every NVVM operation made a hook call; see
// `kiln-nvvm-to-emulator`). Blocks run one after another; the threads of a
// block run one after another too, unless the kernel synchronizes: then
// each thread is a fiber (ucontext) and a barrier switches to the next
// thread until every thread of the block has reached it, as `bar.sync 0`
// requires.
//
//===----------------------------------------------------------------------===//

#include "GpuCode.h"

#include "kiln/Runtime/EmulatorHooks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <ucontext.h>

using namespace kiln::rt;

namespace {

struct FiberScheduler;

/// The value of float8 e4m3 (E4M3FN) bits: exponent bias 7, subnormals,
/// no infinities, NaN where exponent and mantissa are all ones.
double e4m3Value(uint32_t bits) {
  int exp = (bits >> 3) & 0xf, man = bits & 7;
  double sign = bits & 0x80 ? -1 : 1;
  if (exp == 0xf && man == 7)
    return std::nan("");
  if (exp == 0)
    return sign * std::ldexp(man / 8.0, -6);
  return sign * std::ldexp(1 + man / 8.0, exp - 7);
}

/// What the hooks read: the current thread's indices and sizes.
struct ThreadContext {
  unsigned tid[3] = {0, 0, 0}, ntid[3] = {1, 1, 1};
  unsigned ctaid[3] = {0, 0, 0}, nctaid[3] = {1, 1, 1};
  unsigned linear = 0;
  FiberScheduler *scheduler = nullptr;
};

thread_local ThreadContext *current = nullptr;

/// The threads of one block as fibers.
struct FiberScheduler {
  struct Fiber {
    ucontext_t context;
    ThreadContext thread;
    bool done = false, waiting = false;
    // Shuffles: how many this thread has made, and the one it waits in.
    uint32_t shuffles = 0;
    bool inShuffle = false;
    uint32_t shuffleMask = 0;
  };
  static constexpr int kMmaRegs = 14;
  /// Per warp, the values of its lanes' latest two shuffles (a lane can be
  /// at most one shuffle ahead of a lane still reading).
  struct Warp {
    int32_t values[2][32];
    uint32_t count[32];
    // mma.sync: each lane's A, B and C registers, per collective parity,
    // and the product D of the collective `decoded` (computed once, by
    // the first lane that resumes).
    uint32_t mmaRegs[2][32][kMmaRegs];
    float d[16][8];
    int32_t di[16][8]; // the s32 products of m16n8k32 s8
    uint32_t decoded = 0;
    // ldmatrix: each lane's row address, per collective parity, and every
    // lane's registers of the collective `loaded` (read once, by the first
    // lane that resumes, before any lane can write shared memory again).
    const uint16_t *rows[2][32];
    uint32_t fragments[32][4];
    uint32_t loaded = 0;
  };

  static constexpr size_t kStackBytes = 256 * 1024;
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  std::vector<std::unique_ptr<char[]>> stacks;
  ucontext_t scheduler;
  Fiber *running = nullptr;
  void (*entry)(void **) = nullptr;
  void **params = nullptr;
  std::string error;

  static void fiberMain() {
    ThreadContext *t = current;
    FiberScheduler *s = t->scheduler;
    s->entry(s->params);
    s->running->done = true;
    // Returning resumes uc_link: the scheduler.
  }

  void barrier() {
    Fiber *f = running;
    f->waiting = true;
    swapcontext(&f->context, &scheduler);
  }

  /// A warp collective (shuffle, mma): `deposit(slot, lane)` leaves the
  /// running lane's values in the warp's slot (the collective's parity),
  /// then the lane waits until every lane of `mask` has made this
  /// collective. Returns the collective's number.
  template <typename Deposit>
  uint32_t collective(uint32_t mask, Deposit deposit) {
    Fiber *f = running;
    unsigned lane = f->thread.linear % 32;
    uint32_t n = ++f->shuffles;
    deposit(n & 1, lane);
    warps[f->thread.linear / 32].count[lane] = n;
    f->inShuffle = true;
    f->shuffleMask = mask;
    swapcontext(&f->context, &scheduler);
    return n;
  }

  /// shfl.sync as the PTX ISA defines it, for 32-bit values.
  int64_t shuffle(int32_t kind, uint32_t mask, int32_t value, int32_t offset,
                  int32_t clamp) {
    unsigned linear = running->thread.linear, lane = linear % 32;
    Warp &w = warps[linear / 32];
    uint32_t n = collective(
        mask, [&](int slot, unsigned l) { w.values[slot][l] = value; });
    unsigned b = static_cast<unsigned>(offset) & 31, c = clamp & 31,
             segmask = (clamp >> 8) & 31;
    unsigned maxLane = (lane & segmask) | (c & ~segmask);
    unsigned minLane = lane & segmask;
    int j = static_cast<int>(lane);
    bool valid = false;
    switch (kind) {
    case 0: // bfly
      j = static_cast<int>(lane ^ b);
      valid = static_cast<unsigned>(j) <= maxLane;
      break;
    case 1: // up
      j = static_cast<int>(lane) - static_cast<int>(b);
      valid = j >= static_cast<int>(maxLane);
      break;
    case 2: // down
      j = static_cast<int>(lane + b);
      valid = static_cast<unsigned>(j) <= maxLane;
      break;
    default: // idx
      j = static_cast<int>(minLane | (b & ~segmask));
      valid = static_cast<unsigned>(j) <= maxLane;
      break;
    }
    if (!valid)
      j = static_cast<int>(lane);
    uint32_t bits = static_cast<uint32_t>(w.values[n & 1][j]);
    return static_cast<int64_t>(bits) | (valid ? int64_t(1) << 32 : 0);
  }

  /// mma.sync with f32 accumulators (m16n8k8 tf32, m16n8k16 f16/bf16,
  /// row.col) as the PTX ISA lays out its fragments: with g = lane / 4
  /// and t = lane % 4, lane registers hold A (16 x K) elements
  /// (g + 8 (r % 2), k_r), B (K x 8) elements (k_r, g) and C/D elements
  /// (g + 8 (r / 2), 2t + r % 2). Products are summed in double and
  /// rounded once; tf32 inputs keep their top 19 bits (the low 13 mantissa
  /// bits are dropped, as the tensor cores read them). mma.sp.sync
  /// m16n8k32 f16/bf16 (2:4 sparse A) is the same with A's kept values in
  /// place of A, expanded by the metadata (see multiply).
  void mma(int32_t kind, const uint32_t *in, float *out) {
    unsigned linear = running->thread.linear, lane = linear % 32;
    Warp &w = warps[linear / 32];
    size_t words = kind == KILN_EMU_MMA_SP_M16N8K32_F16 ||
                           kind == KILN_EMU_MMA_SP_M16N8K32_BF16 ||
                           kind == KILN_EMU_MMA_SP_M16N8K64_S8
                       ? 14
                       : 10;
    uint32_t n = collective(0xffffffffu, [&](int slot, unsigned l) {
      std::memcpy(w.mmaRegs[slot][l], in, sizeof(uint32_t) * words);
    });
    bool s8 =
        kind == KILN_EMU_MMA_M16N8K32_S8 || kind == KILN_EMU_MMA_SP_M16N8K64_S8;
    if (w.decoded != n) {
      w.decoded = n;
      if (kind == KILN_EMU_MMA_SP_M16N8K64_S8)
        multiplySparseS8(w.mmaRegs[n & 1], w.di);
      else if (s8)
        multiplyS8(w.mmaRegs[n & 1], w.di);
      else if (kind == KILN_EMU_MMA_M16N8K32_E4M3)
        multiplyE4m3(w.mmaRegs[n & 1], w.d);
      else
        multiply(kind, w.mmaRegs[n & 1], w.d);
    }
    unsigned g = lane / 4, t = lane % 4;
    for (unsigned r = 0; r < 4; ++r) {
      unsigned row = g + 8 * (r / 2), col = 2 * t + r % 2;
      if (s8)
        std::memcpy(&out[r], &w.di[row][col], 4);
      else
        out[r] = w.d[row][col];
    }
  }

  /// ldmatrix .m8n8.xNUM(.trans).b16: lanes 8i to 8i + 7 give the rows
  /// of matrix i; with g = lane / 4 and t = lane % 4, register i of a lane
  /// holds elements (g, 2t) and (g, 2t + 1) of matrix i, or with .trans
  /// (2t, g) and (2t + 1, g), the first in the low half.
  void ldmatrix(int32_t num, bool trans, const void *row, uint32_t *out) {
    unsigned linear = running->thread.linear, lane = linear % 32;
    Warp &w = warps[linear / 32];
    uint32_t n = collective(0xffffffffu, [&](int slot, unsigned l) {
      w.rows[slot][l] = static_cast<const uint16_t *>(row);
    });
    if (w.loaded != n) {
      w.loaded = n;
      const uint16_t *const *rows = w.rows[n & 1];
      for (unsigned l = 0; l < 32; ++l) {
        unsigned g = l / 4, t = l % 4;
        for (int i = 0; i < num; ++i) {
          const uint16_t *const *m = rows + 8 * i;
          uint32_t lo = trans ? m[2 * t][g] : m[g][2 * t];
          uint32_t hi = trans ? m[2 * t + 1][g] : m[g][2 * t + 1];
          w.fragments[l][i] = lo | hi << 16;
        }
      }
    }
    for (int i = 0; i < num; ++i)
      out[i] = w.fragments[lane][i];
  }

  /// The A (16 x 32), B (32 x 8) and C (16 x 8) of an m16n8k32 mma of
  /// 8-bit operands from one warp's registers: with g = lane / 4 and
  /// t = lane % 4, A register i holds row g + 8 (i % 2), columns
  /// 4t + 16 (i / 2) to 4t + 16 (i / 2) + 3 (the first in the low byte); B
  /// register i column g, rows 4t + 16 i to 4t + 16 i + 3; C as for the
  /// other shapes. Each byte goes through `byte`, each C register through
  /// `acc`.
  /// With `bRegs` 4 (mma.sp m16n8k64), B's registers are 4 to 7 (rows 0
  /// to 63) and C's 8 to 11.
  template <typename T, typename Byte, typename Acc>
  static void byteFragments(const uint32_t (*regs)[kMmaRegs], Byte byte,
                            Acc acc, T (*a)[32], T (*b)[8], T (*c)[8],
                            unsigned bRegs = 2) {
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned g = lane / 4, t = lane % 4;
      const uint32_t *r = regs[lane];
      for (unsigned i = 0; i < 4; ++i)
        for (unsigned e = 0; e < 4; ++e)
          a[g + 8 * (i % 2)][4 * t + 16 * (i / 2) + e] =
              byte(r[i] >> (8 * e) & 0xff);
      for (unsigned i = 0; i < bRegs; ++i)
        for (unsigned e = 0; e < 4; ++e)
          b[4 * t + 16 * i + e][g] = byte(r[4 + i] >> (8 * e) & 0xff);
      for (unsigned i = 0; i < 4; ++i)
        c[g + 8 * (i / 2)][2 * t + i % 2] = acc(r[4 + bRegs + i]);
    }
  }

  /// D = A * B + C of one warp's registers for m16n8k32 s8 (row.col,
  /// s32 accumulators, .satfinite: a sum past the s32 range is clamped to
  /// it); the fragments of byteFragments.
  static void multiplyS8(const uint32_t (*regs)[kMmaRegs], int32_t (*d)[8]) {
    int32_t a[16][32], b[32][8], c[16][8];
    auto s8 = [](uint32_t bits) {
      return static_cast<int32_t>(static_cast<int8_t>(bits));
    };
    auto s32 = [](uint32_t bits) { return static_cast<int32_t>(bits); };
    byteFragments(regs, s8, s32, a, b, c);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        int64_t sum = c[i][j];
        for (int k = 0; k < 32; ++k)
          sum += static_cast<int64_t>(a[i][k]) * b[k][j];
        sum = std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX);
        d[i][j] = static_cast<int32_t>(sum);
      }
  }

  /// D = A * B + C of one warp's registers for mma.sp m16n8k64 s8
  /// (row.col, s32 accumulators, .satfinite). With g = lane / 4 and
  /// t = lane % 4, A register i holds kept bytes 4t + 16 (i / 2) to
  /// 4t + 16 (i / 2) + 3 of row g + 8 (i % 2) (the kept values of dense
  /// columns 8t + 32 (i / 2) to 8t + 32 (i / 2) + 7); B register i column
  /// g, rows 4t + 16 i to 4t + 16 i + 3; C registers 8 to 11 as for the
  /// other shapes. The metadata (PTX ISA, "sparse mma.m16n8k64 with
  /// .u8/.s8", its metadata figures): the selector is 0 and every lane
  /// gives a word; lane 4g + t holds the groups of row g + 8 (t % 2), dense
  /// columns 32 (t / 2) to 32 (t / 2) + 31, group q of them in bits 4q to
  /// 4q + 3 (the first kept position in the low two bits, the second,
  /// greater one in the high two).
  static void multiplySparseS8(const uint32_t (*regs)[kMmaRegs],
                               int32_t (*d)[8]) {
    int32_t kept[16][32], a[16][64] = {}, b[64][8], c[16][8];
    auto s8 = [](uint32_t bits) {
      return static_cast<int32_t>(static_cast<int8_t>(bits));
    };
    auto s32 = [](uint32_t bits) { return static_cast<int32_t>(bits); };
    // A's registers hold the kept bytes as a dense m16n8k32 A's hold A.
    byteFragments(regs, s8, s32, kept, b, c, /*bRegs=*/4);
    // The kept bytes are all in place: expand them by each lane's word.
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned g = lane / 4, t = lane % 4;
      const uint32_t *r = regs[lane];
      if (r[13] != 0) {
        std::fprintf(stderr,
                     "kiln emulator: mma.sp m16n8k64 with sparsity selector "
                     "%u in lane %u (it must be 0)\n",
                     r[13], lane);
        std::abort();
      }
      unsigned row = g + 8 * (t % 2);
      for (unsigned q = 0; q < 8; ++q) {
        unsigned nib = r[12] >> 4 * q & 0xf, i0 = nib & 3, i1 = nib >> 2;
        if (i0 >= i1) {
          std::fprintf(stderr,
                       "kiln emulator: mma.sp metadata 0x%x of lane %u gives "
                       "positions %u and %u (two increasing positions)\n",
                       r[12], lane, i0, i1);
          std::abort();
        }
        unsigned group = 8 * (t / 2) + q;
        a[row][4 * group + i0] = kept[row][2 * group];
        a[row][4 * group + i1] = kept[row][2 * group + 1];
      }
    }
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        int64_t sum = c[i][j];
        for (int k = 0; k < 64; ++k)
          sum += static_cast<int64_t>(a[i][k]) * b[k][j];
        d[i][j] = static_cast<int32_t>(
            std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX));
      }
  }

  /// D = A * B + C for m16n8k32 e4m3 with f32 accumulators: the fragments
  /// of byteFragments, each byte a float8 e4m3; products summed in double
  /// and rounded once.
  static void multiplyE4m3(const uint32_t (*regs)[kMmaRegs], float (*d)[8]) {
    double a[16][32], b[32][8], c[16][8];
    auto f32 = [](uint32_t bits) {
      float v;
      std::memcpy(&v, &bits, 4);
      return static_cast<double>(v);
    };
    byteFragments(regs, e4m3Value, f32, a, b, c);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        double sum = c[i][j];
        for (int k = 0; k < 32; ++k)
          sum += a[i][k] * b[k][j];
        d[i][j] = static_cast<float>(sum);
      }
  }

  /// D = A * B + C of one warp's registers.
  static void multiply(int32_t kind, const uint32_t (*regs)[kMmaRegs],
                       float (*d)[8]) {
    bool tf32 = kind == KILN_EMU_MMA_M16N8K8_TF32;
    bool sparse = kind == KILN_EMU_MMA_SP_M16N8K32_F16 ||
                  kind == KILN_EMU_MMA_SP_M16N8K32_BF16;
    bool bf16 = kind == KILN_EMU_MMA_M16N8K16_BF16 ||
                kind == KILN_EMU_MMA_SP_M16N8K32_BF16;
    int kSize = tf32 ? 8 : sparse ? 32 : 16;
    int bRegs = sparse ? 4 : 2;
    float a[16][32] = {}, b[32][8], c[16][8];
    auto word = [](uint32_t bits) {
      bits &= 0xffffe000u; // tf32: sign, exponent, 10 mantissa bits
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    };
    auto half = [&](uint32_t bits) {
      return static_cast<float>(
          kiln::rt::halfToDouble(static_cast<uint16_t>(bits), bf16));
    };
    // 16-bit A registers: with g = lane / 4 and t = lane % 4, register i
    // holds row g + 8 (i % 2), columns 2t + 8 (i / 2) and the next: of A
    // itself, or for mma.sp of its 16 x 16 kept values.
    float kept[16][16];
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned g = lane / 4, t = lane % 4;
      const uint32_t *r = regs[lane];
      for (unsigned i = 0; i < 4; ++i) {
        unsigned row = g + 8 * (i % 2);
        if (tf32) {
          a[row][t + 4 * (i / 2)] = word(r[i]);
          continue;
        }
        unsigned k = 2 * t + 8 * (i / 2);
        float *dst = sparse ? kept[row] : a[row];
        dst[k] = half(r[i]);
        dst[k + 1] = half(r[i] >> 16);
      }
      // B registers: column g, rows 2t + 8i and the next (tf32: t + 4i).
      for (int i = 0; i < bRegs; ++i) {
        if (tf32) {
          b[t + 4 * i][g] = word(r[4 + i]);
        } else {
          unsigned k = 2 * t + 8 * i;
          b[k][g] = half(r[4 + i]);
          b[k + 1][g] = half(r[4 + i] >> 16);
        }
      }
      for (unsigned i = 0; i < 4; ++i) {
        float v;
        std::memcpy(&v, &r[4 + bRegs + i], 4);
        c[g + 8 * (i / 2)][2 * t + i % 2] = v;
      }
    }
    if (sparse) {
      // The metadata of m16n8k32 (PTX ISA, "sparse matrix storage"): with
      // selector F (0 or 1), lane 4g + 2F + h holds, in bits 16r + 4c to
      // 16r + 4c + 3, the positions of the two kept values of row g + 8r
      // in its group of four columns 4 (4h + c): the first value's in the
      // low two bits, the second's in the high two, in increasing order
      // (what the PTX ISA defines for every form of mma.sp).
      uint32_t selector = regs[0][13];
      for (unsigned lane = 0; lane < 32; ++lane)
        if (regs[lane][13] != selector || selector > 1) {
          std::fprintf(stderr,
                       "kiln emulator: mma.sp m16n8k32 with sparsity "
                       "selector %u in lane %u, %u in lane 0 (one of 0 and "
                       "1, the same in every lane)\n",
                       regs[lane][13], lane, selector);
          std::abort();
        }
      for (unsigned g = 0; g < 8; ++g)
        for (unsigned h = 0; h < 2; ++h) {
          uint32_t meta = regs[4 * g + 2 * selector + h][12];
          for (unsigned r = 0; r < 2; ++r)
            for (unsigned c4 = 0; c4 < 4; ++c4) {
              unsigned nib = meta >> (16 * r + 4 * c4) & 0xf;
              unsigned i0 = nib & 3, i1 = nib >> 2;
              if (i0 >= i1) {
                std::fprintf(stderr,
                             "kiln emulator: mma.sp metadata 0x%x of lane %u "
                             "gives positions %u and %u (two increasing "
                             "positions)\n",
                             meta, 4 * g + 2 * selector + h, i0, i1);
                std::abort();
              }
              unsigned row = g + 8 * r, group = 4 * h + c4;
              a[row][4 * group + i0] = kept[row][2 * group];
              a[row][4 * group + i1] = kept[row][2 * group + 1];
            }
        }
    }
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        double sum = c[i][j];
        for (int k = 0; k < kSize; ++k)
          sum += static_cast<double>(a[i][k]) * b[k][j];
        d[i][j] = static_cast<float>(sum);
      }
  }

  /// Whether every lane of `f`'s shuffle mask has reached its shuffle.
  bool shuffleReady(const Fiber &f) {
    unsigned base = f.thread.linear / 32 * 32;
    const Warp &w = warps[base / 32];
    for (unsigned l = 0; l < 32; ++l) {
      if (!(f.shuffleMask >> l & 1) || base + l >= fibers.size())
        continue;
      if (w.count[l] < f.shuffles)
        return false;
    }
    return true;
  }

  /// Runs one block to completion; false (with `error`) if its threads
  /// wait on each other forever.
  bool runBlock(const ThreadContext &block, void (*fn)(void **),
                void **kernelParams) {
    entry = fn;
    params = kernelParams;
    size_t n =
        static_cast<size_t>(block.ntid[0]) * block.ntid[1] * block.ntid[2];
    fibers.clear();
    fibers.resize(n);
    warps.assign((n + 31) / 32, Warp{});
    while (stacks.size() < n)
      stacks.emplace_back(new char[kStackBytes]);
    size_t i = 0;
    for (unsigned z = 0; z < block.ntid[2]; ++z)
      for (unsigned y = 0; y < block.ntid[1]; ++y)
        for (unsigned x = 0; x < block.ntid[0]; ++x, ++i) {
          Fiber &f = fibers[i];
          f.thread = block;
          f.thread.tid[0] = x;
          f.thread.tid[1] = y;
          f.thread.tid[2] = z;
          f.thread.linear = static_cast<unsigned>(i);
          f.thread.scheduler = this;
          getcontext(&f.context);
          f.context.uc_stack.ss_sp = stacks[i].get();
          f.context.uc_stack.ss_size = kStackBytes;
          f.context.uc_link = &scheduler;
          makecontext(&f.context, fiberMain, 0);
        }
    size_t remaining = n;
    bool ok = true;
    while (remaining) {
      bool ran = false;
      for (Fiber &f : fibers) {
        if (f.done || f.waiting)
          continue;
        if (f.inShuffle) {
          if (!shuffleReady(f))
            continue;
          f.inShuffle = false;
        }
        ran = true;
        running = &f;
        current = &f.thread;
        swapcontext(&scheduler, &f.context);
        if (f.done)
          --remaining;
      }
      if (ran)
        continue;
      // Nothing could run: a barrier every live thread has reached
      // releases them; anything else waits forever.
      bool allAtBarrier = true;
      for (Fiber &f : fibers)
        allAtBarrier &= f.done || f.waiting;
      if (!allAtBarrier) {
        error = "the threads of a block wait on each other forever (a "
                "shuffle whose mask names a thread that does not reach it, "
                "or a barrier inside divergent code)";
        ok = false;
        break;
      }
      for (Fiber &f : fibers)
        f.waiting = false;
    }
    running = nullptr;
    current = nullptr;
    return ok;
  }
};

int32_t hookSreg(int32_t reg) {
  ThreadContext *t = current;
  if (!t) {
    std::fprintf(stderr, "kiln emulator: a kernel read a special register "
                         "outside a launch\n");
    std::abort();
  }
  switch (reg) {
  case KILN_EMU_SREG_TID_X:
  case KILN_EMU_SREG_TID_Y:
  case KILN_EMU_SREG_TID_Z:
    return static_cast<int32_t>(t->tid[reg - KILN_EMU_SREG_TID_X]);
  case KILN_EMU_SREG_NTID_X:
  case KILN_EMU_SREG_NTID_Y:
  case KILN_EMU_SREG_NTID_Z:
    return static_cast<int32_t>(t->ntid[reg - KILN_EMU_SREG_NTID_X]);
  case KILN_EMU_SREG_CTAID_X:
  case KILN_EMU_SREG_CTAID_Y:
  case KILN_EMU_SREG_CTAID_Z:
    return static_cast<int32_t>(t->ctaid[reg - KILN_EMU_SREG_CTAID_X]);
  case KILN_EMU_SREG_NCTAID_X:
  case KILN_EMU_SREG_NCTAID_Y:
  case KILN_EMU_SREG_NCTAID_Z:
    return static_cast<int32_t>(t->nctaid[reg - KILN_EMU_SREG_NCTAID_X]);
  case KILN_EMU_SREG_LANEID:
    return static_cast<int32_t>(t->linear % 32);
  case KILN_EMU_SREG_WARPSIZE:
    return 32;
  }
  std::fprintf(stderr, "kiln emulator: unknown special register %d\n", reg);
  std::abort();
}

int64_t hookShuffle(int32_t kind, int32_t mask, int32_t value, int32_t offset,
                    int32_t clamp) {
  ThreadContext *t = current;
  if (!t || !t->scheduler) {
    std::fprintf(stderr, "kiln emulator: a shuffle in a kernel the module "
                         "says does not synchronize\n");
    std::abort();
  }
  return t->scheduler->shuffle(kind, static_cast<uint32_t>(mask), value, offset,
                               clamp);
}

void hookMma(int32_t kind, const uint32_t *in, float *out) {
  ThreadContext *t = current;
  if (!t || !t->scheduler) {
    std::fprintf(stderr, "kiln emulator: an mma in a kernel the module "
                         "says does not synchronize\n");
    std::abort();
  }
  if (kind < KILN_EMU_MMA_M16N8K8_TF32 || kind > KILN_EMU_MMA_SP_M16N8K64_S8) {
    std::fprintf(stderr, "kiln emulator: unknown mma kind %d\n", kind);
    std::abort();
  }
  t->scheduler->mma(kind, in, out);
}

void hookLdmatrix(int32_t num, int32_t trans, const void *row, uint32_t *out) {
  ThreadContext *t = current;
  if (!t || !t->scheduler) {
    std::fprintf(stderr, "kiln emulator: an ldmatrix in a kernel the module "
                         "says does not synchronize\n");
    std::abort();
  }
  if (num != 1 && num != 2 && num != 4) {
    std::fprintf(stderr, "kiln emulator: ldmatrix of %d matrices\n", num);
    std::abort();
  }
  t->scheduler->ldmatrix(num, trans != 0, row, out);
}

/// wgmma.mma_async m64nNk16 (f16 or bf16 in, f32 accumulators) or
/// m64nNk32 (s8 in, s32 accumulators clamped to their range; e4m3 in, f32
/// accumulators) for the running lane, A and B read from shared memory as their
/// descriptors lay them out (the PTX ISA's canonical layouts, with T the
/// 16-byte chunk):
///
///   no swizzling: core matrices of 8 rows of one chunk (8 16-bit or 16
///     8-bit elements), 128 contiguous bytes, the "leading dimension byte
///     offset" (LBO) between core matrices along K, the "stride dimension byte
///     offset" (SBO) between those along M (A) or N (B); a K-major core
///     matrix's rows run along K, a transposed (M- or N-major) one's along M or
///     N;
///   W-byte swizzling (W = 32, 64, 128): K-major, rows of W bytes along K,
///     8 rows apart by W, groups of 8 rows SBO apart; MN-major, rows of W
///     bytes along M or N, 8 rows (k) W apart, groups of 8 k SBO apart and
///     groups of W / 2 elements along M or N LBO apart; then the chunk
///     index (address bits 4 and up, log2(W / 16) of them) is XORed with
///     the same bits of the address's 128-byte row (bits 7 and up).
///
/// Addresses are the window's (see kiln-nvvm-to-emulator), which the
/// kernel aligns as the hardware's are, so the swizzle sees the same bits.
/// With w the lane's warp in its warpgroup, g = lane / 4 and t = lane % 4,
/// accumulator register j is row 16w + g + 8 ((j % 4) / 2), column
/// 8 (j / 4) + 2t + j % 2. Each lane's outputs need no other lane's
/// registers, so the product is made lane by lane, at once (hardware may
/// read shared memory until the wait; a kernel that writes the tiles
/// before then is wrong either way).
void hookWgmma(int32_t type, int32_t n, int32_t trans, int64_t descA,
               int64_t descB, const uint8_t *window, const void *in,
               void *out) {
  ThreadContext *t = current;
  if (!t || !t->scheduler) {
    std::fprintf(stderr, "kiln emulator: a wgmma in a kernel the module says "
                         "does not synchronize\n");
    std::abort();
  }
  if (!window) {
    std::fprintf(stderr, "kiln emulator: a wgmma before the kernel made its "
                         "shared buffer's address an integer\n");
    std::abort();
  }
  if (type < KILN_EMU_WGMMA_F16 || type > KILN_EMU_WGMMA_E4M3 ||
      (type >= KILN_EMU_WGMMA_S8 && trans)) {
    std::fprintf(stderr, "kiln emulator: wgmma of type %d (trans %d)\n", type,
                 trans);
    std::abort();
  }
  // Bytes an element; k of one product: 32 bytes.
  unsigned eb = type >= KILN_EMU_WGMMA_S8 ? 1 : 2, kSize = 32 / eb;
  struct Operand {
    const uint8_t *window;
    uint64_t start, lbo, sbo, width; // width 0: no swizzling
    bool trans;
    int32_t type;
    unsigned eb, chunk; // bytes an element, elements a 16-byte chunk
    // Element (mn, k) of the operand: A's (row, k), B's (column, k).
    double at(unsigned mn, unsigned k) const {
      uint64_t byte;
      if (!width)
        byte = start + mn / 8 * sbo + k / chunk * lbo +
               (trans ? k % 8 * 16 + mn % 8 * 2 : mn % 8 * 16 + k % chunk * eb);
      else if (!trans)
        byte = start + mn / 8 * sbo + mn % 8 * width + k * eb;
      else
        byte = start + mn / (width / 2) * lbo + mn % (width / 2) * 2 +
               k / 8 * sbo + k % 8 * width;
      if (width)
        byte ^= (byte >> 7 & (width / 16 - 1)) << 4;
      if (type == KILN_EMU_WGMMA_S8)
        return static_cast<int8_t>(window[byte]);
      if (type == KILN_EMU_WGMMA_E4M3)
        return e4m3Value(window[byte]);
      uint16_t bits;
      std::memcpy(&bits, window + byte, 2);
      return kiln::rt::halfToDouble(bits, type == KILN_EMU_WGMMA_BF16);
    }
  };
  auto operand = [&](int64_t desc, bool transposed, const char *name) {
    auto d = static_cast<uint64_t>(desc);
    if (d >> 49 & 7) {
      std::fprintf(stderr,
                   "kiln emulator: wgmma descriptor 0x%llx of %s: a matrix "
                   "base offset is not emulated\n",
                   static_cast<unsigned long long>(d), name);
      std::abort();
    }
    static constexpr uint64_t widths[4] = {0, 128, 64, 32};
    return Operand{window,
                   (d & 0x3fff) << 4,
                   (d >> 16 & 0x3fff) << 4,
                   (d >> 32 & 0x3fff) << 4,
                   widths[d >> 62],
                   transposed,
                   type,
                   eb,
                   16 / eb};
  };
  Operand a = operand(descA, trans & 1, "A"),
          b = operand(descB, trans & 2, "B");
  unsigned lane = t->linear % 32, w = t->linear / 32 % 4;
  unsigned g = lane / 4, q = lane % 4;
  double aRows[2][32];
  for (unsigned r = 0; r < 2; ++r)
    for (unsigned k = 0; k < kSize; ++k)
      aRows[r][k] = a.at(16 * w + g + 8 * r, k);
  for (int j = 0; j < n / 2; ++j) {
    unsigned r = (j % 4) / 2, col = 8 * (j / 4) + 2 * q + j % 2;
    if (type == KILN_EMU_WGMMA_S8) {
      // Exact integer products and sums, clamped to s32 (.satfinite).
      int64_t sum = static_cast<const int32_t *>(in)[j];
      for (unsigned k = 0; k < kSize; ++k)
        sum += static_cast<int64_t>(aRows[r][k]) *
               static_cast<int64_t>(b.at(col, k));
      static_cast<int32_t *>(out)[j] =
          static_cast<int32_t>(std::clamp<int64_t>(sum, INT32_MIN, INT32_MAX));
      continue;
    }
    // Products summed in double and rounded once.
    double sum = static_cast<const float *>(in)[j];
    for (unsigned k = 0; k < kSize; ++k)
      sum += aRows[r][k] * b.at(col, k);
    static_cast<float *>(out)[j] = static_cast<float>(sum);
  }
}

void hookBarrier() {
  ThreadContext *t = current;
  if (!t || !t->scheduler) {
    std::fprintf(stderr, "kiln emulator: a barrier in a kernel the module "
                         "says does not synchronize\n");
    std::abort();
  }
  t->scheduler->barrier();
}

class EmulatorBackend : public Backend {
public:
  explicit EmulatorBackend(std::shared_ptr<GpuCode> code)
      : code(std::move(code)) {}

  Status run(void *const *buffers,
             std::vector<LaunchProfile> *profile) override {
    std::lock_guard<std::mutex> lock(code->emulatorRuns);
    std::vector<void *> values;
    std::vector<void *> params;
    auto start = std::chrono::steady_clock::now();
    for (const GpuLaunch &launch : code->launches) {
      auto t0 = std::chrono::steady_clock::now();
      const GpuKernel &kernel = code->kernels[launch.kernel];
      values.resize(launch.args.size());
      params.resize(launch.args.size());
      for (size_t i = 0; i < launch.args.size(); ++i) {
        const GpuArg &a = launch.args[i];
        uint8_t *base = a.buffer < 0
                            ? code->constants
                            : static_cast<uint8_t *>(buffers[a.buffer]);
        values[i] = base + a.offset;
        params[i] = &values[i];
      }
      ThreadContext block;
      for (int d = 0; d < 3; ++d) {
        block.ntid[d] = launch.block[d];
        block.nctaid[d] = launch.grid[d];
      }
      for (unsigned bz = 0; bz < launch.grid[2]; ++bz)
        for (unsigned by = 0; by < launch.grid[1]; ++by)
          for (unsigned bx = 0; bx < launch.grid[0]; ++bx) {
            block.ctaid[0] = bx;
            block.ctaid[1] = by;
            block.ctaid[2] = bz;
            if (kernel.synchronizes) {
              if (!scheduler.runBlock(block, kernel.emulatorEntry,
                                      params.data()))
                return Status::error(
                    "kernel '" + kernel.name + "', block (" +
                    std::to_string(bx) + ", " + std::to_string(by) + ", " +
                    std::to_string(bz) + "): " + scheduler.error);
              continue;
            }
            ThreadContext t = block;
            current = &t;
            unsigned i = 0;
            for (unsigned z = 0; z < block.ntid[2]; ++z)
              for (unsigned y = 0; y < block.ntid[1]; ++y)
                for (unsigned x = 0; x < block.ntid[0]; ++x, ++i) {
                  t.tid[0] = x;
                  t.tid[1] = y;
                  t.tid[2] = z;
                  t.linear = i;
                  kernel.emulatorEntry(params.data());
                }
            current = nullptr;
          }
      if (profile) {
        auto t1 = std::chrono::steady_clock::now();
        profile->push_back(launchProfile(
            *code, launch,
            std::chrono::duration<double, std::milli>(t0 - start).count(),
            std::chrono::duration<double, std::milli>(t1 - t0).count()));
      }
    }
    return Status::success();
  }

private:
  std::shared_ptr<GpuCode> code;
  FiberScheduler scheduler;
};
} // namespace

Status kiln::rt::initEmulatorObject(void *handle) {
  auto *table = static_cast<void **>(dlsym(handle, KILN_EMU_HOOKS_SYMBOL));
  if (!table)
    return Status::error("the module's emulator code lacks its hook table");
  table[KILN_EMU_HOOK_SREG] = reinterpret_cast<void *>(&hookSreg);
  table[KILN_EMU_HOOK_BARRIER] = reinterpret_cast<void *>(&hookBarrier);
  table[KILN_EMU_HOOK_SHFL] = reinterpret_cast<void *>(&hookShuffle);
  table[KILN_EMU_HOOK_MMA] = reinterpret_cast<void *>(&hookMma);
  table[KILN_EMU_HOOK_LDMATRIX] = reinterpret_cast<void *>(&hookLdmatrix);
  table[KILN_EMU_HOOK_WGMMA] = reinterpret_cast<void *>(&hookWgmma);
  return Status::success();
}

std::unique_ptr<Backend>
kiln::rt::createEmulatorBackend(std::shared_ptr<GpuCode> code, Status &status) {
  if (!code->emulatorHandle && !code->kernels.empty()) {
    status = Status::error("the module holds no emulator code (compiled "
                           "with --emulator-code=false?)");
    return nullptr;
  }
  for (const GpuLaunch &launch : code->launches)
    if (launch.sharedBytes > KILN_EMU_DYNAMIC_SHARED_BYTES) {
      status = Status::error(
          "kernel '" + code->kernels[launch.kernel].name +
          "' is launched with " + std::to_string(launch.sharedBytes) +
          " bytes of dynamic shared memory; the emulator gives at most " +
          std::to_string(KILN_EMU_DYNAMIC_SHARED_BYTES));
      return nullptr;
    }
  status = Status::success();
  return std::make_unique<EmulatorBackend>(std::move(code));
}
