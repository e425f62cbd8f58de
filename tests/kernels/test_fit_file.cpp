// Fit file round trip, JSONL record round trip, and the JSONL reader's file:line diagnostics.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "kernels/fit/fit_file.hpp"
#include "kernels/fit/fitter.hpp"
#include "kernels/fit/record.hpp"
#include "test_fit_synthetic.hpp"

using namespace moesim::kernels::fit;

TEST_CASE("fit file: write, parse, write gives identical text and equal values") {
  auto recs = synthetic::gemm_records({6.0, 1.3, 1.1, 0.7}, 0.01, 11);
  auto norm = synthetic::rmsnorm_records({4.0, 1.2}, 0.01, 11);
  recs.insert(recs.end(), norm.begin(), norm.end());
  auto comm = synthetic::base_record("ep_notify", "int32");
  comm.shape = {{"tokens", 4096}, {"ep", 64}};
  comm.time = {1000, 900, 1100};
  recs.push_back(comm);
  const FitFile fit = fit_calibration(synthetic::as_data(recs));
  const std::string text = write_fit_file(fit);
  const FitFile back = parse_fit_file(text, "roundtrip.json");
  CHECK(write_fit_file(back) == text);
  REQUIRE(back.families.size() == 2);
  CHECK(back.families[0].family == "gemm/bf16");
  for (std::size_t i = 0; i < 4; ++i)
    CHECK(back.families[0].coefficients[i].value == fit.families[0].coefficients[i].value);  // bit-exact
  CHECK(back.families[1].r2 == fit.families[1].r2);
  CHECK(back.peaks.hbm_tbps == 4.8);
  CHECK(back.data_hash == "fnv1a64:0000000000000000");
  REQUIRE(back.skipped.size() == 1);
  CHECK(back.skipped[0].family == "ep_notify/int32");
  // The fit predicts what it was fitted on.
  const auto peaks = *find_gpu_peaks("NVIDIA H200");
  CHECK(back.find("rmsnorm/bf16")->predict_us(feature_vector(norm[3], peaks)) ==
        doctest::Approx(norm[3].time.median_us).epsilon(0.03));
}

TEST_CASE("fit file reader rejects unknown keys, a wrong schema and negative coefficients") {
  const std::string text =
      R"({"schema":"moesim.kernel_fit/0","gpu":"NVIDIA H200","peaks":{"key":"H200","bf16_tflops":989,
    "fp8_tflops":1979,"mxfp8_tflops":0,"hbm_tbps":4.8,"sm_count":132,"source":"s"},"data_hash":"x","records":3,
    "families":[{"family":"rmsnorm/bf16","kernel":"rmsnorm","dtype":"bf16","model":"memory_bound","n":3,"r2":1,
    "median_rel_error":0,"max_rel_error":0,"coefficients":[{"name":"constant","unit":"us","definition":"1","value":-2}]}],
    "skiped":[]})";
  try {
    parse_fit_file(text, "bad_fit.json");
    FAIL("expected ConfigError");
  } catch (const moesim::ConfigError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("bad_fit.json:/schema: expected \"moesim.kernel_fit/1\"") != std::string::npos);
    CHECK(msg.find("bad_fit.json:/families/0/coefficients/0/value: expected a non-negative number") !=
          std::string::npos);
    CHECK(msg.find("bad_fit.json:/skiped: unknown key \"skiped\" (did you mean \"skipped\"?)") != std::string::npos);
    CHECK(msg.find("bad_fit.json:/skipped: missing required key") != std::string::npos);
  }
}

TEST_CASE("JSONL record: to_jsonl then parse_jsonl gives the record back") {
  auto r = synthetic::base_record("grouped_gemm", "fp8_block128");
  r.variant = "skewed";
  r.shape = {{"n", 4096}, {"k", 7168}, {"experts", 4}};
  r.groups = {300, 0, 17};
  r.sms_used = 112;
  r.time = {123.25, 120.5, 130.125};
  r.written_at = "2026-12-04T03:01:02.123Z";  // the calibration writers' stamp (kernels-sim/cuda/calib_record.hpp)
  moesim::Diagnostics diags;
  const auto back = parse_jsonl(to_jsonl(r) + "\n", "one.jsonl", diags);
  REQUIRE(diags.empty());
  REQUIRE(back.size() == 1);
  CHECK(back[0].location == "one.jsonl:1");
  CHECK(back[0].written_at == r.written_at);
  CHECK(to_jsonl(back[0]) == to_jsonl(r));
  CHECK(back[0].groups == r.groups);
  CHECK(back[0].gpu.mem_clock_mhz == 3201);
}

