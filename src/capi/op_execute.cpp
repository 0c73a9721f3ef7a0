// Single-operator execution (spec §4.4; acl_op.h, acl_op_compiler.h).
//
// One process-wide op::OpCache holds the compiled ops, keyed by the device and
// op_key(type, specs, attrs) ("dev0|Add(...)"); its capacity comes from acl.json
// "max_opqueue_num" (read at the first op call after aclInit) or
// aclopSetMaxOpQueueNum, and it is emptied at aclFinalize (op_reset). A warm
// call converts the descs and attr once, builds the key once and takes the
// compiled op from the cache: no compile, no graph work.
//
// Compiled ops keep their arenas in device memory from the runtime
// (device_allocator, as loaded models do), allocated under the context of the
// call that compiled them. Resetting that device or destroying that context
// frees that memory, so a cached op whose context is gone (or that belongs to
// another device) is recompiled on its next use (owner table below); a handle
// whose context is gone is refused. Single-op .om files (aclopSetModelDir,
// aclopLoad; atc --singleop) are compiled into the same cache.
//
// Execution is asynchronous on the stream, like aclmdlExecuteAsync: the descs,
// attr and data buffers are read and checked when the call is made (buffer
// memory against the registry, sizes of every tensor whose shape is known), so
// a buffer too small gives ACL_ERROR_OP_INPUT/OUTPUT_NOT_MATCH and nothing is
// queued or written. The queued task holds the compiled op and the buffers'
// addresses; aclopExecuteV2 also holds the output desc pointers and writes the
// dims produced into those still alive when the task has run.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>
#include <dirent.h>
#include <sys/stat.h>

#include "acl/acl_op_compiler.h"
#include "capi/capi.h"
#include "capi/mdl_observe.h"
#include "capi/mdl_registry.h"
#include "capi/op_attr.h"
#include "capi/op_execute.h"
#include "capi/tensor_desc.h"
#include "graph/dtype.h"
#include "op/catalog.h"
#include "op/op_json.h"
#include "op/single_op.h"

using namespace openacl;
using capi::guarded;
using capi::runtime;

// A pre-resolved op (aclopCreateHandle): holds its compiled op, so cache
// eviction never invalidates a handle.
struct aclopHandle {
  std::shared_ptr<op::CompiledOp> op;
  std::shared_ptr<rt::Context> context;  // where its memory was allocated
};

namespace {

constexpr int kNumCompileOpts = ACL_OP_DEBUG_OPTION + 1;

struct OpGlobals {
  op::OpCache cache;
  std::mutex mu;  // guards the fields below
  bool configured = false;       // capacity decided for this aclInit
  Status config_status;          // a bad acl.json max_opqueue_num, reported by every op call
  uint64_t api_capacity = 0;     // aclopSetMaxOpQueueNum (0: not called)
  std::map<int, std::string> compile_opts;
  int compile_flag = ACL_OP_COMPILE_DEFAULT;
  // Who allocated each cached op's memory (see the file comment).
  struct Owner {
    std::weak_ptr<op::CompiledOp> op;
    std::shared_ptr<rt::Context> context;
  };
  std::unordered_map<const op::CompiledOp*, Owner> owners;
  std::unordered_set<const aclopHandle*> handles;
};

OpGlobals& G() {
  static auto* g = new OpGlobals();  // never destroyed: stream workers may outlive static destruction
  return *g;
}

// acl.json "max_opqueue_num": a positive integer (number or numeric string).
Status capacity_from_json(const std::string& text, uint64_t* out) {
  *out = 0;
  if (text.empty()) return Status::Ok();
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("max_opqueue_num")) return Status::Ok();
  const auto& v = j["max_opqueue_num"];
  long long n = -1;
  if (v.is_number_integer()) {
    n = v.get<long long>();
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    char* end = nullptr;
    n = s.empty() ? -1 : std::strtoll(s.c_str(), &end, 10);
    if (end && *end) n = -1;
  }
  if (n <= 0)
    return Errorf(ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG,
                  "acl.json: max_opqueue_num %s is invalid; give a positive integer (compiled ops kept, default %zu)",
                  v.dump().c_str(), op::OpCache::kDefaultCapacity);
  *out = static_cast<uint64_t>(n);
  return Status::Ok();
}

// The cache, with its capacity decided for this aclInit. Needs aclInit.
Status op_cache(op::OpCache** out) {
  OpGlobals& g = G();
  std::lock_guard<std::mutex> lock(g.mu);
  if (!g.configured) {
    uint64_t n = 0;
    g.config_status = capacity_from_json(runtime().config().raw_json, &n);
    if (g.api_capacity) n = g.api_capacity;
    g.cache.set_capacity(n ? static_cast<size_t>(n) : op::OpCache::kDefaultCapacity);
    g.configured = true;
  }
  OPENACL_RETURN_IF_ERROR(g.config_status);
  *out = &g.cache;
  return Status::Ok();
}

// ---- reading a call ----

struct OpCall {
  std::string type;
  std::vector<op::TensorSpec> inputs, outputs;
  op::OpAttrs attrs;
};

Status check_list(int n, const void* list, const char* count_name, const char* list_name) {
  if (n < 0) return Errorf(code::kInvalidParam, "%s %d is negative", count_name, n);
  if (n > 0 && !list)
    return Errorf(code::kInvalidParam, "%s is NULL while %s is %d; pass an array of %d", list_name, count_name, n, n);
  return Status::Ok();
}

