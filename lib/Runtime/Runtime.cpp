//===- Runtime.cpp - Kiln's C++ runtime -----------------------------------===//

#include "kiln/Runtime/Runtime.h"
#include "GpuCode.h"
#include "kiln/Target/ModuleFormat.h"

#include "kmod.pb.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits>
#include <new>
#include <sstream>
#include <string_view>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln::rt;

namespace {
/// The marks of the profiled CPU run on this thread, if any.
thread_local std::vector<
    std::pair<int32_t, std::chrono::steady_clock::time_point>> *cpuMarks =
    nullptr;

/// The hook profiled CPU code calls at the start of each region.
void cpuProfileMark(int32_t region) {
  if (cpuMarks)
    cpuMarks->emplace_back(region, std::chrono::steady_clock::now());
}
} // namespace

size_t kiln::rt::dtypeSize(DType dtype) {
  return kiln::dataTypeSize(static_cast<int32_t>(dtype));
}

const char *kiln::rt::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::Float:
    return "float32";
  case DType::UInt8:
    return "uint8";
  case DType::Int8:
    return "int8";
  case DType::UInt16:
    return "uint16";
  case DType::Int16:
    return "int16";
  case DType::Int32:
    return "int32";
  case DType::Int64:
    return "int64";
  case DType::Bool:
    return "bool";
  case DType::Float16:
    return "float16";
  case DType::Double:
    return "float64";
  case DType::UInt32:
    return "uint32";
  case DType::UInt64:
    return "uint64";
  case DType::BFloat16:
    return "bfloat16";
  case DType::Float8E4M3FN:
    return "float8e4m3fn";
  case DType::Float8E4M3FNUZ:
    return "float8e4m3fnuz";
  case DType::Float8E5M2:
    return "float8e5m2";
  case DType::Float8E5M2FNUZ:
    return "float8e5m2fnuz";
  case DType::UInt4:
    return "uint4";
  case DType::Int4:
    return "int4";
  case DType::UInt2:
    return "uint2";
  case DType::Int2:
    return "int2";
  case DType::Float4E2M1:
    return "float4e2m1";
  }
  return "unknown";
}

/// `bytes` of storage aligned to `alignment` (a power of two), owned by
/// `storage`.
static uint8_t *alignedBuffer(std::unique_ptr<uint8_t[]> &storage, size_t bytes,
                              size_t alignment) {
  storage.reset(new uint8_t[bytes + alignment]);
  auto p = reinterpret_cast<uintptr_t>(storage.get());
  return reinterpret_cast<uint8_t *>((p + alignment - 1) & ~(alignment - 1));
}

double kiln::rt::halfToDouble(uint16_t h, bool bf16) {
  if (bf16) {
    uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0)
    return sign * std::ldexp(mant, -24);
  if (exp == 31)
    return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(mant + 1024, exp - 25);
}

int kiln::rt::subByteValue(uint8_t byte, DType dtype) {
  int bits = dtype == DType::UInt2 || dtype == DType::Int2 ? 2 : 4;
  int v = byte & ((1 << bits) - 1);
  bool isSigned = dtype == DType::Int4 || dtype == DType::Int2;
  return isSigned && (v >> (bits - 1)) ? v - (1 << bits) : v;
}

double kiln::rt::float8ToDouble(uint8_t bits, DType dtype) {
  bool e4 = dtype == DType::Float8E4M3FN || dtype == DType::Float8E4M3FNUZ;
  bool fnuz = dtype == DType::Float8E4M3FNUZ || dtype == DType::Float8E5M2FNUZ;
  int mantBits = e4 ? 3 : 2;
  int bias = (e4 ? 7 : 15) + (fnuz ? 1 : 0);
  int mag = bits & 0x7f, exp = mag >> mantBits;
  int mant = mag & ((1 << mantBits) - 1);
  double sign = (bits & 0x80) ? -1.0 : 1.0;
  if (fnuz && bits == 0x80)
    return std::nan("");
  if (dtype == DType::Float8E4M3FN && mag == 0x7f)
    return std::nan("");
  if (dtype == DType::Float8E5M2 && exp == 31)
    return mant ? std::nan("") : sign * INFINITY;
  if (exp == 0)
    return sign * std::ldexp(mant, 1 - bias - mantBits);
  return sign * std::ldexp(mant + (1 << mantBits), exp - bias - mantBits);
}

double kiln::rt::elementAsDouble(const void *data, DType dtype, size_t i) {
  switch (dtype) {
  case DType::Float8E4M3FN:
  case DType::Float8E4M3FNUZ:
  case DType::Float8E5M2:
  case DType::Float8E5M2FNUZ:
    return float8ToDouble(static_cast<const uint8_t *>(data)[i], dtype);
  case DType::Float16:
  case DType::BFloat16:
    return halfToDouble(static_cast<const uint16_t *>(data)[i],
                        dtype == DType::BFloat16);
  case DType::Float:
    return static_cast<const float *>(data)[i];
  case DType::Double:
    return static_cast<const double *>(data)[i];
  case DType::Int64:
    return static_cast<const int64_t *>(data)[i];
  case DType::Int32:
    return static_cast<const int32_t *>(data)[i];
  case DType::Int16:
    return static_cast<const int16_t *>(data)[i];
  case DType::Int8:
    return static_cast<const int8_t *>(data)[i];
  case DType::Int4:
  case DType::Int2:
  case DType::UInt4:
  case DType::UInt2:
    return subByteValue(static_cast<const uint8_t *>(data)[i], dtype);
  case DType::Float4E2M1: {
    int code = static_cast<const uint8_t *>(data)[i] & 0xf;
    int exp = (code >> 1) & 3, mant = code & 1;
    double mag = exp ? std::ldexp(2 + mant, exp - 2) : 0.5 * mant;
    return code & 8 ? -mag : mag;
  }
  case DType::UInt8:
  case DType::Bool:
    return static_cast<const uint8_t *>(data)[i];
  case DType::UInt16:
    return static_cast<const uint16_t *>(data)[i];
  case DType::UInt32:
    return static_cast<const uint32_t *>(data)[i];
  case DType::UInt64:
    return static_cast<const uint64_t *>(data)[i];
  default:
    return std::nan("");
  }
}

