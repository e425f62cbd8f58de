#include "layout/layout_loader.hpp"

#include <climits>
#include <optional>
#include <stdexcept>

#include "layout/layout_fields.hpp"
#include "layout/pipeline_layout.hpp"

namespace moesim::layout {
namespace {

using config::Bound;
using config::ObjectReader;

// Reads one field under whichever of its spellings is present.
class FieldReader {
 public:
  explicit FieldReader(ObjectReader& r) : r_(r) {}

  // The key present for `name` ("" when neither spelling is); both present is reported.
  std::string spelling(std::string_view name) {
    const LayoutField& f = *find_layout_field(name);
    const bool a = r_.has(f.key);
    const bool b = !f.megatron.empty() && r_.has(f.megatron);
    if (a && b)
      r_.error(f.megatron, "\"" + std::string(f.key) + "\" and its Megatron-LM name \"" + std::string(f.megatron) +
                               "\" are both given; keep one");
    if (a) return std::string(f.key);
    if (b) return std::string(f.megatron);
    return {};
  }

  std::optional<int> integer(std::string_view name, Bound bound = Bound::positive) {
    const std::string key = spelling(name);
    if (key.empty()) return std::nullopt;
    return to_int(key, r_.integer(key, bound));
  }

  int required_integer(std::string_view name) {
    if (auto v = integer(name)) return *v;
    const LayoutField& f = *find_layout_field(name);
    std::string message = "missing required key \"" + std::string(f.key) + "\"";
    if (!f.megatron.empty()) message += " (Megatron-LM: \"" + std::string(f.megatron) + "\")";
    r_.error("", message);
    return 1;
  }

  std::optional<bool> boolean(std::string_view name) {
    const std::string key = spelling(name);
    if (key.empty()) return std::nullopt;
    return r_.boolean_or(key, false);
  }

  // A string field converted by `parse` (which throws std::invalid_argument on a bad value).
  template <class T, class Parse>
  std::optional<T> parsed(const std::string& key, Parse parse) {
    if (key.empty()) return std::nullopt;
    const config::Json* v = r_.raw(key);
    if (!v->is_string()) {
      r_.error(key, "expected a string, got " + v->dump());
      return std::nullopt;
    }
    try {
      return parse(v->get<std::string>());
    } catch (const std::invalid_argument& e) {
      r_.error(key, e.what());
      return std::nullopt;
    }
  }

  ObjectReader& reader() { return r_; }

  int to_int(const std::string& key, std::int64_t v) {
    if (v > INT_MAX) {
      r_.error(key, "value " + std::to_string(v) + " is too large");
      return 1;
    }
    return static_cast<int>(v);
  }

