// Large objects: what a version of a 1 MiB CronJob costs the ledger with chunked raw bytes (raw
// format 3, the default) against the same run with chunking off (every version stored whole in
// format 2: the peer), measured in the same process.
//
// Each side commits VERSIONS versions of one CronJob whose 1 MiB annotation is random base64 text
// (LZ4 cannot shrink it) and which differ only in metadata.resourceVersion and
// status.lastScheduleTime, one version per Commit, through the real ledger (SyncMode::kNone: the
// bytes do not depend on it). Printed per side: data directory growth per version, live (WAL and
// memtables' files) and settled (after close: flushed tables); commit time per version; read time
// per version, scanning every version's raw bytes (ScanInputs with raw) and reading the latest
// (GetObject). Peer and ours alternate over rounds; medians are printed.
//
//   large_object_bench [VERSIONS [OBJECT_BYTES]]   (defaults 60, 1048576)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "bench/median.h"
#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger {
namespace {

using bench::Median;

using Clock = std::chrono::steady_clock;

struct Figures {
  double live_bytes_per_version = 0;
  double settled_bytes_per_version = 0;
  double commit_ms_per_version = 0;
  double scan_ms_per_version = 0;
  double get_ms = 0;
};

double Ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

uint64_t DirBytes(const std::string& path) {
  uint64_t total = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(path)) {
    if (f.is_regular_file()) total += f.file_size();
  }
  return total;
}

void Check(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

std::string Annotation(size_t n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::mt19937_64 rng(42);
  std::string out(n, '\0');
  for (char& c : out) c = kAlphabet[rng() % 64];
  return out;
}

std::string Version(const std::string& annotation, uint64_t rv) {
  const uint64_t minute = rv % 60;
  return R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"big","namespace":"ns",)"
         R"("uid":"u-big","resourceVersion":")" +
         std::to_string(rv) + R"(","annotations":{"blob":")" + annotation +
         R"("}},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":)"
         R"({"containers":[]}}}}},"status":{"lastScheduleTime":"2026-01-01T00:)" +
         (minute < 10 ? "0" : "") + std::to_string(minute) + R"(:00Z"}})";
}

std::unique_ptr<store::Ledger> Open(const std::string& path, bool chunked) {
  store::LedgerOptions o;
  o.path = path;
  o.sync = store::SyncMode::kNone;
  o.chunk_large_raw = chunked;
  auto l = store::Ledger::Open(o);
  Check(l.status(), "open");
  return std::move(l).value();
}

Figures Run(const std::string& path, bool chunked, const std::string& annotation,
            uint64_t versions) {
  Figures f;
  auto ledger = Open(path, chunked);
  const uint64_t empty = DirBytes(path);
  const auto commit_start = Clock::now();
  for (uint64_t rv = 1; rv <= versions; ++rv) {
    store::UnitOfWork u;
    model::WatchEvent e = store::testing::CronJobEvent(
        rv == 1 ? model::WatchEventType::kAdded : model::WatchEventType::kModified, "ns", "big",
        "u-big", std::to_string(rv));
    e.raw = Version(annotation, rv);
    u.inputs.push_back(std::move(e));
    Check(ledger->Commit(std::move(u)).status(), "commit");
  }
  f.commit_ms_per_version = Ms(commit_start) / static_cast<double>(versions);
  f.live_bytes_per_version =
      static_cast<double>(DirBytes(path) - empty) / static_cast<double>(versions);
  ledger.reset();  // flushes the memtables
  f.settled_bytes_per_version =
      static_cast<double>(DirBytes(path) - empty) / static_cast<double>(versions);

  ledger = Open(path, chunked);
  uint64_t read = 0;
  size_t bytes = 0;
  const auto scan_start = Clock::now();
  Check(ledger->ScanInputs(0, true,
                           [&](const store::LogRecord& r) {
                             bytes += std::get<model::WatchEvent>(r.input).raw.size();
                             ++read;
                             return true;
                           }),
        "scan");
  f.scan_ms_per_version = Ms(scan_start) / static_cast<double>(versions);
  if (read != versions || bytes < versions * annotation.size()) {
    std::fprintf(stderr, "scan read %llu versions\n", static_cast<unsigned long long>(read));
    std::exit(1);
  }
  constexpr int kGets = 20;
  const auto get_start = Clock::now();
  for (int i = 0; i < kGets; ++i) {
    auto obj = ledger->GetObject(model::ObjectKind::kCronJob, "ns", "big");
    Check(obj.status(), "get");
    if (obj->raw != Version(annotation, versions)) {
      std::fprintf(stderr, "GetObject returned other bytes\n");
      std::exit(1);
    }
  }
  f.get_ms = Ms(get_start) / kGets;
  return f;
}

}  // namespace
}  // namespace cronledger

int main(int argc, char** argv) {
  using namespace cronledger;
  const uint64_t versions = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 60;
  const size_t object = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : size_t{1} << 20;
  if (versions == 0 || object == 0 || argc > 3) {
    std::fprintf(stderr, "usage: large_object_bench [VERSIONS [OBJECT_BYTES]]\n");
    return 2;
  }
  const std::string annotation = Annotation(object);
  std::printf(
      "large object bench: %llu versions of a CronJob with a %zu-byte random base64 "
      "annotation, differing in resourceVersion and status.lastScheduleTime\n",
      static_cast<unsigned long long>(versions), object);
  store::testing::TempDir dir;
  constexpr int kRounds = 3;
  std::vector<Figures> whole, chunked;
  for (int i = 0; i < kRounds; ++i) {
    const std::string round = std::to_string(i);
    whole.push_back(Run(dir.Sub("whole" + round), false, annotation, versions));
    chunked.push_back(Run(dir.Sub("chunked" + round), true, annotation, versions));
    std::filesystem::remove_all(dir.Sub("whole" + round));
    std::filesystem::remove_all(dir.Sub("chunked" + round));
  }
  auto median = [](const std::vector<Figures>& runs, double Figures::*field) {
    std::vector<double> v;
    for (const Figures& f : runs) v.push_back(f.*field);
    return Median(v);
  };
  struct Row {
    const char* name;
    double Figures::*field;
    const char* unit;
  };
  const Row rows[] = {
      {"data dir growth per version, live", &Figures::live_bytes_per_version, "bytes"},
      {"data dir growth per version, settled", &Figures::settled_bytes_per_version, "bytes"},
      {"commit time per version", &Figures::commit_ms_per_version, "ms"},
      {"scan with raw bytes, per version", &Figures::scan_ms_per_version, "ms"},
      {"GetObject of the latest version", &Figures::get_ms, "ms"},
  };
  std::printf("%-40s %14s %14s %8s   (medians of %d rounds)\n", "", "whole (fmt 2)",
              "chunked (fmt 3)", "ratio", kRounds);
  for (const Row& r : rows) {
    const double peer = median(whole, r.field);
    const double ours = median(chunked, r.field);
    const int digits = r.unit[0] == 'm' ? 2 : 0;
    std::printf("%-40s %11.*f %-2s %11.*f %-2s %8.3f\n", r.name, digits, peer, r.unit, digits, ours,
                r.unit, peer > 0 ? ours / peer : 0.0);
  }
  return 0;
}
