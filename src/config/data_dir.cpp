#include "config/data_dir.hpp"

#include <cstdlib>

namespace moesim::config {

std::filesystem::path data_dir(const std::string& explicit_dir) {
  if (!explicit_dir.empty()) return explicit_dir;
  if (const char* env = std::getenv("MOESIM_DATA_DIR"); env && *env) return env;
  return MOESIM_DATA_DIR_DEFAULT;
}

}  // namespace moesim::config
