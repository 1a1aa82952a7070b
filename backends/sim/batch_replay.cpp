#include "backends/sim/batch_replay.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <ostream>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "engine/time.hpp"

namespace vramsim {

namespace {

// The running median of one user's run times: a max-heap of the lower half,
// a min-heap of the upper half, O(log n) per job.
class RunningMedian {
 public:
  void add(std::int64_t v) {
    if (lo_.empty() || v <= lo_.top()) lo_.push(v); else hi_.push(v);
    if (lo_.size() > hi_.size() + 1) { hi_.push(lo_.top()); lo_.pop(); }
    if (hi_.size() > lo_.size()) { lo_.push(hi_.top()); hi_.pop(); }
  }
  double median() const {
    return lo_.size() > hi_.size() ? static_cast<double>(lo_.top())
                                   : (static_cast<double>(lo_.top()) + static_cast<double>(hi_.top())) / 2;
  }

 private:
  std::priority_queue<std::int64_t> lo_;
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> hi_;
};

// The longest partition limit an estimate rule takes.
constexpr Duration kMaxLimit = 365LL * 24 * 3600 * kSecond;

}  // namespace

std::optional<EstimateRule> parse_estimate_rule(const std::string& text, std::string& error) {
  EstimateRule r;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon), arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  if ((kind == "requested" || kind == "runtime") && colon == std::string::npos) {
    r.kind = kind == "requested" ? EstimateRule::Kind::Requested : EstimateRule::Kind::Runtime;
    return r;
  }
  if (kind == "user-median" && colon != std::string::npos) {
    double k = 0;
    const auto [p, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), k);
    if (ec != std::errc() || p != arg.data() + arg.size() || !(k > 0) || k > 1000) {
      error = "user-median:K: expected K a number in (0, 1000], got '" + arg + "'";
      return std::nullopt;
    }
    r.kind = EstimateRule::Kind::UserMedian;
    r.factor = k;
    return r;
  }
  if (kind == "limit" && colon != std::string::npos) {
    const auto d = parse_duration(arg);
    if (!d || *d < kSecond || *d > kMaxLimit) {
      error = "limit:D: expected D a duration from 1s to 365d (such as 4h), got '" + arg + "'";
      return std::nullopt;
    }
    r.kind = EstimateRule::Kind::Limit;
    r.limit_s = *d / kSecond;
    return r;
  }
  error = "expected requested, runtime, user-median:K or limit:D, got '" + text + "'";
  return std::nullopt;
}

ReplayResult replay_swf(const SwfTrace& trace, std::int64_t procs, PartitionPolicy policy, EstimateRule estimate) {
  if (procs < 1) throw std::invalid_argument("expected at least 1 processor");
  ReplayResult r;
  r.procs = procs;
  r.policy = policy;
  r.kill_at_req_time = trace.kill_at_req_time;
  r.estimate_rule = estimate;
  r.ticks_per_second = trace.ticks_per_second;
  r.partial_lines = trace.partial_lines;
  r.log_max_procs = trace.header.max_procs;
  r.log_max_nodes = trace.header.max_nodes;
  // The replayed jobs in the trace's order, and where each comes from.
  std::vector<std::size_t, HugePageAllocator<std::size_t>> source;
  source.reserve(trace.jobs.size());
  r.jobs.reserve(trace.jobs.size());
  for (std::size_t t = 0; t < trace.jobs.size(); ++t) {
    const SwfJob& j = trace.jobs[t];
    const std::int64_t p = replay_procs(j);
    if (j.run_time < 0) {  // -1: unknown; 0 is a job that ran for 0 s
      ++r.skipped_no_run_time;
    } else if (p <= 0) {
      ++r.skipped_no_procs;
    } else if (p > procs) {
      ++r.skipped_too_wide;
    } else {
      source.push_back(t);
      r.jobs.push_back({j.id, j.submit, -1, -1, p, j.wait});
    }
  }
  // Submit order: by submit time, ties in file order. Logs are written in
  // submit order: sorted only where they are not.
  std::vector<std::size_t, HugePageAllocator<std::size_t>> order;  // slots in submit order, where not in order
  const bool in_order = std::is_sorted(r.jobs.begin(), r.jobs.end(),
                                       [](const ReplayedJob& a, const ReplayedJob& b) { return a.submit < b.submit; });
  if (!in_order) {
    order.resize(r.jobs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return r.jobs[a].submit < r.jobs[b].submit; });
  }
  PartitionScheduler::Callbacks cb;
  cb.on_start = [&](const PartitionJob& j, std::int64_t t) { r.jobs[static_cast<std::size_t>(j.id)].start = t; };
  cb.on_end = [&](const PartitionJob& j, std::int64_t t, PartitionOutcome o) {
    auto& x = r.jobs[static_cast<std::size_t>(j.id)];
    x.end = t;
    x.timed_out = o == PartitionOutcome::Timeout;
  };
  PartitionScheduler s(procs, policy, std::move(cb));
  // Each job in submit order: its estimate (a user's median sees only the
  // jobs submitted before it), then its submission.
  std::unordered_map<std::int64_t, RunningMedian> by_user;
  for (std::size_t k = 0; k < r.jobs.size(); ++k) {
    const std::size_t slot = in_order ? k : order[k];
    const SwfJob& j = trace.jobs[source[slot]];
    PartitionJob pj;
    // The scheduler's id is the slot: trace ids need not be unique.
    pj.id = static_cast<std::int64_t>(slot);
    pj.procs = r.jobs[slot].procs;
    pj.run_time = j.run_time;
    pj.time_limit = replay_time_limit(trace, j);
    if (estimate.kind == EstimateRule::Kind::Runtime) {
      pj.estimate = pj.run_time;
      ++r.estimates.run_time;
    } else if (j.req_time > 0) {
      pj.estimate = j.req_time;
      ++r.estimates.requested;
    } else if (estimate.kind == EstimateRule::Kind::Limit) {
      pj.estimate = estimate.limit_s * trace.ticks_per_second;
      ++r.estimates.limit;
    } else if (auto u = by_user.find(j.user);
               estimate.kind == EstimateRule::Kind::UserMedian && j.user >= 0 && u != by_user.end()) {
      pj.estimate = static_cast<std::int64_t>(std::ceil(estimate.factor * u->second.median()));
      ++r.estimates.user_median;
    } else {
      pj.estimate = pj.run_time;
      ++r.estimates.run_time;
    }
    if (estimate.kind == EstimateRule::Kind::UserMedian && j.user >= 0) by_user[j.user].add(pj.run_time);
    s.submit(r.jobs[slot].submit, pj);
  }
  s.drain();
  return r;
}

