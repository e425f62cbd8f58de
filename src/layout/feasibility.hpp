#pragma once
// Layout feasibility: can a layout run a model? Divisibility and Megatron's argument checks, all reported at
// once. (Not to be confused with `moesim validate`, which checks predictions against measurements.)
#include <string>
#include <vector>

#include "layout/layout.hpp"
#include "layout/model_facts.hpp"

namespace moesim::layout {

// Every reason `layout` cannot run `facts`, one message each, in a fixed order; empty when it can.
// Cheap enough to screen many candidate layouts with. Checked:
//   sizes >= 1 (mtp >= 0); tp*pp*cp and etp*ep*pp divide gpus; gbs a multiple of mbs*dp;
//   ep divides the experts (ep == 1 for a dense model); tp divides attention heads and query groups;
//   vpp > 1 needs pp > 1; the pipeline split (pp_layout rules, or layers divisible; see pipeline_layout.hpp);
//   cp > 1: seq divisible by 2*cp (causal load balancing cuts each sequence into 2*cp chunks);
//   sequence parallel: seq divisible by tp*cp; mtp <= the model's MTP layers;
//   a2a_overlap (Megatron's --overlap-moe-expert-parallel-comm asserts): ep > 1, dispatcher not allgather,
//   no full recompute, and pp == 1 or vpp > 1.
std::vector<std::string> feasibility_problems(const Layout& layout, const ModelFacts& facts);

// Throws InfeasibleError (exit code 3) whose message lists every problem, one per line.
void check_feasibility(const Layout& layout, const ModelFacts& facts);

}  // namespace moesim::layout
