//===- kiln-run.cpp - run, check and time a Kiln module -------------------===//
//
// kiln-run model.kmod [--input x.pb ...] [--expected y.pb ...]
//          [--rtol R --atol A] [--benchmark [--warmup N] [--iterations N]]
//
// Inputs are ONNX TensorProto files (.pb) or NumPy arrays (.npy), in the
// module's input order, or random values from a fixed seed. Outputs are
// compared with expected ones elementwise: |got - want| <= atol + rtol *
// |want| (ONNX's backend-test rule). Exit status: 0 when every output
// matches (or nothing was checked), 1 on a mismatch or an error.
//
//===----------------------------------------------------------------------===//

#include "../common/TensorFiles.h"
#include "kiln/Runtime/Runtime.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <unistd.h>
#include <vector>

using kiln::files::kNpyTypes;
using kiln::files::Loaded;
using kiln::files::loadTensor;
using kiln::files::readFile;
using kiln::rt::DType;
using kiln::rt::HostTensor;
using kiln::rt::Status;
using kiln::rt::TensorInfo;

namespace {

struct Options {
  std::string module;
  std::vector<std::string> inputs, expected, outputs;
  double rtol = 1e-3, atol = 1e-5;
  bool benchmark = false, info = false;
  bool resident = false; // --resident: benchmark on device buffers
  int warmup = 10, iterations = 100, threads = 0;
  int batch = 0;  // --batch: random inputs' batch for a batch-range module
  int length = 0; // --length: random inputs' length for a length-range one
  unsigned seed = 0;
  std::string json; // --json FILE ("-": standard output)
  kiln::rt::Device device = kiln::rt::Device::Default;
  bool profile = false;
  std::string trace; // --profile-trace FILE: Chrome trace of one run
  // The roofline's ceilings: --peaks GFLOPS,GBPS[,TENSOR], else measured
  // (cached per machine; --recalibrate measures anew).
  double peakGflops = 0, peakGbps = 0, peakTensorGflops = 0;
  bool recalibrate = false;
  int profileRuns = 1;
  int runs = 1; // --runs: the outputs checked are those of the last
};

const char *kUsage =
    "usage: kiln-run MODULE.kmod [options]\n"
    "  --input FILE        an input (.pb TensorProto or .npy), in input "
    "order;\n"
    "                      repeatable. Missing inputs are random (seeded)\n"
    "  --expected FILE     an expected output (.pb or .npy), in output order\n"
    "  --runs N            run N times (1) in one session and check the\n"
    "                      last run's outputs: state one run leaves to the\n"
    "                      next shows as a mismatch\n"
    "  --output FILE       write an output (of the last run), in output "
    "order;\n"
    "                      repeatable: FILE.npy (bfloat16 as uint16 bits) or\n"
    "                      FILE.pb (an ONNX TensorProto named as the output)\n"
    "  --rtol R --atol A   tolerance: |got-want| <= atol + rtol*|want|\n"
    "                      (default rtol 1e-3, atol 1e-5)\n"
    "  --benchmark         time runs: --warmup N (10), --iterations N (100)\n"
    "  --resident          CUDA: time runs on device buffers (inputs copied\n"
    "                      once, Session::runOnDevice), as a program that\n"
    "                      keeps its tensors on the GPU; implies --benchmark\n"
    "  --seed N            seed of random inputs (0)\n"
    "  --batch N           a batch-range module's batch for random inputs\n"
    "  --length N          a length-range module's length for random inputs\n"
    "                      (default: the range's maximum)\n"
    "  --threads N         threads for the module's parallel loops (default:\n"
    "                      OMP_NUM_THREADS, else one per core)\n"
    "  --device D          where to run: default (the module's own), cpu,\n"
    "                      cuda (an NVIDIA GPU; a module compiled for\n"
    "                      sm_XX), emulator (that module's kernels run on\n"
    "                      the CPU through the kernel emulator)\n"
    "  --profile           time every kernel launch (GPU) or computation\n"
    "                      (CPU modules compiled with --profile) of one\n"
    "                      more run and print the time per kernel\n"
    "                      with each one's GFLOP/s, GB/s and share of the\n"
    "                      roofline (from the compiler's counts and the\n"
    "                      device's measured peaks)\n"
    "  --profile-runs N    profile N runs (implies --profile; default 1) and\n"
    "                      give each kernel's median time\n"
    "  --profile-trace F   also write the last profiled run's launches as a\n"
    "                      Chrome trace (chrome://tracing, Perfetto) to F\n"
    "  --peaks G,B[,T]     the roofline's ceilings in GFLOP/s and GB/s\n"
    "                      (and T, GFLOP/s of the kernels that multiply\n"
    "                      on tensor cores) instead of measured ones\n"
    "  --recalibrate       measure the ceilings again (they are measured\n"
    "                      once per machine, device and thread count and\n"
    "                      cached in $XDG_CACHE_HOME/kiln/peaks, else\n"
    "                      ~/.cache/kiln/peaks)\n"
    "  --info              print the module's signature and exit\n"
    "  --json FILE         also write the run's results (check status,\n"
    "                      latency statistics) as JSON to FILE ('-': stdout)\n";

int fail(const std::string &message) {
  std::fprintf(stderr, "kiln-run: error: %s\n", message.c_str());
  return 1;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + (shape[i] < 0 ? "?" : std::to_string(shape[i]));
  return s + "]";
}

/// The CUDA driver calls --resident needs, opened with dlopen as the
/// runtime does (kiln-run links no CUDA library).
struct Driver {
  using Ptr = uint64_t; // CUdeviceptr
  int (*init)(unsigned) = nullptr;
  int (*deviceGet)(int *, int) = nullptr;
  int (*retain)(void **, int) = nullptr;
  int (*push)(void *) = nullptr;
  int (*pop)(void **) = nullptr;
  int (*alloc)(Ptr *, size_t) = nullptr;
  int (*free)(Ptr) = nullptr;
  int (*htod)(Ptr, const void *, size_t) = nullptr;
  int (*dtoh)(void *, Ptr, size_t) = nullptr;
  int (*streamCreate)(void **, unsigned) = nullptr;
  int (*streamSync)(void *) = nullptr;
  int (*streamDestroy)(void *) = nullptr;
  bool open(std::string &error) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      error = "--resident: cannot open libcuda.so.1";
      return false;
    }
    bool ok = true;
    auto sym = [&](auto &f, const char *name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(
          dlsym(h, name));
      ok = ok && f;
    };
    sym(init, "cuInit");
    sym(deviceGet, "cuDeviceGet");
    sym(retain, "cuDevicePrimaryCtxRetain");
    sym(push, "cuCtxPushCurrent_v2");
    sym(pop, "cuCtxPopCurrent_v2");
    sym(alloc, "cuMemAlloc_v2");
    sym(free, "cuMemFree_v2");
    sym(htod, "cuMemcpyHtoD_v2");
    sym(dtoh, "cuMemcpyDtoH_v2");
    sym(streamCreate, "cuStreamCreate");
    sym(streamSync, "cuStreamSynchronize");
    sym(streamDestroy, "cuStreamDestroy_v2");
    if (!ok)
      error = "--resident: libcuda.so.1 lacks a driver call kiln-run needs";
    return ok;
  }
};

