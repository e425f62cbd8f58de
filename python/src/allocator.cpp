// glibc malloc settings for the extension's process. The `moesim` executable links jemalloc (CMakeLists.txt,
// MOESIM_JEMALLOC), which a Python process cannot switch to once started; under glibc's defaults a 1,000-point sweep
// ran 1.24x the executable's time, mostly in returning freed heap to the system and taking it back for the next
// point (sys time). Keeping freed memory (trim threshold 256 MiB, 64 MiB of padding per heap growth) and serving
// blocks under 32 MiB from the heap brought it to 1.09x (tools/bench/python.py, as measured on branch python);
// `LD_PRELOAD=libjemalloc.so.2 python3` gives the executable's allocator and 1.00x. The settings are process-wide,
// so a host process that tunes malloc itself (or is short of memory) opts out with MOESIM_MALLOC_TUNING=0.
#include "allocator.hpp"

#include <malloc.h>

#include <cstdlib>
#include <string_view>

namespace moesim::python {

namespace {
bool allocator_tuning_wanted(const char* setting) { return setting == nullptr || std::string_view(setting) != "0"; }
}  // namespace

void tune_allocator() {
  if (!allocator_tuning_wanted(std::getenv("MOESIM_MALLOC_TUNING"))) return;
#if defined(__GLIBC__)
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
}

}  // namespace moesim::python
