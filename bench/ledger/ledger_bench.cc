// Ledger benchmarks; prints figures and ratios against raw RocksDB measured in the same run.
//  1. durable ingest (`IngestStream`, --sync always) of ≈2.5 KB CronJob/Job watch events vs raw
//     RocksDB writes of the same bytes: two writer threads, WriteBatches of the same size,
//     sync=true (RocksDB's own group commit merges them). The peer writes the event lines
//     uncompressed; the ledger compresses each object's raw bytes (LZ4, on the decoding thread)
//     before they reach its WAL, as the layout asks ("the raw object bytes, compressed").
//  2. log scan + decode + fold (what rebuild does: ScanWatchEventsReadAhead + FlatViewStore::Fold,
//     two threads) vs raw iteration of the same column family on one thread, with the same
//     (default) ReadOptions; also the same fold on one thread (ScanWatchEvents), scan + decode
//     without the fold, and the CPU time per record of each (all threads).
// Peer and ours alternate over several rounds; medians are printed (the machine may be shared).
// `ledger_bench N profile ingest|scan|scanfold|fold` runs without peers, for perf: one ingest,
// then with scan 30 decode-only scans of its log (their profile is the difference to the
// ingest-only one; the scans dominate it), with scanfold 200 scans folding on one thread of the
// ledger opened once, with readahead 100 decode-only scans read ahead (the reading thread is
// named cl-read-ahead), with fold 500 folds of its watch events decoded into memory once (those two
// dominate their profiles).
#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "bench/cpu_time.h"
#include "bench/median.h"
#include "ingest/stream_ingest.h"
#include "model/test_events.h"
#include "store/ledger.h"
#include "store/test_util.h"
#include "store/view.h"

namespace cronledger {
namespace {

using bench::Median;

using Clock = std::chrono::steady_clock;
constexpr size_t kBatch = 1024;

// Bytes this process has passed to write(2) so far (/proc/self/io wchar): the WAL plus any
// memtable flushes, for both sides of the ingest comparison.
uint64_t WrittenBytes() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "wchar:") return value;
  }
  return 0;
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::string Be64(uint64_t v) {
  std::string k(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) k[static_cast<size_t>(i)] = static_cast<char>(v);
  return k;
}

double RawWrites(const std::string& path, const std::vector<std::string>& lines,
                 uint64_t* bytes_written) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.compression = rocksdb::kLZ4Compression;
  o.max_background_jobs = 2;
  rocksdb::DB* db = nullptr;
  if (!rocksdb::DB::Open(o, path, &db).ok()) std::abort();
  const uint64_t written = WrittenBytes();
  const auto start = Clock::now();
  auto writer = [&](size_t first) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    for (size_t b = first * kBatch; b < lines.size(); b += 2 * kBatch) {
      rocksdb::WriteBatch batch;
      for (size_t i = b; i < std::min(lines.size(), b + kBatch); ++i) {
        if (!batch.Put(Be64(i + 1), lines[i]).ok()) std::abort();
      }
      if (!db->Write(wo, &batch).ok()) std::abort();
    }
  };
  std::thread t0(writer, 0), t1(writer, 1);
  t0.join();
  t1.join();
  const double s = Seconds(start);
  *bytes_written = WrittenBytes() - written;
  if (!db->Close().ok()) std::abort();
  delete db;
  return static_cast<double>(lines.size()) / s;
}

