//===- Runtime.h - Kiln's C++ runtime API ------------------------*- C++
//-*-===//
//
// Loads a compiled `.kmod` module and runs it on host tensors.
//
//   std::shared_ptr<kiln::rt::Module> module;
//   if (auto s = kiln::rt::Module::load("model.kmod", module); !s.ok())
//     fail(s.message());
//   kiln::rt::Session session(module);
//   std::vector<kiln::rt::HostTensor> outputs;
//   auto s = session.run({{"input", kiln::rt::DType::Float, {1, 3, 32, 32},
//                          data, bytes}}, outputs);
//
// Thread safety: a Module is immutable after load and may be shared by any
// number of threads and sessions. A Session may be used by one thread at a
// time; use one Session per thread to run a module concurrently.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_RUNTIME_H
#define KILN_RUNTIME_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace kmod {
class Module;
} // namespace kmod
namespace rt {

/// The outcome of a runtime call: ok, or an error with a message.
class Status {
public:
  Status() = default;
  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.msg = std::move(message);
    return s;
  }
  bool ok() const { return !failed; }
  const std::string &message() const { return msg; }

private:
  bool failed = false;
  std::string msg;
};

/// Element types, numbered as ONNX's TensorProto.DataType.
enum class DType : int32_t {
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  BFloat16 = 16,
  /// float8 formats (one byte each; ONNX's names): 4 exponent bits and 3
  /// mantissa bits with no infinity (FN) and no negative zero (FNUZ), or
  /// 5 and 2.
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  /// 4- and 2-bit integers, one per byte in a tensor's memory (the code's
  /// layout): the value in the low bits; the high bits of an output's
  /// bytes are unspecified (subByteValue reads one). ONNX files pack them,
  /// two or four to a byte.
  UInt4 = 21,
  Int4 = 22,
  /// A 4-bit float (sign, 2 exponent bits, 1 mantissa bit; at most 6, no
  /// infinity or NaN), one per byte in memory as the 4-bit integers.
  Float4E2M1 = 23,
  UInt2 = 25,
  Int2 = 26,
};

/// Where a session runs a module.
enum class Device {
  /// The module's own: the CPU for a CPU module, CUDA for a GPU module.
  Default,
  /// The host CPU (modules compiled with --target=cpu).
  Cpu,
  /// An NVIDIA GPU through the CUDA driver (modules compiled for sm_XX);
  /// the driver (libcuda.so.1) is loaded at run time, so a machine without
  /// one gets a "no CUDA device" status, not a load failure.
  Cuda,
  /// The kernel emulator: a GPU module's kernels run on the CPU, thread by
  /// thread, with barriers honoured (modules compiled for sm_XX with their
  /// emulator code, the default).
  Emulator,
};
/// "cpu", "cuda", "emulator" or "default".
const char *deviceName(Device device);
/// Parses a device name as `deviceName` writes it.
bool parseDevice(const std::string &name, Device &device);

/// Bytes per element, 0 for an unknown type.
size_t dtypeSize(DType dtype);
/// A readable name ("float32", "int64", ...).
const char *dtypeName(DType dtype);
/// The value of a float16 (or, with `bf16`, a bfloat16) given its bits.
double halfToDouble(uint16_t bits, bool bf16);
/// The value of a (u)int4 or (u)int2 element of `dtype` stored in `byte`
/// (its low bits).
int subByteValue(uint8_t byte, DType dtype);
/// The value of a float8 of `dtype` (Float8E4M3FN ... Float8E5M2FNUZ)
/// given its bits.
double float8ToDouble(uint8_t bits, DType dtype);
/// Element `i` of a tensor of `dtype` at `data`, as a double (NaN for a
/// type without a numeric reading).
double elementAsDouble(const void *data, DType dtype, size_t i);

/// Whether this machine's CPU has the x86-64 extension `feature` (LLVM's
/// name, as kiln/Target/CpuFeatures.h lists them: "avx2", "avx512vnni",
/// ...), by `cpuid` and, for the AVX and AVX-512 ones, the register state
/// the operating system saves. False for a name that list lacks.
bool cpuHasFeature(const std::string &feature);
/// Those of `features` that this machine's CPU lacks (or that the runtime
/// cannot check), in their order. A module's CPU code records the
/// extensions it was compiled for; loading checks them with this.
std::vector<std::string>
missingCpuFeatures(const std::vector<std::string> &features);

