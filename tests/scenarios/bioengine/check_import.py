#!/usr/bin/env python3
"""vramsim import bioengine on the test apps, by the values their decorators
state (tests/scenarios/bioengine/model-runner, written in the shape of
BioEngine's model-runner) and by Ray's reading of them.

  check_import.py VRAMSIM

It writes only in a temporary folder of its own.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
vramsim = sys.argv[1]
work_dir = tempfile.TemporaryDirectory(prefix="import-bioengine-")
work = work_dir.name
failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s: got %r, expected %r" % (what, got, want))


def imported(*extra):
    out = os.path.join(work, "model-runner.json")
    p = subprocess.run([vramsim, "import", "bioengine", os.path.join(here, "model-runner"), "-o", out, *extra],
                       capture_output=True, text=True)
    check("exit status of import " + " ".join(extra), p.returncode, 0)
    with open(out) as f:
        return json.load(f), p.stderr, out


s, err, path = imported()
# One application of two deployments, the entry its ingress, calling the
# runtime its __init__ type hint names.
check("one application", [a["id"] for a in s["apps"]], ["test-model-runner"])
deployments = {d["name"]: d for d in s["apps"][0]["deployments"]}
check("deployments, the entry first", [d["name"] for d in s["apps"][0]["deployments"]],
      ["EntryDeployment", "RuntimeDeployment"])
entry = deployments["EntryDeployment"]
runtime = deployments["RuntimeDeployment"]
check("the entry calls the runtime", entry.get("calls"), ["RuntimeDeployment"])
check("the runtime calls nothing", "calls" in runtime, False)
# The entry: one replica, 30 requests queued past which the handle refuses,
# 4 * 1024 MB (arithmetic on literals), the decorator's max_ongoing_requests 10.
check("entry max_replicas", entry["serve"]["autoscaling_config"]["max_replicas"], 1)
check("entry max_queued_requests", entry["serve"]["max_queued_requests"], 30)
check("entry memory_mb", entry["memory_mb"], 4096)
check("entry max_ongoing_requests", entry["serve"]["max_ongoing_requests"], 10)
check("entry GPU", "gpu_memory_mb" in entry, False)
# The runtime: a whole GPU, 12 GiB, 1 to 2 replicas, Ray's autoscaling as stated.
check("runtime gpu_memory_mb", runtime.get("gpu_memory_mb"), -1)
check("runtime memory_mb", runtime["memory_mb"], 12288)
check("runtime max_ongoing_requests", runtime["serve"]["max_ongoing_requests"], 10)
c = runtime["serve"]["autoscaling_config"]
for key, want in [("min_replicas", 1), ("max_replicas", 2), ("metrics_interval_s", 2.0), ("look_back_period_s", 10.0),
                  ("upscale_delay_s", 0.0), ("downscale_delay_s", 600.0)]:
    check("runtime " + key, c[key], want)
# Ray ignores target_num_ongoing_requests_per_replica since 16b024323e: the
# default target 2 holds unless --legacy-names reads it as Ray once did.
check("runtime target (current Ray)", c["target_ongoing_requests"], 2.0)
check("the ignored name is said", "target_num_ongoing_requests_per_replica" in err, True)
check("the pip call is named as not read", "EntryDeployment.pip (line 16) = _requirements('requirements-entry.txt')" in err,
      True)
legacy, _, _ = imported("--legacy-names")
check("runtime target (--legacy-names)",
      {d["name"]: d for d in legacy["apps"][0]["deployments"]}["RuntimeDeployment"]["serve"]["autoscaling_config"]
      ["target_ongoing_requests"], 3.0)
# It runs: both apps admitted and RUNNING.
p = subprocess.run([vramsim, "run", path], capture_output=True, text=True)
check("exit status of run", p.returncode, 0)
check("both apps admitted and RUNNING", len(re.findall(r"admitted +RUNNING ", p.stdout)), 2)
# A module that does not parse: exit 2, naming the file and the line.
p = subprocess.run([vramsim, "import", "bioengine", os.path.join(here, "broken-syntax")], capture_output=True, text=True)
check("exit status on a syntax error", p.returncode, 2)
check("the syntax error's place", "broken-syntax/main.py: line 4: invalid Python" in p.stderr, True)
# No such folder: exit 2 naming the manifest.
p = subprocess.run([vramsim, "import", "bioengine", os.path.join(work, "nowhere")], capture_output=True, text=True)
check("exit status without a manifest", p.returncode, 2)
check("the missing manifest named", "nowhere/manifest.yaml" in p.stderr, True)

for f in failures:
    print("FAILED " + f)
sys.exit(1 if failures else 0)
