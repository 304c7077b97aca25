//===- RuntimeTest.cpp - the runtime's C++ and C APIs ---------------------===//
//
// Needs a module compiled from test/Import/basic.onnxtxt with a 1x3x8x8
// input; its path comes in KILN_TEST_MODULE (test/unit/unit.test sets it),
// one of test/e2e/Inputs/data-dependent.mlir in KILN_TEST_DYNAMIC_MODULE, and
// the first compiled for sm_90 in KILN_TEST_GPU_MODULE.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Runtime.h"
#include "kiln/Runtime/kiln_runtime.h"
#include "kiln/Target/CpuFeatures.h"
#include "kiln/Target/ModuleFormat.h"

#include "kmod.pb.h"

#include <gtest/gtest.h>

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

using namespace kiln::rt;

namespace {

std::string envPath(const char *var) {
  const char *p = std::getenv(var);
  return p ? p : "";
}

std::string modulePath() { return envPath("KILN_TEST_MODULE"); }
std::string dynamicModulePath() { return envPath("KILN_TEST_DYNAMIC_MODULE"); }
// The basic model compiled for sm_90.
std::string gpuModulePath() { return envPath("KILN_TEST_GPU_MODULE"); }

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Parses the module file at `path` into `proto`.
bool parseFile(const std::string &path, kiln::kmod::Module &proto,
               std::string &error) {
  std::string bytes = readBytes(path);
  return kiln::parseModule(bytes.data(), bytes.size(), proto, error);
}

/// The status of loading a module image serialized from `proto`.
Status loadProto(const kiln::kmod::Module &proto) {
  kiln::kmod::Module copy = proto;
  std::string image = kiln::serializeModule(copy);
  std::shared_ptr<Module> m;
  return Module::loadFromMemory(image.data(), image.size(), m);
}

std::vector<float> input(int seed) {
  std::vector<float> x(1 * 3 * 8 * 8);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i * 7 + seed * 13) % 17) - 8.0f;
  return x;
}

TEST(Runtime, LoadsAndDescribesModule) {
  std::shared_ptr<Module> m;
  Status s = Module::load(modulePath(), m);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(m->inputs().size(), 1u);
  EXPECT_EQ(m->inputs()[0].name, "x");
  EXPECT_EQ(m->inputs()[0].shape, (std::vector<int64_t>{1, 3, 8, 8}));
  ASSERT_EQ(m->outputs().size(), 1u);
  EXPECT_EQ(m->outputs()[0].name, "y");
  EXPECT_EQ(m->outputs()[0].byteSize(), 4u * 4 * 8 * 8);
}

TEST(Runtime, RejectsBadInputs) {
  std::shared_ptr<Module> m;
  ASSERT_TRUE(Module::load(modulePath(), m).ok());
  Session session(m);
  auto x = input(0);
  std::vector<HostTensor> out;
  Status wrongName = session.run(
      {{"nosuch", DType::Float, {1, 3, 8, 8}, x.data(), x.size() * 4}}, out);
  EXPECT_FALSE(wrongName.ok());
  EXPECT_NE(wrongName.message().find("no input 'nosuch'"), std::string::npos);
  Status wrongBytes =
      session.run({{"x", DType::Float, {1, 3, 8, 8}, x.data(), 12}}, out);
  EXPECT_FALSE(wrongBytes.ok());
  Status tooMany =
      session.run({{"x", DType::Float, {1, 3, 8, 8}, x.data(), x.size() * 4},
                   {"x", DType::Float, {1, 3, 8, 8}, x.data(), x.size() * 4}},
                  out);
  EXPECT_FALSE(tooMany.ok());
}

