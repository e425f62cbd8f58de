#pragma once
// Helpers shared by the model tests: catalog location and error capture.
#include <functional>
#include <string>

#include "config/document.hpp"
#include "core/error.hpp"
#include "model/model_catalog.hpp"
#include "model/model_loader.hpp"

inline constexpr const char* kDataDir = MOESIM_SOURCE_DIR;
inline const std::string kModelFixtures = std::string(MOESIM_FIXTURES_DIR) + "/model/";
inline const std::string kHfFixtures = std::string(MOESIM_FIXTURES_DIR) + "/hf/";

inline moesim::model::ModelSpec catalog_model(const std::string& name) {
  return moesim::model::ModelCatalog(kDataDir).load(name);
}

// A model read from text in memory, in either format (`name` is reported as the file); throws ConfigError.
inline moesim::model::ModelSpec model_from_text(const std::string& text, const std::string& name) {
  moesim::Diagnostics diags;
  const moesim::config::Document doc = moesim::config::parse_text(text, name, diags);
  diags.throw_if_any();
  moesim::model::ModelSpec m = moesim::model::read_model_document(doc, diags);
  diags.throw_if_any();
  return m;
}

// The ConfigError message `f` throws, or "<no error>".
inline std::string config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const moesim::ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}
