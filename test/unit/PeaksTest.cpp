//===- PeaksTest.cpp - the roofline's measured ceilings -------------------===//

#include "GpuCode.h"
#include "kiln/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace kiln::rt;

namespace {

TEST(RuntimePeaks, MeasuresTheCpu) {
  DevicePeaks peaks;
  Status s = measurePeaks(Device::Cpu, 1, peaks);
  ASSERT_TRUE(s.ok()) << s.message();
  // Plausibility, not speed: any x86-64 core of this century does more than
  // a GFLOP/s of f32 FMAs and streams more than 100 MB/s.
  EXPECT_GT(peaks.gflops, 1.0);
  EXPECT_GT(peaks.gbps, 0.1);
  EXPECT_NE(peaks.how.find("1 thread"), std::string::npos) << peaks.how;
}

TEST(RuntimePeaks, TheEmulatorHasNone) {
  DevicePeaks peaks;
  Status s = measurePeaks(Device::Emulator, 1, peaks);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("emulator"), std::string::npos);
}

TEST(RuntimePeaks, CudaWithoutADeviceIsAStatus) {
  DevicePeaks peaks;
  Status s = measurePeaks(Device::Cuda, 0, peaks);
  if (s.ok())
    GTEST_SKIP() << "a CUDA device is present: " << peaks.how;
  EXPECT_NE(s.message().find("no CUDA device"), std::string::npos)
      << s.message();
}

// The GPU calibration kernels are PTX the driver compiles; ptxas checks
// them for the chips Kiln targets where no GPU is present.
TEST(RuntimePeaks, CudaCalibrationKernelsAssemble) {
  const char *cuda = std::getenv("CUDA_HOME");
  std::string ptxas =
      std::string(cuda && *cuda ? cuda : "/usr/local/cuda") + "/bin/ptxas";
  if (access(ptxas.c_str(), X_OK) != 0)
    GTEST_SKIP() << "no ptxas";
  char dir[] = "/tmp/kiln-peaks-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string ptx = std::string(dir) + "/peaks.ptx";
  std::ofstream(ptx) << cudaCalibrationPtx();
  for (const char *chip : {"sm_80", "sm_90"}) {
    std::string cmd = ptxas + " -arch=" + chip + " -o " + dir +
                      "/peaks.cubin " + ptx + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  std::remove((std::string(dir) + "/peaks.cubin").c_str());
  std::remove(ptx.c_str());
  rmdir(dir);
}

} // namespace
