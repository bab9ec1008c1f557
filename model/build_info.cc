#include "model/build_info.h"

#include "model/timezone_version.h"

#ifndef CRONLEDGER_VERSION
#error "CRONLEDGER_VERSION must be the CMake project version (model/CMakeLists.txt)"
#endif

namespace cronledger::model {

std::string_view CronledgerVersion() { return CRONLEDGER_VERSION; }

std::string TzdataLabel(std::string_view zoneinfo_dir) {
  Result<std::string> version = ReadTzdataVersion(zoneinfo_dir);
  return version.ok() ? *version : kUnknownTzdata;
}

std::string RenderBuildInfoMetric(std::string_view zoneinfo_dir) {
  const std::string name = kBuildInfoMetric;
  return "# HELP " + name +
         " The cronledger version and the tz database release the process decides with "
         "(tzdata=\"unknown\" when the zoneinfo directory does not say). Always 1.\n# TYPE " +
         name + " gauge\n" + name + "{version=\"" + std::string(CronledgerVersion()) +
         "\",tzdata=\"" + TzdataLabel(zoneinfo_dir) + "\"} 1\n";
}

}  // namespace cronledger::model