TEST(Runtime, RejectsCorruptImages) {
  std::shared_ptr<Module> m;
  EXPECT_FALSE(Module::loadFromMemory("KILNMOD", 7, m).ok());
  std::ifstream in(modulePath(), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  for (size_t cut : {size_t(12), bytes.size() / 2, bytes.size() - 1}) {
    Status s = Module::loadFromMemory(bytes.data(), cut, m);
    EXPECT_FALSE(s.ok()) << "a module cut at " << cut << " bytes loaded";
  }
}

// The in-place parse leaves the code objects' data and the GPU weights in
// the image (the loader then holds them once) and agrees with the copying
// parse on everything, the blobs included.
TEST(ModuleFormat, InPlaceParseLeavesBlobsInTheImage) {
  for (const std::string &path : {modulePath(), gpuModulePath()}) {
    SCOPED_TRACE(path);
    std::string bytes = readBytes(path);
    ASSERT_FALSE(bytes.empty());
    kiln::kmod::Module copied, inPlace;
    kiln::ModuleBlobs blobs;
    std::string error;
    ASSERT_TRUE(kiln::parseModule(bytes.data(), bytes.size(), copied, error))
        << error;
    ASSERT_TRUE(kiln::parseModuleInPlace(bytes.data(), bytes.size(), inPlace,
                                         blobs, error))
        << error;
    auto inImage = [&](std::string_view v) {
      return v.data() >= bytes.data() &&
             v.data() + v.size() <= bytes.data() + bytes.size();
    };
    ASSERT_EQ(blobs.codeData.size(), static_cast<size_t>(copied.code_size()));
    ASSERT_EQ(inPlace.code_size(), copied.code_size());
    for (int i = 0; i < copied.code_size(); ++i) {
      EXPECT_TRUE(inImage(blobs.codeData[i]));
      EXPECT_EQ(blobs.codeData[i], copied.code(i).data());
      EXPECT_TRUE(inPlace.code(i).data().empty());
      inPlace.mutable_code(i)->set_data(std::string(blobs.codeData[i]));
    }
    EXPECT_EQ(blobs.gpuConstants, copied.gpu().constants());
    if (!blobs.gpuConstants.empty()) {
      EXPECT_TRUE(inImage(blobs.gpuConstants));
      EXPECT_TRUE(inPlace.gpu().constants().empty());
      inPlace.mutable_gpu()->set_constants(std::string(blobs.gpuConstants));
    }
    EXPECT_EQ(inPlace.SerializeAsString(), copied.SerializeAsString());
  }
  // The GPU module has weights to leave in place.
  kiln::kmod::Module gpu;
  std::string error;
  ASSERT_TRUE(parseFile(gpuModulePath(), gpu, error)) << error;
  EXPECT_FALSE(gpu.gpu().constants().empty());
}

// A module's sequences and optionals: read into Module::composites(), and
// refused where they do not lie in order inside the signature or disagree
// with its tensors.
TEST(Runtime, ReadsAndChecksComposites) {
  kiln::kmod::Module proto;
  std::string error;
  ASSERT_TRUE(parseFile(modulePath(), proto, error)) << error;
  auto *q = proto.add_composites();
  q->set_name("xs");
  q->set_dtype(1);
  q->set_first(0);
  q->set_length(1);
  {
    kiln::kmod::Module copy = proto;
    std::string image = kiln::serializeModule(copy);
    std::shared_ptr<Module> m;
    Status s = Module::loadFromMemory(image.data(), image.size(), m);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(m->composites().size(), 1u);
    EXPECT_EQ(m->composites()[0].name, "xs");
    EXPECT_EQ(m->composites()[0].kind, CompositeInfo::Kind::Sequence);
    EXPECT_EQ(m->composites()[0].length, 1u);
    // The same through the C API.
    kiln_module *cm = nullptr;
    ASSERT_EQ(kiln_module_load_from_memory(image.data(), image.size(), &cm),
              nullptr);
    ASSERT_EQ(kiln_module_num_composites(cm), 1u);
    const char *name = nullptr;
    int isOutput = -1, kind = -1, absent = -1;
    size_t first = 9, length = 9;
    ASSERT_EQ(kiln_module_composite_info(cm, 0, &name, &isOutput, &kind, &first,
                                         &length, &absent),
              nullptr);
    EXPECT_STREQ(name, "xs");
    EXPECT_EQ(isOutput, 0);
    EXPECT_EQ(kind, 0);
    EXPECT_EQ(first, 0u);
    EXPECT_EQ(length, 1u);
    EXPECT_EQ(absent, 0);
    int runTimeCount = -1;
    ASSERT_EQ(kiln_module_composite_run_time_count(cm, 0, &runTimeCount),
              nullptr);
    EXPECT_EQ(runTimeCount, 0);
    kiln_status bad = kiln_module_composite_info(
        cm, 1, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    ASSERT_NE(bad, nullptr);
    EXPECT_NE(std::string(kiln_status_message(bad)).find("out of range"),
              std::string::npos);
    kiln_status_free(bad);
    kiln_module_release(cm);
  }
  auto refused = [&](auto edit) {
    kiln::kmod::Module bad = proto;
    edit(*bad.mutable_composites(0));
    Status s = loadProto(bad);
    return !s.ok() &&
           s.message().find("sequence or optional 'xs'") != std::string::npos;
  };
  using Sig = kiln::kmod::CompositeSignature;
  EXPECT_TRUE(refused([](Sig &c) { c.set_length(2); })); // past the inputs
  EXPECT_TRUE(refused([](Sig &c) { c.set_first(-1); }));
  EXPECT_TRUE(refused([](Sig &c) { c.set_dtype(7); })); // int64 elements
  EXPECT_TRUE(refused([](Sig &c) { c.set_dtype(0); }));
  EXPECT_TRUE(refused([](Sig &c) { c.set_absent(true); })); // not optional
  EXPECT_TRUE(refused([](Sig &c) {
    c.set_kind(Sig::OPTIONAL_TENSOR);
    c.set_absent(true); // absent, yet one tensor
  }));
  EXPECT_TRUE(refused([](Sig &c) { c.set_kind(static_cast<Sig::Kind>(9)); }));
  // A run-time count belongs to an output, with an int64 scalar after it.
  EXPECT_TRUE(refused([](Sig &c) { c.set_run_time_count(true); }));
  // Two sequences over the same tensor.
  kiln::kmod::Module twice = proto;
  *twice.add_composites() = twice.composites(0);
  EXPECT_FALSE(loadProto(twice).ok());
}

// The runtime's own cpuid reading against LLVM's, for every extension a
// module may record.
TEST(Runtime, CpuFeaturesAgreeWithLlvm) {
  llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  for (const kiln::CpuFeature &f : kiln::kCpuFeatures)
    EXPECT_EQ(cpuHasFeature(f.name), host.lookup(f.name)) << f.name;
  EXPECT_FALSE(cpuHasFeature("no-such-extension"));
  std::vector<std::string> missing =
      missingCpuFeatures({"sse4.2", "no-such-extension"});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0], "no-such-extension");
}

