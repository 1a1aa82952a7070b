#pragma once
// The exit statuses every vramsim command shares (docs/cli.md): 1 an
// expectation or SLO not met, 2 bad input, 3 an output that could not be
// written, 4 an internal error, 130 interrupted.
namespace vramsim::cli {

constexpr int kInvalid = 2;
constexpr int kOutput = 3;
constexpr int kInternal = 4;
constexpr int kInterrupted = 130;

}  // namespace vramsim::cli
