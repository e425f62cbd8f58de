#pragma once
// Data-parallel strategies: the weight and gradient traffic over the data-parallel groups (the dense side over
// DP x CP, the routed experts over EDP) around one rank's schedule. The schedule walker calls the hooks below at
// fixed points of the rank's units; a strategy emits its collectives there (through OpWriter) and keeps its own
// per-rank state (which units are gathered). One implementation per file, registered by name in dp_strategy.cpp:
// "distributed-optimizer" (Megatron's, bucketed per chunk) and "fsdp" (PyTorch FSDP2, per unit).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workload/layer_emitter.hpp"
#include "workload/op_writer.hpp"
#include "workload/step_context.hpp"

namespace moesim::workload {

// Keys of the parameter units a strategy may gather: a decoder or MTP layer's index, or one of these.
inline constexpr int kEmbeddingUnit = -1;
inline constexpr int kHeadUnit = -2;

class DataParallelStrategy {
 public:
  virtual ~DataParallelStrategy() = default;

  // Before the rank's first unit (after a full-iteration graph's launch).
  virtual void begin() {}
  // A forward unit of `chunk` and micro-batch `mb` starts after `chain`.
  virtual void before_forward_unit(int /*chunk*/, int /*mb*/, Chain& /*chain*/) {}
  // Parameter unit `key` is about to be used by `chain` / has just been used (its last op `after`), in a forward
  // (`backward` false) or a backward.
  virtual void use(int /*key*/, Chain& /*chain*/, int /*mb*/, Phase /*phase*/) {}
  virtual void release(int /*key*/, bool /*backward*/, OpId /*after*/, int /*mb*/) {}
  // Around layer k of a unit's layers (in execution order) whose ops extend `chain`.
  virtual void before_layer(const std::vector<LayerRun>& /*layers*/, std::size_t /*k*/, bool /*forward*/,
                            Chain& /*chain*/) {}
  virtual void after_layer(const std::vector<LayerRun>& /*layers*/, std::size_t /*k*/, bool /*forward*/,
                           Chain& /*chain*/) {}
  // A backward unit (B) of `chunk` ended with `last`; called in the rank's schedule order (W units are not B).
  virtual void after_backward_unit(int /*chunk*/, OpId /*last*/) {}
  // After the rank's last unit, given each chunk's last backward op: the ops the optimizer step waits for.
  virtual std::vector<OpId> reduce_gradients(const std::vector<OpId>& last_backward) = 0;
  // Whether each GPU keeps only its data-parallel shard of the optimizer state.
  virtual bool shards_optimizer_state() const = 0;
};

// A strategy for one simulated rank's step.
std::unique_ptr<DataParallelStrategy> make_dp_strategy(std::string_view name, const StepContext& ctx, OpWriter& out,
                                                       int rank);
std::vector<std::string> dp_strategy_names();
// "fsdp" with Layout::fsdp, else "distributed-optimizer" (which also runs without --use-distributed-optimizer:
// its gathers and reduce-scatters then stand for the all-reduce's two halves; only the optimizer is unsharded).
std::string_view dp_strategy_name_for(const layout::Layout& layout);

// ---- shared by the strategies ---------------------------------------------------------------------------------

// Bytes per parameter of a weight gather and of a gradient reduce. The gather moves FP8 with fp8_param_gather,
// except MXFP8 primary weights under the distributed optimizer, which Megatron gathers in BF16 through the
// gradient buffer and requantizes after (param_and_grad_buffer.py, "Parameter all-gather" in docs/workload-model.md);
// BF16 otherwise.
double param_gather_bytes(const layout::Layout& layout);
// Bytes of a BF16 parameter: the gather width of every weight without FP8 parameters, and of the weights outside
// the FP8 buffer with them.
inline constexpr double kWideParamBytes = 2.0;
// Whether the model keeps FP8 weights in a buffer of their own (fp8_param_gather, not MXFP8 through the gradient
// buffer, not FSDP): Transformer Engine's linear weights are FP8 there, the embedding, the output layer and the
// norms stay BF16 in a second buffer (Megatron-LM 25.09-alpha.rc1 distributed_data_parallel.py:152-249, one
// buffer per (param dtype, grad dtype)), gathered at two bytes and grouped with the FP8 buffer's last bucket.
bool fp8_param_buffer(const layout::Layout& layout);
// The dense parameters of `rank`'s chunk `chunk` outside the FP8 buffer (its embedding and output layer, per GPU);
// 0 without an FP8 buffer.
double wide_params(const StepContext& ctx, int rank, int chunk);
// Whether the distributed optimizer prefetches each chunk's parameter all-gather from the step's start (Megatron's
// align_param_gather, Layout::align_param_gather with its default for the schedule) or gathers a chunk on its
// first forward and waits.
bool prefetches_param_gather(const layout::Layout& layout);
// Whether the distributed optimizer's parameter all-gathers and their MXFP8 copies run inside the step, on the
// forward's way (Layout::param_gather_in_step and overlap_param_gather): off, the weights are refreshed outside the
// timed step, or at the optimizer step's end (param_gather_at_step_end.hpp), and the strategy emits neither; its
// reduce-scatters are unchanged.
bool gathers_params_in_step(const layout::Layout& layout);
// Bytes per parameter of the copy that follows each parameter all-gather on the compute stream when MXFP8
// weights are gathered through the gradient buffer (Megatron's _post_param_sync with
// reuse_grad_buf_for_mxfp8_param_ag): the BF16 slice read, the MXFP8 weight written row- and column-wise with its
// scales, the slice zeroed for gradient accumulation. 0 where the gather lands in the weights themselves.
double param_copy_bytes(const layout::Layout& layout);
// That copy for `params` on `rank`'s compute stream after `chain` (the gather); nothing when it costs no bytes.
void emit_param_copy(const StepContext& ctx, OpWriter& out, int rank, const memory::LayerShare& params, Chain& chain);
double grad_reduce_bytes(const layout::Layout& layout);
// A data-parallel gather or reduce-scatter of `params` (per GPU, before sharding) at `bytes_per_param`: the dense
// side over DP x CP, then the routed experts over EDP once it is done; a group of one GPU, or a side without
// parameters, moves nothing. `wide_dense` of the dense parameters move at least kWideParamBytes each (BF16 weights
// in the gather of an FP8-parameter model). Returns the last op, or -1 when none was emitted.
OpId dp_collectives(const StepContext& ctx, OpWriter& out, int rank, const memory::LayerShare& params,
                    double bytes_per_param, comm::Collective op, const char* dense_name, const char* expert_name,
                    opgraph::OpIds deps, int layer, int mb, Phase phase, double wide_dense = 0);
// This GPU's parameters of one chunk (dense side, expert side).
memory::LayerShare chunk_params(const StepContext& ctx, int rank);
// The gradient reduce-scatter of each chunk once its last backward is done (--overlap-grad-reduce) and, where
// `launch_after` names one for the chunk (not -1), once that op is done too; appended to `reduces` (a chunk
// without one appends its last backward). They are issued in the order their chunks become ready (op ids are
// issue order), as the framework launches them: the DP stream runs them one after another.
void reduce_scatter_chunks(const StepContext& ctx, OpWriter& out, int rank, const std::vector<OpId>& last_backward,
                           std::vector<OpId>& reduces, const std::vector<OpId>& launch_after = {});
// Megatron DDP's bucket size in parameters: the layout's ddp_bucket_size, else Megatron's default
// max(40M, 1M x DP) over the data-parallel group without CP (Megatron-LM 99a10812
// distributed_data_parallel.py:63-66, the group from process_groups_config.py:296-297).
double ddp_bucket_params(const layout::Layout& layout);
// Whether pipeline rank `rank`'s first chunk is split into buckets: Megatron buckets only pipeline rank 0
// (distributed_data_parallel.py:96-103) and its first model chunk (training.py:1718-1719 disable_bucketing for the
// others), and only with overlap_grad_reduce (:67-69). Without the prefetch its parameter all-gathers then run one
// bucket ahead of the forward.
bool buckets_first_chunk(const layout::Layout& layout, int rank);
// Whether the backward hooks launch the bucketed chunk's reduce-scatters as its buckets fill during the last
// micro-batch's backward: under the non-interleaved schedule (no W units, micro-batches in order). The
// interleaved one launches a chunk's buckets together after its last backward (grad_sync_func), which moesim
// prices as the chunk's one reduce-scatter.
bool reduces_buckets_from_hooks(const layout::Layout& layout);

// How many backward steps after a chunk's last backward the distributed optimizer launches its reduce-scatter on
// pipeline rank `rank`: Megatron's interleaved schedule with align_grad_reduce (its default) registers
// grad_sync_func and launches chunk k's `pp_rank` backward steps late (Megatron-LM 99a10812 schedules.py:1442-1458,
// the rest after the loop, :2057-2063); 0 otherwise.
int grad_reduce_delay_steps(const layout::Layout& layout, int rank);

}  // namespace moesim::workload
