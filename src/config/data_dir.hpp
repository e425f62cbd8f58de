#pragma once
// Where the catalog (models/, topologies/) lives: --data-dir, else $MOESIM_DATA_DIR, else the source tree
// moesim was built from.
#include <filesystem>
#include <string>

namespace moesim::config {

std::filesystem::path data_dir(const std::string& explicit_dir = "");

}  // namespace moesim::config
