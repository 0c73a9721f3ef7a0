// openacl-run --count-allocs: counts the heap allocations (operator new) a
// stretch of code makes, on every thread, and tells OpenACL's own from those
// made inside oneDNN (whose primitive execute builds its argument map on the
// heap: not ours to remove). Replaces the global operator new/delete of this
// program only; counting costs nothing while it is off.
#pragma once

#include <cstddef>
#include <cstdio>

namespace openacl::tools {

struct AllocCounts {
  long ours = 0;  // allocations with no oneDNN frame on the stack
  long onednn = 0;
};

void start_counting();
AllocCounts stop_counting();
// Prints where up to `most` of the last counted stretch's own allocations
// came from (return addresses, for addr2line).
void print_alloc_sites(std::FILE* out, int most);

}  // namespace openacl::tools