Status read_descs(int n, const aclTensorDesc* const* descs, const char* what, std::vector<op::TensorSpec>* out) {
  out->resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    OPENACL_RETURN_IF_ERROR(capi::tensor_desc_spec(descs[i], what, static_cast<size_t>(i), &(*out)[i]));
  return Status::Ok();
}

Status read_call(const char* opType, int numInputs, const aclTensorDesc* const* inputDesc, int numOutputs,
                 const aclTensorDesc* const* outputDesc, const aclopAttr* attr, OpCall* c) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(opType, "opType"));
  if (!*opType) return Errorf(code::kInvalidParam, "opType is empty; pass an Ascend op type such as \"Add\"");
  OPENACL_RETURN_IF_ERROR(check_list(numInputs, inputDesc, "numInputs", "inputDesc"));
  OPENACL_RETURN_IF_ERROR(check_list(numOutputs, outputDesc, "numOutputs", "outputDesc"));
  c->type.assign(opType);
  OPENACL_RETURN_IF_ERROR(read_descs(numInputs, inputDesc, "input", &c->inputs));
  OPENACL_RETURN_IF_ERROR(read_descs(numOutputs, outputDesc, "output", &c->outputs));
  return capi::read_op_attr(attr, &c->attrs);
}

// Prefixes the op type when the op layer's message does not name it.
Status about(const std::string& type, Status st) {
  if (st.ok() || st.message().find(type) != std::string::npos) return st;
  return Status(st.code(), type + ": " + st.message());
}

// ---- contexts and compiled ops ----

// The context the op's memory is allocated under: the current one when it is
// on `device`, else the context that owns the stream.
Status context_for(int device, rt::Context* stream_context, std::shared_ptr<rt::Context>* out) {
  std::shared_ptr<rt::Context> cur;
  if (runtime().current_context(&cur).ok() && cur->device() == device) {
    *out = std::move(cur);
    return Status::Ok();
  }
  if (stream_context) *out = runtime().find_context(stream_context);
  if (!*out)
    return Errorf(code::kRtContextNull, "no context on device %d; call aclrtSetDevice(%d) or aclrtSetCurrentContext",
                  device, device);
  return Status::Ok();
}

// One cache entry per device: an op's memory belongs to one device.
std::string device_key(int device, const std::string& op_key) {
  std::string key = "dev";
  key += std::to_string(device);
  key += '|';
  key += op_key;
  return key;
}
std::string device_key(int device, const OpCall& c) {
  return device_key(device, op::op_key(c.type, c.inputs, c.outputs, c.attrs));
}

// The runtime's device memory for a compiled op (as loaded models get it).
// A one-node op often needs no work arena at all: a 0-byte request, which
// aclrtMalloc refuses, gets a minimal block instead.
model::Allocator op_allocator(const std::shared_ptr<rt::Context>& context) {
  model::Allocator a = capi::device_allocator(context);
  a.allocate = [inner = std::move(a.allocate)](size_t bytes, void** out) { return inner(bytes ? bytes : 1, out); };
  return a;
}

// The compiled op for the call on `context`'s device: a cache hit, or a compile.
Status compiled_op(const OpCall& c, const std::shared_ptr<rt::Context>& context,
                   std::shared_ptr<op::CompiledOp>* out) {
  op::OpCache* cache = nullptr;
  OPENACL_RETURN_IF_ERROR(op_cache(&cache));
  const std::string key = device_key(context->device(), c);
  const model::Allocator allocator = op_allocator(context);
  OPENACL_RETURN_IF_ERROR(about(c.type, cache->get(key, c.type, c.inputs, c.outputs, c.attrs, allocator, out)));
  OpGlobals& g = G();
  bool stale = false;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    auto it = g.owners.find(out->get());
    if (it == g.owners.end() || it->second.op.lock() != *out) {
      if (g.owners.size() > 2 * cache->size() + 64)
        std::erase_if(g.owners, [](const auto& kv) { return kv.second.op.expired(); });
      g.owners[out->get()] = {*out, context};
    } else if (const auto& owner = it->second.context) {
      // Its memory went with its context (device reset / context destroyed),
      // or it belongs to another device: compile it for this one.
      stale = !owner->alive() || owner->device() != context->device();
    }
  }
  if (!stale) return Status::Ok();
  std::shared_ptr<op::CompiledOp> fresh;
  OPENACL_RETURN_IF_ERROR(about(c.type, op::CompiledOp::compile(c.type, c.inputs, c.outputs, c.attrs, allocator, &fresh)));
  cache->put(key, fresh);
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.owners[fresh.get()] = {fresh, context};
  }
  *out = std::move(fresh);
  return Status::Ok();
}

// ---- buffers ----

// Bytes a tensor of a known shape takes; 0 when some dim is unknown.
bool known_bytes(const op::TensorSpec& spec, size_t* bytes) {
  const int64_t n = spec.elements();
  if (n < 0 || spec.unknown_rank()) return false;
  *bytes = static_cast<size_t>(n) * graph::dtype_bytes(spec.dtype);
  return true;
}

