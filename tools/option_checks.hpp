#pragma once
// Checks for command-line values, run before CLI11 converts them, so an
// option takes the range its scenario field has: out of range or empty
// fails the parse (exit 2) with a message naming the option.
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <string>

namespace vramsim::cli {

// A seed, as the scenario's `seed`: an integer in [0, 2^64-1], nothing else
// ("-1" would wrap, "" would read as 0).
inline CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        std::uint64_t v = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || p != s.data() + s.size())
          return "expected an integer in [0, 18446744073709551615], got '" + s + "'";
        return "";
      },
      "SEED");
}

// A value that may not be empty: given, an empty string is a typo, not the
// option's default.
inline CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& s) -> std::string { return s.empty() ? "expected " + what + ", got ''" : ""; }, "");
}

}  // namespace vramsim::cli
