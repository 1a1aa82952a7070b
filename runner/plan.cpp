#include "runner/plan.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "engine/text.hpp"
#include "engine/random.hpp"
#include "runner/simulation.hpp"

namespace vramsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// splitmix64 as a stream (engine/random.hpp's finaliser over a golden-ratio
// counter): the same resamples everywhere.
std::uint64_t splitmix(std::uint64_t& state) {
  const std::uint64_t z = splitmix64(state);
  state += 0x9e3779b97f4a7c15ULL;
  return z;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

}  // namespace

bool Slo::holds(double bound) const {
  switch (op) {
    case Op::AtMost: return bound <= value;
    case Op::Below: return bound < value;
    case Op::AtLeast: return bound >= value;
    case Op::Above: return bound > value;
  }
  return false;
}

std::string Slo::condition() const {
  const char* ops[] = {"<=", "<", ">=", ">"};
  return ops[static_cast<int>(op)] + csv_number(value);
}

double metric_upper_limit(const std::string& name) {
  const RunMetricSpec* m = find_run_metric(name);
  return m && m->is_share() ? 1.0 : kInf;
}

Slo parse_slo_arg(const std::string& text) {
  const std::string what = "--slo '" + text + "': expected METRIC<=VALUE, METRIC<VALUE, METRIC>=VALUE or METRIC>VALUE " +
                           "with a run metric (docs/sweeps.md) such as req_latency_p99_s<=10";
  // Spaces around the metric, the operator and the value are allowed
  // ("req_latency_p99_s <= 10", as docs/serving.md writes it).
  auto trimmed = [](const std::string& t) {
    const auto b = t.find_first_not_of(" \t");
    return b == std::string::npos ? std::string() : t.substr(b, t.find_last_not_of(" \t") - b + 1);
  };
  const auto at = text.find_first_of("<>");
  if (at == std::string::npos) throw PlanError(what);
  Slo s;
  s.metric = trimmed(text.substr(0, at));
  if (s.metric.empty()) throw PlanError(what);
  const bool eq = at + 1 < text.size() && text[at + 1] == '=';
  s.op = text[at] == '<' ? (eq ? Slo::Op::AtMost : Slo::Op::Below) : (eq ? Slo::Op::AtLeast : Slo::Op::Above);
  const std::string v = trimmed(text.substr(at + (eq ? 2 : 1)));
  s.text = s.metric + text.substr(at, eq ? 2 : 1) + v;
  const auto value = parse_double(v);
  if (!value) throw PlanError(what);
  s.value = *value;
  if (!find_run_metric(s.metric))
    throw PlanError("--slo '" + text + "': '" + s.metric + "' is not a run metric (docs/sweeps.md lists them)");
  const double hi = metric_upper_limit(s.metric);
  if (s.value < 0 || s.value > std::min(hi, 1e15))
    throw PlanError("--slo '" + text + "': expected a value from 0 to " + (std::isinf(hi) ? "1e15" : "1") + " for " +
                    s.metric);
  return s;
}

