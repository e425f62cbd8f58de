// moesim check FILE...: reads each config strictly, as the kind of file it is, and reports every problem of
// every file at once (exit 2), or "ok" per file.
//
// The kind is told by the file's keys: a Hugging Face config.json or a catalog model ("hidden_size"); a system
// ("scale_up"); a GPU part ("sm_count"); a switch part ("radix"); a NIC part ("bandwidth_GBps"); anything else
// is read as a layout or case file (layout fields plus optional "model" and "system").
#include <ostream>

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "config/data_dir.hpp"
#include "config/document.hpp"
#include "layout/layout_loader.hpp"
#include "model/model_loader.hpp"
#include "topology/part_files.hpp"
#include "topology/system_catalog.hpp"

namespace moesim::cli {
namespace {

// Runs a reader that throws ConfigError and moves its diagnostics into `diags`.
template <class F>
void collect(Diagnostics& diags, F&& read) {
  try {
    read();
  } catch (const ConfigError& e) {
    for (const auto& d : e.diagnostics()) diags.add(d.file, d.pointer, d.message);
  }
}

const char* check_one(const std::string& file, const Context& ctx, Diagnostics& diags) {
  Diagnostics parse;
  const config::Document doc = config::load_file(file, parse);
  if (!parse.empty()) {
    for (const auto& d : parse.items()) diags.add(d.file, d.pointer, d.message);
    return "";
  }
  const auto& j = doc.json;
  if (model::is_hf_config(doc) || j.contains("hidden_size")) {
    collect(diags, [&] { model::read_model_document(doc, diags); });
    return "model";
  }
  if (j.contains("scale_up")) {
    collect(diags, [&] { topology::SystemCatalog::load(config::data_dir(ctx.data_dir)).load_system_file(file); });
    return "system";
  }
  if (j.contains("sm_count")) {
    collect(diags, [&] { topology::read_gpu_file(file); });
    return "gpu part";
  }
  if (j.contains("radix")) {
    collect(diags, [&] { topology::read_switch_file(file); });
    return "switch part";
  }
  if (j.contains("bandwidth_GBps")) {
    collect(diags, [&] { topology::read_nic_file(file); });
    return "nic part";
  }
  layout::read_case(j, file, diags);
  return "layout";
}

}  // namespace

void add_check_command(CLI::App& app, Context& ctx) {
  auto* sub =
      app.add_subcommand("check", "Check config files (model, system, part, layout) strictly and report every problem");
  auto files = std::make_shared<std::vector<std::string>>();
  sub->add_option("files", *files, "JSON files")->required();
  sub->callback([&ctx, files] {
    Diagnostics diags;
    std::vector<std::string> kinds;
    for (const auto& f : *files) kinds.push_back(check_one(f, ctx, diags));
    diags.throw_if_any();
    for (std::size_t i = 0; i < files->size(); ++i) ctx.out << (*files)[i] << ": ok (" << kinds[i] << ")\n";
  });
}

}  // namespace moesim::cli