const char *kiln::rt::deviceName(Device device) {
  switch (device) {
  case Device::Default:
    return "default";
  case Device::Cpu:
    return "cpu";
  case Device::Cuda:
    return "cuda";
  case Device::Emulator:
    return "emulator";
  }
  return "unknown";
}

bool kiln::rt::parseDevice(const std::string &name, Device &device) {
  for (Device d :
       {Device::Default, Device::Cpu, Device::Cuda, Device::Emulator})
    if (name == deviceName(d)) {
      device = d;
      return true;
    }
  return false;
}

Backend::~Backend() = default;

GpuCode::~GpuCode() {
  if (emulatorHandle)
    dlclose(emulatorHandle);
}

int TensorInfo::dynamicDim() const {
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 0)
      return static_cast<int>(d);
  return -1;
}

std::vector<int64_t> TensorInfo::shapeAt(int64_t batch, int64_t length) const {
  std::vector<int64_t> s = shape;
  if (batched && batch && !s.empty())
    s[0] = batch;
  if (length)
    for (int64_t d : lengthDims)
      s[d] = length;
  return s;
}

static size_t bytesOf(const std::vector<int64_t> &shape, DType dtype) {
  size_t n = dtypeSize(dtype);
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

/// Copies the box that two row-major tensors of one rank share, from
/// `src` (shape `from`) to `dst` (shape `to`): elements outside it stay.
static void copyBox(const uint8_t *src, const std::vector<int64_t> &from,
                    uint8_t *dst, const std::vector<int64_t> &to, size_t esize,
                    size_t d = 0) {
  if (d == from.size()) {
    std::memcpy(dst, src, esize);
    return;
  }
  size_t srcStride = esize, dstStride = esize;
  for (size_t i = d + 1; i < from.size(); ++i) {
    srcStride *= static_cast<size_t>(from[i]);
    dstStride *= static_cast<size_t>(to[i]);
  }
  int64_t n = std::min(from[d], to[d]);
  if (srcStride == dstStride &&
      std::equal(from.begin() + d + 1, from.end(), to.begin() + d + 1)) {
    std::memcpy(dst, src, static_cast<size_t>(n) * srcStride);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    copyBox(src + i * srcStride, from, dst + i * dstStride, to, esize, d + 1);
}

size_t TensorInfo::numElements() const {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d < 0 ? maxExtent : d);
  return n;
}

static std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Loads a shared object from memory through an anonymous in-memory file:
/// nothing is written to disk and the code cannot be swapped underneath us.
static Status loadSharedObject(std::string_view so, void *&handle) {
  int fd = memfd_create("kiln-module", MFD_CLOEXEC);
  if (fd < 0)
    return Status::error(std::string("memfd_create failed: ") +
                         std::strerror(errno));
  size_t written = 0;
  while (written < so.size()) {
    ssize_t n = write(fd, so.data() + written, so.size() - written);
    if (n <= 0) {
      close(fd);
      return Status::error("cannot stage the module code");
    }
    written += static_cast<size_t>(n);
  }
  // The dynamic loader takes an object whose path string it has loaded
  // before for that object: a second module staged at a reused descriptor
  // number would get the first one's code. Each load gets its own spelling
  // of the path (no-op "." components encode a counter).
  static std::atomic<uint64_t> loads{0};
  uint64_t n = loads++;
  std::string fdPath = "/proc";
  for (int bit = 0; bit < 64 && (n >> bit); ++bit)
    fdPath += (n >> bit) & 1 ? "/." : "/";
  fdPath += "/self/fd/" + std::to_string(fd);
  handle = dlopen(fdPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  close(fd);
  if (!handle) {
    const char *err = dlerror();
    return Status::error(std::string("the module's code does not load: ") +
                         (err ? err : "unknown error"));
  }
  return Status::success();
}

/// An error when this machine's CPU lacks an x86-64 extension that `code`
/// (host code: the CPU's or the emulator's) was compiled for.
static Status checkCpuFeatures(const kiln::kmod::CodeObject &code,
                               const char *what) {
  std::vector<std::string> missing = missingCpuFeatures(
      {code.cpu_features().begin(), code.cpu_features().end()});
  if (missing.empty())
    return Status::success();
  std::string names;
  bool amx = false;
  for (const std::string &f : missing) {
    names += (names.empty() ? "" : ", ") + f;
    amx |= f.rfind("amx-", 0) == 0;
  }
  // AMX's tile state is the operating system's to grant (Linux 5.16 on,
  // when the process asks): a CPU with the extension may still refuse it.
  if (amx)
    return Status::error(
        std::string(what) + " runs AMX tile products and needs " + names +
        ", which this CPU lacks or whose tile state the operating system " +
        "did not grant this process (Linux grants it from 5.16 on); compile " +
        "the model with kiln-compile --cpu-int8-dot=vnni (8-bit products) " +
        "and --cpu-bf16-dot=avx512bf16 (bf16 ones) for code without AMX " +
        "tiles");
  return Status::error(
      std::string(what) + " was compiled for the CPU '" + code.cpu() +
      "' and needs " + names + ", which this CPU lacks; compile the model " +
      "for this CPU (kiln-compile --cpu=native on it) or for an older one " +
      "whose extensions it has (--cpu=x86-64-v3, say)");
}

/// The GPU half of a module: launch plan, weights, PTX/cubin, and the
/// emulator's code when the module has it.
static Status loadGpuCode(const kiln::kmod::Module &proto,
                          const kiln::ModuleBlobs &blobs, int ptx, int cubin,
                          int emulator, const Module &module,
                          std::shared_ptr<GpuCode> &out) {
  auto code = std::make_shared<GpuCode>();
  const auto &gpu = proto.gpu();
  code->chip = gpu.chip();
  if (gpu.kernels_size() > 0 && ptx < 0 && cubin < 0)
    return Status::error("the module's GPU program has kernels but no code");
  if (ptx >= 0)
    code->ptx = std::string(blobs.codeData[ptx]);
  if (cubin >= 0)
    code->cubin = std::string(blobs.codeData[cubin]);
  // Buffers in the order of the code's arguments.
  for (const TensorInfo &info : module.inputs())
    code->bufferBytes.push_back(info.byteSize());
  for (const TensorInfo &info : module.outputs())
    code->bufferBytes.push_back(info.byteSize());
  code->numInputs = module.inputs().size();
  code->numOutputs = module.outputs().size();
  for (const TensorInfo &info : module.outputs())
    if (info.dynamicDim() >= 0) {
      code->bufferBytes.push_back(sizeof(int64_t));
      ++code->numExtents;
    }
  if (module.arenaBytes())
    code->bufferBytes.push_back(module.arenaBytes());
  if (static_cast<size_t>(gpu.num_buffers()) != code->bufferBytes.size())
    return Status::error("the GPU program names " +
                         std::to_string(gpu.num_buffers()) +
                         " buffers, the signature and memory plan give " +
                         std::to_string(code->bufferBytes.size()));
  code->constantsBytes = blobs.gpuConstants.size();
  code->constants =
      alignedBuffer(code->constantsStorage, code->constantsBytes, 256);
  std::memcpy(code->constants, blobs.gpuConstants.data(), code->constantsBytes);
  for (const auto &k : gpu.kernels()) {
    GpuKernel &kernel = code->kernels.emplace_back();
    kernel.name = k.name();
    kernel.synchronizes = k.synchronizes();
    kernel.tensorCores = k.tensor_cores();
    if (k.has_flops())
      kernel.flops = static_cast<double>(k.flops());
    if (k.has_bytes())
      kernel.bytes = static_cast<double>(k.bytes());
  }
  for (const auto &l : gpu.launches()) {
    GpuLaunch launch;
    launch.kernel = l.kernel();
    for (int d = 0; d < 3; ++d) {
      launch.grid[d] = static_cast<unsigned>(l.grid(d));
      launch.block[d] = static_cast<unsigned>(l.block(d));
    }
    launch.sharedBytes = static_cast<unsigned>(l.dynamic_shared_bytes());
    for (const auto &a : l.args()) {
      size_t limit =
          a.buffer() < 0 ? code->constantsBytes : code->bufferBytes[a.buffer()];
      if (static_cast<uint64_t>(a.offset()) > limit)
        return Status::error("a launch of kernel '" +
                             code->kernels[launch.kernel].name +
                             "' points past the end of its buffer");
      launch.args.push_back({a.buffer(), a.offset()});
    }
    code->launches.push_back(std::move(launch));
  }
  if (emulator >= 0) {
    // Without the emulator's CPU extensions the module still runs on a
    // GPU; an emulator session reports why it cannot run.
    if (Status s = checkCpuFeatures(proto.code(emulator),
                                    "the module's emulator code");
        !s.ok()) {
      code->emulatorUnavailable = s.message();
      emulator = -1;
    }
  }
  if (emulator >= 0) {
    if (Status s =
            loadSharedObject(blobs.codeData[emulator], code->emulatorHandle);
        !s.ok())
      return s;
    if (Status s = initEmulatorObject(code->emulatorHandle); !s.ok())
      return s;
    for (GpuKernel &k : code->kernels) {
      std::string symbol = proto.code(emulator).entry() + k.name;
      k.emulatorEntry = reinterpret_cast<void (*)(void **)>(
          dlsym(code->emulatorHandle, symbol.c_str()));
      if (!k.emulatorEntry)
        return Status::error("the module's emulator code lacks kernel '" +
                             k.name + "'");
    }
  }
  out = std::move(code);
  return Status::success();
}

Module::~Module() {
  if (handle)
    dlclose(handle);
}

Status Module::load(const std::string &path, std::shared_ptr<Module> &out) {
  // One copy of the image in memory while it loads (the code objects go
  // from it to their in-memory files, the GPU weights to their aligned
  // buffer), freed once loaded: a model's weights are held once.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return Status::error("cannot read '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return Status::error("cannot read '" + path + "': not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  std::unique_ptr<char[]> bytes(new (std::nothrow) char[size ? size : 1]);
  if (!bytes) {
    close(fd);
    return Status::error("cannot read '" + path + "': out of memory");
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, bytes.get() + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      return Status::error(
          "cannot read '" + path +
          "': " + (n == 0 ? "it shrank while being read" : std::strerror(err)));
    }
    got += static_cast<size_t>(n);
  }
  close(fd);
  Status s = loadFromMemory(bytes.get(), size, out);
  if (!s.ok())
    return Status::error("'" + path + "': " + s.message());
  return s;
}

/// A batch-range module's entries, one per chunk, largest first, in its
/// CPU code (loaded already); the signature's batched tensors checked
/// against the range.
Status Module::loadBatchCode(const kiln::kmod::Module &proto, Module &m) {
  const auto &range = proto.batch();
  m.batchMin = range.min();
  m.batchMax = range.max();
  m.batchOpt = range.opt();
  if (m.batchMin < 1 || m.batchMax < m.batchMin || m.batchOpt < m.batchMin ||
      m.batchOpt > m.batchMax || range.chunks_size() == 0 ||
      range.chunks_size() != range.entries_size() ||
      range.chunks(range.chunks_size() - 1) != 1)
    return Status::error("the module's batch range is invalid");
  if (!proto.gpu().chip().empty() || !m.handle)
    return Status::error("a batch range needs CPU code");
  for (int i = 0; i < range.chunks_size(); ++i) {
    int64_t c = range.chunks(i);
    if (c < 1 || (i && c >= range.chunks(i - 1)))
      return Status::error("the module's batch chunks are invalid");
    auto fn = reinterpret_cast<void (*)(void **)>(
        dlsym(m.handle, range.entries(i).c_str()));
    if (!fn)
      return Status::error("the module's code lacks its entry '" +
                           range.entries(i) + "' for batch " +
                           std::to_string(c));
    m.batchCode.push_back({c, fn});
  }
  for (const auto *infos : {&m.inputInfos, &m.outputInfos})
    for (const TensorInfo &t : *infos)
      if (t.batched &&
          (t.shape.empty() || t.shape[0] != m.batchMax || t.dynamicDim() >= 0))
        return Status::error("tensor '" + t.name +
                             "' is batched but its shape does not start "
                             "with the batch range's maximum");
  return Status::success();
}

/// A length-range module's buckets and their entries (per batch chunk when
/// it has a batch range too), in its CPU code (loaded already); the
/// signature's length dims checked against the range.
Status Module::loadLengthCode(const kiln::kmod::Module &proto, Module &m) {
  const auto &range = proto.length();
  m.lengthMin = range.min();
  m.lengthMax = range.max();
  m.lengthOpt = range.opt();
  m.lengthMasked = range.masked();
  size_t chunks = m.batchMax ? m.batchCode.size() : 1;
  if (m.lengthMin < 1 || m.lengthMax < m.lengthMin ||
      m.lengthOpt < m.lengthMin || m.lengthOpt > m.lengthMax ||
      range.buckets_size() == 0 ||
      range.buckets(range.buckets_size() - 1) != m.lengthMax ||
      range.buckets(0) < m.lengthMin ||
      static_cast<size_t>(range.entries_size()) !=
          chunks * static_cast<size_t>(range.buckets_size()))
    return Status::error("the module's length range is invalid");
  if (!proto.gpu().chip().empty() || !m.handle)
    return Status::error("a length range needs CPU code");
  for (int i = 0; i < range.buckets_size(); ++i) {
    if (i && range.buckets(i) <= range.buckets(i - 1))
      return Status::error("the module's length buckets are invalid");
    m.buckets.push_back(range.buckets(i));
  }
  for (const std::string &e : range.entries()) {
    auto fn = reinterpret_cast<void (*)(void **)>(dlsym(m.handle, e.c_str()));
    if (!fn)
      return Status::error("the module's code lacks its entry '" + e + "'");
    m.lengthCode.push_back(fn);
  }
  bool any = false;
  for (const auto *infos : {&m.inputInfos, &m.outputInfos})
    for (const TensorInfo &t : *infos) {
      for (int64_t d : t.lengthDims)
        if (d < 0 || static_cast<size_t>(d) >= t.shape.size() ||
            t.shape[d] != m.lengthMax || (t.batched && d == 0) ||
            t.dynamicDim() >= 0)
          return Status::error("tensor '" + t.name +
                               "' has a length dim that is not at the "
                               "length range's maximum");
      any |= infos == &m.inputInfos && !t.lengthDims.empty();
    }
  if (!any)
    return Status::error("the module has a length range but no input with "
                         "a length dim");
  return Status::success();
}

Status Module::loadFromMemory(const void *data, size_t size,
                              std::shared_ptr<Module> &out) {
  kiln::kmod::Module proto;
  kiln::ModuleBlobs blobs;
  std::string error;
  if (!kiln::parseModuleInPlace(data, size, proto, blobs, error))
    return Status::error(error);
  const kiln::kmod::CodeObject *cpuCode = nullptr;
  int cpuIndex = -1, ptx = -1, cubin = -1, emulator = -1;
  for (int i = 0; i < proto.code_size(); ++i) {
    const auto &c = proto.code(i);
    if (c.target().rfind("cpu", 0) == 0 && c.format() == "elf-shared-object")
      cpuIndex = i;
    else if (c.target().rfind("emulator", 0) == 0 &&
             c.format() == "elf-shared-object")
      emulator = i;
    else if (c.target().rfind("sm_", 0) == 0 && c.format() == "ptx")
      ptx = i;
    else if (c.target().rfind("sm_", 0) == 0 && c.format() == "cubin")
      cubin = i;
  }
  if (cpuIndex >= 0)
    cpuCode = &proto.code(cpuIndex);
  bool gpuModule = !proto.gpu().chip().empty();
  if (!cpuCode && !gpuModule)
    return Status::error("the module holds no code for the CPU or a GPU");

  std::shared_ptr<Module> module(new Module());
  module->name = proto.graph_name();
  module->arena = static_cast<size_t>(proto.memory_plan().arena_bytes());
  module->codeTarget = cpuCode ? cpuCode->target() : proto.gpu().chip();
  auto toInfos = [](const auto &sigs, std::vector<TensorInfo> &infos) {
    for (const auto &s : sigs)
      infos.push_back({s.name(), static_cast<DType>(s.dtype()),
                       std::vector<int64_t>(s.shape().begin(), s.shape().end()),
                       s.max_extent(), s.pinned_value(), s.batched(),
                       std::vector<int64_t>(s.length_dims().begin(),
                                            s.length_dims().end())});
  };
  toInfos(proto.inputs(), module->inputInfos);
  toInfos(proto.outputs(), module->outputInfos);
  for (const auto &q : proto.composites())
    module->compositeInfos.push_back(
        {q.name(), q.output(), static_cast<DType>(q.dtype()),
         static_cast<size_t>(q.first()), static_cast<size_t>(q.length()),
         static_cast<CompositeInfo::Kind>(q.kind()), q.absent(),
         q.run_time_count()});

  if (cpuCode) {
    if (Status s = checkCpuFeatures(*cpuCode, "the module's code"); !s.ok())
      return s;
    void *handle = nullptr;
    if (Status s = loadSharedObject(blobs.codeData[cpuIndex], handle); !s.ok())
      return s;
    module->handle = handle;
    module->entry = reinterpret_cast<void (*)(void **)>(
        dlsym(handle, cpuCode->entry().c_str()));
    if (!module->entry)
      return Status::error("the module's code lacks its entry '" +
                           cpuCode->entry() + "'");
    if (cpuCode->profile_regions_size()) {
      auto **hook =
          reinterpret_cast<void **>(dlsym(handle, "kiln_profile_hook"));
      if (!hook)
        return Status::error("the module names profile regions but its "
                             "code lacks kiln_profile_hook");
      *hook = reinterpret_cast<void *>(&cpuProfileMark);
      int regions = cpuCode->profile_regions_size();
      bool counted = cpuCode->profile_region_flops_size() == regions &&
                     cpuCode->profile_region_bytes_size() == regions;
      for (int i = 0; i < regions; ++i) {
        auto &r = module->profileRegions.emplace_back();
        r.name = cpuCode->profile_regions(i);
        if (counted) {
          r.flops = static_cast<double>(cpuCode->profile_region_flops(i));
          r.bytes = static_cast<double>(cpuCode->profile_region_bytes(i));
        }
      }
    }
  }
  if (proto.has_batch() && proto.batch().max() > 0)
    if (Status s = Module::loadBatchCode(proto, *module); !s.ok())
      return s;
  if (proto.has_length() && proto.length().max() > 0)
    if (Status s = Module::loadLengthCode(proto, *module); !s.ok())
      return s;
  for (const auto *infos : {&module->inputInfos, &module->outputInfos})
    for (const TensorInfo &t : *infos)
      if (!t.lengthDims.empty() && !module->lengthMax)
        return Status::error("tensor '" + t.name +
                             "' has length dims but the module no length "
                             "range");
  if (gpuModule) {
    if (Status s = loadGpuCode(proto, blobs, ptx, cubin, emulator, *module,
                               module->gpu);
        !s.ok())
      return s;
  }
  out = std::move(module);
  return Status::success();
}

bool Module::hasCodeFor(Device device) const {
  switch (device) {
  case Device::Default:
    return true;
  case Device::Cpu:
    return entry != nullptr;
  case Device::Cuda:
    return gpu != nullptr;
  case Device::Emulator:
    return gpu && (gpu->emulatorHandle || gpu->kernels.empty());
  }
  return false;
}

Session::Session(std::shared_ptr<const Module> module, Device device)
    : mod(std::move(module)), dev(device) {
  if (dev == Device::Default)
    dev = mod->hasCodeFor(Device::Cpu) ? Device::Cpu : Device::Cuda;
  if (!mod->hasCodeFor(dev)) {
    if (dev == Device::Cpu)
      initStatus =
          Status::error("the module was compiled for " + mod->target() +
                        " and holds no CPU code; run it on the "
                        "cuda or emulator device");
    else if (dev == Device::Emulator && mod->gpu &&
             !mod->gpu->emulatorUnavailable.empty())
      initStatus = Status::error(mod->gpu->emulatorUnavailable);
    else if (dev == Device::Emulator && mod->gpu)
      initStatus = Status::error("the module holds no emulator code "
                                 "(compiled with --emulator-code=false)");
    else
      initStatus = Status::error("the module was compiled for " +
                                 mod->target() + " and holds no GPU code");
  } else if (dev == Device::Cuda) {
    backend = createCudaBackend(mod->gpu, initStatus);
  } else if (dev == Device::Emulator) {
    backend = createEmulatorBackend(mod->gpu, initStatus);
  }
  size_t n = mod->inputs().size() + mod->outputs().size();
  for (const TensorInfo &info : mod->outputs()) {
    shapes.push_back(info.shape);
    if (int d = info.dynamicDim(); d >= 0) {
      shapes.back()[d] = 0;
      extents.push_back(0);
    }
  }
  n += extents.size();
  if (mod->lengthMasked)
    ++n;
  if (mod->arenaBytes()) {
    // 64-byte aligned, as the memory plan's offsets assume. A CUDA session
    // keeps its arena on the device.
    if (dev != Device::Cuda) {
      arena = alignedBuffer(arenaStorage, mod->arenaBytes(), 64);
    }
    ++n;
  }
  args.resize(n);
}

/// GPU kernels access buffers up to 16 bytes at a time
/// (kiln-gpu-vectorize), aligned: the memory plan and the weights are, and
/// a GPU module's inputs and outputs must be.
static constexpr uintptr_t kGpuBufferAlignment = 16;

static bool misaligned(uint64_t address) {
  return address % kGpuBufferAlignment != 0;
}

Status Session::runOnDevice(const uint64_t *inputs, const uint64_t *outputs,
                            void *stream) {
  if (!initStatus.ok())
    return initStatus;
  if (dev != Device::Cuda || !backend)
    return Status::error(std::string("runOnDevice needs a CUDA session; this "
                                     "one runs on the ") +
                         deviceName(dev));
  if (!extents.empty())
    return Status::error("the module has outputs of data-dependent extent; "
                         "run it with run or runRaw");
  if ((!inputs && !mod->inputs().empty()) || !outputs)
    return Status::error("runOnDevice: null buffer array");
  auto checkAligned = [](const char *what, const std::vector<TensorInfo> &infos,
                         const uint64_t *pointers) {
    for (size_t i = 0; i < infos.size(); ++i)
      if (misaligned(pointers[i]))
        return Status::error(std::string("runOnDevice: ") + what + " '" +
                             infos[i].name +
                             "' is not 16-byte aligned (the kernels access "
                             "buffers 16 bytes at a time; cuMemAlloc's are "
                             "256-byte aligned)");
    return Status::success();
  };
  if (Status s = checkAligned("input", mod->inputs(), inputs); !s.ok())
    return s;
  if (Status s = checkAligned("output", mod->outputs(), outputs); !s.ok())
    return s;
  return backend->runOnDevice(inputs, outputs, stream);
}

Session::~Session() = default;
Session::Session(Session &&) noexcept = default;
Session &Session::operator=(Session &&) noexcept = default;

/// Packs the valid part of a buffer of `shape` (with `maxExtent` at the
/// data-dependent `dim`) that has `extent` there to its start, in place:
/// one block of the inner dims per index of the outer ones.
static void packPrefix(uint8_t *data, const std::vector<int64_t> &shape,
                       int dim, int64_t maxExtent, int64_t extent,
                       size_t elementSize) {
  size_t outer = 1, inner = elementSize;
  for (int d = 0; d < dim; ++d)
    outer *= static_cast<size_t>(shape[d]);
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= static_cast<size_t>(shape[d]);
  size_t valid = static_cast<size_t>(extent) * inner,
         stride = static_cast<size_t>(maxExtent) * inner;
  // Block o moves down to o * valid <= o * stride: never over a block not
  // yet moved.
  for (size_t o = 1; o < outer; ++o)
    std::memmove(data + o * valid, data + o * stride, valid);
}

/// Up to 8 elements of a tensor's raw bytes, as "[1, 2, 3]".
static std::string valuesString(const std::string &bytes, DType dtype) {
  size_t esize = dtypeSize(dtype);
  size_t n = esize ? bytes.size() / esize : 0;
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < n && i < 8; ++i)
    os << (i ? ", " : "") << elementAsDouble(bytes.data(), dtype, i);
  os << (n > 8 ? ", ...]" : "]");
  return os.str();
}

