#include "topology/system_catalog.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "topology/spec_readers.hpp"

namespace moesim::topology {
namespace {

namespace fs = std::filesystem;
using config::Bound;
using config::ObjectReader;

std::vector<fs::path> json_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;  // a path the OS refuses (too long) is no folder, not an internal error
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

template <class Map>
std::vector<std::string> keys_of(const Map& m) {
  std::vector<std::string> out;
  for (const auto& [k, _] : m) out.push_back(k);
  return out;
}

// Looks up the part named by `key` in `parts`; reports an unknown name with a did-you-mean and the list.
template <class Spec>
const Spec* part_ref(ObjectReader& r, std::string_view key, const std::map<std::string, Spec, std::less<>>& parts,
                     const char* kind) {
  const std::string name = r.string(key);
  if (name.empty()) return nullptr;
  auto it = parts.find(name);
  if (it != parts.end()) return &it->second;
  const auto known = keys_of(parts);
  r.error(key, "unknown " + std::string(kind) + " part \"" + name + "\"" + did_you_mean(name, known) + "; known " +
                   kind + " parts: " + join_names(known));
  return nullptr;
}

struct PartMaps {
  const std::map<std::string, GpuSpec, std::less<>>& gpus;
  const std::map<std::string, NicSpec, std::less<>>& nics;
  const std::map<std::string, SwitchSpec, std::less<>>& switches;
};

void read_scale_up(ObjectReader& r, const PartMaps& parts, SystemSpec& s) {
  auto up = r.object("scale_up");
  if (const auto* sw = part_ref(up, "switch", parts.switches, "switch")) {
    s.scale_up.switch_part = *sw;
    if (sw->kind != SwitchKind::nvswitch)
      up.error("switch", "scale-up switch \"" + sw->name + "\" is of kind " + std::string(to_string(sw->kind)) +
                             ", expected nvswitch");
  }
  s.scale_up.domain_size = static_cast<int>(up.integer("domain_size"));
  s.scale_up.gpus_used_per_domain = static_cast<int>(up.integer_or("gpus_used_per_domain", s.scale_up.domain_size));
  if (up.has("switches_per_domain"))
    s.scale_up.switches_per_domain = static_cast<int>(up.integer("switches_per_domain"));
  const int g = s.gpus_per_node;
  if (g > 0 && s.scale_up.domain_size > 0 && s.scale_up.domain_size % g != 0)
    up.error("domain_size", "domain_size " + std::to_string(s.scale_up.domain_size) +
                                " is not a multiple of gpus_per_node " + std::to_string(g));
  const int used = s.scale_up.gpus_used_per_domain;
  if (g > 0 && used > 0 && (used % g != 0 || used > s.scale_up.domain_size))
    up.error("gpus_used_per_domain", "gpus_used_per_domain " + std::to_string(used) +
                                         " must be a multiple of gpus_per_node " + std::to_string(g) +
                                         " and at most domain_size " + std::to_string(s.scale_up.domain_size));
}

void read_scale_out(ObjectReader& r, const PartMaps& parts, SystemSpec& s) {
  auto out = r.object("scale_out");
  auto& so = s.scale_out;
  if (const auto* nic = part_ref(out, "nic", parts.nics, "nic")) so.nic = *nic;
  const auto* sw = part_ref(out, "switch", parts.switches, "switch");
  if (sw) {
    so.switch_part = *sw;
    if (sw->kind == SwitchKind::nvswitch)
      out.error("switch", "scale-out switch \"" + sw->name + "\" is of kind nvswitch, expected infiniband or ethernet");
  }
  so.nics_per_gpu = static_cast<int>(out.integer_or("nics_per_gpu", 1));
  if (so.nics_per_gpu != 1)
    out.error("nics_per_gpu", "only one NIC per GPU is modelled, got " + std::to_string(so.nics_per_gpu));
  out.choice("topology", {"rail-optimized-fat-tree"});
  so.topology = FabricTopology::rail_optimized_fat_tree;
  so.oversubscription = out.number_or("oversubscription", 1.0);

  const int nics_per_node = s.gpus_per_node * so.nics_per_gpu;
  so.rails = static_cast<int>(out.integer_or("rails", nics_per_node));
  if (nics_per_node <= 0 || so.rails <= 0) return;  // already reported
  if (nics_per_node % so.rails != 0) {
    out.error("rails", "rails " + std::to_string(so.rails) + " must divide the NICs per node (" +
                           std::to_string(nics_per_node) + ")");
    return;
  }
  if (!sw || so.oversubscription <= 0) return;
  // A leaf splits its ports between down (NICs) and up (spines) in the ratio oversubscription : 1.
  const int nics_per_node_per_rail = nics_per_node / so.rails;
  const double o = so.oversubscription;
  const int max_down = static_cast<int>(std::floor(sw->radix * o / (1.0 + o) + 1e-9));
  so.nodes_per_leaf =
      static_cast<int>(out.integer_or("nodes_per_leaf", std::max(1, max_down / nics_per_node_per_rail)));
  const int down = so.nodes_per_leaf * nics_per_node_per_rail;
  const int up = static_cast<int>(std::ceil(down / o - 1e-9));
  if (so.nodes_per_leaf > 0 && down + up > sw->radix)
    out.error("nodes_per_leaf", "a leaf with " + std::to_string(so.nodes_per_leaf) + " nodes needs " +
                                    std::to_string(down) + " down + " + std::to_string(up) +
                                    " up ports at oversubscription " + std::to_string(o) + ", more than the radix " +
                                    std::to_string(sw->radix) + " of \"" + sw->name + "\"");
}

void read_host(ObjectReader& r, SystemSpec& s) {
  auto h = r.object("host");
  s.host.cpu = h.string("cpu");
  s.host.cpu_family = h.choice("cpu_family", {"x86", "grace"}) == "grace" ? CpuFamily::grace : CpuFamily::x86;
  if (h.has("cpu_cores")) s.host.cpu_cores = static_cast<int>(h.integer("cpu_cores"));
  if (h.has("cpu_memory_GBps")) s.host.cpu_memory_Bps = h.number("cpu_memory_GBps") * kGB;
  if (h.has("gpus_per_cpu")) s.host.gpus_per_cpu = static_cast<int>(h.integer("gpus_per_cpu"));
  s.host.gpu_link = h.choice("gpu_link", {"pcie-gen5-x16", "pcie-gen6", "nvlink-c2c"});
  if (h.has("gpu_link_GBps")) s.host.gpu_link_Bps_per_direction = h.number("gpu_link_GBps") * kGB;
}

SystemSpec read_system(const config::Document& doc, std::string name, const PartMaps& parts, Diagnostics& diags) {
  SystemSpec s;
  s.name = std::move(name);
  s.file = doc.file;
  ObjectReader r(doc, diags);
  s.description = r.string("description");
  s.source = r.string("source");
  s.notes = r.string_or("notes", "");
  s.aliases = r.strings_or("aliases", {});
  if (const auto* gpu = part_ref(r, "gpu", parts.gpus, "gpu")) s.gpu = *gpu;
  s.gpus_per_node = static_cast<int>(r.integer("gpus_per_node"));
  read_scale_up(r, parts, s);
  read_scale_out(r, parts, s);
  read_host(r, s);
  s.calibration = detail::read_calibration(r);
  return s;
}

template <class Spec, class Read>
void load_parts(const fs::path& dir, std::map<std::string, Spec, std::less<>>& into, Read read, Diagnostics& diags) {
  for (const auto& path : json_files(dir)) {
    const config::Document doc = config::load_file(path, diags);
    ObjectReader r(doc, diags);
    into.emplace(path.stem().string(), read(r, path.stem().string()));
  }
}

}  // namespace

SystemCatalog SystemCatalog::load(const fs::path& data_root) {
  SystemCatalog c;
  c.root_ = data_root / "topologies";
  Diagnostics diags;
  std::error_code ec;
  if (!fs::is_directory(c.root_, ec)) {
    diags.add(c.root_.string(), "", "no topologies/ folder here (set --data-dir or MOESIM_DATA_DIR)");
    diags.throw_if_any();
  }
  load_parts(c.root_ / "parts" / "gpu", c.gpus_, detail::read_gpu, diags);
  load_parts(c.root_ / "parts" / "nic", c.nics_, detail::read_nic, diags);
  load_parts(c.root_ / "parts" / "switch", c.switches_, detail::read_switch, diags);
  const PartMaps parts{c.gpus_, c.nics_, c.switches_};
  for (const auto& path : json_files(c.root_ / "systems")) {
    const config::Document doc = config::load_file(path, diags);
    SystemSpec s = read_system(doc, path.stem().string(), parts, diags);
    // Names and aliases share one case-insensitive namespace; a clash would make a name ambiguous.
    std::vector<std::string> keys{s.name};
    keys.insert(keys.end(), s.aliases.begin(), s.aliases.end());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::string key = to_lower(keys[i]);
      auto [it, inserted] = c.lookup_.emplace(key, s.name);
      if (!inserted && it->second != s.name)
        diags.add(path.string(), i == 0 ? "" : "/aliases/" + std::to_string(i - 1),
                  "name \"" + keys[i] + "\" is already used by system \"" + it->second + "\"");
    }
    c.systems_.emplace(s.name, std::move(s));
  }
  diags.throw_if_any();
  return c;
}

