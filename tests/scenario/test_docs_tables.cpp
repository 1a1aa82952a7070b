// The reference pages against what the code declares, both ways: every
// trace kind (engine/trace_kinds.hpp) has its row in docs/trace-format.md
// with exactly its fields, and every row names a declared kind; every run
// metric (scenario/run_metrics.cpp) has its row in docs/sweeps.md with its
// unit and its meaning, and every row names a metric or one of the sweep
// CSV's other columns.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/trace_kinds.hpp"
#include "scenario/run_metrics.hpp"

namespace vramsim {
namespace {

std::string page(const std::string& name) {
  std::ifstream in(std::string(VRAMSIM_SOURCE_DIR) + "/docs/" + name);
  EXPECT_TRUE(in) << "docs/" << name << " is missing";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The cells of each table row that starts with a code span ("| `x` | ...").
std::vector<std::vector<std::string>> code_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|') {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    for (auto& c : cells) {
      const auto b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
      c = b == std::string::npos ? "" : c.substr(b, e - b + 1);
    }
    rows.push_back(cells);
  }
  return rows;
}

std::vector<std::string> code_spans(const std::string& text) {
  std::vector<std::string> out;
  static const std::regex span("`([a-z_0-9]+)`");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), span); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// A field cell names the fields in code spans; what stands in parentheses
// (values, remarks) is not a field.
std::set<std::string> field_names(const std::string& cell) {
  std::string outside;
  int depth = 0;
  for (char c : cell) {
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    else if (depth == 0) outside += c;
  }
  const auto spans = code_spans(outside);
  return {spans.begin(), spans.end()};
}

TEST(DocsTables, EveryTraceKindHasItsRowWithItsFields) {
  std::map<std::string, std::set<std::string>> documented;
  for (const auto& row : code_rows(page("trace-format.md"))) {
    ASSERT_GE(row.size(), 2u) << row.front();
    for (const auto& kind : code_spans(row[0])) documented[kind] = field_names(row[1]);
  }
  for (TraceKind k : all_trace_kinds()) {
    const std::string kind(name(k));
    auto it = documented.find(kind);
    if (it == documented.end()) {
      ADD_FAILURE() << "docs/trace-format.md has no row for the kind " << kind;
      continue;
    }
    const std::set<std::string> declared(trace_kind_fields(k).begin(), trace_kind_fields(k).end());
    for (const auto& f : declared)
      EXPECT_TRUE(it->second.count(f)) << kind << ": docs/trace-format.md does not name its field " << f;
    for (const auto& f : it->second)
      EXPECT_TRUE(declared.count(f)) << kind << ": docs/trace-format.md names a field " << f
                                     << " that engine/trace_kinds.hpp does not declare";
  }
  for (const auto& [kind, fields] : documented)
    EXPECT_TRUE(trace_kind_named(kind).has_value())
        << "docs/trace-format.md has a row for " << kind << ", which engine/trace_kinds.hpp does not declare";
}

TEST(DocsTables, EveryMetricHasItsRowWithItsUnitAndMeaning) {
  const std::string text = page("sweeps.md");
  // The CSV columns' table: from its header row to the first line after it
  // that is not a table row.
  const auto at = text.find("| column | unit | meaning |");
  ASSERT_NE(at, std::string::npos) << "docs/sweeps.md: no CSV column table";
  const std::string table = text.substr(at, text.find("\n\n", at) - at);
  std::map<std::string, std::vector<std::string>> rows;
  for (const auto& row : code_rows(table)) {
    ASSERT_EQ(row.size(), 3u) << row.front();
    for (const auto& column : code_spans(row[0])) rows[column] = row;
  }
  for (const RunMetricSpec& m : run_metrics()) {
    auto it = rows.find(std::string(m.name));
    if (it == rows.end()) {
      ADD_FAILURE() << "docs/sweeps.md has no row for the metric " << m.name;
      continue;
    }
    EXPECT_EQ(it->second[0], "`" + std::string(m.name) + "`") << "a metric's row names it alone";
    EXPECT_EQ(it->second[1], m.unit) << m.name;
    EXPECT_EQ(it->second[2], m.meaning) << m.name;
  }
  const std::set<std::string> other = {"seed", "expectations_held", "expectations", "all_held"};
  for (const auto& [column, row] : rows)
    EXPECT_TRUE(find_run_metric(column) || other.count(column))
        << "docs/sweeps.md has a row for " << column << ", which is no run metric nor sweep column";
}

// Every metric's row of the declaration is whole: a unit where it counts
// something other than events, a meaning, the observer that computes it.
TEST(DocsTables, EveryMetricDeclarationIsWhole) {
  std::set<std::string_view> names;
  for (const RunMetricSpec& m : run_metrics()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name << " twice";
    EXPECT_FALSE(m.meaning.empty()) << m.name;
    EXPECT_FALSE(m.computed_by.empty()) << m.name;
    EXPECT_EQ(find_run_metric(m.name), &m);
  }
  EXPECT_EQ(find_run_metric("jobs_submited"), nullptr);
}

}  // namespace
}  // namespace vramsim
