// split_half_markdown: the tables of `validate --split-half` (validate/split_half.hpp), as docs/accuracy.md shows them.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "validate/split_half.hpp"

namespace moesim::validate {

namespace {

std::string num(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}
std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}
std::string errors(const RowsScore& s) {
  return pct(s.median_pct) + " / " + pct(s.p90_pct) + " / " + pct(s.max_pct) + " % (" + num(s.mean_abs_log, 3) + ")";
}

}  // namespace

std::string split_half_markdown(const SplitHalfResult& r) {
  std::ostringstream o;
  o << "| parameter | built-in | full fit | rows that move with it | unfitted value | why that value |\n"
    << "|---|---|---|---|---|---|\n";
  for (std::size_t p = 0; p < r.params.size(); ++p)
    o << "| `" << r.params[p].name << "` | " << num(r.builtin[p]) << " | " << num(r.full_fit[p]) << " | "
      << r.moving_rows[p].size() << " | " << num(r.params[p].unfitted) << " | " << r.params[p].unfitted_why << " |\n";
  o << "\nWhole table, median / p90 / max |error| (mean |ln|): at the built-in values " << errors(r.full_at_builtin)
    << ", at the full fit " << errors(r.full_at_full_fit) << ".\n";
  for (const auto& s : r.splits) {
    if (s.unfitted.empty()) {
      o << "\nSplit `" << s.split << "` (" << s.rule << "): " << s.fit_rows << " rows fit, " << s.judge_rows
        << " judged. Judged rows at the half fit " << errors(s.judge_at_half_fit) << "; at the full fit "
        << errors(s.judge_at_full_fit) << ". Half fit / full fit:";
      for (std::size_t p = 0; p < r.params.size(); ++p)
        o << (p ? ";" : "") << " `" << r.params[p].name << "` " << num(s.half_fit[p]) << " / " << num(r.full_fit[p]);
      o << ".\n";
      continue;
    }
    o << "\nSplit `" << s.split << "` (" << s.rule << "): " << s.fit_rows << " rows fit, " << s.judge_rows
      << " judged. Judged rows at the half fit " << errors(s.judge_at_half_fit) << "; at the full fit (which saw them) "
      << errors(s.judge_at_full_fit) << ".\n\n"
      << "| parameter | half fit | full fit | half / full | judged rows, parameter at its half fit | judged rows, "
         "parameter unfitted and the others refitted on the fit half | what it buys on the judged rows (mean |ln|) "
         "|\n"
      << "|---|---|---|---|---|---|---|\n";
    for (std::size_t p = 0; p < r.params.size(); ++p) {
      const auto& u = s.unfitted[p];
      const double buys = u.judge.mean_abs_log - s.judge_at_half_fit.mean_abs_log;
      o << "| `" << r.params[p].name << "` | " << num(s.half_fit[p]) << " | " << num(r.full_fit[p]) << " | "
        << num(s.half_fit[p] / r.full_fit[p]) << " | " << errors(s.judge_at_half_fit) << " | " << errors(u.judge)
        << " | " << (buys >= 0 ? "+" : "") << num(buys, 2) << " |\n";
    }
  }
  return o.str();
}

}  // namespace moesim::validate