/// The name, element type and shape of a module input or output. An
/// output whose extent along one dim depends on the data (NonZero's,
/// say) has -1 there in the module's signature, and `maxExtent`, the upper
/// bound of that extent; a run reports its actual shape.
struct TensorInfo {
  std::string name;
  DType dtype = DType::Float;
  std::vector<int64_t> shape;
  /// The upper bound of the -1 extent; 0 when the shape has none.
  int64_t maxExtent = 0;
  /// For an input pinned at compile time (`kiln-compile --input-value`):
  /// the raw bytes of the only value the module takes; runs given another
  /// value fail. Empty otherwise.
  std::string pinnedValue;
  /// In a module compiled for a batch range (`Module::maxBatch() > 0`): dim
  /// 0 is the batch, any size in [minBatch, maxBatch]; `shape` holds it at
  /// maxBatch.
  bool batched = false;
  /// In a module compiled for a length range (`Module::maxLength() > 0`):
  /// the dims that are the length, any size in [minLength, maxLength];
  /// `shape` holds them at maxLength. Empty otherwise.
  std::vector<int64_t> lengthDims;
  /// The shape at batch `batch` (when `batched`) and length `length` (at
  /// the `lengthDims`); 0 keeps the signature's.
  std::vector<int64_t> shapeAt(int64_t batch, int64_t length) const;
  /// The dim whose extent depends on the data, or -1.
  int dynamicDim() const;
  /// Elements (bytes) of the shape, at the upper bound for a -1 extent:
  /// the size of the buffer the output needs in `Session::runRaw`.
  size_t numElements() const;
  size_t byteSize() const { return numElements() * dtypeSize(dtype); }
  /// The bytes of the tensor at batch `batch` when it is `batched` (its
  /// `shape` holds the maximum batch), else `byteSize()`.
  size_t byteSizeAt(int64_t batch) const {
    return batched ? byteSize() / static_cast<size_t>(shape[0]) *
                         static_cast<size_t>(batch)
                   : byteSize();
  }
};

/// An input: a view of caller-owned host memory.
struct TensorRef {
  std::string name;
  DType dtype = DType::Float;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t bytes = 0;
};

/// Fails, naming the input and both values, when `info` is pinned
/// (`pinnedValue`) and `data` (host memory of `info.byteSize()` bytes)
/// holds another value. `run` and `runRaw` check every input this way;
/// `runOnDevice` cannot read device memory and leaves it to the caller.
Status checkPinnedInput(const TensorInfo &info, const void *data);

/// An output: host memory owned by the tensor.
struct HostTensor {
  TensorInfo info;
  std::vector<uint8_t> data;
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data.data());
  }
};

/// A loaded module. Immutable, shareable between threads.
struct GpuCode;
class Backend;

/// One kernel launch of a profiled run (GPU devices): its kernel, grid and
/// block, and its time on the device (CUDA events; the wall clock in the
/// emulator), with its start relative to the run's first launch.
struct LaunchProfile {
  std::string kernel;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  double startMs = 0, ms = 0;
  /// What the compiler counted for the kernel or region (-1: not known,
  /// e.g. a loop without a static trip count, or a module of an older
  /// compiler): arithmetic operations (a multiply-add is two) and the least
  /// bytes it must move, every buffer it touches counted once.
  double flops = -1, bytes = -1;
  /// The kernel multiplies on tensor cores (GPU; see
  /// DevicePeaks::tensorGflops).
  bool tensorCores = false;
};

/// A device's measured ceilings for the profiler's roofline.
struct DevicePeaks {
  double gflops = 0; ///< f32 fused multiply-adds, GFLOP/s
  double gbps = 0;   ///< memory bandwidth of a triad (read + write), GB/s
  /// CUDA: f16 `mma.sync` m16n8k16 with f32 accumulators, GFLOP/s, the
  /// ceiling of the kernels that multiply on tensor cores (0: not
  /// measured; they are compared with `gflops` then).
  double tensorGflops = 0;
  std::string how; ///< what was measured, for reports
};
/// Measures `device`'s peaks with micro-benchmarks (about a second): the
/// CPU's widest f32 FMA and a STREAM-style triad on `threads` threads (0:
/// every hardware thread; Default means the CPU too); a CUDA device's
/// (KILN_CUDA_DEVICE) FMA, triad and tensor-core (mma.sync) kernels. The
/// emulator has none (an error status). Apart from tensor-core kernels,
/// the compute ceiling is f32's: integer, f16 and f64 work is compared
/// with it all the same.
Status measurePeaks(Device device, int threads, DevicePeaks &out);

