#pragma once
// Loading JSON configs: parse errors with line and column, "extends" presets resolved with deep merge.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace moesim::config {

using Json = nlohmann::json;

// A JSON document and the file it came from (after "extends" has been resolved).
struct Document {
  std::string file;
  Json json;
};

// Objects merge key by key (recursively); any other value in `overlay` replaces the one in `base`.
Json deep_merge(Json base, const Json& overlay);

// Reads and parses `path`. A top-level "extends": "other.json" (relative to the file's folder; may chain)
// is loaded first and this file's keys are deep-merged over it; the "extends" key itself is removed.
// Problems (missing file, syntax error with line:column, extends cycle) are added to `diags` and an
// empty object is returned.
Document load_file(const std::filesystem::path& path, Diagnostics& diags);

// Parses text already in memory (used for built-in defaults and tests). `name` is reported as the file.
Document parse_text(const std::string& text, const std::string& name, Diagnostics& diags);

// Same as load_file but throws ConfigError at once on any problem.
Document load_file_or_throw(const std::filesystem::path& path);

}  // namespace moesim::config
