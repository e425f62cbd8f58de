#pragma once
// Helpers shared by the model tests: catalog location and error capture.
#include <functional>
#include <string>

#include "core/error.hpp"
#include "model/model_catalog.hpp"
#include "model/model_loader.hpp"

inline constexpr const char* kDataDir = MOESIM_SOURCE_DIR;
inline const std::string kModelFixtures = std::string(MOESIM_FIXTURES_DIR) + "/model/";
inline const std::string kHfFixtures = std::string(MOESIM_FIXTURES_DIR) + "/hf/";

inline moesim::model::ModelSpec catalog_model(const std::string& name) {
  return moesim::model::ModelCatalog(kDataDir).load(name);
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
