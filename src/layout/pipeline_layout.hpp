#pragma once
// Megatron's --pipeline-model-parallel-layout strings and the assignment of layers to pipeline stages.
//
// Grammar (moe-modeling.md §5.1, from Megatron's pipeline_parallel_layer_layout.py):
//   symbols   E embedding, t decoder (transformer) layer, m MTP layer, L loss (output layer + cross entropy)
//   '|'       ends a virtual stage; empty stages are allowed ("E||t|L")
//   x*N       repeats one symbol (including '|'); (...)*N repeats a group, which may contain '|' and groups
//   ',' and whitespace are cosmetic and ignored
// Virtual stage i lives on pp rank i % pp as its chunk i / pp (Megatron's round-robin interleaving), and
// decoder layers are numbered in virtual-stage order.
#include <string>
#include <string_view>
#include <vector>

namespace moesim::layout {

struct Layout;
struct ModelFacts;

enum class StageItem : char { embedding = 'E', layer = 't', mtp = 'm', loss = 'L' };

struct PipelineLayout {
  std::vector<std::vector<StageItem>> stages;  // one entry per virtual stage, items in order

  int count(StageItem item) const;
  // Compact Megatron text: runs of 3+ equal symbols as x*N, runs of equal stages as (...|)*N.
  // parse_pipeline_layout(to_string()) gives back the same stages.
  std::string to_string() const;
  bool operator==(const PipelineLayout&) const = default;
};

// Parses a layout string. A syntax error throws std::invalid_argument whose message starts with
// "column N: " (1-based, counted in the text as given).
PipelineLayout parse_pipeline_layout(std::string_view text);

// Megatron's rules for a parsed layout against the job and the model; one message per broken rule:
// stage count == pp*vpp; exactly one E, first; exactly one L, last; count of t == num_layers; count of m ==
// mtp; no t after an m; all m in one virtual stage, the last chunk of its rank, not on pp rank 0 when pp > 1.
std::vector<std::string> check_pipeline_layout(const PipelineLayout& layout, int pp, int vpp, int num_layers,
                                               int mtp);

// What one virtual stage (one chunk of one pp rank) holds.
struct ChunkAssignment {
  int virtual_stage = 0;        // chunk * pp + pp_rank
  std::vector<int> layers;      // 0-based decoder layer indices, ascending
  std::vector<int> mtp_layers;  // 0-based MTP layer indices
  bool has_embedding = false;
  bool has_loss = false;
  bool operator==(const ChunkAssignment&) const = default;
};

struct StageAssignment {
  int pp = 1;
  int vpp = 1;
  std::vector<std::vector<ChunkAssignment>> ranks;  // [pp_rank][chunk]

  const ChunkAssignment& chunk(int pp_rank, int chunk_index) const { return ranks.at(pp_rank).at(chunk_index); }
  int layers_on_rank(int pp_rank) const;
  // The same assignment as a pipeline layout (virtual stages in order), e.g. to print a default split as a
  // Megatron string.
  PipelineLayout as_pipeline_layout() const;
};

// The layer placement of `layout` for a model: from layout.pp_layout when given, else Megatron's even split
// (num_layers, plus one each for the embedding / loss when account_for_*_in_pipeline_split, divided evenly
// over pp*vpp virtual stages; embedding on the first, loss and MTP on the last virtual stage).
// Throws InfeasibleError listing every problem (bad string, wrong counts, not divisible).
StageAssignment assign_stages(const Layout& layout, const ModelFacts& facts);

// The problems assign_stages would throw for, without throwing (used by validate()).
std::vector<std::string> stage_problems(const Layout& layout, const ModelFacts& facts);

}  // namespace moesim::layout
