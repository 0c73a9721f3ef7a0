// capi internals of the model API (acl_mdl.h): the table of loaded models and
// the dataset accessors that load, desc, gear and execute entry points share.
//
// Model ids are uint32 from 1, never reused within a process (an id from an
// unloaded model stays invalid). Each entry holds the model, the context it was
// loaded under and that context's device.
//
// Contexts: a model may be executed under any context of the device it was
// loaded on (every context of a CPU device shares its memory, and CANN
// programs commonly execute from worker threads that set their own context on
// that device); a context of another device is refused with
// ACL_ERROR_RT_MODEL_CONTEXT, since the model's memory belongs to its device.
//
// Unload and executions in flight: unload takes the id out of the table at
// once, then waits for executions that are running (sync calls, and async
// tasks that already started) and releases the model's own memory before it
// returns. An aclmdlExecuteAsync task still queued when the model is unloaded
// does not run the model: it fails with ACL_ERROR_INVALID_MODEL_ID, reported at
// the stream's synchronisation. Queued tasks hold the entry, not the model, so
// unload never waits on a stream (no deadlock with an unfinished stream) and
// never frees memory under a running execution.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/loaded_model.h"
#include "runtime/runtime.h"

struct aclmdlDataset;

namespace openacl::capi {

class ModelEntry {
 public:
  ModelEntry(uint32_t id, std::shared_ptr<model::LoadedModel> model, std::shared_ptr<rt::Context> context)
      : id_(id), model_(std::move(model)), context_(std::move(context)), device_(context_->device()) {}

  uint32_t id() const { return id_; }
  int device() const { return device_; }
  const std::shared_ptr<rt::Context>& context() const { return context_; }

  // Marks an execution as running and hands out the model for its duration;
  // kInvalidModelId once the model is unloaded. Pair with end_execution().
  Status begin_execution(const char* what, std::shared_ptr<model::LoadedModel>* out);
  void end_execution();

  // The model for descriptions and gear selection (nullptr once unloaded).
  std::shared_ptr<model::LoadedModel> model() const;

  // Refuses further executions, waits for running ones, drops the model.
  void unload();

  // kInvalidModelId when the context the model was loaded under is gone
  // (aclrtResetDevice, aclrtDestroyContext, aclFinalize): its memory went (or
  // goes) with it, so the model must not run; unload and load it again.
  Status check_context_alive() const;

 private:
  const uint32_t id_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::shared_ptr<model::LoadedModel> model_;  // nullptr after unload
  int running_ = 0;
  const std::shared_ptr<rt::Context> context_;
  const int device_;
};

// RAII pairing of begin_execution / end_execution.
class ExecutionScope {
 public:
  ExecutionScope() = default;
  ExecutionScope(const ExecutionScope&) = delete;
  ExecutionScope& operator=(const ExecutionScope&) = delete;
  ~ExecutionScope() {
    if (entry_) entry_->end_execution();
  }
  Status begin(const std::shared_ptr<ModelEntry>& entry, const char* what) {
    OPENACL_RETURN_IF_ERROR(entry->begin_execution(what, &model_));
    entry_ = entry;
    return Status::Ok();
  }
  model::LoadedModel& model() { return *model_; }

 private:
  std::shared_ptr<ModelEntry> entry_;
  std::shared_ptr<model::LoadedModel> model_;
};

// Adds a loaded model; *id gets the new id.
Status register_model(std::shared_ptr<model::LoadedModel> model, std::shared_ptr<rt::Context> context, uint32_t* id);
// The entry of a loaded model; kInvalidModelId (naming the id) otherwise.
Status find_model(uint32_t id, std::shared_ptr<ModelEntry>* out);
// Takes the id out of the table; kInvalidModelId if it is not loaded.
Status remove_model(uint32_t id, std::shared_ptr<ModelEntry>* out);
// Unloads every model (waiting for running executions); returns how many.
// For aclFinalize, which releases all device memory: models must go first.
size_t unload_all_models();

// kRtModelContext when `device` is not the model's device. `where` says which
// context or stream was used ("the current context", "stream 0x...").
Status check_model_device(const ModelEntry& entry, int device, const std::string& where);

// The allocator a model loaded under `context` uses for the regions the caller
// did not provide: the runtime's device memory (counted against the device),
// allocated under the calling thread's context when it is on the model's
// device, else under `context`.
model::Allocator device_allocator(std::shared_ptr<rt::Context> context);

// ---- model files ----

// A model file mapped read-only; `keep` owns the mapping (LoadedModel keeps it
// for in-place weights).
struct ModelFile {
  const void* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> keep;
  std::string dir;  // the file's folder: ONNX external data is looked up there
};
// kInvalidParam for NULL/"" paths, kInvalidFile for a missing, unreadable,
// empty or non-regular file (naming the path), kReadModelFailure when mapping
// fails.
Status map_model_file(const char* path, const char* arg_name, ModelFile* out);

// ---- datasets (mdl_dataset.cpp) ----

// The data buffers of a live dataset as {address, size}, in order; `role`
// ("input", "output") names the dataset in messages. A buffer destroyed after
// it was added reads as {nullptr, 0}.
Status dataset_buffers(const aclmdlDataset* dataset, const char* role, std::vector<model::IoBuffer>* out);
// The buffer at `index` of a live dataset.
Status dataset_buffer_at(const aclmdlDataset* dataset, size_t index, model::IoBuffer* out);

// Checks a buffer a model will read or write against the memory registry:
// a registered block must cover [data, data + size); in strict mode the memory
// must be device memory (host or unknown memory is refused), elsewhere host
// and unregistered memory are accepted with one warning per call site
// (compat-notes §1.5, §1.6). `what` names it in messages; formatted only when
// one is needed (this runs for every buffer of every execution).
struct IoWhat {
  const char* kind;  // "input", "output"
  size_t index;
  const char* name;  // the tensor's name
  uint32_t model;
  std::string str() const;  // "input 1 ('x') of model 3"
};
Status check_io_memory(const model::IoBuffer& buffer, const IoWhat& what, const char* api);

}  // namespace openacl::capi