Status kiln::rt::checkPinnedInput(const TensorInfo &info, const void *data) {
  if (info.pinnedValue.empty() ||
      std::memcmp(data, info.pinnedValue.data(), info.pinnedValue.size()) == 0)
    return Status::success();
  std::string got(static_cast<const char *>(data), info.pinnedValue.size());
  return Status::error("input '" + info.name +
                       "' was pinned at compile time (--input-value) to " +
                       valuesString(info.pinnedValue, info.dtype) +
                       "; this module cannot run it with " +
                       valuesString(got, info.dtype));
}

Status Session::runRaw(const void *const *inputs, void *const *outputs) {
  if (mod->lengthMax)
    return runRaw(inputs, outputs, mod->batchMax, mod->lengthMax);
  if (mod->batchMax)
    return runRaw(inputs, outputs, mod->batchMax);
  size_t ni = mod->inputs().size(), no = mod->outputs().size();
  for (size_t i = 0; i < ni; ++i)
    if (Status s = checkPinnedInput(mod->inputs()[i], inputs[i]); !s.ok())
      return s;
  for (size_t i = 0; i < ni; ++i)
    args[i] = const_cast<void *>(inputs[i]);
  for (size_t i = 0; i < no; ++i)
    args[ni + i] = outputs[i];
  // The emulator runs the kernels on the caller's host buffers: one that is
  // not 16-byte aligned is staged in an aligned copy (outputs copied back
  // after the run).
  std::vector<std::unique_ptr<uint8_t[]>> staged;
  std::vector<std::pair<size_t, void *>> copyBack;
  if (dev == Device::Emulator) {
    for (size_t i = 0; i < ni + no; ++i) {
      if (!misaligned(reinterpret_cast<uintptr_t>(args[i])))
        continue;
      const TensorInfo &info =
          i < ni ? mod->inputs()[i] : mod->outputs()[i - ni];
      size_t bytes = info.byteSize();
      void *aligned =
          alignedBuffer(staged.emplace_back(), bytes, kGpuBufferAlignment);
      std::memcpy(aligned, args[i], bytes);
      if (i >= ni)
        copyBack.push_back({i, aligned});
      args[i] = aligned;
    }
  }
  auto unstage = [&] {
    for (auto [i, aligned] : copyBack)
      std::memcpy(outputs[i - ni], aligned, mod->outputs()[i - ni].byteSize());
  };
  for (size_t k = 0; k < extents.size(); ++k)
    args[ni + no + k] = &extents[k];
  if (mod->arenaBytes())
    args[ni + no + extents.size()] = arena;
  if (!initStatus.ok())
    return initStatus;
  if (backend) {
    launches.clear();
    if (Status s = backend->run(args.data(), profiling ? &launches : nullptr);
        !s.ok())
      return s;
    unstage();
  } else if (profiling) {
    if (mod->profileRegions.empty())
      return Status::error("this CPU module was compiled without --profile; "
                           "recompile it with kiln-compile --profile to time "
                           "its computations");
    std::vector<std::pair<int32_t, std::chrono::steady_clock::time_point>>
        marks;
    marks.reserve(mod->profileRegions.size() + 1);
    cpuMarks = &marks;
    mod->entry(args.data());
    cpuMarks = nullptr;
    launches.clear();
    for (size_t i = 0; i + 1 < marks.size(); ++i) {
      LaunchProfile p;
      int32_t r = marks[i].first;
      if (r >= 0 && static_cast<size_t>(r) < mod->profileRegions.size()) {
        const auto &region = mod->profileRegions[r];
        p.kernel = region.name;
        p.flops = region.flops;
        p.bytes = region.bytes;
      } else {
        p.kernel = "region " + std::to_string(r);
      }
      p.startMs = std::chrono::duration<double, std::milli>(marks[i].second -
                                                            marks[0].second)
                      .count();
      p.ms = std::chrono::duration<double, std::milli>(marks[i + 1].second -
                                                       marks[i].second)
                 .count();
      launches.push_back(p);
    }
  } else {
    mod->entry(args.data());
  }
  size_t k = 0;
  for (size_t i = 0; i < no; ++i) {
    const TensorInfo &info = mod->outputs()[i];
    int d = info.dynamicDim();
    if (d < 0)
      continue;
    int64_t extent = extents[k++];
    if (extent < 0 || extent > info.maxExtent)
      return Status::error("the module's code gave output '" + info.name +
                           "' an extent of " + std::to_string(extent) +
                           ", outside [0, " + std::to_string(info.maxExtent) +
                           "]");
    shapes[i][d] = extent;
    packPrefix(static_cast<uint8_t *>(outputs[i]), info.shape, d,
               info.maxExtent, extent, dtypeSize(info.dtype));
  }
  return checkCounts(outputs);
}

