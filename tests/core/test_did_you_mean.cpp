#include <doctest/doctest.h>

#include "core/did_you_mean.hpp"
#include "core/units.hpp"

using namespace moesim;

TEST_CASE("edit distance is case-insensitive Levenshtein") {
  CHECK(edit_distance("top_k", "top_k") == 0);
  CHECK(edit_distance("top_kk", "top_k") == 1);
  CHECK(edit_distance("TOP_K", "top_k") == 0);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
}

TEST_CASE("nearest name suggests a plausible typo and nothing for unrelated words") {
  const std::vector<std::string> keys{"hidden_size", "num_layers", "top_k", "num_experts"};
  CHECK(nearest_name("hiden_size", keys).value() == "hidden_size");
  CHECK(nearest_name("num_expert", keys).value() == "num_experts");
  CHECK_FALSE(nearest_name("banana_bread", keys).has_value());
  CHECK(did_you_mean("topk", keys) == " (did you mean \"top_k\"?)");
  CHECK(did_you_mean("zzzzzzzzzz", keys).empty());
}

TEST_CASE("nearest name matches by containment for long names") {
  const std::vector<std::string> names{"deepseek-v3", "qwen3-235b-a22b"};
  CHECK(nearest_name("DeepSeek-V3 671B", names).value() == "deepseek-v3");
}

TEST_CASE("picosecond conversion round-trips") {
  CHECK(seconds_to_ps(1.0) == 1'000'000'000'000LL);
  CHECK(seconds_to_ps(1.5e-12) == 2);
  CHECK(ps_to_seconds(seconds_to_ps(12.345678)) == doctest::Approx(12.345678).epsilon(1e-12));
}

TEST_CASE("a name that differs in every position is not suggested") {
  const std::vector<std::string> header{"a", "b"};
  CHECK_FALSE(nearest_name("id", header).has_value());
  CHECK_FALSE(nearest_name("mbs", header).has_value());
  CHECK(nearest_name("tpp", {"tp", "pp"}).value() == "tp");
}
