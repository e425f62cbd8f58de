// --band and --anchor on run and estimate: the band brackets the prediction in text and JSON; the anchored step is
// the predicted step times the anchor's one factor, with its own band; --band 0 removes the band.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {
const std::string kAnchor = std::string(MOESIM_FIXTURES_DIR) + "/cli/validate_3rows.csv";
std::vector<std::string> qwen(const std::string& command, std::vector<std::string> extra) {
  std::vector<std::string> args{command, "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "16",
                                "--ep",  "16",      "--gbs",         "32",       "--seq",    "1024"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}
}  // namespace

TEST_CASE("run --json --anchor: band around the step, anchored step = step x factor, anchored band around it") {
  for (const char* command : {"run", "estimate"}) {
    CAPTURE(command);
    const auto r = run_cli(qwen(command, {"--json", "--anchor", kAnchor}));
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    const double t = j["step_time_s"];
    CHECK(j["band"]["coverage"].get<double>() == doctest::Approx(0.8));
    CHECK(j["band"]["step_time_s"][0].get<double>() < t);
    CHECK(j["band"]["step_time_s"][1].get<double>() > t);
    const auto& a = j["anchored"];
    CHECK(a["rows"] == 1);  // the fixture's one predictable step row
    CHECK(a["step_time_s"].get<double>() == doctest::Approx(t * a["time_factor"].get<double>()));
    CHECK(a["band"]["step_time_s"][0].get<double>() < a["step_time_s"].get<double>());
    CHECK(a["band"]["step_time_s"][1].get<double>() > a["step_time_s"].get<double>());
  }
}

TEST_CASE("--band: a wider coverage is a wider band; 0 removes it; out of range is a usage error") {
  const auto at = [](const std::string& coverage) {
    return nlohmann::json::parse(run_cli(qwen("run", {"--json", "--band", coverage})).out);
  };
  const auto narrow = at("0.5"), wide = at("0.9");
  CHECK(wide["band"]["step_time_s"][0].get<double>() <= narrow["band"]["step_time_s"][0].get<double>());
  CHECK(wide["band"]["step_time_s"][1].get<double>() >= narrow["band"]["step_time_s"][1].get<double>());
  CHECK(!at("0").contains("band"));
  CHECK(run_cli(qwen("run", {"--band", "1.5"})).code == 1);
}

TEST_CASE("validate --explain: the row's band is built without its own source and says whether it holds the value") {
  const auto r =
      run_cli({"validate", "--csv", std::string(MOESIM_MEASUREMENTS_DIR) + "/groundtruth.csv", "--explain", "GT032"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("80 % band") != std::string::npos);
  CHECK(r.out.find("none from this row's source") != std::string::npos);
  CHECK((r.out.find("measured value inside") != std::string::npos ||
         r.out.find("measured value OUTSIDE") != std::string::npos));
}

TEST_CASE("--anchor: only the anchor rows of the case's model and system; a note for each row left out") {
  const std::string file = std::string(MOESIM_FIXTURES_DIR) + "/cli/anchor_two_models.csv";
  // A Qwen3-30B case on DGX-H100: T001 (Qwen3-30B, 8 GPUs) anchors it, with a note that it ran on another GPU
  // count; L001 (Llama 3.1 8B) is left out with a note, so the factor is T001's alone.
  const auto r = run_cli(qwen("run", {"--json", "--anchor", file}));
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["anchored"]["rows"] == 1);
  CHECK(r.err.find("row L001") != std::string::npos);
  CHECK(r.err.find("not anchored on") != std::string::npos);
  CHECK(r.err.find("row T001 ran on 8 GPUs") != std::string::npos);
  const auto alone = nlohmann::json::parse(
      run_cli(qwen("run", {"--json", "--anchor", std::string(MOESIM_FIXTURES_DIR) + "/cli/validate_3rows.csv"})).out);
  CHECK(j["anchored"]["time_factor"].get<double>() == doctest::Approx(alone["anchored"]["time_factor"].get<double>()));
  // A case of a model the file does not hold: no anchored prediction, and a note says why.
  const auto other = run_cli({"run", "--model", "mixtral-8x7b", "--system", "dgx-h100", "--gpus", "16", "--tp", "2",
                              "--ep", "8", "--gbs", "32", "--seq", "1024", "--json", "--anchor", file});
  REQUIRE(other.code == 0);
  CHECK(!nlohmann::json::parse(other.out).contains("anchored"));
  CHECK(other.err.find("no anchored prediction") != std::string::npos);
}