// check_io_memory names the tensor "... of model N"; an op has no model id.
Status io_memory(const model::IoBuffer& b, const char* kind, size_t index, const op::CompiledOp& op,
                 const char* api) {
  Status st = capi::check_io_memory(b, {kind, index, "", 0}, api);
  if (st.ok()) return st;
  std::string msg = st.message();
  const std::string from = strformat("%s %zu ('') of model 0", kind, index);
  const size_t at = msg.find(from);
  if (at != std::string::npos) msg.replace(at, from.size(), strformat("%s %zu of %s", kind, index, op.type().c_str()));
  return Status(st.code(), msg);
}

// Reads the data buffers of a call and checks them against the compiled op:
// counts, memory, and the size of every tensor whose shape is known.
Status read_buffers(const char* api, const op::CompiledOp& op, int numInputs, const aclDataBuffer* const* inputs,
                    int numOutputs, const aclDataBuffer* const* outputs, std::vector<model::IoBuffer>* ins,
                    std::vector<model::IoBuffer>* outs) {
  OPENACL_RETURN_IF_ERROR(check_list(numInputs, inputs, "numInputs", "inputs"));
  OPENACL_RETURN_IF_ERROR(check_list(numOutputs, outputs, "numOutputs", "outputs"));
  if (static_cast<size_t>(numInputs) != op.inputs().size())
    return Errorf(code::kOpInputNotMatch, "%s takes %zu input buffer(s) here (one per input desc), got %d",
                  op.type().c_str(), op.inputs().size(), numInputs);
  if (static_cast<size_t>(numOutputs) != op.outputs().size())
    return Errorf(code::kOpOutputNotMatch, "%s takes %zu output buffer(s) here (one per output desc), got %d",
                  op.type().c_str(), op.outputs().size(), numOutputs);
  ins->resize(static_cast<size_t>(numInputs));
  outs->resize(static_cast<size_t>(numOutputs));
  for (size_t i = 0; i < ins->size(); ++i) {
    const op::TensorSpec& spec = op.inputs()[i];
    if (!inputs[i])
      return Errorf(code::kInvalidParam, "%s: inputs[%zu] is NULL; pass a data buffer (aclCreateDataBuffer(NULL, 0) "
                                         "for an omitted optional input)",
                    op.type().c_str(), i);
    (*ins)[i] = {aclGetDataBufferAddr(inputs[i]), aclGetDataBufferSizeV2(inputs[i])};
    if (spec.omitted() || spec.constant) continue;  // not read
    OPENACL_RETURN_IF_ERROR(io_memory((*ins)[i], "input", i, op, api));
    size_t need = 0;
    if (known_bytes(spec, &need) && (*ins)[i].size < need)
      return Errorf(code::kOpInputNotMatch,
                    "%s: input %zu is %s (%zu bytes) but its data buffer holds %zu bytes (an unknown or destroyed "
                    "buffer reads as 0); pass a large enough buffer",
                    op.type().c_str(), i, spec.str().c_str(), need, (*ins)[i].size);
  }
  for (size_t i = 0; i < outs->size(); ++i) {
    const op::TensorSpec& spec = op.outputs()[i];
    if (!outputs[i])
      return Errorf(code::kInvalidParam, "%s: outputs[%zu] is NULL; pass a data buffer", op.type().c_str(), i);
    (*outs)[i] = {aclGetDataBufferAddr(outputs[i]), aclGetDataBufferSizeV2(outputs[i])};
    OPENACL_RETURN_IF_ERROR(io_memory((*outs)[i], "output", i, op, api));
    size_t need = 0;
    if (known_bytes(spec, &need) && (*outs)[i].size < need)
      return Errorf(code::kOpOutputNotMatch,
                    "%s: output %zu is %s (%zu bytes) but its data buffer holds %zu bytes; nothing was written, pass "
                    "a buffer of at least %zu bytes",
                    op.type().c_str(), i, spec.str().c_str(), need, (*outs)[i].size, need);
  }
  return Status::Ok();
}

// Execution needs the real shape of every input that is read.
Status check_input_shapes(const OpCall& c) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const op::TensorSpec& s = c.inputs[i];
    if (s.omitted() || s.constant || s.static_shape()) continue;
    return Errorf(code::kOpInputNotMatch,
                  "%s: input %zu is %s; execution needs the real shape (every dim >= 0) in the input desc",
                  c.type.c_str(), i, s.str().c_str());
  }
  return Status::Ok();
}

bool outputs_static(const op::CompiledOp& op) {
  for (const auto& s : op.outputs())
    if (!s.static_shape()) return false;
  return true;
}

// Queues the op on the stream. update: output descs to receive the dims
// written (aclopExecuteV2), or empty.
Status enqueue(const char* api, std::shared_ptr<op::CompiledOp> op, rt::Stream* s, aclrtStream stream,
               std::shared_ptr<rt::Context> context, std::vector<model::IoBuffer> ins,
               std::vector<model::IoBuffer> outs, std::vector<aclTensorDesc*> update) {
  const bool want_dims = !update.empty() && !outputs_static(*op);
  rt::Context* stream_context = s->context();
  s->enqueue(
      [op = std::move(op), ins = std::move(ins), outs = std::move(outs), update = std::move(update), want_dims,
       stream_context, stream, device = context->device()]() -> Status {
        // Memory a run allocates (a new executor) goes under the stream's
        // context, as for aclmdlExecuteAsync.
        std::shared_ptr<rt::Context> cur;
        if (!runtime().current_context(&cur).ok() || cur->device() != device)
          (void)runtime().set_current_context(stream_context);
        std::vector<std::vector<int64_t>> dims;
        // Profiling sees a single op as a one-op execution (op_summary rows).
        auto observer = capi::single_op_observer(op->type(), device, stream);
        OPENACL_RETURN_IF_ERROR(
            about(op->type(), op->execute(ins, outs, {}, want_dims ? &dims : nullptr, observer.get())));
        if (want_dims) {
          for (size_t o = 0; o < update.size() && o < dims.size(); ++o) {
            const op::TensorSpec& spec = op->outputs()[o];
            // A desc destroyed meanwhile is skipped (update_tensor_desc refuses it).
            aclFormat format = aclGetTensorDescFormat(update[o]);
            if (format == ACL_FORMAT_UNDEFINED) format = static_cast<aclFormat>(spec.format);
            (void)capi::update_tensor_desc(update[o], static_cast<aclDataType>(graph::dtype_to_acl(spec.dtype)),
                                           dims[o], format, outs[o].data);
          }
        }
        return Status::Ok();
      },
      api);
  return Status::Ok();
}

