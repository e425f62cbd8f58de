#pragma once
// call(args, progress): `moesim <args>` in-process; returns (exit code, stdout bytes, stderr bytes).
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace moesim::python {

// `progress`: None, or a callable taking (done, total) for search; it may raise to stop the search.
pybind11::tuple call(const std::vector<std::string>& args, const pybind11::object& progress);

}  // namespace moesim::python
