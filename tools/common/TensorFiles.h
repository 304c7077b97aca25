//===- TensorFiles.h - tensors in .npy and TensorProto files ----*- C++ -*-===//

#ifndef KILN_TOOLS_TENSORFILES_H
#define KILN_TOOLS_TENSORFILES_H

#include "kiln/Runtime/Runtime.h"

#include <string>
#include <utility>
#include <vector>

namespace kiln::files {

/// A tensor read from disk, in the runtime's element layout.
struct Loaded {
  kiln::rt::DType dtype;
  std::vector<int64_t> shape;
  std::string bytes;
  /// An expected output with nothing to compare: a tensor past the
  /// run-time length of a sequence, or of an absent optional.
  bool unchecked = false;
};

/// The .npy type of each tensor type the tools read and write.
extern const std::pair<const char *, kiln::rt::DType> kNpyTypes[12];

/// The whole file at `path`; false when it cannot be read.
bool readFile(const std::string &path, std::string &out);

/// A .npy (by its extension) or TensorProto file; on failure `error`
/// names the file and the reason.
bool loadTensor(const std::string &path, Loaded &t, std::string &error);

/// An ONNX SequenceProto file of tensors (as in ONNX's test_data_set_N
/// for a sequence input or output): its elements in order.
bool loadSequence(const std::string &path, std::vector<Loaded> &elements,
                  std::string &error);

/// An ONNX OptionalProto file (as in ONNX's test_data_set_N for an
/// optional input): whether it holds a value, whether that is a sequence,
/// and its tensors (one for a tensor, a sequence's elements).
bool loadOptional(const std::string &path, bool &present, bool &isSequence,
                  std::vector<Loaded> &elements, std::string &error);

/// Whether `path` names a file saveTensor writes (.npy or .pb).
bool isTensorFileName(const std::string &path);

/// Writes a tensor to `path`: a .npy file (format 1.0, C order; bfloat16
/// as its uint16 bits, as numpy has none) or, for any other extension
/// isTensorFileName accepts, an ONNX TensorProto named `name` with its data
/// in raw_data. The file is written beside `path` and renamed into place,
/// so a failed write leaves no partial file. On failure `error` names the
/// file and the reason.
bool saveTensor(const std::string &path, const std::string &name,
                kiln::rt::DType dtype, const std::vector<int64_t> &shape,
                const void *data, size_t bytes, std::string &error);

} // namespace kiln::files

#endif // KILN_TOOLS_TENSORFILES_H
