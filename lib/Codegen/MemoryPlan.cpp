//===- MemoryPlan.cpp - packing buffers into one arena --------------------===//

#include "kiln/Codegen/MemoryPlan.h"

#include <algorithm>
#include <map>
#include <numeric>

kiln::MemoryPlan kiln::planMemory(const std::vector<LiveRange> &buffers,
                                  int64_t alignment) {
  MemoryPlan plan;
  size_t n = buffers.size();
  plan.offsets.assign(n, 0);
  auto align = [&](int64_t v) {
    return (v + alignment - 1) / alignment * alignment;
  };
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].start < buffers[b].start;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const LiveRange &r = buffers[i];
    int64_t size = align(std::max<int64_t>(r.size, 1));
    // The byte ranges taken by buffers live at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t j : placed) {
      const LiveRange &o = buffers[j];
      if (o.start <= r.end && r.start <= o.end)
        taken.push_back(
            {plan.offsets[j],
             plan.offsets[j] + align(std::max<int64_t>(o.size, 1))});
    }
    std::sort(taken.begin(), taken.end());
    // Best fit: the smallest gap that holds the buffer, else the end.
    int64_t best = -1, bestGap = INT64_MAX, cursor = 0;
    for (auto [lo, hi] : taken) {
      if (lo - cursor >= size && lo - cursor < bestGap) {
        best = cursor;
        bestGap = lo - cursor;
      }
      cursor = std::max(cursor, hi);
    }
    plan.offsets[i] = best >= 0 ? best : cursor;
    plan.arenaBytes = std::max(plan.arenaBytes, plan.offsets[i] + size);
    plan.unplannedBytes += size;
    placed.push_back(i);
  }
  // The lower bound: the most bytes live at any single point.
  std::map<int64_t, int64_t> delta;
  for (const LiveRange &r : buffers) {
    delta[r.start] += align(std::max<int64_t>(r.size, 1));
    delta[r.end + 1] -= align(std::max<int64_t>(r.size, 1));
  }
  int64_t live = 0;
  for (auto [point, d] : delta) {
    live += d;
    plan.lowerBoundBytes = std::max(plan.lowerBoundBytes, live);
  }
  return plan;
}
