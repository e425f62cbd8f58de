#pragma once
// Where the catalog (models/, topologies/) and the calibration data (data/params/, kernels-sim/data/efficiency/,
// kernels-sim/fits/) live: --data-dir, else $MOESIM_DATA_DIR, else the source tree moesim was built from.
#include <filesystem>
#include <string>

namespace moesim::config {

std::filesystem::path data_dir(const std::string& explicit_dir = "");

}  // namespace moesim::config
