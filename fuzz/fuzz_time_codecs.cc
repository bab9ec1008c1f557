// Fuzz target: model::ParseRfc3339 and model::ParseGoDuration on arbitrary bytes. Neither may
// crash or trip a sanitizer, and whatever parses must survive a format -> parse round trip:
//   RFC 3339 (years 0001-9999): ParseRfc3339(FormatRfc3339Nano(t)) == t, and the second-precision
//     FormatRfc3339 parses back to t truncated to the second;
//   Go durations: ParseGoDuration(FormatGoDuration(d)) == d (Go's Duration.String contract).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "model/time.h"

namespace {

using cronledger::Duration;
using cronledger::Time;

// 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z: what four-digit RFC 3339 years can express.
constexpr int64_t kMinSeconds = -62135596800;
constexpr int64_t kMaxSeconds = 253402300799;

void CheckRfc3339(std::string_view text) {
  cronledger::Result<Time> t = cronledger::ParseRfc3339(text);
  if (!t.ok()) return;
  (void)cronledger::FormatRfc1123Z(*t);
  if (t->unix_seconds() < kMinSeconds || t->unix_seconds() > kMaxSeconds) return;
  const std::string nano = cronledger::FormatRfc3339Nano(*t);
  cronledger::Result<Time> back = cronledger::ParseRfc3339(nano);
  FUZZ_CHECK(back.ok() && *back == *t, "ParseRfc3339(\"%.*s\") -> \"%s\" does not parse back",
             static_cast<int>(text.size()), text.data(), nano.c_str());
  const std::string secs = cronledger::FormatRfc3339(*t);
  cronledger::Result<Time> back_secs = cronledger::ParseRfc3339(secs);
  FUZZ_CHECK(back_secs.ok() && *back_secs == t->TruncateToSecond(),
             "FormatRfc3339 -> \"%s\" does not parse back to the truncated time", secs.c_str());
}

void CheckGoDuration(std::string_view text) {
  cronledger::Result<Duration> d = cronledger::ParseGoDuration(text);
  if (!d.ok()) return;
  const std::string formatted = cronledger::FormatGoDuration(*d);
  cronledger::Result<Duration> back = cronledger::ParseGoDuration(formatted);
  FUZZ_CHECK(back.ok() && *back == *d, "ParseGoDuration(\"%.*s\") = %lld ns -> \"%s\" round trip",
             static_cast<int>(text.size()), text.data(), static_cast<long long>(d->count()),
             formatted.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckRfc3339(text);
  CheckGoDuration(text);
  return 0;
}
