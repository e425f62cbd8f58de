#pragma once
// Running independent jobs on a few threads with results in a fixed order: job i's result lands in slot i, so
// the output never depends on the thread count or the timing. Used by `validate` (one job per table row) and
// meant for any search over independent cases.
#include <cstddef>
#include <functional>
#include <vector>

namespace moesim {

// The threads `jobs` asks for: itself when positive, else one per hardware thread (at least one).
std::size_t thread_count(int jobs);

// Calls body(i) once for every i in [0, n), on up to `jobs` threads (0 = one per hardware thread; never more than
// n; the calling thread is one of them). Each worker takes the next unclaimed index. When bodies throw, the other
// indices still run; afterwards the exception of the lowest throwing index is rethrown, whatever the timing.
// Without a thread to spare (std::thread cannot start), fewer threads finish the work.
void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body);

// {f(0), f(1), ..., f(n-1)} computed by parallel_for. R must be default-constructible; f must be safe to call
// from several threads at once.
template <class R, class F>
std::vector<R> parallel_map(std::size_t n, int jobs, F&& f) {
  std::vector<R> out(n);
  parallel_for(n, jobs, [&out, &f](std::size_t i) { out[i] = f(i); });
  return out;
}

}  // namespace moesim