/// The count outputs of the sequences of run-time length and optionals of
/// run-time presence: a sequence longer than the tensors the module holds
/// (a Loop that appends to it ran past the iterations it was unrolled for)
/// fails the run.
Status Session::checkCounts(const void *const *outputs) const {
  for (const CompositeInfo &q : mod->composites()) {
    // The module's validation put the count among the outputs.
    if (!q.output || !q.runTimeCount)
      continue;
    int64_t count = 0;
    std::memcpy(&count, outputs[q.first + q.length], sizeof(count));
    bool sequence = q.kind == CompositeInfo::Kind::Sequence;
    int64_t most = sequence ? static_cast<int64_t>(q.length) : 1;
    if (count >= 0 && count <= most)
      continue;
    if (sequence && count > most)
      return Status::error(
          "sequence output '" + q.name + "' has more than the " +
          std::to_string(most) +
          " elements the module holds: a Loop that appends to it ran "
          "more iterations than it was compiled for (kiln-compile "
          "--max-sequence-loop-trips)");
    return Status::error("the module's code gave " +
                         std::string(sequence ? "sequence" : "optional") +
                         " output '" + q.name + "' a count of " +
                         std::to_string(count) + ", outside [0, " +
                         std::to_string(most) + "]");
  }
  return Status::success();
}

