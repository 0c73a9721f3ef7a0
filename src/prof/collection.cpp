#include "prof/collection.h"

#include <filesystem>
#include <mutex>
#include <set>

#include "prof/output.h"

namespace openacl::prof {

namespace {

constexpr size_t kMaxEvents = size_t{4} << 20;

struct State {
  std::mutex mutex;
  bool initialized = false;
  std::string dir;
  std::set<uint32_t> running;  // devices
  uint32_t what = 0;
  CollectedData data;
};

State& state() {
  static auto* s = new State();  // never destroyed: API calls may trace during exit
  return *s;
}

void publish(State& s) {
  detail::g_collect.store(s.running.empty() ? 0 : s.what, std::memory_order_relaxed);
}

}  // namespace

Status collection_init(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    return Errorf(code::kInvalidParam, "cannot create the result folder '%s' (%s); pass a writable folder",
                  dir.c_str(), ec ? ec.message().c_str() : "not a folder");
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.initialized = true;
  s.dir = dir;
  return Status::Ok();
}

bool collection_initialized() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.initialized;
}

std::string collection_dir() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.dir;
}

bool collection_start(const std::vector<uint32_t>& devices, uint32_t what, uint32_t* busy) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (uint32_t d : devices)
    if (s.running.count(d)) {
      *busy = d;
      return false;
    }
  s.running.insert(devices.begin(), devices.end());
  s.what |= what;
  publish(s);
  return true;
}

bool collection_running(const std::vector<uint32_t>& devices) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (uint32_t d : devices)
    if (!s.running.count(d)) return false;
  return !devices.empty();
}

bool collection_any_running() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return !s.running.empty();
}

namespace {

// Takes the events of `devices` (all API events) out of the state; the caller
// holds the mutex.
CollectedData take(State& s, const std::vector<uint32_t>& devices) {
  CollectedData out;
  out.devices = devices;
  const std::set<uint32_t> stop(devices.begin(), devices.end());
  std::vector<TaskEvent> keep;
  for (TaskEvent& e : s.data.tasks) {
    if (stop.count(static_cast<uint32_t>(e.device)))
      out.tasks.push_back(std::move(e));
    else
      keep.push_back(std::move(e));
  }
  s.data.tasks = std::move(keep);
  out.api = std::move(s.data.api);
  s.data.api.clear();
  out.marks = std::move(s.data.marks);
  s.data.marks.clear();
  out.api_dropped = s.data.api_dropped;
  out.tasks_dropped = s.data.tasks_dropped;
  s.data.api_dropped = s.data.tasks_dropped = 0;
  for (uint32_t d : devices) s.running.erase(d);
  if (s.running.empty()) s.what = 0;
  publish(s);
  return out;
}

}  // namespace

Status collection_stop(const std::vector<uint32_t>& devices, std::string* prof_dir) {
  CollectedData data;
  std::string dir;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    data = take(s, devices);
    dir = s.dir;
  }
  // Written outside the mutex: tracing threads must not wait for the disk.
  return write_collection(dir, data, prof_dir);
}

Status collection_finalize(std::string* prof_dir) {
  std::vector<uint32_t> devices;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    devices.assign(s.running.begin(), s.running.end());
  }
  Status st = devices.empty() ? Status::Ok() : collection_stop(devices, prof_dir);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.initialized = false;
  s.dir.clear();
  s.data = CollectedData{};
  return st;
}

void record_api(const ApiEvent& e) noexcept {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.running.empty() || !(s.what & kCollectApi)) return;
  if (s.data.api.size() >= kMaxEvents) {
    ++s.data.api_dropped;
    return;
  }
  try {
    s.data.api.push_back(e);
  } catch (...) {
    ++s.data.api_dropped;
  }
}

void record_task(TaskEvent&& e) noexcept {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.running.count(static_cast<uint32_t>(e.device)) || !(s.what & kCollectTasks)) return;
  if (s.data.tasks.size() >= kMaxEvents) {
    ++s.data.tasks_dropped;
    return;
  }
  try {
    s.data.tasks.push_back(std::move(e));
  } catch (...) {
    ++s.data.tasks_dropped;
  }
}

namespace {

void keep_mark(State& s, MarkEvent&& e) {
  if (s.data.marks.size() >= kMaxEvents) {
    ++s.data.api_dropped;
    return;
  }
  try {
    s.data.marks.push_back(std::move(e));
  } catch (...) {
    ++s.data.api_dropped;
  }
}

}  // namespace

void record_mark(MarkEvent&& e) noexcept {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.running.empty() && (s.what & kCollectTx)) keep_mark(s, std::move(e));
}

void record_step(MarkEvent&& e) noexcept {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.running.empty()) keep_mark(s, std::move(e));
}

}  // namespace openacl::prof
