#include "config/csv_table.hpp"

#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace moesim::config {

CsvTable parse_csv(const std::string& text, const std::string& file) {
  CsvTable t;
  t.file = file;
  std::vector<std::vector<std::string>> records;
  std::vector<int> lines;
  std::vector<std::string> rec;
  std::string field;
  bool quoted = false, any = false;
  int line = 1, start_line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"')
      quoted = true, any = true;
    else if (c == ',')
      rec.push_back(field), field.clear(), any = true;
    else if (c == '\r')
      continue;
    else if (c == '\n') {
      if (any || !field.empty()) {
        rec.push_back(field);
        records.push_back(rec);
        lines.push_back(start_line);
      }
      rec.clear(), field.clear(), any = false;
      start_line = ++line;
    } else
      field += c, any = true;
  }
  if (quoted) throw ConfigError({{file, "", "line " + std::to_string(start_line) + ": unterminated quoted field"}});
  if (any || !field.empty()) rec.push_back(field), records.push_back(rec), lines.push_back(start_line);
  if (records.empty()) throw ConfigError({{file, "", "empty CSV: expected a header line"}});
  t.columns = records.front();
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() > t.columns.size()) {
      // Only free text can absorb stray commas: surplus fields rejoin the last two columns' text (an unquoted
      // comma in a "source" or "notes" cell). A header without such a column makes it an error.
      const std::string& last = t.columns.back();
      if (last != "notes" && last != "source")
        throw ConfigError({{file, "",
                            "line " + std::to_string(lines[r]) + ": " + std::to_string(records[r].size()) +
                                " fields, but the header has " + std::to_string(t.columns.size())}});
      auto& record = records[r];
      const std::size_t keep = t.columns.size() - 2;  // fields before the last two columns
      const std::size_t surplus = record.size() - t.columns.size();
      std::string merged = record[keep];
      for (std::size_t i = 1; i <= surplus; ++i) merged += "," + record[keep + i];
      std::vector<std::string> fixed(record.begin(), record.begin() + static_cast<std::ptrdiff_t>(keep));
      fixed.push_back(merged);
      fixed.push_back(record.back());
      record = std::move(fixed);
    }
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < t.columns.size(); ++c) row[t.columns[c]] = c < records[r].size() ? records[r][c] : "";
    t.rows.push_back(std::move(row));
    t.row_lines.push_back(lines[r]);
  }
  return t;
}

CsvTable read_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError({{path.string(), "", "cannot open file"}});
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_csv(ss.str(), path.string());
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string q = "\"";
  for (char ch : text) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

}  // namespace moesim::config
