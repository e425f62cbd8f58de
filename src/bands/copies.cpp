#include "bands/copies.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim::bands {
namespace {

constexpr std::string_view kLinkPhrase = "copied from";

std::string cell(const std::map<std::string, std::string>& row, const std::string& column) {
  const auto it = row.find(column);
  return it == row.end() ? std::string() : it->second;
}

// Values equal as numbers when both are numbers ("540" and "540.0" are one value), else as text.
bool same_value(const std::string& a, const std::string& b) {
  try {
    std::size_t ua = 0, ub = 0;
    const double x = std::stod(a, &ua), y = std::stod(b, &ub);
    if (ua == a.size() && ub == b.size()) return x == y;
  } catch (const std::exception&) {}
  return a == b;
}

struct Located {
  std::string table;
  std::size_t row = 0;
};

}  // namespace

std::optional<CopyLink> parse_copy_link(std::string_view notes, std::string* malformed) {
  // The link opens the cell and ends at the first ';' (or the cell's end).
  static const std::regex link(R"(^copied from (\S+\.csv) row ([^\s;]+)( \(same id\))?\s*(;|$))");
  std::match_results<std::string_view::const_iterator> m;
  if (std::regex_search(notes.begin(), notes.end(), m, link)) return CopyLink{m[1].str(), m[2].str(), m[3].matched};
  if (notes.find(kLinkPhrase) != std::string_view::npos && malformed)
    *malformed =
        "says \"copied from\" but does not open with a copy link: expected the notes to start with "
        "\"copied from <table>.csv row <id> (same id); \"";
  return std::nullopt;
}

CopyLinks copy_links(const std::vector<NamedTable>& tables) {
  Diagnostics d;
  std::vector<std::string> names;
  std::map<std::string, std::map<std::string, std::size_t>> rows_by_id;  // table -> id -> row index
  for (const auto& t : tables) {
    names.push_back(t.name);
    auto& ids = rows_by_id[t.name];
    for (std::size_t i = 0; i < t.csv->rows.size(); ++i) ids.emplace(cell(t.csv->rows[i], "id"), i);
  }
  auto table_named = [&](const std::string& name) -> const NamedTable* {
    for (const auto& t : tables)
      if (t.name == name) return &t;
    return nullptr;
  };
  auto where = [](const NamedTable& t, std::size_t i, const std::string& column) {
    return "line " + std::to_string(t.csv->row_lines[i]) + ", column " + column;
  };

  CopyLinks links;
  std::map<std::string, std::vector<Located>> originals_by_id;  // rows that are no copy, by id
  for (const auto& t : tables) {
    for (std::size_t i = 0; i < t.csv->rows.size(); ++i) {
      const auto& row = t.csv->rows[i];
      const std::string id = cell(row, "id");
      std::string malformed;
      const auto link = parse_copy_link(cell(row, "notes"), &malformed);
      if (!malformed.empty()) d.add(t.csv->file, where(t, i, "notes"), "row " + id + " " + malformed);
      if (!link) {
        originals_by_id[id].push_back({t.name, i});
        continue;
      }
      const std::string at = where(t, i, "notes");
      const NamedTable* of = table_named(link->table);
      if (!of) {
        d.add(t.csv->file, at,
              "row " + id + " is marked a copy of a row of " + link->table + ", which is not one of the tables read (" +
                  join_names(names) + ")" + did_you_mean(link->table, names));
        continue;
      }
      if (of == &t) {
        d.add(t.csv->file, at, "row " + id + " is marked a copy of a row of its own table: link to the other table");
        continue;
      }
      const auto& ids = rows_by_id[of->name];
      const auto found = ids.find(link->id);
      if (found == ids.end()) {
        std::vector<std::string> known;
        for (const auto& [k, _] : ids) known.push_back(k);
        d.add(t.csv->file, at,
              "row " + id + " is marked a copy of " + of->name + " row " + link->id + ", which " + of->name +
                  " does not have" + did_you_mean(link->id, known));
        continue;
      }
      if (link->same_id && link->id != id)
        d.add(t.csv->file, at,
              "row " + id + " says \"(same id)\" but copies " + of->name + " row " + link->id +
                  ": give it that id or drop \"(same id)\"");
      const auto& original = of->csv->rows[found->second];
      const std::string original_at = of->csv->file + " line " + std::to_string(of->csv->row_lines[found->second]);
      std::string chained;
      if (parse_copy_link(cell(original, "notes"), &chained))
        d.add(t.csv->file, at,
              "row " + id + " copies " + of->name + " row " + link->id +
                  ", itself a copy: link to the row it copies (the original measurement)");
      for (const char* column : {"metric", "value", "source"}) {
        const std::string mine = cell(row, column), theirs = cell(original, column);
        const bool same = std::string_view(column) == "value" ? same_value(mine, theirs) : mine == theirs;
        if (!same)
          d.add(t.csv->file, where(t, i, column),
                "row " + id + " is marked a copy of " + of->name + " row " + link->id + " (" + original_at +
                    "), but its " + column + " is \"" + mine + "\" where the original's is \"" + theirs +
                    "\": a copy is the same measurement (correct the copy, or drop the link and give the row its "
                    "own id)");
      }
      links[{t.name, id}] = *link;
    }
  }
  // An id of two tables' rows with no link between them: an unmarked copy, or two measurements under one id.
  for (const auto& [id, at] : originals_by_id) {
    std::set<std::string> seen;
    for (const auto& o : at) {
      if (!seen.empty() && !seen.count(o.table)) {
        const NamedTable& t = *table_named(o.table);
        d.add(t.csv->file, where(t, o.row, "notes"),
              "row " + id + " has the id of a row of " + *seen.begin() +
                  " but does not say it copies it: start its notes with \"copied from " + *seen.begin() + " row " + id +
                  " (same id); \" if it is that measurement, else give it its own id");
      }
      seen.insert(o.table);
    }
  }
  d.throw_if_any();
  return links;
}

std::vector<ErrorRow> fold_copies(std::vector<ErrorRow> rows, const CopyLinks& links) {
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (std::size_t i = 0; i < rows.size(); ++i) index.emplace(std::make_pair(rows[i].table, rows[i].id), i);
  std::vector<bool> drop(rows.size(), false);
  Diagnostics d;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto link = links.find({rows[i].table, rows[i].id});
    if (link == links.end()) continue;
    const auto original = index.find({link->second.table, link->second.id});
    if (original == index.end()) continue;  // the original was not predicted: the copy is the measurement's entry
    ErrorRow& o = rows[original->second];
    const ErrorRow& c = rows[i];
    drop[i] = true;
    if (c.group.empty()) continue;
    if (!o.group.empty() && (o.group != c.group || o.group_table != c.group_table)) {
      d.add(c.table, "row " + c.id,
            "one measurement in two sweep groups (\"" + o.group + "\" of " + o.group_table + ", \"" + c.group +
                "\" of " + c.group_table + "): the error table keeps one entry per measurement, with one group");
      continue;
    }
    o.group = c.group;
    o.group_table = c.group_table;
  }
  d.throw_if_any();
  std::vector<ErrorRow> out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (!drop[i]) out.push_back(std::move(rows[i]));
  return out;
}

}  // namespace moesim::bands