SweepParam parse_vary(const std::string& arg) {
  std::string spelled = arg;
  const auto eq = arg.find('=');
  if (eq != std::string::npos && arg.find("..", eq) != std::string::npos &&
      arg.find_first_of("[{\"", eq) == std::string::npos) {
    // Integer ranges among the values: 1..8 or 1..4,8,16.
    spelled = arg.substr(0, eq + 1);
    std::size_t count = 0, from = eq + 1;
    bool first = true;
    for (;;) {
      const auto comma = arg.find(',', from);
      const std::string tok = arg.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      const auto dots = tok.find("..");
      auto add = [&](const std::string& v) {
        if (++count > 100000) throw PlanError("--vary '" + arg + "': at most 100000 values");
        spelled += (first ? "" : ",") + v;
        first = false;
      };
      if (dots != std::string::npos) {
        const auto lo = parse_integer<long long>(tok.substr(0, dots)), hi = parse_integer<long long>(tok.substr(dots + 2));
        const long long a = lo.value_or(0), b = hi.value_or(0);
        if (!lo || !hi || b < a || b - a >= 100000)
          throw PlanError("--vary '" + arg + "': '" + tok + "': expected an integer range A..B with A <= B, at most " +
                          "100000 values");
        for (long long x = a; x <= b; ++x) add(std::to_string(x));
      } else {
        add(tok);
      }
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
  }
  try {
    return parse_set(spelled);
  } catch (const SweepError& e) {
    std::string m = e.what();
    if (m.rfind("--set", 0) == 0) m = "--vary" + m.substr(5);
    throw PlanError(m);
  }
}

BootstrapBound::BootstrapBound(std::size_t n, std::size_t resamples, std::uint64_t seed)
    : n_(n), resamples_(resamples), counts_(n * resamples, 0) {
  std::uint64_t state = seed ^ (static_cast<std::uint64_t>(n) * 0xd1b54a32d192ed03ULL);
  for (std::size_t b = 0; b < resamples_; ++b)
    for (std::size_t k = 0; k < n_; ++k) ++counts_[b * n_ + splitmix(state) % n_];
}

double BootstrapBound::bound(const std::vector<double>& values, double confidence, bool upper) const {
  if (values.size() != n_ || n_ == 0) throw std::logic_error("BootstrapBound: expected one value per seed");
  std::vector<double> means(resamples_);
  for (std::size_t b = 0; b < resamples_; ++b) {
    double sum = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      const std::uint32_t k = counts_[b * n_ + i];
      if (k == 0) continue;  // never 0 x inf
      sum += k * values[i];
    }
    means[b] = sum / static_cast<double>(n_);
  }
  const double q = upper ? confidence : 1 - confidence;
  const double rank = std::ceil(q * static_cast<double>(resamples_) - 1e-9);
  const auto k = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(resamples_))) - 1;
  std::nth_element(means.begin(), means.begin() + static_cast<std::ptrdiff_t>(k), means.end());
  return means[k];
}

const char* to_string(PlanDecision d) {
  switch (d) {
    case PlanDecision::AllSeeds: return "all_seeds";
    case PlanDecision::CertainFail: return "certain_fail";
    case PlanDecision::Pruned: return "pruned";
  }
  return "?";
}

void validate(const PlanSpec& spec) {
  if (spec.slos.empty()) throw PlanError("--slo: expected at least one objective, such as req_latency_p99_s<=10");
  if (!find_run_metric(spec.objective))
    throw PlanError("--objective '" + spec.objective + "': expected a run metric (docs/sweeps.md), such as cost_usd");
  if (spec.grid.seeds.empty() || spec.grid.seeds.size() > 10000)
    throw PlanError("--seeds: expected from 1 to 10000 seeds");
  if (!(spec.confidence >= 0.5 && spec.confidence <= 0.999))
    throw PlanError("--confidence: expected a share from 0.5 to 0.999");
  if (spec.seed_batch < 1 || spec.seed_batch > 10000) throw PlanError("--seed-batch: expected from 1 to 10000");
  if (spec.monotone.size() != spec.grid.params.size()) throw std::logic_error("PlanSpec: one monotone flag per --vary");
  std::set<std::string> paths;
  for (const auto& p : spec.grid.params)
    if (!paths.insert(p.path).second) throw PlanError("--vary " + p.path + ": expected each path once");
  std::size_t c = 1;
  for (const auto& p : spec.grid.params) {
    if (c > kMaxSweepRuns / p.values.size())
      throw PlanError("--vary: the grid has more than " + std::to_string(kMaxSweepRuns) + " configurations");
    c *= p.values.size();
  }
}

std::vector<std::string> plan_metrics(const PlanSpec& spec) {
  std::vector<std::string> out;
  for (const auto& s : spec.slos) out.push_back(s.metric);
  out.push_back(spec.objective);
  for (const char* m : {"jobs_timeout_serving", "replicas_lost_time_limit", "req_failed_time_limit"}) out.push_back(m);
  return out;
}

std::size_t plan_decision_metrics(const PlanSpec& spec) { return spec.slos.size() + 1; }

namespace {

// One configuration under evaluation: its figures so far and, once known,
// how its evaluation ended.
struct Evaluation {
  std::size_t combination = 0, evaluated_as = 0;
  std::vector<std::vector<double>> values;  // per plan metric, per seed run
  std::optional<PlanDecision> decision;
  bool met = false;  // with decision AllSeeds
  bool keep = false;  // never pruned: the runner-up's evaluation
  std::size_t seeds_run() const { return values.empty() ? 0 : values[0].size(); }
};

// One line of the search: the configurations along the monotone dimension
// (or a single one), binary-searched for the first that is worth having.
struct Line {
  std::vector<std::size_t> combinations;
  std::size_t lo = 0, hi = 0, probe = 0;
  bool done = false;
};

class Search {
 public:
  Search(const PlanSpec& spec, const PlanEvaluator& evaluate)
      : spec_(spec),
        evaluate_(evaluate),
        names_(plan_metrics(spec)),
        decide_(plan_decision_metrics(spec)),
        full_(spec.grid.seeds.size()) {}

