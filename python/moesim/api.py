"""The subcommands as functions. Each takes a ``Case`` (or none: the CLI's default case) and keywords: the case's
fields (``tp=2``) and the subcommand's own options (``band=0.9``, ``top=5``), named as the command line's flags
with ``_`` for ``-``. Each runs the command line's own code in-process and returns what its ``--json`` prints."""

import json

from . import _cli
from .case import Case
from .errors import InternalError, UsageError
from .progress import Bar
from .results import Memory, Result, SearchResult, StageLayout, StepReport, Sweep, Validation


def _split(case, kwargs):
    """The flags of ``case`` with the case keywords over it, and the other keywords (the command's options)."""
    if case is not None and not isinstance(case, Case):
        raise UsageError(f"case: expected a moesim.Case, got {type(case).__name__}")
    allowed = _cli.case_flags()
    fields = {k: v for k, v in kwargs.items() if isinstance(k, str) and _cli.flag_name(k) in allowed}
    rest = {k: v for k, v in kwargs.items() if k not in fields}
    if fields:
        case = case.replace(**fields) if case is not None else Case(**fields)
    return (case.args() if case is not None else []), rest


def _command(subcommand, case, kwargs, fixed=(), progress=None, accept=(0,)):
    case_args, rest = _split(case, kwargs)
    for key in rest:  # options the function sets itself (--json)
        if isinstance(key, str) and "--" + _cli.flag_name(key) in fixed:
            raise UsageError(f"{subcommand}: {key} is set by this function")
    args = [subcommand] + case_args + _cli.to_flags(subcommand, rest) + list(fixed)
    return _cli.invoke(args, progress=progress, accept=accept)


def _json(text, args):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InternalError(f"moesim {' '.join(args)}: output is not JSON ({e})") from None


def run(case=None, **kwargs):
    """`moesim run --json`: one step on the engine (``gpus=[512, 2048]``: a list of reports, one per count)."""
    _, out = _command("run", case, kwargs, fixed=("--json",))
    data = _json(out, ["run"])
    return [StepReport(d) for d in data] if isinstance(data, list) else StepReport(data)


def trace(path, case=None, **kwargs):
    """`moesim run --trace PATH`: the step report, and the step's Chrome / Perfetto timeline written to ``path``."""
    return run(case, trace=path, **kwargs)


def estimate(case=None, **kwargs):
    """`moesim estimate --json`: the step in closed form (fast; what search ranks by)."""
    _, out = _command("estimate", case, kwargs, fixed=("--json",))
    return StepReport(_json(out, ["estimate"]))


def memory(case=None, **kwargs):
    """`moesim memory --json`: bytes per GPU per pipeline rank. A layout that does not fit returns with
    ``fits`` False and the reasons (the CLI exits 3 then); sizes that do not divide raise InfeasibleLayout."""
    code, out = _command("memory", case, kwargs, fixed=("--json",), accept=(0, 3))
    if code == 3 and not out.strip():
        raise _cli.last_error  # infeasible before the breakdown: sizes that do not divide
    return Memory(_json(out, ["memory"]), _cli.last_error.lines if code == 3 else None)


def layout(case=None, **kwargs):
    """`moesim layout`: the pipeline stage layout that balances the stages under the memory cap."""
    _, out = _command("layout", case, kwargs)
    return StageLayout(out)


def search(case=None, progress=True, **kwargs):
    """`moesim search --json`: ranked layouts. Ranges as lists or the CLI's text (``tp=[1, 2]``, ``ep="8..64"``).

    ``progress``: True draws a bar (notebook or terminal), False none, or a callable ``f(done, total)``. The GIL
    is released while it runs; Ctrl-C (KeyboardInterrupt) or an exception the callable raises stops the search at
    its next block of candidates and propagates.
    """
    bar = Bar.default() if progress is True else None
    callback = bar if bar is not None else (progress if callable(progress) else None)
    if progress not in (True, False, None) and not callable(progress):
        raise UsageError("progress: True, False or a callable(done, total)")
    try:
        _, out = _command("search", case, kwargs, fixed=("--json",), progress=callback)
    finally:
        if bar is not None:
            bar.close()
    return SearchResult(_json(out, ["search"]))


def _vary_text(key, values):
    if isinstance(values, (str, int, float)):
        values = [values]
    if not isinstance(values, (list, tuple, range)) or not values:
        raise UsageError(f"vary[{key!r}]: expected a non-empty list of values")
    texts = [_cli._scalar(f"vary[{key!r}]", v) for v in values]
    sep = ";" if any("," in t for t in texts) else ","
    return f"{_cli._scalar('vary key', key)}={sep.join(texts)}"


def sweep(case=None, vary=None, **kwargs):
    """`moesim sweep`: the cartesian product of ``vary`` (``{"gpus": [256, 512], "system": [...]}``) over the case,
    one row per point (``.to_dataframe()``)."""
    if not isinstance(vary, dict) or not vary:
        raise UsageError('sweep: vary={"key": [values, ...], ...} is required')
    flags = []
    for key, values in vary.items():
        flags += ["--vary", _vary_text(key, values)]
    case_args, rest = _split(case, kwargs)
    if "csv" in rest:
        raise UsageError("sweep: csv is set by this function (use .to_dataframe().to_csv(path))")
    _, out = _cli.invoke(["sweep"] + case_args + flags + _cli.to_flags("sweep", rest))
    return Sweep(out)


def validate(**kwargs):
    """`moesim validate --json`: predict a measurements CSV (default groundtruth.csv) and compare, per row."""
    _, out = _cli.invoke(["validate"] + _cli.to_flags("validate", kwargs) + ["--json"])
    return Validation(_json(out, ["validate"]))


def describe(model=None, **kwargs):
    """`moesim describe --json`: parameter counts and FLOPs per token of a model."""
    _, out = _cli.invoke(["describe"] + _cli.to_flags("describe", dict(kwargs, model=model)) + ["--json"])
    return Result(_json(out, ["describe"]))


def check_case(case=None, **kwargs):
    """Resolves the case as every command does (catalog names, every layout field, memory) without simulating:
    raises BadInput or InfeasibleLayout with all reasons, else returns its memory result."""
    return memory(case, **kwargs)


def _names(what):
    _, out = _cli.invoke(["list", what])
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def models():
    """The model catalog's names (`moesim list models`)."""
    return _names("models")


def systems():
    """The system catalog's names (`moesim list systems`)."""
    return _names("systems")


def parts():
    """The topology parts as kind/name (`moesim list parts`)."""
    return _names("parts")
