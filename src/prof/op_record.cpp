#include "prof/op_record.h"

#include <cstring>
#include <mutex>
#include <map>

#include "base/crc32c.h"

namespace openacl::prof {

uint32_t record_signature(const void* record) {
  // crc32c() applies the standard initial value and final XOR; the record's
  // signature is the register before that final XOR, i.e. its complement.
  return ~crc32c(static_cast<const unsigned char*>(record) + 4, sizeof(OpRecord) - 4);
}

void sign_record(OpRecord* r) { r->signature = record_signature(r); }

const char* check_records(const void* data, size_t length, int64_t index, uint32_t* count, std::string* detail) {
  if (data == nullptr) return "opInfo is NULL; pass the bytes read from the subscription pipe";
  if (length == 0 || length % sizeof(OpRecord) != 0) {
    *detail = std::to_string(length);
    return "opInfoLen is not a positive multiple of the record size (aclprofGetOpDescSize); read the pipe in "
           "multiples of it";
  }
  const size_t n = length / sizeof(OpRecord);
  if (n > UINT32_MAX) {
    *detail = std::to_string(length);
    return "opInfoLen holds more records than a uint32 counts";
  }
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    uint32_t stored;
    std::memcpy(&stored, bytes + i * sizeof(OpRecord), 4);
    if (stored != record_signature(bytes + i * sizeof(OpRecord))) {
      *detail = std::to_string(i);
      return "a record's signature does not match its content (not subscription data, or corrupted); record";
    }
  }
  if (index >= 0 && static_cast<uint64_t>(index) >= n) {
    *detail = std::to_string(index) + " (the buffer holds " + std::to_string(n) + ")";
    return "index is out of range; pass 0 <= index < aclprofGetOpNum; index";
  }
  if (count) *count = static_cast<uint32_t>(n);
  return nullptr;
}

OpRecord record_at(const void* data, uint32_t index) {
  OpRecord r;
  std::memcpy(&r, static_cast<const unsigned char*>(data) + static_cast<size_t>(index) * sizeof(OpRecord),
              sizeof r);
  return r;
}

namespace {

struct OpStrings {
  std::string name, type;
  bool name_taken = false, type_taken = false;
};

// Strings nobody reads (a reader that only wants times) must not grow the
// process without bound: past this many, the oldest are forgotten.
constexpr size_t kMaxPending = size_t{1} << 18;

struct Table {
  std::mutex mutex;
  uint64_t next = 1;
  std::map<uint64_t, OpStrings> entries;  // by op_index: oldest first
  uint64_t evicted = 0;
};

Table& table() {
  static auto* t = new Table();  // never destroyed: readers may run during exit
  return *t;
}

}  // namespace

uint64_t register_op_strings(const std::string& name, const std::string& type) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const uint64_t index = t.next++;
  t.entries.emplace_hint(t.entries.end(), index, OpStrings{name, type});
  if (t.entries.size() > kMaxPending) {
    t.entries.erase(t.entries.begin());
    ++t.evicted;
  }
  return index;
}

void forget_op_strings(uint64_t op_index) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.entries.erase(op_index);
}

bool op_string(uint64_t op_index, OpString which, bool take, std::string* out) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(op_index);
  if (it == t.entries.end()) return false;
  OpStrings& e = it->second;
  bool& taken = which == OpString::kName ? e.name_taken : e.type_taken;
  if (taken) return false;
  *out = which == OpString::kName ? e.name : e.type;
  if (take) {
    taken = true;
    if (e.name_taken && e.type_taken) t.entries.erase(it);  // both read: nothing left to keep
  }
  return true;
}

size_t op_strings_pending() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.entries.size();
}

}  // namespace openacl::prof
