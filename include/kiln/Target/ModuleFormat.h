//===- ModuleFormat.h - reading and writing .kmod files ----------*- C++
//-*-===//

#ifndef KILN_TARGET_MODULEFORMAT_H
#define KILN_TARGET_MODULEFORMAT_H

#include <cstdint>
#include <string>

namespace kiln {
namespace kmod {
class Module;
} // namespace kmod

/// The current `.kmod` format version; readers accept exactly this one.
constexpr uint32_t kModuleFormatVersion = 1;

/// Serializes `module` with the magic and version header.
std::string serializeModule(const kmod::Module &module);

/// Parses and validates a `.kmod` image: magic, version, payload, and the
/// consistency of signatures and code objects. On failure returns false
/// with a reason in `error`.
bool parseModule(const void *data, size_t size, kmod::Module &module,
                 std::string &error);

/// Bytes per element of an ONNX data type Kiln can exchange, or 0.
size_t dataTypeSize(int32_t dtype);

} // namespace kiln

#endif // KILN_TARGET_MODULEFORMAT_H
