// Trace extraction on a tiny hand-written Chrome trace (tests/fixtures/kernels/tiny_trace.json), shaped like
// DeepSeek's profile-data trace.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "kernels/fit/trace_extract.hpp"

using namespace moesim::kernels::fit;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
const CalibrationRecord* find(const TraceExtraction& ex, const std::string& kernel, std::int64_t seq = 0) {
  for (const auto& r : ex.records)
    if (r.kernel == kernel && (seq == 0 || r.dim("seq_q") == seq)) return &r;
  return nullptr;
}
}  // namespace

TEST_CASE("tiny trace: shapes from grids and templates, occurrences merged, the rest listed as unmatched") {
  TraceFacts facts;
  facts.source = "tiny fixture";
  const auto ex = extract_trace_calibration(slurp(MOESIM_FIXTURES_DIR "/kernels/tiny_trace.json"), "tiny", facts);
  CHECK(ex.kernels_seen == 8);
  CHECK(ex.kernel_us_seen == 1250 + 1200 + 400 + 3300 + 110 + 900 + 5 + 7);
  CHECK(ex.kernel_us_extracted == 1250 + 1200 + 400 + 3300 + 110);
  REQUIRE(ex.records.size() == 4);

  const auto* attn = find(ex, "attention_fwd", 4096);
  REQUIRE(attn != nullptr);
  CHECK(attn->repeats == 2);
  CHECK(attn->time.median_us == 1250);  // nearest rank of {1200, 1250}
  CHECK(attn->time.p10_us == 1200);
  CHECK(attn->time.p90_us == 1250);
  CHECK(attn->dim("heads") == 128);
  CHECK(attn->dim("head_dim_qk") == 192);
  CHECK(attn->dim("head_dim_v") == 128);
  CHECK(attn->dim("causal") == 1);
  CHECK(attn->gpu.name == "NVIDIA H800");
  CHECK(attn->gpu.sm_count == 132);
  CHECK(attn->date == "2025-02-25");
  CHECK(attn->source == "tiny fixture");
  const auto* short_attn = find(ex, "attention_fwd", 2048);
  REQUIRE(short_attn != nullptr);
  CHECK(short_attn->repeats == 1);

  const auto* dispatch = find(ex, "ep_dispatch");
  REQUIRE(dispatch != nullptr);
  CHECK(dispatch->dtype == "fp8");
  CHECK(dispatch->sms_used == 20);
  CHECK(dispatch->dim("ep") == 64);
  CHECK(dispatch->dim("hidden") == 7168);
  CHECK(dispatch->dim("tokens") == 4096);
  CHECK(dispatch->dim("top_k") == 8);

  const auto* norm = find(ex, "rmsnorm");
  REQUIRE(norm != nullptr);
  CHECK(norm->dim("hidden") == 7168);
  CHECK(norm->dim("tokens") == 4096);

  REQUIRE(ex.unmatched.size() == 2);
  CHECK(ex.unmatched[0].name.find("m_grouped_fp8") != std::string::npos);
  CHECK(ex.unmatched[0].reason.find("no input shapes") != std::string::npos);
  CHECK(ex.unmatched[1].name == "rotary_kernel");
  CHECK(ex.unmatched[1].count == 2);
  CHECK(ex.unmatched[1].total_us == 12);
}

TEST_CASE("records extracted from a trace pass the strict JSONL reader") {
  const auto ex = extract_trace_calibration(slurp(MOESIM_FIXTURES_DIR "/kernels/tiny_trace.json"), "tiny", {8, "s"});
  std::string text;
  for (const auto& r : ex.records) text += to_jsonl(r) + "\n";
  moesim::Diagnostics diags;
  CHECK(parse_jsonl(text, "t.jsonl", diags).size() == ex.records.size());
  CHECK(diags.empty());
}

TEST_CASE("a file that is not a trace is a config error") {
  CHECK_THROWS_WITH_AS(extract_trace_calibration("{\"traceEvents\": 3}", "x.json", {}),
                       doctest::Contains("x.json:/traceEvents: not a Chrome trace"), moesim::ConfigError);
  CHECK_THROWS_WITH_AS(
      extract_trace_calibration(R"({"traceEvents":[],"deviceProperties":[{"name":"G","numSms":1}],"traceName":"t"})",
                                "y.json", {}),
      doctest::Contains("y.json:/traceName: expected a trace name with"), moesim::ConfigError);
}