/// A graph input or output that is not one tensor: an ONNX sequence of
/// tensors or an optional, compiled for what it holds. Its tensors are the
/// module's `first` to `first + length - 1` among `inputs()` (or
/// `outputs()`): a sequence's elements, named NAME[0], NAME[1], ...; an
/// optional tensor's value, named NAME; an optional sequence's elements. An
/// empty sequence or an absent optional has none; `first` is where they
/// would be, in graph order. One whose count is known only at run time
/// has one more output after its tensors, see `runTimeCount`.
struct CompositeInfo {
  enum class Kind { Sequence, OptionalTensor, OptionalSequence };
  std::string name;
  bool output = false;
  DType dtype = DType::Float;
  size_t first = 0;
  size_t length = 0;
  Kind kind = Kind::Sequence;
  /// An optional compiled without a value.
  bool absent = false;
  /// An output whose count is known only at run time (a sequence split
  /// by a run-time size, an optional an If gives in one branch only):
  /// `length` is the most tensors it can have, and the output after them
  /// (`first + length`, an int64 scalar named NAME.length or NAME.present)
  /// holds how many of them the run gave: a sequence's length, an
  /// optional's presence (1 or 0).
  bool runTimeCount = false;
  /// How many of the module's tensors it spans from `first`: its own, then
  /// the count output.
  size_t span() const { return length + (runTimeCount ? 1 : 0); }
};

class Module {
public:
  /// Loads a `.kmod` file. A module that fails validation (bad magic or
  /// version, truncated, inconsistent, code that does not load) gives an
  /// error status, never undefined behaviour.
  static Status load(const std::string &path, std::shared_ptr<Module> &out);
  /// The same from a module image in memory.
  static Status loadFromMemory(const void *data, size_t size,
                               std::shared_ptr<Module> &out);

  const std::vector<TensorInfo> &inputs() const { return inputInfos; }
  const std::vector<TensorInfo> &outputs() const { return outputInfos; }
  /// The graph's sequence and optional inputs and outputs, in graph order
  /// (inputs first); empty for a graph of tensors only.
  const std::vector<CompositeInfo> &composites() const {
    return compositeInfos;
  }
  const std::string &graphName() const { return name; }
  /// The compilation target of the loaded code ("cpu-x86_64", "sm_90").
  const std::string &target() const { return codeTarget; }
  /// Whether the module holds code for `device` (Default: always).
  bool hasCodeFor(Device device) const;
  /// Bytes of the arena each session holds for intermediate tensors.
  size_t arenaBytes() const { return arena; }
  /// A module compiled for a batch range (`kiln-compile
  /// --input-shape=x:1..32x...`) runs any batch in [minBatch, maxBatch]
  /// (the dim 0 of its `batched` tensors); 0 for other modules. optBatch
  /// is the batch its code was specialized for.
  int64_t minBatch() const { return batchMin; }
  int64_t maxBatch() const { return batchMax; }
  int64_t optBatch() const { return batchOpt; }
  /// A module compiled for a length range (`kiln-compile
  /// --input-shape=ids:1x16..128`) runs any length in [minLength,
  /// maxLength] (the `lengthDims` of its tensors); 0 for other modules. A
  /// length runs on the code of the smallest of `lengthBuckets()` that
  /// holds it, its inputs padded; optLength is one of those.
  int64_t minLength() const { return lengthMin; }
  int64_t maxLength() const { return lengthMax; }
  int64_t optLength() const { return lengthOpt; }
  const std::vector<int64_t> &lengthBuckets() const { return buckets; }

  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

private:
  Module() = default;
  friend class Session;
  std::vector<TensorInfo> inputInfos, outputInfos;
  std::vector<CompositeInfo> compositeInfos;
  std::string name, codeTarget;
  size_t arena = 0;
  void *handle = nullptr;
  void (*entry)(void **) = nullptr;
  // Batch-range modules: the entry for each batch of the chunks, largest
  // first.
  int64_t batchMin = 0, batchMax = 0, batchOpt = 0;
  struct BatchCode {
    int64_t batch;
    void (*entry)(void **);
  };
  std::vector<BatchCode> batchCode;
  static Status loadBatchCode(const kiln::kmod::Module &proto, Module &m);
  // Length-range modules: the buckets, ascending, and the entry of each
  // (chunk, bucket) pair, `lengthCode[c * buckets.size() + k]` (one chunk
  // without a batch range); whether they take the length mask.
  int64_t lengthMin = 0, lengthMax = 0, lengthOpt = 0;
  std::vector<int64_t> buckets;
  std::vector<void (*)(void **)> lengthCode;
  bool lengthMasked = false;
  static Status loadLengthCode(const kiln::kmod::Module &proto, Module &m);
  // GPU modules: the kernels, their launch plan and weights.
  std::shared_ptr<GpuCode> gpu;
  // CPU code compiled with --profile: its marked regions, each with its
  // name and counted costs (-1: unknown).
  struct ProfileRegion {
    std::string name;
    double flops = -1, bytes = -1;
  };
  std::vector<ProfileRegion> profileRegions;
};

