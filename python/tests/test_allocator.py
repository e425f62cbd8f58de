"""The module's glibc malloc tuning (python/src/allocator.cpp) and its opt-out, seen from where a fresh process puts
a 16 MiB block: glibc's default serves it with mmap, the tuned heap (mmap threshold 32 MiB) from [heap]."""

import os
import subprocess
import sys

import pytest

PROBE = r"""
import ctypes, moesim
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
address = libc.malloc(16 << 20)
for line in open('/proc/self/maps'):
    span, rest = line.split(' ', 1)
    lo, hi = (int(x, 16) for x in span.split('-'))
    if lo <= address < hi:
        print('heap' if rest.rstrip().endswith('[heap]') else 'mapped')
        break
"""


def where_16_mib_lands(setting):
    env = dict(os.environ)
    env.pop("MOESIM_MALLOC_TUNING", None)
    if setting is not None:
        env["MOESIM_MALLOC_TUNING"] = setting
    p = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc/self/maps")
def test_tuning_is_on_by_default_and_off_when_asked():
    assert where_16_mib_lands(None) == "heap"
    assert where_16_mib_lands("1") == "heap"
    assert where_16_mib_lands("0") == "mapped"
