// Properties of whole simulated steps on random layouts of the small-moe model (seeded, tests/properties/
// random_layouts.hpp): the same case gives the same report on every run and for any thread count; every
// collective delivers the bytes it injected and the links carry exactly the bytes of the flows crossing them;
// more bandwidth or faster kernels never lengthen a step; memory per GPU never shrinks when the micro-batch or
// the sequence grows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/parallel_map.hpp"
#include "random_layouts.hpp"

using namespace moesim;

namespace {

constexpr std::uint64_t kSeed = 20261201;

double step_time(const predict::Case& c) {
  return predict::predict_step(c, test::unchecked_memory()).report.step_time_s;
}

// The case with every network bandwidth (NVLink, NIC, switch ports) multiplied by `f`.
predict::Case with_bandwidth(predict::Case c, double f) {
  c.system.gpu.nvlink_Bps_per_direction *= f;
  c.system.scale_up.switch_part.port_Bps_per_direction *= f;
  c.system.scale_out.nic.Bps_per_direction *= f;
  c.system.scale_out.switch_part.port_Bps_per_direction *= f;
  return c;
}

// The case with every math rate and the HBM bandwidth multiplied by `f` (every kernel's roofline gets faster).
predict::Case with_faster_gpu(predict::Case c, double f) {
  for (auto& peak : c.system.gpu.dense_flops)
    if (peak) *peak *= f;
  c.system.gpu.hbm_Bps *= f;
  return c;
}

}  // namespace

TEST_CASE("property: a case gives the same report on every run and for any number of threads") {
  const auto cases = test::random_cases(kSeed, 16);
  const auto report = [&](std::size_t i) {
    return report::to_json_text(predict::predict_step(cases[i], test::unchecked_memory()).report);
  };
  const auto one = parallel_map<std::string>(cases.size(), 1, report);
  CHECK(parallel_map<std::string>(cases.size(), 1, report) == one);
  CHECK(parallel_map<std::string>(cases.size(), 4, report) == one);
  CHECK(parallel_map<std::string>(cases.size(), 0, report) == one);
}

TEST_CASE("property: every collective delivers what it injected; links carry the bytes of their flows") {
  for (const auto& c : test::random_cases(kSeed + 1, 12)) {
    CAPTURE(test::describe(c));
    auto o = test::unchecked_memory();
    o.keep_timeline = true;
    const auto p = predict::predict_step(c, o);
    const auto& graph = p.workload->graph;
    REQUIRE(p.result->collectives.size() == graph.collectives().size());
    std::vector<double> expected_link_bytes(p.result->link_bytes.size(), 0.0);
    for (std::size_t i = 0; i < graph.collectives().size(); ++i) {
      const auto& timing = p.result->collectives[i];
      double injected = 0;
      for (const auto& f : graph.collectives()[i].flows) {
        injected += f.bytes;
        for (auto link : f.path) expected_link_bytes[static_cast<std::size_t>(link)] += f.bytes;
      }
      CHECK(timing.bytes_injected == doctest::Approx(injected).epsilon(1e-9));
      // The flow solver ends a flow on a whole picosecond (flow_solver.cpp predict: ceil of remaining / rate), so
      // each flow may deliver up to one picosecond of its rate past its bytes: under 2 bytes at 2 TB/s, which
      // shows on the loss's few-kilobyte TP all-reduces.
      const double resolution = 2.0 * static_cast<double>(graph.collectives()[i].flows.size());
      CHECK(std::abs(timing.bytes_delivered - timing.bytes_injected) <= 1e-6 * timing.bytes_injected + resolution);
    }
    for (std::size_t l = 0; l < expected_link_bytes.size(); ++l)
      CHECK(p.result->link_bytes[l] == doctest::Approx(expected_link_bytes[l]).epsilon(1e-6));
  }
}

TEST_CASE("property: more bandwidth or faster kernels never lengthen a step") {
  for (const auto& c : test::random_cases(kSeed + 2, 24)) {
    CAPTURE(test::describe(c));
    const double base = step_time(c);
    REQUIRE(base > 0);
    const double wider = step_time(with_bandwidth(c, 2.0));
    const double faster = step_time(with_faster_gpu(c, 2.0));
    CHECK(wider <= base * (1 + 1e-9));
    CHECK(faster <= base * (1 + 1e-9));
    // Halving is the mirror image: never shorter.
    CHECK(step_time(with_bandwidth(c, 0.5)) >= base * (1 - 1e-9));
  }
}

TEST_CASE("property: memory per GPU never shrinks when the micro-batch or the sequence grows") {
  for (const auto& c : test::random_cases(kSeed + 3, 24)) {
    CAPTURE(test::describe(c));
    const auto base = predict::predict_step(c, test::unchecked_memory()).report;
    auto bigger_mbs = c;  // same number of micro-batches, each twice as large
    bigger_mbs.layout.mbs *= 2;
    bigger_mbs.layout.gbs *= 2;
    auto longer_seq = c;
    longer_seq.layout.seq *= 2;
    for (const auto* grown : {&bigger_mbs, &longer_seq}) {
      CAPTURE(test::describe(*grown));
      const auto r = predict::predict_step(*grown, test::unchecked_memory()).report;
      CHECK(r.memory_max_GiB >= base.memory_max_GiB);
      REQUIRE(r.memory.size() == base.memory.size());
      for (std::size_t s = 0; s < r.memory.size(); ++s) {
        CHECK(r.memory[s].activations_GiB >= base.memory[s].activations_GiB);
        CHECK(r.memory[s].total_GiB >= base.memory[s].total_GiB);
      }
    }
  }
}

// Found by the random layouts: DeepEP / HybridEP with EP1 (no exchange) was an internal error (exit 4, "routing
// shape does not divide: experts 0") because the dedup dispatchers counted destinations of an empty routing.
TEST_CASE("regression: a flex dispatcher with EP1 runs and moves no EP bytes") {
  for (const auto d : {layout::Dispatcher::deepep, layout::Dispatcher::hybridep}) {
    auto c = test::h100x8();
    c.layout.ep = 1;
    c.layout.dispatcher = d;
    auto flex = c;
    c.layout.dispatcher = layout::Dispatcher::alltoall;
    const auto r = predict::predict_step(flex, test::unchecked_memory()).report;
    CHECK(r.step_time_s > 0);
    CHECK(r.breakdown.at("exposed_ep") == 0);
    CHECK(predict::predict_step(c, test::unchecked_memory()).report.breakdown.at("exposed_ep") == 0);
  }
}
