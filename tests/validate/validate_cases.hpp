#pragma once
// The resolvers the validate tests read the bundled tables with: the repository's catalog and dataset rules.
#include <memory>
#include <string>

#include "../predict/predict_cases.hpp"
#include "validate/dataset_rules.hpp"
#include "validate/validation.hpp"

namespace moesim::test {

// How validate resolves a bundled table's names: the repository's model catalog and systems, and its dataset rules
// (data/rules/), each read once.
inline validate::Resolvers catalog_resolvers() {
  static const model::ModelCatalog models(MOESIM_SOURCE_DIR);
  static const auto rules =
      std::make_shared<const validate::DatasetRules>(validate::load_dataset_rules(MOESIM_SOURCE_DIR));
  return {[](const std::string& n) { return models.load(n); },
          [](const std::string& n) { return systems().resolve(n); },
          rules,
          {}};
}

}  // namespace moesim::test
