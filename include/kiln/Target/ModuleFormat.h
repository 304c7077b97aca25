//===- ModuleFormat.h - reading and writing .kmod files ----------*- C++
//-*-===//

#ifndef KILN_TARGET_MODULEFORMAT_H
#define KILN_TARGET_MODULEFORMAT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {
namespace kmod {
class Module;
} // namespace kmod

/// The current `.kmod` format version; readers accept exactly this one
/// (2: the payload's SHA-256 in the header, per-section digests inside).
constexpr uint32_t kModuleFormatVersion = 2;

/// Serializes `module` with the magic, version and digest header, after
/// setting its section digests (SHA-256 of each code object, the GPU
/// weights, and the rest).
std::string serializeModule(kmod::Module &module);

/// Parses and validates a `.kmod` image: magic, version, the payload's
/// digest (on a mismatch, the section that does not match its own digest
/// is named), and the consistency of signatures and code objects. On
/// failure returns false with a reason in `error`.
bool parseModule(const void *data, size_t size, kmod::Module &module,
                 std::string &error);

/// The large byte fields of a module image, which parseModuleInPlace
/// leaves where they are: views into the image it was given.
struct ModuleBlobs {
  /// Each code object's `data`, in the order of `Module.code`.
  std::vector<std::string_view> codeData;
  /// The GPU program's `constants` (its weights).
  std::string_view gpuConstants;
};

/// As parseModule, with the same checks, but the code objects' data and
/// the GPU program's constants are not copied into `module` (those fields
/// stay empty there): `blobs` points at them inside `data`, which must
/// outlive their use. A loader then holds a model's weights once while it
/// loads, not twice.
bool parseModuleInPlace(const void *data, size_t size, kmod::Module &module,
                        ModuleBlobs &blobs, std::string &error);

/// Bytes per element of an ONNX data type Kiln can exchange, or 0.
size_t dataTypeSize(int32_t dtype);

} // namespace kiln

#endif // KILN_TARGET_MODULEFORMAT_H
