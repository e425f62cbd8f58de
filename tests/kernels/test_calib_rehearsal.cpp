// The calibration program's host half (kernels-sim/cuda/: plan, record writer, rehearsal) against the committed
// format sample (tests/kernels/calibration_format_sample/, FAKE timings, NOT a measurement) and the fitter that
// reads it: the writer and the reader cannot drift apart without one of these failing.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "calib_plan.hpp"
#include "calib_rehearsal.hpp"
#include "kernels/fit/features.hpp"
#include "kernels/fit/fitter.hpp"

namespace fit = moesim::kernels::fit;

namespace {
const std::string sample_dir = MOESIM_SOURCE_DIR "/tests/kernels/calibration_format_sample";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

calib::PlanOptions quick() {
  calib::PlanOptions o;
  o.quick = true;
  return o;
}
}  // namespace

TEST_CASE("the C++ writer's rehearsal output is the committed format sample, byte for byte") {
  std::ostringstream out;
  calib::write_rehearsal(quick(), out);
  const std::string sample = read_text(sample_dir + "/kernels.jsonl");
  REQUIRE_FALSE(sample.empty());
  CHECK(out.str() == sample);  // on a deliberate change: regenerate (README.md there) and review the diff
}

TEST_CASE("the format sample parses: timed, skip and host-cost records, each labelled") {
  const fit::CalibrationData data = fit::read_calibration_data(sample_dir);
  CHECK(data.files == std::vector<std::string>{"attention.jsonl", "host_costs.jsonl", "kernels.jsonl"});
  CHECK(data.records.size() == 120 + 30);
  CHECK(data.host_costs.size() == 21);
  int skips = 0;
  for (const auto& r : data.records) {
    CHECK(fit::is_rehearsal(r.source));
    skips += r.skipped.empty() ? 0 : 1;
    if (!r.skipped.empty()) CHECK(r.repeats == 0);
    const bool moe = r.kernel == "permute" || r.kernel == "unpermute" || r.kernel == "router_topk" ||
                     r.kernel == "rmsnorm" || r.kernel == "swiglu" || r.kernel == "quantize_fp8";
    CHECK(r.stand_in == moe);  // the MoE kernels are stand-ins, and say so; nothing else is
    if (moe) CHECK(r.implementation.find("stand-in") != std::string::npos);
    CHECK_FALSE(r.implementation.empty());
    // FP8 GEMMs say whether they used fast accumulation; nothing else carries the field.
    CHECK(r.fast_accum.has_value() == (r.kernel == "gemm" && r.dtype != "bf16"));
    if (r.kernel == "attention_fwd" && r.dtype == "bf16") CHECK(r.implementation.find("cuDNN") != std::string::npos);
    // Block-scaled FP8 has no fast-accumulation variant (cuBLASLt refuses it), and the flash backend is only
    // planned where it runs: one head dimension for q, k and v.
    if (r.dtype == "fp8_block128") CHECK(r.fast_accum == false);
    if (r.dtype == "bf16_fa2") CHECK(r.dim("head_dim_qk") == r.dim("head_dim_v"));
    CHECK(r.written_at == calib::rehearsal_written_at);  // every line is stamped
  }
  CHECK(skips == 7 + 1);  // every 17th configuration of each writer
  for (const auto& h : data.host_costs) {
    CHECK(h.written_at == calib::rehearsal_written_at);
    CHECK((h.mode == "eager" || h.mode == "cuda_graph"));
    CHECK(h.issue_us_per_op.median_us > 0);
    CHECK(h.wall_us_per_op.median_us >= h.issue_us_per_op.median_us);
  }
}

TEST_CASE("a quick run's records fit every family it measures (the sample, fitted)") {
  const fit::FitFile f = fit::fit_calibration(fit::read_calibration_data(sample_dir));
  std::set<std::string> fitted;
  for (const auto& fam : f.families) fitted.insert(fam.family);
  const std::set<std::string> expected = {
      "attention_bwd/bf16", "attention_bwd/bf16_fa2", "attention_fwd/bf16", "attention_fwd/bf16_fa2",
      "gemm/bf16",          "gemm/fp8_block128",      "gemm/fp8_tensor",    "gemm/fp8_tensor+fast_accum",
      "grouped_gemm/bf16",  "memcpy/bytes",           "permute/bf16",       "quantize_fp8/fp8_e4m3",
      "rmsnorm/bf16",       "router_topk/fp32",       "swiglu/bf16",        "unpermute/bf16"};
  CHECK(fitted == expected);
  CHECK(f.skipped.empty());
  CHECK(f.host_costs.size() == 21);
  // The fake memory-bound times are 4 us + bytes at 0.6 of the H200's 4.8 TB/s (calib_rehearsal.cpp), counted as
  // the fitter counts them: the fit gives the 1/0.6 back, permute and unpermute included (one byte formula,
  // kernels/token_pass_bytes.hpp).
  for (const char* family : {"permute/bf16", "unpermute/bf16", "rmsnorm/bf16", "swiglu/bf16", "memcpy/bytes"}) {
    const fit::FamilyFit* m = f.find(family);
    REQUIRE(m != nullptr);
    // Times are written with 4 decimals: the coefficients come back to about 1e-5.
    CHECK(m->coefficients[0].value == doctest::Approx(4.0).epsilon(1e-4));
    CHECK(m->coefficients[1].value == doctest::Approx(1 / 0.6).epsilon(1e-4));
  }
}

