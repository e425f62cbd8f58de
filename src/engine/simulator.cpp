#include "engine/simulator.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "engine/breakdown.hpp"
#include "engine/event_queue.hpp"
#include "engine/flow_solver.hpp"

namespace moesim::engine {

using opgraph::CollectiveId;
using opgraph::kGpuStreamCount;
using opgraph::Op;
using opgraph::OpId;
using opgraph::OpKind;
using opgraph::RankId;
using opgraph::Stream;

namespace {

Picoseconds ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// One run: all mutable state of a simulation, so Simulator itself stays const and re-entrant.
class Run {
 public:
  Run(const opgraph::OpGraph& graph, const opgraph::NetworkModel& network)
      : g_(graph), ops_(graph.ops()), solver_(network.link_capacity_Bps) {}

  SimResult play();

 private:
  enum class EventType : std::uint8_t { op_end, launch_done, collective_end };
  struct Event {
    EventType type;
    std::uint32_t index;    // op, rank or collective
    std::uint32_t version;  // op_end of a compute op: must match op_version_ (else it was re-timed)
  };
  struct StreamState {
    std::uint32_t head;  // index into stream_ops_ of the next op to run
    std::uint32_t end;
    OpId running = -1;
  };
  struct HostState {
    std::uint32_t head;  // index into host_ops_ of the next op to launch or run
    std::uint32_t end;
    bool busy = false;
  };
  struct RunningCompute {
    OpId op;
    std::int64_t work_left;  // SM*ps of work left at `last`
    Picoseconds last;
    std::int32_t avail;  // SMs it runs on since `last`
  };
  struct CollectiveState {
    std::uint32_t ready = 0;
    std::uint32_t flows_left = 0;
  };

  const Op& op(OpId id) const { return ops_[static_cast<std::size_t>(id)]; }
  OpTiming& timing(OpId id) { return result_.ops[static_cast<std::size_t>(id)]; }
  std::size_t stream_key(RankId r, Stream s) const {
    return static_cast<std::size_t>(r) * kGpuStreamCount + static_cast<std::size_t>(s);
  }

  void build_indexes();
  void pump_host(RankId r);
  void issue(OpId id);
  void try_start(RankId r, Stream s);
  void start_collective(CollectiveId c);
  void finish_op(OpId id);
  void retime(RankId r);
  std::int32_t available_sms(RankId r) const;
  void handle(const Event& e);
  void flows_completed();
  [[noreturn]] void report_deadlock(std::size_t finished);

  const opgraph::OpGraph& g_;
  const std::vector<Op>& ops_;
  FlowSolver solver_;
  EventQueue<Event> events_;
  Picoseconds now_ = 0;
  SimResult result_;

