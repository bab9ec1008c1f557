#pragma once

// The tz database that tests asserting zone-specific instants read: the release the golden corpus
// (tests/schedule/golden/) was computed with, shipped beside it in tests/schedule/tzdata-<release>/
// (its README says how it was made). The host's /usr/share/zoneinfo changes with every tzdata
// update, and an update that revises a zone's future rules (Morocco's, Brazil's) moves the
// answers for those instants; the shipped copy does not change under the tests.
//
// Tests that use it also assert that the release in the directory their database options name is
// kTestTzdataRelease (model::ReadTzdataVersion on the same options), so a test that stops reading
// the shipped copy fails instead of passing on whatever the host has.

#include <cstdlib>
#include <string>

#include "model/timezone.h"

namespace cronledger::tzdata_test {

inline constexpr const char* kTestTzdataRelease = "2025b";

// ctest sets CRONLEDGER_SOURCE_DIR (cmake/cronledger.cmake); a test binary run by hand from the
// repository root finds the directory relative to it.
inline std::string TestZoneinfoDir() {
  const char* root = std::getenv("CRONLEDGER_SOURCE_DIR");
  return std::string(root ? root : ".") + "/tests/schedule/tzdata-" + kTestTzdataRelease;
}

inline model::SystemTimeZoneDbOptions TestTzdataOptions(std::string local_zone = "UTC") {
  model::SystemTimeZoneDbOptions options;
  options.zoneinfo_dir = TestZoneinfoDir();
  options.local_zone = std::move(local_zone);
  return options;
}

}  // namespace cronledger::tzdata_test
