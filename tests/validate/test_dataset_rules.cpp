// data/rules/*.json: the repository's rules load, each with a source, and apply as validate relies on; a broken
// rule file is a ConfigError naming the file, the JSON pointer, what was expected and a did-you-mean.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "validate/dataset_rules.hpp"
#include "validate_cases.hpp"

using namespace moesim;

namespace {
const std::filesystem::path kRoot = MOESIM_SOURCE_DIR;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A data root whose data/rules/ holds the repository's files, with `file` replaced by `text`.
std::filesystem::path rules_root_with(const std::string& file, const std::string& text) {
  const auto root = std::filesystem::temp_directory_path() / ("moesim_rules_" + file);
  const auto dir = root / "data" / "rules";
  std::filesystem::create_directories(dir);
  for (const char* f : {"container_te.json", "row_settings.json", "flops_conventions.json", "cell_spellings.json"})
    std::ofstream(dir / f) << (f == file ? text : read_text(kRoot / "data" / "rules" / f));
  return root;
}

std::string load_error(const std::string& file, const std::string& text) {
  try {
    validate::load_dataset_rules(rules_root_with(file, text));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("the repository's rules load, every rule with its source") {
  const auto rules = validate::load_dataset_rules(kRoot);
  CHECK(rules.containers.size() == 6);
  CHECK(rules.row_settings.size() == 33);
  CHECK(rules.flops_conventions.size() == 3);
  for (const auto& c : rules.containers) CHECK_FALSE(c.source.empty());
  for (const auto& g : rules.guides) CHECK_FALSE(g.source.empty());
  for (const auto& n : rules.container_names) CHECK_FALSE(n.source.empty());
  for (const auto& r : rules.row_settings) CHECK_FALSE(r.source.empty());
  for (const auto& f : rules.flops_conventions) CHECK_FALSE(f.source.empty());
  for (const auto& a : rules.spellings.dispatcher) CHECK_FALSE(a.source.empty());
  // The dispatcher spellings of the published tables.
  for (const auto& [cell, reads_as] : {std::pair{"", "alltoall"},
                                       {"Recipe default", "alltoall"},
                                       {"n/a", "alltoall"},
                                       {"all-to-all (torch native)", "alltoall"},
                                       {"flex", "deepep"},
                                       {"flex (recipe default; DeepEP/HybridEP)", "deepep"},
                                       {"HybridEP (likely)", "hybridep (likely)"}}) {
    CAPTURE(cell);
    CHECK(rules.spellings.dispatcher_text(cell) == reads_as);
  }
}

TEST_CASE("rules apply where their condition holds, and never over a stated column") {
  const auto rules = validate::load_dataset_rules(kRoot);
  const auto m = test::h100x8().model;  // small-moe: GQA attention
  validate::Row row{{"framework", "Megatron-Bridge/MCore"},
                    {"hardware", "GB300 NVL72"},
                    {"source", "docs (26.06 NeMo container)"},
                    {"notes", ""}};
  layout::Layout l;
  l.precision = layout::Precision::mxfp8;
  rules.apply(row, m, l);
  CHECK(l.grad_reduce_dtype == layout::Dtype::bf16);
  CHECK(l.optimizer_moment_dtype == layout::Dtype::fp32);  // BF16 moments: MLA (DeepSeek) recipes only
  CHECK(l.fp8_attention);
  CHECK(l.te_version == layout::TeVersion{2, 16});
  CHECK(rules.flops_convention(row, m, l) == model::FlopsConvention::megatron);
  // Bridge's model providers overlap the shared expert; with the 1F1B EP overlap its recipes delay the wgrad
  // instead (Megatron's own defaults: both off).
  CHECK(l.moe_shared_expert_overlap);
  CHECK_FALSE(l.delay_wgrad.has_value());
  layout::Layout overlapped;
  overlapped.a2a_overlap = true;
  rules.apply(row, m, overlapped);
  CHECK(overlapped.delay_wgrad == true);
  CHECK_FALSE(overlapped.moe_shared_expert_overlap);
  layout::Layout megatron_lm;
  megatron_lm.a2a_overlap = true;
  rules.apply({{"framework", "Megatron-LM (23e00ed) + TE 2.11.0"}}, m, megatron_lm);
  CHECK_FALSE(megatron_lm.delay_wgrad.has_value());
  CHECK_FALSE(megatron_lm.moe_shared_expert_overlap);

  row["fp8_attention"] = "0";  // a column the row states wins over the rule
  row["te_version"] = "2.12";
  layout::Layout stated;
  stated.precision = layout::Precision::mxfp8;
  rules.apply(row, m, stated);
  CHECK_FALSE(stated.fp8_attention);
  CHECK(stated.te_version == layout::kLatestTeVersion);  // the column is read by the row reader, not here

  // NeMo AutoModel trains pure BF16 (no FP32 master copy, BF16 Adam moments); TorchTitan's FSDP2 keeps FP32 ones.
  layout::Layout automodel, titan;
  rules.apply({{"framework", "NeMo AutoModel (PyTorch FSDP2)"}}, m, automodel);
  rules.apply({{"framework", "TorchTitan (PyTorch FSDP2)"}}, m, titan);
  CHECK(automodel.fsdp);
  CHECK(automodel.main_params_dtype == layout::Dtype::bf16);
  CHECK(automodel.optimizer_moment_dtype == layout::Dtype::bf16);
  CHECK(automodel.grad_reduce_dtype == layout::Dtype::fp32);  // FSDP2's reduce_dtype float32
  CHECK(titan.fsdp);
  CHECK(titan.main_params_dtype == layout::Dtype::fp32);

  for (const auto& [framework, convention] : {std::pair{"JAX (MaxText)", model::FlopsConvention::maxtext},
                                              {"jax", model::FlopsConvention::maxtext},
                                              {"TorchTitan", model::FlopsConvention::torchtitan},
                                              {"NeMo AutoModel", model::FlopsConvention::megatron}}) {
    CAPTURE(framework);
    CHECK(rules.flops_convention({{"framework", framework}}, m, l) == convention);
  }
}

TEST_CASE("the Megatron-MoE-ModelZoo rows run the TE of the repository's image at their commit") {
  // Hand-read from the repository's Dockerfiles (data/rules/container_te.json): release_v2.2 at the H100 Qwen3 table
  // of 8017e11, 07afda98 (2.6.0.dev0) at the long-context table and the later H100 scripts. Both predate TE 2.10, so
  // a TE module call costs the older te_module_host figure (layout/te_version.hpp).
  const auto rules = validate::load_dataset_rules(kRoot);
  using layout::TeVersion;
  for (const auto& [source, te] :
       {std::pair{"yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md (commit e865051; table unchanged "
                  "since 8017e11), H100 table",
                  TeVersion{2, 2}},
        {"yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md (commit e865051) (long context)",
         TeVersion{2, 6}},
        {"yanring/Megatron-MoE-ModelZoo @e8650517d60d best_practice/mixtral/run_mixtral_8x22B.sh", TeVersion{2, 6}}}) {
    CAPTURE(source);
    const auto read = rules.te_version_from_source(source);
    REQUIRE(read.has_value());
    CHECK(*read == te);
    CHECK(*read < layout::kTeHostOverheadReduced);
  }
  // The GB200 table of the same readme (no "long context") names no H100 image: the default stays.
  CHECK_FALSE(
      rules.te_version_from_source("yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md (commit e865051)")
          .has_value());
}

TEST_CASE("a broken rule file names the file, the JSON pointer and what was expected") {
  const std::string settings = load_error("row_settings.json", R"({"rules": [
    {"name": "x", "source": "s", "when": {"framework_contain": ["a"]}, "set": {"fp8_atention": "1"}},
    {"name": "y", "source": "s", "when": {"precision": ["fp7"]}, "set": {"fp8_attention": "maybe", "mtp": 1}}]})");
  CHECK(settings.find("row_settings.json:/rules/0/when/framework_contain: unknown key") != std::string::npos);
  CHECK(settings.find("(did you mean \"framework_contains\"?)") != std::string::npos);
  CHECK(settings.find("row_settings.json:/rules/0/set/fp8_atention: \"fp8_atention\" is not a layout field key "
                      "(did you mean \"fp8_attention\"?)") != std::string::npos);
  CHECK(settings.find("row_settings.json:/rules/1/when/precision: ") != std::string::npos);
  CHECK(settings.find("row_settings.json:/rules/1/set/fp8_attention: expected 0 or 1 (or true / false), got "
                      "\"maybe\"") != std::string::npos);
  CHECK(settings.find("row_settings.json:/rules/1/set/mtp: expected the value as text") != std::string::npos);

  const std::string te = load_error("container_te.json", R"({"guides": [],
    "container_names": [{"pattern": "NeMo container", "source": "s"}, {"pattern": "(", "source": "s"}],
    "containers": [{"container": "26.02", "te": "2.12", "source": "s"}, {"container": "25.11", "te": "2.9", "source": "s"},
                   {"container": "26", "te": "2.x", "source": "s"}]})");
  CHECK(te.find("container_te.json:/container_names/0/pattern: expected a regular expression with exactly one (...) "
                "group") != std::string::npos);
  CHECK(te.find("container_te.json:/container_names/1/pattern: not a regular expression") != std::string::npos);
  CHECK(te.find("container_te.json:/containers/1/container: containers must be listed oldest first") !=
        std::string::npos);
  CHECK(te.find("container_te.json:/containers/2/container: expected a container release YY.MM or YY.MM.PP") !=
        std::string::npos);
  CHECK(te.find("container_te.json:/containers/2/te: ") != std::string::npos);

  const std::string flops = load_error("flops_conventions.json", R"({"default": "megatorn", "rules": []})");
  CHECK(flops.find("flops_conventions.json:/default: ") != std::string::npos);
  CHECK(flops.find("(did you mean \"megatron\"?)") != std::string::npos);

  const std::string spell = load_error("cell_spellings.json", R"({"unstated": {"source": "s"},
    "dispatcher": [{"reads_as": "alltoal", "source": "s"}]})");
  CHECK(spell.find("cell_spellings.json:/dispatcher/0: expected \"equals\" or \"starts_with\"") != std::string::npos);
  CHECK(spell.find("cell_spellings.json:/dispatcher/0/reads_as: ") != std::string::npos);

  const std::string missing = load_error("flops_conventions.json", "{");
  CHECK(missing.find("flops_conventions.json") != std::string::npos);
}
