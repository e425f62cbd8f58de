#pragma once
// flags(): {subcommand: [(long names, min values, max values, given at most once)]} of the command line.
#include <pybind11/pybind11.h>

namespace moesim::python {

pybind11::dict flags();

}  // namespace moesim::python
