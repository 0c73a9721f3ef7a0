/* libopenacl_ompenv.so: OpenMP wait defaults for OpenACL's compute threads.
 *
 * libgomp reads its settings from the environment once, in its own
 * constructor, and offers no call to change them later. Its default makes an
 * idle worker spin for about 300000 rounds (milliseconds) before it sleeps.
 * On a machine where other processes want the cores that spinning is what
 * hurts: a worker burns its time slice waiting at a barrier while the thread
 * it waits for is not running, and a model that takes 60 ms on two idle cores
 * took over a second (docs/benchmarks.md, "Threads").
 *
 * This tiny library runs before libgomp's constructor: libascendcl.so (and openacl-run, atc) list
 * it after libgomp.so.1 among its DT_NEEDED entries, and the dynamic linker
 * initialises later-listed, unrelated libraries first (checked by
 * tests/python/test_omp_defaults.py). Unless the user chose (OMP_WAIT_POLICY or
 * GOMP_SPINCOUNT set), it sets GOMP_SPINCOUNT to a short spin (enough to
 * bridge the gap between two kernels of one execution) and marks that it did,
 * so that libascendcl's own initialisation removes both variables again and
 * the user's child processes inherit nothing.
 * OPENACL_OMP_SPINCOUNT overrides the value. */
#include <stdlib.h>

__attribute__((constructor)) static void openacl_omp_defaults(void) {
  if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
  const char* mine = getenv("OPENACL_OMP_SPINCOUNT");
  setenv("GOMP_SPINCOUNT", mine && *mine ? mine : "10000", 1);
  setenv("OPENACL_OMP_ENV_SET", "1", 1);
}
