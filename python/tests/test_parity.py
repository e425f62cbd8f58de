"""The Python results equal `moesim ... --json` from the executable, field for field, on the golden scenarios
(tests/golden, tests/fixtures/predict), the default case and a what-if, for every subcommand with JSON output."""

import json

import pytest

import moesim
from conftest import FIXTURES, ROOT, cli, cli_json

SMALL_MOE = str(FIXTURES / "predict" / "small_moe.json")
GOLDEN = {
    "small_moe_h100x8": dict(model=SMALL_MOE, system="dgx-h100", layout=str(FIXTURES / "predict" / "h100x8.json")),
    "small_moe_gb200x64": dict(model=SMALL_MOE, system="gb200-nvl72",
                               layout=str(FIXTURES / "predict" / "gb200x64.json")),
}


def flags(fields):
    out = []
    for k, v in fields.items():
        out += ["--" + k.replace("_", "-"), str(v)]
    return out


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_run_golden_scenarios_equal_the_cli(name):
    fields = GOLDEN[name]
    got = moesim.run(moesim.Case(**fields)).to_dict()
    assert got == cli_json("run", *flags(fields), "--json")


def test_golden_files_step_time_under_the_roofline():
    # tests/golden was written with the roofline kernel model (its kernel_cost_model field): the same case from
    # Python gives the same step time.
    golden = json.loads((ROOT / "tests" / "golden" / "small_moe_h100x8.json").read_text())
    r = moesim.run(moesim.Case(**GOLDEN["small_moe_h100x8"], kernel_model="roofline"))
    assert r.step_time_s == pytest.approx(golden["step_time_s"], rel=1e-9)
    assert r.breakdown.to_dict() == pytest.approx(golden["breakdown"], rel=1e-9, abs=1e-12)


def test_default_run_equals_the_cli_and_carries_band_and_breakdown():
    r = moesim.run()
    assert r.to_dict() == cli_json("run", "--json")
    assert r.step_time_s > 0
    assert r.band.step_time_s[0] <= r.step_time_s <= r.band.step_time_s[1]
    assert sum(r.breakdown.to_dict().values()) > 0


def test_what_if_and_band_option_equal_the_cli():
    got = moesim.run(cuda_graph="none", band=0.9).to_dict()
    assert got == cli_json("run", "--cuda-graph", "none", "--band", "0.9", "--json")


def test_scaling_list_equals_the_cli():
    got = moesim.run(gpus=[256, 512], gbs=[8192, 8192])
    assert [r.to_dict() for r in got] == cli_json("run", "--gpus", "256,512", "--gbs", "8192,8192", "--json")


def test_estimate_and_memory_equal_the_cli():
    fields = GOLDEN["small_moe_gb200x64"]
    assert moesim.estimate(moesim.Case(**fields)).to_dict() == cli_json("estimate", *flags(fields), "--json")
    assert moesim.memory(moesim.Case(**fields)).to_dict() == cli_json("memory", *flags(fields), "--json")
    assert moesim.memory().to_dict() == cli_json("memory", "--json")


def test_describe_equals_the_cli():
    assert moesim.describe("qwen3-30b-a3b").to_dict() == cli_json("describe", "--model", "qwen3-30b-a3b", "--json")


def test_validate_equals_the_cli():
    csv = str(FIXTURES / "cli" / "validate_3rows.csv")
    assert moesim.validate(csv=csv).to_dict() == cli_json("validate", "--csv", csv, "--json")


def test_search_equals_the_cli_but_wall_times():
    case = dict(model="qwen3-30b-a3b", system="dgx-h100", gpus=16, gbs=64, seq=4096, precision="bf16", tp=1, pp=1,
                cp=1)
    got = moesim.search(moesim.Case(**case), top=3, verify=1, progress=False).to_dict()
    want = cli_json("search", *flags(case), "--top", "3", "--verify", "1", "--json")
    got.pop("stage_seconds"), want.pop("stage_seconds")  # wall time of each stage
    assert got == want


def test_sweep_equals_the_cli():
    args = ["--model", SMALL_MOE, "--system", "dgx-h100", "--layout", GOLDEN["small_moe_h100x8"]["layout"]]
    got = moesim.sweep(moesim.Case(**GOLDEN["small_moe_h100x8"]), vary={"gbs": [32, 64], "seq": [2048, 4096]})
    assert got.csv == cli("sweep", *args, "--vary", "gbs=32,64", "--vary", "seq=2048,4096")[1]
    assert len(got.to_dataframe()) == 4


def test_catalog_lists_equal_the_cli():
    names = [line.split()[0] for line in cli("list", "models")[1].splitlines()]
    assert moesim.models() == names
    assert "gb300-nvl72" in moesim.systems()
    assert all("/" in p for p in moesim.parts())


def test_layout_and_trace(tmp_path):
    fields = GOLDEN["small_moe_gb200x64"]
    got = moesim.layout(moesim.Case(**fields), no_estimate=True)
    text = cli("layout", *flags(fields), "--no-estimate")[1]
    assert got.text == text and got.pp_layout and f'"{got.pp_layout}"' in text
    path = tmp_path / "step.json"
    r = moesim.trace(path, moesim.Case(**fields))
    assert r.to_dict() == cli_json("run", *flags(fields), "--json")
    assert json.loads(path.read_text())  # a Chrome trace


def test_tables_as_dataframes():
    csv = str(FIXTURES / "cli" / "validate_3rows.csv")
    v = moesim.validate(csv=csv)
    assert len(v.to_dataframe()) == len(v.to_dict()["rows"])
