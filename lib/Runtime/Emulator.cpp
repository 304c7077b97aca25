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

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <ucontext.h>

using namespace kiln::rt;

namespace {

struct FiberScheduler;

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
  /// Per warp, the values of its lanes' latest two shuffles (a lane can be
  /// at most one shuffle ahead of a lane still reading).
  struct Warp {
    int32_t values[2][32];
    uint32_t count[32];
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

  /// shfl.sync as the PTX ISA defines it, for 32-bit values.
  int64_t shuffle(int32_t kind, uint32_t mask, int32_t value, int32_t offset,
                  int32_t clamp) {
    Fiber *f = running;
    unsigned linear = f->thread.linear, lane = linear % 32;
    Warp &w = warps[linear / 32];
    uint32_t n = ++f->shuffles;
    w.values[n & 1][lane] = value;
    w.count[lane] = n;
    f->inShuffle = true;
    f->shuffleMask = mask;
    // Wait until every lane of the mask has made this shuffle.
    swapcontext(&f->context, &scheduler);
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
  return Status::success();
}

std::unique_ptr<Backend>
kiln::rt::createEmulatorBackend(std::shared_ptr<GpuCode> code, Status &status) {
  if (!code->emulatorHandle && !code->kernels.empty()) {
    status = Status::error("the module holds no emulator code (compiled "
                           "with --emulator-code=false?)");
    return nullptr;
  }
  status = Status::success();
  return std::make_unique<EmulatorBackend>(std::move(code));
}
