#pragma once
// A small RFC 4180 CSV reader (quoted fields, doubled quotes, newlines inside quotes) for measurement tables
// such as groundtruth.csv. Rows are maps from the header's column names.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace moesim::config {

struct CsvTable {
  std::string file;
  std::vector<std::string> columns;
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<int> row_lines;  // 1-based line where each row starts, for messages
};

// Throws ConfigError (file:line) on an unterminated quote, or on a row with more fields than the header unless
// the header ends with free-text columns ("source", "notes"), which then take the surplus back as text.
CsvTable parse_csv(const std::string& text, const std::string& file);
CsvTable read_csv(const std::filesystem::path& path);

// One field as a CSV writer puts it: as it is, or in quotes with inner quotes doubled when it holds a comma, a
// quote or a newline (what parse_csv reads back).
std::string csv_cell(const std::string& text);

}  // namespace moesim::config
