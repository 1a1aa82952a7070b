#include "runner/sweep.hpp"

#include <atomic>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "engine/json_path.hpp"
#include "engine/text.hpp"
#include "analysis/report.hpp"
#include "runner/simulation.hpp"
#include "runner/sweep_parts.hpp"

namespace vramsim {
namespace {

// Splits at commas outside brackets, braces and strings.
std::vector<std::string> split_values(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : s) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(cur);
  return out;
}

bool bare_word(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != ':' && c != '+')
      return false;
  return true;
}

// The whole of `s` as an unsigned integer into `v`.
bool parse_u64(std::string_view s, std::uint64_t& v) {
  const auto x = parse_integer<std::uint64_t>(s);
  if (x) v = *x;
  return x.has_value();
}

std::string csv_row(const SweepGrid& grid, std::size_t index, const RunResult& r) {
  const std::size_t c = index / grid.seeds.size();
  const auto vi = grid.values_of(c);
  std::string row;
  for (std::size_t p = 0; p < grid.params.size(); ++p) row += csv_field(grid.params[p].spelled[vi[p]]) + ",";
  row += std::to_string(r.seed);
  r.metrics.for_each([&](std::string_view, std::optional<double> v) { row += "," + csv_number(v); });
  std::size_t held = 0;
  for (const auto& e : r.expectations) held += e.held ? 1 : 0;
  row += "," + std::to_string(held) + "," + std::to_string(r.expectations.size()) + "," +
         (r.all_held() ? "1" : "0") + "\n";
  return row;
}

}  // namespace

SweepParam parse_set(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    throw SweepError("--set '" + arg + "': expected PATH=VALUE,VALUE,... such as cluster.max_workers=1,2,4");
  SweepParam p;
  p.path = arg.substr(0, eq);
  p.tokens = split_path(p.path);
  for (const std::string& v : split_values(arg.substr(eq + 1))) {
    Json value = Json::parse(v, nullptr, false);
    if (value.is_discarded()) {
      if (!bare_word(v))
        throw SweepError("--set " + p.path + ": value '" + v +
                         "' is neither JSON nor a bare word (quote strings with spaces or commas: '\"a b\"')");
      value = v;
    }
    p.spelled.push_back(v);
    p.values.push_back(std::move(value));
  }
  return p;
}

std::vector<std::string> split_path(const std::string& path) {
  try {
    return json_path_steps(path);
  } catch (const std::invalid_argument& e) {
    throw SweepError(path.empty() ? std::string("--set: empty path") : "--set " + path + ": " + e.what());
  }
}

void set_at_path(Json& doc, const std::vector<std::string>& tokens, const Json& value, const std::string& path) {
  Json* cur = &doc;
  std::string walked = "$";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (cur->is_null()) *cur = Json::object();  // a field added by an earlier step
    if (cur->is_object()) {
      cur = &(*cur)[t];
      walked += "." + t;
    } else if (cur->is_array()) {
      std::uint64_t k = 0;
      if (!parse_u64(t, k) || k >= cur->size())
        throw SweepError("--set " + path + ": " + walked + " is an array of " + std::to_string(cur->size()) +
                         ", expected an index from 0 to " + std::to_string(cur->size()) + " (exclusive), got '" + t +
                         "'");
      cur = &(*cur)[k];
      walked += "[" + t + "]";
    } else {
      throw SweepError("--set " + path + ": " + walked + " is a " + cur->type_name() +
                       ", not an object or array, so it has no '" + t + "'");
    }
  }
  *cur = value;
}

std::vector<std::uint64_t> parse_seeds(const std::string& text) {
  const std::string what = "--seeds '" + text + "': expected FIRST..LAST (such as 1..100), a seed, or seeds separated by commas";
  std::vector<std::uint64_t> out;
  if (const auto dots = text.find(".."); dots != std::string::npos) {
    std::uint64_t a = 0, b = 0;
    if (!parse_u64(text.substr(0, dots), a) || !parse_u64(text.substr(dots + 2), b) || b < a) throw SweepError(what);
    if (b - a >= 10'000'000) throw SweepError("--seeds '" + text + "': at most 10000000 seeds");
    for (std::uint64_t s = a;; ++s) {
      out.push_back(s);
      if (s == b) break;
    }
    return out;
  }
  for (const std::string& s : split_values(text)) {
    std::uint64_t v = 0;
    if (!parse_u64(s, v)) throw SweepError(what);
    out.push_back(v);
  }
  return out;
}

