"""Shared helpers: the `moesim` executable the parity tests compare with (MOESIM_BIN, set by ctest, else
build/moesim) and the repository's fixture paths."""

import json
import os
import subprocess
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def moesim_bin():
    return os.environ.get("MOESIM_BIN", str(ROOT / "build" / "moesim"))


def cli(*args, expect=0):
    """`moesim <args>` as a subprocess: (exit code, stdout, stderr)."""
    p = subprocess.run([moesim_bin(), *map(str, args)], capture_output=True, text=True, timeout=600)
    if expect is not None:
        assert p.returncode == expect, p.stderr
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    return json.loads(cli(*args)[1])


@pytest.fixture(autouse=True)
def _quiet_notes():
    # The CLI's notes (e.g. the pipeline layout it chose) arrive as MoesimNote warnings; the tests that care
    # catch them with pytest.warns.
    import moesim

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", moesim.MoesimNote)
        yield
