// The routing model (workload/routing_model.hpp): loads per EP rank, capacity drops, seeds, files, parsing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "core/error.hpp"
#include "workload/routing_model.hpp"

namespace {
using namespace moesim;
using workload::layer_load;
using workload::parse_routing_spec;
using workload::RoutingSpec;

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / ("moesim_test_" + name)).string();
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("balanced routing: every rank gets its share, nothing is dropped, pace 1") {
  const auto load = layer_load(RoutingSpec{}, 3, 256, 32, 0, false);
  CHECK(load.max_over_mean == doctest::Approx(1));
  CHECK(load.dropped_fraction == 0);
  CHECK(load.pace == doctest::Approx(1));
}

TEST_CASE("dirichlet: concentration -> infinity approaches balanced; small concentration is skewed") {
  double previous = 1e9;
  for (const double alpha : {1.0, 10.0, 100.0, 1e4, 1e8}) {
    const auto spec = parse_routing_spec("dirichlet:" + std::to_string(alpha), 256);
    const auto load = layer_load(spec, 5, 256, 32, 0, false);
    CAPTURE(alpha);
    CHECK(load.max_over_mean >= 1);
    CHECK(load.max_over_mean < previous);  // one seed: monotone here, as the spread shrinks like 1/sqrt(alpha)
    previous = load.max_over_mean;
  }
  CHECK(previous == doctest::Approx(1).epsilon(1e-3));
  const auto inf = layer_load(parse_routing_spec("dirichlet:inf", 256), 5, 256, 32, 0, false);
  CHECK(inf.max_over_mean == 1);
  CHECK(inf.pace == 1);
  // moe-modeling.md §6: Dirichlet(10) at EP64 (E 256) puts about 1.41 x the mean on the busiest rank (a Monte Carlo
  // that also samples tokens, +~0.03 of noise this model leaves out): the expected popularity alone, averaged
  // over layers, lands in the same range.
  double sum = 0;
  const auto ten = parse_routing_spec("dirichlet:10", 256);
  for (int layer = 0; layer < 50; ++layer) sum += layer_load(ten, layer, 256, 64, 0, false).max_over_mean;
  CHECK(sum / 50 > 1.25);
  CHECK(sum / 50 < 1.5);
}

TEST_CASE("zipf: exponent 0 is balanced; larger exponents skew more") {
  CHECK(layer_load(parse_routing_spec("zipf:0", 64), 1, 64, 8, 0, false).max_over_mean == doctest::Approx(1));
  const double a = layer_load(parse_routing_spec("zipf:0.5", 64), 1, 64, 8, 0, false).max_over_mean;
  const double b = layer_load(parse_routing_spec("zipf:1.2", 64), 1, 64, 8, 0, false).max_over_mean;
  CHECK(a > 1);
  CHECK(b > a);  // same seed, same permutation: a steeper law concentrates more on the same experts
}

TEST_CASE("a seed fixes the loads; another seed changes them; layers differ") {
  auto spec = parse_routing_spec("dirichlet:5", 128);
  const auto p1 = workload::expert_popularity(spec, 7, 128);
  CHECK(p1 == workload::expert_popularity(spec, 7, 128));
  CHECK(std::accumulate(p1.begin(), p1.end(), 0.0) == doctest::Approx(1));
  CHECK(p1 != workload::expert_popularity(spec, 8, 128));
  spec.seed = 2;
  CHECK(p1 != workload::expert_popularity(spec, 7, 128));
}

TEST_CASE("capacity: no drop at a factor >= the most popular expert's load; drops below it") {
  const auto spec = parse_routing_spec("dirichlet:3", 64);
  const auto p = workload::expert_popularity(spec, 2, 64);
  const double max_load = *std::max_element(p.begin(), p.end()) * 64;  // in balanced shares
  CHECK(max_load > 1);
  const auto at = layer_load(spec, 2, 64, 8, max_load, false);
  CHECK(at.dropped_fraction == 0);
  CHECK(at.pace == doctest::Approx(layer_load(spec, 2, 64, 8, 0, false).pace));
  const auto below = layer_load(spec, 2, 64, 8, 0.9 * max_load, false);
  CHECK(below.dropped_fraction > 0);
  CHECK(below.pace <= at.pace);
  // Hand check on a two-expert file: loads 3:1 on EP 2, capacity 1.2 x the balanced share.
  const auto path = temp_file("routing_two.csv", "layer,expert,tokens\n0,0,300\n0,1,100\n");
  const auto two = parse_routing_spec("file:" + path, 2);
  const auto l = layer_load(two, 0, 2, 2, 1.2, false);
  CHECK(l.max_over_mean == doctest::Approx(1.5));        // rank 0 holds 1.5 shares, the mean is 1
  CHECK(l.dropped_fraction == doctest::Approx(0.15));    // (1.5 - 1.2) of 2 shares
  CHECK(l.pace == doctest::Approx(1.2));                 // the busiest keeps 1.2 of the 1 a rank is charged
  CHECK(layer_load(two, 0, 2, 2, 1.2, true).pace == 1);  // padded: every rank runs its capacity
  CHECK(layer_load(two, 1, 2, 2, 0, false).pace == 1);   // layers the file leaves out stay balanced
}

TEST_CASE("routing files: JSON per layer, and clear errors") {
  const auto json = temp_file("routing.json", R"({"layers": {"4": [1, 1, 1, 5]}})");
  const auto spec = parse_routing_spec("file:" + json, 4);
  CHECK(layer_load(spec, 4, 4, 2, 0, false).max_over_mean == doctest::Approx(1.5));
  CHECK_THROWS_AS(parse_routing_spec("file:" + json, 8), ConfigError);  // 4 counts for 8 experts
  const auto bad = temp_file("routing_bad.csv", "layer,expert,tokens\n0,9,1\n");
  CHECK_THROWS_WITH_AS(parse_routing_spec("file:" + bad, 4), doctest::Contains("line 2"), ConfigError);
  CHECK_THROWS_AS(parse_routing_spec("file:/no/such/file.csv", 4), ConfigError);
  CHECK_THROWS_AS(parse_routing_spec("dirichlet:0", 4), ConfigError);
  CHECK_THROWS_AS(parse_routing_spec("zipf:-1", 4), ConfigError);
  CHECK_THROWS_WITH_AS(parse_routing_spec("uniform", 4), doctest::Contains("expected balanced"), ConfigError);
  CHECK(parse_routing_spec("balanced", 4).is_balanced());
}
