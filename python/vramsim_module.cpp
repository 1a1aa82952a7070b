// `import vramsim`: the project's libraries as a Python module
// (docs/python.md). No second implementation: every call below is the one
// the command line makes (tools/run_command.cpp, sweep_command.cpp,
// plan_command.cpp), and the results carry the same names and bytes as the
// CLI's outputs. Long work runs with the GIL released; sweeps and plans
// stop at Ctrl-C.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "analysis/report.hpp"
#include "models/policy_set.hpp"
#include "models/registry.hpp"
#include "runner/plan.hpp"
#include "observers/requests_csv.hpp"
#include "observers/summary_json.hpp"
#include "runner/simulation.hpp"
#include "runner/sweep.hpp"
#include "scenario/scenario.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace vramsim {
namespace {

// ---- JSON <-> Python ----------------------------------------------------

py::object to_python(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return py::none();
    case Json::value_t::boolean: return py::bool_(j.get<bool>());
    case Json::value_t::number_integer: return py::int_(j.get<std::int64_t>());
    case Json::value_t::number_unsigned: return py::int_(j.get<std::uint64_t>());
    case Json::value_t::number_float: return py::float_(j.get<double>());
    case Json::value_t::string: return py::str(j.get_ref<const std::string&>());
    case Json::value_t::array: {
      py::list l;
      for (const auto& v : j) l.append(to_python(v));
      return l;
    }
    case Json::value_t::object: {
      py::dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d[py::str(it.key())] = to_python(it.value());
      return d;
    }
    default: return py::none();
  }
}

// A Python value as JSON; `where` names it in the TypeError.
Json from_python(py::handle h, const std::string& where) {
  if (h.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(h)) return h.cast<bool>();
  if (py::isinstance<py::int_>(h)) {
    const auto big = h.cast<py::int_>();
    if (py::int_(0) <= big) {
      try {
        return h.cast<std::uint64_t>();
      } catch (const py::cast_error&) {
      }
    } else {
      try {
        return h.cast<std::int64_t>();
      } catch (const py::cast_error&) {
      }
    }
    throw py::type_error(where + ": expected an integer that fits 64 bits, got " + py::repr(h).cast<std::string>());
  }
  if (py::isinstance<py::float_>(h)) return h.cast<double>();
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  if (py::isinstance<py::dict>(h)) {
    Json o = Json::object();
    for (auto kv : h.cast<py::dict>()) {
      if (!py::isinstance<py::str>(kv.first))
        throw py::type_error(where + ": expected string keys, got " + py::repr(kv.first).cast<std::string>());
      const auto key = kv.first.cast<std::string>();
      o[key] = from_python(kv.second, where + "." + key);
    }
    return o;
  }
  if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h)) {
    Json a = Json::array();
    std::size_t i = 0;
    for (auto v : h) a.push_back(from_python(v, where + "[" + std::to_string(i++) + "]"));
    return a;
  }
  // NumPy scalars and the like: by their Python value.
  if (py::hasattr(h, "item")) return from_python(h.attr("item")(), where);
  throw py::type_error(where + ": expected a JSON value (dict, list, str, int, float, bool or None), got " +
                       py::repr(h).cast<std::string>());
}

// ---- errors ----------------------------------------------------------------

// Owned by the module (its attributes); handles here.
py::handle g_scenario_error, g_sweep_error, g_plan_error;

[[noreturn]] void raise_scenario_error(const ScenarioError& e) {
  py::object exc = g_scenario_error(py::str(e.what()));
  exc.attr("file") = e.file();
  exc.attr("path") = e.path();
  exc.attr("problem") = e.problem();
  PyErr_SetObject(g_scenario_error.ptr(), exc.ptr());
  throw py::error_already_set();
}

// ---- scenarios -------------------------------------------------------------

struct PyScenario {
  Json doc;
  std::string file;
  std::shared_ptr<const Scenario> parsed;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void warn(const Scenario& sc) {
  for (const auto& w : sc.warnings) PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 2);
}

