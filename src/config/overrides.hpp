#pragma once
// `--set path=value` overrides applied to a JSON document before it is read.
#include <string>
#include <vector>

#include "config/document.hpp"

namespace moesim::config {

struct Override {
  std::string path;   // dotted ("moe.top_k") or a JSON pointer ("/moe/top_k")
  std::string value;  // parsed as JSON when it parses ("8", "true", "[1,2]"), else taken as a string
};

// Parses "path=value"; a missing '=' or empty path is a UsageError.
Override parse_override(const std::string& text);

// Sets the value at `path`, creating intermediate objects. Unknown keys are caught later by the strict
// reader, with the usual did-you-mean.
void apply_override(Json& doc, const Override& o);

}  // namespace moesim::config
