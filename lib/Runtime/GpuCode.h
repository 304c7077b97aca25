//===- GpuCode.h - the runtime's view of a GPU module (internal) -*- C++
//-*-===//

#ifndef KILN_RUNTIME_GPUCODE_H
#define KILN_RUNTIME_GPUCODE_H

#include "kiln/Runtime/Runtime.h"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln {
namespace rt {

/// One kernel argument: `buffer` (an index into the run's buffers, or -1
/// for the weights) plus a byte offset.
struct GpuArg {
  int buffer = -1;
  int64_t offset = 0;
};

struct GpuLaunch {
  int kernel = 0;
  std::array<unsigned, 3> grid{1, 1, 1}, block{1, 1, 1};
  unsigned sharedBytes = 0;
  std::vector<GpuArg> args;
};

struct GpuKernel {
  std::string name;
  bool synchronizes = false;
  bool tensorCores = false; ///< multiplies on tensor cores (mma.sync)
  /// What one launch computes and moves, from the compiler (-1: unknown).
  double flops = -1, bytes = -1;
  /// The emulator's entry, once its code is loaded.
  void (*emulatorEntry)(void **) = nullptr;
};

/// A GPU module as loaded: kernels, launches, weights, code.
struct GpuCode {
  std::string chip;
  std::vector<GpuKernel> kernels;
  std::vector<GpuLaunch> launches;
  /// The weights, in host memory (256-byte aligned). The emulator's
  /// kernels also write in them: the split products' counters
  /// (`@kiln_split_k_counters`), which each kernel leaves at zero.
  std::unique_ptr<uint8_t[]> constantsStorage;
  uint8_t *constants = nullptr;
  size_t constantsBytes = 0;
  /// Held while the emulator runs this code: its sessions share the
  /// counters among the weights, so they run one at a time.
  std::mutex emulatorRuns;
  std::string ptx, cubin;
  /// The emulator's shared object, or null when the module has none.
  void *emulatorHandle = nullptr;
  /// Why a module with emulator code has no emulatorHandle (its CPU
  /// extensions are not this CPU's), or empty.
  std::string emulatorUnavailable;
  /// The byte size of each buffer a launch may name, in order: inputs,
  /// outputs, extents, arena.
  std::vector<size_t> bufferBytes;
  size_t numInputs = 0, numOutputs = 0, numExtents = 0;
  ~GpuCode();
};

/// The profile of one launch of `code`: its kernel's name and counted
/// costs, grid and block, at `startMs` for `ms`.
inline LaunchProfile launchProfile(const GpuCode &code, const GpuLaunch &launch,
                                   double startMs, double ms) {
  const GpuKernel &kernel = code.kernels[launch.kernel];
  LaunchProfile p;
  p.kernel = kernel.name;
  p.flops = kernel.flops;
  p.bytes = kernel.bytes;
  p.tensorCores = kernel.tensorCores;
  for (int d = 0; d < 3; ++d) {
    p.grid[d] = launch.grid[d];
    p.block[d] = launch.block[d];
  }
  p.startMs = startMs;
  p.ms = ms;
  return p;
}

/// A device a session runs GPU code on. `buffers` are the run's host
/// buffers in the order of `GpuCode::bufferBytes`.
class Backend {
public:
  virtual ~Backend();
  /// Runs the launch plan; with `profile`, times each launch into it.
  virtual Status run(void *const *buffers,
                     std::vector<LaunchProfile> *profile) = 0;
  /// Enqueues the plan on `stream` with the inputs and outputs at the
  /// caller's device addresses (CUDA only).
  virtual Status runOnDevice(const uint64_t *inputs, const uint64_t *outputs,
                             void *stream) {
    return Status::error("runOnDevice needs a CUDA session");
  }
};

/// Fills the emulator's hook table of a loaded emulator object.
Status initEmulatorObject(void *handle);
std::unique_ptr<Backend> createEmulatorBackend(std::shared_ptr<GpuCode> code,
                                               Status &status);
/// The roofline's ceilings on the CUDA device (see `measurePeaks`), and
/// the PTX of the micro-benchmarks it runs.
Status measureCudaPeaks(DevicePeaks &out);
const std::string &cudaCalibrationPtx();
std::unique_ptr<Backend> createCudaBackend(std::shared_ptr<GpuCode> code,
                                           Status &status);

} // namespace rt
} // namespace kiln

#endif // KILN_RUNTIME_GPUCODE_H
