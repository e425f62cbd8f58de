// moesim validate: predict every row of a measurements table and report the error of each.
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "config/csv_table.hpp"
#include "config/data_dir.hpp"
#include "model/model_catalog.hpp"
#include "predict/validation.hpp"
#include "topology/system_catalog.hpp"

#ifndef MOESIM_REFERENCE_CSV
#define MOESIM_REFERENCE_CSV ""
#endif

namespace moesim::cli {

void add_validate_command(CLI::App& app, Context& ctx) {
  struct Args {
    std::string csv;
    bool json = false;
    bool markdown = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand("validate", "Predict published measurements (groundtruth.csv schema) and report the error of each row");
  sub->add_option("--csv", args->csv, "Measurements CSV (default: ../shared/reference/groundtruth.csv next to the source tree)");
  sub->add_flag("--json", args->json, "Print rows and summary as JSON");
  sub->add_flag("--markdown", args->markdown, "Print the README accuracy table");
  sub->callback([&ctx, args] {
    const auto root = config::data_dir(ctx.data_dir);
    const std::string csv = !args->csv.empty() ? args->csv : (root / ".." / "shared" / "reference" / "groundtruth.csv").string();
    const auto table = config::read_csv(csv);
    const model::ModelCatalog models(root);
    const auto systems = topology::SystemCatalog::load(root);
    predict::Resolvers r{[&](const std::string& n) { return models.load(n); },
                         [&](const std::string& n) { return systems.resolve(n); }};
    const auto result = predict::validate_table(table, r);
    ctx.out << (args->json ? predict::to_json_text(result) : args->markdown ? predict::to_markdown(result) : predict::to_text_table(result));
  });
}

}  // namespace moesim::cli
