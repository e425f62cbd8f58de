// moesim sweep: the cartesian product of --vary values, one CSV row per point in a fixed order whatever --jobs;
// points that cannot run are rows with their reason; unknown keys and malformed --vary are refused up front.
#include <doctest/doctest.h>

#include <sstream>

#include "cli_runner.hpp"
#include "config/csv_table.hpp"

namespace {
std::vector<std::string> sweep(std::vector<std::string> extra) {
  std::vector<std::string> args{"sweep", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus", "16",
                                "--ep",  "16",      "--gbs",         "32",       "--seq",    "1024"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}
moesim::config::CsvTable table(const CliResult& r) { return moesim::config::parse_csv(r.out, "<sweep>"); }
double cell(const moesim::config::CsvTable& t, std::size_t row, const std::string& column) {
  return std::stod(t.rows.at(row).at(column));
}
}  // namespace

TEST_CASE("sweep: one row per point of the product, last key fastest, the same for any --jobs") {
  const auto one =
      run_cli(sweep({"--vary", "seq=1024,2048", "--vary", "dispatcher=alltoall,deepep,allgather", "--jobs", "1"}));
  REQUIRE(one.code == 0);
  const auto t = table(one);
  REQUIRE(t.rows.size() == 6);
  CHECK(t.rows[0].at("vary.seq") == "1024");
  CHECK(t.rows[0].at("vary.dispatcher") == "alltoall");
  CHECK(t.rows[1].at("vary.dispatcher") == "deepep");
  CHECK(t.rows[3].at("vary.seq") == "2048");
  for (const auto& r : t.rows) CHECK(r.at("status") == "ok");
  // A longer sequence is a longer step, and the row says which layout ran.
  CHECK(cell(t, 3, "step_time_s") > cell(t, 0, "step_time_s"));
  CHECK(t.rows[1].at("layout").find("deepep") != std::string::npos);
  CHECK(run_cli(sweep({"--vary", "seq=1024,2048", "--vary", "dispatcher=alltoall,deepep,allgather", "--jobs", "3"}))
            .out == one.out);
}

TEST_CASE("sweep: a point that cannot run is a row with its reason; the sweep still exits 0") {
  const auto r = run_cli(sweep({"--vary", "ep=16,3", "--vary", "seq=1024,1048576"}));
  REQUIRE(r.code == 0);
  const auto t = table(r);
  REQUIRE(t.rows.size() == 4);
  CHECK(t.rows[0].at("status") == "ok");
  CHECK(t.rows[1].at("status") == "infeasible");  // seq 1M does not fit in HBM
  CHECK(t.rows[1].at("reason").find("GiB") != std::string::npos);
  CHECK(t.rows[2].at("status") == "infeasible");  // EP3 does not divide 128 experts
  CHECK(t.rows[2].at("step_time_s").empty());
}

TEST_CASE("sweep: system figures, --param names and the system itself are keys") {
  const auto r = run_cli(sweep({"--vary", "nic.bandwidth_GBps=12.5,100", "--vary", "kernel_launch_us=5,50"}));
  REQUIRE(r.code == 0);
  const auto t = table(r);
  REQUIRE(t.rows.size() == 4);
  // EP16 over two nodes: a 100 GB/s NIC never makes the step longer than a 12.5 GB/s one; a slower launch does.
  CHECK(cell(t, 2, "step_time_s") <= cell(t, 0, "step_time_s"));
  CHECK(cell(t, 1, "step_time_s") > cell(t, 0, "step_time_s"));
  const auto systems = run_cli(sweep({"--vary", "system=dgx-h100,dgx-b200"}));
  REQUIRE(systems.code == 0);
  CHECK(table(systems).rows[1].at("system") == "dgx-b200");
}

TEST_CASE("sweep: unknown keys and malformed --vary are refused before anything runs") {
  const auto unknown = run_cli(sweep({"--vary", "sequence_len=1024"}));
  CHECK(unknown.code == 2);
  CHECK(unknown.err.find("unknown key \"sequence_len\"") != std::string::npos);
  const auto typo = run_cli(sweep({"--vary", "gpuz=8"}));
  CHECK(typo.err.find("did you mean \"gpus\"?") != std::string::npos);
  CHECK(run_cli(sweep({"--vary", "gpus"})).code == 1);
  CHECK(run_cli(sweep({"--vary", "gpus=8,,16"})).code == 1);
  CHECK(run_cli(sweep({"--vary", "nic.bandwidth_GBps=fast"})).code == 2);
  CHECK(run_cli(sweep({})).code == 1);  // --vary is required
}

TEST_CASE("sweep --estimate: the closed form per point, close to the engine's rows") {
  const auto engine = table(run_cli(sweep({"--vary", "seq=1024,2048", "--jobs", "1"})));
  const auto est = run_cli(sweep({"--vary", "seq=1024,2048", "--estimate", "--jobs", "1"}));
  REQUIRE(est.code == 0);
  const auto t = table(est);
  REQUIRE(t.rows.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(t.rows[i].at("status") == "ok");
    CHECK(cell(t, i, "step_time_s") == doctest::Approx(cell(engine, i, "step_time_s")).epsilon(0.08));
  }
}

TEST_CASE("sweep: each point carries its error band, and with --anchor the anchored step") {
  const auto r = run_cli(
      sweep({"--vary", "seq=1024,2048", "--anchor", std::string(MOESIM_FIXTURES_DIR) + "/cli/validate_3rows.csv"}));
  REQUIRE(r.code == 0);
  const auto t = table(r);
  REQUIRE(t.rows.size() == 2);
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    CHECK(cell(t, i, "band_coverage") == doctest::Approx(0.8));
    CHECK(cell(t, i, "step_time_low_s") < cell(t, i, "step_time_s"));
    CHECK(cell(t, i, "step_time_high_s") > cell(t, i, "step_time_s"));
    // The throughput interval is the time interval turned over.
    CHECK(cell(t, i, "tokens_per_s_per_gpu_low") < cell(t, i, "tokens_per_s_per_gpu"));
    // One factor for the whole sweep: the anchored time is the predicted time times it.
    CHECK(cell(t, i, "anchored_step_time_s") ==
          doctest::Approx(cell(t, i, "step_time_s") * cell(t, 0, "anchor_time_factor")));
    CHECK(cell(t, i, "anchored_step_time_low_s") < cell(t, i, "anchored_step_time_s"));
  }
  // --band 0: no band cells, no anchored columns without --anchor.
  const auto none = table(run_cli(sweep({"--vary", "seq=1024", "--band", "0"})));
  CHECK(none.rows.at(0).at("band_coverage").empty());
  CHECK(none.rows.at(0).count("anchored_step_time_s") == 0);
}