// The whole execute path: read, compile or hit, check, queue.
Status execute(const char* api, const char* opType, int numInputs, const aclTensorDesc* const* inputDesc,
               const aclDataBuffer* const* inputs, int numOutputs, const aclTensorDesc* const* outputDesc,
               aclDataBuffer* const* outputs, const aclopAttr* attr, aclrtStream stream, bool v2) {
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  thread_local OpCall c;  // reused: a steady stream of calls reuses its memory
  OPENACL_RETURN_IF_ERROR(read_call(opType, numInputs, inputDesc, numOutputs, outputDesc, attr, &c));
  OPENACL_RETURN_IF_ERROR(check_input_shapes(c));
  rt::Stream* s = nullptr;
  std::shared_ptr<rt::Stream> keep;
  OPENACL_RETURN_IF_ERROR(runtime().resolve_stream(stream, &s, &keep));
  std::shared_ptr<rt::Context> context;
  OPENACL_RETURN_IF_ERROR(context_for(s->device(), s->context(), &context));
  std::shared_ptr<op::CompiledOp> op;
  OPENACL_RETURN_IF_ERROR(compiled_op(c, context, &op));
  std::vector<model::IoBuffer> ins, outs;
  OPENACL_RETURN_IF_ERROR(read_buffers(api, *op, numInputs, inputs, numOutputs, outputs, &ins, &outs));
  std::vector<aclTensorDesc*> update;
  if (v2) update.assign(const_cast<aclTensorDesc* const*>(outputDesc), const_cast<aclTensorDesc* const*>(outputDesc) + numOutputs);
  return enqueue(api, std::move(op), s, stream, std::move(context), std::move(ins), std::move(outs),
                 std::move(update));
}

// Compiles into the cache under the current context.
// for_handle: the op will run without descs (aclopExecWithHandle), so every
// input read needs its real shape now.
Status compile_only(const char* opType, int numInputs, const aclTensorDesc* const* inputDesc, int numOutputs,
                    const aclTensorDesc* const* outputDesc, const aclopAttr* attr,
                    std::shared_ptr<op::CompiledOp>* op, std::shared_ptr<rt::Context>* context,
                    bool for_handle = false) {
  OPENACL_RETURN_IF_ERROR(capi::require_init());
  OpCall c;
  OPENACL_RETURN_IF_ERROR(read_call(opType, numInputs, inputDesc, numOutputs, outputDesc, attr, &c));
  if (for_handle) OPENACL_RETURN_IF_ERROR(check_input_shapes(c));
  std::shared_ptr<rt::Context> cur;
  Status st = runtime().current_context(&cur);
  if (!st.ok())
    return Status(st.code(), "no current context: call aclrtSetDevice or aclrtSetCurrentContext before compiling " +
                                 c.type);
  OPENACL_RETURN_IF_ERROR(compiled_op(c, cur, op));
  if (context) *context = std::move(cur);
  return Status::Ok();
}

Status check_engine(aclopEngineType engineType, aclopCompileType compileFlag) {
  if (engineType != ACL_ENGINE_SYS && engineType != ACL_ENGINE_AICORE && engineType != ACL_ENGINE_VECTOR)
    return Errorf(code::kInvalidParam,
                  "engineType %d is not an aclopEngineType; pass ACL_ENGINE_SYS (0), ACL_ENGINE_AICORE (1) or "
                  "ACL_ENGINE_VECTOR (2)",
                  static_cast<int>(engineType));
  if (compileFlag != ACL_COMPILE_SYS && compileFlag != ACL_COMPILE_UNREGISTERED)
    return Errorf(code::kInvalidParam,
                  "compileFlag %d is not an aclopCompileType; pass ACL_COMPILE_SYS (0) or ACL_COMPILE_UNREGISTERED (1)",
                  static_cast<int>(compileFlag));
  return Status::Ok();
}

