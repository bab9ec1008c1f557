#pragma once

// Helpers shared by the API's route handlers (audit/api.cc, audit/api_cronjobs.cc). Not part of
// the public surface.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "audit/query.h"
#include "model/json.h"
#include "model/result.h"
#include "model/time.h"
#include "model/timezone.h"
#include "store/ledger.h"

namespace cronledger::audit {

// Query parameters, percent-decoded. Unknown names and repeated names are InvalidArgument.
class Params {
 public:
  static Result<Params> Parse(std::string_view query, const std::vector<std::string>& allowed);
  std::optional<std::string> Get(const std::string& name) const;
  // RFC 3339; InvalidArgument names the parameter.
  Result<std::optional<Time>> GetTime(const std::string& name) const;
  // `limit`: default `def`, 1..max.
  Result<size_t> GetLimit(size_t def, size_t max) const;

 private:
  std::map<std::string, std::string> values_;
};

// Decodes %XX and '+'; InvalidArgument for a malformed escape.
Result<std::string> PercentDecode(std::string_view s);

// What the routes read: one ledger (one unnamed source), or the sources of an audit store
// (`merged`: answers over every source, each record and row labelled with its source).
struct ReadSet {
  std::vector<SourceLedger> sources;
  bool merged = false;
  store::Ledger& ledger() const { return *sources.front().ledger; }
};

// The report window: `since`/`until` parameters, defaulting to the 24 hours before the horizon
// (rounded up to the second). InvalidArgument when there is nothing to default from.
Result<std::pair<Time, Time>> Window(const ReadSet& rs, const Params& p);

// Route handlers. Each returns the JSON body, or a Status the caller maps to an HTTP status
// (InvalidArgument 400, NotFound 404, anything else 500 without details).
Result<model::Json> CronJobList(const ReadSet& rs, const Params& p, size_t max_page);
Result<model::Json> CronJobDetail(const ReadSet& rs, const std::string& ns,
                                  const std::string& name);
Result<model::Json> CronJobTimeline(const ReadSet& rs, const model::TimeZoneDb& tzdb,
                                    const std::string& ns, const std::string& name,
                                    const Params& p);
Result<model::Json> AdherenceReportJson(const ReadSet& rs, const model::TimeZoneDb& tzdb,
                                        const Params& p, size_t max_page);

// A CronJob's summary as listed by /v1/cronjobs.
model::Json CronJobSummary(const model::CronJob& cj);

}  // namespace cronledger::audit