  PlanResult run() {
    build_lines();
    while (round()) {
    }
    // A binary search leaves the value after the answer on its line
    // unevaluated, or evaluated in part: it is evaluated in full (monotone:
    // it passes; the figures say at what cost), a candidate runner-up.
    const auto chosen = answer().first;
    if (chosen && monotone_ &&
        spec_.grid.values_of(*chosen)[*monotone_] + 1 < spec_.grid.params[*monotone_].values.size()) {
      const std::size_t next = *chosen + stride_;
      if (!index_.count(next) || evals_[index_.at(next)].decision == PlanDecision::Pruned) {
        Evaluation& e = evaluation(next);
        e.keep = true;
        e.decision.reset();
        lines_.push_back(Line{{next}, 0, 1, 0, false});
        while (round()) {
        }
      }
    }
    return result();
  }

 private:
  void build_lines() {
    const auto& params = spec_.grid.params;
    std::optional<std::size_t> m;
    if (!spec_.exhaustive)
      for (std::size_t p = 0; p < params.size(); ++p)
        if (spec_.monotone[p]) m = p;
    const std::size_t n = spec_.grid.combinations();
    monotone_ = m;
    for (std::size_t p = 0; p < params.size(); ++p)
      if (spec_.monotone[p]) declared_ = p;
    if (declared_)
      for (std::size_t p = *declared_ + 1; p < params.size(); ++p) declared_stride_ *= params[p].values.size();
    if (!m) {
      for (std::size_t c = 0; c < n; ++c) lines_.push_back(Line{{c}, 0, 1, 0, false});
      return;
    }
    std::size_t stride = 1;
    for (std::size_t p = *m + 1; p < params.size(); ++p) stride *= params[p].values.size();
    stride_ = stride;
    const std::size_t len = params[*m].values.size();
    for (std::size_t c = 0; c < n; ++c) {
      if (spec_.grid.values_of(c)[*m] != 0) continue;
      Line l;
      for (std::size_t k = 0; k < len; ++k) l.combinations.push_back(c + k * stride);
      l.hi = len;
      l.probe = (l.lo + l.hi) / 2;
      lines_.push_back(std::move(l));
    }
  }

  Evaluation& evaluation(std::size_t c) {
    auto [it, added] = index_.try_emplace(c, evals_.size());
    if (added) {
      Evaluation e;
      e.combination = c;
      e.evaluated_as = evals_.size();
      e.values.resize(decide_);
      evals_.push_back(std::move(e));
    }
    return evals_[it->second];
  }

  // One round: the next seed batch of every line's probe, then verdicts.
  bool round() {
    std::vector<PlanTask> tasks;
    std::vector<std::size_t> task_eval;
    for (auto& l : lines_) {
      if (l.done) continue;
      Evaluation& e = evaluation(l.combinations[l.probe]);
      const std::size_t from = e.seeds_run(), to = std::min(full_, from + spec_.seed_batch);
      tasks.push_back(PlanTask{e.combination, {spec_.grid.seeds.begin() + static_cast<std::ptrdiff_t>(from),
                                               spec_.grid.seeds.begin() + static_cast<std::ptrdiff_t>(to)}});
      task_eval.push_back(index_.at(e.combination));
    }
    if (tasks.empty()) return false;
    const PlanFigures figures = evaluate_(tasks);
    if (figures.size() != tasks.size()) throw std::logic_error("plan evaluator: expected one result per task");
    ++rounds_;
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      Evaluation& e = evals_[task_eval[t]];
      if (figures[t].size() != tasks[t].seeds.size()) throw std::logic_error("plan evaluator: one result per seed");
      for (std::size_t s = 0; s < tasks[t].seeds.size(); ++s) {
        ++runs_;
        const auto observed = [&](std::size_t k) {
          return k < figures[t][s].size() ? figures[t][s][k].value_or(0.0) : 0.0;
        };
        time_limit_.add(observed(decide_), observed(decide_ + 1), observed(decide_ + 2));
        for (std::size_t k = 0; k < decide_; ++k) {
          const auto& v = figures[t][s].at(k);
          if (!v || std::isnan(*v) || *v < 0)
            throw PlanError(std::string(k + 1 == decide_ ? "--objective " : "--slo ") + names_[k] + ": the run of " +
                            (spec_.grid.params.empty() ? std::string("the scenario") : spec_.grid.setting_of(e.combination)) +
                            " with seed " + std::to_string(tasks[t].seeds[s]) + " did not measure it" +
                            (names_[k] == "cost_usd" ? " (a GPU model without a price: gpu_prices_usd_per_hour)" : "") +
                            (names_[k].rfind("req_", 0) == 0 ? " (no serving app)" : ""));
          e.values[k].push_back(*v);
        }
      }
    }
    // Verdicts: complete ones first (they may set the best), then early stops.
    for (std::size_t i : task_eval) {
      Evaluation& e = evals_[i];
      if (e.seeds_run() < full_) continue;
      e.decision = PlanDecision::AllSeeds;
      e.met = true;
      for (std::size_t k = 0; k < spec_.slos.size(); ++k)
        e.met = e.met && spec_.slos[k].holds(bootstrap(full_).bound(e.values[k], spec_.confidence, spec_.slos[k].upper()));
      if (e.met) offer_best(e);
    }
    if (!spec_.exhaustive)
      for (std::size_t i : task_eval)
        if (!evals_[i].decision) decide_early(evals_[i]);
    for (auto& l : lines_) advance(l);
    return true;
  }

