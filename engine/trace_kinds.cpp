#include "engine/trace_kinds.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace vramsim {
namespace {

struct Declared {
  std::string_view name, fields;
};

constexpr std::array<Declared, kTraceKindCount> kDeclared = {{
#define VRAMSIM_TRACE_KIND_ROW(kind, fields) {#kind, fields},
    VRAMSIM_TRACE_KINDS(VRAMSIM_TRACE_KIND_ROW)
#undef VRAMSIM_TRACE_KIND_ROW
}};

// The declarations split once: each kind's fields, and the kinds by name.
struct Tables {
  Tables() {
    for (std::size_t k = 0; k < kTraceKindCount; ++k) {
      kinds[k] = static_cast<TraceKind>(k);
      std::string_view rest = kDeclared[k].fields;
      while (!rest.empty()) {
        const auto space = rest.find(' ');
        const std::string_view field = rest.substr(0, space);
        if (!field.empty()) fields[k].push_back(field);
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
      }
      by_name.emplace_back(kDeclared[k].name, kinds[k]);
    }
    std::sort(by_name.begin(), by_name.end());
  }
  std::array<TraceKind, kTraceKindCount> kinds{};
  std::array<std::vector<std::string_view>, kTraceKindCount> fields;
  std::vector<std::pair<std::string_view, TraceKind>> by_name;
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

std::string_view name(TraceKind kind) { return kDeclared[static_cast<std::size_t>(kind)].name; }

std::optional<TraceKind> trace_kind_named(std::string_view name) {
  const auto& v = tables().by_name;
  const auto it = std::lower_bound(v.begin(), v.end(), name,
                                   [](const auto& row, std::string_view n) { return row.first < n; });
  if (it == v.end() || it->first != name) return std::nullopt;
  return it->second;
}

std::span<const std::string_view> trace_kind_fields(TraceKind kind) {
  return tables().fields[static_cast<std::size_t>(kind)];
}

bool trace_kind_has_field(TraceKind kind, std::string_view field) {
  const auto f = trace_kind_fields(kind);
  return std::find(f.begin(), f.end(), field) != f.end();
}

std::span<const TraceKind> all_trace_kinds() { return tables().kinds; }

}  // namespace vramsim
