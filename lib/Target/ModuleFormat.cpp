//===- ModuleFormat.cpp - reading and writing .kmod files -----------------===//

#include "kiln/Target/ModuleFormat.h"

#include "kmod.pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/wire_format_lite.h>
#include <openssl/sha.h>

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <cstring>

namespace {
constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'M', 'O', 'D', '\0'};
constexpr size_t kDigestSize = SHA256_DIGEST_LENGTH;
constexpr size_t kHeaderSize = sizeof(kMagic) + sizeof(uint32_t) + kDigestSize;

std::string sha256(const void *data, size_t size) {
  unsigned char out[kDigestSize];
  SHA256(static_cast<const unsigned char *>(data), size, out);
  return std::string(reinterpret_cast<const char *>(out), kDigestSize);
}
std::string sha256(const std::string &s) { return sha256(s.data(), s.size()); }

std::string codeSection(const kiln::kmod::CodeObject &code) {
  return "code " + code.target() + " (" + code.format() + ")";
}

/// The module's sections and their digests, computed on `module` with
/// its large byte fields (code data, GPU constants) and digests moved out
/// for the skeleton's deterministic serialization and moved back.
std::vector<std::pair<std::string, std::string>>
sectionDigests(kiln::kmod::Module &module) {
  std::vector<std::pair<std::string, std::string>> out;
  std::vector<std::string> data(module.code_size());
  for (int i = 0; i < module.code_size(); ++i) {
    out.emplace_back(codeSection(module.code(i)),
                     sha256(module.code(i).data()));
    module.mutable_code(i)->mutable_data()->swap(data[i]);
  }
  std::string constants;
  if (!module.gpu().constants().empty())
    out.emplace_back("weights", sha256(module.gpu().constants()));
  module.mutable_gpu()->mutable_constants()->swap(constants);
  google::protobuf::RepeatedPtrField<kiln::kmod::SectionDigest> digests;
  module.mutable_digests()->Swap(&digests);
  std::string skeleton;
  {
    google::protobuf::io::StringOutputStream stream(&skeleton);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    module.SerializeToCodedStream(&coded);
  }
  out.emplace_back("signature and plan", sha256(skeleton));
  module.mutable_digests()->Swap(&digests);
  module.mutable_gpu()->mutable_constants()->swap(constants);
  for (int i = 0; i < module.code_size(); ++i)
    module.mutable_code(i)->mutable_data()->swap(data[i]);
  return out;
}

using google::protobuf::internal::WireFormatLite;

/// Calls `fn(field, wireType, raw, value)` for each field of the
/// serialized message `msg` in order: `raw` is the field's bytes with its
/// tag, `value` a length-delimited field's contents (else empty). False
/// when `msg` is not a well-formed message or `fn` returns false.
template <typename Fn> bool forEachField(std::string_view msg, Fn fn) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t *>(msg.data()),
      static_cast<int>(msg.size()));
  for (;;) {
    int start = in.CurrentPosition();
    uint32_t tag = in.ReadTag();
    if (tag == 0)
      return static_cast<size_t>(start) == msg.size();
    int field = WireFormatLite::GetTagFieldNumber(tag);
    WireFormatLite::WireType type = WireFormatLite::GetTagWireType(tag);
    std::string_view value;
    if (type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length))
        return false;
      size_t at = static_cast<size_t>(in.CurrentPosition());
      if (length > msg.size() - at || !in.Skip(static_cast<int>(length)))
        return false;
      value = msg.substr(at, length);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
    std::string_view raw =
        msg.substr(start, static_cast<size_t>(in.CurrentPosition()) - start);
    if (!fn(field, type, raw, value))
      return false;
  }
}

void appendVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

/// Copies the serialized message `msg` into `out` without its
/// length-delimited field `strip`, whose value (the last, as a parser
/// would keep it) goes to `blob`.
bool stripField(std::string_view msg, int strip, std::string &out,
                std::string_view &blob) {
  return forEachField(msg, [&](int field, auto type, std::string_view raw,
                               std::string_view value) {
    if (field == strip && type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED)
      blob = value;
    else
      out.append(raw.data(), raw.size());
    return true;
  });
}