double LedgerIngest(const std::string& path, const std::string& file, uint64_t* events,
                    uint64_t* bytes_written) {
  store::LedgerOptions o;
  o.path = path;
  o.sync = store::SyncMode::kAlways;
  auto ledger = std::move(store::Ledger::Open(o)).value();
  ingest::StreamIngestOptions so;
  so.source = "file:" + file;
  so.batch_documents = kBatch;
  const int fd = ::open(file.c_str(), O_RDONLY);
  const double cpu_start = bench::ProcessCpuSeconds();
  const double decode_cpu_start = bench::ThreadCpuSeconds();
  const uint64_t written = WrittenBytes();
  // The commit callback runs on ingest's committer threads: each one's CPU time at its last
  // commit, summed at the end.
  std::mutex commit_cpu_mu;
  std::map<std::thread::id, double> commit_cpu;
  const auto start = Clock::now();
  auto r = ingest::IngestStream(fd, ledger.get(), so, [&](const ingest::IngestProgress&) {
    const double t = bench::ThreadCpuSeconds();
    std::lock_guard<std::mutex> l(commit_cpu_mu);
    commit_cpu[std::this_thread::get_id()] = t;
  });
  const double s = Seconds(start);
  const double decode_cpu = bench::ThreadCpuSeconds() - decode_cpu_start;
  const double cpu = bench::ProcessCpuSeconds() - cpu_start;
  double committers_cpu = 0;
  for (const auto& [id, t] : commit_cpu) committers_cpu += t;
  *bytes_written = WrittenBytes() - written;
  ::close(fd);
  if (!r.ok()) {
    std::fprintf(stderr, "ingest failed: %s\n", r.status().ToString().c_str());
    std::abort();
  }
  const store::CommitStats st = ledger->Stats();
  std::printf(
      "  ledger ingest: %.2f s (CPU %.2f s: reading+decoding thread %.2f, committer threads %.2f, "
      "others %.2f), %llu commit groups: prepare %.2f s, write+fsync %.2f s\n",
      s, cpu, decode_cpu, committers_cpu, cpu - decode_cpu - committers_cpu,
      static_cast<unsigned long long>(st.groups), st.prepare_nanos / 1e9, st.write_nanos / 1e9);
  *events = r->events;
  return static_cast<double>(r->events) / s;
}

// A scan's rate (records per second of wall time) and the CPU time it took per record, over
// every thread of the process (so the read-ahead scan's two threads are both counted).
struct ScanFigure {
  double rate = 0;
  double cpu_ns = 0;
  double caller_cpu_ns = 0;  // of that, the calling thread's
  // CPU time over wall time: the cores the scan kept busy on average. A two-thread scan that
  // shows ~1 here had one core (another process ran on the other), and its rate is then bounded
  // by the raw iteration's CPU per record over its own, not by its slower thread.
  double cores = 0;
};

enum class ScanMode {
  kDecode,           // ScanWatchEvents, nothing folded
  kFoldOneThread,    // ScanWatchEvents + FlatViewStore::Fold on one thread
  kFoldReadAhead,    // ScanWatchEventsReadAhead + FlatViewStore::Fold: what Rebuild runs
  kDecodeReadAhead,  // ScanWatchEventsReadAhead, nothing folded: the reading thread's pace
};

// Scans the input log through the Ledger (decoding every record) and, unless kDecode, folds it
// into an in-memory view as Rebuild does.
ScanFigure LedgerFold(store::Ledger* ledger, ScanMode mode, uint64_t* records) {
  store::FlatViewStore view;  // what Rebuild folds into
  *records = 0;
  const double cpu_start = bench::ProcessCpuSeconds() * 1e9;
  const double caller_start = bench::ThreadCpuSeconds();
  const auto start = Clock::now();
  const bool folds = mode == ScanMode::kFoldOneThread || mode == ScanMode::kFoldReadAhead;
  if (folds) view.Reserve(ledger->EstimatedViewKeys());  // as Rebuild sizes its scratch view
  Status fold;
  uint64_t checksum = 0;
  auto fn = [&](uint64_t seq, const model::WatchEventRef& ev) {
    if (folds) {
      fold = view.Fold(ev, seq);
    } else {
      checksum += ev.name.size() + ev.resource_version.size();  // decoded, not folded
    }
    ++*records;
    return fold.ok();
  };
  const bool read_ahead = mode == ScanMode::kFoldReadAhead || mode == ScanMode::kDecodeReadAhead;
  Status s = read_ahead ? ledger->ScanWatchEventsReadAhead(0, fn) : ledger->ScanWatchEvents(0, fn);
  const double secs = Seconds(start);
  const double cpu = bench::ProcessCpuSeconds() * 1e9 - cpu_start;
  const double caller = (bench::ThreadCpuSeconds() - caller_start) * 1e9;
  if (!s.ok() || !fold.ok() || (checksum == 0 && view.size() == 0)) std::abort();
  const auto n = static_cast<double>(*records);
  return {n / secs, cpu / n, caller / n, cpu / (secs * 1e9)};
}

