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
};

/// The .npy type of each tensor type the tools read and write.
extern const std::pair<const char *, kiln::rt::DType> kNpyTypes[12];

/// The whole file at `path`; false when it cannot be read.
bool readFile(const std::string &path, std::string &out);

/// A .npy (by its extension) or TensorProto file; on failure `error`
/// names the file and the reason.
bool loadTensor(const std::string &path, Loaded &t, std::string &error);

} // namespace kiln::files

#endif // KILN_TOOLS_TENSORFILES_H
