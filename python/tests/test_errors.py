"""Errors arrive as Python exceptions by class, with the command line's messages."""

import pytest

import moesim
from conftest import cli


QWEN = dict(model="qwen3-30b-a3b", system="dgx-h100", gpus=16, gbs=256, seq=4096, precision="bf16")


def test_unknown_model_is_bad_input_with_did_you_mean():
    with pytest.raises(moesim.BadInput) as e:
        moesim.run(moesim.Case(**QWEN), system="dgx-h10")
    code, _, err = cli("run", "--model", "qwen3-30b-a3b", "--system", "dgx-h10", "--gpus", "16", "--gbs", "256",
                       "--seq", "4096", "--precision", "bf16", expect=2)
    assert e.value.exit_code == code == 2
    assert e.value.message in err and "did you mean" in e.value.message.lower()


def test_infeasible_layout_carries_every_reason():
    with pytest.raises(moesim.InfeasibleLayout) as e:
        moesim.run(tp=3, ep=7)
    code, _, err = cli("run", "--tp", "3", "--ep", "7", expect=3)
    assert e.value.reasons and all(line in err for line in e.value.reasons)
    assert len(e.value.reasons) >= 2


def test_memory_that_does_not_fit_returns_with_reasons():
    m = moesim.memory(moesim.Case(**QWEN, ep=8))  # 81 GiB on an 80 GB H100
    assert m.fits is False and m.reasons
    assert m.to_dict()["fits"] is False


def test_usage_errors():
    with pytest.raises(moesim.UsageError, match="did you mean"):
        moesim.run(tensor_parallel=2)
    with pytest.raises(moesim.UsageError):
        moesim.run(top=3)  # a search option
    with pytest.raises(moesim.UsageError):
        moesim.Case(json=True)
    with pytest.raises(moesim.UsageError, match="set by this function"):
        moesim.run(json=True)
    with pytest.raises(moesim.UsageError):
        moesim.run(tp=[object()])
    with pytest.raises(moesim.UsageError):
        moesim.sweep(vary={})
    with pytest.raises(moesim.UsageError) as e:
        moesim.run(param={"no_such_parameter": 1})
    assert isinstance(e.value, ValueError) or e.value.exit_code in (1, 2)


def test_bad_values_are_reported_by_the_cli():
    with pytest.raises(moesim.BadInput) as e:
        moesim.run(dispatcher="alltoal")
    assert "alltoall" in e.value.message  # the did-you-mean


def test_notes_arrive_as_warnings():
    with pytest.warns(moesim.MoesimNote):
        # 61 layers over 16 virtual stages: the CLI announces the pipeline layout it uses
        moesim.estimate(model="deepseek-v3", system="gb300-nvl72", gpus=256, pp=2, vpp=8, ep=32, gbs=4096, seq=4096,
                        precision="mxfp8")
