// core::Progress: silent unless asked (not a terminal, under the quiet time, MOESIM_PROGRESS=0), counts every
// advance from several threads, and its line says done/total, percent, rate and ETA.
#include <doctest/doctest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "core/parallel_map.hpp"
#include "core/progress.hpp"

using moesim::core::Progress;

TEST_CASE("Progress::line: done/total, percent, rate and ETA") {
  CHECK(Progress::line("validate", 50, 200, 10.0) == "validate  50/200  25.0%  5.0/s  ETA 0:30");
  CHECK(Progress::line("sweep", 0, 10, 2.0) == "sweep  0/10  0.0%  0.0/s  ETA ?");
  // Finished: the elapsed time instead of an ETA; hours when long.
  CHECK(Progress::line("x", 10, 10, 3725.0) == "x  10/10  100.0%  0.0/s  1:02:05");
  CHECK(Progress::line("empty", 0, 0, 0.0) == "empty  0/0  100.0%  0.0/s  0:00");
}

TEST_CASE("Progress: counts advances from many threads and draws when forced") {
  std::ostringstream out;
  Progress::Options o;
  o.show = Progress::Options::Show::always;
  o.quiet_s = 0;
  o.redraw_s = 0;
  {
    Progress bar("rows", 1000, out, o);
    moesim::parallel_for(1000, 4, [&](std::size_t) { bar.advance(); });
    CHECK(bar.done() == 1000);
    bar.finish();
    bar.finish();  // idempotent
  }
  const std::string text = out.str();
  CHECK(text.find("rows  ") == 0);
  // The last line is the final one, drawn once by finish().
  CHECK(text.substr(text.rfind("rows  ")).find("1000/1000  100.0%") != std::string::npos);
}

TEST_CASE("Progress: silent when not a terminal, within the quiet time, or turned off") {
  std::ostringstream out;
  {
    Progress bar("a", 10, out, {});  // auto-detect on a string stream: not a terminal
    for (int i = 0; i < 10; ++i) bar.advance();
    CHECK_FALSE(bar.enabled());
  }
  Progress::Options quiet;
  quiet.show = Progress::Options::Show::always;
  quiet.quiet_s = 3600;  // a short loop never reaches it
  {
    Progress bar("b", 10, out, quiet);
    bar.advance(10);
  }
  Progress::Options never;
  never.show = Progress::Options::Show::never;
  never.quiet_s = 0;
  {
    Progress bar("c", 10, out, never);
    bar.advance(10);
  }
  CHECK(out.str().empty());
}

TEST_CASE("Progress: MOESIM_PROGRESS=1 forces it on a pipe, 0 turns it off") {
  Progress::Options o;
  o.quiet_s = 0;
  o.redraw_s = 0;
  std::ostringstream on, off;
  ::setenv("MOESIM_PROGRESS", "1", 1);
  {
    Progress bar("on", 2, on, o);
    bar.advance(2);
  }
  ::setenv("MOESIM_PROGRESS", "0", 1);
  {
    Progress bar("off", 2, off, o);
    bar.advance(2);
  }
  ::unsetenv("MOESIM_PROGRESS");
  CHECK(on.str().find("on  2/2  100.0%") != std::string::npos);
  CHECK(off.str().empty());
}
