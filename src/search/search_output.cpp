#include "search/search_output.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "core/text.hpp"
#include "validate/validation.hpp"

namespace moesim::search {
namespace {

config::Json report_json(const report::StepReport& r) {
  return {{"step_time_s", r.step_time_s},
          {"tokens_per_s_per_gpu", r.tokens_per_s_per_gpu},
          {"tflops_per_gpu", r.tflops_per_gpu},
          {"memory_max_GiB", r.memory_max_GiB},
          {"breakdown", r.breakdown}};
}

// The largest breakdown shares, "compute 61% exposed_ep 12% bubble 9%".
std::string top_shares(const report::StepReport& r, int n) {
  std::vector<std::pair<double, std::string>> shares;
  for (const auto& [k, v] : r.breakdown)
    if (v > 0) shares.emplace_back(v, k);
  std::sort(shares.rbegin(), shares.rend());
  std::string s;
  for (int i = 0; i < n && i < static_cast<int>(shares.size()); ++i)
    s += (s.empty() ? "" : " ") + shares[static_cast<std::size_t>(i)].second + " " +
         fixed_decimals(100 * shares[static_cast<std::size_t>(i)].first / r.step_time_s, 0) + "%";
  return s;
}

std::string csv_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// How many were verified, and the estimate's error on them: the search picks the layouts the estimate flatters,
// so its error there is larger than on random layouts (estimate/README.md).
std::string verification_line(const SearchResult& r) {
  std::vector<double> err;
  for (const auto& l : r.ranking)
    if (l.simulated && l.simulated->step_time_s > 0)
      err.push_back(100 * (l.estimate.step_time_s - l.simulated->step_time_s) / l.simulated->step_time_s);
  if (err.empty()) return "";
  const auto extra = static_cast<int>(err.size()) - r.verify_requested;
  std::ostringstream o;
  o << "  verified " << err.size() << " with the engine";
  if (extra > 0)
    o << " (" << r.verify_requested << " asked; " << extra << " more whose estimate could place them in the top "
      << r.verify_requested << ")";
  // The search keeps only --top layouts; when verification used them all, the rule may have wanted more.
  if (extra > 0 && err.size() == r.ranking.size())
    o << "; that was every kept layout: a larger --top lets verification go further";
  o << ", ranked by the engine; estimate vs engine on them: ";
  std::sort(err.begin(), err.end());
  const double median = validate::percentile(err, 0.5);
  o << "median " << (median >= 0 ? "+" : "") << fixed_decimals(median, 1) << " %, range "
    << fixed_decimals(err.front(), 1) << " .. " << fixed_decimals(err.back(), 1) << " %\n";
  return o.str();
}

}  // namespace

std::string to_table(const SearchResult& r) {
  std::ostringstream o;
  o << "search: " << r.combinations << " combinations, " << r.screened_in << " past the arithmetic screens, "
    << r.feasible << " feasible and estimated\n";
  for (const auto& [why, n] : r.pruned) o << "  pruned " << n << ": " << why << "\n";
  for (const auto& [stage, s] : r.stage_seconds) o << "  time " << fixed_decimals(s, 2) << " s: " << stage << "\n";
  o << verification_line(r);
  o << "\n rank  step s (est / engine)  tok/s/GPU  TFLOPS/GPU  mem GiB  layout\n";
  int rank = 1;
  for (const auto& l : r.ranking) {
    const auto& best = l.simulated ? *l.simulated : l.estimate;
    o << " " << (rank < 10 ? " " : "") << rank << "    " << fixed_decimals(l.estimate.step_time_s, 3) << " / "
      << (l.simulated ? fixed_decimals(l.simulated->step_time_s, 3) : std::string("  -  ")) << "     "
      << fixed_decimals(best.tokens_per_s_per_gpu, 0) << "      " << fixed_decimals(best.tflops_per_gpu, 0)
      << "        " << fixed_decimals(l.estimate.memory_max_GiB, 1) << "   " << l.summary << "\n";
    o << "        breakdown: " << top_shares(best, 4) << "\n";
    o << "        megatron: " << l.args << "\n";
    ++rank;
  }
  return o.str();
}

config::Json to_json(const SearchResult& r) {
  config::Json ranking = config::Json::array();
  for (const auto& l : r.ranking)
    ranking.push_back({{"index", l.index},
                       {"layout", l.summary},
                       {"megatron_args", l.args},
                       {"estimate", report_json(l.estimate)},
                       {"simulated", l.simulated ? report_json(*l.simulated) : config::Json(nullptr)}});
  return {{"combinations", r.combinations},
          {"screened_in", r.screened_in},
          {"feasible", r.feasible},
          {"pruned", r.pruned},
          {"stage_seconds", r.stage_seconds},
          {"verify_requested", r.verify_requested},
          {"ranking", ranking}};
}

std::string to_csv(const SearchResult& r) {
  std::ostringstream o;
  o << "rank,index,est_step_time_s,engine_step_time_s,tokens_per_s_per_gpu,tflops_per_gpu,memory_max_GiB,layout,"
       "megatron_args\n";
  int rank = 1;
  for (const auto& l : r.ranking) {
    const auto& best = l.simulated ? *l.simulated : l.estimate;
    o << rank++ << "," << l.index << "," << fixed_decimals(l.estimate.step_time_s, 6) << ","
      << (l.simulated ? fixed_decimals(l.simulated->step_time_s, 6) : "") << ","
      << fixed_decimals(best.tokens_per_s_per_gpu, 1) << "," << fixed_decimals(best.tflops_per_gpu, 1) << ","
      << fixed_decimals(l.estimate.memory_max_GiB, 2) << "," << csv_quote(l.summary) << "," << csv_quote(l.args)
      << "\n";
  }
  return o.str();
}

SearchResult result_from_json(const config::Json& j, const std::string& file) {
  auto fail = [&](const std::string& pointer, const std::string& what) {
    Diagnostics d;
    d.add(file, pointer, what);
    d.throw_if_any();
  };
  auto need = [&](const config::Json& o, const std::string& key, const std::string& at) -> const config::Json& {
    if (!o.is_object() || !o.contains(key)) fail(at + "/" + key, "missing: expected a moesim search --json result");
    return o.at(key);
  };
  auto number = [&](const config::Json& o, const std::string& key, const std::string& at) {
    const auto& v = need(o, key, at);
    if (!v.is_number()) fail(at + "/" + key, "expected a number");
    return v.get<double>();
  };
  auto report_of = [&](const config::Json& o, const std::string& at) {
    report::StepReport s;
    s.step_time_s = number(o, "step_time_s", at);
    s.tokens_per_s_per_gpu = number(o, "tokens_per_s_per_gpu", at);
    s.tflops_per_gpu = number(o, "tflops_per_gpu", at);
    s.memory_max_GiB = number(o, "memory_max_GiB", at);
    const auto& b = need(o, "breakdown", at);
    if (!b.is_object()) fail(at + "/breakdown", "expected an object of seconds");
    for (const auto& [k, v] : b.items()) {
      if (!v.is_number()) fail(at + "/breakdown/" + k, "expected a number");
      s.breakdown[k] = v.get<double>();
    }
    return s;
  };
  SearchResult r;
  r.combinations = static_cast<std::uint64_t>(number(j, "combinations", ""));
  r.screened_in = static_cast<std::uint64_t>(number(j, "screened_in", ""));
  r.feasible = static_cast<std::uint64_t>(number(j, "feasible", ""));
  // Absent from results written before the verified were ranked by the engine.
  if (j.contains("verify_requested")) r.verify_requested = static_cast<int>(number(j, "verify_requested", ""));
  for (const char* key : {"pruned", "stage_seconds"}) {
    const auto& o = need(j, key, "");
    if (!o.is_object()) fail(std::string("/") + key, "expected an object");
    for (const auto& [k, v] : o.items()) {
      if (!v.is_number()) fail(std::string("/") + key + "/" + k, "expected a number");
      if (std::string(key) == "pruned")
        r.pruned[k] = v.get<std::uint64_t>();
      else
        r.stage_seconds[k] = v.get<double>();
    }
  }
  const auto& ranking = need(j, "ranking", "");
  if (!ranking.is_array()) fail("/ranking", "expected an array");
  for (std::size_t i = 0; i < ranking.size(); ++i) {
    const std::string at = "/ranking/" + std::to_string(i);
    const auto& e = ranking[i];
    RankedLayout l;
    l.index = static_cast<std::uint64_t>(number(e, "index", at));
    const auto& summary = need(e, "layout", at);
    const auto& args = need(e, "megatron_args", at);
    if (!summary.is_string() || !args.is_string()) fail(at, "expected strings in layout and megatron_args");
    l.summary = summary.get<std::string>();
    l.args = args.get<std::string>();
    l.estimate = report_of(need(e, "estimate", at), at + "/estimate");
    const auto& sim = need(e, "simulated", at);
    if (!sim.is_null()) l.simulated = report_of(sim, at + "/simulated");
    r.ranking.push_back(std::move(l));
  }
  return r;
}

}  // namespace moesim::search
