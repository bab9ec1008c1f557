// Audit queries over the store's indexes (audit/query.h, docs/audit.md "Queries").
#include "audit/query.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

namespace cronledger::audit {
namespace {

// The store keys times as saturated Unix nanoseconds (docs/ledger.md); these bounds stay inside
// that range (years 1685 and 2255), so "no bound" never wraps.
constexpr Time kEarliest = Time::FromUnix(-9'000'000'000);
constexpr Time kLatest = Time::FromUnix(9'000'000'000);
// Decisions fetched per index call; doubled while one instant holds a whole chunk.
constexpr size_t kChunk = 4096;

bool Matches(const DecisionQuery& q, const model::Decision& d) {
  if (!q.cron_job_name.empty()) {
    if (d.cron_job.namespace_ != q.cron_job_namespace || d.cron_job.name != q.cron_job_name) {
      return false;
    }
  } else if (!q.namespace_.empty() && d.cron_job.namespace_ != q.namespace_) {
    return false;
  }
  if (q.action && d.action != *q.action) return false;
  if (!q.reason.empty() && d.reason != q.reason) return false;
  return true;
}

using Key = std::pair<Time, uint64_t>;
// Called with each match in order; it may move from the decision (the caller no longer needs it).
using MatchFn = std::function<bool(model::Decision&)>;

// The namespace merge reads each CronJob's range in chunks that start small and double on every
// refill (a page needs the head of every range, a whole-window read needs few calls), up to a
// share of kNamespaceBudget decisions buffered across all ranges.
constexpr size_t kFirstRangeChunk = 16;
constexpr size_t kNamespaceBudget = size_t{1} << 18;

// One CronJob's `c` index range over [from, to), read in chunks. `last` is the last (time, seq)
// taken from it (or the continue token's): a refill resumes at last's time and skips up to it.
struct CronJobRange {
  std::string name;
  Time from;
  std::optional<Key> last;
  size_t chunk = kFirstRangeChunk;
  std::vector<model::Decision> buffer;
  size_t next = 0;  // the head: buffer[next]
  bool exhausted = false;
};

// Makes range.buffer[range.next] the range's next decision after range.last, reading chunks;
// leaves the buffer empty when the range is exhausted.
Status Refill(store::Ledger& ledger, const std::string& ns, Time to, size_t max_chunk, bool summary,
              CronJobRange& range) {
  range.buffer.clear();
  range.next = 0;
  while (range.buffer.empty() && !range.exhausted && range.from < to) {
    Result<std::vector<model::Decision>> got =
        summary ? ledger.DecisionSummariesByCronJob(ns, range.name, range.from, to, range.chunk)
                : ledger.DecisionsByCronJob(ns, range.name, range.from, to, range.chunk);
    if (!got.ok()) return got.status();
    const size_t read = got->size();
    range.exhausted = read < range.chunk;
    if (!range.exhausted) {
      const Time last_time = got->back().time;
      // A chunk that ends at the instant it started from made no progress in time: read that
      // instant again with a larger chunk (`last` skips what was already taken).
      if (last_time == range.from) {
        range.chunk *= 2;
      } else {
        range.from = last_time;
        range.chunk = std::min(range.chunk * 2, max_chunk);
      }
    }
    for (model::Decision& d : *got) {
      if (range.last && Key{d.time, d.seq} <= *range.last) continue;
      range.buffer.push_back(std::move(d));
    }
  }
  return Status::Ok();
}

// -n NS without a CronJob: a k-way merge by (time, seq) of the `c` ranges of every CronJob of the
// namespace that has decisions (Ledger::DecisionCronJobNames, deleted CronJobs included), so the
// records read are the namespace's in the window and the order is the time index's.
Status ForEachNamespaceMatch(store::Ledger& ledger, const DecisionQuery& q, Time from, Time to,
                             std::optional<Key> after, const MatchFn& fn) {
  CL_ASSIGN_OR_RETURN(std::vector<std::string> names, ledger.DecisionCronJobNames(q.namespace_));
  if (names.empty()) return Status::Ok();
  const size_t max_chunk = std::clamp(kNamespaceBudget / names.size(), kFirstRangeChunk, kChunk);
  std::vector<CronJobRange> ranges(names.size());
  // A min-heap of (head key, range index).
  using Head = std::pair<Key, size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  for (size_t i = 0; i < names.size(); ++i) {
    CronJobRange& r = ranges[i];
    r.name = std::move(names[i]);
    r.from = from;
    r.last = after;
    CL_RETURN_IF_ERROR(Refill(ledger, q.namespace_, to, max_chunk, q.summary, r));
    if (!r.buffer.empty()) heads.push({Key{r.buffer[0].time, r.buffer[0].seq}, i});
  }
  while (!heads.empty()) {
    const size_t i = heads.top().second;
    heads.pop();
    CronJobRange& r = ranges[i];
    model::Decision& d = r.buffer[r.next];
    r.last = Key{d.time, d.seq};
    if (Matches(q, d) && !fn(d)) return Status::Ok();
    if (++r.next == r.buffer.size()) {
      CL_RETURN_IF_ERROR(Refill(ledger, q.namespace_, to, max_chunk, q.summary, r));
      if (r.buffer.empty()) continue;
    }
    heads.push({Key{r.buffer[r.next].time, r.buffer[r.next].seq}, i});
  }
  return Status::Ok();
}

// Calls fn for every decision matching q strictly after `after` (when set), in (time, seq) order,
// until fn returns false. Reads the index IndexFor(q) in chunks; `at_most` (when set) is told
// before each chunk of the one-index path how many decisions fn may get from it (a caller can
// reserve room for them).
Status ForEachMatch(store::Ledger& ledger, const DecisionQuery& q, std::optional<Key> after,
                    const MatchFn& fn, const std::function<void(size_t)>& at_most = nullptr) {
  Time from = q.since.value_or(kEarliest);
  const Time to = q.until.value_or(kLatest);
  if (after && after->first > from) from = after->first;
  const std::string index = IndexFor(q);
  if (index == "namespace") {
    if (!(from < to)) return Status::Ok();
    return ForEachNamespaceMatch(ledger, q, from, to, after, fn);
  }
  size_t chunk = kChunk;
  while (from < to) {
    Result<std::vector<model::Decision>> got =
        index == "cronjob"
            ? (q.summary ? ledger.DecisionSummariesByCronJob(q.cron_job_namespace, q.cron_job_name,
                                                             from, to, chunk)
                         : ledger.DecisionsByCronJob(q.cron_job_namespace, q.cron_job_name, from,
                                                     to, chunk))
        : index == "time" ? ledger.DecisionsByActionReason(std::nullopt, "", from, to, chunk)
                          : ledger.DecisionsByActionReason(q.action, q.reason, from, to, chunk);
    if (!got.ok()) return got.status();
    if (got->empty()) return Status::Ok();
    const Time last = got->back().time;  // before fn may move from the decisions
    if (at_most) at_most(got->size());
    for (model::Decision& d : *got) {
      Key key{d.time, d.seq};
      if (after && key <= *after) continue;
      after = key;
      if (Matches(q, d) && !fn(d)) return Status::Ok();
    }
    if (got->size() < chunk) return Status::Ok();  // the index range is exhausted
    // A chunk that ends at the instant it started from made no progress in time: read that
    // instant again with a larger chunk (the `after` key skips what was already seen).
    if (last == from) {
      chunk *= 2;
    } else {
      from = last;
    }
  }
  return Status::Ok();
}

Status Validate(const DecisionQuery& q) {
  if (q.since && q.until && !(*q.since < *q.until)) {
    return Status::InvalidArgument("since must be before until");
  }
  return Status::Ok();
}

}  // namespace

std::string IndexFor(const DecisionQuery& q) {
  if (!q.cron_job_name.empty()) return "cronjob";
  if (q.action && !q.reason.empty()) return "action+reason";
  if (q.action) return "action";
  if (!q.reason.empty()) return "reason";
  if (!q.namespace_.empty()) return "namespace";
  return "time";
}

Result<DecisionPage> QueryDecisions(store::Ledger& ledger, const DecisionQuery& q) {
  if (Status s = Validate(q); !s.ok()) return s;
  std::optional<Key> after;
  if (!q.continue_token.empty()) {
    CL_ASSIGN_OR_RETURN(after, DecodeContinueToken(q.continue_token));
  }
  DecisionPage page;
  page.index = IndexFor(q);
  // One more than a page tells whether another page follows.
  Status s = ForEachMatch(
      ledger, q, after,
      [&](model::Decision& d) {
        page.items.push_back(std::move(d));
        return q.limit == 0 || page.items.size() <= q.limit;
      },
      [&](size_t n) {
        // Room for the chunk (a Decision is large: no repeated regrowth), geometrically.
        size_t want = page.items.size() + n;
        if (q.limit != 0) want = std::min(want, q.limit + 1);
        if (want > page.items.capacity()) {
          page.items.reserve(std::max(want, 2 * page.items.capacity()));
        }
      });
  if (!s.ok()) return s;
  if (q.summary) {  // the indexes other than the CronJob index read whole records
    for (model::Decision& d : page.items) {
      d.job_object = nullptr;
      d.status = nullptr;
    }
  }
  if (q.limit != 0 && page.items.size() > q.limit) {
    page.items.pop_back();
    page.continue_token = EncodeContinueToken(page.items.back().time, page.items.back().seq);
  }
  return page;
}

Result<std::vector<DecisionCount>> CountDecisions(store::Ledger& ledger, DecisionQuery q) {
  if (Status s = Validate(q); !s.ok()) return s;
  q.summary = true;  // action and reason are all a count needs
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  Status s = ForEachMatch(ledger, q, std::nullopt, [&](model::Decision& d) {
    ++counts[{std::string(model::DecisionActionName(d.action)), d.reason}];
    return true;
  });
  if (!s.ok()) return s;
  std::vector<DecisionCount> out;
  for (const auto& [key, n] : counts) out.push_back({key.first, key.second, n});
  return out;
}

std::string EncodeMergedToken(Time time, uint64_t seq, const std::string& source) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token = EncodeContinueToken(time, seq) + "-";
  for (unsigned char c : source) {
    token += kHex[c >> 4];
    token += kHex[c & 15];
  }
  return token;
}

Result<MergedKey> DecodeMergedToken(std::string_view token) {
  const Status bad = Status::InvalidArgument("malformed continue token");
  const size_t dash = token.rfind('-');
  if (dash == std::string_view::npos || dash == 16) return bad;  // the time's dash alone
  CL_ASSIGN_OR_RETURN(auto key, DecodeContinueToken(token.substr(0, dash)));
  const std::string_view hex = token.substr(dash + 1);
  if (hex.size() % 2 != 0) return bad;
  MergedKey out{key.first, key.second, {}};
  for (size_t i = 0; i < hex.size(); i += 2) {
    int v = 0;
    for (char c : hex.substr(i, 2)) {
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return bad;
      v = v * 16 + d;
    }
    out.source += static_cast<char>(v);
  }
  return out;
}

Result<MergedDecisionPage> QueryMergedDecisions(const std::vector<SourceLedger>& sources,
                                                const DecisionQuery& q) {
  if (Status s = Validate(q); !s.ok()) return s;
  std::optional<MergedKey> after;
  if (!q.continue_token.empty()) {
    CL_ASSIGN_OR_RETURN(after, DecodeMergedToken(q.continue_token));
  }
  std::vector<DecisionPage> pages;
  pages.reserve(sources.size());
  bool more = false;
  size_t total = 0;
  for (const SourceLedger& src : sources) {
    DecisionQuery sq = q;
    sq.continue_token.clear();
    if (after) {
      // In (time, source, seq) order, a source before the token's has nothing left at its time,
      // the token's own source resumes after its seq, and a later one from the time's start.
      const uint64_t seq = src.source < after->source    ? std::numeric_limits<uint64_t>::max()
                           : src.source == after->source ? after->seq
                                                         : 0;
      sq.continue_token = EncodeContinueToken(after->time, seq);
    }
    CL_ASSIGN_OR_RETURN(DecisionPage one, QueryDecisions(*src.ledger, sq));
    more = more || !one.continue_token.empty();
    total += one.items.size();
    pages.push_back(std::move(one));
  }
  // Each page is in (time, seq) order: a k-way merge by (time, source, seq) moves every record
  // once. A limited page ends where the first `limit` merged records end; no source's truncated
  // page can be passed, since it alone holds `limit` records up to its last.
  const size_t want = q.limit != 0 ? std::min<size_t>(total, q.limit) : total;
  more = more || want < total;
  MergedDecisionPage page;
  page.index = IndexFor(q);
  page.items.reserve(want);
  page.sources.reserve(want);
  std::vector<size_t> next(pages.size(), 0);
  while (page.items.size() < want) {
    size_t pick = pages.size();
    for (size_t k = 0; k < pages.size(); ++k) {
      if (next[k] == pages[k].items.size()) continue;
      if (pick == pages.size()) {
        pick = k;
        continue;
      }
      const model::Decision& a = pages[k].items[next[k]];
      const model::Decision& b = pages[pick].items[next[pick]];
      if (std::tie(a.time, sources[k].source, a.seq) <
          std::tie(b.time, sources[pick].source, b.seq)) {
        pick = k;
      }
    }
    page.items.push_back(std::move(pages[pick].items[next[pick]++]));
    page.sources.push_back(sources[pick].source);
  }
  if (more && !page.items.empty()) {
    page.continue_token =
        EncodeMergedToken(page.items.back().time, page.items.back().seq, page.sources.back());
  }
  return page;
}

Result<std::vector<DecisionCount>> CountMergedDecisions(const std::vector<SourceLedger>& sources,
                                                        const DecisionQuery& q) {
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  for (const SourceLedger& src : sources) {
    CL_ASSIGN_OR_RETURN(auto some, CountDecisions(*src.ledger, q));
    for (const DecisionCount& c : some) counts[{c.action, c.reason}] += c.count;
  }
  std::vector<DecisionCount> out;
  for (const auto& [key, n] : counts) out.push_back({key.first, key.second, n});
  return out;
}

Result<std::pair<std::string, std::string>> ParseCronJobKey(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == key.size() ||
      key.find('/', slash + 1) != std::string_view::npos) {
    return Status::InvalidArgument("expected NAMESPACE/NAME, got \"" + std::string(key) + "\"");
  }
  return std::pair{std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

std::string EncodeContinueToken(Time time, uint64_t seq) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%016" PRIx64 "-%" PRIx64,
                static_cast<uint64_t>(time.UnixNanosSaturated()), seq);
  return buf;
}

Result<std::pair<Time, uint64_t>> DecodeContinueToken(std::string_view token) {
  Status bad = Status::InvalidArgument("malformed continue token");
  size_t dash = token.find('-');
  if (dash != 16 || token.size() < 18 || token.size() > 33) return bad;
  uint64_t nanos = 0, seq = 0;
  for (size_t i = 0; i < token.size(); ++i) {
    if (i == dash) continue;
    char c = token[i];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) return bad;
    uint64_t& acc = i < dash ? nanos : seq;
    acc = acc << 4 | static_cast<uint64_t>(v);
  }
  const auto signed_nanos = static_cast<int64_t>(nanos);
  int64_t sec = signed_nanos / 1'000'000'000;
  int64_t ns = signed_nanos % 1'000'000'000;
  if (ns < 0) {
    ns += 1'000'000'000;
    --sec;
  }
  return std::pair{Time::FromUnix(sec, static_cast<int32_t>(ns)), seq};
}

}  // namespace cronledger::audit
