#pragma once

// The median of a benchmark's rounds (the upper one of an even count).

#include <algorithm>
#include <vector>

namespace cronledger::bench {

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace cronledger::bench