  void offer_best(const Evaluation& e) {
    const double obj = mean_of(e.values.back());
    if (!best_ || obj < best_->first || (obj == best_->first && e.combination < best_->second))
      best_ = {obj, e.combination};
  }

  // A verdict the remaining seeds cannot change: the unknown values at the
  // metric's most favourable limit, and the bound still misses the SLO; or
  // the objective at its lower limit (0), and the mean still loses to the
  // best. Pruning also stops a configuration whose objective cannot beat the
  // best at the plan's confidence: the lower bootstrap bound of its mean over
  // the seeds run (3 at least) above the best's mean. An objective barely
  // moves with the seed (a cost), so the certain rule alone would run most
  // seeds of a configuration twice as dear as the best.
  void decide_early(Evaluation& e) {
    for (std::size_t k = 0; k < spec_.slos.size(); ++k) {
      const Slo& s = spec_.slos[k];
      std::vector<double> v = e.values[k];
      v.resize(full_, s.upper() ? 0.0 : metric_upper_limit(s.metric));
      if (!s.holds(bootstrap(full_).bound(v, spec_.confidence, s.upper()))) {
        e.decision = PlanDecision::CertainFail;
        return;
      }
    }
    // Below the best on its own monotone line a value is declared no dearer:
    // a cent of noise must not prune the line's first passing value.
    const bool below_best = best_ && declared_ && line_of(e.combination) == line_of(best_->second) &&
                            e.combination < best_->second;
    if (best_ && !e.keep && !below_best) {
      double sum = 0;
      for (double x : e.values.back()) sum += x;
      const double least = sum / static_cast<double>(full_);
      if (least > best_->first || (least == best_->first && e.combination > best_->second))
        e.decision = PlanDecision::Pruned;
      else if (e.seeds_run() >= 3 &&
               bootstrap(e.seeds_run()).bound(e.values.back(), spec_.confidence, false) > best_->first)
        e.decision = PlanDecision::Pruned;
    }
  }

  void advance(Line& l) {
    if (l.done) return;
    const Evaluation& e = evals_[index_.at(l.combinations[l.probe])];
    if (!e.decision) return;
    // Passing or not worth having: the first useful value is at most here
    // (a later one is never cheaper); failing: it lies beyond.
    if (*e.decision == PlanDecision::CertainFail || (*e.decision == PlanDecision::AllSeeds && !e.met))
      l.lo = l.probe + 1;
    else
      l.hi = l.probe;
    if (l.lo >= l.hi) l.done = true;
    else l.probe = (l.lo + l.hi) / 2;
  }

