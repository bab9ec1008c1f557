#pragma once

// What this binary is and which tz database it decides with: `cronledger version` prints it, and
// every /metrics (the controller's and the audit API's) exposes it as the cronledger_build_info
// gauge, so that a fire time can be traced to the zone rules it was computed from.

#include <string>
#include <string_view>

#include "model/result.h"

namespace cronledger::model {

// The cronledger release: the CMake project version ("0.1.0").
std::string_view CronledgerVersion();

// The tz database release in `zoneinfo_dir` ("2025b"), or "unknown" when ReadTzdataVersion fails
// (its status says why).
std::string TzdataLabel(std::string_view zoneinfo_dir);

inline constexpr const char* kBuildInfoMetric = "cronledger_build_info";
// The tzdata label (and `cronledger version`'s word) for a release that cannot be read.
inline constexpr const char* kUnknownTzdata = "unknown";

// The gauge in the Prometheus text format (0.0.4), HELP and TYPE lines included:
// `cronledger_build_info{version="0.1.0",tzdata="2025b"} 1`. Both label values are plain
// (CMake versions are digits and dots, releases letters and digits), so nothing needs escaping.
// `zoneinfo_dir` is the directory the process's TimeZoneDb reads.
std::string RenderBuildInfoMetric(std::string_view zoneinfo_dir);

}  // namespace cronledger::model
