// Error bands (src/bands): features of a case, the conformal band worked out by hand on made-up rows, the
// neighbour rule, leave-one-source-out coverage, the error table's round trip and strict reading, source keys at
// document level, the widening outside the validated regime, and the bundled error table's coverage under both
// checks (leave one source out: 75-88 % for a nominal 80 % band; leave one regime out: at least 55 % in every
// regime of at least 10 rows and 75 % overall), computed from whatever errors the bundled table holds.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include <doctest/doctest.h>

#include "bands/attach.hpp"
#include "bands/band.hpp"
#include "bands/coverage.hpp"
#include "bands/error_table.hpp"
#include "bands/features.hpp"
#include "bands/regime.hpp"
#include "bands/regime_band.hpp"
#include "bands/resolution.hpp"
#include "config/csv_table.hpp"
#include "core/error.hpp"

using namespace moesim;

namespace {

bands::Features all(const std::string& v) {
  bands::Features f;
  for (auto& x : f.values) x = v;
  return f;
}

bands::ErrorRow row(const bands::Features& f, double e, const std::string& source = "s") {
  bands::ErrorRow r;
  r.table = "t.csv";
  r.id = "R";
  r.source = source;
  r.metric = "step_time_s";
  r.features = f;
  r.measured = 1;
  r.predicted = std::exp(e);
  r.time_log_error = e;
  return r;
}

}  // namespace

TEST_CASE("features: matching counts equal non-empty values; the folds of GPU count and framework") {
  auto a = all("x"), b = all("x");
  CHECK(a.matches(b) == 8);
  b.values[0] = "y";
  b.values[7] = "";
  CHECK(a.matches(b) == 6);
  a.values[7] = "";
  CHECK(a.matches(b) == 6);  // empty matches nothing, even empty
  CHECK(bands::gpu_count_bucket(8) == "1 node");
  CHECK(bands::gpu_count_bucket(256) == "65-512");
  CHECK(bands::gpu_count_bucket(8192) == "2049+");
  CHECK(bands::framework_family("Megatron-Bridge/MCore") == "megatron");
  CHECK(bands::framework_family("NeMo 25.09") == "megatron");
  CHECK(bands::framework_family("TorchTitan") == "torchtitan");
  CHECK(bands::framework_family("NeMo AutoModel (PyTorch FSDP2)") == "automodel");
  CHECK(bands::framework_family("") == "megatron");
  CHECK(bands::framework_family("DeepSpeed") == "other");
}

TEST_CASE("a band from 20 like rows is the 2nd and 19th smallest error (80 %, conformal ranks by hand)") {
  std::vector<bands::ErrorRow> rows;
  for (int i = 0; i < 20; ++i) rows.push_back(row(all("x"), -0.10 + 0.01 * i));
  const auto b = bands::band_for(all("x"), rows, {});
  // n = 20: floor(21 x 0.1) = 2 -> -0.09; ceil(21 x 0.9) = 19 -> +0.08.
  CHECK(b.rows == 20);
  CHECK(b.min_matches == 8);
  CHECK(b.lo_log == doctest::Approx(-0.09));
  CHECK(b.hi_log == doctest::Approx(0.08));
  // A predicted 10 s: the measured lies in [10 e^-0.08, 10 e^0.09]; a throughput the other way round.
  CHECK(b.time_low(10) == doctest::Approx(10 * std::exp(-0.08)));
  CHECK(b.time_high(10) == doctest::Approx(10 * std::exp(0.09)));
  CHECK(b.throughput_low(100) == doctest::Approx(100 * std::exp(-0.09)));
  CHECK(b.throughput_high(100) == doctest::Approx(100 * std::exp(0.08)));
  CHECK(b.contains_time_log_error(0.0));
  CHECK_FALSE(b.contains_time_log_error(0.085));
}

