#pragma once
// A concurrency curve: v(n) is the throughput of n busy servers (replicas on
// a device, or requests in one replica) relative to one alone, so each of
// the n progresses at v(n) / n of its solo speed. v(1) is the first value;
// past the end of the list the last value holds. Values are positive and
// need not rise (a kernel that fills the device loses throughput when
// shared). The named presets live in models/sharing_curves.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace vramsim {

struct SpeedCurve {
  std::string name;              // the preset's name, or "curve" / the file's path
  std::vector<double> values;    // v(1), v(2), ...; empty: v(n) = n (independent servers)
  bool independent() const { return values.empty(); }
  // v(n) for n >= 1.
  double at(std::size_t n) const {
    if (values.empty()) return static_cast<double>(n);
    return values[std::min(n, values.size()) - 1];
  }
  // Speed of each of n busy servers relative to one alone: v(n) / n.
  double share(std::size_t n) const { return n == 0 ? 0 : at(n) / static_cast<double>(n); }
};

}  // namespace vramsim
