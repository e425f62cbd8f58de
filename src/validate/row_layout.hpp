#pragma once
// A measurements row's layout, read through the layout field table (layout/layout_fields.hpp): every column
// named by a field's short key fills that field (set_layout_field), so a table may carry any layout field.
// The table's own conventions, on top of the field parsers:
// - gpus, tp, pp, mbs, gbs and seq are required integers; another integer column that is blank or not an
//   integer keeps the default (ep 1 — case_from_row refuses a blank ep for an MoE model —, vpp 1, cp 1, etp 1,
//   mtp 0; etp is not tp here: a published row states its expert TP);
// - the on/off columns (validate::switch_columns) hold 0, 1 or nothing; anything else skips the row;
// - dispatcher: the spellings of data/rules/cell_spellings.json (blank, "recipe default" and "n/a" read as
//   alltoall, "all-to-all ..." as alltoall, Megatron's "flex ..." without a named backend as DeepEP);
// - a blank column keeps the layout's default (precision BF16, recompute none, cuda_graph none, ...).
#include <map>
#include <optional>
#include <string>

#include "layout/layout.hpp"
#include "validate/cell_spellings.hpp"

namespace moesim::validate {

using Row = std::map<std::string, std::string>;

// The text of `column` in `row` ("" when absent).
std::string cell(const Row& row, const std::string& column);
// An integer column; nullopt when blank or not an integer (std::stoi's syntax, the whole cell).
std::optional<int> integer_cell(const Row& row, const std::string& column);

// Fills `l` from the row; returns the reason the row cannot be read, or nullopt.
std::optional<std::string> read_row_layout(const Row& row, const CellSpellings& spellings, layout::Layout& l);

}  // namespace moesim::validate