ScanFigure LedgerFold(const std::string& path, ScanMode mode, uint64_t* records) {
  store::LedgerOptions o;
  o.path = path;
  auto ledger = std::move(store::Ledger::Open(o)).value();
  return LedgerFold(ledger.get(), mode, records);
}

// The fold alone: the log's watch events decoded once into memory (views into their records, as
// a scan hands them to the fold), then folded into a fresh FlatViewStore `rounds` times; returns
// the median rate. What the fold costs without the scan (`profile fold` profiles only this).
double FoldOnly(const std::string& path, int rounds) {
  std::vector<std::pair<uint64_t, model::WatchEvent>> events;
  uint64_t view_keys = 0;
  {
    store::LedgerOptions o;
    o.path = path;
    auto ledger = std::move(store::Ledger::Open(o)).value();
    view_keys = ledger->EstimatedViewKeys();
    Status s = ledger->ScanWatchEvents(0, [&](uint64_t seq, const model::WatchEventRef& ev) {
      model::WatchEvent& e = events.emplace_back(seq, model::WatchEvent()).second;
      e.type = ev.type;
      e.kind = ev.kind;
      e.api_version = ev.api_version;
      e.namespace_ = ev.namespace_;
      e.name = ev.name;
      e.uid = ev.uid;
      e.resource_version = ev.resource_version;
      e.owner_name = ev.owner_name;
      e.owner_uid = ev.owner_uid;
      return true;
    });
    if (!s.ok()) std::abort();
  }
  std::vector<std::string> records;
  records.reserve(events.size());
  for (const auto& [seq, ev] : events) records.push_back(model::EncodeInput(ev));
  std::vector<std::pair<uint64_t, model::WatchEventRef>> refs(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    refs[i].first = events[i].first;
    if (!model::DecodeWatchEventRef(records[i], &refs[i].second).ok()) std::abort();
  }
  std::vector<double> rates;
  for (int i = 0; i < rounds; ++i) {
    store::FlatViewStore view;
    const auto start = Clock::now();
    view.Reserve(view_keys);  // as Rebuild sizes its scratch view
    for (const auto& [seq, ev] : refs) {
      if (!view.Fold(ev, seq).ok()) std::abort();
    }
    rates.push_back(static_cast<double>(events.size()) / Seconds(start));
    if (view.size() == 0) std::abort();
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

// Raw iteration of the inputs column family with default ReadOptions, or with fill_cache=false
// as the read-ahead scan reads (a one-pass scan of the whole log keeps its blocks out of the
// block cache).
ScanFigure RawScan(const std::string& path, bool fill_cache, uint64_t* records) {
  rocksdb::DBOptions o;
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(o, path, &names).ok()) std::abort();
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) {
    rocksdb::ColumnFamilyOptions co;
    co.compression = rocksdb::kLZ4Compression;
    cfs.emplace_back(n, co);
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  if (!rocksdb::DB::Open(o, path, cfs, &handles, &db).ok()) std::abort();
  rocksdb::ColumnFamilyHandle* inputs = nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "inputs") inputs = handles[i];
  }
  uint64_t checksum = 0;
  *records = 0;
  const double cpu_start = bench::ProcessCpuSeconds() * 1e9;
  const auto start = Clock::now();
  {
    rocksdb::ReadOptions ro;
    ro.fill_cache = fill_cache;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, inputs));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      checksum += it->value().size() + static_cast<uint8_t>(it->value()[0]);
      ++*records;
    }
  }
  const double secs = Seconds(start);
  const double cpu = bench::ProcessCpuSeconds() * 1e9 - cpu_start;
  for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
  (void)db->Close();
  delete db;
  if (checksum == 0) std::abort();
  return {static_cast<double>(*records) / secs, cpu / static_cast<double>(*records)};
}

