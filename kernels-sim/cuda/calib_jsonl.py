"""Shared pieces of the Python calibration suites (calib_attention.py, calib_host.py): the record format of the
CUDA program (calib_record.cpp; kernels-sim/data/README.md), the device description, nearest-rank statistics,
the time budget and the rehearsal device. Imports torch only when a real run asks for the device."""

import datetime
import json
import os
import platform
import subprocess
import time

START = time.monotonic()  # the process's start, before torch is imported: budgets count from here

# The source field of rehearsal records; `moesim fit` refuses records whose source starts with "REHEARSAL".
REHEARSAL_SOURCE = "REHEARSAL {}: fake timings from a formula, NOT a measurement"
# The written_at stamp of every rehearsal line (calib_rehearsal.cpp's): plainly not a real time.
REHEARSAL_WRITTEN_AT = "1970-01-01T00:00:00.000Z"


def utc_now_ms():
    """The current UTC time with milliseconds, "2026-12-04T03:01:02.123Z" (calib_record.cpp's utc_now_ms)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + "{:03d}Z".format(now.microsecond // 1000)


def stats_us(samples_us):
    """Nearest-rank median, p10, p90 (the C++ program's summarise_ms), rounded to 4 decimals as it prints them."""
    s = sorted(samples_us)
    at = lambda q: s[int(q * (len(s) - 1) + 0.5)]
    return {"median": round(at(0.5), 4), "p10": round(at(0.1), 4), "p90": round(at(0.9), 4)}


def line(record):
    """One JSONL line, keys in the order given (the order the C++ writer uses)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def _nvidia_smi(fields):
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader,nounits", "-i", "0"],
                             capture_output=True, text=True, timeout=20)
        return [v.strip() for v in out.stdout.strip().split(",")] if out.returncode == 0 else []
    except (OSError, subprocess.SubprocessError):
        return []


def device(torch):
    """gpu and software objects of the records, and the run date, for device 0."""
    p = torch.cuda.get_device_properties(0)
    gpu = {"name": p.name, "sm_count": p.multi_processor_count}
    smi = _nvidia_smi("clocks.max.sm,clocks.max.memory,driver_version")
    driver = ""
    if len(smi) == 3:
        for key, value in (("sm_clock_mhz", smi[0]), ("mem_clock_mhz", smi[1])):
            try:
                gpu[key] = float(value)
            except ValueError:
                pass
        driver = smi[2]
    gpu["compute_capability"] = "{}.{}".format(p.major, p.minor)
    software = {}
    if driver:
        software["driver"] = driver
    software["cuda"] = torch.version.cuda or ""
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    if cudnn:
        software["cudnn"] = str(cudnn)
    software["torch"] = torch.__version__
    software["python"] = platform.python_version()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return gpu, software, date, getattr(p, "L2_cache_size", 50 << 20)


def rehearsal_device():
    """The device a rehearsal pretends to run on (the C++ rehearsal's): an H200's name and SM count."""
    gpu = {"name": "NVIDIA H200", "sm_count": 132, "sm_clock_mhz": 1980.0, "mem_clock_mhz": 3201.0,
           "compute_capability": "9.0"}
    software = {"driver": "REHEARSAL", "cuda": "REHEARSAL", "torch": "REHEARSAL"}
    return gpu, software, "1970-01-01T00:00:00Z"


class Budget:
    """Seconds from the process's start (torch's import included) after which no new configuration starts (the
    rest are written as skipped)."""

    def __init__(self, seconds):
        self.end = START + seconds
        self.seconds = seconds

    def spent(self):
        return time.monotonic() > self.end


class Output:
    """Appends lines to a JSONL file (flushed per line), or writes them to stdout for a rehearsal. Each line gets
    "written_at" as its last key: the UTC time it was written (utc_now_ms), or the rehearsal's fixed stamp, so
    clocks.csv samples can be matched to records (the configuration ran since the previous line's stamp)."""

    def __init__(self, path, written_at=utc_now_ms):
        self.f = open(path, "a", encoding="utf-8") if path else None
        self.written_at = written_at
        self.written = 0
        self.skipped = 0

    def put(self, record):
        record = dict(record)
        record["written_at"] = self.written_at()
        text = line(record) + "\n"
        if self.f:
            self.f.write(text)
            self.f.flush()
        else:
            print(text, end="", flush=True)
        if "skipped" in record:
            self.skipped += 1
        else:
            self.written += 1


def error_text(e):
    """A skip record's reason: the exception's type and message, on one line, at most 400 characters."""
    text = "{}: {}".format(type(e).__name__, e).replace("\n", " ")
    return text[:400]


def cpu_description():
    model = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for row in f:
                if row.startswith("model name"):
                    model = row.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"model": model, "logical_cpus": os.cpu_count() or 0}


def main(doc, print_plan, rehearse, run):
    """The command line both Python suites share: --out FILE | --plan | --rehearse, with --quick and --budget-s."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", help="JSONL file to append records to")
    mode.add_argument("--plan", action="store_true", help="print the configurations and a time estimate")
    mode.add_argument("--rehearse", action="store_true", help="FAKE-timed records on stdout (format sample)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budget-s", type=float, default=1e9,
                    help="start nothing new after this many seconds from the process's start")
    a = ap.parse_args()
    if a.plan:
        print_plan(a.quick)
    elif a.rehearse:
        rehearse(a.quick)
    else:
        run(a.out, a.quick, a.budget_s)
    return 0