TEST_CASE("JSONL record: the calibration labels and a skip record round-trip; a skip record with a time is an error") {
  auto r = synthetic::base_record("gemm", "fp8_tensor");
  r.shape = {{"m", 1}, {"n", 2}, {"k", 3}};
  r.implementation = "cuBLASLt";
  r.fast_accum = false;
  r.other_software = {{"cublas", "13.1.0"}, {"torch", "2.11.0"}};
  r.skipped = "gemm_lt.cu:1: no algorithm";
  moesim::Diagnostics diags;
  const auto back = parse_jsonl(to_jsonl(r) + "\n", "one.jsonl", diags);
  REQUIRE(diags.empty());
  REQUIRE(back.size() == 1);
  CHECK(to_jsonl(back[0]) == to_jsonl(r));
  CHECK(back[0].fast_accum == false);
  CHECK(back[0].skipped == r.skipped);
  CHECK(back[0].other_software.at("cublas") == "13.1.0");
  auto stand_in = synthetic::base_record("permute", "bf16");
  stand_in.shape = {{"tokens", 1}, {"hidden", 8}, {"top_k", 1}};
  stand_in.stand_in = true;
  stand_in.time = {1, 1, 1};
  CHECK(parse_jsonl(to_jsonl(stand_in), "s", diags).at(0).stand_in);
  REQUIRE(diags.empty());
  // A skip record carries no time.
  std::string both = to_jsonl(r);
  both.insert(both.size() - 1, R"(,"time_us":{"median":1,"p10":1,"p90":1})");
  parse_jsonl(both, "both.jsonl", diags);
  REQUIRE(diags.size() == 1);
  CHECK(diags.items()[0].message.find("a skip record (\"skipped\") has no time") != std::string::npos);
}

TEST_CASE("JSONL reader reports every malformed line as file:line with the field") {
  const std::string path = MOESIM_FIXTURES_DIR "/kernels/bad_records.jsonl";
  try {
    read_calibration_data(path);
    FAIL("expected ConfigError");
  } catch (const moesim::ConfigError& e) {
    const std::string msg = e.what();
    CHECK(msg.find(path + ":2: not valid JSON") != std::string::npos);
    CHECK(msg.find(path + ":3:/shape: kernel \"gemm\" needs shape entry \"k\"") != std::string::npos);
    CHECK(msg.find(path + ":4:/tmie_us: unknown key \"tmie_us\" (did you mean \"time_us\"?)") != std::string::npos);
    CHECK(msg.find(path + ":4:/time_us: missing required key") != std::string::npos);
    CHECK(msg.find(path + ":7:/time_us: expected p10 <= median <= p90") != std::string::npos);
    CHECK(msg.find(path + ":8:/kernel: expected one of") != std::string::npos);
    CHECK(msg.find("did you mean \"gemm\"") != std::string::npos);
    CHECK(msg.find(path + ":8:/repeats: expected a positive integer, got 0") != std::string::npos);
    CHECK(msg.find(path + ":9:/groups: grouped_gemm needs \"groups\"") != std::string::npos);
    CHECK(msg.find(path + ":9:/sms_used: sms_used 200 exceeds the GPU's sm_count 132") != std::string::npos);
    CHECK(msg.find(path + ":1:") == std::string::npos);  // the good line is not reported
    CHECK(e.diagnostics().size() == 9);                  // one per problem, no follow-on noise
  }
}

TEST_CASE("data hash: FNV-1a 64 test vectors, and it depends on the bytes read") {
  CHECK(fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a64("foobar") == 0x85944171f73967e8ull);
  CHECK(fnv1a64("bar", fnv1a64("foo")) == fnv1a64("foobar"));
}
