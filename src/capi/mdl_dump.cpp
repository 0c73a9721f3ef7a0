// Model dump: acl.json `dump` and aclmdlInitDump / aclmdlSetDump /
// aclmdlFinalizeDump (spec §3.8, compat-notes §4), and the observer that
// writes the tensors of one execution (mdl_dump.h, mdl_dump_write.h).
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "capi/capi.h"
#include "capi/mdl_dump.h"
#include "capi/mdl_dump_write.h"
#include "capi/mdl_observe.h"
#include "kernels/cpu/blocked_layout.h"

namespace openacl::capi {

namespace {

// What one configuration writes; shared by the observers of the executions
// that started under it (they keep it alive past a FinalizeDump).
struct DumpSession {
  DumpConfig cfg;
  std::string root;  // {dump_path}/{time}
  std::atomic<uint64_t> failures{0};
  std::atomic<bool> warned{false};
  std::mutex mutex;
  std::set<uint32_t> warned_layers;  // model ids told about layers they lack

  // Write errors never fail the execution: the first is logged, all are counted.
  void fail(const std::string& what) {
    failures.fetch_add(1, std::memory_order_relaxed);
    if (!warned.exchange(true))
      OACL_WARN("dump: %s (the execution goes on; further dump write errors are counted, not logged)", what.c_str());
  }
};

struct DumpState {
  std::mutex mutex;
  bool from_acl_json = false;   // configured by acl.json at aclInit
  bool api_initialized = false;  // aclmdlInitDump called
  std::shared_ptr<DumpSession> session;
  // Dumped executions per model id, across sessions: ids are never reused,
  // so an index folder is never written twice within a process.
  std::map<uint32_t, uint64_t> next_index;
};

DumpState& state() {
  static auto* s = new DumpState();  // never destroyed: executions may run during exit
  return *s;
}

// The only thing an execution reads when no dump is configured.
std::atomic<bool> g_model_dump_active{false};

std::string session_time() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  return buf;
}

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Installs `cfg` (caller holds the state's mutex).
void start_session(DumpState& st, DumpConfig cfg) {
  if (st.session && st.session->failures.load() > 0)
    OACL_WARN("dump: %llu dump file(s) under %s could not be written",
              static_cast<unsigned long long>(st.session->failures.load()), st.session->root.c_str());
  st.session.reset();
  g_model_dump_active.store(false, std::memory_order_release);
  if (!cfg.model_dump()) return;
  auto s = std::make_shared<DumpSession>();
  s->root = cfg.path + "/" + session_time();
  s->cfg = std::move(cfg);
  OACL_INFO("dump: %zu model(s) dumped under %s", s->cfg.models.size(), s->root.c_str());
  st.session = std::move(s);
  g_model_dump_active.store(true, std::memory_order_release);
}

void end_session(DumpState& st) { start_session(st, DumpConfig{}); }

// Writes the selected ops' tensors of one execution into `dir`.
class DumpObserver : public model::NodeObserver {
 public:
  DumpObserver(std::shared_ptr<DumpSession> session, const std::set<std::string>* layers, std::string dir,
               uint32_t model_id, std::string model_name)
      : session_(std::move(session)),
        layers_(layers),
        dir_(std::move(dir)),
        model_id_(model_id),
        model_name_(std::move(model_name)) {}

  // A listed layer that no op of the model has is most likely a typo: say so
  // once per model (after its first execution, when every op was seen).
  ~DumpObserver() override {
    if (layers_->empty() || matched_.size() == layers_->size() || next_task_ == 0) return;
    {
      std::lock_guard<std::mutex> lock(session_->mutex);
      if (!session_->warned_layers.insert(model_id_).second) return;
    }
    std::string missing;
    for (const std::string& l : *layers_)
      if (!matched_.count(l)) missing += (missing.empty() ? "'" : ", '") + l + "'";
    OACL_WARN("dump: model '%s' (id %u) has no op named %s; dump_list layer names are the model's op names",
              model_name_.c_str(), model_id_, missing.c_str());
  }

  void before_node(const model::CompiledNode& node, const std::vector<kernels::Tensor>& values) override {
    task_id_ = next_task_++;
    selected_ = node.node && (layers_->empty() || layers_->count(node.node->name));
    if (!selected_) return;
    if (!layers_->empty()) matched_.insert(node.node->name);
    base_ = dir_ + "/" + dump_safe_name(node.node->op_type, "Op") + "." +
            dump_safe_name(node.node->name, "node" + std::to_string(task_id_)) + "." + std::to_string(task_id_) +
            ".0." + std::to_string(now_us());
    stats_.clear();
    if (session_->cfg.mode != DumpMode::kOutput) write_all(node.inputs, node.input_blocks, values, "input");
  }

  void after_node(const model::CompiledNode& node, const std::vector<kernels::Tensor>& values, int64_t,
                  int64_t) override {
    if (!selected_) return;
    selected_ = false;
    if (session_->cfg.mode != DumpMode::kInput) write_all(node.outputs, node.output_blocks, values, "output");
    if (session_->cfg.data == DumpData::kStats) write_text(base_ + ".stats.csv", dump_stats_header() + stats_);
  }

 private:
  // blocks: per tensor, the channel block it is stored in (0 = plain; see
  // CompiledNode): blocked ones are written as the plain N C H W the model
  // describes, so a dump reads the same whatever layouts the kernels chose.
  void write_all(const std::vector<int>& ids, const std::vector<int64_t>& blocks,
                 const std::vector<kernels::Tensor>& values, const char* role) {
    for (size_t i = 0; i < ids.size(); ++i) {
      const int id = ids[i];
      if (id < 0 || static_cast<size_t>(id) >= values.size()) continue;  // omitted optional tensor
      const std::string label = std::string(role) + "." + std::to_string(i);
      const kernels::Tensor* t = &values[static_cast<size_t>(id)];
      kernels::Tensor plain;
      const int64_t block = i < blocks.size() ? blocks[i] : 0;
      if (block && t->data && t->dtype == graph::DType::kFloat32 && t->rank() >= 3 && t->dims[1] % block == 0) {
        plain_buf_.resize(static_cast<size_t>(t->elements()));
        kernels::cpu::blocked_to_plain(t->as<float>(), plain_buf_.data(), t->dims, block);
        plain = kernels::Tensor{t->dtype, t->dims, plain_buf_.data()};
        t = &plain;
      }
      if (session_->cfg.data == DumpData::kStats) {
        stats_ += dump_stats_line(label, *t);
        continue;
      }
      if (!make_dir()) return;
      std::string error;
      if (!write_npy(base_ + "." + label + ".npy", *t, &error)) session_->fail(error);
    }
  }

  void write_text(const std::string& path, const std::string& text) {
    if (!make_dir()) return;
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) session_->fail("cannot write '" + path + "'");
  }

  bool make_dir() {
    if (dir_made_) return true;
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) {
      session_->fail("cannot create '" + dir_ + "': " + ec.message());
      return false;
    }
    dir_made_ = true;
    return true;
  }

