//===- Calibration.h - ranges of a model's tensors over samples -*- C++ -*-===//

#ifndef KILN_TOOLS_CALIBRATION_H
#define KILN_TOOLS_CALIBRATION_H

#include <string>
#include <vector>

namespace kiln {

/// Runs a CPU module (`kmodBytes`, a serialized .kmod) over the samples in
/// `dataDir` (one sub-folder per sample holding input_K.npy or
/// input_K.pb, as ONNX's test_data_set_N folders do, in sorted order; the
/// count in `samples`), observes its outputs from `firstObserved` on (named
/// `keys`), and writes one `key<TAB>min<TAB>max` line per output to
/// `rangesPath`. `method`: `minmax` (the extremes seen), `percentile` (the
/// 99.99th percentile of |x|) or `entropy` (the clipping threshold whose
/// 128-level quantization of the histogram of |x| keeps most information,
/// by KL divergence, as TensorRT calibrates); for the last two a tensor
/// never negative gets [0, T], others [-T, T]. Returns false with `error`
/// set on a bad folder, a sample that does not fit, or a failed run.
bool calibrateRanges(const std::string &kmodBytes, unsigned firstObserved,
                     const std::vector<std::string> &keys,
                     const std::string &dataDir, const std::string &method,
                     const std::string &rangesPath, unsigned &samples,
                     std::string &error);

/// The shapes of the first sample's `numInputs` inputs in `dataDir`
/// (the calibration model is compiled for them: the samples may hold one
/// image where the module runs a batch).
bool sampleShapes(const std::string &dataDir, unsigned numInputs,
                  std::vector<std::vector<int64_t>> &shapes,
                  std::string &error);

/// The SQNR (dB) of each output of a quantized module (`quantBytes`, its
/// outputs from `quantFirst` on named `quantKeys`) against the same
/// tensor of the float calibration module (`refBytes`, `refKeys` from
/// `refFirst`), over the first `maxSamples` samples of `dataDir`:
/// 10 log10(sum x^2 / sum (q - x)^2), each layer's error with all the
/// layers before it quantized too.
bool layerSqnr(const std::string &refBytes, unsigned refFirst,
               const std::vector<std::string> &refKeys,
               const std::string &quantBytes, unsigned quantFirst,
               const std::vector<std::string> &quantKeys,
               const std::string &dataDir, unsigned maxSamples,
               std::vector<double> &sqnr, std::string &error);

} // namespace kiln

#endif // KILN_TOOLS_CALIBRATION_H