Status Session::runRaw(const void *const *inputs, void *const *outputs,
                       int64_t batch) {
  if (!mod->batchMax)
    return Status::error("the module was not compiled for a batch range; "
                         "run it without a batch");
  if (mod->lengthMax)
    return runRaw(inputs, outputs, batch, mod->lengthMax);
  if (batch < mod->batchMin || batch > mod->batchMax)
    return Status::error("batch " + std::to_string(batch) +
                         " is outside the module's range [" +
                         std::to_string(mod->batchMin) + ", " +
                         std::to_string(mod->batchMax) + "]");
  if (!initStatus.ok())
    return initStatus;
  if (dev != Device::Cpu)
    return Status::error("a batch-range module runs on the CPU");
  if (profiling)
    return Status::error(
        "a batch-range module cannot be profiled yet; "
        "profile a module compiled for one batch (kiln-compile "
        "--profile)");
  size_t ni = mod->inputs().size(), no = mod->outputs().size();
  // Pinned inputs are not batched (their value is the whole tensor).
  for (size_t i = 0; i < ni; ++i)
    if (!mod->inputs()[i].batched)
      if (Status s = checkPinnedInput(mod->inputs()[i], inputs[i]); !s.ok())
        return s;
  // Each chunk's code runs on the slices of the batched tensors at the
  // samples it covers (dim 0 is outermost: a slice is an offset).
  auto offset = [&](const TensorInfo &t, int64_t samples) {
    return t.batched ? t.byteSizeAt(samples) : 0;
  };
  if (mod->arenaBytes())
    args[ni + no] = arena;
  int64_t done = 0;
  for (const Module::BatchCode &code : mod->batchCode)
    while (batch - done >= code.batch) {
      for (size_t i = 0; i < ni; ++i)
        args[i] =
            const_cast<uint8_t *>(static_cast<const uint8_t *>(inputs[i])) +
            offset(mod->inputs()[i], done);
      for (size_t i = 0; i < no; ++i)
        args[ni + i] = static_cast<uint8_t *>(outputs[i]) +
                       offset(mod->outputs()[i], done);
      code.entry(args.data());
      done += code.batch;
    }
  for (size_t i = 0; i < no; ++i)
    if (mod->outputs()[i].batched)
      shapes[i][0] = batch;
  return Status::success();
}