  std::vector<std::int32_t> deps_left_;
  std::vector<std::uint32_t> op_version_;
  std::vector<std::uint8_t> issued_;
  std::vector<std::uint32_t> succ_offset_;
  std::vector<OpId> succ_;
  std::vector<OpId> stream_ops_;  // ops grouped by (rank, GPU stream), id order inside
  std::vector<StreamState> streams_;
  std::vector<OpId> host_ops_;  // ops grouped by rank, id order inside
  std::vector<HostState> hosts_;
  std::vector<std::int32_t> sm_held_;
  std::vector<std::vector<RunningCompute>> running_compute_;
  std::vector<CollectiveState> coll_;
  std::vector<CollectiveId> flow_owner_;  // by FlowId (slots are reused)
  std::vector<FlowSolver::Completed> completed_;
  std::size_t finished_ = 0;
};

void Run::build_indexes() {
  const std::size_t n = ops_.size();
  const std::size_t n_ranks = g_.rank_count();
  deps_left_.resize(n);
  op_version_.assign(n, 0);
  issued_.assign(n, 0);
  succ_offset_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    deps_left_[i] = static_cast<std::int32_t>(ops_[i].deps.size());
    for (OpId d : ops_[i].deps) ++succ_offset_[static_cast<std::size_t>(d) + 1];
  }
  for (std::size_t i = 0; i < n; ++i) succ_offset_[i + 1] += succ_offset_[i];
  succ_.resize(succ_offset_[n]);
  {
    std::vector<std::uint32_t> fill(succ_offset_.begin(), succ_offset_.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      for (OpId d : ops_[i].deps) succ_[fill[static_cast<std::size_t>(d)]++] = static_cast<OpId>(i);
  }

  // Counting sorts: per (rank, GPU stream) queues and per-rank host walk, both in id order.
  std::vector<std::uint32_t> s_off(n_ranks * kGpuStreamCount + 1, 0), h_off(n_ranks + 1, 0);
  for (const Op& o : ops_) {
    ++h_off[static_cast<std::size_t>(o.rank) + 1];
    if (o.stream != Stream::host) ++s_off[stream_key(o.rank, o.stream) + 1];
  }
  for (std::size_t k = 0; k + 1 < s_off.size(); ++k) s_off[k + 1] += s_off[k];
  for (std::size_t k = 0; k + 1 < h_off.size(); ++k) h_off[k + 1] += h_off[k];
  stream_ops_.resize(s_off.back());
  host_ops_.resize(n);
  streams_.resize(n_ranks * kGpuStreamCount);
  for (std::size_t k = 0; k < streams_.size(); ++k) streams_[k] = StreamState{s_off[k], s_off[k], -1};
  hosts_.resize(n_ranks);
  for (std::size_t r = 0; r < n_ranks; ++r) hosts_[r] = HostState{h_off[r], h_off[r], false};
  for (const Op& o : ops_) {
    host_ops_[hosts_[static_cast<std::size_t>(o.rank)].end++] = o.id;
    if (o.stream != Stream::host) stream_ops_[streams_[stream_key(o.rank, o.stream)].end++] = o.id;
  }

  sm_held_.assign(n_ranks, 0);
  running_compute_.assign(n_ranks, {});
  coll_.assign(g_.collectives().size(), CollectiveState{});
  result_.ops.assign(n, OpTiming{});
  result_.collectives.assign(g_.collectives().size(), CollectiveTiming{});
}

std::int32_t Run::available_sms(RankId r) const {
  const std::int32_t total = g_.ranks()[static_cast<std::size_t>(r)].sm_count;
  return std::max<std::int32_t>(1, total - sm_held_[static_cast<std::size_t>(r)]);
}

void Run::pump_host(RankId r) {
  HostState& h = hosts_[static_cast<std::size_t>(r)];
  while (!h.busy && h.head < h.end) {
    const OpId id = host_ops_[h.head];
    const Op& o = op(id);
    if (o.stream == Stream::host) {
      if (deps_left_[static_cast<std::size_t>(id)] > 0) return;  // finish_op of the last dep pumps again
      h.busy = true;
      OpTiming& t = timing(id);
      t.launch_start = t.issued = t.start = now_;
      events_.push(now_ + o.duration, Event{EventType::op_end, static_cast<std::uint32_t>(id), 0});
      return;
    }
    const Picoseconds cost = o.graph_captured ? 0 : o.launch_cost;
    timing(id).launch_start = now_;
    if (cost == 0) {
      ++h.head;
      issue(id);
      continue;
    }
    h.busy = true;
    events_.push(now_ + cost, Event{EventType::launch_done, static_cast<std::uint32_t>(r), 0});
  }
}

void Run::issue(OpId id) {
  issued_[static_cast<std::size_t>(id)] = 1;
  timing(id).issued = now_;
  try_start(op(id).rank, op(id).stream);
}

void Run::try_start(RankId r, Stream s) {
  StreamState& st = streams_[stream_key(r, s)];
  if (st.running >= 0 || st.head == st.end) return;
  const OpId id = stream_ops_[st.head];
  const auto i = static_cast<std::size_t>(id);
  if (!issued_[i] || deps_left_[i] > 0) return;
  const Op& o = ops_[i];
  st.running = id;
  timing(id).start = now_;
  switch (o.kind) {
    case OpKind::compute: {
      if (!o.shares_sms) {
        events_.push(now_ + o.duration, Event{EventType::op_end, static_cast<std::uint32_t>(id), op_version_[i]});
        break;
      }
      const std::int64_t sms = g_.ranks()[static_cast<std::size_t>(r)].sm_count;
      RunningCompute rc{id, o.duration * sms, now_, available_sms(r)};
      events_.push(now_ + ceil_div(rc.work_left, rc.avail),
                   Event{EventType::op_end, static_cast<std::uint32_t>(id), op_version_[i]});
      running_compute_[static_cast<std::size_t>(r)].push_back(rc);
      break;
    }
    case OpKind::delay:
    case OpKind::host_sync:  // (host_sync never sits on a GPU stream; check_invariants() ensures it)
      events_.push(now_ + o.duration, Event{EventType::op_end, static_cast<std::uint32_t>(id), op_version_[i]});
      break;
    case OpKind::collective: {
      const auto& c = g_.collectives()[static_cast<std::size_t>(o.collective)];
      if (c.sm_count > 0) {
        sm_held_[static_cast<std::size_t>(r)] += c.sm_count;
        retime(r);
      }
      CollectiveState& cs = coll_[static_cast<std::size_t>(o.collective)];
      if (++cs.ready == c.members.size()) start_collective(o.collective);
      break;
    }
  }
}

void Run::start_collective(CollectiveId cid) {
  const auto& c = g_.collectives()[static_cast<std::size_t>(cid)];
  CollectiveTiming& ct = result_.collectives[static_cast<std::size_t>(cid)];
  ct.rendezvous = now_;
  CollectiveState& cs = coll_[static_cast<std::size_t>(cid)];
  cs.flows_left = static_cast<std::uint32_t>(c.flows.size());
  for (const auto& f : c.flows) {
    const FlowId fid = solver_.start(f.path, f.bytes, now_);
    if (static_cast<std::size_t>(fid) >= flow_owner_.size()) flow_owner_.resize(static_cast<std::size_t>(fid) + 1);
    flow_owner_[static_cast<std::size_t>(fid)] = cid;
    ct.bytes_injected += f.bytes;
  }
  if (c.flows.empty())
    events_.push(now_ + c.latency, Event{EventType::collective_end, static_cast<std::uint32_t>(cid), 0});
}

// Re-times the running compute ops of rank r after the SMs held by communication changed at now_.
void Run::retime(RankId r) {
  const std::int32_t avail = available_sms(r);
  for (RunningCompute& rc : running_compute_[static_cast<std::size_t>(r)]) {
    if (rc.avail == avail) continue;
    rc.work_left -= (now_ - rc.last) * rc.avail;
    rc.last = now_;
    rc.avail = avail;
    const auto i = static_cast<std::size_t>(rc.op);
    ++op_version_[i];
    events_.push(now_ + ceil_div(rc.work_left, avail),
                 Event{EventType::op_end, static_cast<std::uint32_t>(rc.op), op_version_[i]});
  }
}

void Run::finish_op(OpId id) {
  const Op& o = op(id);
  timing(id).end = now_;
  result_.makespan = std::max(result_.makespan, now_);
  ++finished_;
  if (o.stream == Stream::host) {
    HostState& h = hosts_[static_cast<std::size_t>(o.rank)];
    h.busy = false;
    ++h.head;
  } else {
    StreamState& st = streams_[stream_key(o.rank, o.stream)];
    st.running = -1;
    ++st.head;
  }
  for (std::uint32_t k = succ_offset_[static_cast<std::size_t>(id)]; k < succ_offset_[static_cast<std::size_t>(id) + 1];
       ++k) {
    const OpId s = succ_[k];
    if (--deps_left_[static_cast<std::size_t>(s)] > 0) continue;
    const Op& so = op(s);
    if (so.stream == Stream::host)
      pump_host(so.rank);
    else
      try_start(so.rank, so.stream);
  }
  if (o.stream == Stream::host)
    pump_host(o.rank);
  else
    try_start(o.rank, o.stream);
}

void Run::handle(const Event& e) {
  switch (e.type) {
    case EventType::op_end: {
      const auto id = static_cast<OpId>(e.index);
      const Op& o = op(id);
      if (o.kind == OpKind::compute && o.shares_sms) {
        if (e.version != op_version_[e.index]) return;  // re-timed since this was scheduled
        auto& running = running_compute_[static_cast<std::size_t>(o.rank)];
        running.erase(
            std::find_if(running.begin(), running.end(), [&](const RunningCompute& rc) { return rc.op == id; }));
      }
      finish_op(id);
      return;
    }
    case EventType::launch_done: {
      HostState& h = hosts_[e.index];
      const OpId id = host_ops_[h.head];
      ++h.head;
      h.busy = false;
      issue(id);
      pump_host(static_cast<RankId>(e.index));
      return;
    }
    case EventType::collective_end: {
      const auto& c = g_.collectives()[e.index];
      result_.collectives[e.index].end = now_;
      if (c.sm_count > 0) {
        for (OpId m : c.members) sm_held_[static_cast<std::size_t>(op(m).rank)] -= c.sm_count;
        for (OpId m : c.members) retime(op(m).rank);
      }
      for (OpId m : c.members) finish_op(m);
      return;
    }
  }
}

void Run::flows_completed() {
  completed_.clear();
  solver_.pop_completed(now_, completed_);
  for (const auto& done : completed_) {
    const CollectiveId cid = flow_owner_[static_cast<std::size_t>(done.id)];
    result_.collectives[static_cast<std::size_t>(cid)].bytes_delivered += done.delivered_bytes;
    if (--coll_[static_cast<std::size_t>(cid)].flows_left == 0) {
      const auto& c = g_.collectives()[static_cast<std::size_t>(cid)];
      events_.push(now_ + c.latency, Event{EventType::collective_end, static_cast<std::uint32_t>(cid), 0});
    }
  }
}

SimResult Run::play() {
  build_indexes();
  for (RankId r = 0; r < static_cast<RankId>(g_.rank_count()); ++r) pump_host(r);
  std::uint64_t popped = 0;
  while (true) {
    solver_.resolve(now_);
    const Picoseconds next_event = events_.empty() ? kNever : events_.top().time;
    const Picoseconds next = std::min(next_event, solver_.next_completion());
    if (next == kNever) break;
    now_ = next;
    // Everything that happens at this instant, then one rate solve for all flows it started or ended.
    bool progressed = true;
    while (progressed) {
      progressed = false;
      if (solver_.next_completion() <= now_) {
        flows_completed();
        progressed = true;
      }
      while (!events_.empty() && events_.top().time == now_) {
        handle(events_.pop().payload);
        ++popped;
        progressed = true;
      }
    }
  }
  if (finished_ != ops_.size()) report_deadlock(finished_);

  result_.link_bytes = solver_.link_bytes();
  const auto& fs = solver_.stats();
  result_.stats = SimStats{popped, fs.flows_started, fs.resolves, fs.flows_rerated, fs.max_active_flows};
  return std::move(result_);
}

void Run::report_deadlock(std::size_t finished) {
  std::string text = "engine deadlock: " + std::to_string(ops_.size() - finished) + " of " +
                     std::to_string(ops_.size()) + " ops never finished; blocked stream heads:";
  int shown = 0;
  for (const StreamState& st : streams_) {
    if (st.running >= 0 || st.head == st.end || shown == 12) continue;
    const OpId id = stream_ops_[st.head];
    const auto i = static_cast<std::size_t>(id);
    text += "\n  " + g_.describe(id) + ": ";
    if (!issued_[i]) text += "not launched by its host; ";
    if (deps_left_[i] > 0) text += std::to_string(deps_left_[i]) + " deps unfinished; ";
    ++shown;
  }
  for (const StreamState& st : streams_) {
    if (st.running < 0 || shown == 12) continue;
    const Op& o = op(st.running);
    if (o.kind != OpKind::collective) continue;
    const auto& c = g_.collectives()[static_cast<std::size_t>(o.collective)];
    text += "\n  " + g_.describe(st.running) + ": waiting at rendezvous of collective " + std::to_string(c.id) + " (" +
            std::to_string(coll_[static_cast<std::size_t>(c.id)].ready) + " of " + std::to_string(c.members.size()) +
            " members ready)";
    ++shown;
  }
  throw InternalError(text);
}

}  // namespace

SimResult Simulator::run(const opgraph::OpGraph& graph, const opgraph::NetworkModel& network) const {
  if (options_.check_invariants) graph.check_invariants(network);
  Run run(graph, network);
  SimResult result = run.play();
  if (options_.rank_times) compute_breakdown(graph, result);
  return result;
}

}  // namespace moesim::engine
