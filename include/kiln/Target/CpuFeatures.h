//===- CpuFeatures.h - x86-64 features a module's code may need -*- C++ -*-===//
//
// The x86-64 instruction set extensions that kiln-compile records in a
// module's CPU (and emulator) code object, by LLVM's names, and where the
// `cpuid` instruction reports each. The compiler records those of its
// target CPU that appear here; the runtime checks them before it loads the
// code, so a module compiled for a CPU with more extensions than the one
// it runs on fails to load with the names of those it lacks, rather than
// stopping on an illegal instruction. The extensions every x86-64 CPU has
// (SSE2 and below) are not listed.
//
// This header depends on nothing: the runtime includes it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_CPUFEATURES_H
#define KILN_TARGET_CPUFEATURES_H

#include <cstdint>

namespace kiln {

/// The register state an extension needs the operating system to save
/// (XCR0, read with xgetbv): none, the AVX registers, the AVX-512 ones, or
/// AMX's tile configuration and data (which Linux also asks each process
/// to request before it uses them).
enum class CpuState : uint8_t { None, Avx, Avx512, Amx };

struct CpuFeature {
  const char *name; // LLVM's feature name, as in +avx2
  uint32_t leaf;    // cpuid leaf (eax)
  uint32_t subleaf; // cpuid sub-leaf (ecx)
  uint8_t reg;      // the register holding the bit: 0 eax, 1 ebx, 2 ecx, 3 edx
  uint8_t bit;
  CpuState state;
};

inline constexpr CpuFeature kCpuFeatures[] = {
    {"sse3", 1, 0, 2, 0, CpuState::None},
    {"pclmul", 1, 0, 2, 1, CpuState::None},
    {"ssse3", 1, 0, 2, 9, CpuState::None},
    {"fma", 1, 0, 2, 12, CpuState::Avx},
    {"cx16", 1, 0, 2, 13, CpuState::None},
    {"sse4.1", 1, 0, 2, 19, CpuState::None},
    {"sse4.2", 1, 0, 2, 20, CpuState::None},
    {"movbe", 1, 0, 2, 22, CpuState::None},
    {"popcnt", 1, 0, 2, 23, CpuState::None},
    {"aes", 1, 0, 2, 25, CpuState::None},
    {"avx", 1, 0, 2, 28, CpuState::Avx},
    {"f16c", 1, 0, 2, 29, CpuState::Avx},
    {"bmi", 7, 0, 1, 3, CpuState::None},
    {"avx2", 7, 0, 1, 5, CpuState::Avx},
    {"bmi2", 7, 0, 1, 8, CpuState::None},
    {"avx512f", 7, 0, 1, 16, CpuState::Avx512},
    {"avx512dq", 7, 0, 1, 17, CpuState::Avx512},
    {"adx", 7, 0, 1, 19, CpuState::None},
    {"avx512ifma", 7, 0, 1, 21, CpuState::Avx512},
    {"avx512cd", 7, 0, 1, 28, CpuState::Avx512},
    {"avx512bw", 7, 0, 1, 30, CpuState::Avx512},
    {"avx512vl", 7, 0, 1, 31, CpuState::Avx512},
    {"avx512vbmi", 7, 0, 2, 1, CpuState::Avx512},
    {"avx512vbmi2", 7, 0, 2, 6, CpuState::Avx512},
    {"gfni", 7, 0, 2, 8, CpuState::None},
    {"vaes", 7, 0, 2, 9, CpuState::Avx},
    {"vpclmulqdq", 7, 0, 2, 10, CpuState::Avx},
    {"avx512vnni", 7, 0, 2, 11, CpuState::Avx512},
    {"avx512bitalg", 7, 0, 2, 12, CpuState::Avx512},
    {"avx512vpopcntdq", 7, 0, 2, 14, CpuState::Avx512},
    {"avx512fp16", 7, 0, 3, 23, CpuState::Avx512},
    {"amx-bf16", 7, 0, 3, 22, CpuState::Amx},
    {"amx-tile", 7, 0, 3, 24, CpuState::Amx},
    {"amx-int8", 7, 0, 3, 25, CpuState::Amx},
    {"avxvnni", 7, 1, 0, 4, CpuState::Avx},
    {"avx512bf16", 7, 1, 0, 5, CpuState::Avx512},
    {"lzcnt", 0x80000001u, 0, 2, 5, CpuState::None},
};

} // namespace kiln

#endif // KILN_TARGET_CPUFEATURES_H
