#include "prof/output.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace openacl::prof {

namespace {

// Steady ns -> "12345.678" (microseconds, three decimals).
std::string us(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(std::llabs(ns % 1000)));
  return buf;
}
std::string us(double ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", ns / 1000.0);
  return buf;
}

// RFC 4180: quote fields holding a separator, a quote or a line break.
std::string csv(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string join(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv(fields[i]);
  return line + "\n";
}

Status write_file(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (ec || !out)
    return Errorf(code::kWriteFile, "cannot write the profiling file '%s'; check the folder given to aclprofInit",
                  path.c_str());
  return Status::Ok();
}

std::string stamp(const char* fmt_with_ms) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  std::string s = buf;
  if (fmt_with_ms) {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::snprintf(buf, sizeof buf, "%03lld", static_cast<long long>(ms));
    s += buf;
  }
  return s;
}

// Streams get small ids per device in order of first use; the default stream is 0.
struct StreamIds {
  std::map<std::pair<int, uint64_t>, uint32_t> ids;
  std::map<int, uint32_t> next;
  uint32_t get(int device, uint64_t stream) {
    if (stream == 0) return 0;
    auto [it, added] = ids.emplace(std::make_pair(device, stream), 0);
    if (added) it->second = ++next[device];
    return it->second;
  }
};

const char* kOpSummaryColumns[] = {
    "Model Name", "Model ID", "Task ID", "Stream ID", "Infer ID", "Op Name", "OP Type", "Task Type",
    "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "Input Shapes",
    "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types", "Output Formats",
    "aicore_time(us)", "aic_total_cycles", "aiv_time(us)", "aiv_total_cycles"};

std::string op_summary(const std::vector<const TaskEvent*>& nodes, StreamIds& streams) {
  std::string text = join(std::vector<std::string>(std::begin(kOpSummaryColumns), std::end(kOpSummaryColumns)));
  std::map<std::pair<int, uint64_t>, int64_t> last_end;  // per stream: wait = start - previous end
  for (const TaskEvent* e : nodes) {
    int64_t& prev = last_end[{e->device, e->stream}];
    const int64_t wait = prev && e->start_ns > prev ? e->start_ns - prev : 0;
    prev = e->end_ns;
    text += join({e->model_name, std::to_string(e->model_id), std::to_string(e->task_id),
                  std::to_string(streams.get(e->device, e->stream)), std::to_string(e->infer_id), e->name, e->type,
                  "AI_CPU", us(e->start_ns), us(e->end_ns - e->start_ns), us(wait), "1", e->input_shapes,
                  e->input_dtypes, e->input_formats, e->output_shapes, e->output_dtypes, e->output_formats, "N/A",
                  "N/A", "N/A", "N/A"});
  }
  return text;
}

std::string op_statistic(const std::vector<const TaskEvent*>& nodes) {
  struct Stat {
    uint64_t count = 0;
    int64_t total = 0, min = INT64_MAX, max = 0;
  };
  std::map<std::string, Stat> by_type;
  int64_t all = 0;
  for (const TaskEvent* e : nodes) {
    Stat& s = by_type[e->type];
    const int64_t d = e->end_ns - e->start_ns;
    ++s.count;
    s.total += d;
    s.min = std::min(s.min, d);
    s.max = std::max(s.max, d);
    all += d;
  }
  std::vector<std::pair<std::string, Stat>> rows(by_type.begin(), by_type.end());
  std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second.total > b.second.total; });
  std::string text = join({"OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)",
                           "Max Time(us)", "Ratio(%)"});
  for (const auto& [type, s] : rows) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3f", all > 0 ? 100.0 * static_cast<double>(s.total) / all : 0.0);
    text += join({type, "AI_CPU", std::to_string(s.count), us(s.total), us(s.min),
                  us(static_cast<double>(s.total) / static_cast<double>(s.count)), us(s.max), ratio});
  }
  return text;
}

