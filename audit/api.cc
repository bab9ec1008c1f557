// The API's request handling, parameters and the decision, report, why and metrics routes
// (audit/api.h, docs/audit.md "API reference").
#include "audit/api.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "audit/api_internal.h"
#include "audit/divergences.h"
#include "audit/encode.h"
#include "audit/query.h"
#include "audit/sources.h"
#include "audit/web_assets.h"
#include "model/build_info.h"
#include "replay/explain.h"
#include "replay/source.h"

namespace cronledger::audit {
namespace {

ApiResponse TextResponse(int status, std::string json_text) {
  ApiResponse r;
  r.status = status;
  r.body = std::move(json_text);
  r.body += '\n';
  return r;
}

ApiResponse JsonResponse(int status, const model::Json& j) {
  return TextResponse(status, model::DumpJson(j));
}

ApiResponse Error(int status, const std::string& message) {
  return JsonResponse(status, {{"error", message}});
}

// A decision page as JSON text: each decision's canonical bytes as they are, inside the page
// object (keys in DumpJson's order: "items" before "metadata").
std::string DecisionPageText(const DecisionPage& page) {
  std::string out = "{\"items\":";
  model::AppendCanonicalDecisionArray(page.items, &out);
  model::Json metadata = {{"index", page.index}};
  if (!page.continue_token.empty()) metadata["continue"] = page.continue_token;
  out += ",\"metadata\":";
  out += model::DumpJson(metadata);
  out += '}';
  return out;
}

// A merged page: each decision's JSON with its `source`.
std::string MergedDecisionPageText(const MergedDecisionPage& page) {
  model::Json j = {{"items", model::Json::array()}, {"metadata", {{"index", page.index}}}};
  for (size_t i = 0; i < page.items.size(); ++i) {
    j["items"].push_back(EncodeSourcedDecision(page.items[i], page.sources[i]));
  }
  if (!page.continue_token.empty()) j["metadata"]["continue"] = page.continue_token;
  return model::DumpJson(j);
}

// /v1/decisions, as JSON text.
Result<std::string> DecisionsText(const ReadSet& rs, const Params& p, size_t max_page) {
  DecisionQuery q;
  if (auto cj = p.Get("cronjob")) {
    CL_ASSIGN_OR_RETURN(auto key, ParseCronJobKey(*cj));
    q.cron_job_namespace = key.first;
    q.cron_job_name = key.second;
  }
  q.namespace_ = p.Get("namespace").value_or("");
  CL_ASSIGN_OR_RETURN(q.since, p.GetTime("since"));
  CL_ASSIGN_OR_RETURN(q.until, p.GetTime("until"));
  if (auto a = p.Get("action")) {
    auto action = model::ParseDecisionAction(*a);
    if (!action.ok()) return Status::InvalidArgument("unknown action \"" + *a + "\"");
    q.action = *action;
  }
  q.reason = p.Get("reason").value_or("");
  if (p.Get("count") == "true") {
    CL_ASSIGN_OR_RETURN(std::vector<DecisionCount> counts, rs.merged
                                                               ? CountMergedDecisions(rs.sources, q)
                                                               : CountDecisions(rs.ledger(), q));
    model::Json j = {{"items", model::Json::array()}, {"metadata", {{"index", IndexFor(q)}}}};
    for (const DecisionCount& c : counts) {
      j["items"].push_back({{"action", c.action}, {"reason", c.reason}, {"count", c.count}});
    }
    return model::DumpJson(j);
  }
  CL_ASSIGN_OR_RETURN(q.limit, p.GetLimit(100, max_page));
  q.continue_token = p.Get("continue").value_or("");
  if (rs.merged) {
    CL_ASSIGN_OR_RETURN(MergedDecisionPage page, QueryMergedDecisions(rs.sources, q));
    return MergedDecisionPageText(page);
  }
  CL_ASSIGN_OR_RETURN(DecisionPage page, QueryDecisions(rs.ledger(), q));
  return DecisionPageText(page);
}

// /v1/divergences over a store's sources: every match, ordered by (time, source, seq), paged by
// a merged token naming the last item returned. Divergences are few (no index serves them).
Result<model::Json> MergedDivergencesJson(const ReadSet& rs, DivergenceQuery q, size_t limit,
                                          const std::optional<std::string>& token) {
  std::optional<MergedKey> after;
  if (token) {
    CL_ASSIGN_OR_RETURN(after, DecodeMergedToken(*token));
  }
  q.limit = 0;
  CL_ASSIGN_OR_RETURN(std::vector<SourcedDivergence> found, ListMergedDivergences(rs.sources, q));
  model::Json j = {{"items", model::Json::array()}, {"metadata", model::Json::object()}};
  const SourcedDivergence* last = nullptr;
  for (const SourcedDivergence& f : found) {
    const Divergence& d = f.divergence;
    if (after &&
        std::tie(d.time, f.source, d.seq) <= std::tie(after->time, after->source, after->seq)) {
      continue;
    }
    if (j["items"].size() == limit) {
      j["metadata"]["continue"] =
          EncodeMergedToken(last->divergence.time, last->divergence.seq, last->source);
      break;
    }
    model::Json item = DivergenceJson(d);
    item["source"] = f.source;
    j["items"].push_back(std::move(item));
    last = &f;
  }
  return j;
}

// /v1/divergences: the filters of `cronledger divergences`, paged by input seq. The continue token
// is the decisions' token format naming the last item returned.
Result<model::Json> DivergencesJson(const ReadSet& rs, const Params& p, size_t max_page) {
  DivergenceQuery q;
  q.namespace_ = p.Get("namespace").value_or("");
  if (auto cj = p.Get("cronjob")) {
    CL_ASSIGN_OR_RETURN(auto key, ParseCronJobKey(*cj));
    if (!q.namespace_.empty() && q.namespace_ != key.first) {
      return Status::InvalidArgument("cronjob and namespace name different namespaces");
    }
    q.namespace_ = key.first;
    q.cron_job = key.second;
  }
  q.kind = p.Get("kind").value_or("");
  if (p.Get("kind")) CL_RETURN_IF_ERROR(CheckDivergenceKind(q.kind).WithContext("kind"));
  CL_ASSIGN_OR_RETURN(q.since, p.GetTime("since"));
  CL_ASSIGN_OR_RETURN(q.until, p.GetTime("until"));
  CL_ASSIGN_OR_RETURN(size_t limit, p.GetLimit(std::min<size_t>(100, max_page), max_page));
  if (rs.merged) return MergedDivergencesJson(rs, q, limit, p.Get("continue"));
  if (auto token = p.Get("continue")) {
    CL_ASSIGN_OR_RETURN(auto last, DecodeContinueToken(*token));
    q.after_seq = last.second;
  }
  q.limit = limit + 1;  // one more than a page tells whether another page follows
  CL_ASSIGN_OR_RETURN(std::vector<Divergence> found, ListDivergences(rs.ledger(), q));
  model::Json j = {{"items", model::Json::array()}, {"metadata", model::Json::object()}};
  for (size_t i = 0; i < found.size() && i < limit; ++i) {
    j["items"].push_back(DivergenceJson(found[i]));
  }
  if (found.size() > limit) {
    j["metadata"]["continue"] = EncodeContinueToken(found[limit - 1].time, found[limit - 1].seq);
  }
  return j;
}

Result<model::Json> WhyJson(const ReadSet& rs, const Params& p, const std::string& zoneinfo) {
  replay::WhyQuery q;
  q.zoneinfo_dir = zoneinfo;
  auto cj = p.Get("cronjob");
  if (!cj) return Status::InvalidArgument("cronjob=NS/NAME is required");
  CL_ASSIGN_OR_RETURN(auto key, ParseCronJobKey(*cj));
  q.cron_job = key.first + "/" + key.second;
  CL_ASSIGN_OR_RETURN(q.scheduled, p.GetTime("scheduled"));
  CL_ASSIGN_OR_RETURN(q.at, p.GetTime("at"));
  if (q.scheduled.has_value() == q.at.has_value()) {
    return Status::InvalidArgument("exactly one of scheduled and at is required");
  }
  replay::LedgerSource source(rs.ledger());
  CL_ASSIGN_OR_RETURN(replay::Why why,
                      rs.merged ? ExplainAcrossSources(rs.sources, q) : replay::Explain(source, q));
  return model::Json{{"cronJob", why.cron_job},
                     {"scheduledTime", why.scheduled ? model::Json(FormatRfc3339(*why.scheduled))
                                                     : model::Json(nullptr)},
                     {"verdict", why.verdict},
                     {"reason", why.reason},
                     {"sentences", why.sentences},
                     {"facts", why.facts}};
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 1;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

}  // namespace

Api::Api(store::Ledger& ledger, const model::TimeZoneDb& tzdb, ApiOptions options)
    : Api(ReadSet{{{"", &ledger}}, false}, tzdb, std::move(options)) {}

Api::Api(std::vector<SourceLedger> sources, const model::TimeZoneDb& tzdb, ApiOptions options)
    : Api(ReadSet{std::move(sources), true}, tzdb, std::move(options)) {}

Api::Api(ReadSet read, const model::TimeZoneDb& tzdb, ApiOptions options)
    : read_(std::make_unique<ReadSet>(std::move(read))),
      tzdb_(tzdb),
      options_(std::move(options)),
      token_(options_.token_file),
      limiter_(options_.rate_per_second, options_.rate_burst,
               options_.monotonic_nanos ? options_.monotonic_nanos
                                        : [] {
                                            return static_cast<int64_t>(
                                                std::chrono::steady_clock::now()
                                                    .time_since_epoch()
                                                    .count());
                                          }),
      metrics_(options_.data_dir) {}

Api::~Api() = default;

bool Api::Ready() {
  if (!token_.Loaded() || read_->sources.empty()) return false;
  for (const SourceLedger& src : read_->sources) {
    if (!src.ledger->Meta().ok()) return false;
  }
  return true;
}

ApiResponse Api::Handle(const ApiRequest& request) {
  if (request.target.size() > options_.max_uri_bytes) return Error(414, "request target too long");
  if (request.method != "GET" && request.method != "HEAD") {
    ApiResponse r = Error(405, "method not allowed: this API is read-only");
    r.headers.push_back({"Allow", "GET, HEAD"});
    return r;
  }
  const size_t q = request.target.find('?');
  const std::string path = request.target.substr(0, q);
  const std::string query = q == std::string::npos ? "" : request.target.substr(q + 1);
  if (path == "/healthz") return {200, "text/plain; charset=utf-8", "ok\n", {}};
  if (path == "/readyz") {
    // Ready = the store answers and a token is configured (otherwise every call would be 401).
    if (!Ready()) {
      return {503, "text/plain; charset=utf-8", "not ready\n", {}};
    }
    return {200, "text/plain; charset=utf-8", "ready\n", {}};
  }
  // The page's files hold no ledger data; every data request the page makes carries the token.
  const std::string asset = path == "/" ? "index.html" : path.substr(1);
  for (const WebAsset& a : WebAssets()) {
    if (a.name == asset) return {200, std::string(a.content_type), std::string(a.bytes), {}};
  }
  int retry = 1;
  if (!limiter_.Allow(request.peer, &retry)) {
    ApiResponse r = Error(429, "too many requests");
    r.headers.push_back({"Retry-After", std::to_string(retry)});
    return r;
  }
  if (!token_.Verify(request.authorization)) {
    ApiResponse r = Error(401, "a valid bearer token is required");
    r.headers.push_back({"WWW-Authenticate", "Bearer realm=\"cronledger\""});
    return r;
  }
  return Route(path, query);
}

ApiResponse Api::Route(const std::string& path, const std::string& query) {
  const std::vector<std::string> parts = SplitPath(path);
  Result<model::Json> body = Status::NotFound("no such route");
  auto params = [&](const std::vector<std::string>& allowed) {
    return Params::Parse(query, allowed);
  };
  Result<Params> p = Status::NotFound("no such route");
  if (path == "/metrics") {
    Result<std::string> text = metrics_.Scrape(read_->sources, read_->merged);
    if (text.ok()) {
      return {200,
              "text/plain; version=0.0.4; charset=utf-8",
              *text + model::RenderBuildInfoMetric(options_.zoneinfo_dir),
              {}};
    }
    body = text.status();
  } else if (path == "/v1/decisions") {
    p = params({"cronjob", "namespace", "since", "until", "action", "reason", "limit", "continue",
                "count"});
    if (p.ok()) {
      // Written as text: the decisions' canonical bytes need no tree.
      Result<std::string> text = DecisionsText(*read_, *p, options_.max_page);
      if (text.ok()) return TextResponse(200, std::move(text).value());
      body = text.status();
    }
  } else if (path == "/v1/divergences") {
    p = params({"cronjob", "namespace", "since", "until", "kind", "limit", "continue"});
    if (p.ok()) body = DivergencesJson(*read_, *p, options_.max_page);
  } else if (path == "/v1/cronjobs") {
    p = params({"namespace", "limit", "continue"});
    if (p.ok()) body = CronJobList(*read_, *p, options_.max_page);
  } else if (parts.size() == 4 && parts[0] == "v1" && parts[1] == "cronjobs") {
    p = params({});
    if (p.ok()) body = CronJobDetail(*read_, parts[2], parts[3]);
  } else if (parts.size() == 5 && parts[0] == "v1" && parts[1] == "cronjobs" &&
             parts[4] == "timeline") {
    p = params({"since", "until"});
    if (p.ok()) body = CronJobTimeline(*read_, tzdb_, parts[2], parts[3], *p);
  } else if (path == "/v1/reports/adherence") {
    p = params({"since", "until", "namespace", "cronjob", "limit", "continue"});
    if (p.ok()) body = AdherenceReportJson(*read_, tzdb_, *p, options_.max_page);
  } else if (path == "/v1/why") {
    p = params({"cronjob", "scheduled", "at"});
    if (p.ok()) body = WhyJson(*read_, *p, options_.zoneinfo_dir);
  }
  if (!p.ok() && p.status().code() == Status::Code::kInvalidArgument) body = p.status();
  if (body.ok()) return JsonResponse(200, *body);
  const Status& s = body.status();
  if (s.code() == Status::Code::kInvalidArgument) return Error(400, s.message());
  if (s.code() == Status::Code::kNotFound) return Error(404, "not found");
  if (options_.log) {
    options_.log("cronledger serve: " + path + ": " + s.ToString());
  } else {
    std::fprintf(stderr, "cronledger serve: %s: %s\n", path.c_str(), s.ToString().c_str());
  }
  return Error(500, "internal error");
}

}  // namespace cronledger::audit
