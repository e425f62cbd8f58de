#pragma once
// Communication volumes of one micro-batch of one layer (DP: of one step), per rank, for each parallelism, as
// collectives ready for collective_cost(): moe-modeling.md §4.1 (TP+SP), §4.3 (DP), §4.4 (PP), §4.5 (CP).
// EP dispatch/combine volumes are in expert_dispatch.hpp (4 all-to-alls per MoE layer and micro-batch, 6 when the
// MoE block is recomputed: ep_all_to_alls_per_layer).
#include <string>
#include <vector>

#include "comm/collectives.hpp"

namespace moesim::comm {

// One kind of collective a layer issues `count` times, each over a group of `group_size` ranks with `bytes` in
// CollectiveSpec's convention (AG/RS: full gathered size; AR: per-rank buffer; P2P: message; A2A: send buffer).
struct CollectiveVolume {
  std::string what;  // "tp all-gather before QKV / FC1", ...
  Collective op = Collective::all_gather;
  int group_size = 1;
  double bytes = 0;
  int count = 1;
};

enum class Pass { forward, backward };

// Activation shape entering a layer on one rank: full sequence (before CP and SP split), micro-batch, hidden size.
struct ActivationShape {
  double seq = 0, micro_batch = 1;
  int hidden = 0;
  double bytes_per_element = 2;  // BF16
};

// TP with or without sequence parallelism. A dense layer has two TP regions (attention, MLP); a MoE layer with
// ETP = 1 only the attention one. S_act = (seq/cp) b h B.
//   SP forward: per region one all-gather + one reduce-scatter of S_act; backward: the transposes plus the
//   re-all-gather of the saved sharded input for wgrad (3 per region: "about 6 collectives" for a dense layer).
//   No SP: one all-reduce per region in each pass.
std::vector<CollectiveVolume> tp_layer_volumes(const ActivationShape& a, int tp, int cp, bool sequence_parallel,
                                               bool moe_layer_with_etp1, Pass pass);

// Megatron/TE cp_comm_type.
enum class CpComm { p2p, all_gather, a2a };
// kv_elements_per_token: K and V elements per token that CP moves (MLA: up-projected 128x192 + 128x128 = 40960 for
// DeepSeek-V3; GQA Llama-70B: 2*8*128 = 2048). a2a_elements_per_token: the Q/K/V/O width an Ulysses A2A moves.
//   p2p: CP-1 sends of the local K,V chunk (seq/cp) b kv B forward, twice that backward (KV + dKV);
//   all_gather: AG of K,V forward (full size seq b kv B), RS of dK,dV backward;
//   a2a: 4 all-to-alls per pass of the local (seq/cp) b dim B.
std::vector<CollectiveVolume> cp_layer_volumes(const ActivationShape& a, int cp, CpComm kind,
                                               double kv_elements_per_token, double a2a_elements_per_token, Pass pass);

// One pipeline stage boundary, one micro-batch, one direction: (seq/cp/(tp if SP)) b h B as a send/recv.
CollectiveVolume pp_boundary_volume(const ActivationShape& a, int tp, int cp, bool sequence_parallel);

// Distributed optimizer, once per step per parameter group: reduce-scatter of gradients (P_local B_grad) and
// all-gather of parameters (P_local B_param) over `dp` ranks (dense: DP with CP folded in; experts: EDP).
std::vector<CollectiveVolume> dp_step_volumes(double params_local, int dp, double grad_bytes_per_param,
                                              double param_bytes_per_param);

// All-to-alls per MoE layer and micro-batch: dispatch + combine forward and their gradients backward; the
// recomputed forward adds two.
int ep_all_to_alls_per_layer(bool moe_recompute);

}  // namespace moesim::comm
