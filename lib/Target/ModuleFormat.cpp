//===- ModuleFormat.cpp - reading and writing .kmod files -----------------===//

#include "kiln/Target/ModuleFormat.h"

#include "kmod.pb.h"

#include <cstring>

namespace {
constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'M', 'O', 'D', '\0'};
constexpr size_t kHeaderSize = sizeof(kMagic) + sizeof(uint32_t);
} // namespace

size_t kiln::dataTypeSize(int32_t dtype) {
  switch (dtype) {
  case 1:
  case 6:
  case 12:
    return 4; // float, int32, uint32
  case 2:
  case 3:
  case 9:
    return 1; // uint8, int8, bool
  case 4:
  case 5:
  case 10:
  case 16:
    return 2; // (u)int16, float16, bfloat16
  case 7:
  case 11:
  case 13:
    return 8; // int64, double, uint64
  default:
    return 0;
  }
}

std::string kiln::serializeModule(const kmod::Module &module) {
  std::string out(kMagic, sizeof(kMagic));
  uint32_t version = kModuleFormatVersion;
  char v[4];
  for (int i = 0; i < 4; ++i)
    v[i] = static_cast<char>((version >> (8 * i)) & 0xff);
  out.append(v, 4);
  module.AppendToString(&out);
  return out;
}

bool kiln::parseModule(const void *data, size_t size, kmod::Module &module,
                       std::string &error) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  if (size < kHeaderSize || std::memcmp(bytes, kMagic, sizeof(kMagic)) != 0) {
    error = "not a Kiln module (bad magic)";
    return false;
  }
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i)
    version |= static_cast<uint32_t>(bytes[sizeof(kMagic) + i]) << (8 * i);
  if (version != kModuleFormatVersion) {
    error = "module format version " + std::to_string(version) +
            " is not supported (this runtime reads version " +
            std::to_string(kModuleFormatVersion) + ")";
    return false;
  }
  if (size - kHeaderSize > static_cast<size_t>(INT32_MAX) ||
      !module.ParseFromArray(bytes + kHeaderSize,
                             static_cast<int>(size - kHeaderSize))) {
    error = "the module payload is truncated or corrupt";
    return false;
  }
  auto checkSigs = [&](const auto &sigs, const char *what, bool allowDynamic) {
    for (const auto &s : sigs) {
      if (dataTypeSize(s.dtype()) == 0) {
        error = std::string(what) + " '" + s.name() +
                "' has unsupported data type " + std::to_string(s.dtype());
        return false;
      }
      // An output's extent may be data-dependent (-1, at most one), with
      // an upper bound.
      int dynamic = 0;
      for (int64_t d : s.shape()) {
        if (d == -1 && allowDynamic && !dynamic++)
          continue;
        if (d < 0 || d > (int64_t(1) << 40)) {
          error = std::string(what) + " '" + s.name() +
                  "' has an invalid extent " + std::to_string(d);
          return false;
        }
      }
      if (dynamic ? s.max_extent() < 1 || s.max_extent() > (int64_t(1) << 40)
                  : s.max_extent() != 0) {
        error = std::string(what) + " '" + s.name() +
                "' has an invalid upper bound " +
                std::to_string(s.max_extent());
        return false;
      }
    }
    return true;
  };
  if (!checkSigs(module.inputs(), "input", false) ||
      !checkSigs(module.outputs(), "output", true))
    return false;
  if (module.outputs_size() == 0) {
    error = "the module has no outputs";
    return false;
  }
  if (module.code_size() == 0 &&
      (module.gpu().chip().empty() || module.gpu().kernels_size() > 0)) {
    error = "the module holds no code";
    return false;
  }
  if (module.memory_plan().arena_bytes() < 0 ||
      module.memory_plan().arena_bytes() > (int64_t(1) << 40)) {
    error = "the memory plan's arena size is invalid";
    return false;
  }
  for (const auto &code : module.code()) {
    if (code.data().empty() ||
        (code.format() == "elf-shared-object" && code.entry().empty())) {
      error = "code object for '" + code.target() + "' is empty";
      return false;
    }
  }
  // The GPU launch plan: every launch names a kernel, sane dimensions and
  // one argument per kernel parameter, each inside a known buffer.
  const auto &gpu = module.gpu();
  for (const auto &k : gpu.kernels())
    if (k.name().empty() || k.num_args() < 0) {
      error = "the GPU program has a kernel without a name";
      return false;
    }
  if (gpu.num_buffers() < 0 || gpu.num_buffers() > (1 << 20)) {
    error = "the GPU program's buffer count is invalid";
    return false;
  }
  for (int l = 0; l < gpu.launches_size(); ++l) {
    const auto &launch = gpu.launches(l);
    std::string where = "launch " + std::to_string(l) + " of the GPU program";
    if (launch.kernel() < 0 || launch.kernel() >= gpu.kernels_size()) {
      error = where + " names no kernel";
      return false;
    }
    if (launch.grid_size() != 3 || launch.block_size() != 3) {
      error = where + " lacks its grid or block dimensions";
      return false;
    }
    int64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
      if (launch.grid(d) < 1 || launch.grid(d) > INT32_MAX ||
          launch.block(d) < 1 || launch.block(d) > 1024) {
        error = where + " has invalid grid or block dimensions";
        return false;
      }
      threads *= launch.block(d);
    }
    if (threads > 1024 || launch.dynamic_shared_bytes() < 0) {
      error = where + " has more than 1024 threads per block";
      return false;
    }
    const auto &kernel = gpu.kernels(launch.kernel());
    if (launch.args_size() != kernel.num_args()) {
      error = where + " passes " + std::to_string(launch.args_size()) +
              " arguments to kernel '" + kernel.name() + "', which takes " +
              std::to_string(kernel.num_args());
      return false;
    }
    for (const auto &arg : launch.args()) {
      if (arg.buffer() < -1 || arg.buffer() >= gpu.num_buffers() ||
          arg.offset() < 0 ||
          (arg.buffer() == -1 &&
           arg.offset() > static_cast<int64_t>(gpu.constants().size()))) {
        error = where + " has an argument outside its buffers";
        return false;
      }
    }
  }
  return true;
}