  std::shared_ptr<DumpSession> session_;
  const std::set<std::string>* layers_;  // owned by session_->cfg
  std::string dir_;
  uint32_t model_id_;
  std::string model_name_;
  std::set<std::string> matched_;  // listed layers seen in this execution
  bool dir_made_ = false;
  uint64_t next_task_ = 0;
  uint64_t task_id_ = 0;
  bool selected_ = false;
  std::string base_;
  std::string stats_;
  std::vector<float> plain_buf_;  // a blocked tensor converted to plain (kept: dumps repeat per node)
};

Status read_text_file(const char* path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Errorf(code::kInvalidFile, "cannot open dump config file '%s'; pass an existing JSON file", path);
  std::stringstream buf;
  buf << in.rdbuf();
  *out = buf.str();
  return Status::Ok();
}

}  // namespace

std::unique_ptr<model::NodeObserver> dump_observer(const ModelEntry& entry, int device) {
  if (!g_model_dump_active.load(std::memory_order_acquire)) return nullptr;
  auto model = entry.model();
  if (!model) return nullptr;
  DumpState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (!st.session) return nullptr;
  const std::string& name = model->info().name;
  auto it = st.session->cfg.models.find(name);
  if (it == st.session->cfg.models.end()) return nullptr;
  const uint64_t index = st.next_index[entry.id()]++;
  std::string dir = st.session->root + "/" + std::to_string(device) + "/" + dump_safe_name(name, "model") + "/" +
                    std::to_string(entry.id()) + "/" + std::to_string(index);
  return std::make_unique<DumpObserver>(st.session, &it->second, std::move(dir), entry.id(), name);
}