Status Session::runRaw(const void *const *inputs, void *const *outputs,
                       int64_t batch, int64_t length) {
  if (!mod->lengthMax)
    return Status::error("the module was not compiled for a length range; "
                         "run it without a length");
  if (length < mod->lengthMin || length > mod->lengthMax)
    return Status::error("length " + std::to_string(length) +
                         " is outside the module's range [" +
                         std::to_string(mod->lengthMin) + ", " +
                         std::to_string(mod->lengthMax) + "]");
  if (mod->batchMax && (batch < mod->batchMin || batch > mod->batchMax))
    return Status::error("batch " + std::to_string(batch) +
                         " is outside the module's range [" +
                         std::to_string(mod->batchMin) + ", " +
                         std::to_string(mod->batchMax) + "]");
  if (!mod->batchMax)
    batch = 0;
  if (!initStatus.ok())
    return initStatus;
  if (dev != Device::Cpu)
    return Status::error("a length-range module runs on the CPU");
  if (profiling)
    return Status::error("a length-range module cannot be profiled yet; "
                         "profile a module compiled for one shape "
                         "(kiln-compile --profile)");
  size_t ni = mod->inputs().size(), no = mod->outputs().size();
  for (size_t i = 0; i < ni; ++i)
    if (!mod->inputs()[i].batched && mod->inputs()[i].lengthDims.empty())
      if (Status s = checkPinnedInput(mod->inputs()[i], inputs[i]); !s.ok())
        return s;
  size_t k = 0;
  while (mod->buckets[k] < length)
    ++k;
  int64_t bucket = mod->buckets[k];
  // Inputs padded with zeros to the bucket; outputs computed there and
  // their first `length` positions copied out.
  staging.resize(ni + no);
  std::vector<const uint8_t *> in(ni);
  std::vector<uint8_t *> out(no);
  for (size_t i = 0; i < ni; ++i) {
    const TensorInfo &t = mod->inputs()[i];
    in[i] = static_cast<const uint8_t *>(inputs[i]);
    if (t.lengthDims.empty() || bucket == length)
      continue;
    auto to = t.shapeAt(batch, bucket);
    staging[i].assign(bytesOf(to, t.dtype), 0);
    copyBox(in[i], t.shapeAt(batch, length), staging[i].data(), to,
            dtypeSize(t.dtype));
    in[i] = staging[i].data();
  }
  for (size_t i = 0; i < no; ++i) {
    const TensorInfo &t = mod->outputs()[i];
    out[i] = static_cast<uint8_t *>(outputs[i]);
    if (t.lengthDims.empty() || bucket == length)
      continue;
    staging[ni + i].resize(bytesOf(t.shapeAt(batch, bucket), t.dtype));
    out[i] = staging[ni + i].data();
  }
  size_t extra = 0;
  if (mod->lengthMasked) {
    lengthMask.assign(static_cast<size_t>(bucket),
                      -std::numeric_limits<float>::infinity());
    std::fill(lengthMask.begin(), lengthMask.begin() + length, 0.0f);
    args[ni] = lengthMask.data();
    extra = 1;
  }
  if (mod->arenaBytes())
    args[ni + extra + no] = arena;
  // Each chunk runs on the samples it covers (dim 0 is outermost).
  auto offset = [&](const TensorInfo &t, int64_t samples) {
    if (!t.batched || !samples)
      return size_t(0);
    auto s = t.shapeAt(1, bucket);
    return bytesOf(s, t.dtype) * static_cast<size_t>(samples);
  };
  size_t nb = mod->buckets.size();
  auto runAt = [&](void (*entry)(void **), int64_t done) {
    for (size_t i = 0; i < ni; ++i)
      args[i] = const_cast<uint8_t *>(in[i]) + offset(mod->inputs()[i], done);
    for (size_t i = 0; i < no; ++i)
      args[ni + extra + i] = out[i] + offset(mod->outputs()[i], done);
    entry(args.data());
  };
  if (!batch) {
    runAt(mod->lengthCode[k], 0);
  } else {
    int64_t done = 0;
    for (size_t c = 0; c < mod->batchCode.size(); ++c)
      while (batch - done >= mod->batchCode[c].batch) {
        runAt(mod->lengthCode[c * nb + k], done);
        done += mod->batchCode[c].batch;
      }
  }
  for (size_t i = 0; i < no; ++i) {
    const TensorInfo &t = mod->outputs()[i];
    shapes[i] = t.shapeAt(batch, length);
    if (out[i] != outputs[i])
      copyBox(out[i], t.shapeAt(batch, bucket),
              static_cast<uint8_t *>(outputs[i]), shapes[i],
              dtypeSize(t.dtype));
  }
  return Status::success();
}

