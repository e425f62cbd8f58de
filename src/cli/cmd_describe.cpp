// moesim describe --model M: a model's architecture, parameter counts and FLOPs per token. --params: the general
// parameters instead (describe_params.hpp).
#include <memory>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/describe_params.hpp"
#include "config/data_dir.hpp"
#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "model/flops.hpp"
#include "model/model_catalog.hpp"
#include "model/model_loader.hpp"
#include "model/parameters.hpp"

namespace moesim::cli {
namespace {
struct DescribeArgs {
  std::string model;
  std::int64_t seq = 4096;
  std::string convention = "megatron";
  std::int64_t tp = 1;
  std::int64_t mtp = -1;  // -1 = the model's own
  bool json = false;
  bool params = false;
  std::string system;  // with --params: also list this system's calibration figures
};

std::string billions(std::int64_t n) { return fixed_decimals(static_cast<double>(n) / 1e9, 2) + " B"; }
std::string gflop(double f) { return fixed_decimals(f / 1e9, 2) + " GFLOP"; }

std::string attention_text(const model::ModelSpec& m) {
  const auto& a = m.attention;
  std::string t;
  if (a.kind == model::AttentionKind::mla) {
    t = "MLA, " + std::to_string(a.num_attention_heads) + " heads, q_lora " + std::to_string(a.q_lora_rank) +
        ", kv_lora " + std::to_string(a.kv_lora_rank) + ", qk " + std::to_string(a.qk_nope_head_dim) + "+" +
        std::to_string(a.qk_rope_head_dim) + " rope, v " + std::to_string(a.v_head_dim);
  } else {
    t = (a.num_query_groups == a.num_attention_heads ? "MHA, " : "GQA, ") + std::to_string(a.num_attention_heads) +
        "/" + std::to_string(a.num_query_groups) + " heads x " + std::to_string(a.head_dim);
  }
  if (a.qk_norm) t += ", QK-norm";
  if (a.attention_sinks) t += ", sinks";
  if (a.sliding_window > 0)
    t += ", window " + std::to_string(a.sliding_window) + " on " + std::to_string(m.num_sliding_window_layers()) +
         " of " + std::to_string(m.num_layers) + " layers";
  return t;
}

void run_describe(const DescribeArgs& args, Context& ctx) {
  if (args.params) {
    if (!args.model.empty()) throw UsageError("describe: give --model or --params, not both");
    print_params(ctx, args.json, args.system);
    return;
  }
  if (args.model.empty()) throw UsageError("describe: --model is required (or --params)");
  if (!args.system.empty()) throw UsageError("describe: --system goes with --params");
  const auto convention = model::parse_flops_convention(args.convention);
  if (!convention)
    throw UsageError("--flops-convention: unknown convention \"" + args.convention + "\"; expected one of " +
                     join_names(model::flops_convention_names()) +
                     did_you_mean(args.convention, model::flops_convention_names()));
  const model::ModelCatalog catalog(config::data_dir(ctx.data_dir));
  model::ModelSpec spec = model::load_model_file(catalog.resolve(args.model));
  if (args.mtp >= 0) spec.mtp_num_layers = args.mtp;

  const model::ParameterCounts p = model::count_parameters(spec);
  model::FlopsOptions fo;
  fo.seq_length = args.seq;
  fo.convention = *convention;
  fo.tp = args.tp;
  const model::FlopsBreakdown f = model::training_flops_per_token(spec, fo);

  if (args.json) {
    nlohmann::ordered_json j;
    j["model"] = spec.name;
    j["source"] = spec.source;
    j["num_layers"] = spec.num_layers;
    j["moe_layers"] = spec.num_moe_layers();
    j["dense_layers"] = spec.num_dense_layers();
    j["mtp_num_layers"] = spec.mtp_num_layers;
    j["params_total"] = p.total;
    j["params_main"] = p.main_total;
    j["params_mtp"] = p.mtp_total;
    j["params_active"] = p.active;
    j["params_active_non_embedding"] = p.active_non_embedding;
    j["params_embedding"] = p.embedding;
    j["params_lm_head"] = p.lm_head;
    j["seq_length"] = args.seq;
    j["flops_convention"] = model::to_string(*convention);
    j["tp"] = args.tp;
    j["flops_per_token"] = f.total();
    j["flops_breakdown"] = {{"mlp", f.mlp},    {"attention", f.attention}, {"attention_core", f.attention_core},
                            {"mtp", f.mtp},    {"logits", f.logits},       {"router", f.router},
                            {"other", f.other}};
    ctx.out << j.dump(2) << "\n";
    return;
  }
  auto row = [&ctx](const std::string& k, const std::string& v) {
    ctx.out << "  " << k << std::string(k.size() < 16 ? 16 - k.size() : 1, ' ') << v << "\n";
  };
  ctx.out << spec.name << "\n";
  row("source", spec.source);
  row("layers", std::to_string(spec.num_layers) + " (" + std::to_string(spec.num_dense_layers()) + " dense, " +
                    std::to_string(spec.num_moe_layers()) + " MoE) + " + std::to_string(spec.mtp_num_layers) + " MTP");
  row("hidden / vocab", std::to_string(spec.hidden_size) + " / " + std::to_string(spec.vocab_size) +
                            (spec.tie_embeddings ? " (tied)" : " (untied)"));
  row("attention", attention_text(spec));
  if (spec.num_dense_layers() > 0)
    row("dense FFN", std::to_string(spec.ffn.ffn_hidden_size) + " " + model::to_string(spec.ffn.activation));
  if (spec.is_moe()) {
    const auto& e = spec.moe;
    std::string t = std::to_string(e.num_experts) + " x " + std::to_string(e.expert_ffn_hidden_size) + ", top-" +
                    std::to_string(e.top_k) + ", " + model::to_string(e.router_score);
    if (e.n_group > 1) t += ", " + std::to_string(e.n_group) + " groups / top-" + std::to_string(e.topk_group);
    if (e.num_shared_experts > 0)
      t += "; shared " + std::to_string(e.num_shared_experts) + " x " + std::to_string(e.shared_expert_ffn_hidden_size);
    row("experts", t);
  }
  row("params total", billions(p.total) + " (main " + billions(p.main_total) + ", MTP " + billions(p.mtp_total) + ")");
  row("params active",
      billions(p.active) + " per token (" + billions(p.active_non_embedding) + " without the input embedding)");
  row("FLOPs/token", gflop(f.total()) + " (" + model::to_string(*convention) + ", seq " + std::to_string(args.seq) +
                         ", tp " + std::to_string(args.tp) + ")");
  row("  mlp", gflop(f.mlp));
  row("  attention", gflop(f.attention) + " (core " + gflop(f.attention_core) + ")");
  if (f.mtp > 0) row("  mtp", gflop(f.mtp));
  row("  logits", gflop(f.logits));
  if (f.router > 0) row("  router", gflop(f.router));
  if (f.other > 0) row("  other", gflop(f.other));
}
}  // namespace

void add_describe_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand(
      "describe",
      "Show a model's architecture, parameter counts and FLOPs per token, or (--params) every general "
      "parameter with its value, unit, source and whether it was fitted");
  auto args = std::make_shared<DescribeArgs>();
  sub->add_option("--model,-m", args->model, "Catalog name or alias, catalog file, or Hugging Face config.json");
  sub->add_flag("--params", args->params,
                "List the step parameters and kernel efficiency constants (data files) instead of a model");
  sub->add_option("--system", args->system, "With --params: also that system's and its GPU's calibration figures");
  sub->add_option("--seq", args->seq, "Sequence length (default 4096)")->check(CLI::PositiveNumber);
  sub->add_option("--flops-convention", args->convention, "megatron | torchtitan | maxtext (default megatron)");
  sub->add_option("--tp", args->tp, "Tensor-parallel size, for Megatron's vocabulary padding (default 1)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--mtp", args->mtp, "MTP blocks to count (default: the model's own)")->check(CLI::NonNegativeNumber);
  sub->add_flag("--json", args->json, "Print JSON (FLOP, not GFLOP)");
  sub->callback([&ctx, args] { run_describe(*args, ctx); });
}

}  // namespace moesim::cli
