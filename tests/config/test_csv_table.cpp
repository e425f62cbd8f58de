// parse_csv: RFC 4180 quoting, line endings, the surplus-field rejoin into source/notes, and its errors.
#include <doctest/doctest.h>

#include <string>

#include "config/csv_table.hpp"
#include "core/error.hpp"

using moesim::config::parse_csv;

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_csv(text, "t.csv");
  } catch (const moesim::ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}
}  // namespace

TEST_CASE("plain rows become maps keyed by the header") {
  const auto t = parse_csv("a,b,c\n1,2,3\n4,,6\n", "t.csv");
  CHECK(t.file == "t.csv");
  CHECK(t.columns == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}, {"c", "3"}});
  CHECK(t.rows[1].at("b").empty());
  CHECK(t.row_lines == std::vector<int>{2, 3});
}

TEST_CASE("quoted fields: commas, doubled quotes, newlines inside quotes") {
  const auto t = parse_csv("id,text,n\n1,\"a, b\",2\n2,\"say \"\"hi\"\"\",3\n3,\"two\nlines\",4\n4,x,5\n", "t.csv");
  REQUIRE(t.rows.size() == 4);
  CHECK(t.rows[0].at("text") == "a, b");
  CHECK(t.rows[0].at("n") == "2");
  CHECK(t.rows[1].at("text") == "say \"hi\"");
  CHECK(t.rows[2].at("text") == "two\nlines");
  CHECK(t.rows[2].at("n") == "4");
  // Row lines count the physical lines: the row after the embedded newline starts on line 6.
  CHECK(t.row_lines == std::vector<int>{2, 3, 4, 6});
  // An empty quoted field is a field.
  CHECK(parse_csv("a,b\n\"\",1\n", "t.csv").rows.at(0).at("a").empty());
}

TEST_CASE("CRLF line endings, a missing final newline, blank lines and short rows") {
  const auto t = parse_csv("a,b\r\n1,2\r\n\r\n3,4", "t.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].at("b") == "2");  // no stray \r
  CHECK(t.rows[1].at("a") == "3");
  CHECK(t.rows[1].at("b") == "4");
  CHECK(t.row_lines == std::vector<int>{2, 4});
  // A row with fewer fields than the header leaves the rest empty.
  const auto s = parse_csv("a,b,c\n1\n", "t.csv");
  CHECK(s.rows.at(0).at("a") == "1");
  CHECK(s.rows.at(0).at("c").empty());
}

TEST_CASE("surplus fields rejoin the source column's text (an unquoted comma in free text)") {
  // groundtruth.csv's last two columns are source and notes: a stray comma in source shifts the notes.
  const auto t = parse_csv("id,value,source,notes\nG1,5,paper A, table 2,see text\nG2,6,a,b, c, d\n", "t.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].at("source") == "paper A, table 2");
  CHECK(t.rows[0].at("notes") == "see text");
  CHECK(t.rows[0].at("value") == "5");
  // All surplus goes to the second-to-last column; the last field stays the notes.
  CHECK(t.rows[1].at("source") == "a,b, c");
  CHECK(t.rows[1].at("notes") == " d");
  // The same with "source" as the last column: the rejoin still keeps the last field last.
  const auto u = parse_csv("id,notes,source\nG1,x, y,z\n", "t.csv");
  CHECK(u.rows.at(0).at("notes") == "x, y");
  CHECK(u.rows.at(0).at("source") == "z");
}

TEST_CASE("errors: too many fields without a free-text column, unterminated quote, empty file") {
  CHECK(error_of("a,b\n1,2,3\n") == "t.csv: line 2: 3 fields, but the header has 2");
  CHECK(error_of("a,b\n1,2\n3,\"open\n4,5\n") == "t.csv: line 3: unterminated quoted field");
  CHECK(error_of("") == "t.csv: empty CSV: expected a header line");
  CHECK(error_of("\n\n") == "t.csv: empty CSV: expected a header line");
}

TEST_CASE("read_csv: a missing file is a ConfigError naming it") {
  try {
    moesim::config::read_csv("/nonexistent/x.csv");
    FAIL("expected ConfigError");
  } catch (const moesim::ConfigError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/x.csv: cannot open file");
  }
  const auto t = moesim::config::read_csv(MOESIM_FIXTURES_DIR "/cli/validate_3rows.csv");
  CHECK(t.rows.size() == 3);
  CHECK(t.columns.size() == 28);
  CHECK(t.rows[0].at("notes") == "predictable row: a catalog model on one DGX H100");
}
