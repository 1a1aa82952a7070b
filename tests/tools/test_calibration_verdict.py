#!/usr/bin/env python3
"""The fidelity loop's verdict (tools/calibration-loop): a phase that
`vramsim live --emulate-boot` draws from the scenario reads "emulated",
never "met", however close the figures; deploy -> RUNNING, which contains
such phases, says so; a lived phase keeps its verdict."""
import importlib.machinery
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
loader = importlib.machinery.SourceFileLoader("calibration_loop", os.path.join(ROOT, "tools", "calibration-loop"))
spec = importlib.util.spec_from_loader("calibration_loop", loader)
loop = importlib.util.module_from_spec(spec)
loader.exec_module(loop)

failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, expected {want!r}")


close = (12.0, 0.01, (-0.02, 0.03), 5)  # live median, error, interval, runs: within 5 %, resolved
for phase in ("node_boot", "registration", "runtime_env_install", "replica_init"):
    check(phase, loop.verdict(*close, name=phase)[0], "emulated")
check("queue_wait", loop.verdict(*close, name="queue_wait")[0], "met")
check("cancel", loop.verdict(*close, name="cancel")[0], "met")
check("deploy -> RUNNING", loop.verdict(*close, name="deploy -> RUNNING")[0], "met (partly emulated)")
check("idle -> cancelled", loop.verdict(*close, name="idle -> cancelled")[0], "met")
check("missed stays missed", loop.verdict(12.0, 0.2, (0.1, 0.3), 5, name="queue_wait")[0], "missed")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok")