  // The answer and the runner-up, as combinations. Along a --monotone
  // dimension a later value is declared never cheaper, so each line offers
  // its first passing value; the cheapest offer wins (ties: grid order). The
  // runner-up is the cheapest other offer, or the next passing value on the
  // winner's line. Without --monotone every passing configuration offers.
  std::pair<std::optional<std::size_t>, std::optional<std::size_t>> answer() const {
    std::map<std::size_t, std::vector<const Evaluation*>> lines;  // line id -> passing, in grid order
    for (const auto& e : evals_)
      if (e.decision == PlanDecision::AllSeeds && e.met) lines[line_of(e.combination)].push_back(&e);
    std::vector<const Evaluation*> offers;
    for (auto& [id, passing] : lines) {
      std::sort(passing.begin(), passing.end(), [](auto* a, auto* b) { return a->combination < b->combination; });
      if (declared_) offers.push_back(passing.front());
      else offers.insert(offers.end(), passing.begin(), passing.end());
    }
    const auto cheaper = [](const Evaluation* a, const Evaluation* b) {
      const double x = mean_of(a->values.back()), y = mean_of(b->values.back());
      return x < y || (x == y && a->combination < b->combination);
    };
    std::sort(offers.begin(), offers.end(), cheaper);
    if (offers.empty()) return {};
    const Evaluation* chosen = offers.front();
    std::optional<const Evaluation*> next;
    if (offers.size() > 1) next = offers[1];
    if (declared_) {
      const auto& own = lines.at(line_of(chosen->combination));
      if (own.size() > 1 && (!next || cheaper(own[1], *next))) next = own[1];
    }
    return {chosen->combination, next ? std::optional<std::size_t>((*next)->combination) : std::nullopt};
  }

  // The combination with its declared monotone value set to the first.
  std::size_t line_of(std::size_t c) const {
    if (!declared_) return c;
    return c - spec_.grid.values_of(c)[*declared_] * declared_stride_;
  }

  const BootstrapBound& bootstrap(std::size_t n) {
    auto it = boots_.find(n);
    if (it == boots_.end()) it = boots_.emplace(n, BootstrapBound(n)).first;
    return it->second;
  }

  PlanResult result() {
    PlanResult r;
    r.combinations = spec_.grid.combinations();
    r.runs = runs_;
    r.rounds = rounds_;
    r.time_limit = time_limit_;
    std::vector<const Evaluation*> order;
    for (const auto& e : evals_) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->combination < b->combination; });
    for (const Evaluation* e : order) {
      PlanRow row;
      row.combination = e->combination;
      row.evaluated_as = e->evaluated_as;
      row.seeds_run = e->seeds_run();
      row.decision = *e->decision;
      for (std::size_t k = 0; k < spec_.slos.size(); ++k) {
        row.mean.push_back(mean_of(e->values[k]));
        row.bound.push_back(bootstrap(row.seeds_run).bound(e->values[k], spec_.confidence, spec_.slos[k].upper()));
      }
      if (row.decision != PlanDecision::Pruned) row.slo_met = row.decision == PlanDecision::AllSeeds && e->met;
      row.objective = mean_of(e->values.back());
      r.rows.push_back(std::move(row));
    }
    const auto [chosen, runner_up] = answer();
    const auto row_of = [&](std::size_t c) {
      return static_cast<std::size_t>(std::find_if(r.rows.begin(), r.rows.end(),
                                                   [&](const PlanRow& row) { return row.combination == c; }) -
                                      r.rows.begin());
    };
    if (declared_) {
      const std::size_t last = spec_.grid.params[*declared_].values.size() - 1;
      for (std::size_t i = 0; i < r.rows.size(); ++i)
        if (spec_.grid.values_of(r.rows[i].combination)[*declared_] == last && r.rows[i].slo_met == false)
          r.hopeless.push_back(i);
    }
    if (chosen) r.chosen = row_of(*chosen);
    if (runner_up) r.runner_up = row_of(*runner_up);
    if (!r.chosen) {
      double least = kInf;
      for (std::size_t i = 0; i < r.rows.size(); ++i) {
        double worst = 0;
        for (std::size_t k = 0; k < spec_.slos.size(); ++k) {
          const Slo& s = spec_.slos[k];
          const double b = r.rows[i].bound[k];
          const double miss = s.upper() ? b - s.value : s.value - b;
          worst = std::max(worst, std::isinf(b) ? kInf : std::max(0.0, miss) / std::max(std::abs(s.value), 1e-12));
        }
        if (!r.closest || worst < least) r.closest = i, least = worst;
      }
    }
    return r;
  }

  const PlanSpec& spec_;
  const PlanEvaluator& evaluate_;
  std::vector<std::string> names_;
  std::size_t decide_;  // names_ the search decides on: the SLOs' and the objective
  std::size_t full_;
  std::vector<Line> lines_;
  std::vector<Evaluation> evals_;
  std::map<std::size_t, std::size_t> index_;  // combination -> evals_
  std::map<std::size_t, BootstrapBound> boots_;
  std::optional<std::pair<double, std::size_t>> best_;  // (objective, combination)
  std::size_t runs_ = 0, rounds_ = 0;
  TimeLimitTally time_limit_;
  std::optional<std::size_t> monotone_;  // the dimension searched along
  std::optional<std::size_t> declared_;  // the last --monotone, searched or not (--exhaustive)
  std::size_t declared_stride_ = 1;
  std::size_t stride_ = 1;               // combinations between its values
};

}  // namespace

