#include "opgraph/op_graph.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "core/error.hpp"

namespace moesim::opgraph {

std::string_view to_string(Stream stream) {
  switch (stream) {
    case Stream::compute: return "compute";
    case Stream::ep_comm: return "ep_comm";
    case Stream::tp_comm: return "tp_comm";
    case Stream::dp_comm: return "dp_comm";
    case Stream::pp_comm: return "pp_comm";
    case Stream::host: return "host";
  }
  return "?";
}

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::compute: return "compute";
    case OpKind::collective: return "collective";
    case OpKind::host_sync: return "host_sync";
    case OpKind::delay: return "delay";
  }
  return "?";
}

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::fwd: return "fwd";
    case Phase::bwd_dgrad: return "bwd_dgrad";
    case Phase::bwd_wgrad: return "bwd_wgrad";
    case Phase::recompute: return "recompute";
    case Phase::optimizer: return "optimizer";
    case Phase::other: return "other";
  }
  return "?";
}

namespace {
LabelId intern(std::string_view text, std::vector<std::string>& table, LabelIndex& index) {
  // Looked up as a string_view: a label longer than the small-string buffer would otherwise cost an allocation
  // per op.
  auto it = index.find(text);
  if (it != index.end()) return it->second;
  const auto id = static_cast<LabelId>(table.size());
  table.emplace_back(text);
  index.emplace(std::string(text), id);
  return id;
}
}  // namespace

OpGraph::OpGraph() {
  name_id("");
  category_id("");
}

RankId OpGraph::add_rank(RankInfo info) {
  ranks_.push_back(std::move(info));
  return static_cast<RankId>(ranks_.size() - 1);
}

LabelId OpGraph::name_id(std::string_view text) { return intern(text, names_, name_index_); }
LabelId OpGraph::category_id(std::string_view text) { return intern(text, categories_, category_index_); }

CollectiveId OpGraph::add_collective(Collective c) {
  if (!c.members.empty()) throw InternalError("add_collective: members are filled in by add_op");
  c.id = static_cast<CollectiveId>(collectives_.size());
  collectives_.push_back(std::move(c));
  return collectives_.back().id;
}

OpId OpGraph::add_op(Op op) {
  op.id = static_cast<OpId>(ops_.size());
  if (op.collective != kNoCollective) {
    if (op.collective < 0 || static_cast<std::size_t>(op.collective) >= collectives_.size())
      throw InternalError("add_op: op " + std::to_string(op.id) + " names collective " + std::to_string(op.collective) +
                          ", which has not been added");
    collectives_[static_cast<std::size_t>(op.collective)].members.push_back(op.id);
  }
  ops_.push_back(std::move(op));
  return ops_.back().id;
}

void OpGraph::add_dep(OpId op, OpId must_finish_first) {
  if (op < 0 || static_cast<std::size_t>(op) >= ops_.size())
    throw InternalError("add_dep: no op " + std::to_string(op));
  ops_[static_cast<std::size_t>(op)].deps.push_back(must_finish_first);
}

std::string OpGraph::describe(OpId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= ops_.size()) return "op " + std::to_string(id) + " (no such op)";
  const Op& o = ops_[static_cast<std::size_t>(id)];
  std::ostringstream s;
  s << "op " << id;
  if (o.name > 0 && static_cast<std::size_t>(o.name) < names_.size())
    s << " '" << names_[static_cast<std::size_t>(o.name)] << "'";
  s << " (rank " << o.rank << ", " << to_string(o.stream) << " stream, " << to_string(o.kind);
  if (o.layer >= 0) s << ", layer " << o.layer;
  if (o.microbatch >= 0) s << ", mb " << o.microbatch;
  s << ")";
  return s.str();
}

namespace {

// Collects problems; stops recording (but keeps counting) after a dozen so a broken graph of a million ops
// gives a readable message.
class Problems {
 public:
  void add(std::string message) {
    ++count_;
    if (messages_.size() < kShown) messages_.push_back(std::move(message));
  }
  bool empty() const { return count_ == 0; }
  void throw_if_any() const {
    if (count_ == 0) return;
    std::string text = "invalid op graph (" + std::to_string(count_) + " problem" + (count_ == 1 ? "" : "s") + "):";
    for (const auto& m : messages_) text += "\n  - " + m;
    if (count_ > messages_.size()) text += "\n  ... and " + std::to_string(count_ - messages_.size()) + " more";
    throw InternalError(text);
  }

 private:
  static constexpr std::size_t kShown = 12;
  std::size_t count_ = 0;
  std::vector<std::string> messages_;
};

}  // namespace

