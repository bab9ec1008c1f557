#pragma once

// TZif (RFC 8536) decoding with the exact acceptance rules of Go's time.LoadLocationFromTZData, so
// that a file Go rejects is rejected here too and a file Go accepts yields the same zone.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"

namespace cronledger::model {

struct TzifZone {
  int offset = 0;  // seconds east of UTC
  bool is_dst = false;
  std::string abbreviation;
};

struct TzifTransition {
  int64_t when = 0;   // unix seconds
  uint8_t index = 0;  // into TzifData::zones
};

struct TzifData {
  std::vector<TzifZone> zones;              // never empty
  std::vector<TzifTransition> transitions;  // ascending; Go adds one at -2^63 when there are none
  std::string extend;  // POSIX TZ footer ("EST5EDT,M3.2.0,M11.1.0"), may be empty
};

// Decodes versions 1-3. Version 2+ files use the 64-bit body, as Go does. Any structural problem
// gives Corruption("malformed time zone information"), Go's errBadData text.
Result<TzifData> ParseTzif(std::string_view bytes);

}  // namespace cronledger::model
