// prof: the op-info subscription record (spec/pyacl-api.md §5.4) and the
// process-wide table of op names and types the records refer to.
//
// Layout: 80 bytes, natural alignment, little-endian, zero-filled before it is
// populated. `signature` is the bitwise NOT of the standard CRC-32C of bytes
// [4, 80) (CRC-32C with initial value 0xFFFFFFFF and no final XOR), so parsers
// written against CANN's layout accept our records.
//
// Strings are not in the record: the producer stores name and type under the
// record's op_index (a counter from 1); a reader takes each string once
// (take_op_string erases it), as CANN's readers do. At most 262144 op strings
// are kept unread; beyond that the oldest are forgotten (a reader that never
// asks for names must not make the process grow without bound).
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace openacl::prof {

struct OpRecord {
  uint32_t signature;
  uint32_t model_id;
  uint32_t flag;       // aclprofSubscribeOpFlag: 0 = a plain op
  uint32_t thread_id;
  uint64_t op_index;   // key of the op's name and type (register_op_strings)
  uint64_t duration;   // end - start, microseconds
  uint64_t start;      // steady clock, microseconds
  uint64_t end;
  uint64_t execution_time;
  uint64_t cube_fops;
  uint64_t vector_fops;
  uint32_t dev_id;
  uint32_t reserved;   // zero
};
static_assert(sizeof(OpRecord) == 80, "the subscription record is 80 bytes (spec §5.4)");

// ~crc32c of bytes [4, 80) of the record at `record` (80 readable bytes).
uint32_t record_signature(const void* record);
// Sets r->signature.
void sign_record(OpRecord* r);

// Checks a buffer of records as every reader must (§5.4): non-null, a whole
// number of records, every record's signature, and `index` (when not -1) in
// range. Returns nullptr on success, else a message saying what is wrong.
// `count` receives the number of records.
const char* check_records(const void* data, size_t length, int64_t index, uint32_t* count, std::string* detail);

// The record at `index` of a checked buffer (copied: the buffer may be unaligned).
OpRecord record_at(const void* data, uint32_t index);

// Stores an op's strings; returns the op_index for its record.
uint64_t register_op_strings(const std::string& name, const std::string& type);
// Forgets them (a record that was dropped will never be read).
void forget_op_strings(uint64_t op_index);
enum class OpString { kName, kType };
// Copies the string out; `take` erases it. false when it was taken already
// (or never stored).
bool op_string(uint64_t op_index, OpString which, bool take, std::string* out);
// Strings stored and not yet taken (for tests and the unsubscribe report).
size_t op_strings_pending();

}  // namespace openacl::prof