TEST_CASE("the neighbour rule: the most alike rows, at least 20, ties at the boundary included") {
  std::vector<bands::ErrorRow> rows;
  auto three = all("z");
  for (std::size_t k = 0; k < 3; ++k) three.values[k] = "x";
  for (int i = 0; i < 20; ++i) rows.push_back(row(all("x"), 0.01));
  for (int i = 0; i < 30; ++i) rows.push_back(row(three, 0.5));
  auto b = bands::band_for(all("x"), rows, {});
  CHECK(b.rows == 20);
  CHECK(b.hi_log == doctest::Approx(0.01));
  // With only 10 exact matches the 20th most alike shares 3 features: every row sharing 3 counts (40).
  rows.erase(rows.begin(), rows.begin() + 10);
  b = bands::band_for(all("x"), rows, {});
  CHECK(b.rows == 40);
  CHECK(b.min_matches == 3);
  // Leaving out a source removes its rows.
  for (auto& r : rows) r.source = r.time_log_error > 0.1 ? "far" : "near";
  b = bands::band_for(all("x"), rows, {}, "far");
  CHECK(b.rows == 10);
  // Too few rows for 80 %: unbounded on both sides (5 rows: ranks 0 and 6).
  rows.resize(5);
  b = bands::band_for(all("x"), rows, {}, "far");
  CHECK(b.rows == 5);
  CHECK(std::isinf(b.lo_log));
  CHECK(std::isinf(b.hi_log));
  CHECK_FALSE(bands::band_for(all("x"), {}, {}).valid());
}

TEST_CASE("leave one source out: a row's band never sees its own source") {
  // Source A errs by +0.3 on every row, B by 0 (+- tiny): A's rows, banded from B's, fall outside; B's rows,
  // banded from A's, fall outside too. Nothing is inside.
  std::vector<bands::ErrorRow> rows;
  for (int i = 0; i < 25; ++i) rows.push_back(row(all("x"), 0.3 + 0.001 * i, "A"));
  for (int i = 0; i < 25; ++i) rows.push_back(row(all("x"), 0.001 * i, "B"));
  const auto r = bands::leave_one_source_out(rows, {});
  CHECK(r.overall.rows == 50);
  CHECK(r.overall.inside == 0);
  // One source of like rows: with no other source there is no band and no row is judged.
  rows.resize(25);
  CHECK(bands::leave_one_source_out(rows, {}).overall.rows == 0);
}

TEST_CASE("error table: time sense, source keys, CSV round trip, strict reading") {
  CHECK(bands::metric_sense("step_time_s") == bands::MetricSense::time);
  CHECK(bands::metric_sense("tflops_per_gpu") == bands::MetricSense::throughput);
  CHECK(bands::metric_sense("tokens_per_s_per_gpu") == bands::MetricSense::throughput);
  CHECK(bands::metric_sense("memory_GiB") == bands::MetricSense::none);
  // Predicting 1,100 TFLOPS where 1,000 were measured is predicting a faster (shorter) step: negative.
  CHECK(bands::time_log_error(bands::MetricSense::throughput, 1000, 1100) == doctest::Approx(-std::log(1.1)));
  CHECK(bands::time_log_error(bands::MetricSense::time, 2, 1) == doctest::Approx(std::log(0.5)));
  const bands::RegimeRules defaults;
  CHECK(bands::document_key("NVIDIA-NeMo/Megatron-Bridge docs/x.md (26.06 container); recipe: y", defaults) ==
        "NVIDIA-NeMo/Megatron-Bridge docs/x.md");
  // A revision of a document is the same document.
  CHECK(bands::document_key("NVIDIA-NeMo/Megatron-Bridge docs/x.md @067f987df; table 3", defaults) ==
        "NVIDIA-NeMo/Megatron-Bridge docs/x.md");
  std::vector<bands::ErrorRow> rows{row(all("a,b"), 0.125), row(all("q\"uote"), -0.5, "S2")};
  rows[1].group = "X1";
  rows[1].group_table = "sweeps.csv";  // a recipe row standing for its copy in a sweep table's group
  const auto dir = std::filesystem::temp_directory_path() / "moesim_test_bands";
  std::filesystem::create_directories(dir);
  const auto file = dir / "errors.csv";
  std::ofstream(file) << bands::to_csv(rows);
  const auto back = bands::read_error_table(file);
  REQUIRE(back.size() == 2);
  CHECK(back[0].features.values == rows[0].features.values);
  CHECK(back[1].features.values == rows[1].features.values);
  CHECK(back[1].source == "S2");
  CHECK(back[1].group == "X1");
  CHECK(back[1].group_table == "sweeps.csv");
  CHECK(back[0].group_table.empty());
  CHECK(back[0].time_log_error == doctest::Approx(0.125));
  // A table written before group_table existed: a row's group is its own table's.
  {
    auto old = bands::to_csv(rows);
    old.replace(old.find(",group_table"), 12, "");
    old.replace(old.find(",sweeps.csv"), 11, "");
    old.replace(old.find(",,"), 2, ",");  // row 0's empty group_table cell
    std::ofstream(file) << old;
    const auto legacy = bands::read_error_table(file);
    REQUIRE(legacy.size() == 2);
    CHECK(legacy[1].group_table == legacy[1].table);
    CHECK(legacy[0].group_table.empty());
  }
  // A group without its table (or a table without a group) is an error.
  {
    auto text = bands::to_csv(rows);
    text.replace(text.find(",sweeps.csv"), 11, ",");
    std::ofstream(file) << text;
    CHECK_THROWS_AS(bands::read_error_table(file), ConfigError);
  }
  auto text = bands::to_csv(rows);
  text.replace(text.find("0.125000"), 8, "zero");
  std::ofstream(file) << text;
  CHECK_THROWS_AS(bands::read_error_table(file), ConfigError);
  std::ofstream(file) << "table,id\nx,y\n";
  CHECK_THROWS_AS(bands::read_error_table(file), ConfigError);
  std::filesystem::remove_all(dir);
}

