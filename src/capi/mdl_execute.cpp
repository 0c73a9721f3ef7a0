// Model execution and gear selection (spec §3.5, §3.6).
//
// Before anything runs or is queued: the model id is loaded, the context or
// stream is on the model's device (mdl_registry.h), the datasets are live and
// hold one buffer per model input (the gear input included) and output, and
// each buffer is memory the registry accepts (check_io_memory). The model then
// checks every buffer's size against the tensor it carries; for
// aclmdlExecuteAsync the fixed-size tensors are checked here before queueing,
// so only gear and free-dim sizes can fail at the stream's synchronisation.
//
// Tensor descs (aclmdlSetDatasetTensorDesc): an input's desc gives its real
// shape (checked here against the model's dims and the buffer's size, before
// anything runs or is queued); after a successful execution every output gets
// a desc in the output dataset with the shape written (dataset_report_outputs;
// for aclmdlExecuteAsync when the task runs, skipped if the output dataset was
// destroyed meanwhile).
//
// aclmdlExecuteAsync reads the datasets at queue time; the queued task holds
// the model's table entry and runs the model when the stream reaches it. If
// the model was unloaded in between, the task fails with
// ACL_ERROR_INVALID_MODEL_ID at the stream's synchronisation (see
// mdl_registry.h).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "capi/capi.h"
#include "capi/mdl_observe.h"
#include "capi/mdl_registry.h"
#include "capi/tensor_desc.h"
#include "graph/dtype.h"

using namespace openacl;
using capi::guarded;
using capi::runtime;