PyScenario load(py::handle source, std::optional<std::string> file) {
  PyScenario s;
  try {
    if (py::isinstance<py::dict>(source)) {
      s.file = file.value_or("<dict>");
      s.doc = from_python(source, "scenario");
      s.parsed = std::make_shared<const Scenario>(parse_scenario(s.doc, s.file));
    } else {
      s.file = py::str(py::module_::import("os").attr("fspath")(source)).cast<std::string>();
      s.parsed = std::make_shared<const Scenario>(load_scenario(s.file));
      // load_scenario refused what JSON cannot hold; the document as written.
      s.doc = Json::parse(read_file(s.file));
    }
  } catch (const ScenarioError& e) {
    raise_scenario_error(e);
  }
  warn(*s.parsed);
  return s;
}

// A Scenario, a path or a dict.
PyScenario as_scenario(py::handle h) {
  if (py::isinstance<PyScenario>(h)) return h.cast<PyScenario>();
  return load(h, std::nullopt);
}

// "200s", "5m" or a number of seconds.
Duration duration_arg(py::handle h, const char* what, Duration min = 0) {
  std::optional<Duration> d;
  if (py::isinstance<py::str>(h)) {
    d = parse_duration(h.cast<std::string>());
  } else if (py::isinstance<py::int_>(h) || py::isinstance<py::float_>(h)) {
    const double s = h.cast<double>();
    if (std::isfinite(s) && s >= 0 && s <= to_seconds(limits::kMaxDuration)) d = std::llround(s * 1e6);
  }
  if (!d || *d < min || *d > limits::kMaxDuration)
    throw py::value_error(std::string(what) + ": expected a duration such as \"200s\" or a number of seconds, from " +
                          format_duration(min) + " to " + format_duration(limits::kMaxDuration) + ", got " +
                          py::repr(h).cast<std::string>());
  return *d;
}

std::string policies_arg(const std::string& spec, const char* what) {
  try {
    parse_policy_spec(spec);
  } catch (const UnknownPolicyError& e) {
    throw py::value_error(std::string(what) + ": " + e.what());
  }
  return spec;
}

// The scenario with run() overrides applied.
std::shared_ptr<const Scenario> with_overrides(const PyScenario& s, py::handle horizon, py::handle gpu_prices) {
  if (horizon.is_none() && gpu_prices.is_none()) return s.parsed;
  auto sc = std::make_shared<Scenario>(*s.parsed);
  if (!horizon.is_none()) sc->horizon = duration_arg(horizon, "horizon", kSecond);
  if (!gpu_prices.is_none()) {
    for (auto kv : gpu_prices.cast<py::dict>()) {
      const auto model = py::str(kv.first).cast<std::string>();
      const double usd = kv.second.cast<double>();
      if (!gpu_catalogue().count(model) || !std::isfinite(usd) || usd < 0 || usd > 10000)
        throw py::value_error("gpu_prices: " + model + "=" + py::repr(kv.second).cast<std::string>() +
                              ": expected a GPU model of the partition catalogue and a price in [0, 10000] per "
                              "GPU-hour");
      sc->gpu_prices[model] = usd;
    }
  }
  return sc;
}

// ---- run ---------------------------------------------------------------------

struct PyRunResult {
  std::shared_ptr<const Scenario> scenario;
  RunOptions options;  // what produced it (status_at reruns with these)
  std::shared_ptr<RunResult> result;
  std::string trace;
  py::object requests_cache, events_cache;
};

std::shared_ptr<PyRunResult> run_with(std::shared_ptr<const Scenario> sc, RunOptions opt) {
  auto out = std::make_shared<PyRunResult>();
  out->scenario = std::move(sc);
  std::ostringstream trace;
  {
    py::gil_scoped_release nogil;
    RunOptions o = opt;
    o.outputs.trace_stream = &trace;
    out->result = std::make_shared<RunResult>(run_scenario(*out->scenario, o));
  }
  out->options = std::move(opt);
  out->trace = std::move(trace).str();
  return out;
}

