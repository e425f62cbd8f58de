#pragma once
// One measurement in two bundled tables. A layout sweep or the GB200 ladder keeps a copy of a recipe table's row
// (groundtruth.csv, bridge_heldout.csv) so that a sweep group or the ladder has every member; the copy is the same
// measurement from the same source, not a second piece of evidence, so the error table keeps one entry for it: the
// original's, which takes the copy's sweep group (its predictions are the same case's). Counting both would weigh
// the measurement twice in every band and every coverage figure (a copy that fits would count twice).
//
// The link is stated in the data, at the start of the copy's `notes` cell (src/bands/README.md "Copies"):
//     copied from <table file name> row <id> (same id); ...the rest of the notes
// and checked against the tables: the named table is one of those read, the row exists there and is no copy
// itself, "(same id)" means the ids are equal, and the metric, the value and the source cell are the original's.
// An id held by rows of two tables with no link between them is an error too, so that no copy goes unmarked.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bands/error_table.hpp"
#include "config/csv_table.hpp"

namespace moesim::bands {

// The row a copy repeats: its table's file name ("groundtruth.csv") and its id.
struct CopyLink {
  std::string table, id;
  bool same_id = false;  // the note says "(same id)"
};

// The link a notes cell states; nullopt when it states none. A cell that says "copied from" but does not start
// with a well-formed link is an error: `*malformed` gets what was expected (and nullopt is returned).
std::optional<CopyLink> parse_copy_link(std::string_view notes, std::string* malformed);

// A table as read, under the file name the error table calls it by (ErrorRow::table).
struct NamedTable {
  std::string name;
  const config::CsvTable* csv = nullptr;
};

// (table name, id) of each copy -> the row it copies.
using CopyLinks = std::map<std::pair<std::string, std::string>, CopyLink>;

// Every link of every table, checked as above; every problem is collected and thrown as one ConfigError naming
// the copy's file and line (and the original's line where the values differ).
CopyLinks copy_links(const std::vector<NamedTable>& tables);

// One entry per measurement: each copy's row is dropped and its sweep group (and the group's table) given to its
// original's row. A copy whose original was not predicted stays, as the only entry of its measurement. A
// measurement in two sweep groups is a ConfigError (an entry has one group).
std::vector<ErrorRow> fold_copies(std::vector<ErrorRow> rows, const CopyLinks& links);

}  // namespace moesim::bands
