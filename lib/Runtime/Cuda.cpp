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

#include <algorithm>
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
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrMaxSharedPerBlockOptin = 97;
constexpr int kFuncAttrMaxDynamicShared = 8;
/// Dynamic shared memory a launch gets without opting in.
constexpr unsigned kDefaultDynamicShared = 48 * 1024;
constexpr int kStreamNonBlocking = 1;
constexpr int kCaptureModeThreadLocal = 1;

/// The driver entry points Kiln uses, resolved once.
struct Driver {
  std::string error;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
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
    sym(cuDeviceGetName, "cuDeviceGetName");
    sym(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    sym(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
    sym(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
    sym(cuModuleLoadData, "cuModuleLoadData");
    sym(cuModuleUnload, "cuModuleUnload");
    sym(cuModuleGetFunction, "cuModuleGetFunction");
    sym(cuFuncSetAttribute, "cuFuncSetAttribute");
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

/// The device KILN_CUDA_DEVICE names (default 0), its chip ("sm_90") and
/// its primary context, retained (release it with
/// cuDevicePrimaryCtxRelease).
Status openDevice(const Driver &cu, CUdevice &device, std::string &chip,
                  CUcontext &context) {
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
  if (CUresult r = cu.cuDeviceGet(&device, ordinal))
    return Status::error("cuDeviceGet failed: " + cu.describe(r));
  int major = 0, minor = 0;
  cu.cuDeviceGetAttribute(&major, kAttrComputeCapabilityMajor, device);
  cu.cuDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, device);
  chip = "sm_" + std::to_string(major) + std::to_string(minor);
  if (CUresult r = cu.cuDevicePrimaryCtxRetain(&context, device)) {
    context = nullptr;
    return Status::error("cuDevicePrimaryCtxRetain failed: " + cu.describe(r));
  }
  return Status::success();
}

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
    std::string deviceChip;
    if (Status s = openDevice(cu, device, deviceChip, context); !s.ok())
      return s;
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
    // Kernels launched with more than 48 KiB of dynamic shared memory
    // (Hopper's deep wgmma pipelines) opt in to it, up to the device's
    // limit.
    std::vector<unsigned> dynamicShared(functions.size(), 0);
    for (const GpuLaunch &l : code->launches)
      dynamicShared[l.kernel] =
          std::max(dynamicShared[l.kernel], l.sharedBytes);
    int limit = 0;
    cu.cuDeviceGetAttribute(&limit, kAttrMaxSharedPerBlockOptin, device);
    for (size_t k = 0; k < functions.size(); ++k) {
      if (dynamicShared[k] <= kDefaultDynamicShared)
        continue;
      if (dynamicShared[k] > static_cast<unsigned>(limit))
        return Status::error("kernel '" + code->kernels[k].name + "' needs " +
                             std::to_string(dynamicShared[k]) +
                             " bytes of shared memory; this " + deviceChip +
                             " device gives " + "a block at most " +
                             std::to_string(limit));
      if (Status s = check(
              cu.cuFuncSetAttribute(functions[k], kFuncAttrMaxDynamicShared,
                                    static_cast<int>(dynamicShared[k])),
              "cuFuncSetAttribute");
          !s.ok())
        return s;
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
        profile->push_back(launchProfile(*code, launch, start, ms));
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

// The ceilings of the profiler's roofline on a CUDA device: f32 FMAs from
// registers and a triad over arrays far larger than the L2 cache. PTX the
// driver compiles for the device (ISA 7.0 and sm_80: every chip Kiln
// targets runs it).
const std::string &kiln::rt::cudaCalibrationPtx() {
  static const std::string ptx = [] {
    // The chain kernels' parameters (out, iters) and the thread's global
    // index %id.
    const std::string chainPrologue = R"(  .reg .u32 %i, %n, %id, %t;
  .reg .u64 %p, %off;
  ld.param.u64 %p, [out];
  ld.param.u32 %n, [iters];
  mov.u32 %id, %ctaid.x;
  mov.u32 %t, %ntid.x;
  mul.lo.u32 %id, %id, %t;
  mov.u32 %t, %tid.x;
  add.u32 %id, %id, %t;
)";
    std::string fmaRounds, mmaRounds, mmaInit, mmaSum;
    for (int round = 0; round < 4; ++round)
      for (int chain = 0; chain < 8; ++chain)
        fmaRounds += "  fma.rn.f32 %a" + std::to_string(chain) + ", %a" +
                     std::to_string(chain) + ", %x, %y;\n";
    // mma chain c accumulates in %c<4c> to %c<4c+3>.
    auto acc = [](int chain) {
      std::string regs;
      for (int r = 0; r < 4; ++r)
        regs += (r ? ", %c" : "%c") + std::to_string(4 * chain + r);
      return "{" + regs + "}";
    };
    for (int round = 0; round < 4; ++round)
      for (int chain = 0; chain < 8; ++chain)
        mmaRounds += "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 " +
                     acc(chain) + ", {%h0, %h1, %h2, %h3}, {%h4, %h5}, " +
                     acc(chain) + ";\n";
    for (int r = 1; r < 32; ++r) {
      mmaInit += "  mov.f32 %c" + std::to_string(r) + ", 0f00000000;\n";
      mmaSum += "  add.f32 %c0, %c0, %c" + std::to_string(r) + ";\n";
    }
    return R"(.version 7.0
.target sm_80
.address_size 64

// Eight independent chains of acc = acc * x + y, four rounds per trip:
// 64 FLOPs per thread per trip.
.visible .entry kiln_peak_fma(.param .u64 out, .param .u32 iters)
{
  .reg .pred %q;
  .reg .f32 %a<8>;
  .reg .f32 %x, %y;
)" + chainPrologue +
           R"(  cvt.rn.f32.u32 %a0, %id;
  add.f32 %a1, %a0, 0f3F800000;
  add.f32 %a2, %a0, 0f40000000;
  add.f32 %a3, %a0, 0f40400000;
  add.f32 %a4, %a0, 0f40800000;
  add.f32 %a5, %a0, 0f40A00000;
  add.f32 %a6, %a0, 0f40C00000;
  add.f32 %a7, %a0, 0f40E00000;
  mov.f32 %x, 0f3F7FFFEF;
  mov.f32 %y, 0f358637BD;
  mov.u32 %i, 0;
LOOP:
)" + fmaRounds +
           R"(  add.u32 %i, %i, 1;
  setp.lt.u32 %q, %i, %n;
  @%q bra LOOP;
  add.f32 %a0, %a0, %a1;
  add.f32 %a2, %a2, %a3;
  add.f32 %a4, %a4, %a5;
  add.f32 %a6, %a6, %a7;
  add.f32 %a0, %a0, %a2;
  add.f32 %a4, %a4, %a6;
  add.f32 %a0, %a0, %a4;
  mul.wide.u32 %off, %id, 4;
  add.u64 %p, %p, %off;
  st.global.f32 [%p], %a0;
  ret;
}

// Eight independent chains of D = A * B + D on the tensor cores (mma.sync
// m16n8k16, f16 inputs, f32 accumulators), four rounds per trip: 32 mma
// of 4096 FLOPs per warp, 4096 FLOPs per thread, per trip.
.visible .entry kiln_peak_mma(.param .u64 out, .param .u32 iters)
{
  .reg .pred %q;
  .reg .b32 %h<6>;
  .reg .f32 %c<32>;
)" + chainPrologue +
           R"(  // Every f16 operand 2^-4: each trip adds 0.5 to an accumulator.
  mov.b32 %h0, 0x2C002C00;
  mov.b32 %h1, 0x2C002C00;
  mov.b32 %h2, 0x2C002C00;
  mov.b32 %h3, 0x2C002C00;
  mov.b32 %h4, 0x2C002C00;
  mov.b32 %h5, 0x2C002C00;
  cvt.rn.f32.u32 %c0, %id;
)" + mmaInit +
           R"(  mov.u32 %i, 0;
MMA:
)" + mmaRounds +
           R"(  add.u32 %i, %i, 1;
  setp.lt.u32 %q, %i, %n;
  @%q bra MMA;
)" + mmaSum +
           R"(  mul.wide.u32 %off, %id, 4;
  add.u64 %p, %p, %off;
  st.global.f32 [%p], %c0;
  ret;
}

