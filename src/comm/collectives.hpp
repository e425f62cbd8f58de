#pragma once
// Closed-form costs of NCCL-style collectives over one process group.
//
// Model (NCCL's own tuner shape, moe-modeling.md §4.6 and hardware.md §5.3 [S21]):
//   time = latency + wire bytes on the bottleneck link class / (nominal bandwidth x achieved efficiency(size))
// Ring all-gather / reduce-scatter of S (the full, gathered size; nccl-tests convention), n ranks on N domains:
//   latency = base + (n - N) a_up + (N - 1) a_out;   bandwidth term = (n-1)/n S / B_ring
// Ring all-reduce of S: twice both terms (2(n-1) steps, 2(n-1)/n S). Across N domains the crossing share N/n of
//   the ring bytes goes over each rank's NIC (NCCL's channels cross through different GPUs) and the rest over
//   NVLink, concurrently: bandwidth term = max(bytes (1 - N/n) / (B_up e_up), bytes N/n / (B_out e_out)).
// Tree all-reduce: chain inside each domain, binary tree across domains, pipelined; S goes up and S comes down:
//   latency = base + 2 ((g-1) a_up + ceil(log2 N) a_out); bandwidth term = max(2S / B_up e, 2S / (g B_out e))
//   (NCCL's tuner: tree all-reduce algbw = busbw x 0.5 [S21]).
// NVLS (NVLink SHARP, one NVSwitch domain only): latency = nvls_latency;
//   all-reduce S / (B_up e_nvls(S)); all-gather (n-1)/n S / (B_up e_nvls(S)).
// All-to-all (NCCL direct, S = bytes each rank sends including its own share, spread evenly):
//   latency = base + a of the farthest class; bandwidth term = max(intra / B_up e, inter / B_out e), the two
//   classes running concurrently.
// Send/recv: a of the class + S / (B e_ring(S)).
//
// Seam for the engine: each CollectiveSpec will also be expanded into link flows on the cluster graph
// (comm/flows.hpp, written once src/topology exists: expand(spec, rank map, cluster) -> flows). That expansion must
// move exactly wire_bytes(spec) per rank on each link class, which the tests of both paths will check.
#include <string>

#include "comm/fabric.hpp"

namespace moesim::comm {

enum class Collective { all_gather, reduce_scatter, all_reduce, all_to_all, send_recv };
enum class Algorithm { ring, tree, nvls, direct };

struct CollectiveSpec {
  Collective op = Collective::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  GroupShape group;
  double bytes = 0;  // AG/RS: full gathered size; AR: buffer per rank; A2A: send buffer per rank; P2P: message
};

// Bytes one rank sends on each link class.
struct WireBytes {
  double scale_up = 0;
  double scale_out = 0;
};

struct CollectiveCost {
  double seconds = 0;  // latency_s + bandwidth_s
  double latency_s = 0;
  double bandwidth_s = 0;  // max(scale_up_s, scale_out_s)
  // Time each link class needs alone (bytes on it / achieved rate); the classes run concurrently. The engine's
  // flows are sized from these.
  double scale_up_s = 0, scale_out_s = 0;
  WireBytes sent;  // per rank
};

// Throws InfeasibleError for pairs that do not exist (NVLS across domains, tree all-gather, direct all-reduce).
CollectiveCost collective_cost(const CollectiveSpec& spec, const Fabric& fabric);
WireBytes wire_bytes(const CollectiveSpec& spec);

// nccl-tests busbw / algbw factor: AR 2(n-1)/n; AG, RS, A2A (n-1)/n; send/recv 1 (doc/PERFORMANCE.md).
double busbw_factor(Collective op, int ranks);

std::string to_string(Collective c);
std::string to_string(Algorithm a);

// SMs communication kernels occupy while they run (compute overlapping them loses these SMs).
struct CommSms {
  int sms = 0;
  std::string source;
};
// An NCCL collective's: one per channel.
CommSms nccl_kernel_sms();

}  // namespace moesim::comm
