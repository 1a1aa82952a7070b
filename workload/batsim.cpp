#include "workload/batsim.hpp"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "workload/workload_file.hpp"

namespace vramsim {

namespace {

using Json = nlohmann::json;

constexpr double kMaxNumber = 1e12;  // as for SWF: keeps sums far from overflow
// Batsim's times are real numbers of seconds; kept to the millisecond.
constexpr std::int64_t kBatsimTicks = 1000;
std::int64_t to_ticks(double seconds) { return std::llround(seconds * static_cast<double>(kBatsimTicks)); }
constexpr int kMaxDepth = 64;       // nesting; deeper documents are refused

std::string shown(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 40) + "...";
  return s;
}

class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& path, const std::string& problem) const {
    throw WorkloadError(file_, 0, path, problem);
  }

  // A number in [lo, kMaxNumber].
  double number(const Json& v, const std::string& path, double lo, const char* what) const {
    if (!v.is_number() || !(v.get<double>() >= lo) || v.get<double>() > kMaxNumber)
      fail(path, std::string("expected ") + what + ", got " + shown(v));
    return v.get<double>();
  }

  std::int64_t integer(const Json& v, const std::string& path, std::int64_t lo, const char* what) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > kMaxNumber)
      fail(path, std::string("expected ") + what + ", got " + shown(v));
    return v.get<std::int64_t>();
  }

  const Json& field(const Json& obj, const std::string& path, const char* key) const {
    const auto it = obj.find(key);
    if (it == obj.end()) fail(path + "." + key, "missing");
    return *it;
  }

 private:
  const std::string& file_;
};

// A delay profile's run time in whole seconds (rounded up: a job runs at
// least as long as its delay), or -1 when the profile is not a delay.
std::int64_t profile_run_time(const Json& profiles, const std::string& name, const std::string& path,
                              const Reader& rd) {
  const auto it = profiles.find(name);
  if (it == profiles.end()) rd.fail(path, "expected the name of a profile in profiles, got \"" + name + "\"");
  const std::string ppath = "profiles." + name;
  if (!it->is_object()) rd.fail(ppath, "expected an object, got " + shown(*it));
  const Json& type = rd.field(*it, ppath, "type");
  if (!type.is_string()) rd.fail(ppath + ".type", "expected a string, got " + shown(type));
  if (type != "delay" && type != "DelayProfile") return -1;
  const double delay = rd.number(rd.field(*it, ppath, "delay"), ppath + ".delay", 0, "a delay in seconds >= 0");
  return to_ticks(delay);
}

// vramsim's "gres" extension: "gpu:N", N GPUs on each of the job's nodes
// (SLURM's --gres=gpu:N), N in [0, kMaxSwfGpusPerNode].
std::int64_t gres_gpus(const Json& v, const std::string& path, const Reader& rd) {
  const std::string what = "expected \"gpu:N\" with N GPUs per node from 0 to " +
                           std::to_string(kMaxSwfGpusPerNode) + ", got " + shown(v);
  if (!v.is_string()) rd.fail(path, what);
  const std::string& str = v.get_ref<const std::string&>();
  const std::string_view n = std::string_view(str).substr(str.rfind("gpu:", 0) == 0 ? 4 : str.size());
  std::int64_t gpus = -1;
  const auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), gpus);
  if (n.empty() || ec != std::errc() || p != n.data() + n.size() || gpus < 0 || gpus > kMaxSwfGpusPerNode)
    rd.fail(path, what);
  return gpus;
}

}  // namespace

SwfTrace parse_batsim(std::string_view text, const std::string& file, std::size_t limit) {
  const Reader rd(file);
  // The JSON lexer takes a NUL byte for the end of input.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    rd.fail("JSON", "a NUL byte at offset " + std::to_string(nul) + " (expected one JSON document)");
  Json doc;
  try {
    doc = Json::parse(text, [&](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxDepth) rd.fail("JSON", "nested deeper than " + std::to_string(kMaxDepth) + " levels");
      return true;
    });
  } catch (const Json::exception& e) {
    std::string why = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, ...": drop the tag.
    if (const auto b = why.find("] "); why.rfind("[json.exception.", 0) == 0 && b != std::string::npos)
      why = why.substr(b + 2);
    rd.fail("JSON", "invalid JSON: " + why);
  }
  if (!doc.is_object()) rd.fail("$", "expected an object with nb_res, jobs and profiles, got " + shown(doc));
  SwfTrace t;
  t.file = file;
  t.kill_at_req_time = true;
  t.ticks_per_second = kBatsimTicks;
  t.header.max_procs = rd.integer(rd.field(doc, "$", "nb_res"), "nb_res", 1, "a positive number of resources");
  const Json& jobs = rd.field(doc, "$", "jobs");
  if (!jobs.is_array()) rd.fail("jobs", "expected an array, got " + shown(jobs));
  static const Json kNoProfiles = Json::object();
  const auto pit = doc.find("profiles");
  const Json& profiles = pit == doc.end() ? kNoProfiles : *pit;
  if (!profiles.is_object()) rd.fail("profiles", "expected an object, got " + shown(profiles));
  for (std::size_t i = 0; i < jobs.size() && (limit == 0 || t.jobs.size() < limit); ++i) {
    const Json& j = jobs[i];
    const std::string path = "jobs[" + std::to_string(i) + "]";
    if (!j.is_object()) rd.fail(path, "expected an object, got " + shown(j));
    SwfJob s;
    // Ids may be integers or, in newer Batsim, strings; the CSV needs numbers.
    const Json& id = rd.field(j, path, "id");
    if (id.is_string()) {
      const std::string& str = id.get_ref<const std::string&>();
      std::int64_t v = -1;
      const auto [p, ec] = std::from_chars(str.data(), str.data() + str.size(), v);
      if (str.empty() || ec != std::errc() || p != str.data() + str.size() || v < 0 || v > kMaxNumber)
        rd.fail(path + ".id", "expected an integer id >= 0 (or a string of digits), got " + shown(id));
      s.id = v;
    } else {
      s.id = rd.integer(id, path + ".id", 0, "an integer id >= 0 (or a string of digits)");
    }
    s.submit = to_ticks(rd.number(rd.field(j, path, "subtime"), path + ".subtime", 0, "a time in seconds >= 0"));
    s.alloc_procs = s.req_procs = rd.integer(rd.field(j, path, "res"), path + ".res", 1, "a positive number of resources");
    // walltime -1 (or absent): no limit.
    if (const auto w = j.find("walltime"); w != j.end() && !(w->is_number() && w->get<double>() == -1)) {
      const double wall = rd.number(*w, path + ".walltime", 0, "a time in seconds > 0, or -1 for none");
      if (wall <= 0) rd.fail(path + ".walltime", "expected a time in seconds > 0, or -1 for none, got " + shown(*w));
      s.req_time = std::max<std::int64_t>(1, to_ticks(wall));  // a walltime under half a millisecond: 1 ms
    }
    const Json& prof = rd.field(j, path, "profile");
    if (!prof.is_string()) rd.fail(path + ".profile", "expected a profile name, got " + shown(prof));
    s.run_time = profile_run_time(profiles, prof.get<std::string>(), path + ".profile", rd);
    if (const auto g = j.find("gres"); g != j.end()) s.gpus_per_node = gres_gpus(*g, path + ".gres", rd);
    t.jobs.push_back(s);
  }
  return t;
}

SwfTrace load_batsim(const std::string& path, std::size_t limit) {
  const WorkloadFile file(path);
  return parse_batsim(file.text(), path, limit);
}

}  // namespace vramsim