std::shared_ptr<PyRunResult> py_run(py::handle scenario, std::optional<std::string> policies,
                                    std::optional<std::uint64_t> seed, py::handle horizon, py::handle status_at,
                                    py::handle gpu_prices, bool requests) {
  const PyScenario s = as_scenario(scenario);
  RunOptions opt;
  opt.seed = seed;
  if (policies) opt.policies = policies_arg(*policies, "policies");
  if (!status_at.is_none()) {
    if (py::isinstance<py::str>(status_at) || py::isinstance<py::int_>(status_at) ||
        py::isinstance<py::float_>(status_at))
      opt.outputs.status_at.push_back(duration_arg(status_at, "status_at"));
    else
      for (auto t : status_at) opt.outputs.status_at.push_back(duration_arg(t, "status_at"));
  }
  opt.outputs.keep_requests = requests;
  opt.outputs.keep_status_snapshots = true;
  return run_with(with_overrides(s, horizon, gpu_prices), opt);
}

py::dict app_dict(const AppOutcome& a) {
  py::dict d;
  d["id"] = a.id;
  d["admitted"] = a.admitted;
  d["state"] = a.final_state;
  d["time_to_running_s"] = a.time_to_running ? py::object(py::float_(to_seconds(*a.time_to_running))) : py::none();
  d["reservation"] = a.reservation;
  d["message"] = a.message;
  return d;
}

py::object optional_float(std::optional<double> v) { return v ? py::object(py::float_(*v)) : py::none(); }

py::dict serving_dict(const ServeOutcome& o) {
  py::dict d;
  d["app"] = o.app;
  d["arrived"] = o.arrived;
  d["completed"] = o.completed;
  d["refused"] = o.refused;
  d["timed_out"] = o.timed_out;
  d["failed"] = o.failed;
  d["unfinished"] = o.unfinished;
  d["cold"] = o.cold;
  d["wait_mean_s"] = optional_float(o.wait_mean_s);
  d["latency_mean_s"] = optional_float(o.latency_mean_s);
  d["latency_p50_s"] = optional_float(o.p50_s);
  d["latency_p95_s"] = optional_float(o.p95_s);
  d["latency_p99_s"] = optional_float(o.p99_s);
  d["slo_attainment"] = optional_float(o.slo_attainment);
  d["replica_seconds"] = o.replica_seconds;
  d["device_sharing"] = o.device_sharing;
  d["replica_concurrency"] = o.replica_concurrency;
  return d;
}

template <class T>
py::array_t<T> column(std::size_t n) {
  return py::array_t<T>(static_cast<py::ssize_t>(n));
}

// Seconds, NaN where the time is -1 (none).
py::array_t<double> seconds_column(const RequestRecords::Column<SimTime>& us) {
  auto a = column<double>(us.size());
  double* p = a.mutable_data();
  for (std::size_t i = 0; i < us.size(); ++i) p[i] = us[i] < 0 ? NAN : static_cast<double>(us[i]) / 1e6;
  return a;
}

// names[codes] as a NumPy object array whose entries are the same few str
// objects, one per name: 8 bytes a request and no Python object made per
// request (pandas keeps a string column this way, and takes it as is).
template <class Codes>
py::array string_column(const std::vector<std::string>& names, const Codes& codes) {
  std::vector<py::str> strs(names.begin(), names.end());
  const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(codes.size())};
  py::array a(py::dtype("O"), shape);  // filled with None
  auto** p = static_cast<PyObject**>(a.mutable_data());
  for (std::size_t i = 0; i < codes.size(); ++i) {
    PyObject* o = strs[static_cast<std::size_t>(codes[i])].ptr();
    Py_INCREF(o);
    Py_XDECREF(p[i]);
    p[i] = o;
  }
  return a;
}

py::dict requests_dict(const RequestRecords& r) {
  const std::size_t n = r.size();
  py::dict d;
  d["app"] = string_column(r.app_names, r.app);
  d["arrival_s"] = seconds_column(r.arrival);
  d["start_s"] = seconds_column(r.start);
  d["end_s"] = seconds_column(r.end);
  auto replica = column<std::int32_t>(n);
  std::copy(r.replica.begin(), r.replica.end(), replica.mutable_data());
  d["replica"] = replica;
  auto cold = column<bool>(n);
  for (std::size_t i = 0; i < n; ++i) cold.mutable_data()[i] = r.cold[i] != 0;
  d["cold"] = cold;
  // RequestOutcome's values index this list.
  std::vector<std::string> outcomes;
  for (int o = 0; o <= static_cast<int>(RequestOutcome::Unfinished); ++o)
    outcomes.emplace_back(to_string(static_cast<RequestOutcome>(o)));
  d["outcome"] = string_column(outcomes, r.outcome);
  return d;
}

