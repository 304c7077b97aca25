//===- RuntimeTest.cpp - the runtime's C++ and C APIs ---------------------===//
//
// Needs a module compiled from test/Import/basic.onnxtxt with a 1x3x8x8
// input; its path comes in KILN_TEST_MODULE (test/unit/unit.test sets it).
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Runtime.h"
#include "kiln/Runtime/kiln_runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

using namespace kiln::rt;

namespace {

std::string modulePath() {
  const char *p = std::getenv("KILN_TEST_MODULE");
  return p ? p : "";
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

} // namespace
