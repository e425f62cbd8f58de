#pragma once
// How a search's result is written and read back: a ranked table for the terminal, JSON (the --json output and
// the shard files `moesim merge` reads), and CSV (one row per ranked layout).
#include <iosfwd>
#include <string>

#include "config/document.hpp"
#include "search/search_run.hpp"

namespace moesim::search {

std::string to_table(const SearchResult& r);
config::Json to_json(const SearchResult& r);
std::string to_csv(const SearchResult& r);
// A result written by to_json; ConfigError (exit 2) naming `file` and the JSON pointer of what is missing or
// of the wrong type.
SearchResult result_from_json(const config::Json& j, const std::string& file);

}  // namespace moesim::search
