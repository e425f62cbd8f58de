// flags(): every option of every subcommand as the command line declares it (names, how many values), read from
// the same CLI11 definitions cli::run parses with, so that the Python layer converts keyword arguments and
// Megatron-LM argument strings to flags without a second list of them to keep in step.
#include "flags.hpp"

#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"

namespace moesim::python {

namespace py = pybind11;

py::dict flags() {
  std::ostringstream sink;
  cli::Context ctx{sink, sink, ""};
  CLI::App app;
  cli::add_describe_command(app, ctx);
  cli::add_memory_command(app, ctx);
  cli::add_run_command(app, ctx);
  cli::add_estimate_command(app, ctx);
  cli::add_layout_command(app, ctx);
  cli::add_search_command(app, ctx);
  cli::add_validate_command(app, ctx);
  cli::add_sweep_command(app, ctx);
  cli::add_bands_command(app, ctx);
  py::dict out;
  for (const CLI::App* sub : app.get_subcommands({})) {
    py::list options;
    for (const CLI::Option* o : sub->get_options()) {
      if (o->get_lnames().empty()) continue;  // --help's -h, positionals
      py::list names;
      for (const auto& n : o->get_lnames()) names.append(n);
      // min 0: a bare flag (max 0) or a boolean taking an optional value (max 1); max > 1: repeatable or a list.
      options.append(py::make_tuple(names, o->get_expected_min(), o->get_expected_max(),
                                    o->get_multi_option_policy() == CLI::MultiOptionPolicy::Throw));
    }
    out[py::str(sub->get_name())] = options;
  }
  return out;
}

}  // namespace moesim::python