py::list events_list(const std::string& trace) {
  py::list out;
  std::size_t at = 0;
  while (at < trace.size()) {
    std::size_t nl = trace.find('\n', at);
    if (nl == std::string::npos) nl = trace.size();
    out.append(to_python(Json::parse(trace.begin() + static_cast<std::ptrdiff_t>(at),
                                     trace.begin() + static_cast<std::ptrdiff_t>(nl))));
    at = nl + 1;
  }
  return out;
}

py::object status_at(PyRunResult& r, py::handle when) {
  const Duration t = duration_arg(when, "status_at");
  auto find = [&](const Json& snaps) -> py::object {
    for (const auto& s : snaps)
      if (s.value("source", "") == "--status-at" && s.value("t", SimTime{-1}) == t) return to_python(s);
    return py::none();
  };
  if (auto s = find(r.result->status_snapshots); !s.is_none()) return s;
  // Not taken during the run: the same run again with the snapshot asked
  // for (same scenario, seed and policies give the same run).
  RunOptions opt;
  opt.seed = r.result->seed;
  opt.policies = r.options.policies;
  opt.outputs.status_at = {t};
  opt.outputs.keep_status_snapshots = true;
  RunResult again;
  {
    py::gil_scoped_release nogil;
    again = run_scenario(*r.scenario, opt);
  }
  auto s = find(again.status_snapshots);
  if (s.is_none())
    throw py::value_error("status_at(" + format_seconds(t) + " s): the run ended at " +
                          format_seconds(again.metrics.end_time) + " s, before it");
  return s;
}

// ---- rows: sweep and plan CSVs as dicts ---------------------------------------

const std::set<std::string> kIntColumns = {"seed", "seeds_run", "evaluated_as", "expectations_held", "expectations"};
const std::set<std::string> kBoolColumns = {"all_held", "chosen", "slo_met"};

py::object typed_cell(const std::string& column, const std::string& cell) {
  if (column == "decision" || (column.size() > 4 && column.compare(column.size() - 4, 4, "_slo") == 0))
    return py::str(cell);
  if (cell.empty()) return py::none();
  if (kBoolColumns.count(column)) return py::bool_(cell == "1");
  if (kIntColumns.count(column)) return py::int_(std::stoull(cell));
  return py::float_(std::strtod(cell.c_str(), nullptr));
}

// CSV text (a header, then rows) as dicts; the first `params.size()` columns
// hold the grid's values, given back as the values themselves.
py::list csv_rows(const std::string& text, const SweepGrid& grid, const std::vector<std::size_t>& combination_of_row) {
  std::istringstream in(text);
  std::vector<std::string> header, cells;
  std::size_t line = 0;
  py::list out;
  if (!read_csv_record(in, header, line, "rows")) return out;
  for (std::size_t r = 0; read_csv_record(in, cells, line, "rows"); ++r) {
    py::dict d;
    const auto vi = grid.values_of(combination_of_row.at(r));
    for (std::size_t k = 0; k < header.size() && k < cells.size(); ++k)
      d[py::str(header[k])] = k < grid.params.size() ? to_python(grid.params[k].values[vi[k]])
                                                     : typed_cell(header[k], cells[k]);
    out.append(d);
  }
  return out;
}

