// Audit benchmarks (docs/audit.md "Benchmark"). Prints figures next to peers measured in
// the same run, on the same store:
//  1. `audit --cronjob NS/NAME` over 30 days (audit::QueryDecisions, everything in one page) from a
//     store of >= 10 M decisions: p50/p99/max for hourly and every-minute CronJobs (goal: p99 <=
//     20 ms), twice:
//     - rows (`-o table|csv`, DecisionQuery::summary): served from the covering CronJob index
//       entries alone; peer: a raw RocksDB read of the same index range, keys and values;
//     - whole records (`-o json|yaml`): the index entries (v2 values hold the Json members, a Job
//       object as a reference to its CronJob's Job template) plus one read per template; two
//       peers: the raw index range plus the CronJob's templates (what this layout reads), and the
//       raw index range plus a Get of each decision's bytes from the log (what reading whole
//       records from the decision log costs, the v1 layout's path), no decode.
//     Once the unindexed peer: the whole decision log scanned for the same filter.
//  2. `audit -n NS` over one day, rows (the namespace's CronJobs' `c` ranges, merged); peer: raw
//     reads of those ranges, keys and values.
//  3. `report adherence` for every CronJob (10k) over one day; peer: raw reads of every CronJob's
//     `c` range that the report reads (from the window start to the end of the index), keys and
//     values.
// A store written by an older build is read as that build wrote it (v1 values: whole records read
// their Json members from the decision log; empty values: everything from the log): its figures
// are those of the old layout. The bench prints which layout the store has and its size per
// decision (SST bytes of the audit and decisions column families and of all of them).
//
// Ours and the peer run back to back per measurement (alternating which goes first), the peer on a
// RocksDB read-only open of the same files beside the ledger, so both see the same compaction
// state and caches.
//
// The store is built fast: synthetic passes committed directly through store::Ledger in units of
// ~25k decisions (no Ticks or Job events in the input log; the view holds the CronJobs). Mix per
// pass: createJob (94%) or skipped ConcurrencyForbid/Suspended/TooLate (3/2/1%), plus an
// updateStatus on one pass in four.
//
//   audit_bench [CRONJOBS] [DAYS] [MINUTELY] [QUERIES] [STORE_DIR]
// STORE_DIR is kept and reused when it already holds a ledger (the build is skipped).
//
// With AUDIT_BENCH_SOURCES=N (N >= 2) the same decisions are spread over N ledgers laid out as
// an audit store keeps a Kafka deployment's replicas (STORE_DIR/sources/s0 ... s<N-1>): CronJob i
// is decided by source i % N for the first half of the span and by source (i + 1) % N after a
// rebalance, so one CronJob's history lies in two of them. Then only the one-CronJob query runs,
// as `audit --cronjob` runs it on an audit store (audit::QueryMergedDecisions over every source);
// peer: the raw index range read in every source.
#include <rocksdb/db.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <random>

#include "audit/adherence.h"
#include "audit/query.h"
#include "model/json.h"
#include "store/keys.h"
#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger {
namespace {

using Clock = std::chrono::steady_clock;
using model::DecisionAction;

constexpr Time kStart = Time::FromUnix(1767225600);  // 2026-01-01T00:00:00Z
constexpr int kNamespaces = 100;

struct Shape {
  int cron_jobs = 10000;
  int days = 30;
  int minutely = 20;  // every-minute CronJobs; the rest are hourly at minute (i % 60)
  int queries = 2000;
};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::string Ns(int i) { return "ns-" + std::to_string(i % kNamespaces); }
std::string Name(int i) { return "cj-" + std::to_string(i); }
bool Minutely(const Shape& s, int i) { return i < s.minutely; }

uint64_t Mix(uint64_t x) {  // splitmix64: a deterministic per-(CronJob, minute) draw
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

model::WatchEvent CronJobEvent(const Shape& s, int i) {
  const std::string schedule = Minutely(s, i) ? "* * * * *" : std::to_string(i % 60) + " * * * *";
  model::WatchEvent ev;
  ev.kind = model::ObjectKind::kCronJob;
  ev.api_version = "batch/v1";
  ev.namespace_ = Ns(i);
  ev.name = Name(i);
  ev.uid = "uid-" + ev.name;
  ev.resource_version = std::to_string(i + 1);
  ev.raw = R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":")" + ev.name +
           R"(","namespace":")" + ev.namespace_ + R"(","uid":")" + ev.uid +
           R"(","resourceVersion":"1","creationTimestamp":"2025-12-31T00:00:00Z"},"spec":{)" +
           R"("schedule":")" + schedule +
           R"(","timeZone":"UTC","concurrencyPolicy":"Forbid","jobTemplate":{"spec":{}}},)" +
           R"("status":{}})";
  return ev;
}

