#pragma once
// A system: the parts of one node type and how nodes are wired into scale-up domains and a scale-out fabric.
// Read from topologies/systems/<name>.json (through SystemCatalog), with the part names resolved.
#include <optional>
#include <string>
#include <vector>

#include "topology/calibration_figures.hpp"
#include "topology/parts.hpp"

namespace moesim::topology {

// GPUs of one scale-up (NVLink) domain talk through one logical non-blocking NVSwitch.
struct ScaleUpSpec {
  SwitchSpec switch_part;
  int domain_size = 0;                     // GPUs per NVLink domain: 8 for HGX, 72 for NVL72
  int gpus_used_per_domain = 0;            // GPUs a job places per domain (NVL72 jobs use 64 of 72: groundtruth.md §6)
  std::optional<int> switches_per_domain;  // informational (4 NVSwitch chips per HGX H100, 9 trays per NVL72)
};

enum class FabricTopology { rail_optimized_fat_tree };

// Rail-optimized fat tree (hardware.md §3 [S36, S49]): NIC k of every node connects to the leaf of rail
// k mod rails; each leaf serves `nodes_per_leaf` consecutive nodes of one rail; leaves reach each other
// through the spine layer.
struct ScaleOutSpec {
  NicSpec nic;
  int nics_per_gpu = 1;
  SwitchSpec switch_part;
  FabricTopology topology = FabricTopology::rail_optimized_fat_tree;
  int rails = 0;                  // default: NICs per node
  int nodes_per_leaf = 0;         // default: as many as the leaf's down ports allow (see README)
  double oversubscription = 1.0;  // leaf down:up bandwidth ratio; 1 = non-blocking
};

// The host CPU's family: the host-cost model scales eager-issue figures by it (workload StepParams x86_host_factor).
enum class CpuFamily { x86, grace };

struct HostSpec {
  std::string cpu;
  CpuFamily cpu_family = CpuFamily::x86;
  std::optional<int> cpu_cores;
  std::optional<double> cpu_memory_Bps;
  std::optional<int> gpus_per_cpu;
  std::string gpu_link;                              // "pcie-gen5-x16", "pcie-gen6", "nvlink-c2c"
  std::optional<double> gpu_link_Bps_per_direction;  // host <-> one GPU
};

struct SystemSpec {
  std::string name;  // catalog name (file stem) or the path it was loaded from
  std::string file;
  std::string description, source, notes;
  std::vector<std::string> aliases;
  GpuSpec gpu;
  int gpus_per_node = 0;  // GPUs per server node / compute tray
  ScaleUpSpec scale_up;
  ScaleOutSpec scale_out;
  HostSpec host;
  CalibrationFigures calibration;  // system-level measurements (NCCL bus bandwidths, launch overhead)
};

}  // namespace moesim::topology
