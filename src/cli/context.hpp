#pragma once
// What every subcommand shares: output streams and the catalog location. One subcommand per cmd_*.cpp file,
// each exposing add_<name>_command(), listed in app.cpp.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace moesim::cli {

struct Context {
  std::ostream& out;
  std::ostream& err;
  std::string data_dir;  // --data-dir; empty = default (see config/data_dir.hpp)
  // Replaces search's terminal progress bar when set (an embedding program's, cli.hpp RunHooks).
  std::function<void(std::uint64_t, std::uint64_t)> search_progress = {};
};

void add_check_command(CLI::App& app, Context& ctx);
void add_list_command(CLI::App& app, Context& ctx);
void add_fit_command(CLI::App& app, Context& ctx);
void add_trace_calib_command(CLI::App& app, Context& ctx);
void add_import_kernels_command(CLI::App& app, Context& ctx);
void add_describe_command(CLI::App& app, Context& ctx);
void add_memory_command(CLI::App& app, Context& ctx);
void add_run_command(CLI::App& app, Context& ctx);
void add_estimate_command(CLI::App& app, Context& ctx);
void add_layout_command(CLI::App& app, Context& ctx);
void add_search_command(CLI::App& app, Context& ctx);
void add_merge_command(CLI::App& app, Context& ctx);
void add_validate_command(CLI::App& app, Context& ctx);
void add_sweep_command(CLI::App& app, Context& ctx);
void add_bands_command(CLI::App& app, Context& ctx);

}  // namespace moesim::cli
