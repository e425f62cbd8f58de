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

#include "layout/schedule_counts.hpp"

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
// `megatron_placement` false (the V and DualPipe placements of layout/schedule_counts.hpp, whose last stage sits on
// rank 0 or on chunk 0): the two MTP placement rules tied to Megatron's round-robin placement are not checked.
std::vector<std::string> check_pipeline_layout(const PipelineLayout& layout, int pp, int vpp, int num_layers, int mtp,
                                               bool megatron_placement = true);

// What one virtual stage (one chunk of one pp rank) holds.
struct ChunkAssignment {
  int virtual_stage = 0;        // the model stage: chunk * pp + pp_rank under Megatron's placement
  int copy = 0;                 // which model copy (DualPipe's second copy: 1)
  std::vector<int> layers;      // 0-based decoder layer indices, ascending
  std::vector<int> mtp_layers;  // 0-based MTP layer indices
  bool has_embedding = false;
  bool has_loss = false;
  bool operator==(const ChunkAssignment&) const = default;
};

struct StageAssignment {
  int pp = 1;
  int vpp = 1;  // chunks per rank: the layout's vpp, 2 for DualPipe (one per model copy)
  StagePlacement placement = StagePlacement::interleaved;  // where each stage sits (layout/schedule_counts.hpp)
  std::vector<std::vector<ChunkAssignment>> ranks;         // [pp_rank][chunk]

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

// The problems assign_stages would throw for, without throwing (used by check_feasibility()).
std::vector<std::string> stage_problems(const Layout& layout, const ModelFacts& facts);

// Whether Megatron's even split can place `num_layers` decoder layers for `layout` (no pp_layout given): the
// layers, plus one each for the embedding / loss when account_for_*_in_pipeline_split, divide over pp*vpp
// virtual stages. False when a pp_layout is given or pp or vpp is below 1.
bool even_split_fits(const Layout& layout, int num_layers);

// The estimated cost of the last virtual stage's extra items, in decoder-layer units: the loss stage's output
// layer and one MTP block (moe-modeling.md §5.1 gives ~1.4 and ~2.5 for DeepSeek-V3). The caller derives them
// from the model's FLOPs (predict/default_pipeline_layout.hpp); this module does not depend on model/.
struct StageCostWeights {
  double loss = 0;
  double mtp = 0;
};

// moesim's default pipeline layout where the decoder layers do not divide over pp*vpp virtual stages
// (DeepSeek-V3's 61, Qwen3's 94 layers), balancing estimated stage cost as Megatron-Bridge's uneven recipe
// layouts do: the last virtual stage holds the `mtp` MTP layers and the loss, and takes fewer decoder layers in
// proportion to their weights; the remaining layers spread evenly, the extra ones on the later stages (stage 0
// already holds the most in-flight activations). The embedding goes on stage 0. Returned as a Megatron string
// ("Ettt...|...|ttmL"), one symbol per item. Throws std::invalid_argument for pp or vpp below 1.
std::string balanced_pipeline_layout(int num_layers, int pp, int vpp, int mtp, const StageCostWeights& weights);

}  // namespace moesim::layout