/// --resident: copies the inputs to device buffers once, checks that a
/// run there (Session::runOnDevice on a stream of kiln-run's) gives the
/// host run's outputs bit for bit, then times warm-up and timed runs,
/// each enqueued and waited for.
bool residentBenchmark(kiln::rt::Session &session,
                       const kiln::rt::Module &module,
                       const std::vector<const void *> &in,
                       const std::vector<HostTensor> &hostOutputs,
                       const Options &o, std::vector<double> &ms,
                       std::string &error) {
  if (session.device() != kiln::rt::Device::Cuda) {
    error = "--resident needs a CUDA session (--device=cuda)";
    return false;
  }
  for (const auto &t : module.outputs())
    if (t.dynamicDim() >= 0) {
      error = "--resident: the module has a data-dependent output, which "
              "device buffers cannot hold";
      return false;
    }
  Driver cu;
  if (!cu.open(error))
    return false;
  int dev = 0;
  void *ctx = nullptr, *stream = nullptr;
  if (cu.init(0) || cu.deviceGet(&dev, 0) || cu.retain(&ctx, dev) ||
      cu.push(ctx) || cu.streamCreate(&stream, 0)) {
    error = "--resident: cannot set up the CUDA context";
    return false;
  }
  std::vector<Driver::Ptr> din, dout;
  bool ok = true;
  auto allocate = [&](size_t bytes, std::vector<Driver::Ptr> &v) {
    Driver::Ptr p = 0;
    ok = ok && !cu.alloc(&p, std::max<size_t>(bytes, 16));
    v.push_back(p);
  };
  for (size_t i = 0; i < module.inputs().size(); ++i) {
    allocate(module.inputs()[i].byteSize(), din);
    ok = ok && !cu.htod(din.back(), in[i], module.inputs()[i].byteSize());
  }
  for (const auto &t : module.outputs())
    allocate(t.byteSize(), dout);
  auto cleanup = [&] {
    for (auto p : din)
      if (p)
        cu.free(p);
    for (auto p : dout)
      if (p)
        cu.free(p);
    cu.streamDestroy(stream);
    void *popped;
    cu.pop(&popped);
  };
  if (!ok) {
    error = "--resident: cannot allocate or fill device buffers";
    cleanup();
    return false;
  }
  auto once = [&]() -> bool {
    kiln::rt::Status s = session.runOnDevice(din.data(), dout.data(), stream);
    if (!s.ok()) {
      error = "--resident: " + s.message();
      return false;
    }
    if (cu.streamSync(stream)) {
      error = "--resident: the device run failed";
      return false;
    }
    return true;
  };
  if (!once()) {
    cleanup();
    return false;
  }
  for (size_t i = 0; i < dout.size(); ++i) {
    std::vector<uint8_t> got(hostOutputs[i].data.size());
    if (cu.dtoh(got.data(), dout[i], got.size()) ||
        got != hostOutputs[i].data) {
      error = "--resident: output " + hostOutputs[i].info.name +
              " of the run on device buffers differs from the host run's";
      cleanup();
      return false;
    }
  }
  std::printf("device-resident run: outputs identical to the host run's\n");
  for (int i = 0; i < o.warmup; ++i)
    if (!once()) {
      cleanup();
      return false;
    }
  for (int i = 0; i < std::max(1, o.iterations); ++i) {
    auto s = std::chrono::steady_clock::now();
    if (!once()) {
      cleanup();
      return false;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - s)
                     .count());
  }
  cleanup();
  return true;
}

/// A file's dtype as kiln-run reads it for a slot of dtype `slot`: numpy
/// has no bfloat16 or float8, so .npy files (and ONNX test data) carry
/// bfloat16 bits as uint16 and float8 bits as uint8; they are taken as
/// such where the signature says so.
DType fileDtype(DType file, DType slot) {
  if (file == DType::UInt16 && slot == DType::BFloat16)
    return slot;
  if (file == DType::UInt8 &&
      ((slot >= DType::Float8E4M3FN && slot <= DType::Float8E5M2FNUZ) ||
       slot == DType::Float4E2M1))
    return slot;
  return file;
}