namespace {

// A time of the trace in seconds as text: whole seconds as they are, ticks
// of a millisecond with three decimals, exactly (no float on the way).
std::string seconds_text(std::int64_t ticks, std::int64_t per_second) {
  if (per_second == 1) return std::to_string(ticks);
  const std::int64_t ms = ticks % per_second * 1000 / per_second;  // trace times are >= 0
  std::string frac = std::to_string(ms);
  frac.insert(0, 3 - std::min<std::size_t>(3, frac.size()), '0');
  return std::to_string(ticks / per_second) + "." + frac;
}

}  // namespace

void write_jobs_csv(const ReplayResult& r, std::ostream& out) {
  out << "job_id,submit,start,end\n";
  const std::int64_t t = r.ticks_per_second;
  for (const auto& j : r.jobs)
    out << j.id << ',' << seconds_text(j.submit, t) << ',' << seconds_text(j.start, t) << ','
        << seconds_text(j.end, t) << '\n';
}

namespace {

// One column of waits, reused for each statistic: huge pages for a long
// trace, as the jobs themselves.
using Waits = std::vector<std::int64_t, HugePageAllocator<std::int64_t>>;

// Summed exactly in 128 bits, divided once.
double mean(const Waits& v) {
  if (v.empty()) return 0;
  return static_cast<double>(static_cast<long double>(std::accumulate(v.begin(), v.end(), __int128{0})) /
                             static_cast<long double>(v.size()));
}

// Reorders v.
double median(Waits& v) {
  if (v.empty()) return 0;
  const std::size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
  const double hi = static_cast<double>(v[m]);
  if (v.size() % 2) return hi;
  const double lo = static_cast<double>(*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m)));
  return (lo + hi) / 2;
}

// The slowdown's bound: jobs shorter than this count as this long.
constexpr double kSlowdownBound = 10.0;

double bounded_slowdown(double wait, double run) {
  const double s = (wait + run) / std::max(run, kSlowdownBound);
  return s > 1.0 ? s : 1.0;  // max(1, s), written as one instruction computes it (no branch)
}

}  // namespace

