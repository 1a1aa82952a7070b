#include "scenario/scenario.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "models/gpu_models.hpp"
#include "models/policy_set.hpp"
#include "models/registry.hpp"
#include "scenario/openb_scenario.hpp"
#include "scenario/scenario_parse.hpp"

namespace vramsim {

std::string ray_accelerator_type(const std::string& name) {
  // Ray's rule, the pattern \w+\s+([A-Z0-9]+) from the start of the name:
  // the first run of capitals and digits after the vendor word, so
  // "NVIDIA GeForce RTX 3090" reads "G" and "Tesla T4" reads "T4".
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::size_t i = 0;
  while (i < name.size() && word(name[i])) ++i;
  if (i == 0) return "";
  const std::size_t spaces = i;
  while (i < name.size() && std::isspace(static_cast<unsigned char>(name[i]))) ++i;
  if (i == spaces) return "";
  const std::size_t start = i;
  while (i < name.size() && (std::isupper(static_cast<unsigned char>(name[i])) ||
                             std::isdigit(static_cast<unsigned char>(name[i]))))
    ++i;
  return name.substr(start, i - start);
}

const std::map<std::string, GpuModelInfo>& gpu_catalogue() {
  // The models a partition node may name: the price table's (each priced
  // or saying why not); their figures come from the GPU model table
  // (models/gpu_models.hpp).
  static const std::map<std::string, GpuModelInfo> c = [] {
    std::map<std::string, GpuModelInfo> out;
    for (const GpuPrice& p : gpu_price_table()) {
      const std::string n(p.model);
      const GpuModel* m = find_gpu_model(n);
      if (!m) throw std::logic_error("gpu_catalogue: " + n + " missing from the GPU model table");
      out[n] = GpuModelInfo{m->device_name, ray_accelerator_type(m->device_name), m->vram_mb, m->cuda_total_mb};
    }
    return out;
  }();
  return c;
}

namespace scenario_parse {

void parse_policies(Obj& root, Scenario& s) {
  const Json* p = root.get("policies");
  if (!p) return;
  std::string spec;
  if (p->is_string()) {
    spec = p->get<std::string>();
  } else if (p->is_object()) {
    Obj po(*p, root.at("policies"), root.file());
    spec = po.string("preset", "fixed");
    for (const auto& m : policy_models()) {
      std::string v = po.string(m, "");
      if (!v.empty()) spec += "," + m + "=" + v;
    }
    // The models outside the presets.
    for (const char* m : {PlacementPolicy::kModel, PendingPolicy::kModel}) {
      const std::string v = po.string(m, "");
      if (!v.empty()) spec += std::string(",") + m + "=" + v;
    }
    po.finish();
  } else {
    root.fail(root.at("policies"), "expected a preset name or an object of model -> variant");
  }
  try {
    parse_policy_spec(spec);
  } catch (const UnknownPolicyError& e) {
    root.fail(root.at("policies"), e.what());
  }
  s.policies = spec;
}

}  // namespace scenario_parse

Scenario parse_scenario(const Json& doc, const std::string& file) {
  using namespace scenario_parse;
  Scenario s;
  s.file = file;
  Obj root(doc, "$", file);
  s.name = root.string("name", "");
  s.description = root.string("description", "");
  if (const Json* seed = root.get("seed")) {
    // The whole unsigned 64-bit range, as --seed takes it.
    if (!seed->is_number_unsigned())
      root.fail(root.at("seed"), "expected an integer in [0, 18446744073709551615], got " +
                                     (seed->is_number() ? seed->dump()
                                                        : std::string(scenario_fields::type_name(*seed))));
    s.seed = seed->get<std::uint64_t>();
  }
  s.horizon = root.duration("horizon", s.horizon, limits::kMaxHorizon);
  parse_policies(root, s);
  parse_cluster(root, s);
  if (const Json* wl = root.get("workload")) {
    if (doc.contains("cluster") && doc["cluster"].is_object() && doc["cluster"].contains("partition"))
      root.fail("$.cluster.partition", "expected none with a workload: the trace's node list is the partition");
    apply_openb_workload(*wl, "$.workload", doc.contains("horizon"), s);
  }
  check_partition(root, doc, s);
  parse_ray_serve(root, s);
  AppsById by_id;
  parse_apps(root, s, by_id);
  if (const Json* pr = root.get("gpu_prices_usd_per_hour")) {
    Obj po(*pr, root.at("gpu_prices_usd_per_hour"), file);
    for (auto it = pr->begin(); it != pr->end(); ++it) {
      scenario_fields::lookup_gpu(po, po.at(it.key()), it.key());
      s.gpu_prices[it.key()] = po.number(it.key(), 0, 0, 10000);
    }
    po.finish();
  }
  if (root.has("metrics_app")) {
    s.metrics_app = root.string("metrics_app", "");
    const auto app = by_id.find(s.metrics_app);
    if (!s.applications.count(s.metrics_app) && (app == by_id.end() || !app->second.serve))
      root.fail(root.at("metrics_app"), "expected the id of a serving app, an application or one of its deployments, "
                                        "got '" + s.metrics_app + "'");
  }
  parse_actions(root, s, by_id);
  parse_expectations(root, s, by_id);
  root.finish();
  return s;
}

namespace {

// Keeps a parser message on one printable line: control and non-ASCII bytes
// (the parser quotes what it last read) become \xNN.
std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

// The parser's own reason, without its "[json.exception.parse_error.101] "
// prefix.
std::string parser_reason(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (!what.empty() && what.front() == '[') {
    auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
  }
  return printable(what);
}

// Tracks where the parser is, to refuse duplicate keys (last-wins would hide
// a typo) and nesting deeper than limits::kMaxDepth (recursive copies and
// dumps of such a document could exhaust the stack).
class StructureCheck {
 public:
  explicit StructureCheck(const std::string& file) : file_(file) {}
  bool operator()(int, nlohmann::json::parse_event_t event, Json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        if (frames_.size() >= static_cast<std::size_t>(limits::kMaxDepth))
          throw ScenarioError(file_, path(), "nesting deeper than " + std::to_string(limits::kMaxDepth) +
                                                 " levels of objects and arrays");
        frames_.push_back(Frame{event == E::object_start, {}, {}, 0});
        break;
      case E::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second)
          throw ScenarioError(file_, path(), "duplicate key \"" + f.key + "\" (each key may appear once)");
        break;
      }
      case E::object_end:
      case E::array_end:
        frames_.pop_back();
        [[fallthrough]];
      case E::value:
        if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;
    std::size_t index;
  };
  std::string path() const {
    std::string p = "$";
    for (const auto& f : frames_) {
      if (f.object) { if (!f.key.empty() || !f.keys.empty()) p += "." + f.key; }
      else p += "[" + std::to_string(f.index) + "]";
    }
    return p;
  }
  const std::string& file_;
  std::vector<Frame> frames_;
};

}  // namespace