// Code compiled for a CPU with an extension this one lacks is refused with
// its name, and the module loads again without it.
TEST(Runtime, RefusesCodeForAnotherCpu) {
  kiln::kmod::Module proto;
  std::string error;
  ASSERT_TRUE(parseFile(modulePath(), proto, error)) << error;
  ASSERT_EQ(proto.code_size(), 1);
  EXPECT_GT(proto.code(0).cpu_features_size(), 0);
  EXPECT_TRUE(loadProto(proto).ok());
  proto.mutable_code(0)->add_cpu_features("no-such-extension");
  Status s = loadProto(proto);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("needs no-such-extension"), std::string::npos)
      << s.message();
}

TEST(Runtime, ConcurrentSessionsAgreeWithOneThread) {
  std::shared_ptr<Module> m;
  ASSERT_TRUE(Module::load(modulePath(), m).ok());
  constexpr int kThreads = 8, kRuns = 50;
  std::vector<std::vector<float>> want(kThreads);
  {
    Session s(m);
    for (int t = 0; t < kThreads; ++t) {
      auto x = input(t);
      std::vector<HostTensor> out;
      ASSERT_TRUE(
          s.run({{"x", DType::Float, {1, 3, 8, 8}, x.data(), x.size() * 4}},
                out)
              .ok());
      want[t].assign(out[0].as<float>(),
                     out[0].as<float>() + out[0].info.numElements());
    }
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Session s(m); // One session per thread, one module for all.
      auto x = input(t);
      for (int r = 0; r < kRuns; ++r) {
        std::vector<HostTensor> out;
        Status st = s.run(
            {{"x", DType::Float, {1, 3, 8, 8}, x.data(), x.size() * 4}}, out);
        if (!st.ok() ||
            std::vector<float>(out[0].as<float>(),
                               out[0].as<float>() +
                                   out[0].info.numElements()) != want[t])
          ++mismatches[t];
      }
    });
  for (auto &th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(RuntimeCApi, RunsAndReportsErrors) {
  kiln_module *m = nullptr;
  kiln_status s = kiln_module_load("/nonexistent.kmod", &m);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(std::string(kiln_status_message(s)).find("cannot open"),
            std::string::npos);
  kiln_status_free(s);

  ASSERT_EQ(kiln_module_load(modulePath().c_str(), &m), nullptr);
  ASSERT_EQ(kiln_module_num_inputs(m), 1u);
  const char *name;
  int32_t dtype;
  size_t rank, bytes;
  const int64_t *shape;
  ASSERT_EQ(
      kiln_module_tensor_info(m, 1, 0, &name, &dtype, &rank, &shape, &bytes),
      nullptr);
  EXPECT_STREQ(name, "y");
  EXPECT_EQ(dtype, 1);
  EXPECT_EQ(rank, 4u);
  kiln_session *session = nullptr;
  ASSERT_EQ(kiln_session_create(m, &session), nullptr);
  auto x = input(3);
  std::vector<float> y(bytes / 4);
  const void *ins[] = {x.data()};
  void *outs[] = {y.data()};
  size_t inBytes[] = {x.size() * 4}, outBytes[] = {bytes};
  ASSERT_EQ(kiln_session_run(session, ins, inBytes, outs, outBytes), nullptr);
  // The same through the C++ API.
  std::shared_ptr<Module> cm;
  ASSERT_TRUE(Module::load(modulePath(), cm).ok());
  Session cs(cm);
  std::vector<HostTensor> out;
  ASSERT_TRUE(
      cs.run({{"x", DType::Float, {1, 3, 8, 8}, x.data(), x.size() * 4}}, out)
          .ok());
  EXPECT_EQ(
      std::vector<float>(out[0].as<float>(), out[0].as<float>() + y.size()), y);
  size_t badBytes[] = {4};
  kiln_status bad = kiln_session_run(session, ins, badBytes, outs, outBytes);
  ASSERT_NE(bad, nullptr);
  kiln_status_free(bad);
  kiln_session_release(session);
  kiln_module_release(m);
}

// data-dependent.mlir on this x and c: NonZero [2x?], Compress along axis
// 1 [3x?], Unique's [?] outputs and inverse_indices [12].
const float kX[12] = {0, 2, 2, 0, 1.5f, 0, 2, 7, 0, 0, 1.5f, -3};
const uint8_t kC[4] = {1, 0, 1, 1};

TEST(RuntimeDynamic, DescribesDataDependentOutputs) {
  std::shared_ptr<Module> m;
  Status s = Module::load(dynamicModulePath(), m);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(m->outputs().size(), 6u);
  const TensorInfo &nz = m->outputs()[0];
  EXPECT_EQ(nz.shape, (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(nz.dynamicDim(), 1);
  EXPECT_EQ(nz.maxExtent, 12);
  EXPECT_EQ(nz.byteSize(), 2u * 12 * 8);
  EXPECT_EQ(m->outputs()[4].dynamicDim(), -1);
  EXPECT_EQ(m->outputs()[4].maxExtent, 0);
}

TEST(RuntimeDynamic, RunTrimsToTheActualShape) {
  std::shared_ptr<Module> m;
  ASSERT_TRUE(Module::load(dynamicModulePath(), m).ok());
  Session session(m);
  std::vector<HostTensor> out;
  Status s = session.run({{"x", DType::Float, {3, 4}, kX, sizeof kX},
                          {"c", DType::Bool, {4}, kC, sizeof kC}},
                         out);
  ASSERT_TRUE(s.ok()) << s.message();
  // Seven nonzeros; the coordinates of the strided [2x12] bound, packed.
  EXPECT_EQ(out[0].info.shape, (std::vector<int64_t>{2, 7}));
  EXPECT_EQ(out[0].info.maxExtent, 0);
  ASSERT_EQ(out[0].data.size(), 2u * 7 * 8);
  std::vector<int64_t> coords(out[0].as<int64_t>(), out[0].as<int64_t>() + 14);
  EXPECT_EQ(coords, (std::vector<int64_t>{0, 0, 1, 1, 1, 2, 2, //
                                          1, 2, 0, 2, 3, 2, 3}));
  EXPECT_EQ(out[1].info.shape, (std::vector<int64_t>{3, 3}));
  std::vector<float> kept(out[1].as<float>(), out[1].as<float>() + 9);
  EXPECT_EQ(kept, (std::vector<float>{0, 2, 0, 1.5f, 2, 7, 0, 1.5f, -3}));
  std::vector<float> unique(out[2].as<float>(), out[2].as<float>() + 5);
  EXPECT_EQ(out[2].info.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(unique, (std::vector<float>{-3, 0, 1.5f, 2, 7}));
  EXPECT_EQ(out[4].info.shape, (std::vector<int64_t>{12}));
  EXPECT_EQ(session.outputShape(0), (std::vector<int64_t>{2, 7}));

  // The C API: bound-sized buffers, packed, with the shape of the run.
  kiln_module *cm = nullptr;
  ASSERT_EQ(kiln_module_load(dynamicModulePath().c_str(), &cm), nullptr);
  size_t rank, bytes;
  const int64_t *shape;
  ASSERT_EQ(kiln_module_tensor_info(cm, 1, 0, nullptr, nullptr, &rank, &shape,
                                    &bytes),
            nullptr);
  EXPECT_EQ(shape[1], -1);
  EXPECT_EQ(bytes, 2u * 12 * 8);
  kiln_session *cs = nullptr;
  ASSERT_EQ(kiln_session_create(cm, &cs), nullptr);
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<void *> outs;
  for (const TensorInfo &t : m->outputs())
    outs.push_back(buffers.emplace_back(t.byteSize()).data());
  const void *ins[] = {kX, kC};
  ASSERT_EQ(kiln_session_run(cs, ins, nullptr, outs.data(), nullptr), nullptr);
  ASSERT_EQ(kiln_session_output_shape(cs, 0, &rank, &shape), nullptr);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(shape[1], 7);
  EXPECT_EQ(std::vector<int64_t>(reinterpret_cast<int64_t *>(outs[0]),
                                 reinterpret_cast<int64_t *>(outs[0]) + 14),
            coords);
  kiln_status bad = kiln_session_output_shape(cs, 6, &rank, &shape);
  EXPECT_NE(bad, nullptr);
  kiln_status_free(bad);
  kiln_session_release(cs);
  kiln_module_release(cm);
}

TEST(RuntimeDynamic, RejectsBadUpperBounds) {
  kiln::kmod::Module proto;
  std::string error;
  ASSERT_TRUE(parseFile(dynamicModulePath(), proto, error)) << error;
  auto rejects = [](const kiln::kmod::Module &bad, const char *what) {
    Status s = loadProto(bad);
    EXPECT_FALSE(s.ok()) << what;
    return s.message();
  };
  kiln::kmod::Module noBound = proto;
  noBound.mutable_outputs(0)->set_max_extent(0);
  EXPECT_NE(rejects(noBound, "a -1 extent without a bound")
                .find("invalid upper bound"),
            std::string::npos);
  kiln::kmod::Module twoDynamic = proto;
  twoDynamic.mutable_outputs(0)->set_shape(0, -1);
  rejects(twoDynamic, "two -1 extents");
  kiln::kmod::Module staticBound = proto;
  staticBound.mutable_outputs(4)->set_max_extent(3);
  rejects(staticBound, "a bound without a -1 extent");
  kiln::kmod::Module dynamicInput = proto;
  dynamicInput.mutable_inputs(0)->set_shape(0, -1);
  dynamicInput.mutable_inputs(0)->set_max_extent(3);
  rejects(dynamicInput, "a -1 input extent");
}

// A GPU module whose emulator code needs an extension this CPU lacks still
// loads (for CUDA); an emulator session says why it cannot run.
TEST(RuntimeGpu, EmulatorCodeForAnotherCpu) {
  kiln::kmod::Module proto;
  std::string error;
  ASSERT_TRUE(parseFile(gpuModulePath(), proto, error)) << error;
  bool found = false;
  for (auto &code : *proto.mutable_code())
    if (code.target() == "emulator-x86_64") {
      EXPECT_GT(code.cpu_features_size(), 0);
      code.add_cpu_features("no-such-extension");
      found = true;
    }
  ASSERT_TRUE(found);
  std::string image = kiln::serializeModule(proto);
  std::shared_ptr<Module> gpu;
  Status s = Module::loadFromMemory(image.data(), image.size(), gpu);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(gpu->hasCodeFor(Device::Cuda));
  EXPECT_FALSE(gpu->hasCodeFor(Device::Emulator));
  Session onEmulator(gpu, Device::Emulator);
  ASSERT_FALSE(onEmulator.status().ok());
  EXPECT_NE(onEmulator.status().message().find(
                "emulator code was compiled for the CPU"),
            std::string::npos)
      << onEmulator.status().message();
}

TEST(RuntimeGpu, EmulatorAgreesWithTheCpuModule) {
  // Both modules stay loaded at once: each must get its own code even
  // where the loader sees the same staging descriptor number.
  std::shared_ptr<Module> cpu, gpu;
  ASSERT_TRUE(Module::load(modulePath(), cpu).ok());
  Status s = Module::load(gpuModulePath(), gpu);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(gpu->target(), "sm_90");
  EXPECT_FALSE(gpu->hasCodeFor(Device::Cpu));
  EXPECT_TRUE(gpu->hasCodeFor(Device::Emulator));
  EXPECT_TRUE(gpu->hasCodeFor(Device::Cuda));
  EXPECT_FALSE(cpu->hasCodeFor(Device::Emulator));
  Session onCpu(cpu), onEmulator(gpu, Device::Emulator);
  ASSERT_TRUE(onEmulator.status().ok()) << onEmulator.status().message();
  EXPECT_EQ(onEmulator.device(), Device::Emulator);
  for (int seed = 0; seed < 3; ++seed) {
    auto x = input(seed);
    std::vector<HostTensor> a, b;
    TensorRef in{"x", DType::Float, {1, 3, 8, 8}, x.data(), x.size() * 4};
    ASSERT_TRUE(onCpu.run({in}, a).ok());
    ASSERT_TRUE(onEmulator.run({in}, b).ok());
    ASSERT_EQ(a[0].data.size(), b[0].data.size());
    for (size_t i = 0; i < a[0].data.size() / 4; ++i)
      EXPECT_NEAR(a[0].as<float>()[i], b[0].as<float>()[i], 1e-5f) << i;
  }
  // Device pointers are for CUDA sessions only.
  uint64_t in = 0, out = 0;
  Status dev = onEmulator.runOnDevice(&in, &out);
  EXPECT_FALSE(dev.ok());
  EXPECT_NE(dev.message().find("needs a CUDA session"), std::string::npos);
}

TEST(RuntimeGpu, EmulatorStagesMisalignedBuffers) {
  // The kernels access buffers 16 bytes at a time; runRaw takes any host
  // buffers and gives the same result as from aligned ones.
  std::shared_ptr<Module> cpu, gpu;
  ASSERT_TRUE(Module::load(modulePath(), cpu).ok());
  ASSERT_TRUE(Module::load(gpuModulePath(), gpu).ok());
  Session onCpu(cpu), onEmulator(gpu, Device::Emulator);
  ASSERT_TRUE(onEmulator.status().ok()) << onEmulator.status().message();
  auto x = input(1);
  std::vector<HostTensor> a;
  TensorRef in{"x", DType::Float, {1, 3, 8, 8}, x.data(), x.size() * 4};
  ASSERT_TRUE(onCpu.run({in}, a).ok());
  size_t outFloats = a[0].data.size() / 4;
  std::vector<float> xs(x.size() + 4), ys(outFloats + 4, -1.0f);
  float *xp = xs.data() + 1, *yp = ys.data() + 1;
  ASSERT_NE(reinterpret_cast<uintptr_t>(xp) % 16, 0u);
  ASSERT_NE(reinterpret_cast<uintptr_t>(yp) % 16, 0u);
  std::copy(x.begin(), x.end(), xp);
  const void *ins[] = {xp};
  void *outs[] = {yp};
  Status s = onEmulator.runRaw(ins, outs);
  ASSERT_TRUE(s.ok()) << s.message();
  for (size_t i = 0; i < outFloats; ++i)
    EXPECT_NEAR(a[0].as<float>()[i], yp[i], 1e-5f) << i;
  EXPECT_EQ(ys[0], -1.0f); // nothing written outside the output
  EXPECT_EQ(ys[outFloats + 1], -1.0f);
  // Device pointers must be aligned; a CUDA session says so (or, without
  // a device, that there is none).
  Session onCuda(gpu, Device::Cuda);
  if (onCuda.status().ok()) {
    uint64_t din = 4, dout = 16;
    Status d = onCuda.runOnDevice(&din, &dout);
    EXPECT_NE(d.message().find("not 16-byte aligned"), std::string::npos)
        << d.message();
  }
}

TEST(RuntimeGpu, CudaSessionReportsItsStatus) {
  std::shared_ptr<Module> gpu;
  ASSERT_TRUE(Module::load(gpuModulePath(), gpu).ok());
  Session onCuda(gpu, Device::Cuda);
  if (onCuda.status().ok())
    GTEST_SKIP() << "a CUDA device is present; test/gpu covers it";
  EXPECT_NE(onCuda.status().message().find("no CUDA device"), std::string::npos)
      << onCuda.status().message();
  // Every run gives the same status instead of running.
  auto x = input(0);
  std::vector<HostTensor> out;
  Status s = onCuda.run(
      {{"x", DType::Float, {1, 3, 8, 8}, x.data(), x.size() * 4}}, out);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), onCuda.status().message());
  kiln_module *m = nullptr;
  kiln_session *session = nullptr;
  ASSERT_EQ(kiln_module_load(gpuModulePath().c_str(), &m), nullptr);
  kiln_status st = kiln_session_create_on(m, "cuda", &session);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(std::string(kiln_status_message(st)).find("no CUDA device"),
            std::string::npos);
  kiln_status_free(st);
  st = kiln_session_create_on(m, "emulator", &session);
  EXPECT_EQ(st, nullptr);
  kiln_session_release(session);
  kiln_module_release(m);
}

TEST(RuntimeGpu, RejectsBadLaunchPlans) {
  kiln::kmod::Module proto;
  std::string error;
  ASSERT_TRUE(parseFile(gpuModulePath(), proto, error)) << error;
  ASSERT_GT(proto.gpu().launches_size(), 0);
  auto reject = [&](auto mutate, const char *why) {
    kiln::kmod::Module bad = proto;
    mutate(bad);
    Status s = loadProto(bad);
    EXPECT_FALSE(s.ok()) << why;
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
  };
  reject(
      [](kiln::kmod::Module &m) {
        m.mutable_gpu()->mutable_launches(0)->set_kernel(1000);
      },
      "names no kernel");
  reject(
      [](kiln::kmod::Module &m) {
        m.mutable_gpu()->mutable_launches(0)->set_block(0, 2048);
      },
      "invalid grid or block");
  reject(
      [](kiln::kmod::Module &m) {
        m.mutable_gpu()->mutable_launches(0)->mutable_args(0)->set_offset(
            int64_t(1) << 30);
      },
      "buffer");
  reject(
      [](kiln::kmod::Module &m) {
        m.mutable_gpu()->mutable_launches(0)->add_args();
      },
      "arguments to kernel");
  reject(
      [](kiln::kmod::Module &m) {
        m.mutable_gpu()->set_num_buffers(m.gpu().num_buffers() + 1);
      },
      "buffers");
}

} // namespace

std::string batchModulePath() { return envPath("KILN_TEST_BATCH_MODULE"); }

// A module compiled for a batch range (basic.onnxtxt at x:1..5x3x8x8,
// specialized for 4): a run of batch B gives, sample by sample, what the
// run of each sample alone gives (the chunks 4, 2, 1 cover it), from the
// C++ API and from the C API, whose byte sizes give the batch; batches
// outside the range and runs on other devices are refused.
TEST(RuntimeBatchRange, ChunkedRunsMatchSampleRuns) {
  std::shared_ptr<Module> m;
  ASSERT_TRUE(Module::load(batchModulePath(), m).ok());
  ASSERT_EQ(m->minBatch(), 1);
  ASSERT_EQ(m->maxBatch(), 5);
  ASSERT_EQ(m->optBatch(), 4);
  const TensorInfo &in = m->inputs()[0];
  ASSERT_TRUE(in.batched);
  size_t sample = in.byteSize() / 5 / sizeof(float);
  std::vector<float> x(5 * sample);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  Session session(m);
  auto runBatch = [&](int64_t b, size_t first, std::vector<HostTensor> &out) {
    TensorRef r{in.name, DType::Float, in.shape, x.data() + first * sample,
                static_cast<size_t>(b) * sample * sizeof(float)};
    r.shape[0] = b;
    return session.run({r}, out);
  };
  std::vector<HostTensor> all;
  ASSERT_TRUE(runBatch(5, 0, all).ok());
  ASSERT_EQ(all[0].info.shape[0], 5);
  size_t outSample = all[0].data.size() / 5;
  for (size_t s = 0; s < 5; ++s) {
    std::vector<HostTensor> one;
    ASSERT_TRUE(runBatch(1, s, one).ok());
    EXPECT_EQ(std::memcmp(one[0].data.data(),
                          all[0].data.data() + s * outSample, outSample),
              0)
        << "sample " << s;
  }
  std::vector<HostTensor> none;
  Status s = runBatch(0, 0, none);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("must have shape [1..5x3x8x8]"), std::string::npos)
      << s.message();
  s = session.runRaw(nullptr, nullptr, 6);
  EXPECT_NE(s.message().find("batch 6 is outside the module's range [1, 5]"),
            std::string::npos)
      << s.message();

  // The C API: three samples, the batch read from the byte sizes.
  kiln_module *cm = nullptr;
  ASSERT_EQ(kiln_module_load(batchModulePath().c_str(), &cm), nullptr);
  int64_t lo = 0, hi = 0, opt = 0;
  kiln_module_batch_range(cm, &lo, &hi, &opt);
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 5);
  EXPECT_EQ(opt, 4);
  EXPECT_EQ(kiln_module_tensor_batched(cm, 0, 0), 1);
  kiln_session *cs = nullptr;
  ASSERT_EQ(kiln_session_create(cm, &cs), nullptr);
  std::vector<uint8_t> y(3 * outSample);
  const void *ins[] = {x.data()};
  void *outs[] = {y.data()};
  size_t inBytes[] = {3 * sample * sizeof(float)};
  size_t outBytes[] = {y.size()};
  ASSERT_EQ(kiln_session_run(cs, ins, inBytes, outs, outBytes), nullptr);
  size_t rank = 0;
  const int64_t *shape = nullptr;
  ASSERT_EQ(kiln_session_output_shape(cs, 0, &rank, &shape), nullptr);
  EXPECT_EQ(shape[0], 3);
  EXPECT_EQ(std::memcmp(y.data(), all[0].data.data(), y.size()), 0);
  outBytes[0] = y.size() + 4;
  kiln_status bad = kiln_session_run(cs, ins, inBytes, outs, outBytes);
  EXPECT_NE(bad, nullptr);
  kiln_status_free(bad);
  kiln_session_release(cs);
  kiln_module_release(cm);
}

