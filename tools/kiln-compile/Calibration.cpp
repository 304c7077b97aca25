//===- Calibration.cpp - ranges of a model's tensors over samples ---------===//
//
// kiln-compile --precision=int8 runs the float model, with the tensors to
// quantize as extra outputs (kiln-expose-calibration-tensors), through
// Kiln's own CPU code over the calibration samples: a first pass for each
// tensor's extremes, a second (percentile, entropy) for a histogram of
// the non-zero |x| over [0, max |x|], from which the clipping threshold is
// chosen.
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"

#include "../common/TensorFiles.h"
#include "kiln/Runtime/Runtime.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

using namespace kiln::rt;

namespace {

constexpr int kBins = 2048;

struct Observed {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  std::vector<double> hist = std::vector<double>(kBins, 0.0);
  double amax() const { return std::max(std::fabs(lo), std::fabs(hi)); }
};

/// The threshold (in bins) whose quantization of `hist` to `levels` levels
/// loses least information: for each candidate i, P is the histogram
/// clipped to i bins (the rest added to the last), Q its first i bins
/// merged into `levels` groups and spread back evenly over each group's
/// non-empty bins; the i with the least KL(P || Q).
int entropyBins(const std::vector<double> &hist, int levels) {
  int best = kBins;
  double bestKl = std::numeric_limits<double>::infinity();
  for (int i = levels; i <= kBins; ++i) {
    std::vector<double> p(hist.begin(), hist.begin() + i);
    for (int j = i; j < kBins; ++j)
      p[i - 1] += hist[j];
    double total = 0;
    for (double x : p)
      total += x;
    if (total <= 0)
      continue;
    std::vector<double> q(i, 0.0);
    for (int g = 0; g < levels; ++g) {
      int start = static_cast<int>(static_cast<int64_t>(g) * i / levels);
      int end = static_cast<int>(static_cast<int64_t>(g + 1) * i / levels);
      // Q is made from the histogram without the clipped mass, so that
      // clipping too much costs: P's last bin holds it, Q's does not.
      double sum = 0;
      int nonzero = 0;
      for (int j = start; j < end; ++j) {
        sum += hist[j];
        nonzero += hist[j] > 0;
      }
      for (int j = start; j < end; ++j)
        if (hist[j] > 0)
          q[j] = sum / nonzero;
    }
    double kl = 0;
    for (int j = 0; j < i; ++j) {
      if (p[j] <= 0)
        continue;
      // Q is 0 where P is not only in the last bin when the histogram's
      // own last bin is empty: a tiny floor keeps that finite and large.
      kl += p[j] / total *
            std::log((p[j] / total) / std::max(q[j] / total, 1e-12));
    }
    if (kl < bestKl) {
      bestKl = kl;
      best = i;
    }
  }
  return best;
}

namespace fs = std::filesystem;

/// The sample folders of `dataDir`, sorted.
bool sampleDirs(const std::string &dataDir, std::vector<fs::path> &dirs,
                std::string &error) {
  std::error_code ec;
  if (!fs::is_directory(dataDir, ec)) {
    error = "--calibration-data '" + dataDir + "' is not a folder";
    return false;
  }
  for (const auto &entry : fs::directory_iterator(dataDir, ec))
    if (entry.is_directory())
      dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) {
    error = "--calibration-data '" + dataDir +
            "' has no sample folders (one per sample, holding input_0.npy "
            "or input_0.pb, ...)";
    return false;
  }
  return true;
}

/// Input `i` of the sample in `dir`.
bool loadInput(const fs::path &dir, size_t i, size_t numInputs,
               kiln::files::Loaded &t, std::string &error) {
  std::string base = (dir / ("input_" + std::to_string(i))).string();
  std::string path = fs::exists(base + ".npy") ? base + ".npy" : base + ".pb";
  if (!fs::exists(path)) {
    error = "calibration sample '" + dir.string() + "' has no input_" +
            std::to_string(i) + ".npy or .pb (the model has " +
            std::to_string(numInputs) + " inputs)";
    return false;
  }
  return kiln::files::loadTensor(path, t, error);
}

/// A loaded module and a CPU session on it that runs samples.
struct Runner {
  std::shared_ptr<Module> module;
  std::unique_ptr<Session> session;

  bool load(const std::string &bytes, const char *what, std::string &error) {
    Status st = Module::loadFromMemory(bytes.data(), bytes.size(), module);
    if (st.ok()) {
      session = std::make_unique<Session>(module, Device::Cpu);
      st = session->status();
    }
    if (!st.ok())
      error = std::string(what) + ": " + st.message();
    return st.ok();
  }

  /// The outputs of the sample in `dir`.
  bool run(const fs::path &dir, std::vector<HostTensor> &outs,
           std::string &error) {
    size_t numInputs = module->inputs().size();
    std::vector<kiln::files::Loaded> loaded(numInputs);
    std::vector<TensorRef> refs(numInputs);
    for (size_t i = 0; i < numInputs; ++i) {
      if (!loadInput(dir, i, numInputs, loaded[i], error))
        return false;
      refs[i].name = module->inputs()[i].name;
      refs[i].dtype = loaded[i].dtype;
      refs[i].shape = loaded[i].shape;
      refs[i].data = loaded[i].bytes.data();
      refs[i].bytes = loaded[i].bytes.size();
    }
    Status s = session->run(refs, outs);
    if (!s.ok())
      error = "calibration sample '" + dir.string() + "': " + s.message();
    return s.ok();
  }
};

/// Output `i` of `outs` as float32 values; false (with `error`) if it is
/// not float32.
const float *floats(const std::vector<HostTensor> &outs, size_t i,
                    const std::string &key, std::string &error) {
  if (outs[i].info.dtype != DType::Float) {
    error = "calibration tensor '" + key + "' is not float32";
    return nullptr;
  }
  return outs[i].as<float>();
}

} // namespace

