#include "workload/replay.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <ostream>
#include <stdexcept>

namespace vramsim {

ReplayResult replay_swf(const SwfTrace& trace, std::int64_t procs, PartitionPolicy policy) {
  if (procs < 1) throw std::invalid_argument("expected at least 1 processor");
  ReplayResult r;
  r.procs = procs;
  r.policy = policy;
  r.kill_at_req_time = trace.kill_at_req_time;
  struct Pending {
    std::size_t slot;  // index into r.jobs
    PartitionJob job;
  };
  std::vector<Pending> pending;
  pending.reserve(trace.jobs.size());
  for (const SwfJob& j : trace.jobs) {
    const std::int64_t p = replay_procs(j);
    if (j.run_time <= 0) {
      ++r.skipped_no_run_time;
    } else if (p <= 0) {
      ++r.skipped_no_procs;
    } else if (p > procs) {
      ++r.skipped_too_wide;
    } else {
      PartitionJob pj;
      // The scheduler's id is the slot: trace ids need not be unique.
      pj.id = static_cast<std::int64_t>(r.jobs.size());
      pj.procs = p;
      pj.run_time = j.run_time;
      pj.estimate = replay_estimate(j);
      pj.time_limit = replay_time_limit(trace, j);
      pending.push_back({r.jobs.size(), pj});
      r.jobs.push_back({j.id, j.submit, -1, -1, p, j.wait});
    }
  }
  // Submit order: by submit time, ties in file order.
  std::stable_sort(pending.begin(), pending.end(), [&](const Pending& a, const Pending& b) {
    return r.jobs[a.slot].submit < r.jobs[b.slot].submit;
  });
  PartitionScheduler::Callbacks cb;
  cb.on_start = [&](const PartitionJob& j, std::int64_t t) { r.jobs[static_cast<std::size_t>(j.id)].start = t; };
  cb.on_end = [&](const PartitionJob& j, std::int64_t t, PartitionOutcome o) {
    auto& x = r.jobs[static_cast<std::size_t>(j.id)];
    x.end = t;
    x.timed_out = o == PartitionOutcome::Timeout;
  };
  PartitionScheduler s(procs, policy, std::move(cb));
  for (const Pending& p : pending) s.submit(r.jobs[p.slot].submit, p.job);
  s.drain();
  return r;
}

void write_jobs_csv(const ReplayResult& r, std::ostream& out) {
  out << "job_id,submit,start,end\n";
  char buf[96];
  for (const auto& j : r.jobs) {
    const int n = std::snprintf(buf, sizeof buf, "%lld,%lld,%lld,%lld\n", static_cast<long long>(j.id),
                                static_cast<long long>(j.submit), static_cast<long long>(j.start),
                                static_cast<long long>(j.end));
    out.write(buf, n);
  }
}

namespace {

double mean(const std::vector<std::int64_t>& v) {
  if (v.empty()) return 0;
  return static_cast<double>(std::accumulate(v.begin(), v.end(), 0.0L) / static_cast<long double>(v.size()));
}

double median(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  const std::size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
  const double hi = static_cast<double>(v[m]);
  if (v.size() % 2) return hi;
  const double lo = static_cast<double>(*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m)));
  return (lo + hi) / 2;
}

}  // namespace

void print_replay_summary(const ReplayResult& r, const std::string& trace_name, std::ostream& out) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "replay: %s on %lld processors, %s\n", trace_name.c_str(),
                static_cast<long long>(r.procs), r.policy == PartitionPolicy::Fcfs ? "fcfs" : "easy");
  out << buf;
  std::snprintf(buf, sizeof buf,
                "jobs: %zu replayed, %zu skipped (%zu no run time, %zu no processor count, %zu wider than the "
                "partition)\n",
                r.jobs.size(), r.skipped(), r.skipped_no_run_time, r.skipped_no_procs, r.skipped_too_wide);
  out << buf;
  if (r.kill_at_req_time) {
    std::size_t killed = 0;
    for (const auto& j : r.jobs) killed += j.timed_out;
    std::snprintf(buf, sizeof buf, "killed at their requested time (walltime): %zu\n", killed);
    out << buf;
  }
  if (r.jobs.empty()) return;
  std::vector<std::int64_t> sim_all, sim, rec;
  std::int64_t first = r.jobs.front().submit, last = 0;
  long double used = 0;
  for (const auto& j : r.jobs) {
    sim_all.push_back(j.start - j.submit);
    if (j.recorded_wait >= 0) {
      sim.push_back(j.start - j.submit);
      rec.push_back(j.recorded_wait);
    }
    first = std::min(first, j.submit);
    last = std::max(last, j.end);
    used += static_cast<long double>(j.procs) * static_cast<long double>(j.end - j.start);
  }
  out << "wait (s)              simulated     recorded\n";
  if (!rec.empty()) {
    std::snprintf(buf, sizeof buf, "  mean           %14.1f %12.1f\n  median         %14.1f %12.1f\n", mean(sim),
                  mean(rec), median(sim), median(rec));
    out << buf;
    std::snprintf(buf, sizeof buf, "  (over the %zu jobs with a recorded wait)\n", rec.size());
    out << buf;
  } else {
    std::snprintf(buf, sizeof buf, "  mean           %14.1f %12s\n  median         %14.1f %12s\n", mean(sim_all), "-",
                  median(sim_all), "-");
    out << buf;
    out << "  (the trace records no waits)\n";
  }
  const std::int64_t span = last - first;
  std::snprintf(buf, sizeof buf, "utilisation: %.4f (%lld processors over %lld s, first submit to last end)\n",
                span > 0 ? static_cast<double>(used / (static_cast<long double>(span) * r.procs)) : 0.0,
                static_cast<long long>(r.procs), static_cast<long long>(span));
  out << buf;
}

}  // namespace vramsim