std::string lengthModulePath() { return envPath("KILN_TEST_LENGTH_MODULE"); }

// A module compiled for a length range (Inputs/positions.onnxtxt at
// x:2x3..12x4, buckets 6 and 12): a projection per position and a Softmax
// over positions. A run of any length in range, padded to its bucket and
// masked, gives the Softmax over that length's positions alone, from the
// C++ API and from the C API (kiln_session_run_at); lengths outside the
// range are refused.
TEST(RuntimeLengthRange, PaddedRunsMatchTheLength) {
  std::shared_ptr<Module> m;
  ASSERT_TRUE(Module::load(lengthModulePath(), m).ok());
  ASSERT_EQ(m->minLength(), 3);
  ASSERT_EQ(m->maxLength(), 12);
  ASSERT_EQ(m->lengthBuckets(), (std::vector<int64_t>{6, 12}));
  const TensorInfo &in = m->inputs()[0];
  ASSERT_EQ(in.lengthDims, std::vector<int64_t>{1});
  ASSERT_EQ(m->outputs()[0].lengthDims, std::vector<int64_t>{1});
  const float w[4][4] = {{0.5f, -0.25f, 1, 0.75f},
                         {-1, 0.5f, 0.25f, -0.5f},
                         {0.125f, 1, -0.75f, 0.25f},
                         {0.5f, 0.5f, -0.125f, 1}};
  auto reference = [&](const std::vector<float> &x, int64_t len) {
    std::vector<double> h(2 * len * 4), y(h.size());
    for (int64_t i = 0; i < 2 * len; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 4; ++k)
          h[i * 4 + j] += double(x[i * 4 + k]) * w[k][j];
    for (int64_t b = 0; b < 2; ++b)
      for (int j = 0; j < 4; ++j) {
        double mx = -1e300, sum = 0;
        for (int64_t p = 0; p < len; ++p)
          mx = std::max(mx, h[(b * len + p) * 4 + j]);
        for (int64_t p = 0; p < len; ++p)
          sum += std::exp(h[(b * len + p) * 4 + j] - mx);
        for (int64_t p = 0; p < len; ++p)
          y[(b * len + p) * 4 + j] =
              std::exp(h[(b * len + p) * 4 + j] - mx) / sum;
      }
    return y;
  };
  Session session(m);
  kiln_module *cm = nullptr;
  ASSERT_EQ(kiln_module_load(lengthModulePath().c_str(), &cm), nullptr);
  kiln_session *cs = nullptr;
  ASSERT_EQ(kiln_session_create(cm, &cs), nullptr);
  for (int64_t len : {3, 4, 6, 7, 12}) {
    std::vector<float> x(2 * len * 4);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>((i * 37 + len) % 101) / 25.0f - 2.0f;
    std::vector<double> want = reference(x, len);
    TensorRef r{
        in.name, DType::Float, {2, len, 4}, x.data(), x.size() * sizeof(float)};
    std::vector<HostTensor> out;
    ASSERT_TRUE(session.run({r}, out).ok()) << "length " << len;
    ASSERT_EQ(out[0].info.shape, (std::vector<int64_t>{2, len, 4}));
    ASSERT_EQ(out[0].data.size(), x.size() * sizeof(float));
    const float *y = reinterpret_cast<const float *>(out[0].data.data());
    std::vector<float> cy(x.size());
    const void *ins[] = {x.data()};
    void *outs[] = {cy.data()};
    ASSERT_EQ(kiln_session_run_at(cs, 0, len, ins, outs), nullptr);
    size_t rank = 0;
    const int64_t *shape = nullptr;
    ASSERT_EQ(kiln_session_output_shape(cs, 0, &rank, &shape), nullptr);
    ASSERT_EQ(rank, 3u);
    EXPECT_EQ(shape[1], len);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(y[i], want[i], 1e-6 + 1e-5 * std::fabs(want[i]))
          << "length " << len << ", element " << i;
      EXPECT_EQ(cy[i], y[i]) << "length " << len << ", element " << i;
    }
  }
  std::vector<float> x(2 * 13 * 4);
  std::vector<HostTensor> out;
  Status s = session.run(
      {{in.name, DType::Float, {2, 13, 4}, x.data(), x.size() * sizeof(float)}},
      out);
  EXPECT_NE(s.message().find("must have shape [2x3..12x4], got [2x13x4]"),
            std::string::npos)
      << s.message();
  s = session.runRaw(nullptr, nullptr, 0, 2);
  EXPECT_NE(s.message().find("length 2 is outside the module's range [3, 12]"),
            std::string::npos)
      << s.message();

  int64_t lo = 0, hi = 0, opt = 0;
  kiln_module_length_range(cm, &lo, &hi, &opt);
  EXPECT_EQ(lo, 3);
  EXPECT_EQ(hi, 12);
  EXPECT_EQ(opt, 12);
  size_t count = 0;
  const int64_t *dims = nullptr;
  ASSERT_EQ(kiln_module_tensor_length_dims(cm, 1, 0, &count, &dims), nullptr);
  ASSERT_EQ(count, 1u);
  EXPECT_EQ(dims[0], 1);
  kiln_status bad = kiln_module_tensor_length_dims(cm, 0, 3, &count, &dims);
  EXPECT_NE(bad, nullptr);
  kiln_status_free(bad);
  kiln_session_release(cs);
  kiln_module_release(cm);

  // A module without a length range refuses a length.
  ASSERT_EQ(kiln_module_load(batchModulePath().c_str(), &cm), nullptr);
  ASSERT_EQ(kiln_session_create(cm, &cs), nullptr);
  const void *ins[] = {x.data()};
  void *outs[] = {x.data()};
  bad = kiln_session_run_at(cs, 1, 5, ins, outs);
  ASSERT_NE(bad, nullptr);
  EXPECT_NE(std::string(kiln_status_message(bad)).find("length range"),
            std::string::npos);
  kiln_status_free(bad);
  kiln_session_release(cs);
  kiln_module_release(cm);
}

