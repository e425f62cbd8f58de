#pragma once
// Software-stack settings of published rows that their table leaves blank, recovered from the recipe files the
// benchmarks ran (a reviewed CSV in the repository: data/measurements/groundtruth_recipes.csv, each line with its
// source file and commit). They fill only what the measurements table does not state; a value the table states
// is never replaced.
#include <string>
#include <vector>

#include "config/csv_table.hpp"
#include "validate/cell_spellings.hpp"

namespace moesim::validate {

// One filled cell.
struct RecipeFill {
  std::string id, column, value, source;
};

// The columns a recipe line may fill.
const std::vector<std::string>& recipe_columns();
// The on/off columns of a measurements row (0 or 1; blank = the default), whether a recipe fills them or not.
const std::vector<std::string>& switch_columns();

// True when a cell states nothing definite: blank, or as `spellings` say ("recipe default", a guess marked
// "(likely)" / "(assumed ...)" in data/rules/cell_spellings.json).
bool cell_is_unstated(const std::string& cell, const CellSpellings& spellings);
// True when `value` only makes a stated cell precise: a bare "partial" CUDA graph given its scopes
// ("partial: attn, moe_router"), or Megatron's bare "flex" dispatcher type given its backend.
bool value_refines(const std::string& cell, const std::string& value);

// Fills the unstated cells of `table` named by `recipes` (columns id, column, value, source; others ignored) and
// returns what it filled (unstated cells, and stated ones a value only refines), in the recipes' order. A recipe
// line for an unknown row id or column, a value its column cannot parse (dispatcher, recompute and cuda_graph by
// the layout parsers; 0/1 flags; a non-negative integer mtp; a positive capacity factor), a repeated (id, column)
// or an empty value or source is a ConfigError (file:line, with a did-you-mean). Lines whose cell the table states
// are skipped (the table wins).
std::vector<RecipeFill> apply_recipe_settings(config::CsvTable& table, const config::CsvTable& recipes,
                                              const CellSpellings& spellings);

}  // namespace moesim::validate
