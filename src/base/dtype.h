// Data-type facts keyed by the aclDataType numeric values (spec §4.1).
#pragma once

#include <cstddef>

namespace openacl {

// Bytes per element; 0 for undefined/string/unknown values.
size_t dtype_size(int dtype);

}  // namespace openacl