// One pass of CronJob i for fire time `slot`: its terminal record, and an updateStatus on one
// pass in four.
void Pass(const Shape& s, int i, Time slot, std::vector<model::Decision>* out) {
  const uint64_t draw =
      Mix(static_cast<uint64_t>(i) << 32 ^ static_cast<uint64_t>(slot.unix_seconds() / 60));
  model::Decision d;
  d.time = slot.Add(std::chrono::milliseconds(5 + draw % 1500));
  d.cron_job = {Ns(i), Name(i), "uid-" + Name(i)};
  d.scheduled_time = slot;
  d.policy.schedule = Minutely(s, i) ? "* * * * *" : std::to_string(i % 60) + " * * * *";
  d.policy.time_zone = "UTC";
  d.policy.concurrency_policy = "Forbid";
  d.cause.trigger = "timer";
  const int pct = static_cast<int>((draw >> 20) % 100);
  if (pct < 94) {
    d.action = DecisionAction::kCreateJob;
    d.job_name = Name(i) + "-" + std::to_string(slot.unix_seconds() / 60);
    d.job_object =
        model::Json{{"apiVersion", "batch/v1"},
                    {"kind", "Job"},
                    {"metadata",
                     {{"name", *d.job_name},
                      {"namespace", d.cron_job.namespace_},
                      {"annotations",
                       {{"batch.kubernetes.io/cronjob-scheduled-timestamp", FormatRfc3339(slot)}}},
                      {"ownerReferences",
                       {{{"apiVersion", "batch/v1"},
                         {"kind", "CronJob"},
                         {"name", d.cron_job.name},
                         {"uid", d.cron_job.uid},
                         {"controller", true}}}}}},
                    {"spec", model::Json::object()}};
  } else {
    d.action = DecisionAction::kSkipped;
    d.reason = pct < 97 ? "ConcurrencyForbid" : pct < 99 ? "Suspended" : "TooLate";
  }
  out->push_back(d);
  if ((draw & 3) == 0) {
    model::Decision st;
    st.time = d.time;
    st.cron_job = d.cron_job;
    st.action = DecisionAction::kUpdateStatus;
    st.status = model::Json{{"lastScheduleTime", FormatRfc3339(slot)}};
    st.policy = d.policy;
    st.cause = d.cause;
    out->push_back(std::move(st));
  }
}

