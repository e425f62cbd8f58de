#pragma once
// Reading single part files (topologies/parts/<kind>/<name>.json). Strict: unknown keys, missing keys,
// non-positive bandwidths are reported all at once as a ConfigError (exit 2). The part's name is the
// file stem. SystemCatalog uses these for the whole catalog; they are public for tools and tests.
#include <filesystem>

#include "topology/parts.hpp"

namespace moesim::topology {

GpuSpec read_gpu_file(const std::filesystem::path& path);
NicSpec read_nic_file(const std::filesystem::path& path);
SwitchSpec read_switch_file(const std::filesystem::path& path);

}  // namespace moesim::topology