// The float8 formats read as ONNX (ml_dtypes) defines them: normals,
// subnormals, the largest finite values, infinities and NaNs; and the 4-
// and 2-bit integers.
TEST(Runtime, ReadsSmallTypes) {
  auto e4m3fn = [](uint8_t b) {
    return float8ToDouble(b, DType::Float8E4M3FN);
  };
  EXPECT_EQ(e4m3fn(0x38), 1.0);   // exponent 7 (bias 7), mantissa 0
  EXPECT_EQ(e4m3fn(0x7E), 448.0); // the largest
  EXPECT_EQ(e4m3fn(0xFE), -448.0);
  EXPECT_EQ(e4m3fn(0x01), 1.0 / 512);      // the smallest subnormal, 2^-9
  EXPECT_TRUE(std::isnan(e4m3fn(0x7F)));   // no infinity
  EXPECT_TRUE(std::signbit(e4m3fn(0x80))); // -0
  auto e5m2 = [](uint8_t b) { return float8ToDouble(b, DType::Float8E5M2); };
  EXPECT_EQ(e5m2(0x3C), 1.0);
  EXPECT_EQ(e5m2(0x7B), 57344.0);
  EXPECT_EQ(e5m2(0x7C), INFINITY);
  EXPECT_EQ(e5m2(0xFC), -INFINITY);
  EXPECT_TRUE(std::isnan(e5m2(0x7E)));
  EXPECT_EQ(e5m2(0x01), std::ldexp(1.0, -16));
  auto e4m3fnuz = [](uint8_t b) {
    return float8ToDouble(b, DType::Float8E4M3FNUZ);
  };
  EXPECT_EQ(e4m3fnuz(0x40), 1.0); // bias 8
  EXPECT_EQ(e4m3fnuz(0x7F), 240.0);
  EXPECT_TRUE(std::isnan(e4m3fnuz(0x80))); // the one NaN, no -0
  auto e5m2fnuz = [](uint8_t b) {
    return float8ToDouble(b, DType::Float8E5M2FNUZ);
  };
  EXPECT_EQ(e5m2fnuz(0x40), 1.0); // bias 16
  EXPECT_EQ(e5m2fnuz(0x7F), 57344.0);
  EXPECT_TRUE(std::isnan(e5m2fnuz(0x80)));
  EXPECT_EQ(dtypeSize(DType::Float8E5M2FNUZ), 1u);
  // 4- and 2-bit integers: the low bits of a byte, whatever the others.
  EXPECT_EQ(subByteValue(0xF8, DType::Int4), -8);
  EXPECT_EQ(subByteValue(0x17, DType::Int4), 7);
  EXPECT_EQ(subByteValue(0xFF, DType::UInt4), 15);
  EXPECT_EQ(subByteValue(0x02, DType::Int2), -2);
  EXPECT_EQ(subByteValue(0xFD, DType::UInt2), 1);
  EXPECT_EQ(dtypeSize(DType::Int4), 1u);
  EXPECT_STREQ(dtypeName(DType::Float8E4M3FN), "float8e4m3fn");
}
