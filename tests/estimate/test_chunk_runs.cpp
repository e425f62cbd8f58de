// A chunk's runs of same-kind layers are probed at the cap and one layer more, and the rest extrapolated
// (UnitProbe::chunk_units): on DeepSeek-V3 chunks of 15 to 31 layers the estimate equals the one that plays every
// chunk whole, with and without A2A overlap's merged pairs; where the host's lag keeps growing along a run (TP4
// ETP4 all-to-all without CUDA graphs) it stays within 3 %; FSDP chunks are always played whole.
#include <cmath>

#include <doctest/doctest.h>

#include "deepseek_case.hpp"
#include "estimate/estimate_step.hpp"
#include "estimate/probe_cache.hpp"

using namespace moesim;

namespace {

double step_with_cap(const predict::Case& c, std::size_t cap) {
  predict::PredictOptions o;
  o.check_memory = false;
  estimate::ProbeCache cache(cap);
  return estimate::estimate_step(c, o, &cache).step_time_s;
}

double extrapolation_gap(const config::Json& fields) {
  const auto c = test::deepseek_case(fields);
  return step_with_cap(c, estimate::ProbeCache::kDefaultRunCap) / step_with_cap(c, 0) - 1;
}

}  // namespace

TEST_CASE("chunk runs: the extrapolated estimate equals whole chunks in steady state, within 3 % when host-bound") {
  const config::Json exact[] = {
      {{"tp", 1}, {"pp", 2}, {"vpp", 1}, {"ep", 64}, {"a2a_overlap", false}},  // 30- and 31-layer chunks
      {{"tp", 1}, {"pp", 2}, {"vpp", 2}, {"ep", 64}, {"a2a_overlap", true}},   // merged pairs, 15-16 layers
      {{"tp", 2}, {"pp", 4}, {"vpp", 1}, {"ep", 32}, {"a2a_overlap", false}, {"recompute", "full"}},
  };
  for (const auto& fields : exact) {
    INFO(fields.dump());
    CHECK(std::abs(extrapolation_gap(fields)) < 1e-9);
  }
  const config::Json host_bound = {{"tp", 4},
                                   {"pp", 4},
                                   {"vpp", 1},
                                   {"ep", 64},
                                   {"etp", 4},
                                   {"dispatcher", "alltoall"},
                                   {"cuda_graph", "none"},
                                   {"grouped_gemm", "fused"},
                                   {"a2a_overlap", false},
                                   {"tp_comm_overlap", true},
                                   {"recompute", "selective: moe_act"}};
  const double g = extrapolation_gap(host_bound);
  INFO("host-bound gap " << g);
  CHECK(std::abs(g) < 0.03);
  // FSDP: played whole whatever the cap.
  CHECK(extrapolation_gap({{"tp", 1}, {"pp", 1}, {"vpp", 1}, {"ep", 64}, {"fsdp", true}, {"a2a_overlap", false}}) ==
        0.0);
}
