// Fuzz target: the validation CSV reader. The input is parsed as a measurements table, its columns checked, and
// each row (up to 32) turned into a case the way `moesim validate` does, against the bundled catalog and dataset
// rules. Rows are not predicted (a step takes milliseconds to seconds; the engine has its own tests).
#include <cstdint>
#include <memory>

#include "config/csv_table.hpp"
#include "fuzz_support.hpp"
#include "model/model_catalog.hpp"
#include "model/model_loader.hpp"
#include "topology/system_catalog.hpp"
#include "validate/dataset_rules.hpp"
#include "validate/validation.hpp"

using namespace moesim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const model::ModelCatalog models(MOESIM_SOURCE_DIR);
  static const auto systems = topology::SystemCatalog::load(MOESIM_SOURCE_DIR);
  static const auto rules =
      std::make_shared<const validate::DatasetRules>(validate::load_dataset_rules(MOESIM_SOURCE_DIR));
  static const validate::Resolvers resolvers{
      [](const std::string& n) { return model::load_model_file(models.resolve(n, "fuzz.csv", "model")); },
      [](const std::string& n) { return systems.resolve(n); },
      rules,
      {}};
  if (size > 256 * 1024) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_answer("csv", [&] {
    const auto table = config::parse_csv(text, "fuzz.csv");
    validate::require_columns(table);
    for (std::size_t i = 0; i < table.rows.size() && i < 32; ++i)
      (void)validate::case_from_row(table.rows[i], resolvers);
  });
  return 0;
}