// Cast: Ascend's Cast takes its target as attribute dst_type; its kind is the
// catalogue's (data type or int).
Status cast_call(const aclTensorDesc* src, const aclTensorDesc* dst, OpCall* c) {
  OPENACL_RETURN_IF_ERROR(capi::not_null(src, "srcDesc"));
  OPENACL_RETURN_IF_ERROR(capi::not_null(dst, "dstDesc"));
  c->type = "Cast";
  c->inputs.resize(1);
  c->outputs.resize(1);
  OPENACL_RETURN_IF_ERROR(capi::tensor_desc_spec(src, "input", 0, &c->inputs[0]));
  OPENACL_RETURN_IF_ERROR(capi::tensor_desc_spec(dst, "output", 0, &c->outputs[0]));
  c->attrs.clear();
  const int target = graph::dtype_to_acl(c->outputs[0].dtype);
  const op::OpDef* def = op::Catalog::instance().find("Cast");
  const op::AttrDef* a = def ? def->find_attr("dst_type") : nullptr;
  if (a) {
    c->attrs["dst_type"] =
        a->kind == op::AttrValue::Kind::kInt ? op::AttrValue::of_int(target) : op::AttrValue::of_data_type(target);
  }
  return Status::Ok();
}

// A single-op .om (atc --singleop) compiled into the cache. Its memory comes
// from the current context's device; without a current context (a folder set
// before aclrtSetDevice) from host memory, which no device reset takes away.
Status load_op_model(const void* data, size_t size) {
  op::OpCache* cache = nullptr;
  OPENACL_RETURN_IF_ERROR(op_cache(&cache));
  std::shared_ptr<rt::Context> context;
  if (!runtime().current_context(&context).ok()) context.reset();
  std::shared_ptr<op::CompiledOp> op;
  OPENACL_RETURN_IF_ERROR(
      op::load_op_om(data, size, context ? op_allocator(context) : model::Allocator{}, &op));
  // Filed under its device; without a context its host memory serves every
  // device alike.
  if (context) {
    cache->put(device_key(context->device(), op->key()), op);
  } else {
    for (int d = 0; d < runtime().device_count(); ++d) cache->put(device_key(d, op->key()), op);
  }
  OpGlobals& g = G();
  std::lock_guard<std::mutex> lock(g.mu);
  g.owners[op.get()] = {op, context};
  return Status::Ok();
}

// aclopInferShape reads the values of inputs an output's shape may depend on
// (Reshape's shape, Tile's multiples, Fill's dims), as CANN's does: small
// int32/int64 inputs (at most kMaxShapeValues elements) whose data buffer is
// memory the runtime knows and large enough. They count as constants for
// this inference only; any other input leaves data-dependent dims at -1.
constexpr int64_t kMaxShapeValues = 64;

void read_shape_values(aclDataBuffer* const* inputs, OpCall* c) {
  if (!inputs) return;
  for (size_t i = 0; i < c->inputs.size(); ++i) {
    op::TensorSpec& spec = c->inputs[i];
    if (spec.omitted() || spec.constant || !inputs[i]) continue;
    if (spec.dtype != graph::DType::kInt32 && spec.dtype != graph::DType::kInt64) continue;
    const int64_t n = spec.elements();
    if (n < 0 || n > kMaxShapeValues || spec.unknown_rank()) continue;
    const size_t bytes = static_cast<size_t>(n) * graph::dtype_bytes(spec.dtype);
    void* data = aclGetDataBufferAddr(inputs[i]);
    if (!data || aclGetDataBufferSizeV2(inputs[i]) < bytes) continue;
    if (bytes && !runtime().check_range_in_one_allocation(data, bytes, "aclopInferShape").ok()) continue;
    std::vector<uint8_t> host(bytes);
    if (bytes) runtime().backend().copy(host.data(), data, bytes);
    spec.constant = graph::TensorData::copy_of(spec.dtype, spec.dims, host.data(), bytes);
  }
}

Status not_supported(const char* what) {
  return Errorf(code::kApiNotSupport,
                "%s is not supported: custom AI-core kernels (aclopCreateKernel / aclopRegisterCompileFunc) need an "
                "Ascend NPU and cannot run here; use the built-in op types (docs/ops.md)",
                what);
}

}  // namespace

namespace openacl::capi {

void op_reset() {
  OpGlobals& g = G();
  // What the cache did this session, for whoever tunes max_opqueue_num (and
  // the tests: the log is the observable trace of hits).
  if (g.cache.hits() || g.cache.misses())
    OACL_INFO("acl.op: %llu call(s) hit the compiled-op cache, %llu compiled, %zu cached at aclFinalize",
              static_cast<unsigned long long>(g.cache.hits()), static_cast<unsigned long long>(g.cache.misses()),
              g.cache.size());
  g.cache.clear();
  std::lock_guard<std::mutex> lock(g.mu);
  g.owners.clear();
  g.configured = false;  // the next aclInit's acl.json decides again
  g.config_status = Status::Ok();
}

}  // namespace openacl::capi

extern "C" {

aclError aclopSetModelDir(const char* modelDir) {
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(modelDir, "modelDir"));
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    struct stat st {};
    if (::stat(modelDir, &st) != 0 || !S_ISDIR(st.st_mode))
      return Errorf(code::kInvalidParam, "modelDir '%s' is not an existing directory", modelDir);
    // Every *.om in the folder (not its subfolders) is loaded into the cache;
    // an empty folder is fine: ops compile on first use (compat-notes §1.14).
    std::vector<std::string> files;
    if (DIR* dir = ::opendir(modelDir)) {
      while (dirent* e = ::readdir(dir)) {
        const std::string name = e->d_name;
        if (name.size() > 3 && name.compare(name.size() - 3, 3, ".om") == 0)
          files.push_back(std::string(modelDir) + "/" + name);
      }
      ::closedir(dir);
    } else {
      return Errorf(code::kInvalidParam, "modelDir '%s' cannot be read", modelDir);
    }
    std::sort(files.begin(), files.end());
    for (const std::string& path : files) {
      capi::ModelFile file;
      OPENACL_RETURN_IF_ERROR(capi::map_model_file(path.c_str(), "modelDir", &file));
      Status loaded = load_op_model(file.data, file.size);
      if (!loaded.ok()) return Status(loaded.code(), path + ": " + loaded.message());
    }
    return Status::Ok();
  });
}

