// moesim validate: predict every row of a measurements table and report the error of each.
#include <ostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/opt_case.hpp"
#include "config/csv_table.hpp"
#include "config/data_dir.hpp"
#include "model/model_catalog.hpp"
#include "predict/validation.hpp"
#include "topology/system_catalog.hpp"

namespace moesim::cli {

void add_validate_command(CLI::App& app, Context& ctx) {
  struct Args {
    std::string csv;
    bool json = false;
    bool markdown = false;
    std::vector<std::string> params;
    std::string kernel_model = "auto";
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand("validate", "Predict published measurements (groundtruth.csv schema) and report the error of each row");
  sub->add_option("--csv", args->csv, "Measurements CSV (default: ../shared/reference/groundtruth.csv next to the source tree)");
  sub->add_flag("--json", args->json, "Print rows and summary as JSON");
  sub->add_flag("--markdown", args->markdown, "Print the README accuracy table");
  sub->add_option("--param", args->params, "Override a general model parameter, name=value; repeatable");
  add_kernel_model_flag(*sub, args->kernel_model);
  sub->callback([&ctx, args] {
    const auto root = config::data_dir(ctx.data_dir);
    const std::string csv = !args->csv.empty() ? args->csv : (root / ".." / "shared" / "reference" / "groundtruth.csv").string();
    const auto table = config::read_csv(csv);
    const model::ModelCatalog models(root);
    const auto systems = topology::SystemCatalog::load(root);
    predict::Resolvers r{[&](const std::string& n) { return models.load(n); },
                         [&](const std::string& n) { return systems.resolve(n); }};
    const auto kernel_model = select_kernel_model_per_gpu(args->kernel_model, ctx);
    predict::PredictOptions base;
    base.kernels = kernel_model.model.get();
    base.params = step_params(args->params);
    const auto result = predict::validate_table(table, r, base);
    if (args->json) {
      // Which kernel costs priced the rows travels with them (the validation JSON has no field of its own for it).
      auto j = nlohmann::ordered_json::parse(predict::to_json_text(result));
      j["kernel_model"] = kernel_model.why;
      ctx.out << j.dump(2) << "\n";
    } else {
      ctx.out << (args->markdown ? predict::to_markdown(result) : predict::to_text_table(result));
      ctx.out << (args->markdown ? "\nKernel costs: " : "kernel model: ") << kernel_model.why << "\n";
    }
  });
}

}  // namespace moesim::cli