void OpGraph::check_invariants(const NetworkModel& network) const {
  Problems problems;
  const auto n_ops = ops_.size();
  const auto n_ranks = ranks_.size();
  const auto n_links = network.link_capacity_Bps.size();

  for (std::size_t l = 0; l < n_links; ++l) {
    const double c = network.link_capacity_Bps[l];
    if (!std::isfinite(c) || c <= 0.0)
      problems.add("link " + std::to_string(l) + " has capacity " + std::to_string(c) + " B/s (must be > 0)");
  }
  if (!network.link_names.empty() && network.link_names.size() != n_links)
    problems.add("network has " + std::to_string(network.link_names.size()) + " link names for " +
                 std::to_string(n_links) + " links");
  for (std::size_t r = 0; r < n_ranks; ++r) {
    if (ranks_[r].sm_count <= 0)
      problems.add("rank " + std::to_string(r) + " has sm_count " + std::to_string(ranks_[r].sm_count) +
                   " (must be > 0)");
    if (ranks_[r].class_size < 1)
      problems.add("rank " + std::to_string(r) + " has class_size " + std::to_string(ranks_[r].class_size) +
                   " (must be >= 1)");
  }

  for (std::size_t i = 0; i < n_ops; ++i) {
    const Op& o = ops_[i];
    const auto id = static_cast<OpId>(i);
    if (o.rank < 0 || static_cast<std::size_t>(o.rank) >= n_ranks) {
      problems.add(describe(id) + ": rank out of range (" + std::to_string(n_ranks) + " ranks)");
      continue;
    }
    if (o.name < 0 || static_cast<std::size_t>(o.name) >= names_.size())
      problems.add(describe(id) + ": name label " + std::to_string(o.name) + " was not interned");
    if (o.category < 0 || static_cast<std::size_t>(o.category) >= categories_.size())
      problems.add(describe(id) + ": category label " + std::to_string(o.category) + " was not interned");
    for (OpId d : o.deps) {
      if (d < 0 || static_cast<std::size_t>(d) >= n_ops)
        problems.add(describe(id) + ": dangling dep on op " + std::to_string(d));
      else if (d == id)
        problems.add(describe(id) + ": depends on itself");
    }
    if (o.duration < 0) problems.add(describe(id) + ": negative duration");
    if (o.launch_cost < 0) problems.add(describe(id) + ": negative launch_cost");
    const bool on_host = o.stream == Stream::host;
    switch (o.kind) {
      case OpKind::compute:
      case OpKind::collective:
        if (on_host)
          problems.add(describe(id) + ": a " + std::string(to_string(o.kind)) + " op must be on a GPU stream");
        break;
      case OpKind::host_sync:
        if (!on_host) problems.add(describe(id) + ": a host_sync op must be on the host stream");
        break;
      case OpKind::delay: break;
    }
    if (on_host && (o.launch_cost != 0 || o.graph_captured))
      problems.add(describe(id) + ": host-stream ops have no launch cost and are not graph-captured");
    if (o.kind == OpKind::collective) {
      if (o.collective < 0 || static_cast<std::size_t>(o.collective) >= collectives_.size())
        problems.add(describe(id) + ": collective op without a valid collective id");
      if (o.duration != 0)
        problems.add(describe(id) + ": collective ops take their time from flows (duration must be 0)");
    } else if (o.collective != kNoCollective) {
      problems.add(describe(id) + ": only collective ops may name a collective");
    }
  }

  for (const Collective& c : collectives_) {
    const std::string who = "collective " + std::to_string(c.id);
    if (c.members.empty()) problems.add(who + " has no member ops");
    if (c.latency < 0) problems.add(who + " has negative latency");
    if (c.sm_count < 0) problems.add(who + " has negative sm_count");
    std::vector<RankId> member_ranks;
    for (OpId m : c.members) {
      const Op& o = ops_[static_cast<std::size_t>(m)];
      if (o.kind != OpKind::collective) problems.add(who + ": member " + describe(m) + " is not a collective op");
      if (o.rank < 0 || static_cast<std::size_t>(o.rank) >= n_ranks) continue;
      member_ranks.push_back(o.rank);
      if (c.sm_count >= ranks_[static_cast<std::size_t>(o.rank)].sm_count)
        problems.add(who + " holds " + std::to_string(c.sm_count) + " SMs but rank " + std::to_string(o.rank) +
                     " has only " + std::to_string(ranks_[static_cast<std::size_t>(o.rank)].sm_count));
    }
    for (OpId m : c.members)
      for (OpId d : ops_[static_cast<std::size_t>(m)].deps)
        if (d >= 0 && static_cast<std::size_t>(d) < n_ops && ops_[static_cast<std::size_t>(d)].collective == c.id &&
            ops_[static_cast<std::size_t>(d)].kind == OpKind::collective)
          problems.add(who + ": member " + describe(m) + " depends on member op " + std::to_string(d) +
                       " of the same collective (they start together)");
    std::sort(member_ranks.begin(), member_ranks.end());
    const auto dup = std::adjacent_find(member_ranks.begin(), member_ranks.end());
    if (dup != member_ranks.end())
      problems.add(who + " has two members on rank " + std::to_string(*dup) + " (one op per simulated rank)");
    for (std::size_t f = 0; f < c.flows.size(); ++f) {
      const Flow& flow = c.flows[f];
      const std::string fw = who + " flow " + std::to_string(f);
      if (!std::isfinite(flow.bytes) || flow.bytes < 0.0)
        problems.add(fw + " has " + std::to_string(flow.bytes) + " bytes");
      const auto& path = flow.path;
      bool repeated = false;
      for (std::size_t h = 0; h < path.size(); ++h) {
        if (path[h] < 0 || static_cast<std::size_t>(path[h]) >= n_links)
          problems.add(fw + " crosses link " + std::to_string(path[h]) + ", outside the network (" +
                       std::to_string(n_links) + " links)");
        // Paths are a handful of hops: a quadratic scan beats allocating a sorted copy per flow.
        for (std::size_t k = 0; k < h; ++k) repeated = repeated || path[k] == path[h];
      }
      if (repeated) problems.add(fw + " crosses a link twice");
    }
  }
  problems.throw_if_any();

  // Cycle check over the happens-before graph. Nodes: one per op, except that the members of a collective
  // are one node (they start together). Edges u -> v, "u must finish before v starts": deps; the previous op
  // on the same stream; the previous host op of the rank (a GPU op cannot be launched before the host op
  // ahead of it in issue order is done, and host ops run one at a time). If this graph is acyclic, the
  // simulation cannot deadlock.
  const std::size_t n_nodes = n_ops + collectives_.size();
  auto node_of = [&](OpId op) -> std::size_t {
    const Op& o = ops_[static_cast<std::size_t>(op)];
    return o.kind == OpKind::collective ? n_ops + static_cast<std::size_t>(o.collective) : static_cast<std::size_t>(op);
  };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  // (from, to) nodes
  edges.reserve(n_ops * 3);
  std::vector<OpId> last_on_stream(n_ranks * kStreamCount, -1);
  std::vector<OpId> last_host_op(n_ranks, -1);
  for (std::size_t i = 0; i < n_ops; ++i) {
    const Op& o = ops_[i];
    const auto id = static_cast<OpId>(i);
    const auto to = static_cast<std::uint32_t>(node_of(id));
    for (OpId d : o.deps) edges.emplace_back(static_cast<std::uint32_t>(node_of(d)), to);
    OpId& prev = last_on_stream[static_cast<std::size_t>(o.rank) * kStreamCount + static_cast<std::size_t>(o.stream)];
    if (prev >= 0) edges.emplace_back(static_cast<std::uint32_t>(node_of(prev)), to);
    prev = id;
    OpId& host_prev = last_host_op[static_cast<std::size_t>(o.rank)];
    if (host_prev >= 0 && o.stream != Stream::host) edges.emplace_back(static_cast<std::uint32_t>(host_prev), to);
    if (o.stream == Stream::host) host_prev = id;  // (previous host op -> this one is the stream edge above)
  }
  std::vector<std::uint32_t> offset(n_nodes + 1, 0);
  for (const auto& e : edges) ++offset[e.first + 1];
  for (std::size_t n = 0; n < n_nodes; ++n) offset[n + 1] += offset[n];
  std::vector<std::uint32_t> target(edges.size());
  {
    std::vector<std::uint32_t> fill(offset.begin(), offset.end() - 1);
    for (const auto& e : edges) target[fill[e.first]++] = e.second;
  }
  edges.clear();
  edges.shrink_to_fit();

  enum : std::uint8_t { white, gray, black };
  std::vector<std::uint8_t> color(n_nodes, white);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> stack;  // (node, next edge index)
  for (std::size_t root = 0; root < n_nodes; ++root) {
    if (color[root] != white) continue;
    stack.emplace_back(static_cast<std::uint32_t>(root), offset[root]);
    color[root] = gray;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next == offset[node + 1]) {
        color[node] = black;
        stack.pop_back();
        continue;
      }
      const std::uint32_t succ = target[next++];
      if (color[succ] == white) {
        color[succ] = gray;
        stack.emplace_back(succ, offset[succ]);
      } else if (color[succ] == gray) {
        // The cycle is the part of the DFS stack from `succ` to the top.
        std::size_t from = stack.size();
        while (from > 0 && stack[from - 1].first != succ) --from;
        std::string text = "op graph has a cycle (through deps, stream order, host order or rendezvous):";
        std::size_t shown = 0;
        for (std::size_t k = from - 1; k < stack.size(); ++k, ++shown) {
          if (shown == 12) {
            text += "\n    ... " + std::to_string(stack.size() - k) + " more";
            break;
          }
          const std::uint32_t n = stack[k].first;
          if (n < n_ops) {
            text += "\n    " + describe(static_cast<OpId>(n));
          } else {
            const Collective& c = collectives_[n - n_ops];
            text += "\n    collective " + std::to_string(c.id) + " (members:";
            for (OpId m : c.members) text += " " + std::to_string(m);
            text += ")";
          }
        }
        text += "\n    -> back to the first";
        throw InternalError(text);
      }
    }
  }
}

}  // namespace moesim::opgraph