Status dump_from_acl_json(const std::string& raw_json) {
  bool has_section = false;
  DumpConfig cfg;
  OPENACL_RETURN_IF_ERROR(parse_dump_json(raw_json, "acl.json", &has_section, &cfg));
  DumpState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.from_acl_json = has_section && (cfg.model_dump() || cfg.op_switch);
  st.api_initialized = false;
  start_session(st, std::move(cfg));
  return Status::Ok();
}

void dump_reset() {
  DumpState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  end_session(st);
  st.from_acl_json = false;
  st.api_initialized = false;
}

bool single_op_dump_enabled() {
  DumpState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  return st.session ? st.session->cfg.op_switch : false;
}

}  // namespace openacl::capi

using namespace openacl;
using capi::guarded;

extern "C" {

aclError aclmdlInitDump(void) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    auto& st = capi::state();
    std::lock_guard<std::mutex> lock(st.mutex);
    if (st.from_acl_json)
      return Errorf(code::kDumpAlreadyRun,
                    "the dump is already configured by acl.json's \"dump\" section at aclInit; use one or the other");
    if (st.api_initialized)
      return Errorf(code::kDumpAlreadyRun, "aclmdlInitDump was already called; call aclmdlFinalizeDump first");
    st.api_initialized = true;
    return Status::Ok();
  });
}

aclError aclmdlSetDump(const char* dumpCfgPath) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    OPENACL_RETURN_IF_ERROR(capi::not_null(dumpCfgPath, "dumpCfgPath"));
    auto& st = capi::state();
    {
      std::lock_guard<std::mutex> lock(st.mutex);
      if (!st.api_initialized)
        return Errorf(code::kDumpNotRun, "aclmdlInitDump was not called; call it before aclmdlSetDump");
    }
    if (*dumpCfgPath == '\0')
      return Errorf(code::kInvalidParam, "dumpCfgPath is \"\"; pass the path of a JSON file with a \"dump\" section");
    std::string text;
    OPENACL_RETURN_IF_ERROR(capi::read_text_file(dumpCfgPath, &text));
    bool has_section = false;
    capi::DumpConfig cfg;
    const std::string source = std::string("dump config '") + dumpCfgPath + "'";
    OPENACL_RETURN_IF_ERROR(capi::parse_dump_json(text, source, &has_section, &cfg));
    if (!has_section)
      return Errorf(code::kInvalidDumpConfig, "%s has no \"dump\" section; write {\"dump\": {\"dump_path\": ..., "
                    "\"dump_list\": [...]}}", source.c_str());
    std::lock_guard<std::mutex> lock(st.mutex);
    if (!st.api_initialized)  // a FinalizeDump raced with this call
      return Errorf(code::kDumpNotRun, "aclmdlFinalizeDump ended the dump during aclmdlSetDump; call aclmdlInitDump");
    capi::start_session(st, std::move(cfg));
    return Status::Ok();
  });
}

aclError aclmdlFinalizeDump(void) {
  return guarded(__func__, [&] {
    OPENACL_RETURN_IF_ERROR(capi::require_init());
    auto& st = capi::state();
    std::lock_guard<std::mutex> lock(st.mutex);
    if (!st.api_initialized)
      return Errorf(code::kDumpNotRun,
                    st.from_acl_json ? "the dump was configured by acl.json; it ends at aclFinalize, not here"
                                     : "aclmdlInitDump was not called; there is no dump to finalize");
    capi::end_session(st);
    st.api_initialized = false;
    return Status::Ok();
  });
}

}  // extern "C"
