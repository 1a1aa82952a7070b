"""`import vramsim` against the command line: the same trace bytes, the same
summary as run --summary-json, the same request rows as --requests-csv, the
same sweep rows and plan answer, the same message for a bad scenario.

Run by ctest (tests/python/CMakeLists.txt) with VRAMSIM_CLI (the vramsim
binary) and VRAMSIM_SCENARIOS (the shipped scenarios) set and the module on
PYTHONPATH. Each test writes only inside its own tmp_path.
"""
import csv
import json
import math
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import vramsim

CLI = os.environ["VRAMSIM_CLI"]
SCENARIOS = os.environ["VRAMSIM_SCENARIOS"]


def scenario(name):
    return os.path.join(SCENARIOS, name)


# The CLI carries its own sanitizer runtime where it has one: the runtime a
# sanitizer build preloads into Python is not handed on to it.
CLI_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def cli(*args, cwd, ok=(0, 1)):
    p = subprocess.run([CLI, *args], cwd=cwd, capture_output=True, text=True, env=CLI_ENV)
    assert p.returncode in ok, p.stderr
    return p


def typed(column, cell):
    """A CSV cell typed as the module types it (None for empty)."""
    if column == "decision" or column.endswith("_slo"):
        return cell
    if cell == "":
        return None
    if column in ("all_held", "chosen", "slo_met"):
        return cell == "1"
    if column in ("seed", "seeds_run", "evaluated_as", "expectations_held", "expectations"):
        return int(cell)
    return float(cell)


def csv_rows(path, params):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        d = {}
        for k, v in r.items():
            d[k] = params[k](v) if k in params else typed(k, v)
        out.append(d)
    return out


# Shipped scenarios of each kind: a deploy race, a cold start, status lines,
# a CUDA out-of-memory, and serving traffic with a replica autoscaler.
SHIPPED = [
    "admission-in-flight.json",
    "cold-start-a100.json",
    "status-europa.json",
    "cuda-oom-a100.json",
    "serving-cold-start.json",
]


