// The loaded-model table and the checks execute and load share (mdl_registry.h).
#include "capi/mdl_registry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "base/file_map.h"
#include "capi/capi.h"

namespace openacl::capi {

namespace {

struct Table {
  std::mutex mutex;
  std::map<uint32_t, std::shared_ptr<ModelEntry>> models;
  uint32_t next_id = 1;
};

// Never destroyed: models may still be loaded at process exit, and their
// destruction then would run after the runtime's statics are gone.
Table& table() {
  static auto* t = new Table();
  return *t;
}

Status unknown_id(uint32_t id) {
  return Errorf(code::kInvalidModelId, "model id %u is not loaded (never loaded, or already unloaded); pass an id "
                                       "returned by aclmdlLoad*",
                id);
}

}  // namespace

Status ModelEntry::begin_execution(const char* what, std::shared_ptr<model::LoadedModel>* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!model_)
    return Errorf(code::kInvalidModelId,
                  "model %u was unloaded before this %s ran; unload a model only after its executions returned "
                  "and the streams that execute it are synchronised",
                  id_, what);
  ++running_;
  *out = model_;
  return Status::Ok();
}

void ModelEntry::end_execution() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--running_ == 0) idle_.notify_all();
}

std::shared_ptr<model::LoadedModel> ModelEntry::model() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return model_;
}

void ModelEntry::unload() {
  std::shared_ptr<model::LoadedModel> doomed;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return running_ == 0; });
    doomed = std::move(model_);
  }
  // Released outside the lock. Descs filled from the model hold only the entry
  // (GetCurOutputDims sees the model gone), so this is the last reference
  // unless an execution is starting; begin_execution refuses those now.
  doomed.reset();
}

Status ModelEntry::check_context_alive() const {
  if (context_->alive()) return Status::Ok();
  return Errorf(code::kInvalidModelId,
                "model %u was loaded under a context of device %d that no longer exists (aclrtResetDevice, "
                "aclrtDestroyContext or aclFinalize released it, and the model's memory with it); unload the model "
                "and load it again",
                id_, device_);
}

size_t unload_all_models() {
  std::map<uint32_t, std::shared_ptr<ModelEntry>> all;
  {
    Table& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    all.swap(t.models);
  }
  for (auto& [id, entry] : all) entry->unload();
  return all.size();
}

Status register_model(std::shared_ptr<model::LoadedModel> model, std::shared_ptr<rt::Context> context,
                      uint32_t* id) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.next_id == 0)  // wrapped after 2^32 - 1 loads: ids are never reused
    return Errorf(code::kRtMemoryAllocation, "all 4294967295 model ids of this process have been used");
  uint32_t new_id = t.next_id++;
  t.models.emplace(new_id, std::make_shared<ModelEntry>(new_id, std::move(model), std::move(context)));
  *id = new_id;
  return Status::Ok();
}

Status find_model(uint32_t id, std::shared_ptr<ModelEntry>* out) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.models.find(id);
  if (it == t.models.end()) return unknown_id(id);
  *out = it->second;
  return Status::Ok();
}

Status remove_model(uint32_t id, std::shared_ptr<ModelEntry>* out) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.models.find(id);
  if (it == t.models.end()) return unknown_id(id);
  *out = std::move(it->second);
  t.models.erase(it);
  return Status::Ok();
}

Status check_model_device(const ModelEntry& entry, int device, const std::string& where) {
  if (device == entry.device()) return Status::Ok();
  return Errorf(code::kRtModelContext,
                "model %u was loaded on device %d but %s is on device %d; execute it under a context of device %d "
                "(aclrtSetDevice(%d) or a context created on it)",
                entry.id(), entry.device(), where.c_str(), device, entry.device(), entry.device());
}

model::Allocator device_allocator(std::shared_ptr<rt::Context> context) {
  model::Allocator a;
  a.allocate = [context](size_t bytes, void** out) -> Status {
    rt::Runtime& run = runtime();
    std::shared_ptr<rt::Context> cur;
    if (run.current_context(&cur).ok() && cur->device() == context->device()) return run.malloc_device(bytes, false, out);
    // A thread without a context on the model's device (a stream worker runs
    // its tasks without one): allocate under the model's own context, then
    // put the thread's context back.
    if (!context->alive())
      return Errorf(code::kRtContextNull,
                    "the context model memory was allocated under (device %d) was destroyed or its device reset; "
                    "reload the model",
                    context->device());
    OPENACL_RETURN_IF_ERROR(run.set_current_context(context.get()));
    Status st = run.malloc_device(bytes, false, out);
    if (cur) (void)run.set_current_context(cur.get());
    return st;
  };
  a.release = [](void* p) {
    if (p) (void)runtime().free_device(p);  // fails only after aclFinalize, when the block is already gone
  };
  return a;
}

