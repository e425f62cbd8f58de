#pragma once
// The pipeline-stage partition problem on abstract costs: a sequence of items (embedding, decoder layers, the
// MTP block, the loss) cut into pp*vpp contiguous virtual stages, virtual stage s living on pipeline rank
// s % pp as its chunk s / pp (Megatron's round-robin placement). Minimises
//     rank_weight  * (slowest rank's work, the sum of its chunks' item times)
//   + round_weight * (sum over rounds c of the slowest chunk c among the ranks)
//   + stage_weight * (slowest virtual stage's work)
// under a per-rank memory cap (ties: the more even ranks, then the fullest rank's memory). The first term is a
// free-running pipeline's steady state, the second a lock-stepped one's (each round of pp chunks at the pace of
// its slowest), the third the fill and drain at the slowest chunk's pace (stage_layout.hpp sets the weights).
//
// Method: dynamic programming over the virtual stages in order; the state after stage s is the number of items
// placed and, for every rank, its work and memory so far (a rank's load is final after its last chunk, and is
// folded into a running maximum then). With vpp = 1 every rank is final at once and the DP is the exact
// min-max linear partition. With vpp > 1 the per-rank vectors do not dominate each other (equal totals), so each
// (stage, items placed) keeps its `beam` best states by (objective so far, sum of squared work): exact while no
// state is dropped (`exact` says so), a beam search otherwise; states with the same rank vectors are kept unless
// another is no worse in every term (exact). `lower_bound` (total work / pp and / (pp vpp), the largest
// indivisible item) certifies how far from optimal the answer can be.
#include <cstddef>
#include <vector>

namespace moesim::stages {

struct DpItem {
  double time = 0;            // the item's forward + backward work per micro-batch, seconds
  std::vector<double> mem;    // bytes it adds on each pipeline rank (empty = none)
  std::vector<bool> allowed;  // virtual stages it may go to (empty = any)
};

struct DpProblem {
  int pp = 1, vpp = 1;
  std::vector<DpItem> items;     // in model order
  std::vector<double> base_mem;  // bytes each rank holds whatever its stages (empty = none)
  double mem_cap = 0;            // bytes per GPU; 0 = no cap
  double rank_weight = 1;        // the objective's weights (above)
  double round_weight = 0;
  double stage_weight = 0;
  std::size_t beam = 256;   // states kept per (stage, items placed) when vpp > 1
  int max_stage_items = 0;  // at most this many items in one virtual stage (0 = no limit)
};

struct DpResult {
  bool feasible = false;           // some partition meets every item's placement and the memory cap
  bool exact = true;               // no state was dropped by the beam: the optimum over all partitions
  std::vector<int> stage_end;      // items [stage_end[s-1], stage_end[s]) form virtual stage s
  std::vector<double> stage_time;  // per virtual stage
  std::vector<double> rank_time;   // per pipeline rank: sum of its chunks
  std::vector<double> rank_mem;    // per pipeline rank, with base_mem
  double max_rank_time = 0;
  double max_stage_time = 0;
  double rounds_time = 0;  // sum over chunk indices c of max_r (rank r's chunk c)
  double objective = 0;    // the weighted sum above
  double lower_bound = 0;  // no partition's objective is lower
  // max/mean - 1 of the ranks' work: 0 for a perfectly balanced pipeline.
  double imbalance() const;
};

// Throws std::invalid_argument for pp or vpp below 1 or an item's vectors of the wrong size.
DpResult solve_stage_partition(const DpProblem& problem);

// The same figures for a given partition (stage_end as in DpResult): to compare a published layout with the
// optimum on equal terms. `feasible` says whether it meets the placements and the memory cap; `exact` is true.
DpResult measure_partition(const DpProblem& problem, const std::vector<int>& stage_end);

}  // namespace moesim::stages