 private:
  ObjectReader& r_;
};

// The largest world size a layout may name (2^20). StepContext places each parallel dimension's groups on the
// scale-up domains by visiting every rank (layout::placement), so `run --gpus 1000000000` took minutes; ten times
// the largest published training runs is far enough, and a million GPUs still run in about a second.
constexpr int kMaxGpus = 1 << 20;

// recompute: our text form, or Megatron's four keys; not both.
std::optional<Recompute> read_recompute(FieldReader& fr) {
  ObjectReader& r = fr.reader();
  bool any_megatron = false;
  for (auto k : megatron_recompute_keys()) any_megatron = r.has(k) || any_megatron;
  if (r.has("recompute")) {
    if (any_megatron)
      r.error("recompute",
              "give recompute either as \"recompute\" or as Megatron-LM's recompute_granularity / "
              "recompute_modules / recompute_method / recompute_num_layers, not both");
    return fr.parsed<Recompute>("recompute", [](std::string_view t) { return parse_recompute(t); });
  }
  if (!any_megatron) return std::nullopt;

  Recompute rc;
  const config::Json* g = r.raw("recompute_granularity");
  if (g && !g->is_null()) {
    if (!g->is_string()) {
      r.error("recompute_granularity", "expected \"selective\", \"full\" or null, got " + g->dump());
    } else {
      try {
        rc.granularity = parse_recompute_granularity(g->get<std::string>());
      } catch (const std::invalid_argument& e) {
        r.error("recompute_granularity", e.what());
      }
    }
  }
  const bool selective = rc.granularity == RecomputeGranularity::selective;
  const bool full = rc.granularity == RecomputeGranularity::full;
  const config::Json* modules = r.raw("recompute_modules");
  if (modules && !modules->is_null()) {
    if (!selective) r.error("recompute_modules", "recompute_modules needs recompute_granularity \"selective\"");
    for (const auto& name : r.strings_or("recompute_modules", {})) {
      try {
        rc.modules |= static_cast<std::uint32_t>(parse_recompute_module(name));
      } catch (const std::invalid_argument& e) {
        r.error("recompute_modules", e.what());
      }
    }
  } else if (selective) {
    rc.modules = static_cast<std::uint32_t>(RecomputeModule::core_attn);  // Megatron's default
  }
  const config::Json* method = r.raw("recompute_method");
  if (method && !method->is_null()) {
    if (!full) r.error("recompute_method", "recompute_method needs recompute_granularity \"full\"");
    if (!method->is_string()) {
      r.error("recompute_method", "expected \"uniform\" or \"block\", got " + method->dump());
    } else {
      try {
        rc.method = parse_recompute_method(method->get<std::string>());
      } catch (const std::invalid_argument& e) {
        r.error("recompute_method", e.what());
      }
    }
  }
  const config::Json* layers = r.raw("recompute_num_layers");
  if (layers && !layers->is_null()) {
    if (!full) r.error("recompute_num_layers", "recompute_num_layers needs recompute_granularity \"full\"");
    rc.num_layers = fr.to_int("recompute_num_layers", r.integer("recompute_num_layers", Bound::positive));
  }
  return rc;
}

}  // namespace

Layout read_layout_fields(ObjectReader& r) {
  FieldReader fr(r);
  Layout l;
  r.string_or("source", "");
  r.string_or("notes", "");

  l.gpus = fr.required_integer("gpus");
  if (l.gpus > kMaxGpus)
    r.error("gpus", "at most " + std::to_string(kMaxGpus) + " GPUs, got " + std::to_string(l.gpus) +
                        ": placing every parallel group on the scale-up domains visits each rank (about a second "
                        "per million GPUs), and the largest published training runs use about 100,000");
  l.tp = fr.integer("tp").value_or(1);
  l.pp = fr.integer("pp").value_or(1);
  l.cp = fr.integer("cp").value_or(1);
  l.ep = fr.integer("ep").value_or(1);
  l.etp = fr.integer("etp").value_or(l.tp);  // Megatron: expert_tensor_parallel_size defaults to tp
  l.mbs = fr.integer("mbs").value_or(1);
  l.gbs = fr.required_integer("gbs");
  l.seq = fr.required_integer("seq");
  l.mtp = fr.integer("mtp", Bound::non_negative).value_or(0);

  if (auto p = fr.parsed<Precision>(fr.spelling("precision"), parse_precision)) l.precision = *p;
  if (auto d = fr.parsed<Dispatcher>(fr.spelling("dispatcher"), parse_dispatcher)) l.dispatcher = *d;
  if (auto g = fr.parsed<CudaGraphSetting>(fr.spelling("cuda_graph"), parse_cuda_graph_setting)) {
    l.cuda_graph = g->mode;
    l.cuda_graph_scopes = g->scopes;
  }
  if (auto g = fr.parsed<GroupedGemm>(fr.spelling("grouped_gemm"), parse_grouped_gemm)) l.grouped_gemm = *g;
  if (auto g = fr.parsed<Schedule>(fr.spelling("schedule"), parse_schedule)) l.schedule = *g;
  if (auto t = fr.parsed<CpCommType>(fr.spelling("cp_comm_type"), parse_cp_comm_type)) l.cp_comm_type = *t;
  if (auto rc = read_recompute(fr)) l.recompute = *rc;

  l.a2a_overlap = fr.boolean("a2a_overlap").value_or(false);
  l.tp_comm_overlap = fr.boolean("tp_comm_overlap").value_or(false);
  l.delay_wgrad = fr.boolean("delay_wgrad");
  l.moe_shared_expert_overlap = fr.boolean("moe_shared_expert_overlap").value_or(false);
  l.sequence_parallel = fr.boolean("sequence_parallel");
  l.account_for_embedding_in_pipeline_split = fr.boolean("account_for_embedding_in_pipeline_split").value_or(false);
  l.account_for_loss_in_pipeline_split = fr.boolean("account_for_loss_in_pipeline_split").value_or(false);
  l.distributed_optimizer = fr.boolean("distributed_optimizer").value_or(true);
  l.fsdp = fr.boolean("fsdp").value_or(false);
  l.fsdp_reshard_after_forward = fr.boolean("fsdp_reshard_after_forward").value_or(true);
  l.fp8_param_gather = fr.boolean("fp8_param_gather").value_or(false);
  l.align_param_gather = fr.boolean("align_param_gather");
  l.overlap_grad_reduce = fr.boolean("overlap_grad_reduce").value_or(true);
  l.ddp_bucket_size = fr.integer("ddp_bucket_size", Bound::non_negative).value_or(0);
  l.average_in_collective = fr.boolean("average_in_collective").value_or(false);
  l.param_gather_in_step = fr.boolean("param_gather_in_step").value_or(true);
  l.optimizer_in_graph = fr.boolean("optimizer_in_graph").value_or(true);
  l.overlap_param_gather = fr.boolean("overlap_param_gather").value_or(true);
  l.nccl_nvls = fr.boolean("nccl_nvls").value_or(true);
  l.fp8_attention = fr.boolean("fp8_attention").value_or(false);
  if (const std::string key = fr.spelling("te_version"); !key.empty() && r.raw(key)->is_number())
    // A JSON number cannot hold "2.10" (it reads 2.1): say so instead of a bare "expected a string".
    r.error(key, "expected a string such as \"2.12\", got the number " + r.raw(key)->dump() +
                     "; quote the version (a JSON number cannot tell 2.1 from 2.10)");
  else if (auto v = fr.parsed<TeVersion>(key, parse_te_version))
    l.te_version = *v;
  if (const std::string key = fr.spelling("expert_capacity_factor"); !key.empty())
    l.expert_capacity_factor = r.number(key, Bound::positive);
  l.pad_expert_input_to_capacity = fr.boolean("pad_expert_input_to_capacity").value_or(false);
  l.cross_entropy_fusion = fr.boolean("cross_entropy_fusion").value_or(false);
  if (auto i = fr.parsed<CrossEntropyImpl>(fr.spelling("cross_entropy_fusion_impl"), parse_cross_entropy_impl))
    l.cross_entropy_fusion_impl = *i;
  l.megatron_loss = fr.boolean("megatron_loss").value_or(true);
  l.check_for_nan_in_grad = fr.boolean("check_for_nan_in_grad").value_or(false);
  l.check_for_nan_in_loss = fr.boolean("check_for_nan_in_loss").value_or(false);
  l.batch_p2p_sync = fr.boolean("batch_p2p_sync").value_or(false);
  l.cpu_binding = fr.boolean("cpu_binding").value_or(true);
  l.enable_experimental = fr.boolean("enable_experimental").value_or(true);
  if (auto d = fr.parsed<Dtype>(fr.spelling("optimizer_moment_dtype"), parse_dtype)) l.optimizer_moment_dtype = *d;
  if (auto d = fr.parsed<Dtype>(fr.spelling("main_params_dtype"), parse_dtype)) l.main_params_dtype = *d;
  {
    const std::string key = fr.spelling("grad_reduce_dtype");
    if (key == "grad_reduce_in_bf16")
      l.grad_reduce_dtype = r.boolean_or(key, false) ? Dtype::bf16 : Dtype::fp32;
    else if (auto d = fr.parsed<Dtype>(key, parse_dtype))
      l.grad_reduce_dtype = *d;
  }

  // pp_layout: syntax here; its fit to the model is check_feasibility()'s. It also supplies the default vpp.
  std::optional<PipelineLayout> parsed_layout;
  if (const std::string key = fr.spelling("pp_layout"); !key.empty()) {
    l.pp_layout = r.string(key);
    try {
      parsed_layout = parse_pipeline_layout(l.pp_layout);
    } catch (const std::invalid_argument& e) {
      r.error(key, "bad pipeline layout \"" + l.pp_layout + "\": " + e.what());
    }
  }
  const std::string vpp_key = fr.spelling("vpp");
  const config::Json* vpp_raw = vpp_key.empty() ? nullptr : r.raw(vpp_key);
  if (vpp_raw && !vpp_raw->is_null()) {
    l.vpp = fr.to_int(vpp_key, r.integer(vpp_key, Bound::positive));
  } else if (parsed_layout && l.pp >= 1 && parsed_layout->stages.size() % static_cast<std::size_t>(l.pp) == 0) {
    l.vpp = static_cast<int>(parsed_layout->stages.size()) / l.pp;  // Megatron: VPP = stages / PP
  }

  // Megatron's num_layers_per_virtual_pipeline_stage is a different quantity; say so instead of "unknown key".
  if (r.has("num_layers_per_virtual_pipeline_stage"))
    r.error("num_layers_per_virtual_pipeline_stage",
            "num_layers_per_virtual_pipeline_stage is layers per virtual stage, not the number of virtual stages; "
            "give vpp (virtual_pipeline_model_parallel_size) or a pp_layout instead");
  return l;
}

Layout read_layout(const config::Json& json, const std::string& file, Diagnostics& diags) {
  ObjectReader r(json, file, "", diags);
  Layout l = read_layout_fields(r);
  r.finish();
  return l;
}

CaseSpec read_case(const config::Json& json, const std::string& file, Diagnostics& diags) {
  ObjectReader r(json, file, "", diags);
  CaseSpec c;
  c.model = r.string_or(std::string(kCaseModelKey), "");
  c.system = r.string_or(std::string(kCaseSystemKey), "");
  c.layout = read_layout_fields(r);
  r.finish();
  return c;
}

}  // namespace moesim::layout