// A sweep's --set or a plan's --vary from Python: {path: [values]} or
// {path: "CLI spelling"} ("1,2,4"; for --vary also "1..8").
std::vector<SweepParam> grid_params(py::handle h, bool vary) {
  std::vector<SweepParam> out;
  if (h.is_none()) return out;
  for (auto kv : h.cast<py::dict>()) {
    const auto path = py::str(kv.first).cast<std::string>();
    if (py::isinstance<py::str>(kv.second)) {
      const std::string arg = path + "=" + kv.second.cast<std::string>();
      out.push_back(vary ? parse_vary(arg) : parse_set(arg));
      continue;
    }
    SweepParam p;
    p.path = path;
    p.tokens = split_path(path);
    for (auto v : kv.second) {
      Json j = from_python(v, path);
      p.spelled.push_back(j.is_string() ? j.get<std::string>() : j.dump());
      p.values.push_back(std::move(j));
    }
    if (p.values.empty()) throw SweepError(path + ": expected at least one value");
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::uint64_t> seeds_arg(py::handle h, std::uint64_t fallback) {
  if (h.is_none()) return {fallback};
  if (py::isinstance<py::str>(h)) return parse_seeds(h.cast<std::string>());
  if (py::isinstance<py::int_>(h)) return {h.cast<std::uint64_t>()};
  std::vector<std::uint64_t> out;
  for (auto s : h) out.push_back(s.cast<std::uint64_t>());
  if (out.empty()) throw SweepError("seeds: expected at least one seed");
  return out;
}

unsigned jobs_arg(std::optional<unsigned> jobs) {
  if (jobs && (*jobs < 1 || *jobs > 1024)) throw py::value_error("jobs: expected 1 to 1024");
  return jobs ? *jobs : std::max(1u, std::thread::hardware_concurrency());
}

// Runs `work(stop)` on a thread with the GIL released; Ctrl-C sets `stop`,
// waits for the work to wind down and raises KeyboardInterrupt.
template <class R>
R interruptible(const std::function<R(const std::atomic<bool>&)>& work) {
  std::atomic<bool> stop{false};
  auto fut = std::async(std::launch::async, [&] { return work(stop); });
  for (;;) {
    {
      py::gil_scoped_release nogil;
      if (fut.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready) break;
    }
    if (PyErr_CheckSignals() != 0) {
      stop = true;
      {
        py::gil_scoped_release nogil;
        fut.wait();
      }
      try {
        fut.get();
      } catch (...) {
      }
      throw py::error_already_set();
    }
  }
  return fut.get();
}

struct Interrupted {};

py::list py_sweep(py::handle scenario, py::handle set, py::handle seeds, std::optional<unsigned> jobs) {
  const PyScenario s = as_scenario(scenario);
  SweepGrid grid;
  grid.params = grid_params(set, false);
  grid.seeds = seeds_arg(seeds, s.parsed->seed);
  if (grid.size() > kMaxSweepRuns) throw SweepError("more than " + std::to_string(kMaxSweepRuns) + " runs");
  const std::vector<Scenario> scenarios = expand_scenarios(s.doc, s.file, grid);
  const unsigned threads = jobs_arg(jobs);
  const std::vector<std::string> rows = interruptible<std::vector<std::string>>([&](const std::atomic<bool>& stop) {
    return run_sweep(grid, scenarios, 0, grid.size(), threads, {}, [&] { return stop.load(); });
  });
  std::string text = sweep_csv_header(grid);
  std::vector<std::size_t> combination;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    text += rows[i];
    combination.push_back(i / grid.seeds.size());
  }
  return csv_rows(text, grid, combination);
}

py::list py_compare(py::handle scenario, std::vector<std::string> policies, std::optional<std::uint64_t> seed) {
  const PyScenario s = as_scenario(scenario);
  py::list out;
  for (const auto& p : policies) {
    RunOptions opt;
    opt.seed = seed;
    opt.policies = policies_arg(p, "policies");
    RunResult r;
    {
      py::gil_scoped_release nogil;
      r = run_scenario(*s.parsed, opt);
    }
    out.append(to_python(run_summary(r)));
  }
  return out;
}

std::vector<std::string> strings_arg(py::handle h) {
  std::vector<std::string> out;
  if (h.is_none()) return out;
  if (py::isinstance<py::str>(h)) return {h.cast<std::string>()};
  for (auto v : h) out.push_back(py::str(v).cast<std::string>());
  return out;
}

py::dict py_plan(py::handle scenario, py::handle slo, py::handle vary, py::handle monotone, py::handle seeds,
                 const std::string& objective, double confidence, std::size_t seed_batch, bool exhaustive,
                 std::optional<unsigned> jobs) {
  const PyScenario s = as_scenario(scenario);
  PlanSpec spec;
  spec.grid.params = grid_params(vary, true);
  spec.monotone.assign(spec.grid.params.size(), false);
  for (const auto& m : strings_arg(monotone)) {
    std::size_t p = 0;
    while (p < spec.grid.params.size() && spec.grid.params[p].path != m) ++p;
    if (p == spec.grid.params.size()) throw PlanError("monotone " + m + ": expected the path of a vary dimension");
    spec.monotone[p] = true;
  }
  for (const auto& t : strings_arg(slo)) spec.slos.push_back(parse_slo_arg(t));
  spec.grid.seeds = seeds_arg(seeds, s.parsed->seed);
  spec.objective = objective;
  spec.confidence = confidence;
  spec.seed_batch = seed_batch;
  spec.exhaustive = exhaustive;
  validate(spec);
  const PlanEvaluator evaluate = local_plan_evaluator(s.doc, s.file, spec, jobs_arg(jobs));
  // A round is seconds: an interrupt is seen between rounds, as the CLI does.
  const PlanResult r = interruptible<PlanResult>([&](const std::atomic<bool>& stop) {
    return run_plan(spec, [&](const std::vector<PlanTask>& tasks) {
      if (stop) throw Interrupted{};
      return evaluate(tasks);
    });
  });
  std::vector<std::size_t> combination;
  for (const auto& row : r.rows) combination.push_back(row.combination);
  py::list rows = csv_rows(plan_csv(spec, r), spec.grid, combination);
  py::dict out;
  auto row_or_none = [&](std::optional<std::size_t> i) { return i ? py::object(rows[*i]) : py::none(); };
  out["chosen"] = row_or_none(r.chosen);
  out["runner_up"] = row_or_none(r.runner_up);
  out["closest"] = row_or_none(r.closest);
  py::list hopeless;
  for (std::size_t i : r.hopeless) hopeless.append(rows[i]);
  out["hopeless"] = hopeless;
  out["rows"] = rows;
  out["combinations"] = r.combinations;
  out["runs"] = r.runs;
  out["rounds"] = r.rounds;
  py::dict limit;  // worker jobs that reached their time limit while serving, over every run
  limit["runs"] = r.time_limit.runs;
  limit["runs_hit"] = r.time_limit.hit;
  limit["jobs"] = r.time_limit.jobs;
  limit["replicas_lost"] = r.time_limit.replicas;
  limit["requests_lost"] = r.time_limit.requests;
  out["time_limit"] = limit;
  return out;
}

}  // namespace
}  // namespace vramsim

