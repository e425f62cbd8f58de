#include "predict/validation.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/text.hpp"
#include "predict/container_versions.hpp"
#include "predict/recipe_settings.hpp"

namespace moesim::predict {
namespace {

// Integer column; nullopt when blank or not a number.
std::optional<int> int_col(const std::map<std::string, std::string>& row, const char* col) {
  auto it = row.find(col);
  if (it == row.end() || it->second.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const int v = std::stoi(it->second, &used);
    if (used != it->second.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string col(const std::map<std::string, std::string>& row, const char* c) {
  auto it = row.find(c);
  return it == row.end() ? std::string() : it->second;
}

model::FlopsConvention convention_of(const std::string& framework) {
  const std::string f = to_lower(framework);
  if (f.find("maxtext") != std::string::npos || f.rfind("jax", 0) == 0) return model::FlopsConvention::maxtext;
  if (f.find("torchtitan") != std::string::npos) return model::FlopsConvention::torchtitan;
  return model::FlopsConvention::megatron;
}

// Builds the layout of a row, or returns the reason it cannot.
std::optional<std::string> read_layout(const std::map<std::string, std::string>& row, layout::Layout& l) {
  // ep may be blank: a dense model has no EP (case_from_row checks the model).
  const char* required[] = {"gpus", "tp", "pp", "mbs", "gbs", "seq"};
  for (const char* c : required)
    if (!int_col(row, c)) return std::string("column ") + c + " is blank or not an integer";
  l.gpus = *int_col(row, "gpus");
  l.tp = *int_col(row, "tp");
  l.pp = *int_col(row, "pp");
  l.ep = int_col(row, "ep").value_or(1);
  l.mbs = *int_col(row, "mbs");
  l.gbs = *int_col(row, "gbs");
  l.seq = *int_col(row, "seq");
  l.vpp = int_col(row, "vpp").value_or(1);
  l.cp = int_col(row, "cp").value_or(1);
  l.etp = int_col(row, "etp").value_or(1);
  l.mtp = int_col(row, "mtp").value_or(0);
  // Switch columns: blank = the default; anything but 0 or 1 ("yes", "false") skips the row instead of being read
  // as the default. Past this check each holds "", "0" or "1".
  for (const std::string& c : switch_columns())
    if (const std::string v = col(row, c.c_str()); !v.empty() && v != "0" && v != "1")
      return "column " + c + " is not 0 or 1: \"" + v + "\"";
  l.a2a_overlap = col(row, "a2a_overlap") == "1";
  // Optional column (not in groundtruth.csv's schema): Megatron --tp-comm-overlap; absent or blank = off.
  l.tp_comm_overlap = col(row, "tp_comm_overlap") == "1";
  // Token dropping: not groundtruth.csv columns; recipe settings (recipe_settings.hpp) may add them.
  if (const std::string cf = col(row, "expert_capacity_factor"); !cf.empty()) {
    const auto v = parse_finite_number(cf);
    if (!v || *v <= 0) return "column expert_capacity_factor is not a positive number: \"" + cf + "\"";
    l.expert_capacity_factor = *v;
  }
  l.pad_expert_input_to_capacity = col(row, "pad_expert_input_to_capacity") == "1";
  // Optional column (not in groundtruth.csv's schema; recipe settings may add it): 0 = ranks not NUMA-bound.
  l.cpu_binding = col(row, "cpu_binding") != "0";
  // Optional column: fully sharded data parallel. Blank = on when the framework names PyTorch FSDP2 (NeMo
  // AutoModel, TorchTitan). Another framework's "FSDP" (Meta's internal 4D stack for Llama 3) does not say how it
  // shards and reshards, so it keeps the distributed optimizer's traffic.
  if (const std::string f = col(row, "fsdp"); !f.empty()) l.fsdp = f == "1";
  else l.fsdp = to_lower(col(row, "framework")).find("fsdp2") != std::string::npos;
  // Optional column (recipe settings fill it from the stack's code): blank = FSDP2's default, on.
  l.fsdp_reshard_after_forward = col(row, "fsdp_reshard_after_forward") != "0";
  try {
    const std::string prec = col(row, "precision");
    l.precision = prec.empty() ? layout::Precision::bf16 : layout::parse_precision(prec);
    std::string disp = to_lower(col(row, "dispatcher"));
    if (disp.empty() || disp == "recipe default" || disp == "n/a") disp = "alltoall";
    if (disp.rfind("all-to-all", 0) == 0) disp = "alltoall";
    // Megatron's flex dispatcher without a named backend runs its default backend, DeepEP
    // (TransformerConfig.moe_flex_dispatcher_backend = "deepep").
    if (disp.rfind("flex", 0) == 0) disp = "deepep";
    l.dispatcher = layout::parse_dispatcher(disp);
    const std::string rec = col(row, "recompute");
    l.recompute = rec.empty() ? layout::Recompute{} : layout::parse_recompute(rec);
    const std::string graph = col(row, "cuda_graph");
    const auto g = graph.empty() ? layout::CudaGraphSetting{} : layout::parse_cuda_graph_setting(graph);
    l.cuda_graph = g.mode;
    l.cuda_graph_scopes = g.scopes;
    // Optional column (not in groundtruth.csv's schema; recipe settings may add it): the TE release, MAJOR.MINOR.
    // Blank = the release of the container the source names (case_from_row), else the newest known.
    if (const std::string te = col(row, "te_version"); !te.empty()) l.te_version = layout::parse_te_version(te);
    // Optional column, likewise: how the routed experts' GEMMs run (auto | per-expert | fused | fused-mlp).
    if (const std::string gg = col(row, "grouped_gemm"); !gg.empty()) l.grouped_gemm = layout::parse_grouped_gemm(gg);
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  l.pp_layout = col(row, "pp_layout");
  return std::nullopt;
}

// Rows that publish a PP/VPP split without its pipeline_model_parallel_layout, where the layers do not divide
// evenly (DeepSeek-V3's 61, Qwen3's 94 layers): Megatron-Bridge's recipes then use an uneven layout. moesim's
// documented default balances estimated stage cost: the loss stage's output layer and each MTP block count as
// their FLOPs in decoder-layer units (moe-modeling.md §5.1 gives ~1.4 and ~2.5 for DeepSeek-V3), the last
// virtual stage takes fewer layers accordingly, and the remaining layers spread evenly (extra layers on the
// later stages, since stage 0 already holds the most in-flight activations).
std::string balanced_pipeline_layout(const model::ModelSpec& m, const layout::Layout& l) {
  const int stages = l.pp * l.vpp;
  const int layers = static_cast<int>(m.num_layers);
  model::FlopsOptions fo;
  fo.seq_length = l.seq;
  fo.mtp_num_layers = 0;
  const auto f = model::training_flops_per_token(m, fo);
  const double per_layer = (f.mlp + f.attention) / std::max(1, layers);
  const double w_loss = f.logits / per_layer;
  const double w_mtp = 1.0 + (f.logits + 6.0 * (3.0 * m.hidden_size + 2.0 * m.hidden_size * m.hidden_size)) / per_layer;
  const double target = (layers + w_loss + w_mtp * l.mtp) / stages;
  int last = stages > 1 ? std::max(0, static_cast<int>(std::lround(target - w_loss - w_mtp * l.mtp))) : layers;
  last = std::min(last, layers);
  std::vector<int> n(static_cast<std::size_t>(stages), 0);
  n.back() = last;
  if (stages > 1) {
    const int rest = layers - last, others = stages - 1;
    for (int i = 0; i < others; ++i) n[static_cast<std::size_t>(i)] = rest / others + (i >= others - rest % others ? 1 : 0);
  }
  std::string out;
  for (int i = 0; i < stages; ++i) {
    if (i > 0) out += '|';
    if (i == 0) out += 'E';
    out += std::string(static_cast<std::size_t>(n[static_cast<std::size_t>(i)]), 't');
    if (i == stages - 1) out += std::string(static_cast<std::size_t>(l.mtp), 'm') + "L";
  }
  return out;
}

// "tokens_per_sec_per_gpu=N" in a row's notes (Megatron-Bridge rows publish both metrics); 0 when absent, when
// the number does not end cleanly (end, ';', ')' or a space: "3,541" is not 3), or when marked "derived" (computed
// from the TFLOPS by the table's authors, so it carries no FLOP definition of its own).
double published_tokens_per_s(const std::string& notes) {
  static const std::string key = "tokens_per_sec_per_gpu=";
  const auto at = notes.find(key);
  if (at == std::string::npos) return 0;
  std::string before = to_lower(notes.substr(0, at));
  while (!before.empty() && (std::isspace(static_cast<unsigned char>(before.back())) || before.back() == ':'))
    before.pop_back();
  if (before.size() >= 7 && before.compare(before.size() - 7, 7, "derived") == 0) return 0;
  try {
    std::size_t used = 0;
    const std::string rest = notes.substr(at + key.size());
    const double v = std::stod(rest, &used);
    const bool clean = used == rest.size() || rest[used] == ';' || rest[used] == ')' ||
                       std::isspace(static_cast<unsigned char>(rest[used]));
    return clean && v > 0 && std::isfinite(v) ? v : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

}  // namespace

RowCase case_from_row(const std::map<std::string, std::string>& row, const Resolvers& resolve, const PredictOptions& base) {
  RowCase rc;
  rc.id = col(row, "id");
  rc.metric = col(row, "metric");
  try {
    rc.measured = std::stod(col(row, "value"));
  } catch (const std::exception&) {
    rc.skipped = "value \"" + col(row, "value") + "\" is not a number";
    return rc;
  }
  const bool metric_ok = rc.metric == "tflops_per_gpu" || rc.metric == "tokens_per_sec_per_gpu" || rc.metric == "step_time_s";
  if (!metric_ok) {
    rc.skipped = "metric " + rc.metric + " is not a single-step prediction";
    return rc;
  }
  if (rc.metric == "tflops_per_gpu") {
    if (const auto tokens = published_tokens_per_s(col(row, "notes")); tokens > 0)
      rc.row_flops_per_token = rc.measured * 1e12 / tokens;
  }
  layout::Layout l;
  if (auto why = read_layout(row, l)) {
    rc.skipped = *why;
    return rc;
  }
  try {
    Case c{resolve.model(col(row, "model")), resolve.system(col(row, "hardware")), l};
    if (c.model.is_moe() && !int_col(row, "ep")) {
      rc.skipped = "column ep is blank for an MoE model";
      return rc;
    }
    // Recipe defaults of Megatron-Bridge MoE benchmarks (groundtruth.md §3.1): gradient reduce in BF16;
    // DeepSeek-V3 also BF16 Adam moments (precision-aware optimizer).
    if (to_lower(col(row, "framework")).find("megatron-bridge") != std::string::npos) {
      c.layout.grad_reduce_dtype = layout::Dtype::bf16;
      if (c.model.attention.kind == model::AttentionKind::mla) c.layout.optimizer_moment_dtype = layout::Dtype::bf16;
      // FP8 attention where the row says so ("FP8 DPA" in its notes), and on every MXFP8 GB300 row of the 26.06
      // container (groundtruth.md §6: "The 26.06 GB300 rows also use FP8 attention").
      const std::string notes = to_lower(col(row, "notes"));
      const bool says = notes.find("fp8 dpa") != std::string::npos ||
                        notes.find("fp8_dot_product_attention") != std::string::npos;
      const bool gb300_2606 = to_lower(col(row, "hardware")).find("gb300") != std::string::npos &&
                              col(row, "source").find("26.06") != std::string::npos &&
                              c.layout.precision == layout::Precision::mxfp8;
      if (c.layout.precision != layout::Precision::bf16 && (says || gb300_2606)) c.layout.fp8_attention = true;
    }
    // The TE release of the row's container (documented default, the newest known, when the source names none).
    if (col(row, "te_version").empty())
      if (auto te = te_version_from_source(col(row, "source"))) c.layout.te_version = *te;
    const int stages = c.layout.pp * c.layout.vpp;
    if (c.layout.pp_layout.empty() && stages > 1 && c.model.num_layers % stages != 0)
      c.layout.pp_layout = balanced_pipeline_layout(c.model, c.layout);
    rc.options = base;
    // Published runs ran: a memory estimate above the GPU's HBM is moesim's error, not a reason to skip.
    rc.options.check_memory = false;
    rc.options.flops_convention = convention_of(col(row, "framework"));
    rc.options.keep_timeline = false;
    rc.c = std::move(c);
  } catch (const Error& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what = what.substr(0, nl) + " ...";
    rc.skipped = what;
  }
  return rc;
}

double RowCase::value_of(const report::StepReport& r) const {
  if (metric == "tflops_per_gpu" && row_flops_per_token > 0) return r.tokens_per_s_per_gpu * row_flops_per_token / 1e12;
  return metric == "tflops_per_gpu"           ? r.tflops_per_gpu
         : metric == "tokens_per_sec_per_gpu" ? r.tokens_per_s_per_gpu
                                              : r.step_time_s;
}

ValidationResult validate_table(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base,
                                int jobs) {
  ValidationResult out;
  out.rows.resize(table.rows.size());
  auto predict_row = [&](std::size_t i) {
    const auto& row = table.rows[i];
    ValidationRow& v = out.rows[i];
    v.model = col(row, "model");
    v.hardware = col(row, "hardware");
    for (const auto& [name, text] : row)
      if (name != "id" && name != "metric" && name != "value" && name != "unit" && name != "source" && name != "notes")
        v.inputs[name] = text;
    RowCase rc = case_from_row(row, resolve, base);
    v.id = rc.id;
    v.metric = rc.metric;
    v.measured = rc.measured;
    v.skipped = rc.skipped;
    if (!rc.c) return;
    try {
      const auto p = predict_step(*rc.c, rc.options);
      v.layout = p.report.layout_summary;
      v.predicted = rc.value_of(p.report);
    } catch (const Error& e) {
      std::string what = e.what();
      if (auto nl = what.find('\n'); nl != std::string::npos) what = what.substr(0, nl) + " ...";
      v.skipped = what;
    }
  };
  // Rows are independent; each worker takes the next unclaimed row. An exception that is not a row's own
  // (an internal error) is re-thrown after the workers stop: the one of the lowest row, whatever the timing.
  const std::size_t workers = std::min<std::size_t>(
      table.rows.size(), jobs > 0 ? static_cast<std::size_t>(jobs) : std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::size_t failed_row = table.rows.size();
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < table.rows.size(); i = next++) {
      try {
        predict_row(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (i < failed_row) failure = std::current_exception(), failed_row = i;
      }
    }
  };
  std::vector<std::thread> pool;
  try {
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  } catch (...) {  // no thread to spare: the threads started and this one finish the table
  }
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);

  std::vector<double> errors;
  for (const auto& v : out.rows) {
    if (v.predicted) errors.push_back(std::fabs(v.error_pct()));
    else out.summary.skipped++;
  }
  out.summary.n = static_cast<int>(errors.size());
  out.summary.median_abs_error_pct = percentile(errors, 0.5);
  out.summary.p90_abs_error_pct = percentile(errors, 0.9);
  out.summary.max_abs_error_pct = errors.empty() ? 0 : *std::max_element(errors.begin(), errors.end());
  return out;
}

std::vector<LadderStep> ladder_steps(const ValidationResult& r, double threshold_pct) {
  std::vector<LadderStep> out;
  for (std::size_t i = 1; i < r.rows.size(); ++i) {
    const auto& a = r.rows[i - 1];
    const auto& b = r.rows[i];
    if (!a.predicted || !b.predicted || a.metric != b.metric) continue;
    LadderStep s;
    s.from = a.id;
    s.to = b.id;
    // A step-time metric improves downwards: compare rates (1 / time) so that "+" always means faster.
    const bool time = b.metric == "step_time_s";
    auto change = [time](double x, double y) { return 100.0 * (time ? x / y - 1 : y / x - 1); };
    s.measured_change_pct = change(a.measured, b.measured);
    s.predicted_change_pct = change(*a.predicted, *b.predicted);
    s.judged = std::fabs(s.measured_change_pct) > threshold_pct;
    // A prediction that moves by less than 0.1 % has not moved (rounding in a row's inputs is not a direction).
    s.same_direction = std::fabs(s.predicted_change_pct) >= 0.1 && s.measured_change_pct * s.predicted_change_pct > 0;
    for (const auto& [name, text] : b.inputs) {
      const auto it = a.inputs.find(name);
      if (it == a.inputs.end() || it->second != text) s.changed_columns.push_back(name);
    }
    for (const auto& [name, text] : a.inputs)
      if (!b.inputs.count(name)) s.changed_columns.push_back(name);
    out.push_back(s);
  }
  return out;
}

std::string to_text_table(const std::vector<LadderStep>& steps) {
  std::string out = "step              measured  predicted  direction                           changed columns\n";
  int judged = 0, same = 0, unchanged = 0;
  char line[160];
  for (const auto& s : steps) {
    const char* verdict = !s.judged ? "not judged (small measured change)" : s.same_direction ? "same" : "WRONG";
    std::snprintf(line, sizeof line, "%-6s -> %-6s %+8.1f%% %+9.1f%%  %-34s  ", s.from.c_str(), s.to.c_str(),
                  s.measured_change_pct, s.predicted_change_pct, verdict);
    std::string changed;
    for (const auto& c : s.changed_columns) changed += (changed.empty() ? "" : ", ") + c;
    out += line + (changed.empty() ? std::string("(none: the change is not in the table)") : changed) + "\n";
    judged += s.judged ? 1 : 0;
    same += s.judged && s.same_direction ? 1 : 0;
    unchanged += s.judged && s.changed_columns.empty() ? 1 : 0;
  }
  std::snprintf(line, sizeof line, "steps judged %d, predicted in the measured direction %d", judged, same);
  out += line;
  if (unchanged > 0) {
    std::snprintf(line, sizeof line, "; %d judged step%s no input column changed", unchanged,
                  unchanged == 1 ? " has" : "s have");
    out += line;
  }
  return out + "\n";
}

std::string to_json_text(const ValidationResult& r) {
  nlohmann::ordered_json j;
  auto rows = nlohmann::ordered_json::array();
  for (const auto& v : r.rows) {
    if (v.predicted)
      rows.push_back({{"id", v.id}, {"metric", v.metric}, {"measured", v.measured}, {"predicted", *v.predicted}, {"error_pct", v.error_pct()}});
    else
      rows.push_back({{"id", v.id}, {"skipped", v.skipped}});
  }
  j["rows"] = rows;
  j["summary"] = {{"n", r.summary.n}, {"skipped", r.summary.skipped}, {"median_abs_error_pct", r.summary.median_abs_error_pct},
                  {"p90_abs_error_pct", r.summary.p90_abs_error_pct}, {"max_abs_error_pct", r.summary.max_abs_error_pct}};
  return j.dump(2) + "\n";
}

std::string to_text_table(const ValidationResult& r) {
  std::string out;
  char line[400];
  std::snprintf(line, sizeof line, "%-6s %-24s %10s %10s %8s  %s\n", "id", "metric", "measured", "predicted", "error", "model / hardware");
  out += line;
  for (const auto& v : r.rows) {
    if (v.predicted)
      std::snprintf(line, sizeof line, "%-6s %-24s %10.1f %10.1f %+7.1f%%  %s / %s\n", v.id.c_str(), v.metric.c_str(), v.measured,
                    *v.predicted, v.error_pct(), v.model.c_str(), v.hardware.c_str());
    else
      std::snprintf(line, sizeof line, "%-6s skipped: %s\n", v.id.c_str(), v.skipped.substr(0, 300).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "rows predicted %d, skipped %d; |error| median %.1f%%, p90 %.1f%%, max %.1f%%\n", r.summary.n,
                r.summary.skipped, r.summary.median_abs_error_pct, r.summary.p90_abs_error_pct, r.summary.max_abs_error_pct);
  out += line;
  return out;
}

std::string to_markdown(const ValidationResult& r) {
  std::string out = "| id | model | hardware | metric | measured | predicted | error |\n|---|---|---|---|---|---|---|\n";
  char line[400];
  for (const auto& v : r.rows) {
    if (!v.predicted) continue;
    std::snprintf(line, sizeof line, "| %s | %s | %s | %s | %.1f | %.1f | %+.1f%% |\n", v.id.c_str(), v.model.c_str(), v.hardware.c_str(),
                  v.metric.c_str(), v.measured, *v.predicted, v.error_pct());
    out += line;
  }
  std::snprintf(line, sizeof line, "\nRows predicted: %d; skipped: %d. |error| median %.1f %%, p90 %.1f %%, max %.1f %%.\n",
                r.summary.n, r.summary.skipped, r.summary.median_abs_error_pct, r.summary.p90_abs_error_pct, r.summary.max_abs_error_pct);
  out += line;
  return out;
}

}  // namespace moesim::predict
