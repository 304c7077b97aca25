//===- Calibrate.cpp - the machine's measured peaks for the roofline ------===//
//
// Two micro-benchmarks per device: f32 fused multiply-adds from registers
// (the compute ceiling) and a STREAM-style triad over arrays much larger
// than the caches (the memory ceiling). The profiler divides each region's
// or kernel's counted work by its time and compares with these.
//
//===----------------------------------------------------------------------===//

#include "GpuCode.h"
#include "kiln/Runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace kiln::rt;

namespace {
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// Twelve independent chains of `acc = acc * x + y`, enough to keep two
/// FMA pipes of four-cycle latency busy. Returns a value the caller keeps
/// so that the loop is not dropped. FLOPs: iters * 12 * lanes * 2.
constexpr int kChains = 12;

template <size_t N> float sum(const float (&v)[N]) {
  float r = 0;
  for (float x : v)
    r += x;
  return r;
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float fmaLoopAvx512(int64_t iters) {
  __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-6f);
  __m512 a[kChains];
  for (int c = 0; c < kChains; ++c)
    a[c] = _mm512_set1_ps(static_cast<float>(c));
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c)
      a[c] = _mm512_fmadd_ps(a[c], x, y);
  __m512 s = a[0];
  for (int c = 1; c < kChains; ++c)
    s = _mm512_add_ps(s, a[c]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  return sum(lanes);
}

__attribute__((target("avx2,fma"))) float fmaLoopAvx2(int64_t iters) {
  __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-6f);
  __m256 a[kChains];
  for (int c = 0; c < kChains; ++c)
    a[c] = _mm256_set1_ps(static_cast<float>(c));
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c)
      a[c] = _mm256_fmadd_ps(a[c], x, y);
  __m256 s = a[0];
  for (int c = 1; c < kChains; ++c)
    s = _mm256_add_ps(s, a[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  return sum(lanes);
}
#endif

float fmaLoopScalar(int64_t iters) {
  volatile float xv = 0.999999f, yv = 1e-6f;
  float x = xv, y = yv;
  float a[kChains];
  for (int c = 0; c < kChains; ++c)
    a[c] = static_cast<float>(c);
  for (int64_t i = 0; i < iters; ++i)
    for (int c = 0; c < kChains; ++c)
      a[c] = a[c] * x + y;
  return sum(a);
}

/// Runs `work(thread)` on `threads` threads at once; returns the wall time.
template <typename F> double onThreads(int threads, F work) {
  std::vector<std::thread> pool;
  auto t0 = Clock::now();
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(work, t);
  work(0);
  for (auto &th : pool)
    th.join();
  return seconds(t0, Clock::now());
}

Status measureCpu(int threads, DevicePeaks &out) {
  if (threads <= 0)
    threads = std::max(1u, std::thread::hardware_concurrency());

  // Compute: the widest FMA the CPU has (the code Kiln emits is tuned for
  // the host CPU, so it may use the same).
  float (*loop)(int64_t) = fmaLoopScalar;
  int lanes = 1;
  const char *isa = "scalar";
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    loop = fmaLoopAvx512;
    lanes = 16;
    isa = "avx512";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    loop = fmaLoopAvx2;
    lanes = 8;
    isa = "avx2";
  }
#endif
  std::vector<float> sink(threads);
  // Size the loop to about 0.1 s per repetition from a short probe.
  int64_t iters = 1 << 16;
  double probe = onThreads(1, [&](int t) { sink[t] = loop(iters); });
  iters = std::max<int64_t>(
      iters, static_cast<int64_t>(iters * 0.1 / std::max(probe, 1e-6)));
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double s = onThreads(threads, [&](int t) { sink[t] = loop(iters); });
    double flops = 2.0 * kChains * lanes * static_cast<double>(iters) * threads;
    best = std::max(best, flops / s / 1e9);
  }
  float keep = 0;
  for (float v : sink)
    keep += v;
  if (keep != keep) // NaN would mean the loop computed garbage
    return Status::error("the FMA micro-benchmark computed NaN");
  out.gflops = best;

  // Memory: a[i] = b[i] + s * c[i] over 3 x 64 MiB, 12 bytes per element
  // (write-allocate traffic not counted, as STREAM does).
  const size_t n = size_t(16) << 20;
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  auto slice = [&](int t, size_t &lo, size_t &hi) {
    lo = n * t / threads;
    hi = n * (t + 1) / threads;
  };
  onThreads(threads, [&](int t) { // first touch by the thread that uses it
    size_t lo, hi;
    slice(t, lo, hi);
    for (size_t i = lo; i < hi; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  });
  volatile float scale = 0.5f;
  constexpr int kSweeps = 4;
  double bestBw = 0;
  for (int rep = 0; rep < 5; ++rep) {
    float s = scale;
    double sec = onThreads(threads, [&](int t) {
      size_t lo, hi;
      slice(t, lo, hi);
      float *__restrict pa = a.get();
      const float *__restrict pb = b.get();
      const float *__restrict pc = c.get();
      // Several sweeps per repetition, so that starting the threads is
      // a small part of its time.
      for (int sweep = 0; sweep < kSweeps; ++sweep)
        for (size_t i = lo; i < hi; ++i)
          pa[i] = pb[i] + s * pc[i];
    });
    bestBw = std::max(bestBw, 12.0 * n * kSweeps / sec / 1e9);
  }
  if (a[n / 2] != 2.0f)
    return Status::error("the triad micro-benchmark computed a wrong value");
  out.gbps = bestBw;
  out.how = std::string(isa) + " f32 FMA chains and a triad over 3 x " +
            std::to_string(n * sizeof(float) >> 20) + " MiB, " +
            std::to_string(threads) + " thread" + (threads > 1 ? "s" : "");
  return Status::success();
}
} // namespace

Status kiln::rt::measurePeaks(Device device, int threads, DevicePeaks &out) {
  out = DevicePeaks();
  switch (device) {
  case Device::Cpu:
  case Device::Default:
    return measureCpu(threads, out);
  case Device::Cuda:
    return measureCudaPeaks(out);
  case Device::Emulator:
    return Status::error("the emulator has no peaks to measure: its times "
                         "are the host's, running kernels one thread at a "
                         "time");
  }
  return Status::error("unknown device");
}