namespace {

Json parse_json_text(const std::string& text, const std::string& file) {
  if (text.size() > limits::kMaxFileBytes)
    throw ScenarioError(file, "$", "the file is " + std::to_string(text.size()) + " bytes; at most " +
                                       std::to_string(limits::kMaxFileBytes) + " are read");
  // The JSON lexer takes a NUL byte for the end of input; whatever follows
  // it would be silently ignored.
  if (auto nul = text.find('\0'); nul != std::string::npos)
    throw ScenarioError(file, "$", "a NUL byte at offset " + std::to_string(nul) +
                                       " (expected one JSON document and nothing after it)");
  Json doc;
  try {
    StructureCheck check(file);
    doc = Json::parse(text, std::ref(check), /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const nlohmann::json::parse_error& e) {
    // "parse error at line 3, column 5: syntax error ... - invalid literal; ..."
    std::string reason = parser_reason(e);
    const std::string prefix = "parse error at ";
    if (reason.rfind(prefix, 0) == 0) reason = " at " + reason.substr(prefix.size());
    else reason = ": " + reason;
    throw ScenarioError(file, "$", "invalid JSON" + reason);
  } catch (const nlohmann::json::exception& e) {
    // out_of_range: a number too large for a double (1e400).
    throw ScenarioError(file, "$", "invalid JSON: " + parser_reason(e));
  }
  return doc;
}

}  // namespace

const char* name(ActionKind kind) {
  switch (kind) {
    case ActionKind::Deploy: return "deploy";
    case ActionKind::Stop: return "stop";
    case ActionKind::Delete: return "delete";
    case ActionKind::Shutdown: return "shutdown";
    case ActionKind::Status: return "status";
    case ActionKind::Call: return "call";
  }
  return "?";
}

std::optional<ActionKind> action_kind_named(const std::string& word) {
  for (ActionKind k : {ActionKind::Deploy, ActionKind::Stop, ActionKind::Delete, ActionKind::Shutdown,
                       ActionKind::Status, ActionKind::Call})
    if (word == name(k)) return k;
  return std::nullopt;
}

std::string read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, "$", "cannot open the file for reading");
  // Read in chunks, not into a buffer of the limit's size (16 MiB zeroed
  // for a file of a few KiB); one chunk past the limit is enough to refuse
  // an oversized file.
  std::string text;
  std::array<char, 1 << 16> chunk{};
  while (text.size() <= limits::kMaxFileBytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) throw ScenarioError(path, "$", "cannot read the file");
  return text;
}

Json read_json_file(const std::string& path) { return parse_json_text(read_file_text(path), path); }

Scenario parse_scenario_text(const std::string& text, const std::string& file) {
  return parse_scenario(parse_json_text(text, file), file);
}

Scenario load_scenario(const std::string& path) { return parse_scenario_text(read_file_text(path), path); }

}  // namespace vramsim
