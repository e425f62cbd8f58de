#pragma once
// OpGraph: the contract between the workload builder (which decides WHAT runs) and the engine (which decides
// WHEN it runs). It is a plain description, checked by check_invariants(), of one training step:
//
//   ranks        simulated GPUs 0..R-1, each with its SM count and the number of real GPUs it stands for;
//   ops          work items on one stream of one rank, with dependencies on other ops (any rank);
//   collectives  communication that starts when every member op is ready (rendezvous) and then moves bytes
//                as flows over links;
//   NetworkModel link capacities; a flow's path is a list of link ids into it.
//
// Issue order. Op ids are issue order. On each rank the host (CPU launch thread) walks the rank's ops in id
// order; each stream of a rank runs its ops in id order, one at a time, like a CUDA stream. So a builder adds
// ops in the order the framework would launch them. Dependencies may point to any op (earlier or later, any
// rank); cycles, counting stream order, host order and rendezvous, are rejected by check_invariants().
//
// Host model. Every op on a GPU stream costs `launch_cost` on its rank's host thread before it can start,
// unless `graph_captured` is set. A CUDA graph is expressed as one `delay` op on the host stream (the graph
// launch, duration = graph launch cost) followed by the captured ops with `graph_captured = true`: they are
// issued the moment the host reaches them, i.e. right after the graph launch. Ops ON the host stream
// (host_sync, delay) occupy the host thread for `duration` once their deps are done: a host_sync whose dep is
// a GPU op makes the CPU wait for that GPU op (the dropless MoE token-count D2H sync) and stops it running
// ahead.
//
// Rank classes. Ranks whose work is identical (data-parallel replicas under balanced routing, say) are
// simulated once: the builder emits ops for one representative rank per class and records the class size in
// RankInfo::class_size (reports multiply by it). A collective lists only the simulated member ops (at most one
// per simulated rank); the members it has on implied copies are not ops. Rendezvous waits for the simulated
// members only, which is exact when the copies run in lock-step. The builder decides which flows of the
// implied copies to emit (e.g. those that share links with simulated flows, so that contention is right);
// the engine plays exactly the flows it is given.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/small_vector.hpp"
#include "core/units.hpp"

