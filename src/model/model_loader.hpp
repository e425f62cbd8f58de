#pragma once
// Reading a ModelSpec from a JSON file: the catalog format (models/*.json, see models/README.md) or a
// Hugging Face config.json (recognised by its "architectures" or "model_type" key; see hf_import.hpp).
//
// Catalog files are read strictly: unknown keys, wrong types, non-positive sizes and inconsistent values
// (top_k > num_experts, ...) are all reported in one ConfigError, each with file and JSON pointer.
// "extends": "base.json" presets are resolved first (config/document.hpp).
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "model/model_spec.hpp"

namespace moesim::config {
struct Document;
}

namespace moesim::model {

// Loads either format; throws ConfigError listing every problem.
ModelSpec load_model_file(const std::filesystem::path& path);

// Whether a parsed document is a Hugging Face config.json rather than a catalog file.
bool is_hf_config(const config::Document& doc);

// Reads a document in either format, adding problems to `diags` (the result is only meaningful when none
// were added).
ModelSpec read_model_document(const config::Document& doc, Diagnostics& diags);

// Reads the catalog format only.
ModelSpec read_catalog_model(const config::Document& doc, Diagnostics& diags);

}  // namespace moesim::model
