// call(): one `moesim` command run in-process for the Python layer (python/moesim/_cli.py), on the CLI's own code
// path (cli::run), so a result is the one `moesim ... --json` prints. The GIL is released while it runs; a search
// reports progress to a Python callable and stops at the next block of candidates on Ctrl-C (progress.hpp).
#include "call.hpp"

#include <sstream>

#include "cli/cli.hpp"
#include "progress.hpp"

namespace moesim::python {

namespace py = pybind11;

py::tuple call(const std::vector<std::string>& args, const py::object& progress) {
  std::ostringstream out, err;
  SearchProgress hook(progress);
  cli::RunHooks hooks;
  hooks.search_progress = [&hook](std::uint64_t done, std::uint64_t total) { hook(done, total); };
  int code = 0;
  {
    py::gil_scoped_release released;
    code = cli::run(args, out, err, hooks);
  }
  hook.rethrow();  // a KeyboardInterrupt or the callback's own exception, with the GIL held again
  return py::make_tuple(code, py::bytes(out.str()), py::bytes(err.str()));
}

}  // namespace moesim::python