// a[i] = b[i] + 0.5 * c[i] over n4 float4s, grid-stride: 48 bytes moved per
// float4.
.visible .entry kiln_peak_triad(.param .u64 a, .param .u64 b, .param .u64 c,
                                .param .u64 n4)
{
  .reg .pred %q;
  .reg .f32 %b<4>, %c<4>;
  .reg .u32 %t0, %t1;
  .reg .u64 %i, %n, %stride, %pa, %pb, %pc, %off, %qa, %qb, %qc;
  ld.param.u64 %pa, [a];
  ld.param.u64 %pb, [b];
  ld.param.u64 %pc, [c];
  ld.param.u64 %n, [n4];
  mov.u32 %t0, %ctaid.x;
  mov.u32 %t1, %ntid.x;
  mul.wide.u32 %i, %t0, %t1;
  mov.u32 %t0, %tid.x;
  cvt.u64.u32 %off, %t0;
  add.u64 %i, %i, %off;
  mov.u32 %t0, %nctaid.x;
  mul.wide.u32 %stride, %t0, %t1;
TRIAD:
  setp.ge.u64 %q, %i, %n;
  @%q bra DONE;
  shl.b64 %off, %i, 4;
  add.u64 %qb, %pb, %off;
  add.u64 %qc, %pc, %off;
  add.u64 %qa, %pa, %off;
  ld.global.v4.f32 {%b0, %b1, %b2, %b3}, [%qb];
  ld.global.v4.f32 {%c0, %c1, %c2, %c3}, [%qc];
  fma.rn.f32 %b0, %c0, 0f3F000000, %b0;
  fma.rn.f32 %b1, %c1, 0f3F000000, %b1;
  fma.rn.f32 %b2, %c2, 0f3F000000, %b2;
  fma.rn.f32 %b3, %c3, 0f3F000000, %b3;
  st.global.v4.f32 [%qa], {%b0, %b1, %b2, %b3};
  add.u64 %i, %i, %stride;
  bra TRIAD;
DONE:
  ret;
}
)";
  }();
  return ptx;
}

