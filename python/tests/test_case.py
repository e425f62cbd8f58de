"""Cases from keywords, a layout file or dict, Megatron-LM's argument string and a Hugging Face config.json."""

import json

import pytest

import moesim
from conftest import FIXTURES, cli_json

QWEN = dict(model="qwen3-30b-a3b", system="dgx-h100", gpus=16, gbs=256, seq=4096, precision="bf16")


def test_keywords_under_either_spelling_give_one_case():
    a = moesim.estimate(moesim.Case(**QWEN, tp=2, ep=8))
    b = moesim.estimate(moesim.Case(**QWEN, tensor_model_parallel_size=2, expert_model_parallel_size=8))
    assert a.to_dict() == b.to_dict()


def test_keywords_on_the_call_override_the_case():
    case = moesim.Case(**QWEN, ep=16)
    assert moesim.estimate(case, gbs=128).to_dict() == moesim.estimate(case.replace(gbs=128)).to_dict()
    assert case.fields["ep"] == 16  # the case itself is unchanged


def test_layout_dict_equals_layout_file(tmp_path):
    layout = {"gpus": 16, "tp": 1, "pp": 1, "ep": 16, "mbs": 1, "gbs": 256, "seq": 4096, "precision": "bf16"}
    path = tmp_path / "layout.json"
    path.write_text(json.dumps(layout))
    from_dict = moesim.Case.from_layout(layout, model="qwen3-30b-a3b", system="dgx-h100")
    from_file = moesim.Case.from_layout(path, model="qwen3-30b-a3b", system="dgx-h100")
    assert moesim.estimate(from_dict).to_dict() == moesim.estimate(from_file).to_dict()
    assert moesim.estimate(from_file).to_dict() == cli_json(
        "estimate", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--layout", path, "--json")


def test_megatron_arguments_keep_the_layout_and_list_the_rest():
    text = ("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 --expert-model-parallel-size 8 "
            "--micro-batch-size 1 --global-batch-size 256 --seq-length 4096 --lr 3e-4 --bf16 "
            "--moe-token-dispatcher-type alltoall --overlap-moe-expert-parallel-comm "
            "--train-iters 100 --data-path /data/a /data/b")
    case = moesim.Case.from_megatron_args(text, model="qwen3-30b-a3b", system="dgx-h100", gpus=16)
    assert "--lr 3e-4" in case.ignored and "--data-path /data/a /data/b" in case.ignored
    assert "--tensor-model-parallel-size" in case.megatron_args
    by_keywords = moesim.Case(model="qwen3-30b-a3b", system="dgx-h100", gpus=16, tp=2, pp=1, ep=8, mbs=1, gbs=256,
                              seq=4096, dispatcher="alltoall", a2a_overlap=True)
    got, want = moesim.estimate(case).to_dict(), moesim.estimate(by_keywords).to_dict()
    assert got["layout"] == want["layout"] and got["step_time_s"] == want["step_time_s"]


def test_megatron_arguments_as_a_list_and_replace_keeps_them():
    case = moesim.Case.from_megatron_args(["--expert-model-parallel-size", "16"], **QWEN)
    assert moesim.estimate(case.replace(gbs=128)).layout == moesim.estimate(case, gbs=128).layout


def test_hugging_face_config(tmp_path):
    hf = FIXTURES / "hf" / "llama3.1-8b"
    got = moesim.describe(str(hf / "config.json")).to_dict()
    assert got == cli_json("describe", "--model", hf / "config.json", "--json")
    case = moesim.Case.from_hf_config(hf, system="dgx-h100", gpus=8, gbs=64, seq=4096, precision="bf16")
    assert moesim.memory(case).fits in (True, False)


def test_case_command_reproduces_it():
    case = moesim.Case(**QWEN, ep=16)
    assert case.command("estimate").startswith("moesim estimate --model qwen3-30b-a3b")
    assert "--ep 16" in case.command()
