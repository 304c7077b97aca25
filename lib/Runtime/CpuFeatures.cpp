//===- CpuFeatures.cpp - The x86-64 extensions of the running CPU ---------===//
//
// Reads `cpuid` for the extensions kiln/Target/CpuFeatures.h lists, and
// XCR0 (xgetbv) for whether the operating system saves the AVX and AVX-512
// registers, without which those instructions fault even on a CPU that has
// them.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CpuFeatures.h"
#include "kiln/Runtime/Runtime.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define KILN_HAVE_CPUID 1
#endif
#if defined(__linux__) && defined(KILN_HAVE_CPUID)
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace kiln::rt;

namespace {
#ifdef KILN_HAVE_CPUID
/// The registers eax, ebx, ecx, edx of cpuid(leaf, subleaf); zeros for a
/// leaf beyond the CPU's highest.
void cpuid(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]) {
  regs[0] = regs[1] = regs[2] = regs[3] = 0;
  if (__get_cpuid_max(leaf & 0x80000000u, nullptr) < leaf)
    return;
  __cpuid_count(leaf, subleaf, regs[0], regs[1], regs[2], regs[3]);
}

/// XCR0: the register state the operating system saves (0 without
/// OSXSAVE).
uint64_t xcr0() {
  uint32_t regs[4];
  cpuid(1, 0, regs);
  if (!(regs[2] & (1u << 27))) // OSXSAVE
    return 0;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

/// Whether this process may use AMX's tile data: Linux (5.16 on) saves it
/// only for processes that request it (arch_prctl ARCH_REQ_XCOMP_PERM for
/// XTILEDATA, state component 18), and a tile instruction faults before.
/// The permission is the process's, for all its threads; asked once.
bool amxPermitted() {
#ifdef __linux__
  static const bool permitted = [] {
    constexpr long kReqXcompPerm = 0x1023, kXtileData = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXtileData) == 0;
  }();
  return permitted;
#else
  return false;
#endif
}
#endif
} // namespace

bool kiln::rt::cpuHasFeature(const std::string &feature) {
#ifdef KILN_HAVE_CPUID
  for (const kiln::CpuFeature &f : kiln::kCpuFeatures) {
    if (feature != f.name)
      continue;
    uint32_t regs[4];
    cpuid(f.leaf, f.subleaf, regs);
    if (!(regs[f.reg] & (1u << f.bit)))
      return false;
    // SSE and AVX state (XCR0 bits 1, 2); AVX-512 adds the opmask and the
    // upper halves of zmm0-15 and zmm16-31 (bits 5, 6, 7); AMX the tile
    // configuration and data (bits 17, 18).
    uint64_t need = f.state == kiln::CpuState::Avx      ? 0x6
                    : f.state == kiln::CpuState::Avx512 ? 0xe6
                    : f.state == kiln::CpuState::Amx    ? 0x60000
                                                        : 0;
    if ((xcr0() & need) != need)
      return false;
    return f.state != kiln::CpuState::Amx || amxPermitted();
  }
#endif
  return false;
}

std::vector<std::string>
kiln::rt::missingCpuFeatures(const std::vector<std::string> &features) {
  std::vector<std::string> missing;
  for (const std::string &f : features)
    if (!cpuHasFeature(f))
      missing.push_back(f);
  return missing;
}
