#pragma once
// What moesim knows about published rows beyond their columns, as data with a source per rule
// (data/rules/*.json, listed in data/README.md): the Transformer Engine release of each NeMo container
// (container_te.json), settings a framework's recipes use that a row does not state (row_settings.json: BF16
// gradient reduce and Adam moments of Megatron-Bridge MoE recipes, FP8 attention, FSDP2), and the FLOP definition
// of each framework (flops_conventions.json), and how tables spell unstated cells and dispatchers
// (cell_spellings.json). validate (case_from_row) applies them; a change to a rule is a
// change to its file, with its source.
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "layout/layout.hpp"
#include "layout/layout_fields.hpp"
#include "model/flops.hpp"
#include "model/model_spec.hpp"
#include "validate/cell_spellings.hpp"
#include "validate/row_layout.hpp"

namespace moesim::validate {

// A condition on a row, its resolved model and its layout as read. Every non-empty part must hold.
struct RowCondition {
  // Lower-case texts; a part holds when the column contains (starts with) any of them, ASCII case ignored.
  std::vector<std::string> framework_contains, framework_starts_with, hardware_contains, source_contains,
      notes_contains;
  std::vector<layout::Precision> precision;      // the layout's precision is one of these
  std::vector<layout::Precision> precision_not;  // ... none of these
  std::optional<model::AttentionKind> model_attention;
  std::optional<bool> a2a_overlap;  // the layout's 1F1B EP overlap, as the row's columns set it

  bool holds(const Row& row, const model::ModelSpec& m, const layout::Layout& l) const;
};

// Sets layout fields (text as in a table cell) of the rows `when` holds for, where the row's column is blank.
struct RowSettingRule {
  std::string name, source;
  RowCondition when;
  std::vector<std::pair<const layout::LayoutField*, std::string>> set;
};

struct FlopsConventionRule {
  RowCondition when;
  model::FlopsConvention convention = model::FlopsConvention::megatron;
  std::string source;
};

struct ContainerTe {
  std::string container;  // YY.MM or YY.MM.PP
  layout::TeVersion te;
  std::string source;
};

// A guide whose build names its TE, recognised by a text in the row's source.
struct GuideTe {
  std::string source_contains;
  layout::TeVersion te;
  std::string source;
};

// How a source text names its container: group 1 of the pattern (searched, ASCII case ignored).
struct ContainerNamePattern {
  std::string pattern;
  std::regex regex;
  std::string source;
};

struct DatasetRules {
  std::vector<GuideTe> guides;
  std::vector<ContainerNamePattern> container_names;
  std::vector<ContainerTe> containers;  // ascending
  std::vector<RowSettingRule> row_settings;
  model::FlopsConvention default_convention = model::FlopsConvention::megatron;
  std::vector<FlopsConventionRule> flops_conventions;
  CellSpellings spellings;

  // The TE of the guide named in `source`, else of the container it names (the newest listed container at or
  // before it; nullopt before the first listed one, or when the text names neither).
  std::optional<layout::TeVersion> te_version_from_source(std::string_view source) const;
  // The first flops_conventions rule that holds, else the default.
  model::FlopsConvention flops_convention(const Row& row, const model::ModelSpec& m, const layout::Layout& l) const;
  // Every row_settings rule that holds, in order, on the fields whose column the row leaves blank; then the
  // container's TE when the te_version column is blank.
  void apply(const Row& row, const model::ModelSpec& m, layout::Layout& l) const;
};

// Reads <data_root>/data/rules/{container_te,row_settings,flops_conventions,cell_spellings}.json. Every problem of the files
// (unknown keys with a did-you-mean, a field that is not a layout field, a value its field cannot take, a bad
// pattern, containers out of order) in one ConfigError naming the file and the JSON pointer.
DatasetRules load_dataset_rules(const std::filesystem::path& data_root);

}  // namespace moesim::validate