bool kiln::sampleShapes(const std::string &dataDir, unsigned numInputs,
                        std::vector<std::vector<int64_t>> &shapes,
                        std::string &error) {
  std::vector<fs::path> dirs;
  if (!sampleDirs(dataDir, dirs, error))
    return false;
  for (unsigned i = 0; i < numInputs; ++i) {
    files::Loaded t;
    if (!loadInput(dirs.front(), i, numInputs, t, error))
      return false;
    shapes.push_back(t.shape);
  }
  return true;
}

bool kiln::calibrateRanges(const std::string &kmodBytes, unsigned firstObserved,
                           const std::vector<std::string> &keys,
                           const std::string &dataDir,
                           const std::string &method,
                           const std::string &rangesPath, unsigned &samples,
                           std::string &error) {
  std::vector<fs::path> dirs;
  if (!sampleDirs(dataDir, dirs, error))
    return false;
  samples = dirs.size();

  Runner runner;
  if (!runner.load(kmodBytes, "calibration module", error))
    return false;
  std::vector<Observed> obs(keys.size());

  // Runs every sample, handing each observed output to `visit`.
  auto runAll = [&](auto visit) -> bool {
    for (const fs::path &dir : dirs) {
      std::vector<HostTensor> outs;
      if (!runner.run(dir, outs, error))
        return false;
      for (size_t k = 0; k < keys.size(); ++k) {
        const float *x = floats(outs, firstObserved + k, keys[k], error);
        if (!x)
          return false;
        visit(obs[k], x, outs[firstObserved + k].info.numElements());
      }
    }
    return true;
  };

  if (!runAll([](Observed &o, const float *x, size_t n) {
        for (size_t i = 0; i < n; ++i) {
          o.lo = std::min<double>(o.lo, x[i]);
          o.hi = std::max<double>(o.hi, x[i]);
        }
      }))
    return false;
  if (method != "minmax" && !runAll([](Observed &o, const float *x, size_t n) {
        double amax = o.amax();
        if (amax <= 0)
          return;
        // Zeros (half of a Relu's output) are exact at any threshold and
        // would swamp the first bin: left out.
        for (size_t i = 0; i < n; ++i) {
          if (x[i] == 0)
            continue;
          int bin = static_cast<int>(std::fabs(x[i]) / amax * kBins);
          o.hist[std::min(bin, kBins - 1)] += 1;
        }
      }))
    return false;

  std::ofstream out(rangesPath);
  if (!out) {
    error = "cannot write '" + rangesPath + "'";
    return false;
  }
  out << "# kiln calibration: " << method << ", " << samples
      << " samples; name<TAB>min<TAB>max\n";
  out.precision(9);
  for (size_t k = 0; k < keys.size(); ++k) {
    const Observed &o = obs[k];
    double lo = o.lo, hi = o.hi;
    if (method != "minmax" && o.amax() > 0) {
      double width = o.amax() / kBins, t = o.amax();
      if (method == "percentile") {
        double total = 0, seen = 0;
        for (double c : o.hist)
          total += c;
        for (int i = 0; i < kBins; ++i) {
          seen += o.hist[i];
          if (seen >= 0.9999 * total) {
            t = (i + 1) * width;
            break;
          }
        }
      } else {
        t = entropyBins(o.hist, lo >= 0 ? 256 : 128) * width;
      }
      lo = lo >= 0 ? 0 : -t;
      hi = t;
    }
    out << keys[k] << '\t' << lo << '\t' << hi << '\n';
  }
  return static_cast<bool>(out);
}

bool kiln::layerSqnr(const std::string &refBytes, unsigned refFirst,
                     const std::vector<std::string> &refKeys,
                     const std::string &quantBytes, unsigned quantFirst,
                     const std::vector<std::string> &quantKeys,
                     const std::string &dataDir, unsigned maxSamples,
                     std::vector<double> &sqnr, std::string &error) {
  std::vector<fs::path> dirs;
  if (!sampleDirs(dataDir, dirs, error))
    return false;
  if (dirs.size() > maxSamples)
    dirs.resize(maxSamples);
  Runner ref, quant;
  if (!ref.load(refBytes, "calibration module", error) ||
      !quant.load(quantBytes, "quantized calibration module", error))
    return false;
  std::vector<size_t> refIndex;
  for (const std::string &key : quantKeys) {
    auto it = std::find(refKeys.begin(), refKeys.end(), key);
    if (it == refKeys.end()) {
      error = "quantized tensor '" + key + "' was not calibrated";
      return false;
    }
    refIndex.push_back(refFirst + (it - refKeys.begin()));
  }
  std::vector<double> signal(quantKeys.size(), 0), noise(quantKeys.size(), 0);
  for (const fs::path &dir : dirs) {
    std::vector<HostTensor> r, q;
    if (!ref.run(dir, r, error) || !quant.run(dir, q, error))
      return false;
    for (size_t k = 0; k < quantKeys.size(); ++k) {
      const float *x = floats(r, refIndex[k], quantKeys[k], error);
      const float *y = floats(q, quantFirst + k, quantKeys[k], error);
      if (!x || !y)
        return false;
      for (size_t i = 0, n = q[quantFirst + k].info.numElements(); i < n; ++i) {
        signal[k] += static_cast<double>(x[i]) * x[i];
        noise[k] += (static_cast<double>(y[i]) - x[i]) * (y[i] - x[i]);
      }
    }
  }
  sqnr.clear();
  for (size_t k = 0; k < quantKeys.size(); ++k)
    sqnr.push_back(noise[k] > 0 ? 10 * std::log10(signal[k] / noise[k])
                                : std::numeric_limits<double>::infinity());
  return true;
}