TEST_CASE("the quick plan gives every fitted family enough distinct shapes, with no timing at all") {
  for (bool is_quick : {true, false}) {
    calib::PlanOptions o;
    o.quick = is_quick;
    std::map<std::string, std::set<std::string>> shapes;
    std::map<std::string, std::size_t> features, records;
    for (const auto& suite : calib::make_plan(o))
      for (const auto& r : suite.cases) {
        std::string key = r.kernel + "/" + r.dtype + (r.fast_accum == 1 ? "+fast_accum" : "");
        std::string shape;
        for (const auto& [name, v] : r.shape) shape += name + "=" + std::to_string(v) + ",";
        for (long long g : r.groups) shape += std::to_string(g) + ";";
        shapes[key].insert(shape);
        ++records[key];
        const auto spec = fit::family_for_kernel(r.kernel);
        REQUIRE(spec.has_value());
        features[key] = spec->features.size();
      }
    CHECK(shapes.size() == 12);  // the CUDA program's families (attention comes from calib_attention.py)
    for (const auto& entry : shapes) {
      const std::string& key = entry.first;  // not a structured binding: clang 14 cannot capture one in a message
      const auto& s = entry.second;
      // Records: the fitter's minimum, plus one for a configuration the run may have to skip; distinct shapes: at
      // least one more than the coefficients.
      CHECK_MESSAGE(records[key] >= features[key] + fit::FitOptions{}.min_extra_records + 1, key);
      CHECK_MESSAGE(s.size() >= features[key] + 1, key);
    }
  }
}

TEST_CASE("a skip record with quotes, backslashes and control characters in its error reads back") {
  calib::Record r;
  r.kernel = "gemm";
  r.dtype = "fp8_tensor";
  r.fast_accum = 1;
  r.shape = {{"m", 1}, {"n", 2}, {"k", 3}};
  const std::string error = "gemm_lt.cu:9: cublasLtMatmul(\"x\"): C:\\path\nnext line\ttab";
  moesim::Diagnostics diags;
  const auto back = fit::parse_jsonl(calib::skip_line(r, calib::rehearsal_device(), "test", error) + "\n", "t", diags);
  CHECK(diags.empty());
  REQUIRE(back.size() == 1);
  CHECK(back[0].skipped == error);
  CHECK(back[0].fast_accum == true);
  CHECK(back[0].dim("k") == 3);
}

TEST_CASE("the plan has no block-scaled FP8 GEMM with fast accumulation, on Hopper or Blackwell, full or quick") {
  for (int cc : {9, 10})
    for (bool is_quick : {true, false}) {
      calib::PlanOptions o;
      o.quick = is_quick;
      o.cc_major = cc;
      int block_scaled = 0;
      for (const auto& suite : calib::make_plan(o))
        for (const auto& r : suite.cases)
          if (r.dtype == "fp8_block128" || r.dtype == "mxfp8") {
            ++block_scaled;
            CHECK_MESSAGE(r.fast_accum == 0, calib::describe(r));
          }
      CHECK(block_scaled > 0);
    }
}

TEST_CASE("a record file stamps every line with the UTC time it was written, and the reader keeps the stamp") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("moesim-calib-stamp-" + std::to_string(::getpid()) + ".jsonl"))
          .string();
  std::remove(path.c_str());
  calib::Record r;
  r.kernel = "memcpy";
  r.dtype = "bytes";
  r.shape = {{"bytes", 1 << 20}};
  r.time = {10.0, 9.5, 11.0, 30};
  {
    calib::RecordFile file(path, calib::rehearsal_device(), "test");
    file.write(r);
    file.skip(r, "not run");
  }
  moesim::Diagnostics diags;
  const auto back = fit::parse_jsonl(read_text(path), "stamp.jsonl", diags);
  std::remove(path.c_str());
  CHECK(diags.empty());
  REQUIRE(back.size() == 2);
  for (const auto& b : back) {
    // "2026-12-04T03:01:02.123Z": date, 'T', time with milliseconds, 'Z'.
    REQUIRE(b.written_at.size() == 24);
    CHECK(b.written_at[10] == 'T');
    CHECK(b.written_at[19] == '.');
    CHECK(b.written_at.back() == 'Z');
    CHECK(b.written_at.substr(0, 2) == "20");
  }
  CHECK(back[0].written_at <= back[1].written_at);
  // Without a stamp the line ends at the source, as older records do; both forms read.
  const std::string plain = calib::record_line(r, calib::rehearsal_device(), "test");
  CHECK(plain.find("written_at") == std::string::npos);
  CHECK(fit::parse_jsonl(plain + "\n", "plain.jsonl", diags).at(0).written_at.empty());
  CHECK(diags.empty());
}

TEST_CASE("an unknown suite in --only is refused, naming it") {
  calib::PlanOptions o;
  o.only = "gemm,attention_ref";
  CHECK_THROWS_WITH_AS(calib::make_plan(o), doctest::Contains("unknown suite \"attention_ref\""),
                       std::invalid_argument);
  o.only = "moe";
  const auto plan = calib::make_plan(o);
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].name == "moe");
}