std::unique_ptr<store::Ledger> OpenLedger(const std::string& path) {
  store::LedgerOptions o;
  o.path = path;
  o.sync = store::SyncMode::kNone;
  auto l = store::Ledger::Open(o);
  if (!l.ok()) {
    std::fprintf(stderr, "open %s: %s\n", path.c_str(), l.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*l);
}

void Check(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

// Passes minute by minute over the whole span, committed in units of ~25k decisions per ledger:
// CronJob i's pass at minute m goes to ledgers[owner(i, m)]; every ledger holds every CronJob.
void Build(const std::vector<store::Ledger*>& ledgers, const Shape& s,
           const std::function<size_t(int, int)>& owner) {
  const auto start = Clock::now();
  for (store::Ledger* ledger : ledgers) {
    store::UnitOfWork cron_jobs;
    for (int i = 0; i < s.cron_jobs; ++i) cron_jobs.inputs.push_back(CronJobEvent(s, i));
    Check(ledger->Commit(std::move(cron_jobs)).status(), "commit CronJobs");
  }
  std::vector<store::UnitOfWork> units(ledgers.size());
  uint64_t total = 0;
  const int minutes = s.days * 24 * 60;
  for (int m = 0; m < minutes; ++m) {
    const Time slot = kStart.Add(std::chrono::minutes(m));
    auto pass = [&](int i) { Pass(s, i, slot, &units[owner(i, m)].decisions); };
    for (int i = 0; i < s.minutely; ++i) pass(i);
    for (int i = s.minutely + ((m % 60) - s.minutely % 60 + 60) % 60; i < s.cron_jobs; i += 60) {
      pass(i);
    }
    for (size_t k = 0; k < ledgers.size(); ++k) {
      if (units[k].decisions.size() < 25000 && !(m + 1 == minutes && !units[k].decisions.empty())) {
        continue;
      }
      total += units[k].decisions.size();
      Check(ledgers[k]->Commit(std::move(units[k])).status(), "commit");
      units[k] = store::UnitOfWork();
    }
    if (m % (24 * 60) == 24 * 60 - 1) {
      std::fprintf(stderr, "  day %d: %llu decisions, %.0f s\n", m / (24 * 60) + 1,
                   static_cast<unsigned long long>(total), Seconds(start));
    }
  }
  // The audit index follows the commits on its own thread: the build ends when it holds them all.
  for (store::Ledger* ledger : ledgers) Check(ledger->SyncAuditIndex(), "audit index");
  std::printf("store built: %llu decisions in %.1f s (%.0f decisions/s)\n",
              static_cast<unsigned long long>(total), Seconds(start),
              static_cast<double>(total) / Seconds(start));
}

struct Stats {
  double p50, p99, max, mean;
};
Stats Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * static_cast<double>(ms.size())))];
  };
  return {at(0.5), at(0.99), ms.back(), sum / static_cast<double>(ms.size())};
}
void Print(const char* what, const Stats& ours, const char* peer_what, const Stats& peer,
           double records) {
  std::printf("%-48s p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  (%.0f records/query)\n", what,
              ours.p50, ours.p99, ours.max, records);
  std::printf("%-48s p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms   ratio p50 %.2fx p99 %.2fx\n",
              peer_what, peer.p50, peer.p99, peer.max, ours.p50 / peer.p50, ours.p99 / peer.p99);
}
void PrintPeer(const char* peer_what, const Stats& ours, const Stats& peer) {
  std::printf("%-48s p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms   ratio p50 %.2fx p99 %.2fx\n",
              peer_what, peer.p50, peer.p99, peer.max, ours.p50 / peer.p50, ours.p99 / peer.p99);
}
constexpr double kGoalP99Ms = 20.0;  // one CronJob x 30 days, p99 <= 20 ms
void PrintGoal(const Stats& ours) {
  std::printf("%-48s p99 %7.2f ms  vs goal p99 <= %.0f ms: %s\n", "  goal", ours.p99, kGoalP99Ms,
              ours.p99 <= kGoalP99Ms ? "met" : "NOT met");
}
std::string LoadAverage() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return "?";
  char buf[64] = {};
  const bool got = std::fgets(buf, sizeof buf, f) != nullptr;
  std::fclose(f);
  std::string s = got ? buf : "?";
  // "1.05 0.98 0.90 2/345 6789": the three averages.
  size_t cut = 0;
  for (int spaces = 0; cut < s.size() && spaces < 3; ++cut) spaces += s[cut] == ' ';
  return s.substr(0, cut == 0 ? s.size() : cut - 1);
}