void randomFill(const TensorInfo &info, std::string &bytes, std::mt19937 &rng) {
  // An input pinned at compile time takes its one value.
  if (!info.pinnedValue.empty()) {
    bytes = info.pinnedValue;
    return;
  }
  bytes.assign(info.byteSize(), 0);
  std::uniform_real_distribution<float> uf(-1, 1);
  std::uniform_int_distribution<int> ui(0, 9);
  for (size_t i = 0; i < info.numElements(); ++i) {
    switch (info.dtype) {
    case DType::Float:
      reinterpret_cast<float *>(bytes.data())[i] = uf(rng);
      break;
    case DType::Double:
      reinterpret_cast<double *>(bytes.data())[i] = uf(rng);
      break;
    case DType::Int64:
      reinterpret_cast<int64_t *>(bytes.data())[i] = ui(rng);
      break;
    case DType::Int32:
      reinterpret_cast<int32_t *>(bytes.data())[i] = ui(rng);
      break;
    case DType::Bool:
      bytes[i] = ui(rng) & 1;
      break;
    default:
      bytes[i * kiln::rt::dtypeSize(info.dtype)] = ui(rng);
      break;
    }
  }
}

/// `s` with JSON's string escapes.
std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out;
}

/// A line that names this machine's `device` at `threads`, the key of the
/// cached peaks.
std::string peaksKey(kiln::rt::Device device, int threads) {
  std::string cpu = "unknown cpu";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != line.npos) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string key = std::string(host) + " | " + cpu + " | ";
  if (device == kiln::rt::Device::Cuda) {
    const char *ordinal = std::getenv("KILN_CUDA_DEVICE");
    const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
    key += std::string("cuda ") + (ordinal ? ordinal : "0") +
           " of CUDA_VISIBLE_DEVICES=" + (visible ? visible : "");
  } else {
    key += "cpu threads=" + std::to_string(threads);
  }
  for (char &c : key)
    if (c == '\t' || c == '\n')
      c = ' ';
  return key;
}

std::string peaksCachePath() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kiln/peaks";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/kiln/peaks";
  return "";
}

/// The roofline's ceilings for `device`: given, cached, or measured now
/// (and cached). `note` says which, and what was measured.
Status devicePeaks(const Options &o, kiln::rt::Device device,
                   kiln::rt::DevicePeaks &peaks, std::string &note) {
  if (o.peakGflops > 0) {
    peaks.gflops = o.peakGflops;
    peaks.gbps = o.peakGbps;
    peaks.tensorGflops = o.peakTensorGflops;
    note = "given with --peaks";
    return Status::success();
  }
  if (device == kiln::rt::Device::Emulator)
    return Status::error("the emulator's times are not the GPU's; run "
                         "--device=cuda for a roofline");
  // The threads the module's code runs on (main sets OMP_NUM_THREADS from
  // --threads).
  const char *omp = std::getenv("OMP_NUM_THREADS");
  int threads = omp ? std::atoi(omp) : 0;
  if (threads <= 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  std::string key = peaksKey(device, threads), path = peaksCachePath();
  // One line per machine, device and thread count: key, GFLOP/s, GB/s,
  // tensor-core GFLOP/s (0: none), how. A line of an older kiln-run (no
  // tensor-core field) is measured again.
  std::string kept; // the other keys' lines, for rewriting the file
  if (!path.empty()) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(key + "\t", 0) != 0) {
        kept += line + "\n";
        continue;
      }
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string field; std::getline(ss, field, '\t');)
        f.push_back(field);
      if (o.recalibrate || f.size() != 5)
        continue;
      peaks.gflops = std::atof(f[1].c_str());
      peaks.gbps = std::atof(f[2].c_str());
      peaks.tensorGflops = std::atof(f[3].c_str());
      peaks.how = f[4];
      if (peaks.gflops > 0 && peaks.gbps > 0) {
        note = peaks.how + "; cached in " + path;
        return Status::success();
      }
    }
  }
  std::fflush(stdout);
  std::fprintf(stderr,
               "kiln-run: measuring the %s's peaks for the roofline "
               "(once per machine)...\n",
               kiln::rt::deviceName(device));
  if (Status s = kiln::rt::measurePeaks(device, threads, peaks); !s.ok())
    return s;
  note = peaks.how + "; measured now";
  if (path.empty())
    return Status::success();
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(),
                                      ec);
  // Written aside and renamed into place, so that a concurrent reader sees
  // the old file or the new one.
  std::string tmp = path + "." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << kept << key << "\t" << peaks.gflops << "\t" << peaks.gbps << "\t"
        << peaks.tensorGflops << "\t" << peaks.how << "\n";
    if (!out)
      return Status::success();
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    std::filesystem::remove(tmp, ec);
  else
    note = peaks.how + "; measured now, cached in " + path;
  return Status::success();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t idx =
      std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  return v[idx];
}

} // namespace

