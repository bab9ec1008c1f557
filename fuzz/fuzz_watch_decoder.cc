// Fuzz target: the watch decoder (model::WatchDecoder) on arbitrary bytes, as every watch door
// (JSON-lines file, Kafka, the Kubernetes watch) feeds it. Beyond no crash: the document is never
// lost (it yields events or rejections, or is a List without items), every rejection has a reason,
// every accepted object is within the API server's limits, and an accepted CronJob decodes
// (docs/ledger.md "Input limits").

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "model/json.h"
#include "model/json_limits.h"
#include "model/objects.h"
#include "model/watch_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cronledger;
  static model::WatchDecoder decoder;
  const std::string_view doc(reinterpret_cast<const char*>(data), size);
  model::DecodedDocument out = decoder.DecodeCopy(doc);
  // Only a well-formed List (any kind ending in "List") without items holds nothing to keep.
  if (out.events.empty() && out.rejections.empty()) {
    const Result<model::Json> j = model::ParseJson(doc);
    const std::string kind = j.ok() ? model::StringOr(*j, "kind") : std::string();
    const bool empty_list = j.ok() && j->is_object() && kind.size() >= 4 &&
                            kind.compare(kind.size() - 4, 4, "List") == 0 &&
                            model::MemberOr(*j, "items") == model::Json::array();
    FUZZ_CHECK(empty_list, "document yields nothing");
  }
  for (const model::Rejection& r : out.rejections) {
    FUZZ_CHECK(!r.reason.empty(), "rejection without a reason");
  }
  for (const model::WatchEvent& ev : out.events) {
    const Status limits = model::CheckObjectLimits(ev.raw);
    FUZZ_CHECK(limits.ok(), "accepted object over a limit: %s", limits.ToString().c_str());
    const bool updates =
        ev.type == model::WatchEventType::kAdded || ev.type == model::WatchEventType::kModified;
    if (ev.kind != model::ObjectKind::kCronJob || !updates) continue;
    Result<model::Json> j = model::ParseJson(ev.raw);
    FUZZ_CHECK(j.ok(), "accepted CronJob does not parse: %s", j.status().ToString().c_str());
    Status decoded = model::DecodeCronJob(*j).status();
    FUZZ_CHECK(decoded.ok(), "accepted CronJob does not decode: %s", decoded.ToString().c_str());
  }
  return 0;
}
