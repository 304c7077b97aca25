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

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
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
  };
  static constexpr size_t kStackBytes = 256 * 1024;
  std::vector<Fiber> fibers;
  std::vector<std::unique_ptr<char[]>> stacks;
  ucontext_t scheduler;
  Fiber *running = nullptr;
  void (*entry)(void **) = nullptr;
  void **params = nullptr;

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

  /// Runs one block to completion.
  void runBlock(const ThreadContext &block, void (*fn)(void **),
                void **kernelParams) {
    entry = fn;
    params = kernelParams;
    size_t n = static_cast<size_t>(block.ntid[0]) * block.ntid[1] *
               block.ntid[2];
    fibers.clear();
    fibers.resize(n);
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
    while (remaining) {
      bool ran = false;
      for (Fiber &f : fibers) {
        if (f.done || f.waiting)
          continue;
        ran = true;
        running = &f;
        current = &f.thread;
        swapcontext(&scheduler, &f.context);
        if (f.done)
          --remaining;
      }
      if (!ran) {
        // Every live thread waits at the barrier: release them all.
        for (Fiber &f : fibers)
          f.waiting = false;
      }
    }
    running = nullptr;
    current = nullptr;
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

  Status run(void *const *buffers) override {
    std::vector<void *> values;
    std::vector<void *> params;
    for (const GpuLaunch &launch : code->launches) {
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
              scheduler.runBlock(block, kernel.emulatorEntry, params.data());
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
    }
    return Status::success();
  }

private:
  std::shared_ptr<GpuCode> code;
  FiberScheduler scheduler;
};
} // namespace

Status kiln::rt::initEmulatorObject(void *handle) {
  auto *table =
      static_cast<void **>(dlsym(handle, KILN_EMU_HOOKS_SYMBOL));
  if (!table)
    return Status::error("the module's emulator code lacks its hook table");
  table[KILN_EMU_HOOK_SREG] = reinterpret_cast<void *>(&hookSreg);
  table[KILN_EMU_HOOK_BARRIER] = reinterpret_cast<void *>(&hookBarrier);
  return Status::success();
}

std::unique_ptr<Backend>
kiln::rt::createEmulatorBackend(std::shared_ptr<GpuCode> code,
                                Status &status) {
  if (!code->emulatorHandle && !code->kernels.empty()) {
    status = Status::error("the module holds no emulator code (compiled "
                           "with --emulator-code=false?)");
    return nullptr;
  }
  status = Status::success();
  return std::make_unique<EmulatorBackend>(std::move(code));
}