// The raw peer: the RocksDB database of the ledger opened read-only, reading index ranges.
class RawStore {
 public:
  explicit RawStore(const std::string& path) {
    rocksdb::DBOptions o;
    // Every table file is opened now and kept open: the ledger beside it may compact and delete
    // files while the peer reads.
    o.max_open_files = -1;
    std::vector<std::string> names;
    if (!rocksdb::DB::ListColumnFamilies(o, path, &names).ok()) std::abort();
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
    rocksdb::DB* db = nullptr;
    // The ledger beside it may delete a table file (compaction) between the peer's reading of the
    // MANIFEST and its open of that file: that open fails; the next attempt reads the newer state.
    rocksdb::Status st;
    for (int attempt = 0; attempt < 5; ++attempt) {
      st = rocksdb::DB::OpenForReadOnly(o, path, cfs, &handles_, &db);
      if (st.ok()) break;
    }
    if (!st.ok()) {
      std::fprintf(stderr, "raw open %s: %s\n", path.c_str(), st.ToString().c_str());
      std::abort();
    }
    db_.reset(db);
    names_ = names;
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "audit") audit_ = handles_[i];
      if (names[i] == "decisions") decisions_ = handles_[i];
    }
    if (audit_ == nullptr || decisions_ == nullptr) std::abort();
  }
  ~RawStore() {
    for (auto* h : handles_) (void)db_->DestroyColumnFamilyHandle(h);
  }
  enum class Also { kNothing, kTemplates, kLog };
  // Reads [prefix + from, prefix + to) of the audit index, keys and values; with kTemplates also
  // every Job template of the CronJob (`j` ns name ..., prefix = `c` ns name), with kLog each
  // decision's bytes from the decision log. Returns the number of records.
  size_t Range(const std::string& prefix, Time from, Time to, Also also) {
    const bool log = also == Also::kLog;
    if (also == Also::kTemplates) {
      const std::string templates = "j" + prefix.substr(1);
      rocksdb::ReadOptions tro;
      std::unique_ptr<rocksdb::Iterator> t(db_->NewIterator(tro, audit_));
      for (t->Seek(templates); t->Valid() && t->key().starts_with(templates); t->Next()) {
        bytes_ += t->key().size() + t->value().size();
      }
    }
    std::string start = prefix, end = prefix;
    store::keys::PutTimeKey(&start, from);
    store::keys::PutTimeKey(&end, to);
    rocksdb::ReadOptions ro;
    const rocksdb::Slice upper(end);
    ro.iterate_upper_bound = &upper;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, audit_));
    size_t n = 0;
    std::string value;
    for (it->Seek(start); it->Valid(); it->Next()) {
      const rocksdb::Slice k = it->key();
      bytes_ += k.size() + it->value().size();
      ++n;
      if (!log) continue;
      const rocksdb::Slice seq(k.data() + k.size() - 8, 8);
      const rocksdb::Status st = db_->Get(rocksdb::ReadOptions(), decisions_, seq, &value);
      if (!st.ok()) {
        std::fprintf(stderr, "raw get: %s\n", st.ToString().c_str());
        std::abort();
      }
      bytes_ += value.size();
    }
    return n;
  }
  uint64_t bytes() const { return bytes_; }
  // Uncompressed value bytes of a column family's tables (their raw_value_size).
  uint64_t RawValueBytes(const std::string& cf) {
    for (size_t i = 0; i < handles_.size(); ++i) {
      if (names_[i] != cf) continue;
      std::map<std::string, std::string> props;
      if (!db_->GetMapProperty(handles_[i], rocksdb::DB::Properties::kAggregatedTableProperties,
                               &props)) {
        return 0;
      }
      const auto it = props.find("raw_value_size");
      return it == props.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
    }
    return 0;
  }
  // SST bytes of a column family ("" = all of them).
  uint64_t SstBytes(const std::string& cf) {
    uint64_t total = 0;
    for (size_t i = 0; i < handles_.size(); ++i) {
      if (!cf.empty() && names_[i] != cf) continue;
      uint64_t v = 0;
      if (db_->GetIntProperty(handles_[i], "rocksdb.total-sst-files-size", &v)) total += v;
    }
    return total;
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::vector<std::string> names_;
  rocksdb::ColumnFamilyHandle* audit_ = nullptr;
  rocksdb::ColumnFamilyHandle* decisions_ = nullptr;
  uint64_t bytes_ = 0;
};

// `audit --cronjob` of CronJob i over the whole span: rows (summary) or whole records.
audit::DecisionQuery CronJobQuery(int i, Time end, bool summary) {
  audit::DecisionQuery q;
  q.cron_job_namespace = Ns(i);
  q.cron_job_name = Name(i);
  q.since = kStart;
  q.until = end;
  q.summary = summary;
  return q;
}

template <typename F>
double TimeMs(F&& f) {
  const auto t = Clock::now();
  f();
  return Seconds(t) * 1000.0;
}

