//===- MemoryPlanTest.cpp - planMemory on hand-made live ranges -----------===//

#include "kiln/Codegen/MemoryPlan.h"

#include <gtest/gtest.h>

using kiln::LiveRange;
using kiln::planMemory;

namespace {

/// No two buffers live at the same time may share a byte.
void expectDisjoint(const std::vector<LiveRange> &r, const kiln::MemoryPlan &p,
                    int64_t align) {
  auto sz = [&](size_t i) { return (r[i].size + align - 1) / align * align; };
  for (size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(p.offsets[i] % align, 0) << "buffer " << i;
    EXPECT_LE(p.offsets[i] + sz(i), p.arenaBytes) << "buffer " << i;
    for (size_t j = i + 1; j < r.size(); ++j) {
      bool liveTogether = r[i].start <= r[j].end && r[j].start <= r[i].end;
      bool overlap = p.offsets[i] < p.offsets[j] + sz(j) &&
                     p.offsets[j] < p.offsets[i] + sz(i);
      EXPECT_FALSE(liveTogether && overlap) << "buffers " << i << ", " << j;
    }
  }
}

TEST(MemoryPlan, ChainReusesDeadBuffers) {
  // a -> b -> c -> d: at most two live at once.
  std::vector<LiveRange> r = {
      {0, 1, 1000}, {1, 2, 1000}, {2, 3, 1000}, {3, 4, 1000}};
  auto p = planMemory(r, 64);
  expectDisjoint(r, p, 64);
  EXPECT_EQ(p.unplannedBytes, 4 * 1024);
  EXPECT_EQ(p.lowerBoundBytes, 2 * 1024);
  EXPECT_EQ(p.arenaBytes, 2 * 1024);
}

TEST(MemoryPlan, AllLiveNeedsTheSum) {
  std::vector<LiveRange> r = {{0, 9, 64}, {1, 9, 128}, {2, 9, 256}};
  auto p = planMemory(r, 64);
  expectDisjoint(r, p, 64);
  EXPECT_EQ(p.arenaBytes, 448);
  EXPECT_EQ(p.lowerBoundBytes, 448);
}

TEST(MemoryPlan, SmallBufferFitsAGap) {
  // A big long-lived buffer, two mid-sized ones in sequence, and a small
  // one live alongside the second: it goes in the first's freed bytes.
  std::vector<LiveRange> r = {
      {0, 10, 4096}, {1, 3, 2048}, {4, 8, 2048}, {5, 6, 512}};
  auto p = planMemory(r, 64);
  expectDisjoint(r, p, 64);
  EXPECT_EQ(p.arenaBytes, 4096 + 2048 + 512);
  EXPECT_EQ(p.lowerBoundBytes, 4096 + 2048 + 512);
}

TEST(MemoryPlan, AlignmentRoundsSizes) {
  std::vector<LiveRange> r = {{0, 1, 1}, {0, 1, 65}, {0, 1, 0}};
  auto p = planMemory(r, 64);
  expectDisjoint(r, p, 64);
  EXPECT_EQ(p.arenaBytes, 64 + 128 + 64);
}

TEST(MemoryPlan, RandomRangesStayDisjoint) {
  uint64_t seed = 42;
  auto next = [&]() {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>(seed >> 33);
  };
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<LiveRange> r;
    for (int i = 0; i < 40; ++i) {
      int64_t s = next() % 100;
      r.push_back({s, s + next() % 20, 1 + next() % 5000});
    }
    auto p = planMemory(r, 64);
    expectDisjoint(r, p, 64);
    EXPECT_GE(p.arenaBytes, p.lowerBoundBytes);
    EXPECT_LE(p.arenaBytes, p.unplannedBytes);
  }
}

TEST(MemoryPlan, Empty) {
  auto p = planMemory({}, 64);
  EXPECT_EQ(p.arenaBytes, 0);
  EXPECT_EQ(p.lowerBoundBytes, 0);
}

} // namespace
