//===- Cuda.cpp - GPU modules on an NVIDIA GPU through the driver API -----===//
//
// The CUDA driver (libcuda.so.1) is opened with dlopen on first use, so the
// runtime links and loads on machines without it and reports "no CUDA
// device" as a status there. A session holds its own stream, a device copy
// of the weights (uploaded once), the arena and device buffers for the
// inputs and outputs. The first run records the launch plan as a CUDA
// graph and later runs replay it (KILN_CUDA_GRAPHS=0 launches each kernel
// instead).
//
//===----------------------------------------------------------------------===//

#include "GpuCode.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace kiln::rt;

namespace {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
using CUevent = struct CUevent_st *;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kStreamNonBlocking = 1;
constexpr int kCaptureModeThreadLocal = 1;

/// The driver entry points Kiln uses, resolved once.
struct Driver {
  std::string error;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphDestroy)(CUgraph);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);

  static const Driver &get() {
    static Driver driver;
    static std::once_flag once;
    std::call_once(once, [] { driver.load(); });
    return driver;
  }

  std::string describe(CUresult r) const {
    const char *s = nullptr;
    if (cuGetErrorString)
      cuGetErrorString(r, &s);
    return s ? std::string(s) : "CUDA error " + std::to_string(r);
  }

private:
  void load() {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      error = "no CUDA device: the CUDA driver (libcuda.so.1) is not "
              "installed";
      return;
    }
    bool missing = false;
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(h, name));
      if (!fn && !missing) {
        missing = true;
        error = std::string("the CUDA driver lacks ") + name;
      }
    };
    sym(cuInit, "cuInit");
    sym(cuDeviceGetCount, "cuDeviceGetCount");
    sym(cuDeviceGet, "cuDeviceGet");
    sym(cuDeviceGetAttribute, "cuDeviceGetAttribute");
    sym(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    sym(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    sym(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    sym(cuModuleLoadData, "cuModuleLoadData");
    sym(cuModuleUnload, "cuModuleUnload");
    sym(cuModuleGetFunction, "cuModuleGetFunction");
    sym(cuMemAlloc, "cuMemAlloc_v2");
    sym(cuMemFree, "cuMemFree_v2");
    sym(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    sym(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    sym(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    sym(cuStreamCreate, "cuStreamCreate");
    sym(cuStreamDestroy, "cuStreamDestroy_v2");
    sym(cuStreamSynchronize, "cuStreamSynchronize");
    sym(cuLaunchKernel, "cuLaunchKernel");
    sym(cuStreamBeginCapture, "cuStreamBeginCapture_v2");
    sym(cuStreamEndCapture, "cuStreamEndCapture");
    sym(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
    sym(cuGraphLaunch, "cuGraphLaunch");
    sym(cuGraphDestroy, "cuGraphDestroy");
    sym(cuGraphExecDestroy, "cuGraphExecDestroy");
    sym(cuGetErrorString, "cuGetErrorString");
    sym(cuEventCreate, "cuEventCreate");
    sym(cuEventDestroy, "cuEventDestroy_v2");
    sym(cuEventRecord, "cuEventRecord");
    sym(cuEventSynchronize, "cuEventSynchronize");
    sym(cuEventElapsedTime, "cuEventElapsedTime");
    if (missing)
      return;
    if (CUresult r = cuInit(0)) {
      error = "no CUDA device: cuInit failed (" + describe(r) + ")";
      return;
    }
  }
};

class CudaBackend : public Backend {
public:
  CudaBackend(std::shared_ptr<GpuCode> code, const Driver &d)
      : code(std::move(code)), cu(d) {}

  ~CudaBackend() override {
    if (!context)
      return;
    cu.cuCtxPushCurrent(context);
    for (CUevent e : events)
      cu.cuEventDestroy(e);
    if (graphExec)
      cu.cuGraphExecDestroy(graphExec);
    if (graph)
      cu.cuGraphDestroy(graph);
    if (stream)
      cu.cuStreamDestroy(stream);
    for (CUdeviceptr p : allocations)
      cu.cuMemFree(p);
    if (module)
      cu.cuModuleUnload(module);
    CUcontext popped;
    cu.cuCtxPopCurrent(&popped);
    cu.cuDevicePrimaryCtxRelease(device);
  }

  Status init() {
    int count = 0;
    if (CUresult r = cu.cuDeviceGetCount(&count); r || count == 0)
      return Status::error("no CUDA device" +
                           (r ? " (" + cu.describe(r) + ")" : std::string()));
    int ordinal = 0;
    if (const char *env = std::getenv("KILN_CUDA_DEVICE"))
      ordinal = std::atoi(env);
    if (ordinal < 0 || ordinal >= count)
      return Status::error("KILN_CUDA_DEVICE=" + std::to_string(ordinal) +
                           " but there are " + std::to_string(count) +
                           " CUDA devices");
    if (Status s = check(cu.cuDeviceGet(&device, ordinal), "cuDeviceGet");
        !s.ok())
      return s;
    int major = 0, minor = 0;
    cu.cuDeviceGetAttribute(&major, kAttrComputeCapabilityMajor, device);
    cu.cuDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, device);
    std::string deviceChip =
        "sm_" + std::to_string(major) + std::to_string(minor);
    if (Status s = check(cu.cuDevicePrimaryCtxRetain(&context, device),
                         "cuDevicePrimaryCtxRetain");
        !s.ok()) {
      context = nullptr;
      return s;
    }
    cu.cuCtxPushCurrent(context);
    Status s = setUp(deviceChip);
    CUcontext popped;
    cu.cuCtxPopCurrent(&popped);
    return s;
  }

  Status run(void *const *buffers,
             std::vector<LaunchProfile> *profile) override {
    cu.cuCtxPushCurrent(context);
    Status s = runWithCopies(buffers, profile);
    CUcontext popped;
    cu.cuCtxPopCurrent(&popped);
    return s;
  }

  Status runOnDevice(const uint64_t *inputs, const uint64_t *outputs,
                     void *callerStream) override {
    size_t ni = code->numInputs, no = code->numOutputs;
    auto buffer = [&](int b) -> CUdeviceptr {
      if (b < 0)
        return constants;
      size_t i = static_cast<size_t>(b);
      if (i < ni)
        return inputs[i];
      if (i < ni + no)
        return outputs[i - ni];
      return deviceBuffers[i];
    };
    std::vector<std::vector<CUdeviceptr>> vals;
    std::vector<std::vector<void *>> ptrs;
    buildParams(buffer, vals, ptrs);
    cu.cuCtxPushCurrent(context);
    Status status = launchAll(
        callerStream ? static_cast<CUstream>(callerStream) : stream, ptrs);
    CUcontext popped;
    cu.cuCtxPopCurrent(&popped);
    return status;
  }

private:
  Status check(CUresult r, const char *what) const {
    if (!r)
      return Status::success();
    return Status::error(std::string(what) + " failed: " + cu.describe(r));
  }

  Status setUp(const std::string &deviceChip) {
    // The cubin when it was built for this device, else the PTX, which the
    // driver compiles for it (a device older than the PTX's target fails).
    std::string chip = code->chip;
    bool cubinFits = !code->cubin.empty() &&
                     (chip == deviceChip || (chip == deviceChip + "a"));
    const std::string &image = cubinFits ? code->cubin : code->ptx;
    if (image.empty() && !code->kernels.empty())
      return Status::error("the module holds no GPU code");
    if (CUresult r = code->kernels.empty()
                         ? 0
                         : cu.cuModuleLoadData(&module, image.c_str())) {
      module = nullptr;
      return Status::error("the module's kernels (for " + chip +
                           ") do not load on this " + deviceChip +
                           " device: " + cu.describe(r));
    }
    for (const GpuKernel &k : code->kernels) {
      CUfunction f;
      if (Status s = check(cu.cuModuleGetFunction(&f, module, k.name.c_str()),
                           "cuModuleGetFunction");
          !s.ok())
        return s;
      functions.push_back(f);
    }
    if (Status s = check(cu.cuStreamCreate(&stream, kStreamNonBlocking),
                         "cuStreamCreate");
        !s.ok())
      return s;
    auto alloc = [&](size_t bytes, CUdeviceptr &p) {
      CUresult r = cu.cuMemAlloc(&p, bytes ? bytes : 1);
      if (!r)
        allocations.push_back(p);
      return check(r, "cuMemAlloc");
    };
    // Weights once per session.
    if (Status s = alloc(code->constantsBytes, constants); !s.ok())
      return s;
    if (code->constantsBytes)
      if (Status s = check(
              cu.cuMemcpyHtoD(constants, code->constants, code->constantsBytes),
              "uploading the weights");
          !s.ok())
        return s;
    deviceBuffers.resize(code->bufferBytes.size());
    for (size_t i = 0; i < code->bufferBytes.size(); ++i)
      if (Status s = alloc(code->bufferBytes[i], deviceBuffers[i]); !s.ok())
        return s;
    buildParams([&](int b) { return b < 0 ? constants : deviceBuffers[b]; },
                values, params);
    const char *graphs = std::getenv("KILN_CUDA_GRAPHS");
    useGraphs = !graphs || std::string(graphs) != "0";
    return Status::success();
  }

  /// Each launch's kernel parameters: one address per argument, buffer `b`
  /// at `base(b)`; `ptrs[l]` points into `vals[l]`.
  template <typename BaseFn>
  void buildParams(BaseFn base, std::vector<std::vector<CUdeviceptr>> &vals,
                   std::vector<std::vector<void *>> &ptrs) {
    vals.assign(code->launches.size(), {});
    ptrs.assign(code->launches.size(), {});
    for (size_t l = 0; l < code->launches.size(); ++l) {
      for (const GpuArg &a : code->launches[l].args)
        vals[l].push_back(base(a.buffer) + static_cast<CUdeviceptr>(a.offset));
      for (CUdeviceptr &v : vals[l])
        ptrs[l].push_back(&v);
    }
  }

  /// Launches the plan on `s` with the parameters `ptrs`; with `timed`,
  /// records an event before the first launch and after each.
  Status launchAll(CUstream s, std::vector<std::vector<void *>> &ptrs,
                   bool timed = false) {
    if (timed) {
      while (events.size() < code->launches.size() + 1) {
        CUevent e;
        if (Status created = check(cu.cuEventCreate(&e, 0), "cuEventCreate");
            !created.ok())
          return created;
        events.push_back(e);
      }
      cu.cuEventRecord(events[0], s);
    }
    for (size_t l = 0; l < code->launches.size(); ++l) {
      const GpuLaunch &launch = code->launches[l];
      CUresult r = cu.cuLaunchKernel(
          functions[launch.kernel], launch.grid[0], launch.grid[1],
          launch.grid[2], launch.block[0], launch.block[1], launch.block[2],
          launch.sharedBytes, s, ptrs[l].data(), nullptr);
      if (r)
        return Status::error("launching kernel '" +
                             code->kernels[launch.kernel].name +
                             "' failed: " + cu.describe(r));
      if (timed)
        cu.cuEventRecord(events[l + 1], s);
    }
    return Status::success();
  }

  /// A run on host buffers: inputs in, the plan, outputs out.
  Status runWithCopies(void *const *buffers,
                       std::vector<LaunchProfile> *profile) {
    size_t ni = code->numInputs, nOut = code->numOutputs + code->numExtents;
    for (size_t i = 0; i < ni; ++i)
      if (code->bufferBytes[i])
        if (Status s = check(cu.cuMemcpyHtoDAsync(deviceBuffers[i], buffers[i],
                                                  code->bufferBytes[i], stream),
                             "copying an input to the device");
            !s.ok())
          return s;
    if (profile) {
      if (Status s = launchAll(stream, params, /*timed=*/true); !s.ok())
        return s;
    } else if (useGraphs && !graphExec) {
      if (Status s =
              check(cu.cuStreamBeginCapture(stream, kCaptureModeThreadLocal),
                    "cuStreamBeginCapture");
          !s.ok())
        return s;
      Status launched = launchAll(stream, params);
      CUresult r = cu.cuStreamEndCapture(stream, &graph);
      if (!launched.ok())
        return launched;
      if (Status s = check(r, "cuStreamEndCapture"); !s.ok())
        return s;
      if (Status s = check(cu.cuGraphInstantiateWithFlags(&graphExec, graph, 0),
                           "cuGraphInstantiate");
          !s.ok())
        return s;
    }
    if (profile) {
      // Timed above.
    } else if (useGraphs) {
      if (Status s =
              check(cu.cuGraphLaunch(graphExec, stream), "cuGraphLaunch");
          !s.ok())
        return s;
    } else if (Status s = launchAll(stream, params); !s.ok()) {
      return s;
    }
    for (size_t i = ni; i < ni + nOut; ++i)
      if (code->bufferBytes[i])
        if (Status s = check(cu.cuMemcpyDtoHAsync(buffers[i], deviceBuffers[i],
                                                  code->bufferBytes[i], stream),
                             "copying an output from the device");
            !s.ok())
          return s;
    if (Status s = check(cu.cuStreamSynchronize(stream), "running the kernels");
        !s.ok())
      return s;
    if (profile) {
      for (size_t l = 0; l < code->launches.size(); ++l) {
        const GpuLaunch &launch = code->launches[l];
        float start = 0, ms = 0;
        cu.cuEventElapsedTime(&start, events[0], events[l]);
        cu.cuEventElapsedTime(&ms, events[l], events[l + 1]);
        LaunchProfile p;
        p.kernel = code->kernels[launch.kernel].name;
        for (int d = 0; d < 3; ++d) {
          p.grid[d] = launch.grid[d];
          p.block[d] = launch.block[d];
        }
        p.startMs = start;
        p.ms = ms;
        profile->push_back(p);
      }
    }
    return Status::success();
  }

  std::shared_ptr<GpuCode> code;
  const Driver &cu;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUstream stream = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec graphExec = nullptr;
  bool useGraphs = true;
  std::vector<CUfunction> functions;
  std::vector<CUevent> events;
  std::vector<CUdeviceptr> allocations, deviceBuffers;
  CUdeviceptr constants = 0;
  std::vector<std::vector<CUdeviceptr>> values;
  std::vector<std::vector<void *>> params;
};
} // namespace

std::unique_ptr<Backend>
kiln::rt::createCudaBackend(std::shared_ptr<GpuCode> code, Status &status) {
  const Driver &driver = Driver::get();
  if (!driver.error.empty()) {
    status = Status::error(driver.error);
    return nullptr;
  }
  auto backend = std::make_unique<CudaBackend>(std::move(code), driver);
  status = backend->init();
  if (!status.ok())
    return nullptr;
  return backend;
}
