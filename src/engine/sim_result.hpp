#pragma once
// SimResult: everything one engine run produces. Indexed like the OpGraph it came from (ops by OpId,
// collectives by CollectiveId, ranks by RankId, categories by the graph's category LabelId), so a report or
// trace writer pairs it with the graph for names and labels. All times are integer picoseconds from 0.
#include <cstdint>
#include <vector>

#include "core/units.hpp"

namespace moesim::engine {

struct OpTiming {
  // GPU-stream ops: when the host began and finished launching it (equal when launch was free or
  // graph-captured). Host ops: both equal `start`.
  Picoseconds launch_start = -1;
  Picoseconds issued = -1;
  // When it ran. A collective member starts when it is ready on its stream (its kernel is up and holds its
  // SMs, waiting for the other members) and ends with the collective; see CollectiveTiming::rendezvous.
  Picoseconds start = -1;
  Picoseconds end = -1;
  bool operator==(const OpTiming&) const = default;
};

struct CollectiveTiming {
  Picoseconds rendezvous = -1;   // every member ready: flows start
  Picoseconds end = -1;          // last flow done + latency
  double bytes_injected = 0.0;   // sum of the flows' sizes
  double bytes_delivered = 0.0;  // sum of the flows' delivered bytes, integrated from their rates
  bool operator==(const CollectiveTiming&) const = default;
};

// Time of one category on one rank. busy: length of the union of the intervals its ops ran (host ops
// included). exposed: the part of `busy` during which no compute-kind op ran anywhere on the rank; for
// communication categories this is the communication that is not hidden behind compute. Several categories
// can be exposed at the same instant, so exposed times do not add up to the rank's exposed_comm.
struct CategoryTime {
  Picoseconds busy = 0;
  Picoseconds exposed = 0;
  bool operator==(const CategoryTime&) const = default;
};

struct RankTimes {
  std::vector<CategoryTime> by_category;  // indexed by the graph's category id
  Picoseconds gpu_busy = 0;               // union of all GPU-stream ops
  Picoseconds gpu_idle = 0;               // makespan - gpu_busy (pipeline bubbles, host stalls, waits)
  Picoseconds compute_busy = 0;           // union of compute-kind ops
  Picoseconds comm_busy = 0;              // union of collective ops (includes waiting for peers at rendezvous)
  Picoseconds exposed_comm = 0;           // comm_busy minus the time a compute-kind op ran
  Picoseconds host_busy = 0;              // union of launches and host ops on the rank's CPU thread
  bool operator==(const RankTimes&) const = default;
};

struct SimStats {
  std::uint64_t events = 0;  // events popped (including stale ones)
  std::uint64_t flows_started = 0;
  std::uint64_t flow_resolves = 0;
  std::uint64_t flows_rerated = 0;  // flows visited by rate solves, summed
  std::uint64_t max_active_flows = 0;
  bool operator==(const SimStats&) const = default;
};

struct SimResult {
  Picoseconds makespan = 0;  // latest end of any op
  std::vector<OpTiming> ops;
  std::vector<CollectiveTiming> collectives;
  std::vector<RankTimes> ranks;    // empty when SimOptions::rank_times is off
  std::vector<double> link_bytes;  // bytes each link carried (delivered bytes of the flows crossing it)
  SimStats stats;
  bool operator==(const SimResult&) const = default;
};

}  // namespace moesim::engine
