#pragma once
// A plan: the cheapest configuration of a grid whose service-level
// objectives hold across seeds at a given confidence (docs/planning.md).
// The search is a pure function of the grid, the objectives and
// an evaluator that runs (configuration, seeds) tasks: run_plan never runs a
// scenario itself, so the same search drives threads here or a SLURM job
// array, and its unit tests feed it figures.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runner/sweep.hpp"

namespace vramsim {

// Bad plan input (an --slo, --vary, --objective ...): the message names the
// argument and what was expected.
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One --slo: METRIC<=V, METRIC<V, METRIC>=V or METRIC>V over a run metric.
struct Slo {
  enum class Op { AtMost, Below, AtLeast, Above };
  std::string text, metric;
  Op op = Op::AtMost;
  double value = 0;
  bool upper() const { return op == Op::AtMost || op == Op::Below; }  // the metric must stay low
  bool holds(double bound) const;
  std::string condition() const;  // "<=10": the operator and the value
};
Slo parse_slo_arg(const std::string& text);  // throws PlanError
// --vary: as sweep's --set, and A..B (integers, A <= B, at most 100000 values).
SweepParam parse_vary(const std::string& arg);
// A run metric's range (scenario/run_metrics.hpp): every metric is at
// least 0; shares are at most 1, the rest unbounded (+inf).
double metric_upper_limit(const std::string& name);

// The percentile bootstrap of a mean over n seeds, with a fixed set of
// resamples (drawn once from a fixed seed: the same bounds on every
// machine). Each resample's mean is non-decreasing in every value, so the
// bound is too: filling unknown values with the metric's lower or upper
// limit gives the lowest or highest bound the remaining seeds can give.
class BootstrapBound {
 public:
  BootstrapBound(std::size_t n, std::size_t resamples = 2000, std::uint64_t seed = 0x9e3779b97f4a7c15ULL);
  // The one-sided bound of the mean at `confidence`: the confidence-quantile
  // of the resampled means (`upper`), else the (1 - confidence)-quantile
  // (nearest rank). values.size() == n; +inf is allowed (a request that
  // never completed), and a resample holding it has an infinite mean.
  double bound(const std::vector<double>& values, double confidence, bool upper) const;
  std::size_t n() const { return n_; }

 private:
  std::size_t n_, resamples_;
  std::vector<std::uint32_t> counts_;  // resamples_ x n_: times each value is drawn
};

struct PlanSpec {
  SweepGrid grid;                // the dimensions (--vary) and the seeds
  std::vector<bool> monotone;    // per dimension: a later value never worse, never cheaper
  std::vector<Slo> slos;
  std::string objective = "cost_usd";  // minimised: its mean over the seeds
  double confidence = 0.95;
  std::size_t seed_batch = 4;    // seeds run at a time per configuration
  bool exhaustive = false;       // every configuration, every seed: the grid
};
// Checks names and ranges; throws PlanError.
void validate(const PlanSpec& spec);

// The metrics a plan reads from each run: each SLO's, then the objective
// (plan_decision_metrics of them), then what it reports but does not decide
// on: the three time-limit metrics (TimeLimitTally).
std::vector<std::string> plan_metrics(const PlanSpec& spec);
std::size_t plan_decision_metrics(const PlanSpec& spec);

struct PlanTask {
  std::size_t combination = 0;
  std::vector<std::uint64_t> seeds;
};
// Per task, per seed, per plan_metrics() name: the run's value (nullopt: not
// measured; run_plan then refuses a metric it decides on). The names after
// the decision metrics may be left out (a shorter vector): counted as 0.
using PlanFigures = std::vector<std::vector<std::vector<std::optional<double>>>>;
using PlanEvaluator = std::function<PlanFigures(const std::vector<PlanTask>&)>;

// How a configuration's evaluation ended.
enum class PlanDecision {
  AllSeeds,     // every seed ran
  CertainFail,  // an SLO fails whatever the remaining seeds give
  Pruned,       // its objective cannot beat the best configuration found
};
const char* to_string(PlanDecision d);

struct PlanRow {
  std::size_t combination = 0;
  std::size_t evaluated_as = 0;  // the order the search reached it in
  std::size_t seeds_run = 0;
  PlanDecision decision = PlanDecision::AllSeeds;
  std::vector<double> mean, bound;  // per SLO, over the seeds run
  std::optional<bool> slo_met;      // nullopt when pruned
  double objective = 0;             // mean over the seeds run
};

struct PlanResult {
  std::vector<PlanRow> rows;  // the evaluated configurations, in grid order
  std::optional<std::size_t> chosen, runner_up;  // indices into rows
  std::optional<std::size_t> closest;  // with no configuration meeting the SLOs: the least violation
  // Lines that meet the SLOs at no value: along the last --monotone
  // dimension a later value is declared never worse, so a line whose last
  // value misses an SLO misses it everywhere. Each is the row of that last
  // value, in grid order.
  std::vector<std::size_t> hopeless;
  std::size_t combinations = 0, runs = 0, rounds = 0;
  TimeLimitTally time_limit;  // over every run of the search
};

// Searches the grid (docs/planning.md): binary search along the
// last --monotone dimension, pruning, seeds stopped once the verdict is
// certain. Rounds of tasks go to `evaluate`; the result depends only on the
// figures, never on how or where they were computed. Throws PlanError for a
// metric a run did not measure.
PlanResult run_plan(const PlanSpec& spec, const PlanEvaluator& evaluate);

std::string plan_csv(const PlanSpec& spec, const PlanResult& result);

// Runs tasks here on `threads` threads, each configuration's scenario parsed
// once (from `doc`, named `file` in messages) when first needed.
PlanEvaluator local_plan_evaluator(const Json& doc, const std::string& file, const PlanSpec& spec, unsigned threads);

}  // namespace vramsim