// Where an ingest's bytes went: opens the closed ledger read-only (its WAL replays into
// memtables, nothing is flushed) and prints, per column family, the entries written (memtables
// plus flushed tables: puts and deletes, overwrites included), their key and value bytes, and the
// SST bytes; then the WAL files' total size. Diagnostic (`ledger_bench N bytes`).
void PrintByteBreakdown(const std::string& path, uint64_t events) {
  rocksdb::DBOptions o;
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(o, path, &names).ok()) std::abort();
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  if (!rocksdb::DB::OpenForReadOnly(o, path, cfs, &handles, &db).ok()) std::abort();
  std::printf(
      "  bytes by column family (%llu events): entries written (mem + sst), per event; "
      "live keys; key+value bytes of live keys; SST bytes\n",
      static_cast<unsigned long long>(events));
  uint64_t total_entries = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    uint64_t mem = 0, imm = 0, sst_entries = 0, sst_bytes = 0, live = 0, kv = 0;
    db->GetIntProperty(handles[i], "rocksdb.num-entries-active-mem-table", &mem);
    db->GetIntProperty(handles[i], "rocksdb.num-entries-imm-mem-tables", &imm);
    rocksdb::ColumnFamilyMetaData meta;
    db->GetColumnFamilyMetaData(handles[i], &meta);
    for (const auto& level : meta.levels) {
      for (const auto& f : level.files) {
        sst_entries += f.num_entries;
        sst_bytes += f.size;
      }
    }
    {
      std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), handles[i]));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        ++live;
        kv += it->key().size() + it->value().size();
      }
    }
    const uint64_t entries = mem + imm + sst_entries;
    total_entries += entries;
    if (entries == 0 && live == 0) continue;
    std::printf("    %-10s %8llu entries (%.2f/event)  %8llu live  %10.1f MB live  %8.1f MB sst\n",
                names[i].c_str(), static_cast<unsigned long long>(entries),
                static_cast<double>(entries) / static_cast<double>(events),
                static_cast<unsigned long long>(live), kv / 1e6, sst_bytes / 1e6);
  }
  std::printf("    all        %8llu entries (%.2f/event)\n",
              static_cast<unsigned long long>(total_entries),
              static_cast<double>(total_entries) / static_cast<double>(events));
  for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
  (void)db->Close();
  delete db;
  uint64_t wal = 0;
  for (const auto& e : std::filesystem::directory_iterator(path)) {
    if (e.path().extension() == ".log") wal += e.file_size();
  }
  std::printf("    WAL files: %.1f MB (%.0f bytes/event)\n", wal / 1e6,
              static_cast<double>(wal) / static_cast<double>(events));
}

}  // namespace
}  // namespace cronledger

