#include "workload/gradient_norm_sync.hpp"

#include <cstddef>

namespace moesim::workload {

namespace {
// The first GPU op `rank` issues after op `wait` (the clip), or the wait itself when none follows.
OpId first_gpu_op_after(const OpGraph& graph, OpId wait) {
  const auto& ops = graph.ops();
  const int rank = graph.op(wait).rank;
  for (auto i = static_cast<std::size_t>(wait) + 1; i < ops.size(); ++i)
    if (ops[i].rank == rank && ops[i].stream != Stream::host) return ops[i].id;
  return wait;
}
}  // namespace

void synchronise_gradient_norms(OpGraph& graph, const std::vector<OpId>& waits) {
  if (waits.size() < 2) return;
  std::vector<OpId> norms, after;
  for (const OpId w : waits) {
    norms.push_back(graph.op(w).deps[0]);
    after.push_back(first_gpu_op_after(graph, w));
  }
  for (std::size_t i = 0; i < waits.size(); ++i)
    for (std::size_t j = 0; j < norms.size(); ++j)
      if (i != j) graph.add_dep(after[i], norms[j]);
}

}  // namespace moesim::workload
