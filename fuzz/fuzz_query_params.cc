// Fuzz target: the HTTP API's query-string parser (audit::Params) on arbitrary bytes. Beyond no
// crash: a parsed query answers every allowed name, and the typed readers (times, limit) fail with
// a Status rather than throwing.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "audit/api_internal.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cronledger;
  static const std::vector<std::string> kAllowed = {"namespace", "cronjob",  "since",  "until",
                                                    "limit",     "continue", "action", "reason"};
  const std::string_view query(reinterpret_cast<const char*>(data), size);
  Result<audit::Params> p = audit::Params::Parse(query, kAllowed);
  if (!p.ok()) {
    FUZZ_CHECK(!p.status().message().empty(), "error without a message");
    return 0;
  }
  for (const std::string& name : kAllowed) (void)p->Get(name);
  (void)p->GetTime("since");
  (void)p->GetTime("until");
  Result<size_t> limit = p->GetLimit(100, 1000);
  if (limit.ok()) FUZZ_CHECK(*limit >= 1 && *limit <= 1000, "limit %zu out of range", *limit);
  return 0;
}
