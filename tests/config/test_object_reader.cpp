#include <doctest/doctest.h>

#include "config/object_reader.hpp"
#include "config/overrides.hpp"

using namespace moesim;
using namespace moesim::config;

namespace {
std::vector<std::string> messages(const Diagnostics& d) {
  std::vector<std::string> out;
  for (const auto& x : d.items()) out.push_back(x.to_string());
  return out;
}
}  // namespace

TEST_CASE("strict reader reports every problem of a document in one pass") {
  Diagnostics d;
  const Document doc = parse_text(R"({"hidden_size": 7168, "num_layer": 61, "top_k": -2,
                                     "moe": {"num_experts": "256", "extra": 1}, "name": 5})",
                                  "m.json", d);
  REQUIRE(d.empty());
  {
    ObjectReader r(doc, d);
    CHECK(r.integer("hidden_size") == 7168);
    r.integer("num_layers");   // missing (typo'd in the file)
    r.integer("top_k");        // negative
    r.string_or("name", "x");  // wrong type
    auto moe = r.object("moe");
    moe.integer("num_experts");  // wrong type
  }
  const auto m = messages(d);
  REQUIRE(m.size() == 6);
  CHECK(m[0] == "m.json:/num_layers: missing required key \"num_layers\"");
  CHECK(m[1] == "m.json:/top_k: expected a positive integer, got -2");
  CHECK(m[2] == "m.json:/name: expected a string, got number 5");
  CHECK(m[3] == "m.json:/moe/num_experts: expected a positive integer, got string \"256\"");
  CHECK(m[4] == "m.json:/moe/extra: unknown key \"extra\"");
  CHECK(m[5] == "m.json:/num_layer: unknown key \"num_layer\" (did you mean \"num_layers\"?)");
  CHECK_THROWS_AS(d.throw_if_any(), ConfigError);
}

TEST_CASE("choices are checked with a did-you-mean") {
  Diagnostics d;
  const Document doc = parse_text(R"({"dispatcher": "deepepp"})", "l.json", d);
  ObjectReader r(doc, d);
  CHECK(r.choice("dispatcher", {"alltoall", "allgather", "deepep", "hybridep"}) == "alltoall");
  r.finish();
  REQUIRE(d.size() == 1);
  CHECK(d.items()[0].message ==
        "expected one of alltoall, allgather, deepep, hybridep, got \"deepepp\" (did you mean \"deepep\"?)");
}

TEST_CASE("malformed JSON reports line and column") {
  Diagnostics d;
  parse_text("{\n  \"a\": 1,\n  \"b\": }\n", "bad.json", d);
  REQUIRE(d.size() == 1);
  CHECK(d.items()[0].message.rfind("malformed JSON at line 3, column 8", 0) == 0);
}

TEST_CASE("numbers: bounds, zero and non-finite") {
  Diagnostics d;
  const Document doc = parse_text(R"({"a": 0, "b": 0, "c": 2.5, "d": 3.0})", "n.json", d);
  ObjectReader r(doc, d);
  CHECK(r.number("a") == 0);
  CHECK(r.number("b", Bound::non_negative) == 0);
  CHECK(r.integer("c") == 0);
  CHECK(r.integer("d") == 3);
  r.finish();
  REQUIRE(d.size() == 2);
  CHECK(d.items()[0].message == "expected a positive number, got 0");
  CHECK(d.items()[1].message == "expected a positive integer, got number 2.5");
}

TEST_CASE("integers past int64 are refused, not converted (fuzz_config finding)") {
  Diagnostics d;
  const Document doc =
      parse_text(R"({"a": 44400000001013162650, "b": 18446744073709551615, "c": 9223372036854775807})", "n.json", d);
  ObjectReader r(doc, d);
  CHECK(r.integer("a") == 0);
  CHECK(r.integer("b") == 0);
  CHECK(r.integer("c") == 9223372036854775807);
  r.finish();
  REQUIRE(d.size() == 2);
  CHECK(d.items()[0].message.rfind("expected a positive integer below 2^63, got number", 0) == 0);
  CHECK(d.items()[1].message.rfind("expected a positive integer below 2^63, got number", 0) == 0);
}

TEST_CASE("deep merge: objects merge, other values replace") {
  Json base = Json::parse(R"({"a": {"x": 1, "y": 2}, "b": [1, 2], "c": 1})");
  Json over = Json::parse(R"({"a": {"y": 3, "z": 4}, "b": [9]})");
  Json m = deep_merge(base, over);
  CHECK(m == Json::parse(R"({"a": {"x": 1, "y": 3, "z": 4}, "b": [9], "c": 1})"));
}

TEST_CASE("extends chains presets and detects cycles") {
  Diagnostics d;
  Document doc = load_file(MOESIM_FIXTURES_DIR "/config/child.json", d);
  CHECK(d.empty());
  CHECK(doc.json["name"] == "child");
  CHECK(doc.json["nested"]["kept"] == 1);
  CHECK(doc.json["nested"]["changed"] == 20);
  CHECK_FALSE(doc.json.contains("extends"));

  Diagnostics d2;
  load_file(MOESIM_FIXTURES_DIR "/config/cycle_a.json", d2);
  REQUIRE(d2.size() == 1);
  CHECK(d2.items()[0].message.find("cycle") != std::string::npos);

  Diagnostics d3;
  load_file(MOESIM_FIXTURES_DIR "/config/does_not_exist.json", d3);
  REQUIRE(d3.size() == 1);
  CHECK(d3.items()[0].message == "cannot open file");
}

TEST_CASE("--set overrides accept dotted paths and JSON pointers") {
  Json doc = Json::parse(R"({"moe": {"top_k": 8}})");
  apply_override(doc, parse_override("moe.top_k=4"));
  apply_override(doc, parse_override("/moe/kind=deepep"));
  apply_override(doc, parse_override("new.flag=true"));
  CHECK(doc["moe"]["top_k"] == 4);
  CHECK(doc["moe"]["kind"] == "deepep");
  CHECK(doc["new"]["flag"] == true);
  CHECK_THROWS_AS(parse_override("novalue"), UsageError);
  CHECK_THROWS_AS(parse_override("=3"), UsageError);
}