Status kiln::rt::measureCudaPeaks(DevicePeaks &out) {
  const Driver &cu = Driver::get();
  if (!cu.error.empty())
    return Status::error(cu.error);
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string chip;
  if (Status s = openDevice(cu, device, chip, context); !s.ok())
    return s;
  cu.cuCtxPushCurrent(context);
  CUmodule module = nullptr;
  CUstream stream = nullptr;
  CUevent begin = nullptr, end = nullptr;
  std::vector<CUdeviceptr> buffers;
  auto release = [&] {
    for (CUdeviceptr p : buffers)
      cu.cuMemFree(p);
    if (begin)
      cu.cuEventDestroy(begin);
    if (end)
      cu.cuEventDestroy(end);
    if (stream)
      cu.cuStreamDestroy(stream);
    if (module)
      cu.cuModuleUnload(module);
    CUcontext popped;
    cu.cuCtxPopCurrent(&popped);
    cu.cuDevicePrimaryCtxRelease(device);
  };
  auto fail = [&](CUresult r, const char *what) {
    release();
    return Status::error(std::string("calibrating the GPU: ") + what +
                         " failed: " + cu.describe(r));
  };
  CUfunction fma = nullptr, triad = nullptr;
  if (CUresult r = cu.cuModuleLoadData(&module, cudaCalibrationPtx().c_str()))
    return fail(r, "loading the calibration kernels");
  if (CUresult r = cu.cuModuleGetFunction(&fma, module, "kiln_peak_fma"))
    return fail(r, "cuModuleGetFunction");
  if (CUresult r = cu.cuModuleGetFunction(&triad, module, "kiln_peak_triad"))
    return fail(r, "cuModuleGetFunction");
  if (CUresult r = cu.cuStreamCreate(&stream, kStreamNonBlocking))
    return fail(r, "cuStreamCreate");
  if (CUresult r = cu.cuEventCreate(&begin, 0))
    return fail(r, "cuEventCreate");
  if (CUresult r = cu.cuEventCreate(&end, 0))
    return fail(r, "cuEventCreate");
  int sms = 1;
  cu.cuDeviceGetAttribute(&sms, kAttrMultiprocessorCount, device);

  // Times `launch` (which enqueues on `stream`) in ms: the best of three.
  auto timed = [&](auto launch, float &best) -> CUresult {
    best = 0;
    for (int rep = 0; rep < 4; ++rep) { // the first is a warm-up
      cu.cuEventRecord(begin, stream);
      if (CUresult r = launch())
        return r;
      cu.cuEventRecord(end, stream);
      if (CUresult r = cu.cuEventSynchronize(end))
        return r;
      float ms = 0;
      cu.cuEventElapsedTime(&ms, begin, end);
      if (rep > 0 && (best == 0 || ms < best))
        best = ms;
    }
    return 0;
  };

  // Compute: 16 blocks of 256 threads per SM, 8 chains each.
  unsigned block = 256, grid = static_cast<unsigned>(sms) * 16;
  unsigned iters = 4096;
  CUdeviceptr sink = 0;
  if (CUresult r = cu.cuMemAlloc(&sink, size_t(grid) * block * 4))
    return fail(r, "cuMemAlloc");
  buffers.push_back(sink);
  void *fmaParams[] = {&sink, &iters};
  float fmaMs = 0;
  if (CUresult r = timed(
          [&] {
            return cu.cuLaunchKernel(fma, grid, 1, 1, block, 1, 1, 0, stream,
                                     fmaParams, nullptr);
          },
          fmaMs))
    return fail(r, "the FMA micro-benchmark");
  double flops = 64.0 * iters * grid * block;

  // Tensor cores, the same grid: 4096 FLOPs per thread per trip. A chip
  // or driver that cannot run it leaves the ceiling unmeasured (tensor
  // kernels are then compared with f32's) rather than failing the rest.
  CUfunction mma = nullptr;
  float mmaMs = 0;
  unsigned mmaIters = 1024;
  void *mmaParams[] = {&sink, &mmaIters};
  if (cu.cuModuleGetFunction(&mma, module, "kiln_peak_mma") != 0 ||
      timed(
          [&] {
            return cu.cuLaunchKernel(mma, grid, 1, 1, block, 1, 1, 0, stream,
                                     mmaParams, nullptr);
          },
          mmaMs) != 0)
    mmaMs = 0;
  double mmaFlops = 4096.0 * mmaIters * grid * block;

  // Memory: 3 x 256 MiB.
  unsigned long long n4 = (size_t(256) << 20) / 16;
  CUdeviceptr a = 0, b = 0, c = 0;
  for (CUdeviceptr *p : {&a, &b, &c}) {
    if (CUresult r = cu.cuMemAlloc(p, n4 * 16))
      return fail(r, "cuMemAlloc");
    buffers.push_back(*p);
  }
  void *triadParams[] = {&a, &b, &c, &n4};
  float triadMs = 0;
  unsigned triadGrid = static_cast<unsigned>(sms) * 8;
  if (CUresult r = timed(
          [&] {
            return cu.cuLaunchKernel(triad, triadGrid, 1, 1, 256, 1, 1, 0,
                                     stream, triadParams, nullptr);
          },
          triadMs))
    return fail(r, "the triad micro-benchmark");
  char name[256] = {0};
  cu.cuDeviceGetName(name, sizeof(name) - 1, device);
  release();
  if (fmaMs <= 0 || triadMs <= 0)
    return Status::error("calibrating the GPU: a micro-benchmark took no "
                         "measurable time");
  out.gflops = flops / (fmaMs * 1e-3) / 1e9;
  out.gbps = 48.0 * static_cast<double>(n4) / (triadMs * 1e-3) / 1e9;
  out.tensorGflops = mmaMs > 0 ? mmaFlops / (mmaMs * 1e-3) / 1e9 : 0;
  out.how = std::string(name) + " (" + chip + ", " + std::to_string(sms) +
            " SMs): f32 FMA chains, " +
            (mmaMs > 0 ? "f16 mma.sync chains" : "no tensor-core ceiling") +
            " and a triad over 3 x 256 MiB";
  return Status::success();
}