namespace moesim::opgraph {

using OpId = std::int32_t;          // index into OpGraph::ops(); also the issue order
using RankId = std::int32_t;        // simulated GPU, 0..R-1
using LinkId = std::int32_t;        // index into NetworkModel::link_capacity_Bps
using CollectiveId = std::int32_t;  // index into OpGraph::collectives()
using LabelId = std::int32_t;       // interned op name or category

inline constexpr CollectiveId kNoCollective = -1;

// Dependency and member lists (a few ids each, kept inline: core/small_vector.hpp) and link paths (a few hops).
using OpIds = SmallVector<OpId, 4>;
using LinkPath = SmallVector<LinkId, 6>;

// Streams of one rank. The five GPU streams run concurrently with each other; `host` is the rank's CPU launch
// thread, which launches the GPU ops and runs host ops.
enum class Stream : std::uint8_t { compute, ep_comm, tp_comm, dp_comm, pp_comm, host };
inline constexpr int kStreamCount = 6;
inline constexpr int kGpuStreamCount = 5;
std::string_view to_string(Stream stream);

// compute: a kernel of `duration` at full SMs, slowed while communication kernels hold SMs (if shares_sms).
// collective: one member of collective `collective`; runs from when it is ready on its stream until the
//             collective ends (it waits for the other members there, holding its SMs, like an NCCL kernel).
// host_sync: on the host stream: the CPU waits for the op's deps, then spends `duration`.
// delay: a fixed `duration` on any stream that nothing slows (a memcpy, a graph launch on the host, ...).
enum class OpKind : std::uint8_t { compute, collective, host_sync, delay };
std::string_view to_string(OpKind kind);

enum class Phase : std::uint8_t { fwd, bwd_dgrad, bwd_wgrad, recompute, optimizer, other };
std::string_view to_string(Phase phase);

struct Op {
  OpId id = -1;  // set by OpGraph::add_op
  RankId rank = 0;
  Stream stream = Stream::compute;
  OpKind kind = OpKind::compute;
  // Labels for the trace and the breakdown (interned: OpGraph::name_id / category_id).
  LabelId name = 0;
  LabelId category = 0;          // "compute", "tp", "cp", "ep", "dp", "pp", "optimizer", "host", ...
  std::int32_t layer = -1;       // -1: not tied to a layer
  std::int32_t microbatch = -1;  // -1: not tied to a micro-batch
  Phase phase = Phase::other;
  OpIds deps;  // ops that must finish before this one starts
  // compute: time at full SMs; delay, host_sync: fixed time; collective: unused (must be 0).
  Picoseconds duration = 0;
  bool shares_sms = true;                   // compute only: slowed to (SMs - comm SMs held)/SMs while comm kernels run
  CollectiveId collective = kNoCollective;  // collective ops only
  Picoseconds launch_cost = 0;              // GPU-stream ops: host time to launch this kernel; host ops: must be 0
  bool graph_captured = false;              // GPU-stream ops: launched by a CUDA graph, launch_cost is not charged
};

// One transfer of `bytes` along `path` (links in order; no link twice). An empty path is a local copy and
// is delivered at once.
struct Flow {
  LinkPath path;
  double bytes = 0.0;
};

struct Collective {
  CollectiveId id = -1;       // set by OpGraph::add_collective
  OpIds members;              // filled by add_op, in op id order: one op per participating simulated rank
  std::vector<Flow> flows;    // all start at rendezvous
  Picoseconds latency = 0;    // added after the last flow finishes
  std::int32_t sm_count = 0;  // SMs the comm kernel holds on each member GPU while it runs
};

struct RankInfo {
  std::int32_t sm_count = 0;    // SMs of this GPU (must be > 0)
  std::int64_t class_size = 1;  // real GPUs this simulated rank stands for (rank classes, see above)
  std::string name;             // for the trace, e.g. "pp0-ep3"
};

// Link capacities in bytes per second; LinkId indexes both vectors. Names are optional (for reports).
struct NetworkModel {
  std::vector<double> link_capacity_Bps;
  std::vector<std::string> link_names;
};

// Label text -> id, searchable by string_view without building a string.
struct LabelHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using LabelIndex = std::unordered_map<std::string, LabelId, LabelHash, std::equal_to<>>;

class OpGraph {
 public:
  // Label 0 is the empty text in both tables, so a default Op is unnamed and uncategorised.
  OpGraph();
  RankId add_rank(RankInfo info);
  // Interns a name or category label; equal text gives the same id.
  LabelId name_id(std::string_view text);
  LabelId category_id(std::string_view text);
  // Members are filled in by add_op; `c.members` must be empty.
  CollectiveId add_collective(Collective c);
  // Appends `op` (its id is overwritten with the next id, which is returned). A collective op is appended to
  // its collective's members; the collective must exist already.
  OpId add_op(Op op);
  void add_dep(OpId op, OpId must_finish_first);

  const std::vector<Op>& ops() const { return ops_; }
  const Op& op(OpId id) const { return ops_.at(static_cast<std::size_t>(id)); }
  const std::vector<Collective>& collectives() const { return collectives_; }
  const std::vector<RankInfo>& ranks() const { return ranks_; }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<std::string>& categories() const { return categories_; }
  std::size_t rank_count() const { return ranks_.size(); }

  // "op 12 'attn_fwd' (rank 3, compute, layer 2, mb 0)": how error messages and reports name an op.
  std::string describe(OpId id) const;

  // Checks every invariant the engine relies on and throws InternalError listing the problems found (up to
  // a dozen), e.g. dangling deps, a collective with two members on one rank, a link id outside `network`,
  // and cycles, where a cycle may run through deps, stream order, host order and rendezvous (it is reported
  // with the ops on it). O(ops + deps + flow hops).
  void check_invariants(const NetworkModel& network) const;

 private:
  std::vector<RankInfo> ranks_;
  std::vector<Op> ops_;
  std::vector<Collective> collectives_;
  std::vector<std::string> names_;
  std::vector<std::string> categories_;
  LabelIndex name_index_;
  LabelIndex category_index_;
};

}  // namespace moesim::opgraph
