// moesim check FILE...: loads each config strictly and reports every problem at once.
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "config/document.hpp"

namespace moesim::cli {

void add_check_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("check", "Check config files (model, system, part, layout) and report every problem");
  auto files = std::make_shared<std::vector<std::string>>();
  sub->add_option("files", *files, "JSON files")->required();
  sub->callback([&ctx, files] {
    Diagnostics diags;
    for (const auto& f : *files) config::load_file(f, diags);
    diags.throw_if_any();
    for (const auto& f : *files) ctx.out << f << ": ok\n";
  });
}

}  // namespace moesim::cli