std::vector<std::string> SystemCatalog::system_names() const { return keys_of(systems_); }

std::optional<std::string> SystemCatalog::canonical_name(std::string_view name_or_alias) const {
  auto it = lookup_.find(to_lower(name_or_alias));
  if (it == lookup_.end()) return std::nullopt;
  return it->second;
}

const SystemSpec& SystemCatalog::system(std::string_view name_or_alias) const {
  if (auto name = canonical_name(name_or_alias)) return systems_.find(*name)->second;
  std::vector<std::string> candidates = system_names();
  for (const auto& [_, s] : systems_) candidates.insert(candidates.end(), s.aliases.begin(), s.aliases.end());
  throw ConfigError(
      {{(root_ / "systems").string(), "",
        "unknown system \"" + std::string(name_or_alias) + "\"" + did_you_mean(name_or_alias, candidates) +
            "; known systems: " + join_names(system_names()) + " (aliases accepted, see 'moesim list systems')"}});
}

SystemSpec SystemCatalog::load_system_file(const fs::path& path) const {
  Diagnostics diags;
  const config::Document doc = config::load_file(path, diags);
  SystemSpec s = read_system(doc, path.string(), PartMaps{gpus_, nics_, switches_}, diags);
  diags.throw_if_any();
  return s;
}

SystemSpec SystemCatalog::resolve(const std::string& name_or_path) const {
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) return load_system_file(name_or_path);
  return system(name_or_path);
}

std::vector<PartEntry> SystemCatalog::parts() const {
  std::vector<PartEntry> out;
  for (const auto& [n, p] : gpus_) out.push_back({"gpu", n, p.description});
  for (const auto& [n, p] : nics_) out.push_back({"nic", n, p.description});
  for (const auto& [n, p] : switches_) out.push_back({"switch", n, p.description});
  return out;
}

}  // namespace moesim::topology
