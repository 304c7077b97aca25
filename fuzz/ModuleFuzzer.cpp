//===- ModuleFuzzer.cpp - libFuzzer harness for the .kmod reader ----------===//
//
// Feeds bytes to kiln::parseModule, the validation every module load starts
// with (nothing is mapped or run here). The first byte picks the form: even,
// the rest is a whole .kmod image; odd, the rest is a payload that gets a
// header with its right SHA-256 (a mutated payload never matches the one it
// carries), so the reader's checks past the digest (protobuf structure,
// section table, signatures, memory plan, launch plan) are fuzzed too. Any
// crash, sanitizer report or hang is a bug; refusals are the expected end.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/ModuleFormat.h"

#include "kmod.pb.h"

#include <google/protobuf/stubs/logging.h>
#include <openssl/sha.h>

#include <cstdint>
#include <cstring>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static google::protobuf::LogSilencer *silence =
      new google::protobuf::LogSilencer();
  (void)silence;
  std::string image;
  if (size > 0 && (data[0] & 1)) {
    // magic, version, SHA-256 of the payload, the payload.
    image.assign("KILNMOD\0", 8);
    uint32_t v = kiln::kModuleFormatVersion;
    image.append(reinterpret_cast<const char *>(&v), 4);
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(data + 1, size - 1, digest);
    image.append(reinterpret_cast<const char *>(digest), sizeof(digest));
    image.append(reinterpret_cast<const char *>(data + 1), size - 1);
  } else if (size > 0) {
    image.assign(reinterpret_cast<const char *>(data + 1), size - 1);
  }
  kiln::kmod::Module module;
  std::string error;
  if (!kiln::parseModule(image.data(), image.size(), module, error) &&
      error.empty())
    __builtin_trap(); // a refusal must say why
  return 0;
}