@pytest.mark.parametrize("name", SHIPPED)
def test_run_gives_the_clis_trace_summary_text_and_requests(name, tmp_path):
    p = cli("run", scenario(name), "--trace", "t.jsonl", "--summary-json", "s.json",
            "--requests-csv", "r.csv", cwd=tmp_path)
    r = vramsim.run(scenario(name))
    assert r.trace == (tmp_path / "t.jsonl").read_text()
    with open(tmp_path / "s.json") as f:
        assert r.summary == json.load(f)
    assert r.text == p.stdout
    assert r.all_held == (p.returncode == 0)
    # The request columns, row by row, as the CSV spells them.
    got = r.requests
    with open(tmp_path / "r.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(got["arrival_s"])
    for i, row in enumerate(rows):
        assert row["app"] == got["app"][i]
        assert float(row["arrival_s"]) == got["arrival_s"][i]
        for col in ("start_s", "end_s"):
            assert (row[col] == "" and math.isnan(got[col][i])) or float(row[col]) == got[col][i]
        assert (row["replica"] == "" and got["replica"][i] == -1) or int(row["replica"]) == got["replica"][i]
        assert (row["cold"] == "1") == bool(got["cold"][i])
        assert row["outcome"] == got["outcome"][i]


def test_requests_are_numpy_columns_and_frames_take_them(tmp_path):
    r = vramsim.run(scenario("serving-cold-start.json"))
    req = r.requests
    n = len(req["arrival_s"])
    assert n > 0
    for col, kind in (("arrival_s", "f"), ("start_s", "f"), ("end_s", "f"), ("replica", "i"), ("cold", "b"),
                      ("app", "O"), ("outcome", "O")):
        assert isinstance(req[col], np.ndarray) and req[col].dtype.kind == kind, col
        assert len(req[col]) == n
    # The string columns share one str object per distinct value: none is
    # made per request.
    for col in ("app", "outcome"):
        assert all(type(x) is str for x in req[col])
        assert len(set(map(id, req[col]))) == len(set(req[col])), col
    df = pd.DataFrame(req)
    done = df[df.outcome == "completed"]
    # The summary's figures from the rows: counts, and the mean latency.
    assert len(done) == r.summary["req_completed"]
    assert (df.outcome == "refused").sum() == r.summary["req_refused"]
    assert df.cold.sum() == r.summary["req_cold"]
    assert (done.end_s - done.arrival_s).mean() == pytest.approx(r.summary["req_latency_mean_s"], rel=1e-9)
    ev = pd.DataFrame(r.events)
    assert list(ev.columns[:2]) == ["t", "kind"]
    assert ev.kind.iloc[0] == "run_started" and ev.kind.iloc[-1] == "run_ended"


def test_compare_rows_are_the_summaries_of_each_policy(tmp_path):
    rows = vramsim.compare(scenario("admission-in-flight.json"), ["legacy", "fixed", "fixed,admission=legacy"])
    assert [r["policies"] for r in rows] == ["legacy", "fixed", "fixed,admission=legacy"]
    for row in rows:
        cli("run", scenario("admission-in-flight.json"), "--policies", row["policies"], "--summary-json", "s.json",
            cwd=tmp_path)
        with open(tmp_path / "s.json") as f:
            assert row == json.load(f)
    # The race the scenario pins: legacy rejects one deploy, fixed none.
    assert rows[0]["rejected_deployments"] > rows[1]["rejected_deployments"]


def test_sweep_rows_are_the_clis_csv(tmp_path):
    name = scenario("cold-start-a100.json")
    cli("sweep", name, "--set", "cluster.max_workers=1,2", "--set", "policies=legacy,fixed", "--seeds", "1..3",
        "-j", "2", "-o", "s.csv", cwd=tmp_path, ok=(0,))
    rows = vramsim.sweep(name, set={"cluster.max_workers": [1, 2], "policies": ["legacy", "fixed"]},
                         seeds=range(1, 4), jobs=2)
    assert rows == csv_rows(tmp_path / "s.csv", {"cluster.max_workers": int, "policies": str})
    assert len(rows) == 12
    # The CLI's spelling of a dimension works too.
    assert vramsim.sweep(name, set={"cluster.max_workers": "1,2", "policies": "legacy,fixed"},
                         seeds="1..3") == rows


def test_plan_gives_the_clis_answer_and_rows(tmp_path):
    name = scenario("serving/mmc-plan.json")
    args = ["--vary", "apps.0.replicas=1..8", "--monotone", "apps.0.replicas", "--seeds", "1..4",
            "--objective", "replica_seconds", "--slo", "req_wait_mean_s<=0.01"]
    p = cli("plan", name, *args, "-o", "plan.csv", cwd=tmp_path, ok=(0,))
    got = vramsim.plan(name, slo="req_wait_mean_s<=0.01", vary={"apps.0.replicas": "1..8"},
                       monotone="apps.0.replicas", seeds=range(1, 5), objective="replica_seconds")
    assert got["rows"] == csv_rows(tmp_path / "plan.csv", {"apps.0.replicas": int})
    assert f"chosen: apps.0.replicas={got['chosen']['apps.0.replicas']}" in p.stdout.splitlines()
    # Erlang C: 5 replicas of 25/s x 100 ms keep the mean wait under 10 ms.
    assert got["chosen"]["apps.0.replicas"] == 5
    assert got["runner_up"]["apps.0.replicas"] == 6
    assert got["combinations"] == 8 and got["runs"] < 8 * 4
    assert got["hopeless"] == []
    # Erlang C: up to 3 replicas the wait never gets under 10 ms; the CLI
    # names the line, with spaces around the SLO's operator.
    few = ["--vary", "apps.0.replicas=1..3", "--monotone", "apps.0.replicas", "--seeds", "1..4",
           "--objective", "replica_seconds", "--slo", "req_wait_mean_s <= 0.01"]
    p = cli("plan", name, *few, cwd=tmp_path, ok=(1,))
    got = vramsim.plan(name, slo="req_wait_mean_s <= 0.01", vary={"apps.0.replicas": "1..3"},
                       monotone="apps.0.replicas", seeds=range(1, 5), objective="replica_seconds")
    assert got["chosen"] is None and [h["apps.0.replicas"] for h in got["hopeless"]] == [3]
    assert any(line.startswith("never meets the SLOs at any apps.0.replicas up to 3 (req_wait_mean_s: ")
               for line in p.stdout.splitlines()), p.stdout


def test_a_bad_scenario_raises_the_clis_message(tmp_path):
    with open(scenario("smoke.json")) as f:
        doc = json.load(f)
    doc["cluster"]["max_workers"] = "x"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    p = cli("run", str(bad), cwd=tmp_path, ok=(2,))
    with pytest.raises(vramsim.ScenarioError) as e:
        vramsim.load(str(bad))
    assert p.stderr == f"vramsim: invalid scenario: {e.value}\n"
    assert e.value.file == str(bad) and e.value.path == "$.cluster.max_workers"
    assert isinstance(e.value, ValueError)
    # A dict is judged the same way, named as given.
    with pytest.raises(vramsim.ScenarioError) as e:
        vramsim.load(doc, file="mine.json")
    assert str(e.value).startswith("mine.json: $.cluster.max_workers: expected an integer")
    with pytest.raises(vramsim.SweepError):
        vramsim.sweep(scenario("smoke.json"), set={"cluster.max_wokers": [2]})
    with pytest.raises(vramsim.PlanError):
        vramsim.plan(scenario("smoke.json"), slo="no_such_metric<=1")
    with pytest.raises(ValueError, match="policies"):
        vramsim.run(scenario("smoke.json"), policies="fixed,admission=nonesuch")


def test_a_scenario_edited_as_a_dict_runs_as_the_edited_file(tmp_path):
    s = vramsim.load(scenario("cold-start-a100.json"))
    d = s.to_dict()
    d["cluster"]["max_workers"] = 2
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(d))
    cli("run", str(edited), "--summary-json", "s.json", cwd=tmp_path)
    with open(tmp_path / "s.json") as f:
        want = json.load(f)
    got = vramsim.run(vramsim.load(d, file=str(edited))).summary
    assert got == want
    assert vramsim.run(s, seed=7).seed == 7
    assert s.to_dict() != d, "to_dict hands out a copy"


