#include "core/parallel_map.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace moesim {

std::size_t thread_count(int jobs) {
  return jobs > 0 ? static_cast<std::size_t>(jobs) : std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(std::size_t n, int jobs, const std::function<void(std::size_t)>& body) {
  const std::size_t workers = std::min(n, thread_count(jobs));
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::size_t failed_index = n;
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (i < failed_index) failure = std::current_exception(), failed_index = i;
      }
    }
  };
  std::vector<std::thread> pool;
  try {
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  } catch (...) {  // no thread to spare: the threads started and this one finish the work
  }
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace moesim
