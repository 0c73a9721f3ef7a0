// Bounded polling before a blocking wait. A hand-off between threads that are
// about to run anyway (a stream worker, a report thread) costs a futex wake-up
// of 10-50 us on a VM; polling for a few tens of microseconds first avoids it,
// and an idle thread still goes to sleep almost at once.
#pragma once

#include <sched.h>

#include <chrono>

namespace openacl {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls pred() until it holds (true) or `budget` has passed (false).
// After the first rounds it yields the core between polls: with more runnable
// threads than cores (two cores here), the thread being waited for may need it.
template <class Pred>
bool spin_until(Pred&& pred, std::chrono::microseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (int round = 0;; ++round) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return pred();
    if (round >= 4) sched_yield();
  }
}

}  // namespace openacl