/// The index of the module input `t` (the `k`th given) is for: by name,
/// else by position; fails on an unknown name, an input given twice or
/// the wrong element type.
static Status matchInput(const std::vector<TensorInfo> &infos,
                         const TensorRef &t, size_t k,
                         const std::vector<const void *> &given, size_t &i) {
  i = k;
  if (!t.name.empty()) {
    i = infos.size();
    for (size_t j = 0; j < infos.size(); ++j)
      if (infos[j].name == t.name)
        i = j;
    if (i == infos.size())
      return Status::error("the module has no input '" + t.name + "'");
  }
  const TensorInfo &info = infos[i];
  if (given[i])
    return Status::error("input '" + info.name + "' is given twice");
  if (t.dtype != info.dtype)
    return Status::error("input '" + info.name + "' must be " +
                         dtypeName(info.dtype) + ", got " + dtypeName(t.dtype));
  return Status::success();
}

Status Session::run(const std::vector<TensorRef> &inputs,
                    std::vector<HostTensor> &outputs) {
  const auto &infos = mod->inputs();
  if (inputs.size() != infos.size())
    return Status::error("expected " + std::to_string(infos.size()) +
                         " inputs, got " + std::to_string(inputs.size()));
  std::vector<const void *> in(infos.size(), nullptr);
  // A batch-range module: the batch its batched inputs have (all alike);
  // a length-range module: the length they have (all alike).
  int64_t batch = 0, length = 0;
  std::string first, firstLength;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const TensorRef &t = inputs[k];
    size_t i = 0;
    if (Status s = matchInput(infos, t, k, in, i); !s.ok())
      return s;
    const TensorInfo &info = infos[i];
    std::vector<int64_t> want = info.shape;
    if (info.batched && !t.shape.empty()) {
      if (!batch) {
        batch = t.shape[0];
        first = info.name;
      } else if (t.shape[0] != batch) {
        return Status::error("input '" + info.name + "' has a batch of " +
                             std::to_string(t.shape[0]) + ", input '" + first +
                             "' one of " + std::to_string(batch));
      }
      want[0] = t.shape[0];
    }
    if (t.shape.size() == want.size())
      for (int64_t d : info.lengthDims) {
        if (!length) {
          length = t.shape[d];
          firstLength = info.name;
        } else if (t.shape[d] != length) {
          return Status::error("input '" + info.name + "' has a length of " +
                               std::to_string(t.shape[d]) + ", input '" +
                               firstLength + "' one of " +
                               std::to_string(length));
        }
        want[d] = t.shape[d];
      }
    bool outOfRange =
        (info.batched && (batch < mod->batchMin || batch > mod->batchMax)) ||
        (!info.lengthDims.empty() &&
         (length < mod->lengthMin || length > mod->lengthMax));
    if (t.shape != want || outOfRange) {
      std::string expected = "[";
      for (size_t d = 0; d < info.shape.size(); ++d) {
        expected += d ? "x" : "";
        if (d == 0 && info.batched)
          expected += std::to_string(mod->batchMin) + ".." +
                      std::to_string(mod->batchMax);
        else if (std::find(info.lengthDims.begin(), info.lengthDims.end(),
                           static_cast<int64_t>(d)) != info.lengthDims.end())
          expected += std::to_string(mod->lengthMin) + ".." +
                      std::to_string(mod->lengthMax);
        else
          expected += std::to_string(info.shape[d]);
      }
      expected += "]";
      return Status::error("input '" + info.name + "' must have shape " +
                           expected + ", got " + shapeString(t.shape));
    }
    size_t bytes = bytesOf(info.shapeAt(batch, length), info.dtype);
    if (t.bytes != bytes || !t.data)
      return Status::error("input '" + info.name + "' needs " +
                           std::to_string(bytes) + " bytes, got " +
                           std::to_string(t.bytes));
    in[i] = t.data;
  }
  if (mod->batchMax && !batch)
    return Status::error("the module's batched inputs are missing");
  if (mod->lengthMax && !length)
    return Status::error("the module's inputs with a length are missing");
  outputs.resize(mod->outputs().size());
  std::vector<void *> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].info = mod->outputs()[i];
    outputs[i].info.shape = outputs[i].info.shapeAt(batch, length);
    outputs[i].data.assign(outputs[i].info.byteSize(), 0);
    out.push_back(outputs[i].data.data());
  }
  if (length)
    return runRaw(in.data(), out.data(), batch, length);
  if (batch)
    return runRaw(in.data(), out.data(), batch);
  if (Status s = runRaw(in.data(), out.data()); !s.ok())
    return s;
  // Data-dependent outputs: their actual shape, and their valid bytes.
  for (size_t i = 0; i < outputs.size(); ++i) {
    TensorInfo &info = outputs[i].info;
    if (info.dynamicDim() < 0)
      continue;
    info.shape = shapes[i];
    info.maxExtent = 0;
    outputs[i].data.resize(info.byteSize());
  }
  return Status::success();
}
