#pragma once
// The stage-partition problem (stage_dp.hpp) of a case: one item per embedding, decoder layer, the MTP block
// and the loss, in model order, with
//   - time: the item's forward + backward per micro-batch from estimate's UnitProbe, i.e. the step builder's own
//     emitters played on the engine (a layer's backward includes its recompute; the MTP block is its layers plus
//     its heads; the loss is the output head and cross entropy);
//   - memory: what the item adds to each pipeline rank under memory::estimate_memory (the memory model run on
//     small stage assignments: weights, gradients, optimizer states, and activations times the rank's in-flight
//     micro-batches for the case's schedule), so the partition is capped by the same model `run` checks;
//   - placement: Megatron's layout rules (layout/pipeline_layout.hpp): E on virtual stage 0, L on the last, the
//     MTP layers together on the last chunk of a rank other than 0.
// Per-item memory is additive; FSDP's "largest unit gathered" term is not (its item share is the unit's own
// gather), so stage_layout.cpp re-checks the chosen layout with the full memory model.
#include <string>
#include <vector>

#include "predict/predict_step.hpp"
#include "stages/stage_dp.hpp"

namespace moesim::stages {

enum class ItemKind { embedding, layer, mtp_block, loss };

struct StageProblem {
  DpProblem dp;
  std::vector<ItemKind> kinds;  // one per dp item
  int mtp = 0;                  // MTP layers in the block
  double usable_bytes = 0;      // the GPU's usable HBM
  // Megatron string of a partition (stage_end as in DpResult), one symbol per item.
  std::string layout_text(const std::vector<int>& stage_end) const;
  // The stage boundaries of a pipeline layout string of the same model and pp*vpp (std::invalid_argument when it
  // does not place these items in this order).
  std::vector<int> stage_end_of(const std::string& layout_text) const;
};

// `cap_memory` false: no memory cap (the items' memory is still tracked, and ties prefer less of it).
StageProblem stage_problem(const predict::Case& c, const predict::PredictOptions& options, bool cap_memory);

}  // namespace moesim::stages
