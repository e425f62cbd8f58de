// FSDP with a pipeline, estimate against the engine on DeepSeek-V3 (the random layouts of `moesim estimate
// --agreement` that were furthest from the engine). FSDP2 under torch.distributed.pipelining reshards after each
// forward but not after a backward, so in 1F1B's steady state a chunk's forward finds its weights gathered and
// its backward gathers them: one gather per forward/backward pair. The chunk probes used to build a fresh DP
// strategy for each forward and backward and charged two (estimate +36 % and +21 % over the engine here).
#include <cmath>
#include <string>

#include <doctest/doctest.h>

#include "deepseek_case.hpp"
#include "estimate/estimate_step.hpp"

using namespace moesim;

namespace {

double gap(const predict::Case& c) {
  predict::PredictOptions o;
  o.check_memory = false;
  return estimate::estimate_step(c, o).step_time_s / predict::predict_step(c, o).report.step_time_s - 1;
}

}  // namespace

TEST_CASE("FSDP with PP: the estimate charges one gather per forward/backward pair, as the engine runs it") {
  const config::Json layouts[] = {
      // 1F1B, PP4.
      {{"tp", 4},
       {"pp", 4},
       {"vpp", 1},
       {"cp", 1},
       {"ep", 16},
       {"etp", 1},
       {"fsdp", true},
       {"mbs", 1},
       {"dispatcher", "hybridep"},
       {"recompute", "selective: moe_act,layernorm"},
       {"cuda_graph", "full"},
       {"a2a_overlap", false},
       {"grouped_gemm", "fused"}},
      // Interleaved, PP2 VPP3.
      {{"tp", 8},
       {"pp", 2},
       {"vpp", 3},
       {"cp", 1},
       {"ep", 8},
       {"etp", 1},
       {"fsdp", true},
       {"mbs", 2},
       {"dispatcher", "allgather"},
       {"recompute", "selective: moe_act,layernorm"},
       {"cuda_graph", "partial"},
       {"a2a_overlap", false},
       {"grouped_gemm", "fused-mlp"}},
  };
  for (const auto& fields : layouts) {
    const double g = gap(test::deepseek_case(fields));
    INFO(fields.dump() << ": estimate / engine - 1 = " << g);
    CHECK(std::abs(g) < 0.03);
  }
}
