#pragma once
// The bridge from search's progress hook (cli::RunHooks, called on the thread that released the GIL) to Python:
// takes the GIL, runs pending signal handlers (so Ctrl-C raises KeyboardInterrupt there) and the callback. A
// Python exception is kept and a C++ one thrown to unwind the search; rethrow() raises the kept one afterwards.
#include <cstdint>
#include <optional>

#include <pybind11/pybind11.h>

namespace moesim::python {

class SearchProgress {
 public:
  explicit SearchProgress(pybind11::object callback) : callback_(std::move(callback)) {}
  ~SearchProgress();
  SearchProgress(const SearchProgress&) = delete;
  SearchProgress& operator=(const SearchProgress&) = delete;

  // Called without the GIL. Throws std::runtime_error once a Python exception is pending.
  void operator()(std::uint64_t done, std::uint64_t total);
  // With the GIL: raises the kept Python exception, if any.
  void rethrow();

 private:
  pybind11::object callback_;
  std::optional<pybind11::error_already_set> error_;
};

}  // namespace moesim::python