// The audit store's one-CronJob query (AUDIT_BENCH_SOURCES=N): QueryMergedDecisions over the N
// sources against raw reads of the same index range in each, back to back, alternating which
// goes first.
int RunMerged(const Shape& s, const std::string& path, int n_sources,
              const std::vector<int>& hourly_picks, const std::vector<int>& minutely_picks) {
  std::vector<std::string> dirs;
  for (int k = 0; k < n_sources; ++k) dirs.push_back(path + "/sources/s" + std::to_string(k));
  const bool reuse = std::filesystem::exists(dirs.front() + "/CURRENT");
  std::printf("audit store: %d sources under %s/sources, %s\n", n_sources, path.c_str(),
              reuse ? "reusing" : "building");
  std::vector<std::unique_ptr<store::Ledger>> owned;
  std::vector<store::Ledger*> ledgers;
  std::vector<audit::SourceLedger> sources;
  for (int k = 0; k < n_sources; ++k) {
    std::filesystem::create_directories(dirs[static_cast<size_t>(k)]);
    owned.push_back(OpenLedger(dirs[static_cast<size_t>(k)]));
    ledgers.push_back(owned.back().get());
    sources.push_back({"s" + std::to_string(k), ledgers.back()});
  }
  const int half = s.days * 24 * 60 / 2;
  if (!reuse) {
    Build(ledgers, s,
          [&](int i, int m) { return static_cast<size_t>((i + (m < half ? 0 : 1)) % n_sources); });
  }
  uint64_t decisions = 0;
  for (store::Ledger* l : ledgers) {
    auto meta = l->Meta();
    Check(meta.status(), "meta");
    decisions += meta->last_decision_seq;
  }
  std::printf("decisions in the store: %llu over %d sources; load average at start: %s\n",
              static_cast<unsigned long long>(decisions), n_sources, LoadAverage().c_str());
  std::vector<std::unique_ptr<RawStore>> raws;
  for (const std::string& d : dirs) raws.push_back(std::make_unique<RawStore>(d));
  const Time end = kStart.Add(std::chrono::hours(24 * s.days));
  std::vector<double> ours_rows, ours_full, peer_rows, peer_full;
  auto measure = [&](const std::vector<int>& picks, bool summary, std::vector<double>* ours_ms,
                     std::vector<double>* peer_ms) {
    size_t records = 0;
    for (size_t n = 0; n < picks.size(); ++n) {
      const int i = picks[n];
      const audit::DecisionQuery q = CronJobQuery(i, end, summary);
      size_t ours_n = 0, peer_n = 0;
      auto ours = [&] {
        auto page = audit::QueryMergedDecisions(sources, q);
        Check(page.status(), "merged query");
        ours_n = page->items.size();
      };
      auto peer = [&] {
        peer_n = 0;
        for (auto& raw : raws) {
          peer_n += raw->Range(store::keys::ByCronJobPrefix(Ns(i), Name(i)), kStart, end,
                               summary ? RawStore::Also::kNothing : RawStore::Also::kTemplates);
        }
      };
      if (n % 2 == 0) {
        ours_ms->push_back(TimeMs(ours));
        peer_ms->push_back(TimeMs(peer));
      } else {
        peer_ms->push_back(TimeMs(peer));
        ours_ms->push_back(TimeMs(ours));
      }
      if (ours_n != peer_n) {
        std::fprintf(stderr, "merged query of %s/%s: %zu records, the raw ranges hold %zu\n",
                     Ns(i).c_str(), Name(i).c_str(), ours_n, peer_n);
        std::exit(1);
      }
      records += ours_n;
    }
    return static_cast<double>(records) / static_cast<double>(picks.size());
  };
  const double rh = measure(hourly_picks, true, &ours_rows, &peer_rows);
  const double fh = measure(hourly_picks, false, &ours_full, &peer_full);
  const char* kRowsPeer = "  peer: raw RocksDB, the range in every source";
  const char* kFullPeer = "  peer: raw RocksDB, range + templates, each";
  std::printf("\n4. audit store: one CronJob x %d days over %d sources (audit --cronjob)\n", s.days,
              n_sources);
  Print("  hourly, rows (-o table|csv)", Summarize(ours_rows), kRowsPeer, Summarize(peer_rows), rh);
  PrintGoal(Summarize(ours_rows));
  Print("  hourly, whole records (-o json|yaml)", Summarize(ours_full), kFullPeer,
        Summarize(peer_full), fh);
  PrintGoal(Summarize(ours_full));
  ours_rows.clear(), ours_full.clear(), peer_rows.clear(), peer_full.clear();
  const double rm = measure(minutely_picks, true, &ours_rows, &peer_rows);
  const double fm = measure(minutely_picks, false, &ours_full, &peer_full);
  Print("  every-minute, rows (-o table|csv)", Summarize(ours_rows), kRowsPeer,
        Summarize(peer_rows), rm);
  Print("  every-minute, whole records (-o json|yaml)", Summarize(ours_full), kFullPeer,
        Summarize(peer_full), fm);
  std::printf("\nload average at the end: %s\n", LoadAverage().c_str());
  return 0;
}

}  // namespace
}  // namespace cronledger