std::pair<std::size_t, std::size_t> parse_slice(const std::string& text) {
  const auto slash = text.find('/');
  std::uint64_t i = 0, k = 0;
  if (slash == std::string::npos || !parse_u64(text.substr(0, slash), i) || !parse_u64(text.substr(slash + 1), k) ||
      k == 0 || i >= k)
    throw SweepError("--slice '" + text + "': expected I/K with 0 <= I < K, such as 0/4");
  return {static_cast<std::size_t>(i), static_cast<std::size_t>(k)};
}

std::pair<std::size_t, std::size_t> slice_range(std::size_t n, std::size_t index, std::size_t count) {
  // 128-bit products: n * index cannot overflow.
  const auto at = [&](std::size_t i) {
    return static_cast<std::size_t>(static_cast<unsigned __int128>(n) * i / count);
  };
  return {at(index), at(index + 1)};
}

std::size_t SweepGrid::combinations() const {
  std::size_t c = 1;
  for (const auto& p : params) c *= p.values.size();
  return c;
}

std::vector<std::size_t> SweepGrid::values_of(std::size_t c) const {
  std::vector<std::size_t> out(params.size());
  for (std::size_t p = params.size(); p-- > 0;) {
    out[p] = c % params[p].values.size();
    c /= params[p].values.size();
  }
  return out;
}

std::vector<Scenario> expand_scenarios(const Json& doc, const std::string& file, const SweepGrid& grid) {
  // Bounded before any product can overflow: the rows are held in memory.
  std::size_t runs = grid.seeds.size();
  for (const auto& p : grid.params) {
    if (runs > kMaxSweepRuns / p.values.size())
      throw SweepError("--set/--seeds: the grid has more than " + std::to_string(kMaxSweepRuns) +
                       " runs; split it into several sweeps");
    runs *= p.values.size();
  }
  if (runs > kMaxSweepRuns)
    throw SweepError("--set/--seeds: the grid has more than " + std::to_string(kMaxSweepRuns) +
                     " runs; split it into several sweeps");
  std::vector<Scenario> out;
  const std::size_t n = grid.combinations();
  out.reserve(n);
  for (std::size_t c = 0; c < n; ++c) out.push_back(scenario_of(doc, file, grid, c));
  return out;
}

Scenario scenario_of(const Json& doc, const std::string& file, const SweepGrid& grid, std::size_t c,
                     const std::string& option) {
  const auto vi = grid.values_of(c);
  Json d = doc;
  for (std::size_t p = 0; p < grid.params.size(); ++p) {
    const SweepParam& sp = grid.params[p];
    set_at_path(d, sp.tokens, sp.values[vi[p]], sp.path);
  }
  try {
    return parse_scenario(d, file);
  } catch (const ScenarioError& e) {
    throw SweepError(option + " " + grid.setting_of(c) + ": " + e.what());
  }
}

std::string SweepGrid::setting_of(std::size_t c) const {
  const auto vi = values_of(c);
  std::string setting;
  for (std::size_t p = 0; p < params.size(); ++p) setting += (p ? " " : "") + params[p].path + "=" + params[p].spelled[vi[p]];
  return setting;
}

std::string sweep_csv_header(const SweepGrid& grid) {
  std::string h;
  for (const auto& p : grid.params) h += csv_field(p.path) + ",";
  h += "seed";
  RunMetrics().for_each([&](std::string_view name, std::optional<double>) { h += ","; h += name; });
  return h + ",expectations_held,expectations,all_held\n";
}

