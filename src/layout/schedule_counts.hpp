#pragma once
// Counts of Megatron's 1F1B pipeline schedules that more than one module needs: the step builder's schedules
// (workload/) order their units by them and the memory model (memory/, below workload/) sizes the in-flight
// activations by them, so the formula lives here, once.
namespace moesim::layout {

// Forwards pipeline rank `pp_rank` runs before its first backward in Megatron's 1F1B (vpp = 1) or interleaved
// 1F1B (vpp > 1) schedule: pp - rank - 1, or 2(pp - rank - 1) + (vpp - 1)pp; one more with the combined 1F1B of
// A2A overlap (--overlap-moe-expert-parallel-comm). Not capped at the step's forwards: callers cap it.
inline int warmup_forwards(int pp, int vpp, int pp_rank, bool a2a_overlap) {
  const int warmup = vpp > 1 ? 2 * (pp - pp_rank - 1) + (vpp - 1) * pp : pp - pp_rank - 1;
  return a2a_overlap ? warmup + 1 : warmup;
}

}  // namespace moesim::layout