int main(int argc, char** argv) {
  using namespace cronledger;
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 60000;
  const bool profile = argc > 2 && std::string(argv[2]) == "profile";
  const bool breakdown = argc > 2 && std::string(argv[2]) == "bytes";
  const std::string part = profile && argc > 3 ? argv[3] : "ingest";
  if ((argc > 2 && !profile && !breakdown) ||
      (part != "ingest" && part != "scan" && part != "fold" && part != "scanfold" &&
       part != "readahead")) {
    std::fprintf(
        stderr,
        "usage: ledger_bench [EVENTS [profile ingest|scan|scanfold|readahead|fold | bytes]]\n");
    return 2;
  }
  store::testing::TempDir dir;
  const std::string file = dir.Sub("events.jsonl");
  std::vector<std::string> lines;
  size_t bytes = 0;
  {
    std::ofstream f(file);
    for (uint64_t i = 0; i < n; ++i) {
      lines.push_back(model::testing::StreamLine(i, 1000));
      f << lines.back();
      bytes += lines.back().size();
    }
  }
  std::printf("ledger bench: %llu watch events, %.0f bytes each on average, batches of %zu\n",
              static_cast<unsigned long long>(n), static_cast<double>(bytes) / n, kBatch);
  // The machine may be shared: alternate peer and ours for several rounds (fresh directories
  // each) and report medians with the range.
  const int ingest_rounds = profile || breakdown ? 1 : 3;
  std::vector<double> raw_w, ours_w;
  uint64_t events = 0, raw_written = 0, ours_written = 0;
  for (int i = 0; i < ingest_rounds; ++i) {
    const std::string round = std::to_string(i);
    if (!profile && !breakdown)
      raw_w.push_back(RawWrites(dir.Sub("raw" + round), lines, &raw_written));
    ours_w.push_back(LedgerIngest(dir.Sub(i + 1 == ingest_rounds ? "ledger" : "ledger" + round),
                                  file, &events, &ours_written));
  }
  if (raw_w.empty()) raw_w.push_back(1);
  std::printf(
      "durable ingest (fsync'd)     : %10.0f events/s   raw RocksDB writes: %10.0f/s   ratio "
      "%.2f   (medians of %d rounds; ours %.0f..%.0f, raw %.0f..%.0f)\n"
      "  (the peer writes the lines uncompressed; ours compresses each object's raw bytes, LZ4, "
      "as the ledger's layout asks: written %.0f MB, raw peer %.0f MB, last round)\n",
      Median(ours_w), Median(raw_w), Median(ours_w) / Median(raw_w), ingest_rounds,
      *std::min_element(ours_w.begin(), ours_w.end()),
      *std::max_element(ours_w.begin(), ours_w.end()),
      *std::min_element(raw_w.begin(), raw_w.end()), *std::max_element(raw_w.begin(), raw_w.end()),
      ours_written / 1e6, raw_written / 1e6);
  if (breakdown) {
    PrintByteBreakdown(dir.Sub("ledger"), events);
    return 0;
  }
  // The scans are short: alternate peer and ours several rounds and report the medians.
  if (profile && part == "ingest") return 0;
  if (profile && part == "fold") {
    std::printf("fold alone (records decoded in memory): %10.0f records/s (median of 500)\n",
                FoldOnly(dir.Sub("ledger"), 500));
    return 0;
  }
  if (profile && part == "scanfold") {
    store::LedgerOptions o;
    o.path = dir.Sub("ledger");
    auto ledger = std::move(store::Ledger::Open(o)).value();
    std::vector<double> rates, cpu, caller;
    for (int i = 0; i < 200; ++i) {
      const ScanFigure f =
          LedgerFold(ledger.get(),
                     std::getenv("LEDGER_BENCH_READ_AHEAD") != nullptr ? ScanMode::kFoldReadAhead
                                                                       : ScanMode::kFoldOneThread,
                     &events);
      rates.push_back(f.rate);
      cpu.push_back(f.cpu_ns);
      caller.push_back(f.caller_cpu_ns);
    }
    std::printf(
        "log scan + decode + fold: %10.0f records/s, CPU %.0f ns/record, %.0f on the calling "
        "thread (medians of 200)\n",
        Median(rates), Median(cpu), Median(caller));
    return 0;
  }
  if (profile && part == "readahead") {
    std::vector<double> rates;
    for (int i = 0; i < 100; ++i) {
      rates.push_back(LedgerFold(dir.Sub("ledger"), ScanMode::kDecodeReadAhead, &events).rate);
    }
    std::printf("log scan + decode, read ahead: %10.0f records/s (median of 100)\n", Median(rates));
    return 0;
  }
  const int rounds = profile ? 30 : 5;
  std::vector<ScanFigure> raw, raw_nofill, decode, decode2, fold1, fold2;
  uint64_t folded = events, scanned = events, decoded = events;
  for (int i = 0; i < rounds; ++i) {
    if (!profile) {
      raw.push_back(RawScan(dir.Sub("ledger"), true, &scanned));
      raw_nofill.push_back(RawScan(dir.Sub("ledger"), false, &scanned));
    }
    if (!profile || part == "scan") {
      decode.push_back(LedgerFold(dir.Sub("ledger"), ScanMode::kDecode, &decoded));
    }
    if (!profile) {
      fold1.push_back(LedgerFold(dir.Sub("ledger"), ScanMode::kFoldOneThread, &folded));
      fold2.push_back(LedgerFold(dir.Sub("ledger"), ScanMode::kFoldReadAhead, &folded));
      decode2.push_back(LedgerFold(dir.Sub("ledger"), ScanMode::kDecodeReadAhead, &decoded));
    }
  }
  // Medians of the rates and of the CPU times, each on its own.
  auto median = [](const std::vector<ScanFigure>& v) {
    std::vector<double> rates, cpu, caller, cores;
    for (const ScanFigure& f : v) {
      rates.push_back(f.rate);
      cpu.push_back(f.cpu_ns);
      caller.push_back(f.caller_cpu_ns);
      cores.push_back(f.cores);
    }
    return v.empty() ? ScanFigure{1, 0, 0, 0}
                     : ScanFigure{Median(rates), Median(cpu), Median(caller), Median(cores)};
  };
  const ScanFigure r1 = median(raw), r2 = median(raw_nofill), d = median(decode),
                   d2 = median(decode2);
  const ScanFigure f1 = median(fold1), f2 = median(fold2);
  // Ratios are against the faster of the two raw iterations.
  const ScanFigure r = r1.rate >= r2.rate ? r1 : r2;
  std::printf(
      "raw RocksDB iteration        : %10.0f records/s  (1 thread, CPU %.0f ns/record; default "
      "ReadOptions)\n"
      "                               %10.0f records/s  (1 thread, CPU %.0f ns/record; "
      "fill_cache=false)\n",
      r1.rate, r1.cpu_ns, r2.rate, r2.cpu_ns);
  std::printf(
      "log scan + decode (no fold)  : %10.0f records/s  ratio %.2f  (1 thread, CPU %.0f "
      "ns/record)\n",
      d.rate, d.rate / r.rate, d.cpu_ns);
  std::printf(
      "  the same, log read ahead   : %10.0f records/s  ratio %.2f  (2 threads, CPU %.0f "
      "ns/record, %.0f of it decoding; %.2f cores busy)\n",
      d2.rate, d2.rate / r.rate, d2.cpu_ns, d2.caller_cpu_ns, d2.cores);
  std::printf(
      "log scan + decode + fold     : %10.0f records/s  ratio %.2f  (1 thread, CPU %.0f "
      "ns/record)\n",
      f1.rate, f1.rate / r.rate, f1.cpu_ns);
  std::printf(
      "log scan + decode + fold     : %10.0f records/s  ratio %.2f  (2 threads as Rebuild runs it: "
      "the log read ahead on one, decode + fold on the other; CPU %.0f ns/record, both threads, "
      "%.0f of it decode + fold; %.2f cores busy)\n",
      f2.rate, f2.rate / r.rate, f2.cpu_ns, f2.caller_cpu_ns, f2.cores);
  std::printf(
      "  (ratios against the faster raw RocksDB iteration of the same column family on 1 thread; "
      "our scans read with default ReadOptions, the read-ahead with fill_cache=false; medians of "
      "%d rounds)\n",
      rounds);
  if (!profile) {
    std::printf("  fold alone (records decoded in memory): %10.0f records/s\n",
                FoldOnly(dir.Sub("ledger"), rounds));
  }
  if (folded != events || scanned != events || decoded != events) {
    std::fprintf(stderr, "record counts differ: %llu ingested, %llu folded, %llu scanned\n",
                 static_cast<unsigned long long>(events), static_cast<unsigned long long>(folded),
                 static_cast<unsigned long long>(scanned));
    return 1;
  }
  return 0;
}
