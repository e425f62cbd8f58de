#pragma once
// Context parallelism's traffic around one layer's core attention, per micro-batch and GPU, by Megatron's
// --cp-comm-type (layout.hpp CpCommType; Megatron hands it to Transformer Engine's DotProductAttention).
//
// p2p (ring; TE AttnFuncWithCPAndKVP2P): each rank receives the other cp-1 ranks' K and V blocks while the
// attention kernels run: (cp-1)/cp x seq x (K + V dims) x 2 bytes / tp on the wire forward, twice that backward
// (dK, dV travel back). MLA moves the up-projected per-head K and V (moe-modeling.md §4.5).
//
// a2a (Ulysses; TE AttnFuncWithCPAndQKVOA2A, context_parallel.py @c188b533 (TE 2.11): forward lines 3421 and
// 3520, backward 3691 and 3810): all-to-alls over the CP group swap the sequence split for a head split, so the
// kernel sees the whole sequence and heads / cp. Each rank's local tensors hold seq/cp tokens of its heads / tp:
//   before the forward kernel   Q, K, V        mbs x seq/cp x (Q + K + V dims) / tp x 2 bytes
//   after it                    O              mbs x seq/cp x O dims / tp x 2 bytes
//   before the backward kernel  dO             as O
//   after it                    dQ, dK, dV     as Q, K, V
// Sizes are the all-to-all's send buffer per rank (comm::CollectiveSpec), (cp-1)/cp of which leaves the GPU. The
// kernel waits for them: serial on its chain. Around each all-to-all TE copies every tensor twice (a movedim and
// a chunk reorder, flash_attn_a2a_communicate, lines 404-496): read + write, 4 x the tensor's bytes.
#include "layout/layout.hpp"
#include "model/model_spec.hpp"

namespace moesim::workload {

struct CpAttentionTraffic {
  double ring_fwd = 0, ring_bwd = 0;  // p2p: wire bytes beside the kernels
  double a2a_qkv = 0, a2a_out = 0;    // a2a: send buffer per rank of the Q/K/V and the O all-to-alls
  double reorder_bytes() const { return 4 * (a2a_qkv + a2a_out); }  // TE's copies around them, each direction
};

// p2p: the memory-bound kernels Transformer Engine runs around the ring's attention kernels, per GPU and layer
// (TransformerEngine v2.7 @fedd9dd, pytorch/attention/dot_product_attention/context_parallel.py,
// AttnFuncWithCPAndKVP2P, sbhd layout as Megatron hands it over, causal, BF16 attention). Each correction is one
// torch.compile'd kernel (jit_fuser, pytorch/jit.py:36-38). Bytes are those of the rank that corrects whole
// outputs at every step (the last CP rank; the ring's steps keep the others waiting for it):
//   forward   K and V concatenated into the send buffer (line 691): read + write K, V;
//             softmax_lse: a clone at the first step and one correction per later step (1326, 1338);
//             the output corrections after the ring (1364-1405): the first writes out from step 0's output, each
//             later step reads its output and reads and writes out: (2 + 3 (cp - 1)) x O;
//   backward  K and V copied into the send buffer (1658); per step the partial dQ added into dQ and dK/dV into
//             the received dKV buffer (2322, 2521-2550): 3 x (Q + K + V) per step.
// Q, O: the rank's queries x heads / tp x head dim, BF16; the softmax statistics FP32 per query and head.
struct CpRingKernels {
  double fwd_bytes = 0, bwd_bytes = 0;
  int fwd_kernels = 0, bwd_kernels = 0;
  int attention_calls = 0;  // attention kernels per pass: one per ring step
};
CpRingKernels cp_ring_kernels(const model::ModelSpec& m, const layout::Layout& l);

// Zero traffic without context parallelism. Only p2p and a2a are priced: feasibility rejects the other types.
CpAttentionTraffic cp_attention_traffic(const model::ModelSpec& m, const layout::Layout& l);

}  // namespace moesim::workload
