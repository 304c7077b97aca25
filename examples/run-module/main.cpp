//===- main.cpp - run a compiled Kiln module from C++ ---------------------===//
//
//   run-module model.kmod
//
// Loads the module, fills each input with a ramp, runs it, and prints the
// first values of each output.
//
//===----------------------------------------------------------------------===//

#include <kiln/Runtime/Runtime.h>

#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s model.kmod\n", argv[0]);
    return 2;
  }
  std::shared_ptr<kiln::rt::Module> module;
  if (kiln::rt::Status s = kiln::rt::Module::load(argv[1], module); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }

  // Inputs: one float buffer per input, filled with a ramp.
  std::vector<std::vector<float>> buffers;
  std::vector<kiln::rt::TensorRef> inputs;
  for (const kiln::rt::TensorInfo &info : module->inputs()) {
    if (info.dtype != kiln::rt::DType::Float) {
      std::fprintf(stderr, "error: this example feeds float inputs only\n");
      return 1;
    }
    std::vector<float> data(info.numElements());
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<float>(i % 16) / 16.0f - 0.5f;
    buffers.push_back(std::move(data));
    inputs.push_back({info.name, info.dtype, info.shape, buffers.back().data(),
                      info.byteSize()});
  }

  kiln::rt::Session session(module);
  std::vector<kiln::rt::HostTensor> outputs;
  if (kiln::rt::Status s = session.run(inputs, outputs); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  for (const kiln::rt::HostTensor &out : outputs) {
    std::printf("%s:", out.info.name.c_str());
    size_t n = out.info.numElements() < 4 ? out.info.numElements() : 4;
    for (size_t i = 0; i < n && out.info.dtype == kiln::rt::DType::Float; ++i)
      std::printf(" %.6f", out.as<float>()[i]);
    std::printf("%s\n", out.info.numElements() > n ? " ..." : "");
  }
  return 0;
}
