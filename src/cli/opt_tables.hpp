#pragma once
// The bundled (or given) measurement tables as validate reads them: the catalogs that resolve their names, the
// dataset rules, and the recipe settings that fill unstated cells. Shared by the commands that walk tables.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "config/csv_table.hpp"
#include "model/model_catalog.hpp"
#include "topology/system_catalog.hpp"
#include "validate/recipe_settings.hpp"
#include "validate/validation.hpp"

namespace moesim::cli {

class TableSources {
 public:
  explicit TableSources(const Context& ctx);
  const std::filesystem::path& root() const { return root_; }
  // Resolvers for a table named `table_name` in messages (an unknown model is reported against its model column).
  validate::Resolvers resolvers(const std::string& table_name) const;
  // Reads `csv` (checking its columns) and fills its unstated cells from `recipes` (a file, or "none").
  config::CsvTable read(const std::string& csv, const std::string& recipes,
                        std::vector<validate::RecipeFill>* filled = nullptr) const;

 private:
  std::filesystem::path root_;
  model::ModelCatalog models_;
  topology::SystemCatalog systems_;
  std::shared_ptr<const validate::DatasetRules> rules_;
};

}  // namespace moesim::cli
