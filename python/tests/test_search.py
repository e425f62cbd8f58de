"""search: progress reports, the GIL released, stopping on Ctrl-C or an exception from the callback."""

import os
import signal
import threading
import time

import pytest

import moesim

# About 24,000 candidates past the screens, a second or two.
CASE = moesim.Case(model="qwen3-30b-a3b", system="dgx-h100", gpus=16, gbs=64, seq=4096, precision="bf16", tp=1, pp=1,
                   cp=1)


def test_progress_reaches_the_total():
    seen = []
    r = moesim.search(CASE, top=3, verify=1, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] and seen[-1][1] > 0
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    df = r.to_dataframe()
    assert len(df) == 3 and "estimate.step_time_s" in df.columns


def test_other_threads_run_during_a_search():
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    start = time.monotonic()
    moesim.search(CASE, top=3, verify=1, jobs=1, progress=False)
    elapsed = time.monotonic() - start
    stop.set()
    t.join()
    during = [x for x in ticks if start < x < start + elapsed]
    # Holding the GIL would leave the thread ~one tick per 5 ms switch interval at most.
    assert elapsed < 0.05 or len(during) > elapsed / 0.005


def test_an_exception_from_the_callback_stops_the_search():
    class Stop(Exception):
        pass

    def callback(done, total):
        raise Stop()

    with pytest.raises(Stop):
        moesim.search(CASE, top=3, progress=callback)
    assert moesim.estimate(CASE, ep=16).step_time_s > 0  # the module still works afterwards


def test_ctrl_c_stops_the_search_with_keyboard_interrupt():
    calls = []

    def callback(done, total):
        calls.append(done)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C would; raised at the next block

    with pytest.raises(KeyboardInterrupt):
        moesim.search(CASE, top=3, progress=callback)
    assert len(calls) <= 2  # stopped at the next block, not at the end


def test_default_bar_draws_nothing_off_a_terminal(capsys):
    moesim.search(CASE, top=2, verify=0)
    assert capsys.readouterr().err == ""
