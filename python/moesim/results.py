"""Results as objects: the JSON a subcommand prints with ``--json``, with its keys as attributes.

``to_dict()`` returns that JSON as Python data, field for field what `moesim <subcommand> --json` prints;
nested objects are results too (``report.breakdown.compute``, ``report.band.step_time_s``)."""

import copy
import difflib
import io


def _wrap(value):
    if isinstance(value, dict):
        return Result(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class Result:
    """One JSON object of the command line's output, read through attributes or ``result["key"]``."""

    def __init__(self, data, text=None):
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_text", text)

    def __getattr__(self, name):
        data = object.__getattribute__(self, "_data")
        if name in data:
            return _wrap(data[name])
        close = difflib.get_close_matches(name, list(data), n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else f"; it has {', '.join(data)}"
        raise AttributeError(f"{type(self).__name__} has no field {name!r}{hint}")

    def __setattr__(self, name, value):
        raise AttributeError("results are read-only; to_dict() gives a copy to change")

    def __getitem__(self, key):
        return _wrap(self._data[key])

    def __contains__(self, key):
        return key in self._data

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._data))

    def keys(self):
        return self._data.keys()

    def to_dict(self):
        """The fields and numbers of the CLI's --json output (a copy)."""
        return copy.deepcopy(self._data)

    def __eq__(self, other):
        return isinstance(other, Result) and self._data == other._data

    def __repr__(self):
        shown = {k: v for k, v in self._data.items() if not isinstance(v, (dict, list))}
        inner = ", ".join(f"{k}={v!r}" for k, v in list(shown.items())[:8])
        return f"{type(self).__name__}({inner}{', ...' if len(self._data) > len(shown) or len(shown) > 8 else ''})"


class StepReport(Result):
    """`moesim run --json` / `estimate --json`: step time, tokens/s/GPU, TFLOPS, memory, the breakdown of the
    critical rank's time, and the error band (``band``) from the bundled measurements."""


class Memory(Result):
    """`moesim memory --json`: per pipeline rank the bytes per GPU; ``fits`` and, when it does not, ``reasons``."""

    @property
    def reasons(self):
        return object.__getattribute__(self, "_text") or []


class _Table(Result):
    _rows_key = None

    def to_dataframe(self):
        """The rows as a pandas DataFrame (nested fields as dotted columns)."""
        import pandas

        return pandas.json_normalize(self._data[self._rows_key])


class SearchResult(_Table):
    """`moesim search --json`: the ranking (best first, the verified ones with ``simulated``), the counts of
    candidates and why they were pruned, each layout's band and its chance to be faster than rank 1."""

    _rows_key = "ranking"


class Validation(_Table):
    """`moesim validate --json`: the rows (measured and predicted) and the summary."""

    _rows_key = "rows"


class Sweep:
    """`moesim sweep`'s CSV: one row per point; ``to_dataframe()``, ``rows`` (dicts of text) and ``csv``."""

    def __init__(self, csv):
        self.csv = csv

    @property
    def rows(self):
        import csv

        return list(csv.DictReader(io.StringIO(self.csv)))

    def to_dataframe(self):
        import pandas

        return pandas.read_csv(io.StringIO(self.csv))

    def __len__(self):
        return max(0, self.csv.count("\n") - 1)

    def __repr__(self):
        return f"Sweep({len(self)} points)"


class StageLayout:
    """`moesim layout`'s report: ``pp_layout`` (the chosen --pipeline-model-parallel-layout) and ``text``."""

    def __init__(self, text):
        self.text = text
        self.pp_layout = None
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("chosen:") and i + 1 < len(lines):
                self.pp_layout = lines[i + 1].split("--pipeline-model-parallel-layout", 1)[1].strip().strip('"')
                break

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"StageLayout(pp_layout={self.pp_layout!r})"