std::string api_statistic(const std::vector<ApiEvent>& api) {
  struct Stat {
    uint64_t count = 0;
    double sum = 0, sq = 0;
    int64_t min = INT64_MAX, max = 0;
  };
  std::map<std::string, Stat> by_name;
  for (const ApiEvent& e : api) {
    Stat& s = by_name[e.name ? e.name : "?"];
    const int64_t d = e.end_ns - e.start_ns;
    ++s.count;
    s.sum += static_cast<double>(d);
    s.sq += static_cast<double>(d) * static_cast<double>(d);
    s.min = std::min(s.min, d);
    s.max = std::max(s.max, d);
  }
  std::string text =
      join({"Device_id", "Level", "API Name", "Time(us)", "Count", "Avg(us)", "Min(us)", "Max(us)", "Variance"});
  for (const auto& [name, s] : by_name) {
    const double n = static_cast<double>(s.count);
    const double mean = s.sum / n;
    const double var_us = std::max(0.0, s.sq / n - mean * mean) / 1e6;  // ns^2 -> us^2
    char var[40];
    std::snprintf(var, sizeof var, "%.3f", var_us);
    text += join({"host", "acl", name, us(s.sum), std::to_string(s.count), us(mean), us(s.min), us(s.max), var});
  }
  return text;
}

double ts_us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string timeline(const CollectedData& data, StreamIds& streams) {
  using nlohmann::json;
  json events = json::array();
  const int host_pid = static_cast<int>(::getpid());
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", host_pid}, {"tid", 0},
                    {"args", {{"name", "AscendCL API"}}}});
  events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", host_pid}, {"tid", 0},
                    {"args", {{"sort_index", 0}}}});
  std::map<uint32_t, bool> api_threads;
  for (const ApiEvent& e : data.api) {
    if (!api_threads[e.thread_id]) {
      api_threads[e.thread_id] = true;
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", host_pid}, {"tid", e.thread_id},
                        {"args", {{"name", "Thread " + std::to_string(e.thread_id)}}}});
    }
    events.push_back({{"name", e.name ? e.name : "?"}, {"ph", "X"}, {"cat", "AscendCL"}, {"pid", host_pid},
                      {"tid", e.thread_id}, {"ts", ts_us(e.start_ns)}, {"dur", ts_us(e.end_ns - e.start_ns)},
                      {"args", {{"Thread Id", e.thread_id}, {"Result", e.result}}}});
  }
  // Device rows: one process per device (pid = 1,000,000 + device: distinct
  // from any real pid), one thread row per stream. Work "on the default
  // stream" (aclmdlExecute, aclrtMemcpy) runs on the calling thread, so
  // several threads may run it at once: it gets one row per calling thread,
  // which keeps every row's slices nested or disjoint, as the trace viewers
  // require. Row ids: the thread id on the default stream, 2^30 + stream id
  // otherwise (above any Linux thread id, at most 2^22).
  std::map<int, bool> device_named;
  std::map<std::pair<int, uint64_t>, bool> row_named;
  for (const TaskEvent& e : data.tasks) {
    const int pid = 1000000 + e.device;
    const uint32_t sid = streams.get(e.device, e.stream);
    const uint64_t row = sid == 0 ? e.thread_id : (uint64_t{1} << 30) + sid;
    if (!device_named[e.device]) {
      device_named[e.device] = true;
      events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                        {"args", {{"name", "Device " + std::to_string(e.device)}}}});
      events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                        {"args", {{"sort_index", 1 + e.device}}}});
    }
    if (!row_named[{e.device, row}]) {
      row_named[{e.device, row}] = true;
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", row},
                        {"args", {{"name", sid == 0 ? "Stream 0 (default), thread " + std::to_string(e.thread_id)
                                                    : "Stream " + std::to_string(sid)}}}});
    }
    json args;
    const char* cat = "task";
    switch (e.kind) {
      case TaskKind::kNode:
        cat = "op";
        args = {{"Model ID", e.model_id},          {"Model Name", e.model_name},
                {"Infer ID", e.infer_id},          {"Task ID", e.task_id},
                {"Op Type", e.type},               {"Input Shapes", e.input_shapes},
                {"Input Data Types", e.input_dtypes}, {"Input Formats", e.input_formats},
                {"Output Shapes", e.output_shapes},   {"Output Data Types", e.output_dtypes},
                {"Output Formats", e.output_formats}, {"Thread Id", e.thread_id}};
        break;
      case TaskKind::kModel:
        cat = "model";
        args = {{"Model ID", e.model_id}, {"Infer ID", e.infer_id}, {"Thread Id", e.thread_id}};
        break;
      case TaskKind::kCopy:
        cat = "memcpy";
        args = {{"Kind", e.type}, {"Bytes", e.bytes}, {"Thread Id", e.thread_id}};
        break;
    }
    args["Stream ID"] = sid;
    events.push_back({{"name", e.name}, {"ph", "X"}, {"cat", cat}, {"pid", pid}, {"tid", row},
                      {"ts", ts_us(e.start_ns)}, {"dur", ts_us(e.end_ns - e.start_ns)}, {"args", std::move(args)}});
  }
  // msproftx annotations: their own process, one row per thread (a push/pop
  // range crosses the API slices of aclprofPush and aclprofPop, so it cannot
  // share their row); start/stop ranges are async events (they may end on
  // another thread), marks instant events.
  if (!data.marks.empty()) {
    const int pid = 999999;
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                      {"args", {{"name", "msproftx"}}}});
    std::map<uint32_t, bool> tx_threads;
    for (const MarkEvent& m : data.marks) {
      if (!tx_threads[m.thread_id]) {
        tx_threads[m.thread_id] = true;
        events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", m.thread_id},
                          {"args", {{"name", "Thread " + std::to_string(m.thread_id)}}}});
      }
      switch (m.kind) {
        case MarkEvent::Kind::kMark:
          events.push_back({{"name", m.message}, {"ph", "i"}, {"s", "t"}, {"cat", "msproftx"}, {"pid", pid},
                            {"tid", m.thread_id}, {"ts", ts_us(m.start_ns)}, {"args", {{"Stream", m.stream}}}});
          break;
        case MarkEvent::Kind::kPushPop:
          events.push_back({{"name", m.message}, {"ph", "X"}, {"cat", "msproftx"}, {"pid", pid},
                            {"tid", m.thread_id}, {"ts", ts_us(m.start_ns)}, {"dur", ts_us(m.end_ns - m.start_ns)},
                            {"args", json::object()}});
          break;
        case MarkEvent::Kind::kRange:
          events.push_back({{"name", m.message}, {"ph", "b"}, {"cat", "msproftx"}, {"id", m.range_id},
                            {"pid", pid}, {"tid", m.thread_id}, {"ts", ts_us(m.start_ns)},
                            {"args", {{"Range ID", m.range_id}, {"Stop Thread Id", m.end_thread_id}}}});
          events.push_back({{"name", m.message}, {"ph", "e"}, {"cat", "msproftx"}, {"id", m.range_id},
                            {"pid", pid}, {"tid", m.thread_id}, {"ts", ts_us(m.end_ns)}});
          break;
      }
    }
  }
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData",
               {{"schema", kSchemaVersion},
                {"clock", "steady (CLOCK_MONOTONIC) microseconds"},
                {"api_events_dropped", data.api_dropped},
                {"task_events_dropped", data.tasks_dropped}}}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::atomic<uint32_t> g_folder_serial{0};

}  // namespace

