// Fuzz target: the CronJob JSON decoder (model::ParseJson + model::DecodeCronJob) on arbitrary
// bytes, as ingest sees untrusted watch events. It must never crash or throw, and a decoded CronJob
// must round-trip through the persisted form (model/objects.h: decode(encode(x)) == x):
//   encode -> DumpJson -> ParseJson -> decode must succeed and encode to the same bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "model/json.h"
#include "model/objects.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cronledger::model;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  cronledger::Result<Json> json = ParseJson(text);
  if (!json.ok()) return 0;
  cronledger::Result<CronJob> cron_job = DecodeCronJob(*json);
  if (!cron_job.ok()) return 0;

  const std::string first = DumpJson(EncodeCronJob(*cron_job));
  cronledger::Result<Json> reparsed = ParseJson(first);
  FUZZ_CHECK(reparsed.ok(), "encoded CronJob does not parse: %s", first.c_str());
  cronledger::Result<CronJob> again = DecodeCronJob(*reparsed);
  FUZZ_CHECK(again.ok(), "encoded CronJob does not decode (%s): %s",
             again.status().ToString().c_str(), first.c_str());
  const std::string second = DumpJson(EncodeCronJob(*again));
  FUZZ_CHECK(first == second, "encode(decode(encode(x))) != encode(x):\n  %s\n  %s", first.c_str(),
             second.c_str());
  return 0;
}
