#pragma once
// The end of a rank's step: the embedding-gradient all-reduce between the first and the last stage when both hold
// the embedding (MTP or tied), then the Adam step on this GPU's shard once every gradient reduction is done.
#include <optional>
#include <vector>

#include "workload/op_writer.hpp"
#include "workload/step_context.hpp"

namespace moesim::workload {

// `reduces`: the ops the optimizer waits for (the DP strategy's gradient reductions); `sharded`: the optimizer
// state is the DP shard (distributed optimizer, FSDP).
// The pipeline ranks of the input embedding and of the loss in the first model copy: rank 0 and pp-1 under
// Megatron's placement and DualPipe's; the same rank in a V.
struct EmbeddingLossRanks {
  int embedding = 0, loss = 0;
};
EmbeddingLossRanks embedding_loss_ranks(const layout::StageAssignment& stages);

// Returns the host's wait for the gradient norm (the `.item()` before the clip), where the pipeline stages meet
// (gradient_norm_sync.hpp); none for an optimizer without a norm (FSDP's) or without reductions to wait for.
std::optional<OpId> emit_optimizer(const StepContext& ctx, OpWriter& out, int rank, std::vector<OpId> reduces,
                                   bool sharded);

}  // namespace moesim::workload