namespace {

std::string gear_list(const model::GearSpec& spec) {
  std::string s;
  for (const auto& g : spec.gears) {
    if (!s.empty()) s += ", ";
    if (spec.kind == model::GearKind::kBatch && g.size() == 1) {
      s += std::to_string(g[0]);
    } else if (spec.kind == model::GearKind::kImageSize && g.size() == 2) {
      s += std::to_string(g[0]) + "x" + std::to_string(g[1]);
    } else {
      s += "(";
      for (size_t i = 0; i < g.size(); ++i) s += (i ? "," : "") + std::to_string(g[i]);
      s += ")";
    }
  }
  return s;
}

const char* kind_name(model::GearKind k) {
  switch (k) {
    case model::GearKind::kBatch:
      return "batch-size";
    case model::GearKind::kImageSize:
      return "image-size";
    case model::GearKind::kDims:
      return "dims";
    case model::GearKind::kNone:
      break;
  }
  return "no";
}

const char* setter_for(model::GearKind k) {
  switch (k) {
    case model::GearKind::kBatch:
      return "aclmdlSetDynamicBatchSize";
    case model::GearKind::kImageSize:
      return "aclmdlSetDynamicHWSize";
    case model::GearKind::kDims:
      return "aclmdlSetInputDynamicDims";
    case model::GearKind::kNone:
      break;
  }
  return "none";
}

Status loaded_model(const capi::ModelEntry& entry, std::shared_ptr<model::LoadedModel>* out) {
  *out = entry.model();
  if (!*out) return Errorf(code::kInvalidModelId, "model %u is being unloaded", entry.id());
  return Status::Ok();
}

std::string type_str(const model::IoInfo& io) {
  std::string s = std::string(graph::dtype_name(io.dtype)) + "[";
  for (size_t i = 0; i < io.dims.size(); ++i) s += (i ? "," : "") + std::to_string(io.dims[i]);
  return s + "]";
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// The shapes the input descs give, checked against the model and the buffers:
// every dim known, the rank and the fixed dims the model's, and the buffer
// large enough. (*dims)[i] empty (or *dims empty): no desc, the model's shape
// applies.
Status input_desc_dims(const capi::ModelEntry& entry, const model::ModelInfo& info,
                       const std::vector<std::optional<std::vector<int64_t>>>& descs,
                       const std::vector<model::IoBuffer>& ins, std::vector<std::vector<int64_t>>* dims) {
  dims->clear();  // stays empty without descs: the model's shapes apply
  for (size_t i = 0; i < descs.size() && i < info.inputs.size(); ++i) {
    if (!descs[i]) continue;
    if (dims->empty()) dims->resize(info.inputs.size());
    const model::IoInfo& io = info.inputs[i];
    const std::vector<int64_t>& given = *descs[i];
    const std::string where = strformat("model %u: input %zu ('%s')", entry.id(), i, io.name.c_str());
    for (int64_t d : given)
      if (d < 0)
        return Errorf(code::kModelInputNotMatch,
                      "%s: its tensor desc has dims %s; give the real shape (every dim >= 0) with aclCreateTensorDesc "
                      "or aclSetTensorOriginShape, then aclmdlSetDatasetTensorDesc",
                      where.c_str(), dims_text(given).c_str());
    // No dims: a scalar or an input of unknown rank, which ModelInfo does not
    // tell apart; the model checks the rank (and refuses [6] for a scalar).
    const bool unknown_rank = io.dims.empty();
    bool ok = unknown_rank || given.size() == io.dims.size();
    for (size_t a = 0; ok && !unknown_rank && a < given.size(); ++a) ok = io.dims[a] < 0 || io.dims[a] == given[a];
    if (!ok)
      return Errorf(code::kModelInputNotMatch,
                    "%s: its tensor desc says %s but the model takes %s (-1: free); fix the desc's dims", where.c_str(),
                    dims_text(given).c_str(), type_str(io).c_str());
    size_t need = graph::dtype_bytes(io.dtype);
    for (int64_t d : given) {
      if (d != 0 && need > SIZE_MAX / static_cast<size_t>(d))
        return Errorf(code::kModelInputNotMatch, "%s: the tensor desc's shape %s is too large", where.c_str(),
                      dims_text(given).c_str());
      need *= static_cast<size_t>(d);
    }
    if (ins[i].size < need)
      return Errorf(code::kModelInputNotMatch,
                    "%s: its tensor desc says %s%s (%zu bytes) but the buffer holds %zu bytes; pass a larger buffer "
                    "or fix the desc",
                    where.c_str(), graph::dtype_name(io.dtype), dims_text(given).c_str(), need, ins[i].size);
    (*dims)[i] = given;
  }
  return Status::Ok();
}

// True when some output's shape is only known once the model ran (free or
// gear dims, or no dims: unknown rank looks like a scalar in ModelInfo);
// otherwise ModelInfo's dims are the shapes written.
bool outputs_vary(const model::ModelInfo& info) {
  for (const model::IoInfo& io : info.outputs) {
    if (io.dims.empty()) return true;
    for (int64_t d : io.dims)
      if (d < 0) return true;
  }
  return false;
}

// Writes what an execution produced into the output dataset's descs. `dims`:
// the shapes written, or nullptr when they are ModelInfo's. The report vector
// is kept per thread, so a steady stream of executions reuses its memory.
void report_outputs(const aclmdlDataset* output, uint64_t serial, const model::ModelInfo& info,
                    const std::vector<model::IoBuffer>& outs, const std::vector<std::vector<int64_t>>* dims) {
  thread_local std::vector<capi::OutputReport> reports;
  const size_t n = std::min(dims ? dims->size() : info.outputs.size(), info.outputs.size());
  reports.resize(n);
  for (size_t o = 0; o < n; ++o) {
    capi::OutputReport& r = reports[o];
    r.dtype = static_cast<aclDataType>(graph::dtype_to_acl(info.outputs[o].dtype));
    r.dims = dims ? (*dims)[o] : info.outputs[o].dims;
    r.format = static_cast<aclFormat>(info.outputs[o].format);
    r.address = o < outs.size() ? outs[o].data : nullptr;
  }
  capi::dataset_report_outputs(output, serial, reports);
}

// Reads both datasets and checks them against the model (counts, memory,
// input descs). *input_dims: per input the desc's shape, empty without one;
// *output_serial: identifies the output dataset for dataset_report_outputs.
Status prepare(const capi::ModelEntry& entry, const aclmdlDataset* input, const aclmdlDataset* output,
               const char* api, std::vector<model::IoBuffer>* ins, std::vector<model::IoBuffer>* outs,
               std::vector<std::vector<int64_t>>* input_dims, uint64_t* output_serial) {
  std::shared_ptr<model::LoadedModel> m;
  OPENACL_RETURN_IF_ERROR(loaded_model(entry, &m));
  const model::ModelInfo& info = m->info();
  OPENACL_RETURN_IF_ERROR(capi::dataset_buffers(input, "input", ins));
  OPENACL_RETURN_IF_ERROR(capi::dataset_buffers(output, "output", outs));
  if (ins->size() != info.inputs.size()) {
    std::string extra = info.gear_input >= 0
                            ? strformat(" incl. ascend_mbatch_shape_data (index %d; fill it with %s)", info.gear_input,
                                        setter_for(info.gears.kind))
                            : std::string();
    return Errorf(code::kModelInputNotMatch,
                  "model %u expects %zu input buffers%s, the input dataset holds %zu; add one data buffer per input "
                  "in aclmdlGetInputNameByIndex order",
                  entry.id(), info.inputs.size(), extra.c_str(), ins->size());
  }
  if (outs->size() != info.outputs.size())
    return Errorf(code::kModelOutputNotMatch,
                  "model %u expects %zu output buffers, the output dataset holds %zu; add one data buffer per output",
                  entry.id(), info.outputs.size(), outs->size());
  for (size_t i = 0; i < ins->size(); ++i)
    OPENACL_RETURN_IF_ERROR(
        capi::check_io_memory((*ins)[i], {"input", i, info.inputs[i].name.c_str(), entry.id()}, api));
  for (size_t i = 0; i < outs->size(); ++i)
    OPENACL_RETURN_IF_ERROR(
        capi::check_io_memory((*outs)[i], {"output", i, info.outputs[i].name.c_str(), entry.id()}, api));
  std::vector<std::optional<std::vector<int64_t>>> in_descs;
  uint64_t input_serial = 0;
  OPENACL_RETURN_IF_ERROR(capi::dataset_desc_dims(input, "input", &in_descs, &input_serial));
  OPENACL_RETURN_IF_ERROR(capi::dataset_desc_dims(output, "output", nullptr, output_serial));
  return input_desc_dims(entry, info, in_descs, *ins, input_dims);
}

// The size checks that need no execution, for aclmdlExecuteAsync: a buffer
// too small for a tensor of fixed size is refused when queued rather than at
// the stream's synchronisation. (Gear and free-dim tensors are checked by the
// model when it runs, against the gear or shape then in force.)
Status check_fixed_sizes(const capi::ModelEntry& entry, const model::ModelInfo& info,
                         const std::vector<model::IoBuffer>& ins, const std::vector<model::IoBuffer>& outs) {
  auto fixed = [](const model::IoInfo& io) {
    if (io.bytes == 0) return false;
    for (int64_t d : io.dims)
      if (d < 0) return false;
    return true;
  };
  for (size_t i = 0; i < ins.size(); ++i) {
    const model::IoInfo& io = info.inputs[i];
    if (fixed(io) && ins[i].size < io.bytes)
      return Errorf(code::kModelInputNotMatch, "model %u: input %zu ('%s'): the model expects %zu bytes (%s), the "
                                               "buffer holds %zu bytes",
                    entry.id(), i, io.name.c_str(), io.bytes, type_str(io).c_str(), ins[i].size);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    const model::IoInfo& io = info.outputs[i];
    if (fixed(io) && info.gears.empty() && outs[i].size < io.bytes)
      return Errorf(code::kModelOutputNotMatch, "model %u: output %zu ('%s'): the model writes %zu bytes (%s), the "
                                                "buffer holds %zu bytes; allocate aclmdlGetOutputSizeByIndex bytes",
                    entry.id(), i, io.name.c_str(), io.bytes, type_str(io).c_str(), outs[i].size);
  }
  return Status::Ok();
}

Status with_model_id(uint32_t id, Status st) {
  if (st.ok() || st.message().find("model " + std::to_string(id)) != std::string::npos) return st;
  return Status(st.code(), strformat("model %u: %s", id, st.message().c_str()));
}

// Selects a gear: writes `values` into the ascend_mbatch_shape_data buffer at
// `index` of `dataset`.
Status set_gear(const char* api, uint32_t modelId, aclmdlDataset* dataset, size_t index, model::GearKind kind,
                std::vector<int64_t> values, const std::string& shown) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(dataset, "dataset"));
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  std::shared_ptr<capi::ModelEntry> entry;
  OPENACL_RETURN_IF_ERROR(capi::find_model(modelId, &entry));
  std::shared_ptr<model::LoadedModel> m;
  OPENACL_RETURN_IF_ERROR(loaded_model(*entry, &m));
  const model::ModelInfo& info = m->info();
  if (info.gears.empty())
    return Errorf(code::kModelNotDynamic,
                  "model %u has no gears (it was built without --dynamic_batch_size, --dynamic_image_size or "
                  "--dynamic_dims); execute it without %s",
                  modelId, api);
  if (info.gears.kind != kind)
    return Errorf(code::kInvalidParam, "model %u has %s gears (%s); call %s instead", modelId,
                  kind_name(info.gears.kind), gear_list(info.gears).c_str(), setter_for(info.gears.kind));
  if (info.gear_input < 0 || index != static_cast<size_t>(info.gear_input))
    return Errorf(code::kInvalidParam,
                  "index %zu is not the ascend_mbatch_shape_data input of model %u; pass %d "
                  "(aclmdlGetInputIndexByName(desc, \"ascend_mbatch_shape_data\"))",
                  index, modelId, info.gear_input);
  model::IoBuffer buffer;
  OPENACL_RETURN_IF_ERROR(capi::dataset_buffer_at(dataset, index, &buffer));
  OPENACL_RETURN_IF_ERROR(
      capi::check_io_memory(buffer, {"input", index, model::kGearInputName, modelId}, api));
  if (info.gears.find(values) < 0)
    return Errorf(code::kGeDynamicBatchSizeInvalid, "%s is not one of the gears of model %u: %s", shown.c_str(),
                  modelId, gear_list(info.gears).c_str());
  return with_model_id(modelId, m->select_gear(kind, values, buffer));
}

