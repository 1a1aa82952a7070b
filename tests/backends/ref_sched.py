#!/usr/bin/env python3
"""A small, independent reference of FCFS and EASY backfilling on a
partition of N processors, written from the definitions in docs/workloads.md,
to cross-check `vramsim replay` job by job.

  ref_sched.py TRACE.swf|WORKLOAD.json --procs N --scheduler fcfs|easy [--limit K]
               [--jobs-csv OUT.csv] [--compare VRAMSIM]

With --compare it runs `VRAMSIM replay` on the same input and exits 1 on the
first job whose submit, start or end differs (0 when every job agrees).
Plain lists and linear scans: slow, but easy to check by eye.
"""
import argparse
import os
import subprocess
import sys
import tempfile


def read_swf(path, limit):
    """The jobs of an SWF file, in file order; comments, blank lines and the
    partial-execution lines of checkpointed jobs (status 2, 3, 4) skipped."""
    jobs = []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith(";"):
                continue
            x = s.split()
            if int(x[10]) in (2, 3, 4):
                continue
            jobs.append({"id": int(x[0]), "submit": int(x[1]), "run": int(x[3]),
                         "alloc": int(x[4]), "req_procs": int(x[7]), "req_time": int(x[8])})
            if limit and len(jobs) == limit:
                break
    return jobs


def to_ms(seconds):
    """A time of seconds (a double) to whole milliseconds, half away from
    zero as C's llround does."""
    v = seconds * 1000
    whole = int(v)
    return whole + (1 if v - whole >= 0.5 else 0)


def read_batsim(path, limit, exact=False):
    """The jobs of a Batsim workload, as read_swf gives them but in
    milliseconds: subtime, delay and walltime are real numbers of seconds,
    kept to the millisecond (exact: as the trace writes them, unrounded
    seconds, the reference for --exact); walltime is the requested time and
    a hard limit; a job whose profile is not a delay has no run time."""
    import json
    with open(path) as f:
        doc = json.load(f)
    time = float if exact else to_ms
    jobs = []
    for j in doc["jobs"][:limit or None]:
        p = doc.get("profiles", {})[j["profile"]]
        run = time(p["delay"]) if p["type"] in ("delay", "DelayProfile") else -1
        wall = j.get("walltime", -1)
        wall = -1 if wall == -1 else (float(wall) if exact else max(1, to_ms(wall)))
        jobs.append({"id": int(j["id"]), "submit": time(j["subtime"]), "run": run,
                     "alloc": j["res"], "req_procs": j["res"], "req_time": wall, "limit": wall})
    return jobs


def replayable(jobs, n):
    """Jobs with a known run time (0 included) and 1..n processors (allocated,
    else requested)."""
    out = []
    for j in jobs:
        procs = j["alloc"] if j["alloc"] > 0 else j["req_procs"]
        if j["run"] < 0 or procs <= 0 or procs > n:
            continue
        estimate = j["req_time"] if j["req_time"] > 0 else j["run"]
        limit = j.get("limit", -1)
        out.append({"id": j["id"], "submit": j["submit"], "procs": procs, "estimate": estimate,
                    "run": min(j["run"], limit) if limit > 0 else j["run"]})  # killed at its limit
    return out


def simulate(jobs, n, policy):
    """Sets "start" and "end" on every job."""
    order = sorted(range(len(jobs)), key=lambda k: (jobs[k]["submit"], k))
    queue = []    # waiting jobs, in submit order
    running = []  # jobs holding processors
    free = n
    nxt = 0
    while nxt < len(order) or queue or running:
        times = [j["end"] for j in running]
        if nxt < len(order):
            times.append(jobs[order[nxt]]["submit"])
        now = min(times)
        # Everything that happens at `now` first: ends, then arrivals.
        for j in [j for j in running if j["end"] == now]:
            running.remove(j)
            free += j["procs"]
        while nxt < len(order) and jobs[order[nxt]]["submit"] == now:
            queue.append(jobs[order[nxt]])
            nxt += 1

        def start(j):
            nonlocal free
            j["start"], j["end"] = now, now + j["run"]
            free -= j["procs"]
            running.append(j)

        # Both policies: start jobs from the front of the queue while they fit.
        while queue and queue[0]["procs"] <= free:
            start(queue.pop(0))
        if policy == "fcfs" or not queue:
            continue
        # EASY: the first waiting job gets a reservation at the earliest time
        # enough processors are free, if every running job ends at its
        # estimated end (start + estimate; now, for one already past it).
        head = queue[0]
        expected = sorted((max(j["start"] + j["estimate"], now), j["procs"]) for j in running)
        shadow, extra = None, None
        for t in sorted({e for e, _ in expected}):
            avail = free + sum(p for e, p in expected if e <= t)
            if avail >= head["procs"]:
                shadow, extra = t, avail - head["procs"]
                break
        # A later job may start now if it fits now and either is estimated
        # to end by the reservation or only uses processors the head will
        # not need then (which it then takes from that spare).
        for j in list(queue[1:]):
            if j["procs"] > free:
                continue
            if now + j["estimate"] <= shadow:
                pass
            elif j["procs"] <= extra:
                extra -= j["procs"]
            else:
                continue
            queue.remove(j)
            start(j)