aclError aclopLoad(const void* model, size_t modelSize) {
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(model, "model"));
    if (modelSize == 0) return Errorf(code::kInvalidParam, "modelSize is 0; pass the size of the model in bytes");
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    return load_op_model(model, modelSize);
  });
}

aclError aclopExecute(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[],
                      const aclDataBuffer* const inputs[], int numOutputs, const aclTensorDesc* const outputDesc[],
                      aclDataBuffer* const outputs[], const aclopAttr* attr, aclrtStream stream) {
  return guarded(__func__, [&] {
    return execute("aclopExecute", opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr,
                   stream, false);
  });
}

aclError aclopExecuteV2(const char* opType, int numInputs, aclTensorDesc* inputDesc[], aclDataBuffer* inputs[],
                        int numOutputs, aclTensorDesc* outputDesc[], aclDataBuffer* outputs[], aclopAttr* attr,
                        aclrtStream stream) {
  return guarded(__func__, [&] {
    return execute("aclopExecuteV2", opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr,
                   stream, true);
  });
}

aclError aclopCreateHandle(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[], int numOutputs,
                           const aclTensorDesc* const outputDesc[], const aclopAttr* opAttr, aclopHandle** handle) {
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(handle, "handle"));
    *handle = nullptr;
    auto h = std::make_unique<aclopHandle>();
    OPENACL_RETURN_IF_ERROR(
        compile_only(opType, numInputs, inputDesc, numOutputs, outputDesc, opAttr, &h->op, &h->context, true));
    OpGlobals& g = G();
    std::lock_guard<std::mutex> lock(g.mu);
    g.handles.insert(h.get());
    *handle = h.release();
    return Status::Ok();
  });
}

void aclopDestroyHandle(aclopHandle* handle) {
  if (!handle) return;
  guarded(__func__, [&]() -> Status {
    OpGlobals& g = G();
    {
      std::lock_guard<std::mutex> lock(g.mu);
      if (!g.handles.erase(handle))
        return Errorf(code::kInvalidParam, "handle %p is unknown or already destroyed", static_cast<void*>(handle));
    }
    delete handle;  // queued executions hold the compiled op themselves
    return Status::Ok();
  });
}

aclError aclopExecWithHandle(aclopHandle* handle, int numInputs, const aclDataBuffer* const inputs[], int numOutputs,
                             aclDataBuffer* const outputs[], aclrtStream stream) {
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    OPENACL_RETURN_IF_ERROR(capi::not_null(handle, "handle"));
    std::shared_ptr<op::CompiledOp> op;
    std::shared_ptr<rt::Context> context;
    {
      OpGlobals& g = G();
      std::lock_guard<std::mutex> lock(g.mu);
      if (!g.handles.count(handle))
        return Errorf(code::kInvalidParam, "handle %p is unknown or already destroyed; create one with "
                                           "aclopCreateHandle",
                      static_cast<void*>(handle));
      op = handle->op;
      context = handle->context;
    }
    if (!context->alive())
      return Errorf(code::kRtContextNull,
                    "handle %p (%s): the context it was created under was destroyed or its device reset (its memory "
                    "went with it); destroy the handle and create it again",
                    static_cast<void*>(handle), op->type().c_str());
    rt::Stream* s = nullptr;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(runtime().resolve_stream(stream, &s, &keep));
    std::vector<model::IoBuffer> ins, outs;
    OPENACL_RETURN_IF_ERROR(
        read_buffers("aclopExecWithHandle", *op, numInputs, inputs, numOutputs, outputs, &ins, &outs));
    return enqueue("aclopExecWithHandle", std::move(op), s, stream, std::move(context), std::move(ins),
                   std::move(outs), {});
  });
}

aclError aclopCast(const aclTensorDesc* srcDesc, const aclDataBuffer* srcBuffer, const aclTensorDesc* dstDesc,
                   aclDataBuffer* dstBuffer, uint8_t truncate, aclrtStream stream) {
  (void)truncate;  // conversions round to nearest (documented in acl_op.h)
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    OPENACL_RETURN_IF_ERROR(capi::not_null(srcBuffer, "srcBuffer"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(dstBuffer, "dstBuffer"));
    thread_local OpCall c;
    OPENACL_RETURN_IF_ERROR(cast_call(srcDesc, dstDesc, &c));
    OPENACL_RETURN_IF_ERROR(check_input_shapes(c));
    rt::Stream* s = nullptr;
    std::shared_ptr<rt::Stream> keep;
    OPENACL_RETURN_IF_ERROR(runtime().resolve_stream(stream, &s, &keep));
    std::shared_ptr<rt::Context> context;
    OPENACL_RETURN_IF_ERROR(context_for(s->device(), s->context(), &context));
    std::shared_ptr<op::CompiledOp> op;
    OPENACL_RETURN_IF_ERROR(compiled_op(c, context, &op));
    std::vector<model::IoBuffer> ins, outs;
    const aclDataBuffer* in[1] = {srcBuffer};
    aclDataBuffer* out[1] = {dstBuffer};
    OPENACL_RETURN_IF_ERROR(read_buffers("aclopCast", *op, 1, in, 1, out, &ins, &outs));
    return enqueue("aclopCast", std::move(op), s, stream, std::move(context), std::move(ins), std::move(outs), {});
  });
}