namespace {

const bands::RegimeRules& bundled_rules() {
  static const auto r = bands::read_regime_rules(bands::regime_rules_path(MOESIM_SOURCE_DIR));
  return r;
}

const std::vector<bands::ErrorRow>& bundled_rows() {
  static const auto r = bands::read_error_table(bands::error_table_path(MOESIM_SOURCE_DIR));
  return r;
}

// The `source` cell of row `id` of a bundled measurement table.
std::string source_cell(const std::string& table, const std::string& id) {
  const auto t = config::read_csv(std::filesystem::path(MOESIM_SOURCE_DIR) / "data" / "measurements" / table);
  for (const auto& row : t.rows)
    if (row.at("id") == id) return row.at("source");
  return "";
}

}  // namespace

TEST_CASE("source keys: one document at two revisions, one MLPerf submission under several paths, one key") {
  const auto& rules = bundled_rules();
  // GT001 and BH007 are the same recipe in the same document (the archive of the Megatron-Bridge performance
  // summary), one cited at a revision.
  const auto gt = bands::document_key(source_cell("groundtruth.csv", "GT001"), rules);
  CHECK(gt == bands::document_key(source_cell("bridge_heldout.csv", "BH007"), rules));
  CHECK(gt.find(" @") == std::string::npos);
  // The MLPerf Training v6.0 NVIDIA submission: its result logs and its named rows.
  CHECK(bands::document_key("NVIDIA/results/tyche-hsg_ngpu512_ngc26.04_nemo/deepseekv3_671b/result_[0-2].txt", rules) ==
        "mlcommons training_results_v6.0 NVIDIA");
  CHECK(bands::document_key("mlcommons training_results_v6.0 NVIDIA (mirror x @eabf23a0) results/y.txt; z", rules) ==
        "mlcommons training_results_v6.0 NVIDIA");
  // Other rounds and submitters the same way, whatever file or commit of the results repository a row cites.
  CHECK(bands::document_key("mlcommons/training_results_v5.0 @0fdc28f0 IBM+CoreWeave+NVIDIA/results/carina_ngpu512_"
                            "ngc25.04_nemo/llama31_405b/result_*.txt; config",
                            rules) == "mlcommons training_results_v5.0 IBM+CoreWeave+NVIDIA");
  CHECK(bands::document_key("CoreWeave/results/CoreWeave_GB300_512x4/deepseekv3_671b/result_[0-2].txt (mirror "
                            "Richardyu114/training_results_v6.0 @eabf23a); config",
                            rules) == "mlcommons training_results_v6.0 CoreWeave");
  // The bundled error table is keyed that way: no revision and no result path is a source of its own.
  for (const auto& r : bundled_rows()) {
    INFO(r.table << " " << r.id << ": " << r.source);
    CHECK(r.source == bands::document_key(r.source, rules));
    CHECK(r.source.find("NVIDIA/results/") == std::string::npos);
  }
}