def seconds(t, ms):
    """A time as vramsim's --jobs-csv writes it: whole seconds, or for a
    millisecond trace seconds with three decimals."""
    return "%d" % t if not ms else "%d.%03d" % (t // 1000, t % 1000)


def rows(jobs, ms):
    return [("%d" % j["id"], seconds(j["submit"], ms), seconds(j["start"], ms), seconds(j["end"], ms)) for j in jobs]


def read_csv(path):
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines or lines[0] != "job_id,submit,start,end":
        raise SystemExit("ref_sched: %s: expected the header job_id,submit,start,end" % path)
    return [tuple(line.split(",")) for line in lines[1:]]


def vramsim_rows(a, expected):
    """vramsim replay's --jobs-csv rows for the same trace and options, or
    None (said) when it fails or replays another number of jobs than the
    reference's `expected`."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "jobs.csv")
        cmd = [a.compare, "replay", a.trace, "--procs", str(a.procs), "--scheduler", a.scheduler, "--jobs-csv", out]
        if a.limit:
            cmd += ["--limit", str(a.limit)]
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            print("ref_sched: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
            return None
        got = read_csv(out)
    if len(got) != expected:
        print("ref_sched: vramsim replayed %d jobs, the reference %d" % (len(got), expected))
        return None
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--procs", type=int, required=True)
    ap.add_argument("--scheduler", choices=["fcfs", "easy"], required=True)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--jobs-csv")
    ap.add_argument("--compare", metavar="VRAMSIM")
    ap.add_argument("--exact", action="store_true",
                    help="Batsim: simulate the trace's unrounded times and require every start and end of "
                         "vramsim within 1 ms of them")
    a = ap.parse_args()
    if a.exact:
        return exact(a)

    ms = a.trace.endswith(".json")
    read = read_batsim if ms else read_swf
    jobs = replayable(read(a.trace, a.limit), a.procs)
    simulate(jobs, a.procs, a.scheduler)
    ref = rows(jobs, ms)
    if a.jobs_csv:
        with open(a.jobs_csv, "w") as f:
            f.write("job_id,submit,start,end\n")
            f.writelines(",".join(r) + "\n" for r in ref)
    if not a.compare:
        return 0
    got = vramsim_rows(a, len(ref))
    if got is None:
        return 1
    bad = [(r, g) for r, g in zip(ref, got) if r != g]
    if bad:
        r, g = bad[0]
        print("ref_sched: %d of %d jobs differ; first: reference %s, vramsim %s (job_id,submit,start,end)"
              % (len(bad), len(ref), r, g))
        return 1
    waited = sum(1 for j in jobs if j["start"] > j["submit"])
    print("ref_sched: %s %d jobs on %d processors: all agree (%d waited)" % (a.scheduler, len(ref), a.procs, waited))
    return 0


def exact(a):
    """vramsim against the trace's own real-valued times: no job more than
    1 ms away (its times are kept to the millisecond)."""
    jobs = replayable(read_batsim(a.trace, a.limit, exact=True), a.procs)
    simulate(jobs, a.procs, a.scheduler)
    got = vramsim_rows(a, len(jobs))
    if got is None:
        return 1
    worst = 0.0
    far = 0
    for j, g in zip(jobs, got):
        d = max(abs(float(g[2]) - j["start"]), abs(float(g[3]) - j["end"]))
        worst = max(worst, d)
        far += d > 0.001
    if far:
        print("ref_sched: %d of %d jobs more than 1 ms from the trace's own times (worst %.6f s)"
              % (far, len(jobs), worst))
        return 1
    print("ref_sched: %s %d jobs on %d processors: every start and end within 1 ms of the trace's times "
          "(worst %.6f s)" % (a.scheduler, len(jobs), a.procs, worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
