#include "base/dtype.h"

namespace openacl {

size_t dtype_size(int dtype) {
  switch (dtype) {
    case 0: return 4;   // FLOAT
    case 1: return 2;   // FLOAT16
    case 2: return 1;   // INT8
    case 3: return 4;   // INT32
    case 4: return 1;   // UINT8
    case 6: return 2;   // INT16
    case 7: return 2;   // UINT16
    case 8: return 4;   // UINT32
    case 9: return 8;   // INT64
    case 10: return 8;  // UINT64
    case 11: return 8;  // DOUBLE
    case 12: return 1;  // BOOL
    case 16: return 8;  // COMPLEX64
    case 17: return 16; // COMPLEX128
    case 27: return 2;  // BF16
    case 29: return 1;  // INT4 (CANN's helper reports 1)
    case 30: return 1;  // UINT1
    case 33: return 4;  // COMPLEX32
    case 34: case 35: case 36: case 37: return 1;  // 8-bit floats
    case 38: case 39: case 40: case 41: return 1;  // sub-byte floats, stored one per byte
    default: return 0;  // UNDEFINED, STRING, unknown
  }
}

}  // namespace openacl