/// The module payload without its large byte fields (each code object's
/// data, the GPU constants), which go to `blobs` as views into `payload`.
bool moduleSkeleton(std::string_view payload, std::string &skeleton,
                    kiln::ModuleBlobs &blobs) {
  using kiln::kmod::CodeObject;
  using kiln::kmod::GpuProgram;
  using kiln::kmod::Module;
  return forEachField(payload, [&](int field, auto type, std::string_view raw,
                                   std::string_view value) {
    bool nested =
        type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED &&
        (field == Module::kCodeFieldNumber || field == Module::kGpuFieldNumber);
    if (!nested) {
      skeleton.append(raw.data(), raw.size());
      return true;
    }
    std::string inner;
    if (field == Module::kCodeFieldNumber) {
      // Each occurrence is one more code object.
      std::string_view data;
      if (!stripField(value, CodeObject::kDataFieldNumber, inner, data))
        return false;
      blobs.codeData.push_back(data);
    } else if (!stripField(value, GpuProgram::kConstantsFieldNumber, inner,
                           blobs.gpuConstants)) {
      // Occurrences of the GPU program merge; its constants are the last
      // ones given.
      return false;
    }
    appendVarint(skeleton,
                 WireFormatLite::MakeTag(
                     field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    appendVarint(skeleton, inner.size());
    skeleton += inner;
    return true;
  });
}

/// Puts the large byte fields back into a module parsed from its
/// skeleton.
void fillBlobs(kiln::kmod::Module &module, const kiln::ModuleBlobs &blobs) {
  for (int i = 0; i < module.code_size(); ++i)
    module.mutable_code(i)->set_data(std::string(blobs.codeData[i]));
  if (!blobs.gpuConstants.empty())
    module.mutable_gpu()->set_constants(std::string(blobs.gpuConstants));
}

uint32_t readU32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
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
  case 17:
  case 18:
  case 19:
  case 20:
  case 21:
  case 22:
  case 23:
  case 25:
  case 26:
    return 1; // uint8, int8, bool, the float8 formats, (u)int4 and (u)int2
              // (one per byte in memory)
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

std::string kiln::serializeModule(kmod::Module &module) {
  module.clear_digests();
  for (auto &[section, digest] : sectionDigests(module)) {
    auto *d = module.add_digests();
    d->set_section(section);
    d->set_sha256(digest);
  }
  std::string payload;
  module.SerializeToString(&payload);
  std::string out(kMagic, sizeof(kMagic));
  uint32_t version = kModuleFormatVersion;
  char v[4];
  for (int i = 0; i < 4; ++i)
    v[i] = static_cast<char>((version >> (8 * i)) & 0xff);
  out.append(v, 4);
  out += sha256(payload);
  out += payload;
  return out;
}

bool kiln::parseModule(const void *data, size_t size, kmod::Module &module,
                       std::string &error) {
  ModuleBlobs blobs;
  if (!parseModuleInPlace(data, size, module, blobs, error))
    return false;
  fillBlobs(module, blobs);
  return true;
}

bool kiln::parseModuleInPlace(const void *data, size_t size,
                              kmod::Module &module, ModuleBlobs &blobs,
                              std::string &error) {
  blobs = ModuleBlobs();
  const auto *bytes = static_cast<const unsigned char *>(data);
  if (size < sizeof(kMagic) + sizeof(uint32_t) ||
      std::memcmp(bytes, kMagic, sizeof(kMagic)) != 0) {
    error = "not a Kiln module (bad magic)";
    return false;
  }
  uint32_t version = readU32(bytes + sizeof(kMagic));
  if (version != kModuleFormatVersion) {
    error = "module format version " + std::to_string(version) + ": " +
            (version < kModuleFormatVersion
                 ? "compiled by an older Kiln; compile it again with this "
                   "Kiln's kiln-compile"
                 : "compiled by a newer Kiln than this runtime") +
            " (this runtime reads version " +
            std::to_string(kModuleFormatVersion) + ")";
    return false;
  }
  if (size < kHeaderSize) {
    error = "the module is truncated (no room for its digest)";
    return false;
  }
  const unsigned char *payload = bytes + kHeaderSize;
  size_t payloadSize = size - kHeaderSize;
  bool intact = sha256(payload, payloadSize) ==
                std::string(reinterpret_cast<const char *>(bytes) +
                                sizeof(kMagic) + sizeof(uint32_t),
                            kDigestSize);
  bool parsed;
  {
    // A damaged payload is parsed only to name the damage: no log lines
    // from protobuf about it (invalid UTF-8 in a name, say).
    std::optional<google::protobuf::LogSilencer> silence;
    if (!intact)
      silence.emplace();
    std::string skeleton;
    parsed =
        payloadSize <= static_cast<size_t>(INT32_MAX) &&
        moduleSkeleton(std::string_view(reinterpret_cast<const char *>(payload),
                                        payloadSize),
                       skeleton, blobs) &&
        module.ParseFromString(skeleton) &&
        static_cast<size_t>(module.code_size()) == blobs.codeData.size();
  }
  if (!intact) {
    // Name the damage: a section whose digest no longer matches, else
    // the structure or the digests themselves.
    error = "the module is damaged: ";
    if (!parsed) {
      error += "its payload does not parse (truncated or corrupt)";
      return false;
    }
    fillBlobs(module, blobs);
    std::map<std::string, std::string> stored;
    for (const auto &d : module.digests())
      stored[d.section()] = d.sha256();
    for (auto &[section, digest] : sectionDigests(module))
      if (stored.count(section) && stored[section] != digest) {
        error += "section '" + section + "' does not match its digest";
        return false;
      }
    error += "its digests or section table do not match its contents";
    return false;
  }
  if (!parsed) {
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
  // Sequences and optionals: known element types, each over a run of its
  // side's tensors, in graph order.
  int nextFirst[2] = {0, 0};
  for (const auto &q : module.composites()) {
    int side = q.output() ? 1 : 0;
    int count = q.output() ? module.outputs_size() : module.inputs_size();
    bool optional = q.kind() != kmod::CompositeSignature::SEQUENCE;
    if (q.name().empty() || dataTypeSize(q.dtype()) == 0 || q.first() < 0 ||
        q.length() < 0 || q.first() < nextFirst[side] ||
        q.first() > count - q.length() ||
        !kmod::CompositeSignature::Kind_IsValid(q.kind()) ||
        (q.absent() && (!optional || q.length() != 0)) ||
        (q.kind() == kmod::CompositeSignature::OPTIONAL_TENSOR &&
         q.length() != (q.absent() ? 0 : 1)) ||
        (q.run_time_count() &&
         (!q.output() || q.absent() || q.first() + q.length() >= count ||
          module.outputs(q.first() + q.length()).dtype() != 7 /*INT64*/ ||
          module.outputs(q.first() + q.length()).shape_size() != 0))) {
      error = "the module's sequence or optional '" + q.name() + "' is invalid";
      return false;
    }
    for (int i = 0; i < q.length(); ++i) {
      const auto &t = q.output() ? module.outputs(q.first() + i)
                                 : module.inputs(q.first() + i);
      if (t.dtype() != q.dtype()) {
        error = "the module's sequence or optional '" + q.name() +
                "' has an element of another data type";
        return false;
      }
    }
    nextFirst[side] = q.first() + q.length() + (q.run_time_count() ? 1 : 0);
  }
  if (module.outputs_size() == 0 && module.composites().empty()) {
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
  for (int i = 0; i < module.code_size(); ++i) {
    const auto &code = module.code(i);
    if (blobs.codeData[i].empty() ||
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
           arg.offset() > static_cast<int64_t>(blobs.gpuConstants.size()))) {
        error = where + " has an argument outside its buffers";
        return false;
      }
    }
  }
  return true;
}