TEST_CASE("leave one source out on the bundled table: no band holds a row of its own document") {
  const auto& rows = bundled_rows();
  const auto& rules = bundled_rules();
  // The rows of GT001's document, found by the document key of each row's own source cell in the measurement
  // tables, not by the error table's keys (which could share a mistake with the filter).
  const auto gt001 = bands::document_key(source_cell("groundtruth.csv", "GT001"), rules);
  std::size_t gt = rows.size();
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].id == "GT001") gt = i;
  REQUIRE(gt < rows.size());
  const bands::RowFilter others = [&](const bands::ErrorRow& e) { return e.source != rows[gt].source; };
  const auto near = bands::nearest_rows(rows[gt].features, rows, 20, others);
  REQUIRE(near.size() >= 20);
  std::map<std::string, std::string> cell_of;  // (table, id) -> source cell
  for (const char* t : {"groundtruth.csv", "bridge_heldout.csv"}) {
    const auto table = config::read_csv(std::filesystem::path(MOESIM_SOURCE_DIR) / "data" / "measurements" / t);
    for (const auto& row : table.rows) cell_of[std::string(t) + "/" + row.at("id")] = row.at("source");
  }
  for (auto i : near) {
    const auto it = cell_of.find(rows[i].table + "/" + rows[i].id);
    if (it == cell_of.end()) continue;
    INFO(rows[i].id << ": " << it->second);
    CHECK(bands::document_key(it->second, rules) != gt001);
    CHECK(rows[i].id != "BH007");
  }
  // Without the filter its nearest rows do hold rows of its document (so the check above is not empty).
  int own = 0;
  for (auto i : bands::nearest_rows(rows[gt].features, rows, 20, {})) own += rows[i].source == rows[gt].source;
  CHECK(own > 0);
}

TEST_CASE("regimes: buckets, families, and the band that widens outside the validated regime") {
  CHECK(bands::bucket(1, {4, 32}) == "1-4");
  CHECK(bands::bucket(5, {4, 32}) == "5-32");
  CHECK(bands::bucket(33, {4, 32}) == "33+");
  CHECK(bands::bucket(1024, {64, 1024}) == "65-1024");
  CHECK(bands::model_family("mixtral-8x22b", bundled_rules()) == "mixtral");
  CHECK(bands::model_family("kimi-k2", bundled_rules()) == "deepseek");
  CHECK(bands::model_family("my-own-model", bundled_rules()) == "other");
  bands::RegimeRules rules;
  rules.thin_rows = 10;
  // 30 rows of family "a" with errors 0 .. 0.029, 5 rows of family "b" with errors 0.5.
  std::vector<bands::ErrorRow> rows;
  for (int i = 0; i < 30; ++i) rows.push_back(row(all("x"), 0.001 * i)), rows.back().family = "a";
  for (int i = 0; i < 5; ++i) rows.push_back(row(all("x"), 0.5)), rows.back().family = "b";
  auto known = row(all("x"), 0);
  known.family = "a";
  // Family a is validated (30 rows): the band of its 35 like rows, no widening.
  const auto in = bands::regime_band(known, rows, {}, rules, 0.1);
  CHECK(in.outside.empty());
  CHECK(in.regime_widening == 0);
  CHECK(in.outside_line().empty());
  // Family b has 5 rows (thin), family c none: the pooled band widened by one term per thin dimension.
  for (const char* f : {"b", "c"}) {
    auto thin = known;
    thin.family = f;
    const auto b = bands::regime_band(thin, rows, {}, rules, 0.1);
    REQUIRE(b.outside.size() == 1);
    CHECK(b.regime_widening == doctest::Approx(0.1));
    CHECK(b.lo_log == doctest::Approx(in.lo_log - 0.1));
    CHECK(b.hi_log == doctest::Approx(in.hi_log + 0.1));
    CHECK(b.outside_line().find("outside the validated regime: family = " + std::string(f)) == 0);
    CHECK(b.outside_line().find("its nearest rows: 35 rows, family a (30 of 35)") != std::string::npos);
  }
  // Two thin dimensions: twice the term.
  auto far = known;
  far.family = "c";
  far.gpu_scale = "1025+";
  rows.front().gpu_scale = "1025+";
  CHECK(bands::regime_band(far, rows, {}, rules, 0.1).regime_widening == doctest::Approx(0.2));
}

