// glibc malloc settings for the extension's process. The `moesim` executable links jemalloc (CMakeLists.txt,
// MOESIM_JEMALLOC), which a Python process cannot switch to once started; under glibc's defaults a 1,000-point sweep
// ran 1.24x the executable's time, mostly in returning freed heap to the system and taking it back for the next
// point (sys time). Keeping freed memory (trim threshold 256 MiB, 64 MiB of padding per heap growth) and serving
// blocks under 32 MiB from the heap brought it to 1.09x (tools/bench/python.py, as measured on branch python);
// `LD_PRELOAD=libjemalloc.so.2 python3` gives the executable's allocator and 1.00x.
#include "allocator.hpp"

#include <malloc.h>

namespace moesim::python {

void tune_allocator() {
#if defined(__GLIBC__)
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}

}  // namespace moesim::python