def test_status_at_is_the_clis_status_json(tmp_path):
    name = scenario("status-europa.json")
    cli("run", name, "--status-at", "200s", "--status-at", "90s", "--status-json", "st.json", cwd=tmp_path)
    with open(tmp_path / "st.json") as f:
        snaps = json.load(f)
    at = {s["t"]: s for s in snaps if s["source"] == "--status-at"}
    asked = vramsim.run(name, status_at=["200s", 90])
    assert asked.status_at("200s") == at[200_000_000]
    assert asked.status_at(90.0) == at[90_000_000]
    # A time the run did not stop at: the same run again, the same figures.
    assert vramsim.run(name).status_at("200s") == at[200_000_000]


def test_horizon_and_gpu_prices_change_the_run():
    name = scenario("serving-cold-start.json")
    assert vramsim.run(name, horizon="10m").summary["end_time_s"] <= 600
    assert vramsim.run(name).summary["end_time_s"] > 600
    # Every GPU of the run is an A100-SXM4-80GB: the cost is its GPU-hours x the price.
    priced = vramsim.run(name, gpu_prices={"A100-SXM4-80GB": 10.0}).summary
    assert priced["cost_usd"] == pytest.approx(10.0 * priced["gpu_hours_allocated"], rel=1e-12)
    with pytest.raises(ValueError, match="gpu_prices"):
        vramsim.run(name, gpu_prices={"NoSuchGPU": 1.0})
    with pytest.raises(ValueError, match="horizon"):
        vramsim.run(name, horizon="-5s")


def test_ctrl_c_stops_a_long_sweep_with_keyboard_interrupt(tmp_path):
    script = textwrap.dedent(f"""
        import sys, vramsim
        try:
            print("started", flush=True)
            vramsim.sweep({scenario("cold-start-a100.json")!r}, set={{"cluster.max_workers": [1, 2, 3, 4]}},
                          seeds=range(1, 100001), jobs=1)
            print("finished")
        except KeyboardInterrupt:
            print("interrupted")
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    assert p.stdout.readline().strip() == "started"
    import time
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert out.strip() == "interrupted"
    assert p.returncode == 0
    assert os.listdir(tmp_path) == [], "nothing half-written"