aclError aclopCreateHandleForCast(aclTensorDesc* srcDesc, aclTensorDesc* dstDesc, uint8_t truncate,
                                  aclopHandle** handle) {
  (void)truncate;
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(handle, "handle"));
    *handle = nullptr;
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    OpCall c;
    OPENACL_RETURN_IF_ERROR(cast_call(srcDesc, dstDesc, &c));
    auto h = std::make_unique<aclopHandle>();
    Status st = runtime().current_context(&h->context);
    if (!st.ok())
      return Status(st.code(), "no current context: call aclrtSetDevice or aclrtSetCurrentContext first");
    OPENACL_RETURN_IF_ERROR(compiled_op(c, h->context, &h->op));
    OpGlobals& g = G();
    std::lock_guard<std::mutex> lock(g.mu);
    g.handles.insert(h.get());
    *handle = h.release();
    return Status::Ok();
  });
}

aclError aclopInferShape(const char* opType, int numInputs, aclTensorDesc* inputDesc[], aclDataBuffer* inputs[],
                         int numOutputs, aclTensorDesc* outputDesc[], aclopAttr* attr) {
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    OpCall c;
    OPENACL_RETURN_IF_ERROR(read_call(opType, numInputs, inputDesc, numOutputs, outputDesc, attr, &c));
    read_shape_values(inputs, &c);
    // The output descs' dtypes are passed on (Cast-like ops read their target there).
    std::vector<op::TensorSpec> outs(c.outputs.size());
    for (size_t o = 0; o < outs.size(); ++o) {
      outs[o].dtype = c.outputs[o].dtype;
      outs[o].format = c.outputs[o].format;
    }
    OPENACL_RETURN_IF_ERROR(
        about(c.type, op::infer_shape(c.type, c.inputs, static_cast<size_t>(numOutputs), c.attrs, &outs)));
    for (size_t o = 0; o < outs.size() && o < static_cast<size_t>(numOutputs); ++o)
      OPENACL_RETURN_IF_ERROR(capi::spec_to_tensor_desc(outputDesc[o], outs[o]));
    return Status::Ok();
  });
}

aclError aclopUpdateParams(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[], int numOutputs,
                           const aclTensorDesc* const outputDesc[], const aclopAttr* attr) {
  return guarded(__func__, [&]() -> Status {
    std::shared_ptr<op::CompiledOp> op;
    return compile_only(opType, numInputs, inputDesc, numOutputs, outputDesc, attr, &op, nullptr);
  });
}

aclError aclopSetMaxOpQueueNum(uint64_t maxOpNum) {
  return guarded(__func__, [&]() -> Status {
    if (maxOpNum == 0)
      return Errorf(code::kInvalidParam, "maxOpNum 0 is invalid; pass the number of compiled ops to keep (>= 1)");
    OpGlobals& g = G();
    const size_t n = static_cast<size_t>(std::min<uint64_t>(maxOpNum, SIZE_MAX));
    std::lock_guard<std::mutex> lock(g.mu);
    g.api_capacity = n;
    if (g.configured) g.cache.set_capacity(n);
    return Status::Ok();
  });
}

aclError aclopCreateKernel(const char* opType, const char* kernelId, const char* kernelName, void* binData,
                           int binSize, aclopEngineType enginetype, aclDataDeallocator deallocator) {
  (void)enginetype;
  (void)deallocator;  // never called: nothing is kept
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(opType, "opType"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(kernelId, "kernelId"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(kernelName, "kernelName"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(binData, "binData"));
    if (binSize <= 0) return Errorf(code::kInvalidParam, "binSize %d is invalid; pass the binary's size", binSize);
    return not_supported("aclopCreateKernel");
  });
}

aclError aclopRegisterCompileFunc(const char* opType, aclopCompileFunc func) {
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(opType, "opType"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(reinterpret_cast<const void*>(func), "func"));
    return not_supported("aclopRegisterCompileFunc");
  });
}

aclError aclopUnregisterCompileFunc(const char* opType) {
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(opType, "opType"));
    return not_supported("aclopUnregisterCompileFunc");
  });
}

aclError aclopSetKernelArgs(aclopKernelDesc* kernelDesc, const char* kernelId, uint32_t blockDim, const void* args,
                            uint32_t argSize) {
  (void)blockDim;
  (void)argSize;
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(kernelDesc, "kernelDesc"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(kernelId, "kernelId"));
    OPENACL_RETURN_IF_ERROR(capi::not_null(args, "args"));
    return not_supported("aclopSetKernelArgs");
  });
}

aclError aclopSetKernelWorkspaceSizes(aclopKernelDesc* kernelDesc, int numWorkspaces, size_t* workspaceSizes) {
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(kernelDesc, "kernelDesc"));
    OPENACL_RETURN_IF_ERROR(check_list(numWorkspaces, workspaceSizes, "numWorkspaces", "workspaceSizes"));
    return not_supported("aclopSetKernelWorkspaceSizes");
  });
}

