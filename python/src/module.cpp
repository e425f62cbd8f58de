// The extension module `moesim._moesim`: the command line's subcommands run in-process (call.hpp) and their flag
// declarations (flags.hpp), and where the catalog is read from. Everything a user sees is built on these in the Python package (python/moesim/).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "allocator.hpp"
#include "call.hpp"
#include "config/data_dir.hpp"
#include "flags.hpp"

PYBIND11_MODULE(_moesim, m) {
  moesim::python::tune_allocator();
  m.doc() = "moesim's command line, in-process (use the moesim package, not this module)";
  m.def("call", &moesim::python::call, pybind11::arg("args"), pybind11::arg("progress") = pybind11::none(),
        "Runs `moesim <args>`; returns (exit code, stdout, stderr) as bytes. `progress(done, total)` is called "
        "during a search; an exception it raises (or Ctrl-C) stops the search and is raised here.");
  m.def("flags", &moesim::python::flags, "{subcommand: [(long names, min values, max values, once)]}");
  m.def(
      "data_dir", [](const std::string& given) { return moesim::config::data_dir(given).string(); },
      pybind11::arg("given") = "", "The data dir the commands read (--data-dir, $MOESIM_DATA_DIR, the source tree)");
}
