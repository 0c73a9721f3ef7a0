// A loaded model: what aclmdlLoad* creates and aclmdlExecute runs.
//
// Loading takes model bytes (ONNX or .om, by content), turns an ONNX model
// into the same optimised form atc stores (optimize() + the .om encoding, so
// both formats load through one path), places the weights (the file's own
// mapped bytes, or a copy in weight memory that is the library's or the
// caller's), compiles one plan per gear (one plan for a gear-less model),
// and builds executors. Execution checks every buffer against the model
// before anything runs and never reads or writes past a buffer.
//
// The description (ModelInfo) is what aclmdlDesc reports: inputs (with the
// extra ascend_mbatch_shape_data input of gear models, last), outputs, dims
// with -1 for dims chosen at execution, bytes of the largest gear, formats,
// gears. describe() produces it without compiling kernels (GetDescFromFile,
// QuerySize).
//
// Knows no acl* types: formats are aclFormat values carried as ints, dtypes
// are graph::DType (capi converts).
//
// Thread-safety: execute() may be called from several threads at once; each
// call takes a free executor (creating one, with its own work memory, when
// all are busy). With caller-provided work memory there is one executor and
// calls are serialised.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "model/compiled_model.h"
#include "model/executor.h"
#include "model/om_format.h"

namespace openacl::model {

// aclFormat values used for model inputs/outputs.
inline constexpr int kFormatNCHW = 0;
inline constexpr int kFormatNHWC = 1;
inline constexpr int kFormatND = 2;

struct IoInfo {
  std::string name;
  graph::DType dtype = graph::DType::kUndefined;
  std::vector<int64_t> dims;  // -1: chosen at execution (gear or free dim)
  // Per dim [min, max]; max -1 when unbounded. Equal ends for fixed dims.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  size_t bytes = 0;  // the largest gear's (or shape in range); 0 when a dim is unbounded
  bool ranged = false;  // free dims carry atc's ranges, which execution enforces
  int format = kFormatND;
};

struct ModelInfo {
  std::vector<IoInfo> inputs;  // the gear input last, when there are gears
  std::vector<IoInfo> outputs;
  GearSpec gears;
  int gear_input = -1;  // index of ascend_mbatch_shape_data in inputs, or -1
  // Output dims per gear (gear-less: one entry, dims as in outputs).
  std::vector<std::vector<std::vector<int64_t>>> gear_output_dims;
  size_t work_size = 0;    // the largest gear's plan; 0 when shapes are only known at execution
  size_t weight_size = 0;  // bytes of the weight arena
  bool dynamic = false;    // some input dim is free (no gear covers it)
  std::string name;        // graph name, for dumps and messages
};

// Device memory for the model's arenas. The loader calls these for the
// regions the caller did not provide (capi passes the runtime's device
// allocator so the memory counts against the device).
struct Allocator {
  std::function<Status(size_t bytes, void** out)> allocate;
  std::function<void(void* p)> release;
};

struct LoadOptions {
  void* work_ptr = nullptr;  // caller's work memory, or nullptr
  size_t work_size = 0;
  void* weight_ptr = nullptr;  // caller's weight memory, or nullptr
  size_t weight_size = 0;
  std::string base_dir;  // ONNX external data folder (file loads)
  Allocator allocator;   // default: aligned host memory
  // The model bytes are a private, read-only mapping of a file (load_file,
  // aclmdlLoadFromFile): the pages of weights that kernels packed into their
  // own layouts are then released after packing (CompileOptions::release_begin)
  // rather than held twice. Never set it for memory that is not such a
  // mapping: released anonymous pages would read back as zeros.
  bool file_mapped = false;
};

// One buffer of an execution: address and capacity in bytes.
struct IoBuffer {
  void* data = nullptr;
  size_t size = 0;
};

// Turns a freshly imported graph into the stored form: runs the
// shape-independent passes (CompileOptions as for compile, kernels chosen but
// not created, so an unsupported node fails here, all listed at once).
Status optimize(std::shared_ptr<graph::Graph> graph, const CompileOptions& options);

// Reads model bytes of either format into an OmModel (ONNX is imported and
// optimised). `base_dir`: folder for ONNX external data ("" refuses it).
Status read_model(const void* data, size_t size, const std::string& base_dir, OmModel* out);

// The description without loading (no kernels, no executors).
Status describe(const void* data, size_t size, const std::string& base_dir, ModelInfo* out);

class LoadedModel {
 public:
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  // `keep` (optional) owns `data` (e.g. a mapped file): weights of an .om
  // then stay in place instead of being copied, when no weight memory is
  // given. Without `keep` the bytes are only read during the call.
  static Status load(const void* data, size_t size, std::shared_ptr<const void> keep, const LoadOptions& options,
                     std::shared_ptr<LoadedModel>* out);
  // Maps the file and loads it (external data is looked up beside it).
  static Status load_file(const std::string& path, LoadOptions options, std::shared_ptr<LoadedModel>* out);