TEST_CASE("the regime term: each regime's need with it left out, and a regime never calibrates its own band") {
  bands::RegimeRules rules;
  rules.thin_rows = 10;
  rules.regime_quantile = 0.9;
  // Family a: 20 rows at error 0; family b: 20 rows at error 0.3; family c: 20 rows at -0.1.
  std::vector<bands::ErrorRow> rows;
  for (auto [f, e] : {std::pair{"a", 0.0}, std::pair{"b", 0.3}, std::pair{"c", -0.1}})
    for (int i = 0; i < 20; ++i) rows.push_back(row(all("x"), e + 0.0001 * i)), rows.back().family = f;
  const auto needs = bands::regime_needs(rows, {}, rules);
  // Only the family dimension has more than one value; one need per family of at least 10 rows.
  std::map<std::string, double> need;
  for (const auto& n : needs)
    if (bands::kRegimeNames[n.dimension] == "family") need[n.value] = n.need;
  REQUIRE(need.size() == 3);
  // b, left out, is banded from a and c (40 rows; its top is the ceil(41 x 0.9) = 37th smallest, a's 17th,
  // 0.0016): its errors 0.3 + 0.0001 i lie 0.2984 + 0.0001 i above it; 80 % inside needs the 16th smallest excess
  // (one thin dimension), 0.2999.
  CHECK(need["b"] > need["a"]);
  CHECK(need["b"] > need["c"]);
  CHECK(need["b"] == doctest::Approx(0.2999));
  // The term leaving b out is the larger of a's and c's needs, never b's own.
  CHECK(bands::regime_term(needs, rules, std::make_pair(std::size_t{0}, std::string("b"))) ==
        doctest::Approx(std::max(need["a"], need["c"])));
  CHECK(bands::regime_term({}, rules) == 0);
}

// The upper end was 85 % until the error table kept one entry per measurement (bands/copies.hpp). The 35 copies it
// had also counted (13 ladder steps, 22 layout-sweep rows) were 28 inside; without them the regime term rose (7.7 ->
// 8.2 % per thin dimension) and 6 other rows came inside and 2 went out, so the share went from 84.3 % (307 of 364)
// to 86.0 % (283 of 329): the band is somewhat wide for a new source. The window says so; the band is not narrowed
// by hand.
TEST_CASE("the bundled error table, leave one source out: 75-88 % overall for a nominal 80 % band") {
  const auto r = bands::leave_one_source_out(bundled_rows(), {}, bundled_rules());
  INFO("coverage " << r.overall.share() << " over " << r.overall.rows << " rows\n" << bands::to_markdown(r));
  CHECK(r.overall.rows > 100);
  CHECK(r.overall.share() >= 0.75);
  CHECK(r.overall.share() <= 0.88);
}

// The per-regime floor was 65 % until 2026-12-05, then 60 % when the TP-call, fixed-part and loss changes made the
// other regimes' errors smaller, which narrowed the regime term calibrated on them, while the GPT-OSS rows did not
// change (that family, banded from the others, held 24 of its 39 entries, 61.5 %; its Bridge 26.02 B200 / B300 rows
// are 36-48 % too fast in time). 8 of those 39 were layout-sweep copies of its recipe rows, 6 of them inside: counted
// twice. With one entry per measurement (bands/copies.hpp) it holds 18 of 31 (58.1 %; no original's verdict
// changed), so the floor is 55 %, not 65 %: the copies had flattered it. Lowered, never the band widened by hand;
// docs/accuracy.md says so.
TEST_CASE("the bundled error table, leave one regime out: >= 55 % in every regime of >= 10 rows, >= 75 % overall") {
  const auto& rules = bundled_rules();
  const auto r = bands::leave_one_regime_out(bundled_rows(), {}, rules);
  INFO(bands::to_markdown(r));
  CHECK(r.overall.share() >= 0.75);
  for (const auto& c : r.by_regime) {
    if (c.rows < rules.thin_rows) continue;
    INFO(c.group << ": " << c.inside << " of " << c.rows);
    CHECK(c.share() >= 0.55);
  }
}

