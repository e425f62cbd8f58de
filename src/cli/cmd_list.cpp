// moesim list models|systems|parts
#include <filesystem>
#include <ostream>
#include <set>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "config/data_dir.hpp"
#include "core/did_you_mean.hpp"
#include "model/model_catalog.hpp"
#include "topology/system_catalog.hpp"

namespace moesim::cli {

void add_list_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("list", "List catalog entries: models, systems or parts");
  auto what = std::make_shared<std::string>();
  sub->add_option("what", *what, "models | systems | parts")
      ->required()
      ->check(CLI::IsMember({"models", "systems", "parts"}));
  sub->callback([&ctx, what] {
    const auto root = config::data_dir(ctx.data_dir);
    if (*what == "models") {  // the model catalog: canonical names with the aliases each one answers to
      const model::ModelCatalog catalog(root);
      for (const auto& e : catalog.entries())
        ctx.out << e.name << (e.aliases.empty() ? "" : "  (aliases: " + join_names(e.aliases) + ")") << "\n";
      return;
    }
    // The topology catalog: systems with the aliases each one answers to; parts as kind/name and description.
    const auto topo = topology::SystemCatalog::load(root);
    if (*what == "systems") {
      for (const auto& name : topo.system_names()) {
        const auto& aliases = topo.system(name).aliases;
        ctx.out << name << (aliases.empty() ? "" : "  (aliases: " + join_names(aliases) + ")") << "\n";
      }
      return;
    }
    for (const auto& p : topo.parts()) ctx.out << p.kind << "/" << p.name << "  " << p.description << "\n";
  });
}

}  // namespace moesim::cli