std::vector<std::string> run_sweep(const SweepGrid& grid, const std::vector<Scenario>& scenarios, std::size_t begin,
                                   std::size_t end, unsigned threads,
                                   const std::function<void(std::size_t, std::size_t)>& progress,
                                   const std::function<bool()>& stop) {
  std::vector<std::string> rows(end - begin);
  std::atomic<std::size_t> next{begin};
  std::atomic<bool> stopped{false};
  std::mutex mu;
  std::size_t done = 0;
  std::exception_ptr failure;
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < end;) {
      if (stop && stop()) {
        stopped = true;
        next = end;  // stop handing out runs
        return;
      }
      try {
        RunOptions opt;
        opt.seed = grid.seeds[i % grid.seeds.size()];
        rows[i - begin] = csv_row(grid, i, run_scenario(scenarios.at(i / grid.seeds.size()), opt));
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failure) failure = std::current_exception();
        next = end;  // stop handing out runs
        return;
      }
      std::lock_guard lock(mu);
      ++done;
      if (progress) progress(done, end - begin);
    }
  };
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::max<std::size_t>(1, end - begin))));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  if (stopped) throw SweepInterrupted("interrupted after " + std::to_string(done) + " of " + std::to_string(end - begin) + " runs");
  return rows;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") ==
                           std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string sweep_array_script(const std::vector<std::string>& argv, std::size_t tasks, unsigned cpus_per_task,
                               const std::string& parts_dir, const std::vector<std::size_t>& indices) {
  std::string array = "0-" + std::to_string(tasks - 1);
  if (!indices.empty()) array = array_spec(indices);
  std::string s = "#!/bin/sh\n";
  s += "#SBATCH --job-name=vramsim-sweep\n";
  s += "#SBATCH --array=" + array + "\n";
  s += "#SBATCH --ntasks=1\n";
  s += "#SBATCH --cpus-per-task=" + std::to_string(cpus_per_task) + "\n";
  s += "#SBATCH --output=" + parts_dir + "/task-%a.log\n";
  s += "exec";
  for (const auto& a : argv) s += " " + shell_quote(a);
  s += " --slice \"$SLURM_ARRAY_TASK_ID\"/" + std::to_string(tasks) + " --checksums -j " +
       std::to_string(cpus_per_task) + " -o " + shell_quote(parts_dir) + "/part-\"$SLURM_ARRAY_TASK_ID\".csv\n";
  return s;
}

std::string part_shape_problem(const std::string& header, const std::string& part, std::size_t rows) {
  if (part.compare(0, header.size(), header) != 0) return "expected the sweep's CSV header on the first line";
  const auto got = static_cast<std::size_t>(
      std::count(part.begin() + static_cast<std::ptrdiff_t>(header.size()), part.end(), '\n'));
  if (got != rows || (part.size() > header.size() && part.back() != '\n'))
    return "expected " + std::to_string(rows) + " row(s), got " + std::to_string(got);
  return "";
}

std::string merge_parts(const std::string& header, const std::vector<std::string>& parts, std::size_t runs,
                        const std::vector<std::string>& part_names) {
  std::string out = header;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto [b, e] = slice_range(runs, i, parts.size());
    if (std::string why = part_shape_problem(header, parts[i], e - b); !why.empty())
      throw SweepError(part_names[i] + ": " + why);
    out.append(parts[i], header.size());
  }
  return out;
}

// One line when worker jobs reached their time limit while serving in any
// run of the sweep's CSV (RunMetrics::jobs_timeout_serving); empty if none.
std::string sweep_time_limit_line(const std::string& csv) {
  std::istringstream in(csv);
  std::vector<std::string> cells;
  std::size_t line = 0;
  if (!read_csv_record(in, cells, line, "sweep")) return "";
  const std::vector<std::string> header = cells;
  auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t jobs_at = column("jobs_timeout_serving"), replicas_at = column("replicas_lost_time_limit"),
                    requests_at = column("req_failed_time_limit");
  TimeLimitTally tally;
  auto value = [&](std::size_t at) { return at < cells.size() ? std::strtod(cells[at].c_str(), nullptr) : 0.0; };
  while (read_csv_record(in, cells, line, "sweep")) tally.add(value(jobs_at), value(replicas_at), value(requests_at));
  return time_limit_line("sweep", tally);
}

void TimeLimitTally::add(double jobs_timeout_serving, double replicas_lost, double requests_lost) {
  ++runs;
  if (!(jobs_timeout_serving > 0)) return;
  ++hit;
  jobs += jobs_timeout_serving;
  replicas += replicas_lost;
  requests += requests_lost;
}

std::string time_limit_line(const std::string& tool, const TimeLimitTally& t) {
  if (t.hit == 0) return "";
  std::ostringstream out;
  out << tool << ": time limit: in " << t.hit << " of " << t.runs << " runs worker jobs reached their time_limit while "
      << "serving (" << t.jobs << " job(s) in all; " << t.replicas << " replica(s) lost, each replacement a cold start, "
      << t.requests << " request(s) lost); see the columns jobs_timeout_serving, replicas_lost_time_limit and "
      << "req_failed_time_limit of a sweep, and docs/serving.md, \"Worker time limits\"\n";
  return out.str();
}

}  // namespace vramsim