aclError aclopStartDumpArgs(uint32_t dumpType, const char* path) {
  return guarded(__func__, [&]() -> Status {
    if (dumpType != ACL_OP_DUMP_OP_AICORE_ARGS)
      return Errorf(code::kInvalidParam, "dumpType %u is invalid; pass ACL_OP_DUMP_OP_AICORE_ARGS (1)", dumpType);
    OPENACL_RETURN_IF_ERROR(capi::not_null(path, "path"));
    return Errorf(code::kApiNotSupport,
                  "aclopStartDumpArgs is not supported: there are no AI-core kernel arguments to dump without an "
                  "Ascend NPU; dump op outputs with acl.json's dump section instead");
  });
}

aclError aclopStopDumpArgs(uint32_t dumpType) {
  return guarded(__func__, [&]() -> Status {
    if (dumpType != ACL_OP_DUMP_OP_AICORE_ARGS)
      return Errorf(code::kInvalidParam, "dumpType %u is invalid; pass ACL_OP_DUMP_OP_AICORE_ARGS (1)", dumpType);
    return Errorf(code::kApiNotSupport, "aclopStopDumpArgs is not supported: no AI-core kernel arguments are dumped "
                                        "without an Ascend NPU");
  });
}

// ---- acl_op_compiler.h ----

aclError aclopCompile(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[], int numOutputs,
                      const aclTensorDesc* const outputDesc[], const aclopAttr* attr, aclopEngineType engineType,
                      aclopCompileType compileFlag, const char* opPath) {
  (void)opPath;  // reserved (CANN: pass NULL)
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(check_engine(engineType, compileFlag));
    std::shared_ptr<op::CompiledOp> op;
    return compile_only(opType, numInputs, inputDesc, numOutputs, outputDesc, attr, &op, nullptr);
  });
}

aclError aclopCompileAndExecute(const char* opType, int numInputs, const aclTensorDesc* const inputDesc[],
                                const aclDataBuffer* const inputs[], int numOutputs,
                                const aclTensorDesc* const outputDesc[], aclDataBuffer* const outputs[],
                                const aclopAttr* attr, aclopEngineType engineType, aclopCompileType compileFlag,
                                const char* opPath, aclrtStream stream) {
  (void)opPath;
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(check_engine(engineType, compileFlag));
    return execute("aclopCompileAndExecute", opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs,
                   attr, stream, false);
  });
}

aclError aclopCompileAndExecuteV2(const char* opType, int numInputs, aclTensorDesc* inputDesc[],
                                  aclDataBuffer* inputs[], int numOutputs, aclTensorDesc* outputDesc[],
                                  aclDataBuffer* outputs[], aclopAttr* attr, aclopEngineType engineType,
                                  aclopCompileType compileFlag, const char* opPath, aclrtStream stream) {
  (void)opPath;
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(check_engine(engineType, compileFlag));
    return execute("aclopCompileAndExecuteV2", opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs,
                   attr, stream, true);
  });
}

aclError aclSetCompileopt(aclCompileOpt opt, const char* value) {
  return guarded(__func__, [&]() -> Status {
    if (static_cast<int>(opt) < 0 || static_cast<int>(opt) >= kNumCompileOpts)
      return Errorf(code::kInvalidParam, "opt %d is not an aclCompileOpt (0..%d)", static_cast<int>(opt),
                    kNumCompileOpts - 1);
    OPENACL_RETURN_IF_ERROR(capi::not_null(value, "value"));
    OpGlobals& g = G();
    std::lock_guard<std::mutex> lock(g.mu);
    g.compile_opts[static_cast<int>(opt)] = value;  // stored and reported; no effect on compilation
    return Status::Ok();
  });
}

size_t aclGetCompileoptSize(aclCompileOpt opt) {
  OpGlobals& g = G();
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.compile_opts.find(static_cast<int>(opt));
  return it == g.compile_opts.end() ? 0 : it->second.size() + 1;
}

aclError aclGetCompileopt(aclCompileOpt opt, char* value, size_t length) {
  return guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(value, "value"));
    OpGlobals& g = G();
    std::lock_guard<std::mutex> lock(g.mu);
    auto it = g.compile_opts.find(static_cast<int>(opt));
    if (it == g.compile_opts.end())
      return Errorf(code::kInvalidParam, "compile option %d was not set (aclSetCompileopt)", static_cast<int>(opt));
    if (length < it->second.size() + 1)
      return Errorf(code::kInvalidParam, "length %zu is too small for compile option %d: it needs %zu bytes "
                                         "(aclGetCompileoptSize)",
                    length, static_cast<int>(opt), it->second.size() + 1);
    std::memcpy(value, it->second.c_str(), it->second.size() + 1);
    return Status::Ok();
  });
}

aclError aclopSetCompileFlag(aclOpCompileFlag flag) {
  return guarded(__func__, [&]() -> Status {
    if (flag != ACL_OP_COMPILE_DEFAULT && flag != ACL_OP_COMPILE_FUZZ)
      return Errorf(code::kInvalidParam,
                    "flag %d is not an aclOpCompileFlag; pass ACL_OP_COMPILE_DEFAULT (0) or ACL_OP_COMPILE_FUZZ (1)",
                    static_cast<int>(flag));
    OpGlobals& g = G();
    std::lock_guard<std::mutex> lock(g.mu);
    g.compile_flag = static_cast<int>(flag);  // stored; compiled ops are shape-exact either way
    return Status::Ok();
  });
}

}  // extern "C"
