"""Random and garbage keyword arguments never crash the interpreter: every call returns or raises a Python
exception (a MoesimError subclass for what the CLI rejects). Seeded, so a failure reproduces."""

import random

import pytest

import moesim
from moesim import _cli

GARBAGE = [None, True, False, 0, -1, 1, 2, 3, 8, 2**31, 2**64, -2**63, 1.5, float("nan"), float("inf"), "", " ",
           "abc", "1,2", "..", "1..", "-5", "1e9", "\0", "é", "💥", "../../etc/passwd", "=", "x=y", ["1", 2],
           [], (), {}, {"a": 1}, {"": ""}, object(), b"bytes", range(3), 1j]


def _random_kwargs(rng, names):
    kwargs = {}
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(names) if rng.random() < 0.85 else rng.choice(["", "1x", "no_such", "tp ", "__class__",
                                                                          "model-name", "é"])
        kwargs[key] = rng.choice(GARBAGE)
    return kwargs


@pytest.mark.parametrize("function", ["memory", "estimate", "layout"])
def test_random_keywords_never_crash(function):
    rng = random.Random(f"moesim-fuzz-{function}")
    names = sorted(n.replace("-", "_") for n in _cli.options(function))
    # No files written or read, and no option that only sizes the work (thousands of random layouts, threads).
    names = [n for n in names if n not in ("trace", "csv", "anchor", "layout", "agreement", "samples", "worst",
                                           "beam", "jobs")]
    call = getattr(moesim, function)
    outcomes = {}
    for _ in range(120):
        kwargs = _random_kwargs(rng, names)
        try:
            call(**{k: v for k, v in kwargs.items()})
            outcomes["ok"] = outcomes.get("ok", 0) + 1
        except moesim.MoesimError as e:
            assert e.exit_code in (1, 2, 3), (kwargs, e)
            assert not isinstance(e, moesim.InternalError), (kwargs, e)
            outcomes[type(e).__name__] = outcomes.get(type(e).__name__, 0) + 1
        except TypeError:  # e.g. a keyword that is not a string, rejected by Python itself
            outcomes["TypeError"] = outcomes.get("TypeError", 0) + 1
    assert outcomes.get("UsageError", 0) > 0 and sum(outcomes.values()) == 120


def test_random_megatron_strings_never_crash():
    rng = random.Random("moesim-fuzz-megatron")
    words = ["--tensor-model-parallel-size", "--expert-model-parallel-size", "--pipeline-model-parallel-layout",
             "--bf16", "--lr", "2", "x", "--", "=", "--a2a-overlap=maybe", "'", "Et*3|L", "--recompute-modules"]
    for _ in range(60):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        try:
            moesim.estimate(moesim.Case.from_megatron_args(text, model="qwen3-30b-a3b", system="dgx-h100", gpus=16))
        except (moesim.MoesimError, ValueError) as e:  # ValueError: shlex on an unclosed quote
            assert not isinstance(e, moesim.InternalError), (text, e)
