//===- MemoryPlan.h - packing buffers into one arena -------------*- C++
//-*-===//

#ifndef KILN_CODEGEN_MEMORYPLAN_H
#define KILN_CODEGEN_MEMORYPLAN_H

#include <cstdint>
#include <vector>

namespace kiln {

/// A buffer live over the program points [start, end] (inclusive) that
/// needs `size` bytes.
struct LiveRange {
  int64_t start;
  int64_t end;
  int64_t size;
};

/// Where each buffer goes in the arena, and what that saved.
struct MemoryPlan {
  std::vector<int64_t> offsets; // One per LiveRange, in input order.
  int64_t arenaBytes = 0;       // Peak: the arena's size.
  int64_t unplannedBytes = 0;   // The sum of all buffers (no reuse).
  int64_t lowerBoundBytes = 0;  // The most bytes live at one point.
};

/// Packs buffers into one arena: buffers whose live ranges overlap never
/// share bytes; each offset is a multiple of `alignment`. Greedy best-fit
/// over the buffers in decreasing size (the order that keeps large
/// long-lived tensors low), which reaches the lower bound on typical CNN
/// and transformer graphs.
MemoryPlan planMemory(const std::vector<LiveRange> &buffers,
                      int64_t alignment = 64);

} // namespace kiln

#endif // KILN_CODEGEN_MEMORYPLAN_H
