// CRC-32C (Castagnoli): the checksum of .om sections and of the profiling
// records written to subscribers (spec/pyacl-api.md §5.4).
//
// Reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF;
// crc32c("123456789") == 0xE3069283. Uses the SSE4.2 crc32 instruction when
// the CPU has it (checked once at run time), slicing-by-8 tables otherwise;
// both give the same results.
//
// Thread-safe (pure functions; the tables are constant).
#pragma once

#include <cstddef>
#include <cstdint>

namespace openacl {

// CRC-32C of n bytes at data. Chainable: pass the CRC of the bytes before as
// `crc`, so crc32c(b, nb, crc32c(a, na)) == crc32c of a followed by b.
// data may be nullptr when n == 0.
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);

// The two implementations, for tests and benchmarks. crc32c_hw must only be
// called when crc32c_hw_available() is true.
bool crc32c_hw_available();
uint32_t crc32c_hw(const void* data, size_t n, uint32_t crc = 0);
uint32_t crc32c_table(const void* data, size_t n, uint32_t crc = 0);

}  // namespace openacl
