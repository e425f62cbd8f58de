#include <exception>
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/context.hpp"
#include "core/error.hpp"

namespace moesim::cli {

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return run(args, out, err, RunHooks{});
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const RunHooks& hooks) {
  Context ctx{out, err, "", hooks.search_progress};
  CLI::App app{"moesim: simulator and performance model of Mixture-of-Experts training on GPU clusters", "moesim"};
  app.require_subcommand(1);
  app.add_option("--data-dir", ctx.data_dir,
                 "Folder holding models/, topologies/ and the calibration data (data/params/, "
                 "kernels-sim/data/efficiency/) (default: $MOESIM_DATA_DIR or the source tree)");
  add_check_command(app, ctx);
  add_list_command(app, ctx);
  add_fit_command(app, ctx);
  add_trace_calib_command(app, ctx);
  add_import_kernels_command(app, ctx);
  add_describe_command(app, ctx);
  add_memory_command(app, ctx);
  add_run_command(app, ctx);
  add_estimate_command(app, ctx);
  add_layout_command(app, ctx);
  add_search_command(app, ctx);
  add_merge_command(app, ctx);
  add_validate_command(app, ctx);
  add_sweep_command(app, ctx);
  add_bands_command(app, ctx);

  // CLI11 wants argv in reverse order when given a vector.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "moesim: " << e.what() << "\n";
    if (auto* sub = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front())
      err << sub->help();
    else
      err << "Run 'moesim --help' for the list of commands.\n";
    return static_cast<int>(ExitCode::usage);
  } catch (const Error& e) {
    const char* kind = e.code() == ExitCode::bad_config   ? "bad config"
                       : e.code() == ExitCode::infeasible ? "infeasible layout"
                       : e.code() == ExitCode::usage      ? "usage"
                                                          : "error";
    err << "moesim: " << kind << ":\n" << e.what() << "\n";
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    err << "moesim: internal error: " << e.what() << "\n";
    return static_cast<int>(ExitCode::internal);
  }
  return 0;
}

}  // namespace moesim::cli