// aclmdlSetInputDynamicDims takes either the values of the gear's dynamic
// dims (what aclmdlGetInputDynamicDims reports), or the full shapes of the
// inputs that have dynamic dims, concatenated in input order (CANN's samples
// pass these); the latter are reduced to the former.
Status dims_gear_values(const model::ModelInfo& info, uint32_t modelId, const aclmdlIODims& dims,
                        std::vector<int64_t>* values) {
  const auto& positions = info.gears.positions;
  std::vector<int64_t> given(dims.dims, dims.dims + dims.dimCount);
  if (given.size() == positions.size()) {
    *values = std::move(given);
    return Status::Ok();
  }
  // Full-shape form: offsets of each dynamic input in the concatenation.
  std::vector<std::pair<std::string, size_t>> offset;  // input name -> first dim's offset
  size_t total = 0;
  for (const model::IoInfo& io : info.inputs) {
    bool dynamic = false;
    for (const auto& p : positions) dynamic = dynamic || p.input == io.name;
    if (!dynamic) continue;
    offset.emplace_back(io.name, total);
    for (size_t k = 0; k < io.dims.size(); ++k) {
      if (total + k < given.size() && io.dims[k] >= 0 && given[total + k] != io.dims[k])
        return Errorf(code::kInvalidParam, "dims[%zu] = %lld but dim %zu of input '%s' is fixed at %lld", total + k,
                      static_cast<long long>(given[total + k]), k, io.name.c_str(),
                      static_cast<long long>(io.dims[k]));
    }
    total += io.dims.size();
  }
  if (given.size() != total)
    return Errorf(code::kInvalidParam,
                  "dims.dimCount %zu fits model %u neither way: pass the %zu dynamic dim values of one gear "
                  "(aclmdlGetInputDynamicDims) or the %zu dims of the dynamic inputs' shapes",
                  given.size(), modelId, positions.size(), total);
  values->clear();
  for (const auto& p : positions) {
    for (const auto& [name, off] : offset)
      if (name == p.input) values->push_back(given[off + static_cast<size_t>(p.axis)]);
  }
  return Status::Ok();
}

}  // namespace

