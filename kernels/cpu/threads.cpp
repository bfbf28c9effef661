// Size of the intra-op thread pool that every CPU kernel's parallel_for / for_each splits across.
#include "kernels/kernels.h"
#ifdef _OPENMP
#include <omp.h>
#endif

namespace ampgrad::cpu {

int get_num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_num_threads(int n) {
  AG_CHECK(n > 0, "set_num_threads expects a positive integer");
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
}

}  // namespace ampgrad::cpu
