#include "cli/opt_tables.hpp"

#include "config/data_dir.hpp"
#include "model/model_loader.hpp"
#include "stages/stage_layout.hpp"

namespace moesim::cli {

TableSources::TableSources(const Context& ctx)
    : root_(config::data_dir(ctx.data_dir)),
      models_(root_),
      systems_(topology::SystemCatalog::load(root_)),
      rules_(std::make_shared<const validate::DatasetRules>(validate::load_dataset_rules(root_))) {}

validate::Resolvers TableSources::resolvers(const std::string& table_name) const {
  return {[this, table_name](const std::string& n) {
            return model::load_model_file(models_.resolve(n, table_name, "model"));
          },
          [this](const std::string& n) { return systems_.resolve(n); }, rules_,
          [](const predict::Case& c, const predict::PredictOptions& o) { return stages::default_stage_layout(c, o); }};
}

config::CsvTable TableSources::read(const std::string& csv, const std::string& recipes,
                                    std::vector<validate::RecipeFill>* filled) const {
  auto table = config::read_csv(csv);
  validate::require_columns(table);
  if (recipes != "none") {
    auto fills = validate::apply_recipe_settings(table, config::read_csv(recipes), rules_->spellings);
    if (filled) *filled = std::move(fills);
  }
  return table;
}

}  // namespace moesim::cli