LogComparison compare_with_log(const ReplayResult& r) {
  LogComparison c;
  // Sums over waits in ticks, exact in 128-bit integers; seconds come at
  // the end, and the correlation is the same in any unit.
  __int128 abs_err = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  long double bs = 0, bl = 0;
  const double tps = static_cast<double>(r.ticks_per_second);
  for (const auto& j : r.jobs) {
    if (j.recorded_wait < 0) continue;
    const std::int64_t sim = j.start - j.submit, error = sim - j.recorded_wait;  // both >= 0: no overflow
    const __int128 x = sim, y = j.recorded_wait;
    const double run = static_cast<double>(j.end - j.start) / tps;
    ++c.jobs;
    abs_err += error < 0 ? -error : error;
    sx += x;
    sy += y;
    sxx += x * x;
    syy += y * y;
    sxy += x * y;
    bs += bounded_slowdown(static_cast<double>(x) / tps, run);
    bl += bounded_slowdown(static_cast<double>(y) / tps, run);
  }
  if (c.jobs == 0) return c;
  const auto ld = [](__int128 v) { return static_cast<long double>(v); };
  const long double n = static_cast<long double>(c.jobs);
  c.mean_abs_error_s = static_cast<double>(ld(abs_err) / n / static_cast<long double>(tps));
  c.bounded_slowdown_sim = static_cast<double>(bs / n);
  c.bounded_slowdown_log = static_cast<double>(bl / n);
  const long double vx = n * ld(sxx) - ld(sx) * ld(sx), vy = n * ld(syy) - ld(sy) * ld(sy);
  if (vx > 0 && vy > 0) c.correlation = static_cast<double>((n * ld(sxy) - ld(sx) * ld(sy)) / std::sqrt(vx * vy));
  return c;
}

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
  if (r.log_max_procs || r.log_max_nodes) {
    std::string machine = "log machine:";
    if (r.log_max_procs) machine += " MaxProcs " + std::to_string(*r.log_max_procs);
    if (r.log_max_nodes) machine += std::string(r.log_max_procs ? "," : "") + " MaxNodes " + std::to_string(*r.log_max_nodes);
    out << machine << "\n";
  }
  if (r.log_max_procs && *r.log_max_procs != r.procs)
    out << "note: " << r.procs << " processors here, " << *r.log_max_procs
        << " in the log: the recorded waits belong to another machine\n";
  if (r.policy == PartitionPolicy::Easy) {
    std::snprintf(buf, sizeof buf, "estimates: %zu requested time, %zu run time (perfect foresight)",
                  r.estimates.requested, r.estimates.run_time);
    std::string line = buf;
    if (r.estimates.user_median) line += ", " + std::to_string(r.estimates.user_median) + " user median";
    if (r.estimates.limit) line += ", " + std::to_string(r.estimates.limit) + " partition limit";
    out << line << "\n";
  }
  if (r.partial_lines) {
    std::snprintf(buf, sizeof buf,
                  "partial executions: %zu line(s) of status 2, 3 or 4, each part of its job's summary line\n",
                  r.partial_lines);
    out << buf;
  }
  if (r.kill_at_req_time) {
    std::size_t killed = 0;
    for (const auto& j : r.jobs) killed += j.timed_out;
    std::snprintf(buf, sizeof buf, "killed at their requested time (walltime): %zu\n", killed);
    out << buf;
  }
  if (r.jobs.empty()) return;
  const double tps = static_cast<double>(r.ticks_per_second);
  std::int64_t first = r.jobs.front().submit, last = 0;
  __int128 used = 0;  // processor-ticks, exact
  std::size_t recorded = 0;
  for (const auto& j : r.jobs) {
    recorded += j.recorded_wait >= 0;
    first = std::min(first, j.submit);
    last = std::max(last, j.end);
    used += static_cast<__int128>(j.procs) * (j.end - j.start);
  }
  // The simulated waits of the jobs with a recorded wait (of every job
  // where none has one), then the recorded waits.
  Waits waits;
  waits.reserve(recorded ? recorded : r.jobs.size());
  for (const auto& j : r.jobs)
    if (!recorded || j.recorded_wait >= 0) waits.push_back(j.start - j.submit);
  const double sim_mean = mean(waits), sim_median = median(waits);
  out << "wait (s)              simulated     recorded\n";
  if (recorded) {
    waits.clear();
    for (const auto& j : r.jobs)
      if (j.recorded_wait >= 0) waits.push_back(j.recorded_wait);
    std::snprintf(buf, sizeof buf, "  mean           %14.1f %12.1f\n  median         %14.1f %12.1f\n", sim_mean / tps,
                  mean(waits) / tps, sim_median / tps, median(waits) / tps);
    out << buf;
    std::snprintf(buf, sizeof buf, "  (over the %zu jobs with a recorded wait)\n", recorded);
    out << buf;
    const LogComparison c = compare_with_log(r);
    char cor[48] = "- (a wait that does not vary)";
    if (c.correlation) std::snprintf(cor, sizeof cor, "%.4f", *c.correlation);
    std::snprintf(buf, sizeof buf, "per job: mean absolute error %.1f s, correlation %s\n", c.mean_abs_error_s, cor);
    out << buf;
    std::snprintf(buf, sizeof buf, "bounded slowdown (10 s): simulated %.2f, recorded %.2f\n", c.bounded_slowdown_sim,
                  c.bounded_slowdown_log);
    out << buf;
  } else {
    std::snprintf(buf, sizeof buf, "  mean           %14.1f %12s\n  median         %14.1f %12s\n",
                  sim_mean / tps, "-", sim_median / tps, "-");
    out << buf;
    out << "  (the trace records no waits)\n";
  }
  const std::int64_t span = last - first;
  const long double capacity = static_cast<long double>(span) * r.procs;  // processor-ticks
  std::snprintf(buf, sizeof buf, "utilisation: %.4f (%lld processors over %s s, first submit to last end)\n",
                span > 0 ? static_cast<double>(static_cast<long double>(used) / capacity) : 0.0,
                static_cast<long long>(r.procs), seconds_text(span, r.ticks_per_second).c_str());
  out << buf;
}

}  // namespace vramsim
