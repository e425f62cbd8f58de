"""Runs one `moesim` subcommand in-process (the extension's ``call``) and turns keyword arguments into its flags.

The flags come from the command line's own declarations (``_moesim.flags()``), so every option a subcommand has is
a keyword here under its long name with ``_`` for ``-`` (``tensor_model_parallel_size=2``, ``band=0.9``).
"""

import difflib
import functools
import math
import os
import warnings

from . import _moesim
from .errors import BY_EXIT_CODE, InternalError, UsageError

_data_dir = None


def set_data_dir(path):
    """Reads the catalog and calibration data from ``path`` (the CLI's --data-dir); None: the default."""
    global _data_dir
    _data_dir = None if path is None else os.fspath(path)


def data_dir():
    """The folder the commands read the catalog, calibration data and bundled measurements from."""
    from pathlib import Path

    return Path(_moesim.data_dir(_data_dir or ""))


class MoesimNote(UserWarning):
    """A note the command line prints on stderr beside a result (e.g. the pipeline layout it chose)."""


class _Option:
    __slots__ = ("names", "min", "max", "once")

    def __init__(self, names, lo, hi, once):
        self.names, self.min, self.max, self.once = list(names), lo, hi, once

    @property
    def bare(self):  # a flag without a value (--json, --ignore-memory)
        return self.max == 0

    @property
    def optional_value(self):  # a boolean layout flag: --a2a-overlap or --a2a-overlap=false
        return self.min == 0 and self.max == 1


@functools.lru_cache(maxsize=None)
def options(subcommand):
    """{long name: _Option} of a subcommand."""
    table = _moesim.flags()
    if subcommand not in table:
        raise UsageError(f"no subcommand {subcommand!r}")
    out = {}
    for names, lo, hi, once in table[subcommand]:
        opt = _Option(names, lo, hi, once)
        for n in names:
            out[n] = opt
    return out


@functools.lru_cache(maxsize=None)
def case_flags():
    """The flags every case-taking subcommand shares (model, system, the layout fields, --param, ...)."""
    names = set(options("run"))
    for sub in ("estimate", "memory", "layout", "search", "sweep"):
        names &= set(options(sub))
    return frozenset(names)


def flag_name(key):
    if not isinstance(key, str) or not key.isidentifier():
        raise UsageError(f"{key!r}: not a keyword name")
    return key.replace("_", "-")


def _unknown(subcommand, name):
    known = sorted({n.replace("-", "_") for n in options(subcommand)})
    close = difflib.get_close_matches(name.replace("-", "_"), known, n=3)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    return UsageError(f"{subcommand}: no option {name.replace('-', '_')!r}{hint}")


def _scalar(name, value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UsageError(f"{name}: {value!r} is not a finite number")
        return repr(value)
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if isinstance(text, bytes) or "\0" in text:
            raise UsageError(f"{name}: {value!r} is not text")
        return text
    raise UsageError(f"{name}: expected a number, text or bool, got {type(value).__name__}")


def to_flags(subcommand, kwargs):
    """The command-line flags of ``kwargs`` for ``subcommand`` (None values are left out)."""
    table = options(subcommand)
    args = []
    for key, value in kwargs.items():
        name = flag_name(key)
        opt = table.get(name)
        if opt is None or name == "help":  # --help prints text, not a result: help(moesim.run) instead
            raise _unknown(subcommand, name)
        if value is None:
            continue
        flag = "--" + name
        if opt.bare:
            if not isinstance(value, bool):
                raise UsageError(f"{key}: takes True or False, got {value!r}")
            if value:
                args.append(flag)
        elif opt.optional_value and isinstance(value, bool):
            args.append(f"{flag}={'true' if value else 'false'}")
        elif isinstance(value, dict):
            if opt.once:
                raise UsageError(f"{key}: takes one value, not a dict")
            for k, v in value.items():
                args += [flag, f"{_scalar(key, k)}={_list_text(key, v)}"]
        elif isinstance(value, (list, tuple, range)) and not opt.once:
            for v in value:
                args += [flag, _list_text(key, v)]
        else:
            args += [flag, _list_text(key, value)]
    return args


def _list_text(name, value):
    """A value or a list of values (``tp=[1, 2]``, ``gpus=range(...)``) as the CLI's comma list."""
    if isinstance(value, (list, tuple, range)):
        if not value:
            raise UsageError(f"{name}: an empty list")
        return ",".join(_scalar(name, v) for v in value)
    return _scalar(name, value)


def _error(code, err, args):
    text = err.decode("utf-8", "replace")
    lines = text.splitlines()
    if code == 1 and lines and lines[0].startswith("moesim: ") and not lines[0].rstrip().endswith(":"):
        message = lines[0][len("moesim: "):]  # a CLI11 parse error, followed by the subcommand's help
    else:
        message = "\n".join(lines[1:] if lines and lines[0].startswith("moesim: ") else lines)
    cls = BY_EXIT_CODE.get(code, InternalError)
    return cls(message.strip() or f"moesim exited with {code}", args)


def invoke(args, progress=None, accept=(0,)):
    """Runs `moesim <args>`; returns (exit code, stdout text). Raises the error class of a code not in ``accept``;
    with an accepted non-zero code, ``last_error`` holds the error it would have raised."""
    global last_error
    if _data_dir is not None:
        args = ["--data-dir", _data_dir] + list(args)
    code, out, err = _moesim.call(list(args), progress)
    last_error = _error(code, err, args) if code != 0 else None
    if code not in accept:
        raise last_error
    if code == 0:
        for line in err.decode("utf-8", "replace").splitlines():
            if line.strip():
                warnings.warn(line.strip(), MoesimNote, stacklevel=3)
    return code, out.decode("utf-8", "replace")


last_error = None