/// The tensors of a sequence or optional file for `q`: a SequenceProto
/// for a sequence, an OptionalProto for an optional, checked against what
/// the module was compiled for.
static bool loadComposite(const kiln::rt::CompositeInfo &q,
                          const std::string &f, std::vector<Loaded> &out,
                          std::string &error) {
  using Kind = kiln::rt::CompositeInfo::Kind;
  std::string side = q.output ? "output" : "input";
  std::vector<Loaded> elements;
  if (q.kind == Kind::Sequence) {
    if (!kiln::files::loadSequence(f, elements, error))
      return false;
  } else {
    bool present = false, isSequence = false;
    if (!kiln::files::loadOptional(f, present, isSequence, elements, error))
      return false;
    if (q.runTimeCount && !present) {
      // Absent at run time: none of its tensors, presence 0.
    } else if (present == q.absent) {
      error = "'" + f + "': " + side + " '" + q.name + "' is " +
              (q.absent ? "absent" : "present") + " in the module, the file " +
              (present ? "holds a value" : "holds none") +
              (q.output   ? ""
               : q.absent ? "; compile without --input-absent for it"
                          : "; compile with --input-absent=" + q.name);
      return false;
    }
    if (present && isSequence != (q.kind == Kind::OptionalSequence)) {
      error = "'" + f + "': " + side + " '" + q.name + "' holds a " +
              (isSequence ? "tensor" : "sequence") +
              " in the module, the file a " +
              (isSequence ? "sequence" : "tensor");
      return false;
    }
  }
  if (q.runTimeCount) {
    // At most `length` tensors, then their count (an optional's presence).
    int64_t count = static_cast<int64_t>(elements.size());
    if (q.kind != Kind::Sequence && !elements.empty())
      count = 1;
    if (elements.size() > q.length ||
        (q.kind != Kind::Sequence && !elements.empty() &&
         elements.size() != q.length)) {
      error = "'" + f + "': output '" + q.name + "' has at most " +
              std::to_string(q.length) + " tensors in the module, the file " +
              std::to_string(elements.size());
      return false;
    }
    for (Loaded &e : elements)
      out.push_back(std::move(e));
    for (size_t i = elements.size(); i < q.length; ++i) {
      Loaded &skipped = out.emplace_back();
      skipped.unchecked = true;
    }
    Loaded &n = out.emplace_back();
    n.dtype = kiln::rt::DType::Int64;
    n.bytes.assign(reinterpret_cast<const char *>(&count), sizeof(count));
    return true;
  }
  if (elements.size() != q.length) {
    error = "'" + f + "': " + side + " '" + q.name + "' is a sequence of " +
            std::to_string(q.length) + " tensors in the module, the file has " +
            std::to_string(elements.size()) +
            (q.output ? "" : "; compile for its length with --input-sequence");
    return false;
  }
  for (Loaded &e : elements)
    out.push_back(std::move(e));
  return true;
}

