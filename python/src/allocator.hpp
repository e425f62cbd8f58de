#pragma once
// tune_allocator(): glibc malloc settings that keep the engine's many small allocations off the system calls (see
// allocator.cpp for what was measured). Called once, when the module loads.

namespace moesim::python {

void tune_allocator();

}  // namespace moesim::python
