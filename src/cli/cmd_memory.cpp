// moesim memory: per-GPU memory of a case, per pipeline rank, against the GPU's usable HBM.
#include <cstdio>
#include <ostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/opt_case.hpp"
#include "core/units.hpp"
#include "layout/feasibility.hpp"
#include "layout/pipeline_layout.hpp"
#include "memory/memory_model.hpp"
#include "memory/model_facts_from_spec.hpp"

namespace moesim::cli {

void add_memory_command(CLI::App& app, Context& ctx) {
  struct Args {
    CaseFlags flags;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub =
      app.add_subcommand("memory", "Per-GPU memory (weights, gradients, optimizer, activations, buffers) of a layout");
  add_case_flags(*sub, args->flags);
  sub->add_flag("--json", args->json, "Print JSON (max_GiB, usable_GiB, fits, ranks[])");
  sub->callback([&ctx, args] {
    const predict::Case c = resolve_case(args->flags, ctx);
    model_params(args->flags.params, ctx);  // memory uses no general parameter, but a bad --param is still an error
    const auto facts = memory::model_facts(c.model);
    layout::check_feasibility(c.layout, facts);
    const auto est = memory::estimate_memory(c.model, c.layout, layout::assign_stages(c.layout, facts),
                                             c.system.gpu.usable_hbm_bytes());
    if (args->json) {
      nlohmann::ordered_json j;
      j["model"] = c.model.name;
      j["system"] = c.system.name;
      j["layout"] = predict::layout_summary(c.layout);
      j["max_GiB"] = est.worst().total() / kGiB;
      j["usable_GiB"] = est.usable_bytes / kGiB;
      j["fits"] = est.fits();
      auto ranks = nlohmann::ordered_json::array();
      for (const auto& b : est.ranks) {
        ranks.push_back({{"pp_rank", b.pp_rank},
                         {"dense_params", b.dense_params},
                         {"expert_params", b.expert_params},
                         {"weights_GiB", b.weights / kGiB},
                         {"gradients_GiB", b.gradients / kGiB},
                         {"optimizer_GiB", b.optimizer / kGiB},
                         {"te_dummy_wgrads_GiB", b.te_dummy_wgrads / kGiB},
                         {"fsdp_unsharded_GiB", b.fsdp_unsharded / kGiB},
                         {"activations_GiB", b.activations / kGiB},
                         {"inflight_chunks", b.inflight_units},
                         {"buffers_GiB", b.buffers / kGiB},
                         {"fragmentation_GiB", b.fragmentation / kGiB},
                         {"allocated_GiB", b.allocated() / kGiB},
                         {"reserved_GiB", b.reserved() / kGiB},
                         {"total_GiB", b.total() / kGiB}});
        // Zero-bubble schedules only: W passes pending at the peak and what they keep (in activations_GiB).
        if (b.pending_wgrad_units > 0) {
          ranks.back()["pending_wgrad_chunks"] = b.pending_wgrad_units;
          ranks.back()["wgrad_retained_GiB"] = b.wgrad_retained / kGiB;
        }
      }
      j["ranks"] = ranks;
      ctx.out << j.dump(2) << "\n";
    } else {
      char line[200];
      ctx.out << c.model.name << " on " << c.layout.gpus << " x " << c.system.name << ", "
              << predict::layout_summary(c.layout) << "\n";
      std::snprintf(line, sizeof line, "%-8s %9s %9s %9s %9s %9s %9s %9s %9s\n", "pp rank", "weights", "grads", "optim",
                    "TE wgrad", "activ", "buffers", "total", "GiB");
      ctx.out << line;
      for (const auto& b : est.ranks) {
        std::snprintf(line, sizeof line, "%-8d %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", b.pp_rank,
                      b.weights / kGiB, b.gradients / kGiB, b.optimizer / kGiB, b.te_dummy_wgrads / kGiB,
                      b.activations / kGiB, (b.buffers + b.fragmentation) / kGiB, b.total() / kGiB);
        ctx.out << line;
      }
      std::snprintf(line, sizeof line, "usable HBM %.2f GiB: %s\n", est.usable_bytes / kGiB,
                    est.fits() ? "fits" : "does NOT fit");
      ctx.out << line;
    }
    memory::require_fit(est);
  });
}

}  // namespace moesim::cli