PlanResult run_plan(const PlanSpec& spec, const PlanEvaluator& evaluate) {
  validate(spec);
  return Search(spec, evaluate).run();
}

std::string plan_csv(const PlanSpec& spec, const PlanResult& r) {
  std::string out;
  for (const auto& p : spec.grid.params) out += csv_field(p.path) + ",";
  out += "seeds_run,decision";
  for (const auto& s : spec.slos) out += "," + s.metric + "_mean," + s.metric + "_bound," + s.metric + "_slo";
  out += ",slo_met," + spec.objective + ",chosen,evaluated_as\n";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const PlanRow& row = r.rows[i];
    const auto vi = spec.grid.values_of(row.combination);
    for (std::size_t p = 0; p < spec.grid.params.size(); ++p) out += csv_field(spec.grid.params[p].spelled[vi[p]]) + ",";
    out += std::to_string(row.seeds_run) + "," + to_string(row.decision);
    for (std::size_t k = 0; k < spec.slos.size(); ++k)
      out += "," + csv_number(row.mean[k]) + "," + csv_number(row.bound[k]) + "," + spec.slos[k].condition();
    out += std::string(",") + (row.slo_met ? (*row.slo_met ? "1" : "0") : "") + "," + csv_number(row.objective) + "," +
           (r.chosen == i ? "1" : "0") + "," + std::to_string(row.evaluated_as) + "\n";
  }
  return out;
}

PlanEvaluator local_plan_evaluator(const Json& doc, const std::string& file, const PlanSpec& spec, unsigned threads) {
  struct State {
    Json doc;
    std::string file;
    SweepGrid grid;
    std::vector<std::string> names;
    unsigned threads;
    std::map<std::size_t, Scenario> scenarios;
  };
  auto st = std::make_shared<State>(State{doc, file, spec.grid, plan_metrics(spec), std::max(1u, threads), {}});
  return [st](const std::vector<PlanTask>& tasks) {
    // Parsed here, in task order: a bad value fails the same way every time.
    for (const auto& t : tasks)
      if (!st->scenarios.count(t.combination))
        st->scenarios.emplace(t.combination, scenario_of(st->doc, st->file, st->grid, t.combination, "--vary"));
    std::vector<std::pair<std::size_t, std::size_t>> runs;  // (task, seed index)
    PlanFigures out(tasks.size());
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      out[t].resize(tasks[t].seeds.size());
      for (std::size_t s = 0; s < tasks[t].seeds.size(); ++s) runs.emplace_back(t, s);
    }
    std::atomic<std::size_t> next{0};
    std::mutex mu;
    std::exception_ptr failure;
    auto work = [&] {
      for (std::size_t i; (i = next.fetch_add(1)) < runs.size();) {
        const auto [t, s] = runs[i];
        try {
          RunOptions opt;
          opt.seed = tasks[t].seeds[s];
          const RunResult r = run_scenario(st->scenarios.at(tasks[t].combination), opt);
          std::vector<std::optional<double>> v(st->names.size());
          r.metrics.for_each([&](std::string_view name, std::optional<double> x) {
            for (std::size_t k = 0; k < st->names.size(); ++k)
              if (st->names[k] == name) v[k] = x;
          });
          out[t][s] = std::move(v);
        } catch (...) {
          std::lock_guard lock(mu);
          if (!failure) failure = std::current_exception();
          next = runs.size();
          return;
        }
      }
    };
    const unsigned n = std::min<unsigned>(st->threads, static_cast<unsigned>(std::max<std::size_t>(1, runs.size())));
    std::vector<std::thread> pool;
    for (unsigned k = 1; k < n; ++k) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
    return out;
  };
}

}  // namespace vramsim
