"""A case (model, system, layout) as the command line's case flags, from keywords, a layout file or dict, a
Megatron-LM argument string or a Hugging Face config.json. Nothing is resolved here: the C++ code reads the
catalog and checks every field when a command runs (``moesim.check_case`` does so without simulating)."""

import json
import os
import shlex
import tempfile
import weakref

from . import _cli
from .errors import UsageError


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


class Case:
    """``Case(model="qwen3-30b-a3b", system="dgx-h100", gpus=16, ep=16, gbs=256, seq=4096, precision="bf16")``.

    Keywords are the case flags of `moesim run` (``docs/cli-reference.md``) with ``_`` for ``-``: the layout fields
    under their short or Megatron-LM names, ``layout`` (a JSON file, or a dict written to one), ``set`` and
    ``param`` (dicts of ``path: value``), ``kernel_model``, ``flops_convention``, ``ignore_memory``. With no
    ``model``, ``system`` or ``layout`` the fields change the CLI's default case (DeepSeek-V3 on 256 GB300).
    """

    def __init__(self, **fields):
        for key in fields:
            name = _cli.flag_name(key)
            if name not in _cli.case_flags():
                if name in _cli.options("run"):
                    raise UsageError(f"{key}: an option of the command (give it to run, search, ...), not of the case")
                raise _cli._unknown("run", name)
        layout = fields.get("layout")
        if isinstance(layout, dict):
            fd, path = tempfile.mkstemp(prefix="moesim-layout-", suffix=".json")
            with os.fdopen(fd, "w") as f:
                json.dump(layout, f)
            self._layout_file = path
            weakref.finalize(self, _remove, path)
            fields = dict(fields, layout=path)
        self._layout_dict = layout if isinstance(layout, dict) else None
        self._args = _cli.to_flags("run", fields)  # checks every value's type now
        self.fields = dict(fields)
        if self._layout_dict is not None:
            self.fields["layout"] = self._layout_dict
        self.megatron_args = []  # flags taken from a Megatron-LM argument string (from_megatron_args)
        self.ignored = []  # what from_megatron_args left out

    def replace(self, **changes):
        """A copy with fields changed (None removes one)."""
        merged = {k: v for k, v in {**self.fields, **changes}.items() if v is not None}
        case = Case(**merged)
        case.megatron_args, case.ignored = list(self.megatron_args), list(self.ignored)
        case._args = case.megatron_args + case._args
        return case

    def args(self):
        """The case as command-line flags."""
        return list(self._args)

    def command(self, subcommand="run"):
        """The shell command that runs this case (a layout dict stands as its temporary file)."""
        return shlex.join(["moesim", subcommand] + self._args)

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self.fields.items())
        if self.megatron_args:
            inner = ", ".join(x for x in (shlex.join(self.megatron_args), inner) if x)
        return f"Case({inner})"

    def __eq__(self, other):
        return isinstance(other, Case) and self._args == other._args and self.fields == other.fields

    @classmethod
    def from_layout(cls, layout, **fields):
        """From a layout (or case) JSON file or dict, with fields over it."""
        return cls(layout=layout, **fields)

    @classmethod
    def from_hf_config(cls, path, **fields):
        """A Hugging Face ``config.json`` as the model (src/model/hf_import), with the other fields given."""
        path = os.fspath(path)
        if os.path.isdir(path):
            path = os.path.join(path, "config.json")
        return cls(model=path, **fields)

    @classmethod
    def from_megatron_args(cls, arguments, **fields):
        """Megatron-LM's own arguments (a string or a list): the parallelism, batch, precision and MoE flags moesim
        knows under Megatron-LM's names become the layout; the rest (learning rate, paths, model shape...) are left
        out and listed in ``case.ignored``. ``model`` and ``system`` come as keywords."""
        tokens = shlex.split(arguments) if isinstance(arguments, str) else [_cli._scalar("arguments", a) for a in arguments]
        table = _cli.options("run")
        allowed = _cli.case_flags()
        args, ignored = [], []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            i += 1
            if not token.startswith("--"):
                ignored.append(token)
                continue
            name, eq, value = token[2:].partition("=")
            values = []
            while not eq and i < len(tokens) and not tokens[i].startswith("--"):
                values.append(tokens[i])
                i += 1
            opt = table.get(name)
            if opt is None or name not in allowed or opt.bare:
                ignored.append(token if not values else f"{token} {' '.join(values)}")
                continue
            if eq:
                args.append(f"--{name}={value}")
            elif opt.optional_value and not values:
                args.append(f"--{name}")
            else:
                args += [f"--{name}"] + values
        case = cls(**fields)
        case.megatron_args, case.ignored = args, ignored
        case._args = args + case._args
        return case
