#pragma once
// The layout's input fields and their two spellings: the short snake_case key (tp, vpp, pp_layout) and
// Megatron-LM's argument name (tensor_model_parallel_size, ...). One table feeds the JSON loader and the
// command-line flags, so both accept the same names. On the command line a key becomes "--" + key with '_'
// turned into '-' (--pp-layout, --tensor-model-parallel-size).
#include <string>
#include <string_view>
#include <vector>

namespace moesim::layout {

struct Layout;

enum class FieldKind {
  positive_int,      // >= 1
  non_negative_int,  // >= 0
  boolean,
  precision,
  dispatcher,
  cuda_graph,
  grouped_gemm,
  schedule,
  dtype,
  recompute,           // the recompute text of layout.hpp parse_recompute
  pp_layout,           // a pipeline layout string
  te_version,          // a Transformer Engine release, MAJOR.MINOR
  positive_number,     // > 0, not necessarily an integer
  cp_comm_type,        // p2p | a2a | all_gather | a2a+p2p
  cross_entropy_impl,  // te | native
};

struct LayoutField {
  std::string_view key;       // snake_case key
  std::string_view megatron;  // Megatron-LM's name; empty when Megatron has none or uses `key` itself
  FieldKind kind;
  FieldKind megatron_kind;  // the value type under the Megatron name (grad_reduce_in_bf16 is a boolean)
  std::string_view help;
};

// Every field in a fixed order (sizes first). Recompute's Megatron spelling is four keys, listed separately
// in megatron_recompute_keys().
const std::vector<LayoutField>& layout_fields();

// Megatron's recompute arguments: recompute_granularity, recompute_modules, recompute_method,
// recompute_num_layers. Together they are the other spelling of the "recompute" field.
const std::vector<std::string_view>& megatron_recompute_keys();

// The field whose key or Megatron name is `name`, or nullptr.
const LayoutField* find_layout_field(std::string_view name);

// Every field's short key, in table order (for did-you-mean lists).
std::vector<std::string> layout_field_keys();

// Sets `field` of `layout` from its text form, as a measurements table or a rule file writes it: integers in
// decimal (std::stoi's syntax, the whole text), booleans 0 / 1 / true / false, enums and te_version by the
// layout parsers (cuda_graph sets the mode and its scopes), a positive number for positive_number, pp_layout as
// given. Only the syntax is checked (an integer's range, and whether a pp_layout parses and fits, are
// validation's). Throws std::invalid_argument saying what was expected (the enum parsers' own messages).
void set_layout_field(Layout& layout, const LayoutField& field, std::string_view text);

// Keys a layout or case file may also hold: "source" and "notes" (free text, ignored), and in a case file
// "model" and "system" (catalog names, resolved by the caller).
inline constexpr std::string_view kCaseModelKey = "model";
inline constexpr std::string_view kCaseSystemKey = "system";

}  // namespace moesim::layout