Status map_model_file(const char* path, const char* arg_name, ModelFile* out) {
  if (!path) return Errorf(code::kInvalidParam, "%s is NULL; pass the path of an ONNX or OpenACL .om file", arg_name);
  if (!*path) return Errorf(code::kInvalidParam, "%s is empty; pass the path of an ONNX or OpenACL .om file", arg_name);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Errorf(code::kInvalidFile, "cannot open model file '%s': %s%s", path, std::strerror(err),
                  err == ENOENT ? "; check the path (relative paths start at the working directory)" : "");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Errorf(code::kInvalidFile, "model path '%s' is not a regular file; pass the model file itself", path);
  }
  if (st.st_size == 0) {
    ::close(fd);
    return Errorf(code::kInvalidFile, "model file '%s' is empty", path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  std::shared_ptr<const void> mapped = map_file_readonly(fd, size);
  int err = errno;
  ::close(fd);
  if (!mapped)
    return Errorf(code::kReadModelFailure, "cannot read model file '%s' (%zu bytes): %s", path, size,
                  std::strerror(err));
  out->data = mapped.get();
  out->size = size;
  out->keep = std::move(mapped);
  std::string s(path);
  size_t slash = s.find_last_of('/');
  out->dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : s.substr(0, slash));
  return Status::Ok();
}

std::string IoWhat::str() const { return strformat("%s %zu ('%s') of model %u", kind, index, name, model); }

Status check_io_memory(const model::IoBuffer& buffer, const IoWhat& what_, const char* api) {
  if (!buffer.data) return Status::Ok();  // a (NULL, 0) placeholder: the model checks its size
  struct Lazy {  // what_.str(), made on first use
    const IoWhat& w;
    std::string s;
    const char* c_str() {
      if (s.empty()) s = w.str();
      return s.c_str();
    }
  } what{what_, {}};
  rt::Runtime& run = runtime();
  const auto addr = reinterpret_cast<uintptr_t>(buffer.data);
  if (auto a = run.memory().find(buffer.data)) {
    if (buffer.size > a->end() - addr)
      return Errorf(code::kInvalidParam,
                    "%s: data buffer %p claims %zu bytes but its block (%p, %zu bytes) ends %zu bytes earlier; "
                    "pass the size that was allocated",
                    what.c_str(), buffer.data, buffer.size, reinterpret_cast<void*>(a->base), a->size,
                    static_cast<size_t>(addr + buffer.size - a->end()));
    if (run.strict() && buffer.size > a->base + a->requested - std::min(addr, a->base + a->requested))
      return Errorf(code::kInvalidParam,
                    "strict mode: %s: data buffer %p + %zu bytes goes past the %zu bytes requested for block %p",
                    what.c_str(), buffer.data, buffer.size, a->requested, reinterpret_cast<void*>(a->base));
    if (a->kind == rt::MemKind::kDevice) return Status::Ok();
    if (run.strict())
      return Errorf(code::kInvalidParam,
                    "strict mode: %s: data buffer %p is host memory from aclrtMallocHost; a model reads and writes "
                    "device memory: allocate it with aclrtMalloc and copy with aclrtMemcpy",
                    what.c_str(), buffer.data);
    rt::warn_once(strformat("%s/host-buffer", api),
                  "%s: %s is host memory from aclrtMallocHost, not device memory; used anyway (the NPU would "
                  "not accept it; OPENACL_STRICT=1 rejects it)",
                  api, what.c_str());
    return Status::Ok();
  }
  if (run.strict()) {
    if (auto f = run.memory().find_freed(buffer.data))
      return Errorf(code::kInvalidParam,
                    "strict mode: %s: data buffer %p is inside block %p (%zu bytes) that was already freed (use after "
                    "free)",
                    what.c_str(), buffer.data, reinterpret_cast<void*>(f->base), f->requested);
    return Errorf(code::kInvalidParam,
                  "strict mode: %s: data buffer %p is not memory allocated by OpenACL; a model reads and writes "
                  "device memory: allocate it with aclrtMalloc",
                  what.c_str(), buffer.data);
  }
  rt::warn_once(strformat("%s/unregistered-buffer", api),
                "%s: %s (%p) is host memory not allocated by OpenACL; used anyway, its size cannot be checked "
                "(OPENACL_STRICT=1 rejects it)",
                api, what.c_str(), buffer.data);
  return Status::Ok();
}

}  // namespace openacl::capi
