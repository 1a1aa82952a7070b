#pragma once
// A YAML file read as the JSON value PyYAML's safe_load would give (the
// loader Ray's `serve deploy` uses): mappings, sequences and the YAML 1.1
// scalars (null, booleans, integers, floats, strings), with the line of
// every value kept by its path, for messages. Anchors and aliases resolve
// as PyYAML resolves them; a duplicate key, which PyYAML would silently
// overwrite, is refused. Built on yaml-cpp.
#include <map>
#include <string>

#include "engine/trace.hpp"

namespace vramsim {

struct YamlDocument {
  Json value;
  // "applications[0].deployments[1].name" -> its 1-based line.
  std::map<std::string, int> lines;
  // Names to show for a path and what lies under it, in place of the path
  // (a document built from another source: "runtime.py:Runtime").
  std::map<std::string, std::string> labels;
  // "path (line N)" where the line is known, else "path"; under a label,
  // the label and the rest of the path, with the nearest line known.
  std::string where(const std::string& path) const;
};

// Throws ScenarioError(file, "line L, column C", reason) on a syntax error,
// ScenarioError(file, path, ...) on a duplicate key, a document nested
// deeper than 64 levels, or one whose aliases expand past 20,000 values.
YamlDocument read_yaml(const std::string& text, const std::string& file);

// Whether `s` written as a plain (unquoted) scalar reads back as that string
// ("yes", "123", "~" and "1.5e+3" do not: a writer quotes them).
bool yaml_plain_reads_as_string(const std::string& s);

}  // namespace vramsim