  const ModelInfo& info() const { return info_; }
  // Bytes of the mapped file's weights released after their kernels packed
  // them (LoadOptions::file_mapped), over all gears.
  size_t released_weight_bytes() const;
  // An .om's PACKED blobs (atc's weights packed ahead): used where they lie
  // in the model bytes while these stay (a mapped file, bytes kept alive
  // with `keep`, our copy of lent bytes), copied first when the bytes are
  // lent and the weights go to the caller's memory. The cache that served
  // them (used(): how many blobs), or nullptr for an .om without them.
  const kernels::PackCache* packs() const { return packs_.get(); }

  // Gears: checks `values` are one of the gears of `kind` and writes them as
  // int64 into `buffer` (the gear input's data buffer). Remembers the gear
  // for current_output_dims().
  Status select_gear(GearKind kind, const std::vector<int64_t>& values, IoBuffer buffer);
  // Output dims under the gear selected last (the largest gear before any).
  std::vector<int64_t> current_output_dims(size_t index) const;

  // Runs the model. inputs: one per ModelInfo input (the gear input
  // included); outputs: one per output. input_dims: optional real shapes
  // (empty vector = use the model's), needed for free dims that cannot be
  // deduced from the buffer size. output_dims (optional) receives the shapes
  // written. Errors: kModelInputNotMatch / kModelOutputNotMatch with expected
  // vs given bytes, shape and dtype; kGeDynamicBatchSizeInvalid for a gear
  // input holding no gear; kRtModelExecute for a failure inside the model.
  // observer (optional) sees every node run (dump, profiling).
  Status execute(const std::vector<IoBuffer>& inputs, const std::vector<IoBuffer>& outputs,
                 const std::vector<std::vector<int64_t>>& input_dims = {},
                 std::vector<std::vector<int64_t>>* output_dims = nullptr, NodeObserver* observer = nullptr);

 private:
  LoadedModel() = default;
  struct Runner;  // an executor and the tensors of its call
  struct Plan;    // one gear: compiled model + runners
  Status execute_plan(Plan& plan, const std::vector<IoBuffer>& inputs, const std::vector<IoBuffer>& outputs,
                      const std::vector<std::vector<int64_t>>& input_dims,
                      std::vector<std::vector<int64_t>>* output_dims, NodeObserver* observer);
  Status run_on(Runner& runner, const CompiledModel& cm, const std::vector<IoBuffer>& inputs,
                const std::vector<IoBuffer>& outputs, const std::vector<std::vector<int64_t>>& input_dims,
                std::vector<std::vector<int64_t>>* output_dims, NodeObserver* observer);

  ModelInfo info_;
  std::vector<std::unique_ptr<Plan>> plans_;  // per gear (one when gear-less)
  Allocator allocator_;
  void* primary_arena_ = nullptr; // work memory we allocated for the primary executors
  void* primary_ = nullptr;       // the primary work memory (ours or the caller's)
  size_t primary_size_ = 0;
  bool user_work_ = false;        // primary_ is the caller's: executions wait for it
  std::mutex primary_mutex_;      // held while a primary executor runs (all gears share primary_)
  std::shared_ptr<const void> keep_;  // keeps the model bytes read in place alive (mapped, converted or copied)
  std::unique_ptr<kernels::PackCache> packs_;
  int largest_gear_ = 0;
  std::atomic<int> current_gear_{-1};
};

}  // namespace openacl::model