extern "C" {

aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset* input, aclmdlDataset* output) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    std::shared_ptr<capi::ModelEntry> entry;
    OPENACL_RETURN_IF_ERROR(capi::find_model(modelId, &entry));
    OPENACL_RETURN_IF_ERROR(entry->check_context_alive());
    std::shared_ptr<rt::Context> ctx;
    OPENACL_RETURN_IF_ERROR(runtime().current_context(&ctx));
    OPENACL_RETURN_IF_ERROR(capi::check_model_device(*entry, ctx->device(), "the current context"));
    std::vector<model::IoBuffer> ins, outs;
    std::vector<std::vector<int64_t>> in_dims, out_dims;
    uint64_t out_serial = 0;
    OPENACL_RETURN_IF_ERROR(prepare(*entry, input, output, "aclmdlExecute", &ins, &outs, &in_dims, &out_serial));
    capi::ExecutionScope scope;
    OPENACL_RETURN_IF_ERROR(scope.begin(entry, "aclmdlExecute"));
    auto observer = capi::execution_observer(*entry, ctx->device());
    const bool vary = outputs_vary(scope.model().info());
    OPENACL_RETURN_IF_ERROR(with_model_id(
        modelId, scope.model().execute(ins, outs, in_dims, vary ? &out_dims : nullptr, observer.get())));
    report_outputs(output, out_serial, scope.model().info(), outs, vary ? &out_dims : nullptr);
    return Status::Ok();
  });
}

aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset* input, aclmdlDataset* output, aclrtStream stream) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    std::shared_ptr<capi::ModelEntry> entry;
    OPENACL_RETURN_IF_ERROR(capi::find_model(modelId, &entry));
    OPENACL_RETURN_IF_ERROR(entry->check_context_alive());
    rt::Stream* s = nullptr;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(runtime().resolve_stream(stream, &s, &keep));
    OPENACL_RETURN_IF_ERROR(capi::check_model_device(
        *entry, s->device(), stream ? strformat("stream %p", static_cast<void*>(stream)) : "the default stream"));
    std::vector<model::IoBuffer> ins, outs;
    std::vector<std::vector<int64_t>> in_dims;
    uint64_t out_serial = 0;
    OPENACL_RETURN_IF_ERROR(
        prepare(*entry, input, output, "aclmdlExecuteAsync", &ins, &outs, &in_dims, &out_serial));
    {
      std::shared_ptr<model::LoadedModel> m;
      OPENACL_RETURN_IF_ERROR(loaded_model(*entry, &m));
      OPENACL_RETURN_IF_ERROR(check_fixed_sizes(*entry, m->info(), ins, outs));
    }
    rt::Context* stream_context = s->context();
    s->enqueue(
        [entry, ins = std::move(ins), outs = std::move(outs), in_dims = std::move(in_dims), output, out_serial,
         stream_context, stream]() -> Status {
          // The worker thread runs its tasks in its stream's context, so memory
          // the model allocates (a new executor) lands on the right device.
          std::shared_ptr<rt::Context> cur;
          if (!runtime().current_context(&cur).ok() || cur->device() != entry->device())
            (void)runtime().set_current_context(stream_context);
          OPENACL_RETURN_IF_ERROR(entry->check_context_alive());
          capi::ExecutionScope scope;
          OPENACL_RETURN_IF_ERROR(scope.begin(entry, "queued aclmdlExecuteAsync"));
          auto observer = capi::execution_observer(*entry, entry->device(), stream);
          std::vector<std::vector<int64_t>> out_dims;
          const bool vary = outputs_vary(scope.model().info());
          OPENACL_RETURN_IF_ERROR(with_model_id(
              entry->id(), scope.model().execute(ins, outs, in_dims, vary ? &out_dims : nullptr, observer.get())));
          // `output` is only compared and, if still the same live dataset, written.
          report_outputs(output, out_serial, scope.model().info(), outs, vary ? &out_dims : nullptr);
          return Status::Ok();
        },
        "aclmdlExecuteAsync");
    return Status::Ok();
  });
}

aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset* dataset, size_t index, uint64_t batchSize) {
  return guarded(__func__, [&] {
    if (batchSize == 0 || batchSize > static_cast<uint64_t>(INT64_MAX))
      return Errorf(code::kGeDynamicBatchSizeInvalid, "batchSize %llu is not a valid batch size; pass one of the "
                                                      "model's gears (aclmdlGetDynamicBatch)",
                    static_cast<unsigned long long>(batchSize));
    return set_gear("aclmdlSetDynamicBatchSize", modelId, dataset, index, model::GearKind::kBatch,
                    {static_cast<int64_t>(batchSize)},
                    strformat("batch size %llu", static_cast<unsigned long long>(batchSize)));
  });
}

aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset* dataset, size_t index, uint64_t height,
                                uint64_t width) {
  return guarded(__func__, [&] {
    if (height == 0 || width == 0 || height > static_cast<uint64_t>(INT64_MAX) ||
        width > static_cast<uint64_t>(INT64_MAX))
      return Errorf(code::kGeDynamicBatchSizeInvalid, "height %llu x width %llu is not a valid image size; pass one "
                                                      "of the model's gears (aclmdlGetDynamicHW)",
                    static_cast<unsigned long long>(height), static_cast<unsigned long long>(width));
    return set_gear("aclmdlSetDynamicHWSize", modelId, dataset, index, model::GearKind::kImageSize,
                    {static_cast<int64_t>(height), static_cast<int64_t>(width)},
                    strformat("image size %llux%llu (height x width)", static_cast<unsigned long long>(height),
                              static_cast<unsigned long long>(width)));
  });
}

aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset* dataset, size_t index,
                                   const aclmdlIODims* dims) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dims, "dims"));
    if (dims->dimCount == 0 || dims->dimCount > ACL_MAX_DIM_CNT)
      return Errorf(code::kInvalidParam, "dims.dimCount %zu is out of range (1..%d)", dims->dimCount,
                    ACL_MAX_DIM_CNT);
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    std::shared_ptr<capi::ModelEntry> entry;
    OPENACL_RETURN_IF_ERROR(capi::find_model(modelId, &entry));
    std::shared_ptr<model::LoadedModel> m;
    OPENACL_RETURN_IF_ERROR(loaded_model(*entry, &m));
    std::vector<int64_t> values(dims->dims, dims->dims + dims->dimCount);
    if (m->info().gears.kind == model::GearKind::kDims)
      OPENACL_RETURN_IF_ERROR(dims_gear_values(m->info(), modelId, *dims, &values));
    std::string shown = "dims (";
    for (size_t i = 0; i < values.size(); ++i) shown += (i ? "," : "") + std::to_string(values[i]);
    shown += ")";
    return set_gear("aclmdlSetInputDynamicDims", modelId, dataset, index, model::GearKind::kDims, std::move(values),
                    shown);
  });
}

}  // extern "C"