PYBIND11_MODULE(vramsim, m) {
  using namespace vramsim;
  m.doc() = "vramsim: a SLURM-backed GPU serving cluster, simulated (docs/python.md)";

  g_scenario_error = py::exception<ScenarioError>(m, "ScenarioError", PyExc_ValueError).ptr();
  g_sweep_error = py::exception<SweepError>(m, "SweepError", PyExc_ValueError).ptr();
  g_plan_error = py::exception<PlanError>(m, "PlanError", PyExc_ValueError).ptr();
  g_scenario_error.attr("__doc__") =
      "A scenario the format refuses: str() is the CLI's message (exit 2); .file, .path (the JSON path) and "
      ".problem its parts.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ScenarioError& e) {
      raise_scenario_error(e);
    } catch (const SweepError& e) {
      PyErr_SetString(g_sweep_error.ptr(), e.what());
    } catch (const PlanError& e) {
      PyErr_SetString(g_plan_error.ptr(), e.what());
    } catch (const OutputError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });

  py::class_<PyScenario>(m, "Scenario", "A validated scenario (vramsim.load)")
      .def_property_readonly("file", [](const PyScenario& s) { return s.file; })
      .def_property_readonly("name", [](const PyScenario& s) { return s.parsed->name; })
      .def_property_readonly("seed", [](const PyScenario& s) { return s.parsed->seed; })
      .def_property_readonly("policies", [](const PyScenario& s) { return s.parsed->policies; })
      .def_property_readonly("horizon_s", [](const PyScenario& s) { return to_seconds(s.parsed->horizon); })
      .def_property_readonly("apps",
                             [](const PyScenario& s) {
                               py::list l;
                               for (const auto& a : s.parsed->apps) l.append(a.id);
                               return l;
                             })
      .def("to_dict", [](const PyScenario& s) { return to_python(s.doc); },
           "The scenario document as a dict (edit it and vramsim.load it again)")
      .def("__repr__", [](const PyScenario& s) {
        return "<vramsim.Scenario " + (s.parsed->name.empty() ? s.file : s.parsed->name) + ">";
      });

  py::class_<PyRunResult, std::shared_ptr<PyRunResult>>(m, "RunResult", "One run (vramsim.run)")
      .def_property_readonly("summary", [](const PyRunResult& r) { return to_python(run_summary(*r.result)); },
                             "Every metric of a sweep CSV row, by the same names (run --summary-json)")
      .def_property_readonly("apps",
                             [](const PyRunResult& r) {
                               py::list l;
                               for (const auto& a : r.result->apps) l.append(app_dict(a));
                               return l;
                             })
      .def_property_readonly("serving",
                             [](const PyRunResult& r) {
                               py::list l;
                               for (const auto& o : r.result->serving) l.append(serving_dict(o));
                               return l;
                             })
      .def_property_readonly("requests",
                             [](PyRunResult& r) {
                               if (!r.options.outputs.keep_requests)
                                 throw py::value_error("requests: this run was made with requests=False");
                               if (!r.requests_cache) r.requests_cache = requests_dict(r.result->requests);
                               return r.requests_cache;
                             },
                             "Per request, as NumPy columns (run --requests-csv)")
      .def_property_readonly("events",
                             [](PyRunResult& r) {
                               if (!r.events_cache) r.events_cache = events_list(r.trace);
                               return r.events_cache;
                             },
                             "The trace as records (run --trace, docs/trace-format.md)")
      .def_property_readonly("trace", [](const PyRunResult& r) { return py::str(r.trace); },
                             "The trace as JSON Lines, the bytes run --trace writes")
      .def_property_readonly("text",
                             [](const PyRunResult& r) {
                               std::ostringstream out;
                               print_summary(*r.result, out);
                               return out.str();
                             },
                             "What vramsim run prints")
      .def_property_readonly("expectations",
                             [](const PyRunResult& r) {
                               py::list l;
                               for (const auto& e : r.result->expectations)
                                 l.append(py::dict("path"_a = e.path, "name"_a = e.name,
                                                   "description"_a = e.description, "held"_a = e.held,
                                                   "why"_a = e.why));
                               return l;
                             })
      .def_property_readonly("all_held", [](const PyRunResult& r) { return r.result->all_held(); })
      .def_property_readonly("seed", [](const PyRunResult& r) { return r.result->seed; })
      .def_property_readonly("policies", [](const PyRunResult& r) { return r.result->policies; })
      .def("status_at", &status_at, "when"_a,
           "The cluster status at a time (\"200s\" or seconds), as run --status-json writes it")
      .def("__repr__", [](const PyRunResult& r) {
        return "<vramsim.RunResult " + r.result->scenario + " policies " + r.result->policies + " seed " +
               std::to_string(r.result->seed) + ">";
      });

  m.def("load", &load, "source"_a, "file"_a = py::none(),
        "A scenario from a file path or a dict, validated as the CLI validates it");
  m.def("run", &py_run, "scenario"_a, "policies"_a = py::none(), "seed"_a = py::none(), "horizon"_a = py::none(),
        "status_at"_a = py::none(), "gpu_prices"_a = py::none(), "requests"_a = true, "One run, as vramsim run");
  m.def("compare", &py_compare, "scenario"_a, "policies"_a = std::vector<std::string>{"legacy", "fixed"},
        "seed"_a = py::none(), "One summary row per policy choice, as vramsim compare");
  m.def("sweep", &py_sweep, "scenario"_a, "set"_a = py::none(), "seeds"_a = py::none(), "jobs"_a = py::none(),
        "The grid's rows, the columns of vramsim sweep's CSV");
  m.def("plan", &py_plan, "scenario"_a, "slo"_a, "vary"_a = py::none(), "monotone"_a = py::none(),
        "seeds"_a = py::none(), "objective"_a = "cost_usd", "confidence"_a = 0.95, "seed_batch"_a = 4,
        "exhaustive"_a = false, "jobs"_a = py::none(), "The cheapest configuration meeting the SLOs, as vramsim plan");
  m.attr("__version__") = "0.1.0";
}
