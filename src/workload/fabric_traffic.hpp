#pragma once
// Where a traffic class's scale-out bytes go on the cluster graph, for the cluster-fabric binding: the transfers
// of every member of one pipeline stage (which peer each sends its crossing bytes to), and the loads they put on
// the leaf-spine cables.
//
// Rail alignment: a transfer leaves its node through the NIC on the destination's rail and arrives on the
// destination's own NIC (NCCL's PXN, on by default since NCCL 2.12, forwards over NVLink to that NIC; DeepEP and
// HybridEP send to the same-index GPU of the remote node and forward over NVLink). So it meets the spine only when
// the two nodes sit under different leaves of that rail (topology's leaf = node group x rail).
//
// Spine loads: a crossing transfer enters the spine on one uplink cable of its source leaf and leaves it on one
// downlink cable of its destination leaf (the spine it went to). `ecmp`: each of the transfer's flows_per_peer
// flows picks its cable by a seeded hash of (source GPU, destination GPU, flow index), so cables can collide;
// `adaptive`: every cable gets an equal share of every transfer (per-packet spraying). Loads are kept for the
// stage's most loaded leaf (its busiest cable), in units of one member's scale-out bytes: the simulated rank's
// collective carries that leaf's flows, and the exchange of the whole stage ends when that leaf's busiest cable
// does.
#include <cstdint>
#include <vector>

#include "topology/cluster.hpp"
#include "workload/network_binding.hpp"

namespace moesim::workload {

struct Transfer {
  int src_gpu = 0, dst_gpu = 0;
  double share = 0;  // of the sender's scale-out bytes
};

// The scale-out transfers of every rank of pipeline stage `stage` (ranks stage*S .. stage*S + S - 1, S = gpus/pp)
// under `traffic`: only to peers in another scale-up domain (the rest is NVLink traffic). Each sender's shares
// sum to 1 when it has such peers.
std::vector<Transfer> stage_transfers(const FabricSetup& setup, const topology::Cluster& cluster, int stage,
                                      const Traffic& traffic);

struct SpineLoads {
  std::vector<double> up;         // per uplink cable of the busiest source leaf (empty: nothing crosses the spine)
  std::vector<double> down;       // per downlink cable of the busiest destination leaf
  int down_stage = 0;             // the pipeline stage the destination GPUs belong to
  double crossing_share = 0;      // of the stage's scale-out bytes, the share that crosses the spine
  int flows_on_busiest_leaf = 0;  // ECMP flows hashed on the busiest source leaf's cables
  // Busiest over mean cable load of the busiest source leaf (1 = even spread).
  double up_imbalance() const;
};

// The loads of `transfers` (all from one stage) under `routing`.
SpineLoads spine_loads(const topology::Cluster& cluster, const std::vector<Transfer>& transfers, int gpus_per_stage,
                       SpineRouting routing, std::uint64_t seed, int flows_per_peer);

// The ECMP cable of flow `index` from src to dst among `cables` (a seeded SplitMix64 mix of the four numbers).
int ecmp_cable(std::uint64_t seed, int src_gpu, int dst_gpu, int index, int cables);

}  // namespace moesim::workload
