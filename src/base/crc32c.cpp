#include "base/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define OPENACL_CRC32C_X86 1
#endif

namespace openacl {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// tables[k][b]: the CRC of byte b followed by k zero bytes, so eight bytes
// are folded with eight lookups (slicing-by-8).
constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? kPoly : 0);
    t[0][b] = c;
  }
  for (uint32_t b = 0; b < 256; ++b)
    for (size_t k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  return t;
}

constexpr auto kTables = make_tables();

uint64_t load64le(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

uint32_t table_update(uint32_t state, const uint8_t* p, size_t n) {
  while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
    state = (state >> 8) ^ kTables[0][(state ^ *p++) & 0xFF];
    --n;
  }
  for (; n >= 8; n -= 8, p += 8) {
    const uint64_t v = load64le(p) ^ state;
    state = kTables[7][v & 0xFF] ^ kTables[6][(v >> 8) & 0xFF] ^ kTables[5][(v >> 16) & 0xFF] ^
            kTables[4][(v >> 24) & 0xFF] ^ kTables[3][(v >> 32) & 0xFF] ^ kTables[2][(v >> 40) & 0xFF] ^
            kTables[1][(v >> 48) & 0xFF] ^ kTables[0][v >> 56];
  }
  while (n--) state = (state >> 8) ^ kTables[0][(state ^ *p++) & 0xFF];
  return state;
}

#ifdef OPENACL_CRC32C_X86
#ifdef __x86_64__
// The crc32 instruction takes 3 cycles but starts one per cycle: three
// streams of kStream bytes run side by side, then are joined. The raw CRC
// register is linear: F(s, A||B) = shift_|B|(F(s, A)) ^ F(0, B), where
// shift_L(s) = F(s, L zero bytes) is a GF(2)-linear map, tabulated per byte.
constexpr size_t kStream = 4096;

struct ShiftTable {
  std::array<std::array<uint32_t, 256>, 4> t;
  uint32_t apply(uint64_t s) const {
    return t[0][s & 0xFF] ^ t[1][(s >> 8) & 0xFF] ^ t[2][(s >> 16) & 0xFF] ^ t[3][(s >> 24) & 0xFF];
  }
};

const ShiftTable& stream_shift() {
  static const ShiftTable table = [] {
    static const uint8_t kZeros[kStream] = {};
    uint32_t basis[32];
    for (int i = 0; i < 32; ++i) basis[i] = table_update(1u << i, kZeros, kStream);
    ShiftTable st{};
    for (int k = 0; k < 4; ++k)
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t v = 0;
        for (int j = 0; j < 8; ++j)
          if (b & (1u << j)) v ^= basis[8 * k + j];
        st.t[k][b] = v;
      }
    return st;
  }();
  return table;
}
#endif

__attribute__((target("sse4.2"))) uint32_t hw_update(uint32_t state, const uint8_t* p, size_t n) {
  while (n && (reinterpret_cast<uintptr_t>(p) & 7)) {
    state = _mm_crc32_u8(state, *p++);
    --n;
  }
#ifdef __x86_64__
  uint64_t s64 = state;
  if (n >= 3 * kStream) {
    const ShiftTable& shift = stream_shift();
    for (; n >= 3 * kStream; n -= 3 * kStream, p += 3 * kStream) {
      uint64_t b = 0, c = 0;
      for (size_t i = 0; i < kStream; i += 8) {
        s64 = _mm_crc32_u64(s64, load64le(p + i));
        b = _mm_crc32_u64(b, load64le(p + kStream + i));
        c = _mm_crc32_u64(c, load64le(p + 2 * kStream + i));
      }
      s64 = shift.apply(shift.apply(s64) ^ b) ^ c;
    }
  }
  for (; n >= 8; n -= 8, p += 8) s64 = _mm_crc32_u64(s64, load64le(p));
  state = static_cast<uint32_t>(s64);
#else
  for (; n >= 4; n -= 4, p += 4) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    state = _mm_crc32_u32(state, v);
  }
#endif
  while (n--) state = _mm_crc32_u8(state, *p++);
  return state;
}
#endif

bool detect_hw() {
#ifdef OPENACL_CRC32C_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

}  // namespace

bool crc32c_hw_available() {
  static const bool has = detect_hw();
  return has;
}

uint32_t crc32c_hw(const void* data, size_t n, uint32_t crc) {
#ifdef OPENACL_CRC32C_X86
  if (n == 0) return crc;
  return ~hw_update(~crc, static_cast<const uint8_t*>(data), n);
#else
  return crc32c_table(data, n, crc);
#endif
}

uint32_t crc32c_table(const void* data, size_t n, uint32_t crc) {
  if (n == 0) return crc;
  return ~table_update(~crc, static_cast<const uint8_t*>(data), n);
}

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  return crc32c_hw_available() ? crc32c_hw(data, n, crc) : crc32c_table(data, n, crc);
}

}  // namespace openacl
