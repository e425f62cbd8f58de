#include "progress.hpp"

#include <stdexcept>

namespace moesim::python {

namespace py = pybind11;

SearchProgress::~SearchProgress() {
  // error_already_set holds Python objects: drop them with the GIL (the caller holds it unless unwinding
  // through the released section, where rethrow() was not reached).
  if (error_) {
    py::gil_scoped_acquire gil;
    error_.reset();
  }
}

void SearchProgress::operator()(std::uint64_t done, std::uint64_t total) {
  py::gil_scoped_acquire gil;
  try {
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!callback_.is_none()) callback_(done, total);
  } catch (py::error_already_set& e) {
    error_.emplace(std::move(e));
    // cli::run turns this into exit code 4; call() raises the kept exception instead.
    throw std::runtime_error("stopped from Python");
  }
}

void SearchProgress::rethrow() {
  if (!error_) return;
  py::error_already_set e = std::move(*error_);
  error_.reset();
  throw e;
}

}  // namespace moesim::python