int main(int argc, char** argv) {
  using namespace cronledger;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress is visible when piped to a file
  Shape s;
  if (argc > 1) s.cron_jobs = std::atoi(argv[1]);
  if (argc > 2) s.days = std::atoi(argv[2]);
  if (argc > 3) s.minutely = std::atoi(argv[3]);
  if (argc > 4) s.queries = std::atoi(argv[4]);
  std::unique_ptr<store::testing::TempDir> tmp;
  std::string path;
  if (argc > 5) {
    path = argv[5];
  } else {
    tmp = std::make_unique<store::testing::TempDir>();
    path = tmp->Sub("ledger");
  }
  const bool reuse = std::filesystem::exists(path + "/CURRENT");
  std::printf("audit bench: %d CronJobs (%d every minute, the rest hourly) x %d days, %s %s\n",
              s.cron_jobs, s.minutely, s.days, reuse ? "reusing" : "building", path.c_str());
  auto tzdb = model::OpenSystemTimeZoneDb({});
  Check(tzdb.status(), "tzdb");

  const Time end = kStart.Add(std::chrono::hours(24 * s.days));
  std::mt19937_64 rng(42);
  std::vector<int> hourly_picks, minutely_picks;
  for (int q = 0; q < s.queries; ++q) {
    hourly_picks.push_back(
        s.minutely + static_cast<int>(rng() % static_cast<uint64_t>(s.cron_jobs - s.minutely)));
  }
  for (int q = 0; q < std::max(1, s.queries / 100); ++q) {
    minutely_picks.push_back(
        static_cast<int>(rng() % static_cast<uint64_t>(std::max(1, s.minutely))));
  }
  if (const char* n = std::getenv("AUDIT_BENCH_SOURCES"); n != nullptr && std::atoi(n) > 1) {
    return RunMerged(s, path, std::atoi(n), hourly_picks, minutely_picks);
  }
  const Time day_start = end.Add(std::chrono::hours(-24));
  // Rows (DecisionQuery::summary, what -o table/csv print) and whole records (-o json/yaml).
  std::vector<double> rows_h, rows_m, full_h, full_m, ours_count, ours_ns, ours_report;
  std::vector<double> raw_rows_h, raw_rows_m, raw_full_h, raw_full_m, raw_ns, raw_report;
  std::vector<double> log_full_h, log_full_m;  // whole records' second peer: range + Get each
  size_t records_h = 0, records_m = 0, records_ns = 0;
  uint64_t report_expected = 0;
  auto ledger = OpenLedger(path);
  if (!reuse) Build({ledger.get()}, s, [](int, int) { return size_t{0}; });
  auto meta = ledger->Meta();
  Check(meta.status(), "meta");
  std::printf("decisions in the store: %llu; load average at start: %s\n",
              static_cast<unsigned long long>(meta->last_decision_seq), LoadAverage().c_str());
  // The peer opens the same files read-only beside the ledger. Each measurement runs ours and the
  // peer back to back on the same CronJob, alternating which goes first, so both see the same
  // compaction state and neither profits alone from the other warming the caches.
  RawStore raw(path);
  using Also = RawStore::Also;
  auto range = [&](int i, Time from, Time to, Also also) {
    return raw.Range(store::keys::ByCronJobPrefix(Ns(i), Name(i)), from, to, also);
  };
  {
    // Whole records of CronJob 0's first day: which layout the values have.
    const store::DecisionReadStats before = ledger->DecisionReads();
    auto probe =
        ledger->DecisionsByCronJob(Ns(0), Name(0), kStart, kStart.Add(std::chrono::hours(24)), 0);
    Check(probe.status(), "probe");
    const store::DecisionReadStats after = ledger->DecisionReads();
    const bool covered = after.from_index > before.from_index;
    const bool log = after.log_reads > before.log_reads;
    std::printf("CronJob index values: %s\n",
                covered && !log ? "v2 (whole records covered: Json members in the index, Job "
                                  "objects from per-CronJob templates)"
                : covered       ? "v1 (rows covered; whole records read their Json members from "
                                  "the decision log)"
                                : "v0 (empty: everything read through the decision log)");
    const uint64_t decisions = meta->last_decision_seq;
    auto per = [&](const char* cf) {
      const uint64_t b = raw.SstBytes(cf);
      return std::to_string(b) + " B (" +
             std::to_string(static_cast<double>(b) / static_cast<double>(decisions)).substr(0, 5) +
             " B/decision)";
    };
    std::printf("store size (SST): audit %s, decisions %s, all %s\n", per("audit").c_str(),
                per("decisions").c_str(), per("").c_str());
    std::printf(
        "uncompressed values: audit %.1f B/decision, decisions %.1f B/decision\n",
        static_cast<double>(raw.RawValueBytes("audit")) / static_cast<double>(decisions),
        static_cast<double>(raw.RawValueBytes("decisions")) / static_cast<double>(decisions));
  }
  // Runs ours and the peers back to back, rotating which goes first.
  auto pair = [](int n, const std::function<void()>& ours, const std::function<void()>& peer,
                 std::vector<double>* ours_ms, std::vector<double>* peer_ms,
                 const std::function<void()>& peer2 = {}, std::vector<double>* peer2_ms = nullptr) {
    std::vector<std::pair<const std::function<void()>*, std::vector<double>*>> runs = {
        {&ours, ours_ms}, {&peer, peer_ms}};
    if (peer2) runs.emplace_back(&peer2, peer2_ms);
    std::rotate(runs.begin(), runs.begin() + n % static_cast<int>(runs.size()), runs.end());
    for (auto& [fn, ms] : runs) ms->push_back(TimeMs(*fn));
  };
  auto one = [&](int n, int i, bool summary, std::vector<double>* ms, std::vector<double>* peer_ms,
                 size_t* records, std::vector<double>* log_peer_ms = nullptr) {
    const audit::DecisionQuery q = CronJobQuery(i, end, summary);
    pair(
        n,
        [&] {
          auto page = audit::QueryDecisions(*ledger, q);
          Check(page.status(), "query");
          *records += page->items.size();
        },
        [&] { range(i, kStart, end, summary ? Also::kNothing : Also::kTemplates); }, ms, peer_ms,
        summary ? std::function<void()>() : [&] { range(i, kStart, end, Also::kLog); },
        log_peer_ms);
  };
  size_t unused = 0;
  for (size_t n = 0; n < hourly_picks.size(); ++n) {
    one(static_cast<int>(n), hourly_picks[n], true, &rows_h, &raw_rows_h, &records_h);
    one(static_cast<int>(n), hourly_picks[n], false, &full_h, &raw_full_h, &unused, &log_full_h);
  }
  for (size_t n = 0; n < minutely_picks.size(); ++n) {
    one(static_cast<int>(n), minutely_picks[n], true, &rows_m, &raw_rows_m, &records_m);
    one(static_cast<int>(n), minutely_picks[n], false, &full_m, &raw_full_m, &unused, &log_full_m);
  }
  for (int i : hourly_picks) {
    audit::DecisionQuery q;
    q.cron_job_namespace = Ns(i);
    q.cron_job_name = Name(i);
    ours_count.push_back(
        TimeMs([&] { Check(audit::CountDecisions(*ledger, q).status(), "count"); }));
  }
  for (int n = 0; n < 3; ++n) {
    audit::DecisionQuery q;
    q.namespace_ = Ns(n);
    q.since = day_start;
    q.until = end;
    q.summary = true;
    pair(
        n,
        [&] {
          auto page = audit::QueryDecisions(*ledger, q);
          Check(page.status(), "namespace query");
          records_ns += page->items.size();
        },
        [&] {
          for (int i = n; i < s.cron_jobs; i += kNamespaces)
            range(i, day_start, end, Also::kNothing);
        },
        &ours_ns, &raw_ns);
  }
  for (int n = 0; n < 2; ++n) {
    audit::AdherenceOptions o;
    o.since = day_start;
    o.until = end;
    pair(
        n,
        [&] {
          auto r = audit::ComputeAdherence(*ledger, **tzdb, o);
          Check(r.status(), "report");
          report_expected = r->totals.expected;
          if (n == 0) {
            std::printf(
                "report: %zu CronJobs, expected %llu, created %llu, skipped %llu, "
                "pending %llu, unaccounted %llu\n",
                r->items.size(), static_cast<unsigned long long>(r->totals.expected),
                static_cast<unsigned long long>(r->totals.created),
                static_cast<unsigned long long>(r->totals.skipped),
                static_cast<unsigned long long>(r->totals.pending),
                static_cast<unsigned long long>(r->totals.unaccounted));
          }
        },
        [&] {
          for (int i = 0; i < s.cron_jobs; ++i) {
            range(i, day_start, Time::FromUnix(9'000'000'000), Also::kNothing);
          }
        },
        &ours_report, &raw_report);
  }
  const char* kRowsPeer = "  peer: raw RocksDB, the index range (keys+values)";
  const char* kFullPeer = "  peer: raw RocksDB, index range + its templates";
  const char* kLogPeer = "  peer: raw RocksDB, index range + Get of each";
  std::printf("\n1. one CronJob x %d days (audit --cronjob, every record of the window)\n", s.days);
  const Stats rh = Summarize(rows_h);
  Print("  hourly, rows (-o table|csv)", rh, kRowsPeer, Summarize(raw_rows_h),
        static_cast<double>(records_h) / static_cast<double>(hourly_picks.size()));
  PrintGoal(rh);
  Print("  hourly, whole records (-o json|yaml)", Summarize(full_h), kFullPeer,
        Summarize(raw_full_h),
        static_cast<double>(records_h) / static_cast<double>(hourly_picks.size()));
  PrintPeer(kLogPeer, Summarize(full_h), Summarize(log_full_h));
  PrintGoal(Summarize(full_h));
  Print("  every-minute, rows (-o table|csv)", Summarize(rows_m), kRowsPeer, Summarize(raw_rows_m),
        static_cast<double>(records_m) / static_cast<double>(minutely_picks.size()));
  Print("  every-minute, whole records (-o json|yaml)", Summarize(full_m), kFullPeer,
        Summarize(raw_full_m),
        static_cast<double>(records_m) / static_cast<double>(minutely_picks.size()));
  PrintPeer(kLogPeer, Summarize(full_m), Summarize(log_full_m));
  const Stats count = Summarize(ours_count);
  std::printf("%-48s p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n",
              "  hourly, CountDecisions (--count)", count.p50, count.p99, count.max);
  std::printf("\n2. one namespace (%d CronJobs) x 1 day (audit -n, rows: its CronJobs' ranges)\n",
              s.cron_jobs / kNamespaces);
  Print("  QueryDecisions", Summarize(ours_ns), kRowsPeer, Summarize(raw_ns),
        static_cast<double>(records_ns) / 3.0);
  std::printf("\n3. report adherence, %d CronJobs x 1 day (%llu fire times)\n", s.cron_jobs,
              static_cast<unsigned long long>(report_expected));
  const Stats rep = Summarize(ours_report), rawrep = Summarize(raw_report);
  std::printf("  ComputeAdherence                             best %8.0f ms   mean %8.0f ms\n",
              std::min(ours_report[0], ours_report[1]), rep.mean);
  std::printf(
      "  peer: raw RocksDB, every CronJob's c range   best %8.0f ms   mean %8.0f ms   "
      "ratio %.2fx\n",
      std::min(raw_report[0], raw_report[1]), rawrep.mean,
      std::min(ours_report[0], ours_report[1]) / std::min(raw_report[0], raw_report[1]));
  std::printf("\nload average at the end: %s (peer bytes read: %llu)\n", LoadAverage().c_str(),
              static_cast<unsigned long long>(raw.bytes()));

  // The unindexed peer, once: the whole decision log read for one CronJob's filter.
  if (std::getenv("AUDIT_BENCH_NO_FULL_SCAN") == nullptr) {
    size_t matched = 0;
    const int i = hourly_picks.front();
    const double ms = TimeMs([&] {
      Check(ledger->ScanDecisions(1,
                                  [&](const model::Decision& d) {
                                    if (d.cron_job.name == Name(i) &&
                                        d.cron_job.namespace_ == Ns(i)) {
                                      ++matched;
                                    }
                                    return true;
                                  }),
            "scan");
    });
    std::printf(
        "\nunindexed peer: one hourly CronJob by scanning the decision log: %.0f ms "
        "(%zu records matched) = %.0fx the indexed p50\n",
        ms, matched, ms / Summarize(full_h).p50);
  }
  return 0;
}
