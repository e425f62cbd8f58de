// moesim list models|systems|parts
#include <filesystem>
#include <ostream>
#include <set>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "config/data_dir.hpp"

namespace moesim::cli {

void add_list_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("list", "List catalog entries: models, systems or parts");
  auto what = std::make_shared<std::string>();
  sub->add_option("what", *what, "models | systems | parts")->required()->check(CLI::IsMember({"models", "systems", "parts"}));
  sub->callback([&ctx, what] {
    const auto root = config::data_dir(ctx.data_dir);
    std::filesystem::path dir = *what == "models" ? root / "models"
                                : *what == "systems" ? root / "topologies" / "systems"
                                                     : root / "topologies" / "parts";
    std::set<std::string> names;
    if (std::filesystem::exists(dir))
      for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".json") names.insert(e.path().stem().string());
    for (const auto& n : names) ctx.out << n << "\n";
  });
}

}  // namespace moesim::cli
