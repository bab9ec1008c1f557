#include "model/build_info.h"

#ifndef CRONLEDGER_VERSION
#error "CRONLEDGER_VERSION must be the CMake project version (model/CMakeLists.txt)"
#endif

namespace cronledger::model {

std::string_view CronledgerVersion() { return CRONLEDGER_VERSION; }

std::string TzdataLabel(const TimeZoneDb& tzdb) {
  Result<std::string> version = tzdb.Version();
  return version.ok() ? *version : "unknown";
}

std::string RenderBuildInfoMetric(const TimeZoneDb& tzdb) {
  const std::string name = kBuildInfoMetric;
  return "# HELP " + name +
         " The cronledger version and the tz database release the process decides with "
         "(tzdata=\"unknown\" when the zoneinfo directory does not say). Always 1.\n# TYPE " +
         name + " gauge\n" + name + "{version=\"" + std::string(CronledgerVersion()) +
         "\",tzdata=\"" + TzdataLabel(tzdb) + "\"} 1\n";
}

}  // namespace cronledger::model
