//===- _kiln.cpp - the Kiln runtime for Python (nanobind) -----------------===//
//
// `kiln._kiln`: modules and sessions of the C++ runtime (kiln/Runtime), with
// numpy arrays passed in and out without copies: a run reads each input
// array's buffer in place and writes each output into an array the caller
// allocated (`Session.run_raw`). The Python layer (kiln/__init__.py) checks
// and converts what users pass; errors come back as KilnRuntimeError.
//
//===----------------------------------------------------------------------===//

#include "kiln/Runtime/Runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <dlfcn.h>

#include <stdexcept>

namespace nb = nanobind;
using namespace kiln::rt;

namespace {

/// A runtime error status, raised as kiln.KilnRuntimeError.
struct KilnError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(const Status &s) {
  if (!s.ok())
    throw KilnError(s.message());
}

Device device(const std::string &name) {
  Device d;
  if (!parseDevice(name, d))
    throw KilnError("unknown device '" + name +
                    "'; use cpu, cuda, emulator or default");
  return d;
}

nb::list infos(const std::vector<TensorInfo> &v) {
  nb::list out;
  for (const TensorInfo &t : v)
    out.append(nb::make_tuple(t.name, static_cast<int>(t.dtype), t.shape,
                              t.maxExtent, t.batched, t.lengthDims));
  return out;
}

/// The threads the module's parallel loops use from this thread on (the
/// OpenMP runtime the module's code loaded; 0 leaves it alone).
void setThreads(int threads) {
  if (threads <= 0)
    return;
  for (const char *lib : {"libomp.so.5", "libomp.so", "libgomp.so.1"}) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h)
      continue;
    auto set = reinterpret_cast<void (*)(int)>(dlsym(h, "omp_set_num_threads"));
    if (set)
      set(threads);
    dlclose(h);
    return;
  }
}

using Array = nb::ndarray<nb::device::cpu, nb::c_contig>;

} // namespace

NB_MODULE(_kiln, m) {
  nb::exception<KilnError>(m, "KilnRuntimeError");

  nb::class_<Module>(m, "Module")
      .def_static(
          "load",
          [](const std::string &path) {
            std::shared_ptr<Module> out;
            check(Module::load(path, out));
            return out;
          },
          nb::arg("path"))
      .def_static(
          "from_bytes",
          [](nb::bytes data) {
            std::shared_ptr<Module> out;
            check(Module::loadFromMemory(data.c_str(), data.size(), out));
            return out;
          },
          nb::arg("data"))
      .def_prop_ro("inputs", [](const Module &m) { return infos(m.inputs()); })
      .def_prop_ro("outputs",
                   [](const Module &m) { return infos(m.outputs()); })
      .def_prop_ro("composites",
                   [](const Module &m) {
                     // (name, output, dtype, first, length, kind, absent,
                     // run_time_count); kind 0 sequence, 1 optional
                     // tensor, 2 optional sequence.
                     nb::list out;
                     for (const CompositeInfo &c : m.composites())
                       out.append(nb::make_tuple(
                           c.name, c.output, static_cast<int>(c.dtype), c.first,
                           c.length, static_cast<int>(c.kind), c.absent,
                           c.runTimeCount));
                     return out;
                   })
      .def_prop_ro("graph_name", &Module::graphName)
      .def_prop_ro("target", &Module::target)
      .def_prop_ro("arena_bytes", &Module::arenaBytes)
      .def_prop_ro("min_batch", &Module::minBatch)
      .def_prop_ro("max_batch", &Module::maxBatch)
      .def_prop_ro("opt_batch", &Module::optBatch)
      .def_prop_ro("min_length", &Module::minLength)
      .def_prop_ro("max_length", &Module::maxLength)
      .def_prop_ro("opt_length", &Module::optLength)
      .def("has_code_for", [](const Module &m, const std::string &d) {
        return m.hasCodeFor(device(d));
      });

  nb::class_<Session>(m, "Session")
      .def(
          "__init__",
          [](Session *self, std::shared_ptr<Module> module,
             const std::string &dev) {
            new (self) Session(module, device(dev));
            check(self->status());
          },
          nb::arg("module"), nb::arg("device") = "default")
      .def_prop_ro("device",
                   [](const Session &s) { return deviceName(s.device()); })
      // Runs on the arrays' own buffers: `inputs` and `outputs` in the
      // module's order, each C-contiguous with its tensor's byte size
      // (checked by the caller, kiln/__init__.py), at `batch` for a
      // batch-range module (0: the range's maximum) and `length` for a
      // length-range one (0: its maximum). The GIL is released while the
      // module runs.
      .def(
          "run_raw",
          [](Session &s, std::vector<Array> inputs, std::vector<Array> outputs,
             int threads, int64_t batch, int64_t length) {
            const Module &m = s.module();
            if (inputs.size() != m.inputs().size() ||
                outputs.size() != m.outputs().size())
              throw KilnError("run_raw: wrong number of buffers");
            if (batch && !m.maxBatch())
              throw KilnError("run_raw: the module has no batch range");
            if (length && !m.maxLength())
              throw KilnError("run_raw: the module has no length range");
            auto bytes = [&](const TensorInfo &t) {
              if (!batch && !length)
                return t.byteSize();
              size_t n = dtypeSize(t.dtype);
              for (int64_t d : t.shapeAt(batch, length))
                n *= static_cast<size_t>(d);
              return n;
            };
            std::vector<const void *> in;
            std::vector<void *> out;
            for (size_t i = 0; i < inputs.size(); ++i) {
              if (inputs[i].nbytes() != bytes(m.inputs()[i]))
                throw KilnError("run_raw: input '" + m.inputs()[i].name +
                                "' has the wrong byte size");
              in.push_back(inputs[i].data());
            }
            for (size_t i = 0; i < outputs.size(); ++i) {
              if (outputs[i].nbytes() != bytes(m.outputs()[i]))
                throw KilnError("run_raw: output '" + m.outputs()[i].name +
                                "' has the wrong byte size");
              out.push_back(outputs[i].data());
            }
            Status st;
            {
              nb::gil_scoped_release release;
              setThreads(threads);
              st = length  ? s.runRaw(in.data(), out.data(), batch, length)
                   : batch ? s.runRaw(in.data(), out.data(), batch)
                           : s.runRaw(in.data(), out.data());
            }
            check(st);
          },
          nb::arg("inputs"), nb::arg("outputs"), nb::arg("threads") = 0,
          nb::arg("batch") = 0, nb::arg("length") = 0)
      .def("output_shape",
           [](const Session &s, size_t i) { return s.outputShape(i); })
      .def("set_profiling", &Session::setProfiling)
      // The last profiled run: (name, start ms, ms, flops, bytes) per
      // kernel launch (GPU devices) or marked computation (CPU).
      .def("last_profile", [](const Session &s) {
        nb::list rows;
        for (const LaunchProfile &p : s.lastProfile())
          rows.append(
              nb::make_tuple(p.kernel, p.startMs, p.ms, p.flops, p.bytes));
        return rows;
      });
}
