#include "engine/breakdown.hpp"

#include <algorithm>

#include "engine/intervals.hpp"

namespace moesim::engine {

using opgraph::OpKind;
using opgraph::Stream;

void compute_breakdown(const opgraph::OpGraph& graph, SimResult& result) {
  const auto& ops = graph.ops();
  const std::size_t n_ranks = graph.rank_count();
  const std::size_t n_categories = graph.categories().size();

  // Ops bucketed by rank (counting sort keeps id order inside a rank).
  std::vector<std::size_t> offset(n_ranks + 1, 0);
  for (const auto& o : ops) ++offset[static_cast<std::size_t>(o.rank) + 1];
  for (std::size_t r = 0; r < n_ranks; ++r) offset[r + 1] += offset[r];
  std::vector<opgraph::OpId> by_rank(ops.size());
  {
    std::vector<std::size_t> fill(offset.begin(), offset.end() - 1);
    for (const auto& o : ops) by_rank[fill[static_cast<std::size_t>(o.rank)]++] = o.id;
  }

  result.ranks.assign(n_ranks, RankTimes{});
  std::vector<Interval> compute, comm, gpu, host, one;
  std::vector<std::pair<opgraph::LabelId, Interval>> by_category;
  for (std::size_t r = 0; r < n_ranks; ++r) {
    compute.clear();
    comm.clear();
    gpu.clear();
    host.clear();
    by_category.clear();
    for (std::size_t k = offset[r]; k < offset[r + 1]; ++k) {
      const auto& o = ops[static_cast<std::size_t>(by_rank[k])];
      const OpTiming& t = result.ops[static_cast<std::size_t>(o.id)];
      const Interval ran{t.start, t.end};
      by_category.emplace_back(o.category, ran);
      if (o.stream == Stream::host) {
        host.push_back(ran);
        continue;
      }
      gpu.push_back(ran);
      if (t.issued > t.launch_start) host.push_back(Interval{t.launch_start, t.issued});
      if (o.kind == OpKind::compute) compute.push_back(ran);
      if (o.kind == OpKind::collective) comm.push_back(ran);
    }
    for (auto* v : {&compute, &comm, &gpu, &host}) normalize(*v);
    RankTimes& rt = result.ranks[r];
    rt.by_category.assign(n_categories, CategoryTime{});
    rt.gpu_busy = measure(gpu);
    rt.gpu_idle = result.makespan - rt.gpu_busy;
    rt.compute_busy = measure(compute);
    rt.comm_busy = measure(comm);
    rt.exposed_comm = measure_outside(comm, compute);
    rt.host_busy = measure(host);

    std::stable_sort(by_category.begin(), by_category.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < by_category.size();) {
      const opgraph::LabelId cat = by_category[i].first;
      one.clear();
      for (; i < by_category.size() && by_category[i].first == cat; ++i) one.push_back(by_category[i].second);
      normalize(one);
      CategoryTime& ct = rt.by_category[static_cast<std::size_t>(cat)];
      ct.busy = measure(one);
      ct.exposed = measure_outside(one, compute);
    }
  }
}

}  // namespace moesim::engine
