// prof: trace events and the switches that make them free when off.
//
// Thread-safety: the switches are atomics; the event structs are plain values.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace openacl::prof {

// What the running file collection asks for (bits of g_collect).
inline constexpr uint32_t kCollectApi = 1u;    // acl* calls (API layer rows, api_statistic)
inline constexpr uint32_t kCollectTasks = 2u;  // nodes, copies, model executions (stream rows, op_summary)
inline constexpr uint32_t kCollectTx = 4u;     // msproftx annotations (aclprofMark, Push/Pop, RangeStart/Stop)

namespace detail {
extern std::atomic<uint32_t> g_collect;        // kCollect* bits; 0 when no collection runs
extern std::atomic<uint32_t> g_subscriptions;  // models subscribed right now
}  // namespace detail

// One relaxed load each: the whole cost of a trace point when profiling is off.
#ifndef OPENACL_NO_TRACE_POINTS
inline bool api_tracing() { return detail::g_collect.load(std::memory_order_relaxed) & kCollectApi; }
inline bool task_tracing() { return detail::g_collect.load(std::memory_order_relaxed) & kCollectTasks; }
inline bool subscriptions_active() { return detail::g_subscriptions.load(std::memory_order_relaxed) != 0; }
inline bool tx_tracing() { return detail::g_collect.load(std::memory_order_relaxed) & kCollectTx; }
#else  // -DOPENACL_TRACE_POINTS=OFF, the baseline of the overhead benchmark
constexpr bool api_tracing() { return false; }
constexpr bool task_tracing() { return false; }
constexpr bool subscriptions_active() { return false; }
constexpr bool tx_tracing() { return false; }
#endif

// steady_clock (CLOCK_MONOTONIC) nanoseconds: the clock of every event, the
// same clock model::NodeObserver reports.
int64_t now_ns();
// The kernel thread id of the caller (cached per thread).
uint32_t thread_id();

// One acl* call. `name` is a string literal (__func__), never freed.
struct ApiEvent {
  const char* name = nullptr;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t thread_id = 0;
  int result = 0;  // the aclError it returned
};

enum class TaskKind { kNode, kCopy, kModel };

// One task that ran on a stream: an executed node, a copy, or a whole model
// execution. Strings are already formatted for the CSVs (capi formats dtypes
// and formats with CANN's names): "1,3,224,224;64" and "FLOAT;FLOAT".
struct TaskEvent {
  TaskKind kind = TaskKind::kNode;
  uint32_t model_id = 0;    // 0: not a model's task (a copy)
  std::string model_name;
  uint64_t infer_id = 0;    // the model's execution number, from 1
  uint32_t task_id = 0;     // node index within the execution
  std::string name;         // op name; copy: "aclrtMemcpy" / model: model name
  std::string type;         // op type; copy: "MEMCPY_HOST_TO_DEVICE", model: "Model"
  std::string input_shapes, input_dtypes, input_formats;
  std::string output_shapes, output_dtypes, output_formats;
  uint64_t stream = 0;      // stream handle value (0: the default stream)
  int device = 0;
  uint32_t thread_id = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t bytes = 0;       // copies
};

// A user annotation (msproftx): a mark (start == end), a push/pop range (on
// one thread) or a start/stop range (range_id != 0; may end on another thread).
struct MarkEvent {
  enum class Kind { kMark, kPushPop, kRange } kind = Kind::kMark;
  std::string message;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t thread_id = 0;      // the thread that marked / pushed / started
  uint32_t end_thread_id = 0;  // kRange: the thread that stopped it
  uint32_t range_id = 0;
  uint64_t stream = 0;         // aclprofMarkEx's stream (0: none or the default)
};

}  // namespace openacl::prof
