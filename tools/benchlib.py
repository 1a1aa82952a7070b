"""What the tools/bench-* scripts share: finding the build, timing a whole
process, and counting its heap allocations.

  binary(name)         the built tools/vramsim (or another target's path)
  measure(cmd)         wall s, CPU s (user + system), peak RSS bytes of one run
  allocations(cmd)     heap allocations and bytes asked for, over one run
                       with build/bench/libvramsim_alloc_count.so preloaded,
                       or, for the statically linked tools/vramsim, of its
                       counting twin build/bench/vramsim_alloc_counted (None
                       where neither counts); a separate run, so the timings
                       are not taken with it
"""
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_dir():
    build = os.environ.get("VRAMSIM_BUILD", "./build")
    if "VRAMSIM_BUILD" not in os.environ and not os.path.isdir(build):
        build = os.path.join(ROOT, "build")
    return build


def binary(rel="tools/vramsim", target="vramsim", who="bench"):
    path = os.path.join(build_dir(), rel)
    if not os.access(path, os.X_OK):
        sys.exit(f"{who}: {path} not found; build it first:\n  cmake --build {build_dir()} --target {target}")
    return path


def measure(cmd, who="bench", env=None, ok=(0,)):
    """Runs cmd; returns (wall seconds, CPU seconds, peak RSS bytes)."""
    start = time.monotonic()
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        sys.exit(f"{who}: {' '.join(cmd)} exited {code}\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def alloc_library():
    path = os.path.join(build_dir(), "bench", "libvramsim_alloc_count.so")
    return path if os.path.exists(path) else None


def counted_twin(program):
    """The counting twin of a statically linked tools/vramsim (which no
    preloaded library can count), or None."""
    if os.path.realpath(program) != os.path.realpath(os.path.join(build_dir(), "tools", "vramsim")):
        return None
    twin = os.path.join(build_dir(), "bench", "vramsim_alloc_counted")
    return twin if os.access(twin, os.X_OK) else None


def allocations(cmd, who="bench", ok=(0,)):
    """(allocations, bytes) of one run of cmd, summed over its processes;
    None where nothing counts them (the counting library or twin not built)."""
    twin = counted_twin(cmd[0])
    lib = alloc_library()
    if not twin and not lib:
        return None
    with tempfile.TemporaryDirectory(prefix="vramsim-allocs-") as d:
        out = os.path.join(d, "counts")
        if twin:
            cmd = [twin] + list(cmd[1:])
            env = dict(os.environ, VRAMSIM_ALLOC_COUNT_FILE=out)
        else:
            env = dict(os.environ, LD_PRELOAD=lib, VRAMSIM_ALLOC_COUNT_FILE=out)
        measure(cmd, who, env, ok)
        if not os.path.exists(out):  # a static program without its twin
            return None
        calls = nbytes = 0
        with open(out) as f:
            for line in f:
                _, c, _, b = line.split()
                calls += int(c)
                nbytes += int(b)
        return calls, nbytes


def allocs_text(counts):
    """The allocation count as a table cell: '1.23M', or '-' without one."""
    if counts is None:
        return "-"
    n = counts[0]
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)