Status write_collection(const std::string& dir, const CollectedData& data, std::string* prof_dir) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(dir) / ("PROF_" + stamp("ms") + "_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(g_folder_serial.fetch_add(1) + 1));
  StreamIds streams;
  // Tasks in time order: rows and stream ids follow execution order.
  std::vector<const TaskEvent*> ordered;
  ordered.reserve(data.tasks.size());
  for (const TaskEvent& e : data.tasks) ordered.push_back(&e);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const TaskEvent* a, const TaskEvent* b) { return a->start_ns < b->start_ns; });
  for (uint32_t d : data.devices) {
    std::vector<const TaskEvent*> nodes;
    for (const TaskEvent* e : ordered)
      if (e->kind == TaskKind::kNode && static_cast<uint32_t>(e->device) == d) nodes.push_back(e);
    const fs::path summary = root / ("device_" + std::to_string(d)) / "summary";
    const std::string suffix = std::to_string(d) + "_1.csv";
    OPENACL_RETURN_IF_ERROR(write_file(summary / ("op_summary_" + suffix), op_summary(nodes, streams)));
    OPENACL_RETURN_IF_ERROR(write_file(summary / ("op_statistic_" + suffix), op_statistic(nodes)));
  }
  OPENACL_RETURN_IF_ERROR(write_file(root / "host" / "summary" / "api_statistic_1.csv", api_statistic(data.api)));
  OPENACL_RETURN_IF_ERROR(
      write_file(root / "timeline" / ("msprof_" + stamp(nullptr) + ".json"), timeline(data, streams)));
  if (prof_dir) *prof_dir = root.string();
  return Status::Ok();
}

}  // namespace openacl::prof