TEST_CASE("resolution: the chance that the layout predicted slower is faster, from a sweep's pairs by hand") {
  // One sweep group, step times (predicted, measured): A (1.0, 1.0), B (1.25, 1.0), C (1.6, 1.9). Errors
  // e = ln(p/m): 0, 0.2231, -0.1719. Ordered pairs d = e_i - e_j: +-0.2231, +-0.1719, +-0.3950.
  auto make = [](const std::string& id, double p, double m) {
    auto r = row(all("x"), std::log(p / m));
    r.id = id;
    r.group = "G";
    r.predicted = p;
    r.measured = m;
    return r;
  };
  std::vector<bands::ErrorRow> rows{make("A", 1.0, 1.0), make("B", 1.25, 1.0), make("C", 1.6, 1.9)};
  CHECK(bands::chance_truly_faster(rows, 0.1) == doctest::Approx(3.0 / 6));
  CHECK(bands::chance_truly_faster(rows, 0.2) == doctest::Approx(2.0 / 6));
  CHECK(bands::chance_truly_faster(rows, 0.3) == doctest::Approx(1.0 / 6));
  CHECK(bands::chance_truly_faster(rows, 0.5) == doctest::Approx(0.0));
  // A throughput row is a time the other way round: the same group given in tokens/s gives the same chances.
  auto inverted = rows;
  for (auto& r : inverted) {
    r.metric = "tokens_per_s_per_gpu";
    r.predicted = 1 / r.predicted;
    r.measured = 1 / r.measured;
  }
  CHECK(bands::chance_truly_faster(inverted, 0.2) == doctest::Approx(2.0 / 6));
  // A row of the same group but another job (another batch size) is not paired with A, B or C.
  auto other_job = make("D", 5.0, 1.0);
  other_job.job = "another batch";
  rows.push_back(other_job);
  CHECK(bands::chance_truly_faster(rows, 0.2) == doctest::Approx(2.0 / 6));
  rows.pop_back();
  // No sweep group: nothing known.
  CHECK(bands::chance_truly_faster({row(all("x"), 0.1)}, 0.2) == doctest::Approx(0.5));
  // The three pairs are 25 %, 60 % and 28 % apart as predicted, all ordered right.
  const auto buckets = bands::order_by_gap(rows);
  int pairs = 0, right = 0;
  for (const auto& b : buckets) pairs += b.pairs, right += b.right;
  CHECK(pairs == 3);
  CHECK(right == 3);
  CHECK(buckets.back().pairs == 3);
}

TEST_CASE("anchoring: one factor from the anchor rows; the anchored band from the pairs of other groups") {
  const auto a = bands::make_anchor({std::log(1.1), std::log(1.3)}, "mine.csv");
  CHECK(a.rows == 2);
  CHECK(a.time_factor() == doctest::Approx(1 / std::sqrt(1.1 * 1.3)));
  CHECK_THROWS_AS(bands::make_anchor({}, "empty.csv"), ConfigError);
  // Two groups: in G1 the errors differ by 0.1, in G2 by 0.3. Anchored on G2 alone, G1's pairs are inside.
  std::vector<bands::ErrorRow> rows;
  for (double e : {0.0, 0.1}) rows.push_back(row(all("x"), e)), rows.back().group = "G1";
  for (double e : {0.0, 0.3}) rows.push_back(row(all("x"), e)), rows.back().group = "G2";
  const auto s = bands::anchor_study(rows, {});
  CHECK(s.groups == 2);
  CHECK(s.rows == 4);
  CHECK(s.pairs == 4);
  // Two pairs per group; a band from 2 pairs is unbounded at 80 %, so every pair is inside.
  CHECK(s.pairs_inside == 4);
}

TEST_CASE("anchoring study per table: its groups studied, the band from every other group, by hand") {
  // Table B: one group of 5 rows, errors 0 .. 0.04: 20 ordered pairs, differences +-0.01 (4 each side), +-0.02
  // (3), +-0.03 (2), +-0.04 (1). Table A: one group of 2 rows 0.5 apart.
  std::vector<bands::ErrorRow> rows;
  for (double e : {0.0, 0.01, 0.02, 0.03, 0.04}) {
    rows.push_back(row(all("x"), e));
    rows.back().group = "GB";
    rows.back().table = "B";
    rows.back().group_table = "B";
  }
  for (double e : {0.0, 0.5}) {
    rows.push_back(row(all("x"), e));
    rows.back().group = "GA";
    rows.back().table = "R";  // a recipe table's row in A's sweep group (its copy there folded into it)
    rows.back().group_table = "A";
  }
  // A's band comes from B's 20 pairs: at 80 %, the 2nd smallest (-0.03) and the 19th (+0.03) of 20, so A's two
  // pairs (+-0.5) are outside; their anchored errors are |e^0.5 - 1| = 64.9 % and |e^-0.5 - 1| = 39.3 %.
  const auto a = bands::anchor_study(rows, {}, "A");
  CHECK(a.groups == 1);
  CHECK(a.pairs == 2);
  CHECK(a.pairs_inside == 0);
  CHECK(a.anchored_median_abs_pct == doctest::Approx((64.872 + 39.347) / 2).epsilon(1e-4));
  // B's band comes from A's 2 pairs: unbounded at 80 %, so all 20 of B's pairs are inside.
  const auto b = bands::anchor_study(rows, {}, "B");
  CHECK(b.groups == 1);
  CHECK(b.pairs == 20);
  CHECK(b.pairs_inside == 20);
  CHECK(bands::anchor_study(rows, {}).groups == 2);  // every table
}
