#include "scenario/yaml_document.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <regex>

#include "scenario/scenario.hpp"

namespace vramsim {

namespace {

constexpr int kMaxYamlDepth = 64;
constexpr std::size_t kMaxYamlValues = 20000;  // a Serve config holds hundreds

// YAML 1.1's core resolvers, as PyYAML's SafeLoader applies them to a plain
// (unquoted) scalar. Integers in other bases and sexagesimal numbers are
// read as PyYAML reads them too; a value that does not fit 64 bits is kept
// as a double (Python's int has no limit; no Serve field takes such a value).
const std::regex& null_re() {
  static const std::regex r("^(~|null|Null|NULL|)$");
  return r;
}
const std::regex& true_re() {
  static const std::regex r("^(yes|Yes|YES|true|True|TRUE|on|On|ON)$");
  return r;
}
const std::regex& false_re() {
  static const std::regex r("^(no|No|NO|false|False|FALSE|off|Off|OFF)$");
  return r;
}
const std::regex& int_re() {
  static const std::regex r("^[-+]?(0|[1-9][0-9_]*)$");
  return r;
}
const std::regex& float_re() {
  // PyYAML's float: a dot is required ("1e3" is a string there).
  static const std::regex r(
      "^([-+]?([0-9][0-9_]*)?\\.[0-9_]*([eE][-+][0-9]+)?|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$");
  return r;
}

std::string format_hex_byte(unsigned char c) {
  static const char* digits = "0123456789ABCDEF";
  return {digits[c >> 4], digits[c & 15]};
}

std::string format_hex_code_point(std::uint32_t cp) {
  std::string out;
  for (int shift = cp > 0xFFFF ? 20 : 12; shift >= 0; shift -= 4) out += "0123456789ABCDEF"[(cp >> shift) & 15];
  return out;
}

std::string strip_underscores(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += c;
  return out;
}

Json plain_scalar(const std::string& s) {
  if (std::regex_match(s, null_re())) return Json();
  if (std::regex_match(s, true_re())) return true;
  if (std::regex_match(s, false_re())) return false;
  if (std::regex_match(s, int_re())) {
    const std::string digits = strip_underscores(s);
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(digits.c_str(), &end, 10);
    if (errno == 0 && end && *end == '\0') return static_cast<std::int64_t>(v);
    return std::strtod(digits.c_str(), nullptr);
  }
  if (std::regex_match(s, float_re())) {
    std::string t = strip_underscores(s);
    if (t.find("inf") != std::string::npos || t.find("Inf") != std::string::npos ||
        t.find("INF") != std::string::npos)
      return t[0] == '-' ? -HUGE_VAL : HUGE_VAL;
    if (t.find_first_of("nN") != std::string::npos) return std::nan("");
    return std::strtod(t.c_str(), nullptr);
  }
  return s;
}

class YamlToJson {
 public:
  YamlToJson(const std::string& file, YamlDocument& doc) : file_(file), doc_(doc) {}

  Json read(const YAML::Node& n, const std::string& path, int depth) {
    // Aliases share nodes: a small file can name a value billions of times
    // over ("billion laughs"). Counted as expanded, and refused past a cap.
    if (++values_ > kMaxYamlValues)
      throw ScenarioError(file_, doc_.where(path), "expands to more than " + std::to_string(kMaxYamlValues) +
                                                       " values (aliases repeat a value each time they name it)");
    if (depth > kMaxYamlDepth)
      throw ScenarioError(file_, doc_.where(path), "nested deeper than " + std::to_string(kMaxYamlDepth) + " levels");
    if (n.Mark().line >= 0) doc_.lines[path] = n.Mark().line + 1;
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return Json();
      case YAML::NodeType::Scalar:
        // A quoted scalar (tag "!") is a string whatever it spells.
        return n.Tag() == "!" ? Json(n.Scalar()) : plain_scalar(n.Scalar());
      case YAML::NodeType::Sequence: {
        Json a = Json::array();
        std::size_t i = 0;
        for (const auto& item : n) {
          a.push_back(read(item, path + "[" + std::to_string(i) + "]", depth + 1));
          ++i;
        }
        return a;
      }
      case YAML::NodeType::Map: {
        Json o = Json::object();
        for (const auto& kv : n) {
          if (!kv.first.IsScalar())
            throw ScenarioError(file_, doc_.where(path), "expected string keys, found a " +
                                                            std::string(kv.first.IsMap() ? "mapping" : "sequence") +
                                                            " used as a key");
          const std::string key = kv.first.Scalar();
          const std::string sub = path.empty() ? key : path + "." + key;
          if (o.contains(key)) {
            doc_.lines[sub] = kv.first.Mark().line + 1;
            throw ScenarioError(file_, doc_.where(sub), "duplicate key (YAML would keep only the last value)");
          }
          o[key] = read(kv.second, sub, depth + 1);
        }
        return o;
      }
    }
    return Json();
  }

