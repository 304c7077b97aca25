//===- CApi.cpp - Kiln's C runtime API ------------------------------------===//

#include "kiln/Runtime/Runtime.h"
#include "kiln/Runtime/kiln_runtime.h"

#include <new>

struct kiln_status_s {
  std::string message;
};
struct kiln_module_s {
  std::shared_ptr<kiln::rt::Module> module;
};
struct kiln_session_s {
  kiln::rt::Session session;
};

static kiln_status toC(const kiln::rt::Status &s) {
  if (s.ok())
    return nullptr;
  return new (std::nothrow) kiln_status_s{s.message()};
}

static kiln_status cError(const char *message) {
  return new (std::nothrow) kiln_status_s{message};
}

extern "C" {

const char *kiln_status_message(kiln_status status) {
  return status ? status->message.c_str() : "ok";
}

void kiln_status_free(kiln_status status) { delete status; }

kiln_status kiln_module_load(const char *path, kiln_module **out_module) {
  if (!path || !out_module)
    return cError("kiln_module_load: null argument");
  std::shared_ptr<kiln::rt::Module> m;
  if (auto s = kiln::rt::Module::load(path, m); !s.ok())
    return toC(s);
  *out_module = new kiln_module_s{std::move(m)};
  return nullptr;
}

kiln_status kiln_module_load_from_memory(const void *data, size_t size,
                                         kiln_module **out_module) {
  if (!data || !out_module)
    return cError("kiln_module_load_from_memory: null argument");
  std::shared_ptr<kiln::rt::Module> m;
  if (auto s = kiln::rt::Module::loadFromMemory(data, size, m); !s.ok())
    return toC(s);
  *out_module = new kiln_module_s{std::move(m)};
  return nullptr;
}

void kiln_module_release(kiln_module *module) { delete module; }

size_t kiln_module_num_inputs(const kiln_module *module) {
  return module ? module->module->inputs().size() : 0;
}

size_t kiln_module_num_outputs(const kiln_module *module) {
  return module ? module->module->outputs().size() : 0;
}

void kiln_module_batch_range(const kiln_module *module, int64_t *out_min,
                             int64_t *out_max, int64_t *out_opt) {
  const kiln::rt::Module *m = module ? module->module.get() : nullptr;
  if (out_min)
    *out_min = m ? m->minBatch() : 0;
  if (out_max)
    *out_max = m ? m->maxBatch() : 0;
  if (out_opt)
    *out_opt = m ? m->optBatch() : 0;
}

int kiln_module_tensor_batched(const kiln_module *module, int is_output,
                               size_t index) {
  if (!module)
    return 0;
  const auto &infos =
      is_output ? module->module->outputs() : module->module->inputs();
  return index < infos.size() && infos[index].batched;
}

void kiln_module_length_range(const kiln_module *module, int64_t *out_min,
                              int64_t *out_max, int64_t *out_opt) {
  const kiln::rt::Module *m = module ? module->module.get() : nullptr;
  if (out_min)
    *out_min = m ? m->minLength() : 0;
  if (out_max)
    *out_max = m ? m->maxLength() : 0;
  if (out_opt)
    *out_opt = m ? m->optLength() : 0;
}

kiln_status kiln_module_tensor_length_dims(const kiln_module *module,
                                           int is_output, size_t index,
                                           size_t *out_count,
                                           const int64_t **out_dims) {
  if (!module)
    return cError("kiln_module_tensor_length_dims: null module");
  const auto &infos =
      is_output ? module->module->outputs() : module->module->inputs();
  if (index >= infos.size())
    return cError("kiln_module_tensor_length_dims: index out of range");
  if (out_count)
    *out_count = infos[index].lengthDims.size();
  if (out_dims)
    *out_dims = infos[index].lengthDims.data();
  return nullptr;
}

size_t kiln_module_num_composites(const kiln_module *module) {
  return module ? module->module->composites().size() : 0;
}

kiln_status kiln_module_composite_info(const kiln_module *module, size_t index,
                                       const char **out_name,
                                       int *out_is_output, int *out_kind,
                                       size_t *out_first, size_t *out_length,
                                       int *out_absent) {
  if (!module)
    return cError("kiln_module_composite_info: null module");
  const auto &all = module->module->composites();
  if (index >= all.size())
    return cError("kiln_module_composite_info: index out of range");
  const kiln::rt::CompositeInfo &c = all[index];
  if (out_name)
    *out_name = c.name.c_str();
  if (out_is_output)
    *out_is_output = c.output ? 1 : 0;
  if (out_kind)
    *out_kind = static_cast<int>(c.kind);
  if (out_first)
    *out_first = c.first;
  if (out_length)
    *out_length = c.length;
  if (out_absent)
    *out_absent = c.absent ? 1 : 0;
  return nullptr;
}

kiln_status kiln_module_composite_run_time_count(const kiln_module *module,
                                                 size_t index,
                                                 int *out_run_time_count) {
  if (!module || !out_run_time_count)
    return cError("kiln_module_composite_run_time_count: null argument");
  const auto &all = module->module->composites();
  if (index >= all.size())
    return cError("kiln_module_composite_run_time_count: index out of range");
  *out_run_time_count = all[index].runTimeCount ? 1 : 0;
  return nullptr;
}

kiln_status kiln_module_tensor_info(const kiln_module *module, int is_output,
                                    size_t index, const char **out_name,
                                    int32_t *out_dtype, size_t *out_rank,
                                    const int64_t **out_shape,
                                    size_t *out_bytes) {
  if (!module)
    return cError("kiln_module_tensor_info: null module");
  const auto &infos =
      is_output ? module->module->outputs() : module->module->inputs();
  if (index >= infos.size())
    return cError("kiln_module_tensor_info: index out of range");
  const auto &info = infos[index];
  if (out_name)
    *out_name = info.name.c_str();
  if (out_dtype)
    *out_dtype = static_cast<int32_t>(info.dtype);
  if (out_rank)
    *out_rank = info.shape.size();
  if (out_shape)
    *out_shape = info.shape.data();
  if (out_bytes)
    *out_bytes = info.byteSize();
  return nullptr;
}

kiln_status kiln_session_create(kiln_module *module,
                                kiln_session **out_session) {
  if (!module || !out_session)
    return cError("kiln_session_create: null argument");
  *out_session = new kiln_session_s{kiln::rt::Session(module->module)};
  return nullptr;
}

kiln_status kiln_session_create_on(kiln_module *module, const char *device,
                                   kiln_session **out_session) {
  if (!module || !device || !out_session)
    return cError("kiln_session_create_on: null argument");
  kiln::rt::Device d;
  if (!kiln::rt::parseDevice(device, d))
    return cError((std::string("unknown device '") + device +
                   "'; use default, cpu, cuda or emulator")
                      .c_str());
  kiln::rt::Session session(module->module, d);
  if (!session.status().ok())
    return cError(session.status().message().c_str());
  *out_session = new kiln_session_s{std::move(session)};
  return nullptr;
}

void kiln_session_release(kiln_session *session) { delete session; }

/// kiln_session_run on a module compiled for a batch range: the batch is
/// what the byte sizes of its batched inputs say (the range's maximum
/// without them).
static kiln_status runBatched(kiln_session *session, const void *const *inputs,
                              const size_t *input_bytes, void *const *outputs,
                              const size_t *output_bytes) {
  const auto &m = session->session.module();
  int64_t batch = m.maxBatch();
  if (input_bytes)
    for (size_t i = 0; i < m.inputs().size(); ++i)
      if (size_t sample = m.inputs()[i].byteSizeAt(1);
          m.inputs()[i].batched && sample) {
        batch = static_cast<int64_t>(input_bytes[i] / sample);
        break;
      }
  auto bytes = [&](const kiln::rt::TensorInfo &t) {
    return t.byteSizeAt(batch);
  };
  for (size_t i = 0; i < m.inputs().size(); ++i)
    if (!inputs[i] || (input_bytes && input_bytes[i] != bytes(m.inputs()[i])))
      return toC(kiln::rt::Status::error(
          "input '" + m.inputs()[i].name + "' needs " +
          std::to_string(bytes(m.inputs()[i])) + " bytes (batch " +
          std::to_string(batch) + ")"));
  for (size_t i = 0; i < m.outputs().size(); ++i)
    if (!outputs[i] ||
        (output_bytes && output_bytes[i] != bytes(m.outputs()[i])))
      return toC(kiln::rt::Status::error(
          "output '" + m.outputs()[i].name + "' needs " +
          std::to_string(bytes(m.outputs()[i])) + " bytes (batch " +
          std::to_string(batch) + ")"));
  return toC(session->session.runRaw(inputs, outputs, batch));
}

kiln_status kiln_session_run(kiln_session *session, const void *const *inputs,
                             const size_t *input_bytes, void *const *outputs,
                             const size_t *output_bytes) {
  if (!session || (!inputs && session->session.module().inputs().size()) ||
      !outputs)
    return cError("kiln_session_run: null argument");
  const auto &m = session->session.module();
  if (m.maxBatch())
    return runBatched(session, inputs, input_bytes, outputs, output_bytes);
  for (size_t i = 0; i < m.inputs().size(); ++i)
    if (!inputs[i] ||
        (input_bytes && input_bytes[i] != m.inputs()[i].byteSize()))
      return toC(kiln::rt::Status::error(
          "input '" + m.inputs()[i].name + "' needs " +
          std::to_string(m.inputs()[i].byteSize()) + " bytes"));
  for (size_t i = 0; i < m.outputs().size(); ++i)
    if (!outputs[i] ||
        (output_bytes && output_bytes[i] != m.outputs()[i].byteSize()))
      return toC(kiln::rt::Status::error(
          "output '" + m.outputs()[i].name + "' needs " +
          std::to_string(m.outputs()[i].byteSize()) + " bytes"));
  return toC(session->session.runRaw(inputs, outputs));
}

kiln_status kiln_session_run_at(kiln_session *session, int64_t batch,
                                int64_t length, const void *const *inputs,
                                void *const *outputs) {
  if (!session || (!inputs && session->session.module().inputs().size()) ||
      !outputs)
    return cError("kiln_session_run_at: null argument");
  const auto &m = session->session.module();
  for (size_t i = 0; i < m.inputs().size(); ++i)
    if (!inputs[i])
      return cError("kiln_session_run_at: null input");
  for (size_t i = 0; i < m.outputs().size(); ++i)
    if (!outputs[i])
      return cError("kiln_session_run_at: null output");
  if (m.maxLength())
    return toC(session->session.runRaw(inputs, outputs, batch, length));
  if (length)
    return cError("kiln_session_run_at: the module was not compiled for a "
                  "length range; pass length 0");
  if (m.maxBatch())
    return toC(session->session.runRaw(inputs, outputs, batch));
  if (batch)
    return cError("kiln_session_run_at: the module was not compiled for a "
                  "batch range; pass batch 0");
  return toC(session->session.runRaw(inputs, outputs));
}

kiln_status kiln_session_run_device(kiln_session *session,
                                    const uint64_t *inputs,
                                    const uint64_t *outputs, void *stream) {
  if (!session)
    return cError("kiln_session_run_device: null session");
  kiln::rt::Status s = session->session.runOnDevice(inputs, outputs, stream);
  return s.ok() ? nullptr : cError(s.message().c_str());
}

kiln_status kiln_session_output_shape(const kiln_session *session, size_t index,
                                      size_t *out_rank,
                                      const int64_t **out_shape) {
  if (!session)
    return cError("kiln_session_output_shape: null session");
  if (index >= session->session.module().outputs().size())
    return cError("kiln_session_output_shape: index out of range");
  const auto &shape = session->session.outputShape(index);
  if (out_rank)
    *out_rank = shape.size();
  if (out_shape)
    *out_shape = shape.data();
  return nullptr;
}

} // extern "C"