/// Reads the files given for a module's graph inputs (`output` false) or
/// outputs, in graph order, into one tensor per module input or output: a
/// sequence's file (an ONNX SequenceProto) gives its elements, an
/// optional's (an OptionalProto) its value or nothing.
static bool loadGraphFiles(const kiln::rt::Module &module, bool output,
                           const std::vector<std::string> &files,
                           std::vector<Loaded> &out, std::string &error) {
  const auto &tensors = output ? module.outputs() : module.inputs();
  std::vector<const kiln::rt::CompositeInfo *> composites;
  for (const auto &q : module.composites())
    if (q.output == output)
      composites.push_back(&q);
  size_t graphCount = tensors.size() + composites.size();
  for (const auto *q : composites)
    graphCount -= q->span();
  if (files.size() > graphCount) {
    error = "the module has " + std::to_string(graphCount) +
            (output ? " outputs, " : " inputs, ") +
            std::to_string(files.size()) +
            (output ? " expected given" : " given");
    return false;
  }
  size_t next = 0;
  auto q = composites.begin();
  for (const std::string &f : files) {
    if (q != composites.end() && (*q)->first == next) {
      if (!loadComposite(**q, f, out, error))
        return false;
      next += (*q++)->span();
      continue;
    }
    if (!loadTensor(f, out.emplace_back(), error))
      return false;
    ++next;
  }
  return true;
}

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    // --option=value is --option value.
    std::string inlineValue;
    bool hasInline = false;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
      inlineValue = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      hasInline = true;
    }
    auto next = [&](const char *what) -> std::string {
      if (hasInline) {
        hasInline = false;
        return inlineValue;
      }
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kiln-run: error: %s needs a value\n", what);
        std::exit(1);
      }
      return argv[++i];
    };
    auto number = [&](const char *what, double &out) {
      std::string v = next(what);
      char *end = nullptr;
      out = std::strtod(v.c_str(), &end);
      if (!end || *end) {
        std::fprintf(stderr, "kiln-run: error: bad number '%s' for %s\n",
                     v.c_str(), what);
        std::exit(1);
      }
    };
    if (a == "--input")
      o.inputs.push_back(next("--input"));
    else if (a == "--expected")
      o.expected.push_back(next("--expected"));
    else if (a == "--output")
      o.outputs.push_back(next("--output"));
    else if (a == "--rtol")
      number("--rtol", o.rtol);
    else if (a == "--atol")
      number("--atol", o.atol);
    else if (a == "--resident")
      o.benchmark = o.resident = true;
    else if (a == "--benchmark")
      o.benchmark = true;
    else if (a == "--info")
      o.info = true;
    else if (a == "--json")
      o.json = next("--json");
    else if (a == "--profile")
      o.profile = true;
    else if (a == "--recalibrate")
      o.recalibrate = true;
    else if (a == "--peaks") {
      std::string v = next("--peaks");
      char *end = nullptr;
      o.peakGflops = std::strtod(v.c_str(), &end);
      if (end && *end == ',')
        o.peakGbps = std::strtod(end + 1, &end);
      if (end && *end == ',') {
        o.peakTensorGflops = std::strtod(end + 1, &end);
        if (!(o.peakTensorGflops > 0))
          end = nullptr;
      }
      if (!end || *end || !(o.peakGflops > 0) || !(o.peakGbps > 0))
        return fail("--peaks takes two or three positive numbers, GFLOP/s, "
                    "GB/s and tensor-core GFLOP/s: --peaks 150,20 or "
                    "--peaks 57000,4000,600000");
    } else if (a == "--profile-trace") {
      o.trace = next("--profile-trace");
      o.profile = true;
    } else if (a == "--device") {
      std::string d = next("--device");
      if (!kiln::rt::parseDevice(d, o.device))
        return fail("unknown device '" + d +
                    "'; use default, cpu, cuda or emulator");
    } else if (a == "--warmup" || a == "--iterations" || a == "--seed" ||
               a == "--threads" || a == "--profile-runs" || a == "--batch" ||
               a == "--length" || a == "--runs") {
      double v;
      number(a.c_str(), v);
      bool positive = a == "--threads" || a == "--profile-runs" ||
                      a == "--batch" || a == "--length" || a == "--runs";
      if (v < 0 || v != std::floor(v) || (positive && v < 1))
        return fail(a + (positive ? " takes a positive integer"
                                  : " takes a non-negative integer"));
      (a == "--warmup"         ? o.warmup
       : a == "--iterations"   ? o.iterations
       : a == "--threads"      ? o.threads
       : a == "--profile-runs" ? o.profileRuns
       : a == "--batch"        ? o.batch
       : a == "--length"       ? o.length
       : a == "--runs"         ? o.runs
                               : (int &)o.seed) = static_cast<int>(v);
      if (a == "--profile-runs")
        o.profile = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-')
      return fail("unknown option '" + a + "'\n" + kUsage);
    else if (o.module.empty())
      o.module = a;
    else
      return fail("more than one module given");
    if (hasInline)
      return fail("option '" + a + "' takes no value");
  }
  if (o.module.empty())
    return fail(std::string("no module given\n") + kUsage);

  // The OpenMP runtime reads this when the module's code loads it.
  if (o.threads > 0)
    setenv("OMP_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  std::shared_ptr<kiln::rt::Module> module;
  if (Status s = kiln::rt::Module::load(o.module, module); !s.ok())
    return fail(s.message());
  if (o.info) {
    std::printf("module %s (%s)\n", module->graphName().c_str(),
                module->target().c_str());
    if (module->maxBatch())
      std::printf("  batch range %lld..%lld (specialized for %lld)\n",
                  static_cast<long long>(module->minBatch()),
                  static_cast<long long>(module->maxBatch()),
                  static_cast<long long>(module->optBatch()));
    if (module->maxLength()) {
      std::printf("  length range %lld..%lld (specialized for %lld; code for",
                  static_cast<long long>(module->minLength()),
                  static_cast<long long>(module->maxLength()),
                  static_cast<long long>(module->optLength()));
      for (int64_t b : module->lengthBuckets())
        std::printf(" %lld", static_cast<long long>(b));
      std::printf(")\n");
    }
    auto lengthNote = [](const TensorInfo &t) {
      std::string s;
      for (int64_t d : t.lengthDims)
        s += " (dim " + std::to_string(d) + ": the length)";
      return s;
    };
    for (const auto &t : module->inputs())
      std::printf("  input  %s: %s%s%s%s%s\n", t.name.c_str(),
                  kiln::rt::dtypeName(t.dtype), shapeString(t.shape).c_str(),
                  t.batched ? " (dim 0: the batch)" : "", lengthNote(t).c_str(),
                  t.pinnedValue.empty() ? "" : " (pinned at compile time)");
    for (const auto &q : module->composites()) {
      using Kind = kiln::rt::CompositeInfo::Kind;
      const char *side = q.output ? "output" : "input ";
      if (q.kind == Kind::Sequence && q.runTimeCount)
        std::printf("  %s %s: sequence of at most %zu %s tensors (its length "
                    "in %s.length)\n",
                    side, q.name.c_str(), q.length,
                    kiln::rt::dtypeName(q.dtype), q.name.c_str());
      else if (q.kind == Kind::Sequence)
        std::printf("  %s %s: sequence of %zu %s tensors\n", side,
                    q.name.c_str(), q.length, kiln::rt::dtypeName(q.dtype));
      else if (q.runTimeCount)
        std::printf(
            "  %s %s: optional %s, present or not at run time "
            "(%s.present)\n",
            side, q.name.c_str(),
            q.kind == Kind::OptionalTensor
                ? "tensor"
                : ("sequence of " + std::to_string(q.length) + " tensors")
                      .c_str(),
            q.name.c_str());
      else
        std::printf("  %s %s: optional %s, %s\n", side, q.name.c_str(),
                    q.kind == Kind::OptionalTensor ? "tensor" : "sequence",
                    q.absent ? "compiled absent"
                             : ("compiled present (" +
                                std::to_string(q.length) + " tensors)")
                                   .c_str());
    }
    for (const auto &t : module->outputs()) {
      std::printf("  output %s: %s%s%s%s", t.name.c_str(),
                  kiln::rt::dtypeName(t.dtype), shapeString(t.shape).c_str(),
                  t.batched ? " (dim 0: the batch)" : "",
                  lengthNote(t).c_str());
      if (t.dynamicDim() >= 0)
        std::printf(" (? depends on the data, at most %lld)",
                    static_cast<long long>(t.maxExtent));
      std::printf("\n");
    }
    return 0;
  }
  const auto &ins = module->inputs();
  // --input and --expected files are per graph input and output: a
  // sequence's file (a SequenceProto) gives all its elements.
  std::string error;
  std::vector<Loaded> inFiles, wantFiles;
  if (!loadGraphFiles(*module, false, o.inputs, inFiles, error) ||
      !loadGraphFiles(*module, true, o.expected, wantFiles, error))
    return fail(error);
  for (const std::string &f : o.outputs)
    if (!kiln::files::isTensorFileName(f))
      return fail("--output '" + f +
                  "': outputs are written as .npy or .pb (TensorProto) files");
  if (o.outputs.size() > module->outputs().size())
    return fail("the module has " + std::to_string(module->outputs().size()) +
                " outputs, " + std::to_string(o.outputs.size()) +
                " --output files given");

  std::vector<std::string> storage(ins.size());
  std::vector<kiln::rt::TensorRef> refs;
  std::mt19937 rng(o.seed);
  for (size_t i = 0; i < ins.size(); ++i) {
    kiln::rt::TensorRef r;
    r.name = ins[i].name;
    if (i < inFiles.size()) {
      Loaded &t = inFiles[i];
      storage[i] = std::move(t.bytes);
      r.dtype = fileDtype(t.dtype, ins[i].dtype);
      r.shape = t.shape;
    } else {
      TensorInfo info = ins[i];
      info.shape = info.shapeAt(o.batch, o.length);
      randomFill(info, storage[i], rng);
      r.dtype = ins[i].dtype;
      r.shape = info.shape;
    }
    r.data = storage[i].data();
    r.bytes = storage[i].size();
    refs.push_back(r);
  }

  kiln::rt::Session session(module, o.device);
  if (!session.status().ok())
    return fail(session.status().message());
  if (o.resident && session.device() != kiln::rt::Device::Cuda)
    return fail("--resident needs a CUDA session (--device=cuda)");
  std::vector<HostTensor> outputs;
  auto t0 = std::chrono::steady_clock::now();
  if (Status s = session.run(refs, outputs); !s.ok())
    return fail(s.message());
  double firstMs = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - t0)
                       .count();
  std::printf("ran %s on %s in %.3f ms\n", o.module.c_str(),
              kiln::rt::deviceName(session.device()), firstMs);
  for (int r = 1; r < o.runs; ++r)
    if (Status s = session.run(refs, outputs); !s.ok())
      return fail("run " + std::to_string(r + 1) + ": " + s.message());
  if (o.runs > 1)
    std::printf("ran it %d times; the outputs are the last run's\n", o.runs);
  for (size_t i = 0; i < o.outputs.size(); ++i)
    if (!kiln::files::saveTensor(o.outputs[i], outputs[i].info.name,
                                 outputs[i].info.dtype, outputs[i].info.shape,
                                 outputs[i].data.data(), outputs[i].data.size(),
                                 error))
      return fail(error);
  // Machine-readable results (--json), completed as the run goes on.
  std::ostringstream json;
  json.precision(6);
  json << "{\"module\":\"" << jsonEscape(o.module)
       << "\",\"first_run_ms\":" << firstMs;

  int status = 0;
  for (size_t i = 0; i < wantFiles.size(); ++i) {
    Loaded &want = wantFiles[i];
    const HostTensor &got = outputs[i];
    if (want.unchecked) {
      std::printf("output %s: not compared (past the expected sequence's "
                  "length, or of an absent optional)\n",
                  got.info.name.c_str());
      continue;
    }
    want.dtype = fileDtype(want.dtype, got.info.dtype);
    if (want.dtype != got.info.dtype || want.shape != got.info.shape) {
      std::printf("output %s: MISMATCH: expected %s%s, got %s%s\n",
                  got.info.name.c_str(), kiln::rt::dtypeName(want.dtype),
                  shapeString(want.shape).c_str(),
                  kiln::rt::dtypeName(got.info.dtype),
                  shapeString(got.info.shape).c_str());
      status = 1;
      continue;
    }
    size_t n = got.info.numElements(), bad = 0, worst = 0;
    double maxAbs = 0, maxRel = 0;
    for (size_t k = 0; k < n; ++k) {
      double g = kiln::rt::elementAsDouble(got.data.data(), got.info.dtype, k);
      double w = kiln::rt::elementAsDouble(want.bytes.data(), want.dtype, k);
      bool same = (std::isnan(g) && std::isnan(w)) || g == w;
      double err = same ? 0 : std::fabs(g - w);
      if (!same && !(err <= o.atol + o.rtol * std::fabs(w))) {
        if (!bad++)
          worst = k;
      }
      if (err > maxAbs)
        maxAbs = err;
      if (w != 0 && err / std::fabs(w) > maxRel)
        maxRel = err / std::fabs(w);
    }
    if (bad) {
      std::printf(
          "output %s: MISMATCH: %zu of %zu elements outside "
          "rtol=%g atol=%g (first at %zu: got %g, expected %g); max "
          "abs err %g, max rel err %g\n",
          got.info.name.c_str(), bad, n, o.rtol, o.atol, worst,
          kiln::rt::elementAsDouble(got.data.data(), got.info.dtype, worst),
          kiln::rt::elementAsDouble(want.bytes.data(), want.dtype, worst),
          maxAbs, maxRel);
      status = 1;
    } else {
      std::printf("output %s: ok (%zu elements, shape %s, max abs err %g, max "
                  "rel err %g)\n",
                  got.info.name.c_str(), n, shapeString(got.info.shape).c_str(),
                  maxAbs, maxRel);
    }
  }

  json << ",\"check\":\""
       << (o.expected.empty() ? "unchecked"
           : status           ? "mismatch"
                              : "ok")
       << "\"";
  if (o.benchmark) {
    std::vector<const void *> in;
    for (auto &s : storage)
      in.push_back(s.data());
    // Buffers of the signature's sizes: a data-dependent output needs its
    // upper bound.
    std::vector<std::vector<uint8_t>> outStorage;
    std::vector<void *> out;
    for (const TensorInfo &t : module->outputs())
      out.push_back(outStorage.emplace_back(t.byteSize()).data());
    // A batch-range module runs the batch of the inputs, a length-range
    // one their length.
    int64_t batch = 0, length = 0;
    for (size_t i = 0; i < refs.size(); ++i) {
      if (module->inputs()[i].batched)
        batch = refs[i].shape[0];
      for (int64_t d : module->inputs()[i].lengthDims)
        length = refs[i].shape[d];
    }
    auto runOnce = [&] {
      return length  ? session.runRaw(in.data(), out.data(), batch, length)
             : batch ? session.runRaw(in.data(), out.data(), batch)
                     : session.runRaw(in.data(), out.data());
    };
    std::vector<double> ms;
    if (o.resident) {
      std::string err;
      if (!residentBenchmark(session, *module, in, outputs, o, ms, err))
        return fail(err);
    } else {
      for (int i = 0; i < o.warmup; ++i)
        runOnce();
      for (int i = 0; i < std::max(1, o.iterations); ++i) {
        auto s = std::chrono::steady_clock::now();
        runOnce();
        ms.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - s)
                         .count());
      }
    }
    double mean = 0;
    for (double v : ms)
      mean += v;
    mean /= ms.size();
    std::printf("latency over %zu runs (after %d warm-up): mean %.4f ms, "
                "p50 %.4f ms, p90 %.4f ms, p99 %.4f ms, min %.4f ms; "
                "throughput %.1f runs/s\n",
                ms.size(), o.warmup, mean, percentile(ms, 0.5),
                percentile(ms, 0.9), percentile(ms, 0.99),
                *std::min_element(ms.begin(), ms.end()), 1000.0 / mean);
    double var = 0;
    for (double v : ms)
      var += (v - mean) * (v - mean);
    json << ",\"benchmark\":{\"resident\":" << (o.resident ? "true" : "false")
         << ",\"warmup\":" << o.warmup << ",\"iterations\":" << ms.size()
         << ",\"mean_ms\":" << mean
         << ",\"stddev_ms\":" << std::sqrt(var / ms.size())
         << ",\"p50_ms\":" << percentile(ms, 0.5)
         << ",\"p90_ms\":" << percentile(ms, 0.9)
         << ",\"p99_ms\":" << percentile(ms, 0.99)
         << ",\"min_ms\":" << *std::min_element(ms.begin(), ms.end())
         << ",\"max_ms\":" << *std::max_element(ms.begin(), ms.end())
         << ",\"throughput_per_s\":" << 1000.0 / mean << "}";
  }
  if (o.profile) {
    // More runs, every launch timed; each kernel's or region's time is its
    // median over the runs.
    session.setProfiling(true);
    std::vector<HostTensor> profiled;
    std::map<std::string, std::vector<double>> runMs;
    for (int run = 0; run < o.profileRuns; ++run) {
      if (Status s = session.run(refs, profiled); !s.ok())
        return fail(s.message());
      std::map<std::string, double> sum;
      for (const auto &l : session.lastProfile())
        sum[l.kernel] += l.ms;
      for (const auto &[name, ms] : sum)
        runMs[name].push_back(ms);
    }
    session.setProfiling(false);
    const auto &launches = session.lastProfile();
    // The roofline's ceilings: measured once per machine and cached.
    kiln::rt::DevicePeaks peaks;
    std::string peaksNote;
    if (Status s = devicePeaks(o, session.device(), peaks, peaksNote); !s.ok())
      peaksNote = s.message();
    bool roofline = peaks.gflops > 0 && peaks.gbps > 0;
    struct Row {
      std::string kernel;
      int count = 0;
      double ms = 0, flops = 0, bytes = 0;
      bool known = true, tensorCores = false;
      // Derived once the time is known (-1: not applicable).
      double gflops = -1, gbps = -1, roof = -1;
    };
    std::vector<Row> rows;
    std::map<std::string, size_t> index;
    double total = 0;
    for (const auto &l : launches) {
      auto [it, inserted] = index.try_emplace(l.kernel, rows.size());
      if (inserted)
        rows.push_back({l.kernel});
      Row &r = rows[it->second];
      r.count++;
      r.flops += l.flops;
      r.bytes += l.bytes;
      r.known &= l.flops >= 0 && l.bytes >= 0;
      r.tensorCores |= l.tensorCores;
    }
    // A kernel that multiplies on tensor cores is held to their ceiling
    // where it was measured (or given).
    auto computePeak = [&](const Row &r) {
      return r.tensorCores && peaks.tensorGflops > 0 ? peaks.tensorGflops
                                                     : peaks.gflops;
    };
    for (Row &r : rows) {
      r.ms = percentile(runMs[r.kernel], 0.5);
      total += r.ms;
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row &a, const Row &b) { return a.ms > b.ms; });
    // Achieved rates and the share of the roofline's bound at the row's
    // arithmetic intensity: min(peak FLOP/s, intensity x peak bandwidth);
    // a row without arithmetic is held to the bandwidth.
    for (Row &r : rows) {
      if (!r.known || r.ms <= 0)
        continue;
      r.gflops = r.flops / (r.ms * 1e-3) / 1e9;
      r.gbps = r.bytes / (r.ms * 1e-3) / 1e9;
      if (!roofline)
        continue;
      double peak = computePeak(r);
      if (r.flops > 0 && r.bytes > 0)
        r.roof = r.gflops / std::min(peak, r.flops / r.bytes * peaks.gbps);
      else if (r.flops > 0)
        r.roof = r.gflops / peak;
      else if (r.bytes > 0)
        r.roof = r.gbps / peaks.gbps;
    }
    bool cpu = session.device() == kiln::rt::Device::Cpu;
    std::printf("profile on %s: %zu %s, %.3f ms in %s",
                kiln::rt::deviceName(session.device()), launches.size(),
                cpu ? "regions" : "launches", total,
                cpu ? "regions" : "kernels");
    if (o.profileRuns > 1)
      std::printf(" (medians of %d runs)", o.profileRuns);
    std::printf("\n");
    if (roofline) {
      std::printf("roofline ceilings: %.1f GFLOP/s, %.1f GB/s (ridge at %.2f "
                  "FLOP/byte",
                  peaks.gflops, peaks.gbps, peaks.gflops / peaks.gbps);
      if (peaks.tensorGflops > 0)
        std::printf("); tensor-core kernels (T): %.1f GFLOP/s (ridge at %.2f",
                    peaks.tensorGflops, peaks.tensorGflops / peaks.gbps);
      std::printf("; %s)\n", peaksNote.c_str());
    } else
      std::printf("roofline ceilings: none (%s)\n", peaksNote.c_str());
    std::printf("  %10s %6s %8s %9s %8s %8s %6s %-7s %s\n", "ms", "%",
                cpu ? "count" : "launches", "GFLOP/s", "GB/s", "FLOP/B",
                "%roof", "bound", cpu ? "region" : "kernel");
    auto fixed = [](double v, int precision) {
      char b[32];
      if (v < 0)
        return std::string("-");
      std::snprintf(b, sizeof(b), "%.*f", precision, v);
      return std::string(b);
    };
    for (const Row &r : rows) {
      double intensity = r.known && r.bytes > 0 ? r.flops / r.bytes : -1;
      const char *bound = "-";
      if (roofline && r.known && (r.flops > 0 || r.bytes > 0))
        bound = r.flops > 0 && (r.bytes <= 0 ||
                                intensity >= computePeak(r) / peaks.gbps)
                    ? "compute"
                    : "memory";
      std::string name = r.tensorCores && peaks.tensorGflops > 0
                             ? r.kernel + " (T)"
                             : r.kernel;
      std::printf("  %10.4f %6.2f %8d %9s %8s %8s %6s %-7s %s\n", r.ms,
                  total > 0 ? 100.0 * r.ms / total : 0.0, r.count,
                  fixed(r.gflops, 2).c_str(), fixed(r.gbps, 2).c_str(),
                  fixed(intensity, 2).c_str(),
                  fixed(r.roof < 0 ? -1 : 100 * r.roof, 1).c_str(), bound,
                  name.c_str());
    }
    json << ",\"profile\":{\"device\":\""
         << kiln::rt::deviceName(session.device())
         << "\",\"kernel_ms\":" << total;
    if (roofline)
      json << ",\"peaks\":{\"gflops_per_s\":" << peaks.gflops
           << ",\"gb_per_s\":" << peaks.gbps
           << ",\"tensor_gflops_per_s\":" << peaks.tensorGflops << ",\"how\":\""
           << jsonEscape(peaksNote) << "\"}";
    json << ",\"kernels\":[";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row &r = rows[i];
      json << (i ? "," : "") << "{\"name\":\"" << jsonEscape(r.kernel)
           << "\",\"launches\":" << r.count << ",\"ms\":" << r.ms
           << ",\"tensor_cores\":" << (r.tensorCores ? "true" : "false");
      if (r.known) {
        json << ",\"flops\":" << static_cast<long long>(r.flops)
             << ",\"bytes\":" << static_cast<long long>(r.bytes);
        if (r.gflops >= 0)
          json << ",\"gflops_per_s\":" << r.gflops
               << ",\"gb_per_s\":" << r.gbps;
        if (r.roof >= 0)
          json << ",\"roofline_fraction\":" << r.roof;
      }
      json << "}";
    }
    json << "]}";
    if (!o.trace.empty()) {
      std::ofstream t(o.trace);
      t << "{\"traceEvents\":[";
      for (size_t i = 0; i < launches.size(); ++i) {
        const auto &l = launches[i];
        char dims[96];
        std::snprintf(dims, sizeof(dims), "%ux%ux%u / %ux%ux%u", l.grid[0],
                      l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2]);
        t << (i ? "," : "") << "{\"name\":\"" << jsonEscape(l.kernel)
          << "\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":" << l.startMs * 1000.0
          << ",\"dur\":" << l.ms * 1000.0 << ",\"args\":{\"grid / block\":\""
          << dims << "\"";
        if (l.flops >= 0 && l.bytes >= 0) {
          t << ",\"flops\":" << static_cast<long long>(l.flops)
            << ",\"bytes\":" << static_cast<long long>(l.bytes);
          if (l.ms > 0)
            t << ",\"GFLOP/s\":" << l.flops / (l.ms * 1e6)
              << ",\"GB/s\":" << l.bytes / (l.ms * 1e6);
        }
        t << "}}";
      }
      t << "],\"displayTimeUnit\":\"ms\"}\n";
      if (!t)
        return fail("cannot write '" + o.trace + "'");
    }
  }
  json << "}\n";
  if (!o.json.empty()) {
    if (o.json == "-") {
      std::fputs(json.str().c_str(), stdout);
    } else {
      std::ofstream f(o.json);
      f << json.str();
      if (!f)
        return fail("cannot write '" + o.json + "'");
    }
  }
  return status;
}