TEST_CASE("a case outside the validated regime says so, with a wider band than a like case inside it") {
  // Mixtral is a thin family (fewer than the 10 rows a validated regime needs: 7 published NeMo and ModelZoo rows);
  // Qwen3-30B on DGX-H100 has many.
  const auto mixtral = run_cli({"run", "--model", "mixtral-8x7b", "--system", "dgx-h100", "--gpus", "16", "--tp", "2",
                                "--ep", "8", "--gbs", "32", "--seq", "1024", "--json"});
  REQUIRE(mixtral.code == 0);
  const auto m = nlohmann::json::parse(mixtral.out);
  const std::string outside = m["band"]["outside_validated_regime"];
  CHECK(outside.find("outside the validated regime: family = mixtral (") == 0);
  CHECK(outside.find(" bundled rows)") != std::string::npos);
  CHECK(outside.find("its nearest rows:") != std::string::npos);
  const auto text = run_cli({"run", "--model", "mixtral-8x7b", "--system", "dgx-h100", "--gpus", "16", "--tp", "2",
                             "--ep", "8", "--gbs", "32", "--seq", "1024"});
  CHECK(text.out.find("outside the validated regime: family = mixtral") != std::string::npos);
  const auto q = nlohmann::json::parse(run_cli(qwen("run", {"--json"})).out);
  auto log_width = [](const nlohmann::json& j) {
    return std::log(j["band"]["step_time_s"][1].get<double>() / j["band"]["step_time_s"][0].get<double>());
  };
  CHECK(log_width(m) > log_width(q));
}

TEST_CASE("search --anchor: one factor on every ranked time, measured layouts shown, a measured reversal said") {
  const auto r = run_cli({"search",
                          "--model",
                          "qwen3-30b-a3b",
                          "--system",
                          "dgx-h100",
                          "--gpus",
                          "16",
                          "--gbs",
                          "64",
                          "--seq",
                          "4096",
                          "--top",
                          "3",
                          "--tp",
                          "1",
                          "--pp",
                          "1",
                          "--cp",
                          "1",
                          "--ep",
                          "16",
                          "--etp",
                          "1",
                          "--mbs",
                          "1",
                          "--recompute",
                          "none",
                          "--dispatcher",
                          "alltoall",
                          "--cuda-graph",
                          "none",
                          "--a2a-overlap",
                          "false",
                          "--fsdp",
                          "false",
                          "--tp-comm-overlap",
                          "false",
                          "--json",
                          "--anchor",
                          std::string(MOESIM_FIXTURES_DIR) + "/cli/search_anchor.csv"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["ranking"].size() == 2);  // grouped GEMM or not; the rest is pinned
  const double factor = j["anchor"]["time_factor"];
  CHECK(j["anchor"]["rows"] == 3);  // the 8-GPU row anchors the level too
  std::map<std::string, double> measured;
  for (const auto& l : j["ranking"]) {
    const double t = !l["simulated"].is_null() ? l["simulated"]["step_time_s"].get<double>()
                                               : l["estimate"]["step_time_s"].get<double>();
    CHECK(l["anchored_step_time_s"].get<double>() == doctest::Approx(t * factor));
    CHECK(l["band_step_time_s"][0].get<double>() < t);
    REQUIRE(l.contains("measured"));
    measured[l["measured"]["id"]] = l["measured"]["step_time_s"];
  }
  CHECK(measured.at("A1") == doctest::Approx(1.9));
  CHECK(measured.at("A2") == doctest::Approx(64.0 * 4096 / (16 * 9102.2)));  // from its tokens/s/GPU
}

TEST_CASE("bands --chance-slower: one half at no gap, falling as the predicted gap grows, rising when it turns") {
  const auto chance = [](const std::string& pct) {
    const auto r = run_cli({"bands", "--chance-slower", pct});
    REQUIRE(r.code == 0);
    return std::stod(r.out);
  };
  CHECK(chance("0") == doctest::Approx(0.5));
  CHECK(chance("1") >= chance("5"));
  CHECK(chance("5") >= chance("20"));
  CHECK(chance("-5") == doctest::Approx(1 - chance("5")).epsilon(0.05));
  CHECK(run_cli({"bands", "--chance-slower", "3", "--write"}).code == 1);
}