/// Runs a module. Owns the arena of intermediate tensors (sized by the
/// module's memory plan) and the argument table; one thread at a time.
class Session {
public:
  /// A session on `device`. Whether the device could be set up (a CUDA
  /// device found, the module's code loaded on it, buffers allocated) is
  /// `status()`; a session that failed to set up fails every run with the
  /// same status.
  explicit Session(std::shared_ptr<const Module> module,
                   Device device = Device::Default);
  ~Session();
  Session(Session &&) noexcept;
  Session &operator=(Session &&) noexcept;

  /// Ok when the session is ready to run.
  const Status &status() const { return initStatus; }
  /// The device the session runs on (never Default).
  Device device() const { return dev; }

  /// Runs the module on `inputs`, matched to the module's inputs by name
  /// (or by position when names are empty), each checked for data type,
  /// shape and byte size. `outputs` is resized and filled, in the module's
  /// output order, each with its actual shape (a data-dependent extent
  /// resolved).
  Status run(const std::vector<TensorRef> &inputs,
             std::vector<HostTensor> &outputs);

  /// Runs on raw buffers in the module's input and output order; each
  /// buffer holds exactly `byteSize()` of its tensor (for an output with a
  /// data-dependent extent: of its upper bound). For callers that keep
  /// their own buffers (no copies, no checks beyond the count). An output
  /// with a data-dependent extent comes back packed at the start of its
  /// buffer, in row-major order of its actual shape, `outputShape(i)`.
  Status runRaw(const void *const *inputs, void *const *outputs);
  /// The same for a module compiled for a batch range, at batch `batch`:
  /// its batched tensors' buffers hold `batch` samples (`runRaw` without
  /// it runs `maxBatch`).
  Status runRaw(const void *const *inputs, void *const *outputs, int64_t batch);
  /// The same for a module compiled for a length range (and a batch range,
  /// when `batch` is not 0): its tensors' buffers hold the shapes that
  /// `TensorInfo::shapeAt(batch, length)` gives.
  Status runRaw(const void *const *inputs, void *const *outputs, int64_t batch,
                int64_t length);

  /// Profiles the following runs, see `lastProfile()`: on a GPU device
  /// every launch is timed (CUDA runs launch kernel by kernel instead of
  /// replaying a graph); on the CPU every region a module compiled with
  /// `kiln-compile --profile` marks (one per computation of the graph; a
  /// run of a module without marks fails while profiling).
  void setProfiling(bool on) { profiling = on; }
  /// The launches of the last profiled run, in order.
  const std::vector<LaunchProfile> &lastProfile() const { return launches; }

  /// CUDA sessions: runs on device memory the caller owns, without copies.
  /// `inputs` and `outputs` are device pointers (`CUdeviceptr` values) to
  /// buffers of each tensor's `byteSize()`, in the module's order;
  /// `stream` is the caller's `CUstream` (null: the session's own). The
  /// launches are enqueued on that stream and the call returns without
  /// waiting: the caller synchronizes the stream before reading the
  /// outputs. Modules with data-dependent outputs need `run`/`runRaw`.
  Status runOnDevice(const uint64_t *inputs, const uint64_t *outputs,
                     void *stream = nullptr);

  /// The shape of output `i` from the last run: the signature's, with a
  /// data-dependent extent as the run found it (0 before any run).
  const std::vector<int64_t> &outputShape(size_t i) const { return shapes[i]; }

  const Module &module() const { return *mod; }

private:
  Status checkCounts(const void *const *outputs) const;
  std::shared_ptr<const Module> mod;
  Device dev = Device::Cpu;
  Status initStatus;
  std::unique_ptr<Backend> backend;
  bool profiling = false;
  std::vector<LaunchProfile> launches;
  std::vector<void *> args;
  /// Per output with a data-dependent extent, in output order: the extent
  /// the code writes.
  std::vector<int64_t> extents;
  std::vector<std::vector<int64_t>> shapes;
  // The session's arena: every intermediate tensor of a run lives here.
  std::unique_ptr<uint8_t[]> arenaStorage;
  uint8_t *arena = nullptr;
  // Length-range runs: inputs padded to the bucket, outputs at the bucket,
  // and the mask, kept between runs.
  std::vector<std::vector<uint8_t>> staging;
  std::vector<float> lengthMask;
};

} // namespace rt
} // namespace kiln

#endif // KILN_RUNTIME_RUNTIME_H
