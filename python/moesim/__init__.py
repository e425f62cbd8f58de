"""moesim from Python: the same C++ libraries and code paths as the `moesim` command line, in-process.

    import moesim
    r = moesim.run()                                   # the CLI's default case
    r.step_time_s, r.band.step_time_s, r.breakdown.compute
    moesim.run(moesim.Case(model="qwen3-30b-a3b", system="dgx-h100", gpus=16, ep=16, gbs=256, precision="bf16"))
    moesim.sweep(vary={"gpus": [256, 512, 1024]}).to_dataframe()

Every result's ``to_dict()`` equals the CLI's ``--json`` output; errors raise UsageError, BadInput,
InfeasibleLayout (``.reasons``) or InternalError with the CLI's messages. docs/python.md has the rest.
"""

from ._cli import MoesimNote, data_dir, set_data_dir
from .api import (check_case, describe, estimate, layout, memory, models, parts, run, search, sweep, systems, trace,
                  validate)
from .case import Case
from .errors import BadInput, InfeasibleLayout, InternalError, MoesimError, UsageError
from .results import Memory, Result, SearchResult, StageLayout, StepReport, Sweep, Validation

__all__ = [
    "Case", "run", "trace", "estimate", "memory", "layout", "search", "sweep", "validate", "describe", "check_case",
    "models", "systems", "parts", "data_dir", "set_data_dir", "MoesimError", "UsageError", "BadInput", "InfeasibleLayout",
    "InternalError", "MoesimNote", "Result", "StepReport", "Memory", "SearchResult", "Validation", "Sweep",
    "StageLayout",
]
