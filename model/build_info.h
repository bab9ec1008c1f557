#pragma once

// What this binary is and which tz database it decides with: `cronledger version` prints it, and
// every /metrics (the controller's and the audit API's) exposes it as the cronledger_build_info
// gauge, so that a fire time can be traced to the zone rules it was computed from.

#include <string>
#include <string_view>

#include "model/timezone.h"

namespace cronledger::model {

// The cronledger release: the CMake project version ("0.1.0").
std::string_view CronledgerVersion();

// The tz database release `tzdb` reads ("2025b"), or "unknown" when TimeZoneDb::Version() fails
// (its status says why).
std::string TzdataLabel(const TimeZoneDb& tzdb);

inline constexpr const char* kBuildInfoMetric = "cronledger_build_info";

// The gauge in the Prometheus text format (0.0.4), HELP and TYPE lines included:
// `cronledger_build_info{version="0.1.0",tzdata="2025b"} 1`. Both label values are plain
// (CMake versions are digits and dots, releases letters and digits), so nothing needs escaping.
std::string RenderBuildInfoMetric(const TimeZoneDb& tzdb);

}  // namespace cronledger::model