 private:
  const std::string& file_;
  YamlDocument& doc_;
  std::size_t values_ = 0;
};

// PyYAML's reader accepts only printable Unicode in UTF-8 (tab, line feed,
// carriage return, U+0020-U+007E, U+0085, U+00A0-U+D7FF, U+E000-U+FFFD,
// U+10000-U+10FFFF); anything else is refused, with its line and column.
void check_printable_utf8(const std::string& text, const std::string& file) {
  int line = 1, column = 1;
  auto refuse = [&](const std::string& what) {
    throw ScenarioError(file, "line " + std::to_string(line) + ", column " + std::to_string(column),
                        "invalid YAML: " + what);
  };
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    std::uint32_t cp = 0;
    std::size_t len = 1;
    if (c < 0x80) cp = c;
    else if ((c & 0xE0) == 0xC0) cp = c & 0x1F, len = 2;
    else if ((c & 0xF0) == 0xE0) cp = c & 0x0F, len = 3;
    else if ((c & 0xF8) == 0xF0) cp = c & 0x07, len = 4;
    else refuse("not UTF-8 (byte 0x" + format_hex_byte(c) + ")");
    if (i + len > n) refuse("not UTF-8 (a sequence cut short at the end)");
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) refuse("not UTF-8 (byte 0x" + format_hex_byte(p[i + k]) + ")");
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    static constexpr std::uint32_t kMinOfLength[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinOfLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      refuse("not UTF-8 (an overlong or out-of-range sequence)");
    const bool printable = cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
                           (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
    if (!printable) refuse("a character YAML does not allow (U+" + format_hex_code_point(cp) + ")");
    if (cp == '\n') ++line, column = 1;
    else ++column;
    i += len;
  }
}

}  // namespace

bool yaml_plain_reads_as_string(const std::string& s) {
  const Json v = plain_scalar(s);
  return v.is_string() && v.get<std::string>() == s;
}

std::string YamlDocument::where(const std::string& path) const {
  // The longest labelled prefix that ends at a path boundary.
  auto boundary = [&](const std::string& prefix) {
    return path.size() == prefix.size() || path[prefix.size()] == '.' || path[prefix.size()] == '[';
  };
  std::string shown = path.empty() ? "(top level)" : path;
  std::size_t best = 0;
  bool labelled = false;
  for (const auto& [prefix, label] : labels)
    if (path.rfind(prefix, 0) == 0 && boundary(prefix) && (!labelled || prefix.size() > best)) {
      best = prefix.size();
      labelled = true;
      shown = label + path.substr(prefix.size());
    }
  auto it = lines.find(path);
  if (it == lines.end() && labelled) {
    // The nearest line known above the path, within the label.
    for (std::string p = path; p.size() > best;) {
      const auto cut = p.find_last_of(".[");
      if (cut == std::string::npos || cut < best) break;
      p = p.substr(0, cut);
      if ((it = lines.find(p)) != lines.end()) break;
    }
    if (it == lines.end()) it = lines.find(path.substr(0, best));
  }
  return it == lines.end() ? shown : shown + " (line " + std::to_string(it->second) + ")";
}

YamlDocument read_yaml(const std::string& text, const std::string& file) {
  if (text.size() > limits::kMaxFileBytes)
    throw ScenarioError(file, "(file)", "expected at most " + std::to_string(limits::kMaxFileBytes) + " bytes");
  check_printable_utf8(text, file);
  YamlDocument doc;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(file, "line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1),
                        "invalid YAML: " + e.msg);
  }
  if (docs.size() > 1) throw ScenarioError(file, "(file)", "expected one YAML document, found " + std::to_string(docs.size()));
  if (docs.empty()) return doc;
  YamlToJson r(file, doc);
  doc.value = r.read(docs[0], "", 0);
  return doc;
}

}  // namespace vramsim
