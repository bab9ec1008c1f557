#include "ingest/stream_ingest.h"

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "ingest/splitter.h"
#include "model/watch_decoder.h"

namespace cronledger::ingest {
namespace {

constexpr size_t kPrefixLen = 4096;

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  return h;
}

Result<size_t> ReadSome(int fd, char* buf, size_t n) {
  while (true) {
    ssize_t got = ::read(fd, buf, n);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) return Status::IoError(std::string("read: ") + std::strerror(errno));
  }
}

struct PendingUnit {
  store::UnitOfWork unit;
  uint64_t documents = 0;
  uint64_t events = 0;
  uint64_t quarantined = 0;
  uint64_t offset = 0;
  uint64_t line = 0;
};

// Commits units in order on two threads, so that decoding the next unit overlaps the commits, and
// two commits are in flight: the ledger prepares one while it writes the other (its pipelined
// group commit). A thread takes the queued units (merged into one commit) only once the previous
// commit holds its place in the ledger's queue (UnitOfWork::on_queued), so commits reach the
// ledger in stream order; results are reported in that order too. After a failed commit the
// ledger fails every later one, so nothing is committed past a unit that failed.
class Committer {
 public:
  Committer(store::Ledger* ledger, IngestProgress* progress,
            const std::function<void(const IngestProgress&)>& on_commit)
      : ledger_(ledger), progress_(progress), on_commit_(on_commit) {
    for (auto& t : threads_) {
      t = std::thread([this] {
        pthread_setname_np(pthread_self(), "cl-ingest");
        Run();
      });
    }
  }
  // Finish() reports the status; a destructor reached on an early return has nobody to tell.
  ~Committer() { (void)Finish(); }

  // Queues a unit; blocks while kMaxQueued are queued. Returns false once a commit has failed.
  // Units queued while both commits are in flight go into the next one together: more queued
  // units make bigger commit groups (fewer fsyncs per event) while decoding runs ahead.
  static constexpr size_t kMaxQueued = 4;
  bool Submit(PendingUnit unit) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return queue_.size() < kMaxQueued || !status_.ok(); });
    if (!status_.ok()) return false;
    queue_.push_back(std::move(unit));
    cv_.notify_all();
    return true;
  }

  Status Finish() {
    {
      std::lock_guard<std::mutex> l(mu_);
      done_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    return status_;
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> l(mu_);
    while (true) {
      cv_.wait(l, [this] {
        return (done_ && queue_.empty()) || !status_.ok() || (!queue_.empty() && !taking_);
      });
      if (!status_.ok() || queue_.empty()) return;
      // This thread holds the turn to queue a commit until the ledger has queued it.
      taking_ = true;
      const uint64_t turn = next_turn_++;
      PendingUnit u = std::move(queue_.front());
      queue_.pop_front();
      // Units that queued up meanwhile go in the same commit: still in order, still atomic, one
      // fsync fewer.
      while (!queue_.empty()) {
        PendingUnit& next = queue_.front();
        for (auto& in : next.unit.inputs) u.unit.inputs.push_back(std::move(in));
        for (auto& r : next.unit.stored_raw) u.unit.stored_raw.push_back(std::move(r));
        for (auto& q : next.unit.quarantine) u.unit.quarantine.push_back(std::move(q));
        u.unit.positions = std::move(next.unit.positions);
        u.documents += next.documents;
        u.events += next.events;
        u.quarantined += next.quarantined;
        u.offset = next.offset;
        u.line = next.line;
        queue_.pop_front();
      }
      cv_.notify_all();
      bool queued = false;
      u.unit.on_queued = [this, &queued] {
        std::lock_guard<std::mutex> g(mu_);
        queued = true;
        taking_ = false;
        cv_.notify_all();
      };
      l.unlock();
      auto r = ledger_->Commit(std::move(u.unit));
      l.lock();
      if (!queued) {
        taking_ = false;  // refused before it queued (the ledger calls on_queued only then)
        cv_.notify_all();
      }
      // Report in stream order: the commit queued before this one first.
      cv_.wait(l, [&] { return reported_ == turn; });
      if (!r.ok()) {
        if (status_.ok()) status_ = r.status();
        queue_.clear();
      } else if (status_.ok()) {
        progress_->documents += u.documents;
        progress_->events += u.events;
        progress_->quarantined += u.quarantined;
        progress_->offset = u.offset;
        progress_->line = u.line;
        progress_->first_seq = r->first_input_seq;
        progress_->last_seq = r->last_input_seq;
        if (on_commit_) {
          const IngestProgress snapshot = *progress_;
          l.unlock();
          on_commit_(snapshot);
          l.lock();
        }
      }
      ++reported_;
      cv_.notify_all();
    }
  }

  store::Ledger* ledger_;
  IngestProgress* progress_;
  const std::function<void(const IngestProgress&)>& on_commit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<PendingUnit> queue_;
  bool done_ = false;
  bool taking_ = false;     // a thread took units and its commit is not queued in the ledger yet
  uint64_t next_turn_ = 0;  // commits taken, in order
  uint64_t reported_ = 0;   // commits whose result was reported, in order
  Status status_;
  std::thread threads_[2];
};

// Positions the stream at the committed offset and checks it is the same stream. Fills `prefix`
// with the stream's first min(offset, 4 KiB) bytes.
Status Resume(int fd, const StreamPosition& pos, std::string* prefix) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::IoError(std::string("fstat: ") + std::strerror(errno));
  const size_t want = static_cast<size_t>(std::min<uint64_t>(pos.offset, kPrefixLen));
  if (S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) < pos.offset) {
      return Status::FailedPrecondition(
          "source is shorter than its committed position (" + std::to_string(pos.offset) +
          " bytes): it was replaced or truncated; ingest it with --restart");
    }
    prefix->resize(want);
    ssize_t got = ::pread(fd, prefix->data(), want, 0);
    if (got != static_cast<ssize_t>(want)) return Status::IoError("pread of the source prefix");
    if (::lseek(fd, static_cast<off_t>(pos.offset), SEEK_SET) < 0) {
      return Status::IoError(std::string("lseek: ") + std::strerror(errno));
    }
  } else {
    std::string skip(64 * 1024, '\0');
    uint64_t left = pos.offset;
    while (left > 0) {
      CL_ASSIGN_OR_RETURN(size_t n,
                          ReadSome(fd, skip.data(), std::min<uint64_t>(left, skip.size())));
      if (n == 0) return Status::FailedPrecondition("stream ended before its committed position");
      if (prefix->size() < want) prefix->append(skip.data(), std::min(n, want - prefix->size()));
      left -= n;
    }
  }
  if (pos.prefix_len != prefix->size() || Fnv1a(*prefix) != pos.prefix_hash) {
    return Status::FailedPrecondition(
        "source does not start with the bytes committed before: it is a different stream; "
        "ingest it with --restart or another --source-id");
  }
  return Status::Ok();
}

}  // namespace

std::string EncodeStreamPosition(const StreamPosition& p) {
  return "offset=" + std::to_string(p.offset) + " line=" + std::to_string(p.line) +
         " prefix=" + std::to_string(p.prefix_len) + ":" + std::to_string(p.prefix_hash);
}

Result<StreamPosition> DecodeStreamPosition(std::string_view s) {
  StreamPosition p;
  unsigned long long offset = 0, line = 0, len = 0, hash = 0;
  const std::string str(s);
  if (std::sscanf(str.c_str(), "offset=%llu line=%llu prefix=%llu:%llu", &offset, &line, &len,
                  &hash) != 4) {
    return Status::Corruption("bad stream position \"" + str + "\"");
  }
  p.offset = offset;
  p.line = line;
  p.prefix_len = len;
  p.prefix_hash = hash;
  return p;
}

Result<IngestProgress> IngestStream(int fd, store::Ledger* ledger,
                                    const StreamIngestOptions& options,
                                    const std::function<void(const IngestProgress&)>& on_commit) {
  if (options.source.empty()) return Status::InvalidArgument("ingest: empty source id");
  const std::string label = options.label.empty() ? options.source : options.label;
  StreamPosition start;
  std::string prefix;
  if (options.resume) {
    auto stored = ledger->GetSourcePosition(options.source);
    if (stored.ok()) {
      CL_ASSIGN_OR_RETURN(start, DecodeStreamPosition(*stored));
      CL_RETURN_IF_ERROR(Resume(fd, start, &prefix));
    } else if (!stored.status().IsNotFound()) {
      return stored.status();
    }
  }

  IngestProgress progress;
  progress.offset = start.offset;
  progress.line = start.line;
  progress.resumed_from = start.offset;
  Committer committer(ledger, &progress, on_commit);
  model::WatchDecoder decoder(model::DecodedObjects::kDrop);  // the ledger keeps the bytes
  DocumentSplitter splitter(start.line);
  model::DecodedDocument decoded;
  std::string buf;
  size_t len = 0;                // bytes of data in buf
  uint64_t base = start.offset;  // stream offset of buf[0]
  PendingUnit unit;
  bool eof = false;
  bool committer_ok = true;

  auto submit = [&](uint64_t offset) {
    const uint64_t plen = std::min<uint64_t>(offset, kPrefixLen);
    StreamPosition pos{offset, splitter.line(), Fnv1a(std::string_view(prefix).substr(0, plen)),
                       plen};
    unit.offset = offset;
    unit.line = pos.line;
    unit.unit.positions.push_back({options.source, EncodeStreamPosition(pos)});
    // Compress the raw bytes here, on the decoding thread, not in the commit.
    store::PrepareUnit(&unit.unit);
    committer_ok = committer.Submit(std::move(unit));
    unit = PendingUnit();
  };

  while (!eof && committer_ok) {
    buf.resize(len + options.read_size + model::kDecoderPadding);
    CL_ASSIGN_OR_RETURN(size_t n, ReadSome(fd, buf.data() + len, options.read_size));
    if (prefix.size() < kPrefixLen && base + len == prefix.size()) {
      prefix.append(buf.data() + len, std::min(n, kPrefixLen - prefix.size()));
    }
    len += n;
    eof = n == 0;
    const std::string_view data(buf.data(), len);
    size_t pos = 0;
    Document doc;
    while (committer_ok && splitter.Next(data, pos, eof, &doc)) {
      decoded.events.clear();
      decoded.rejections.clear();
      std::string_view text = data.substr(doc.begin, doc.end - doc.begin);
      if (doc.truncated) {
        decoded.rejections.push_back(
            model::Rejection::Whole("truncated JSON document", std::string(text)));
      } else {
        decoder.Decode(text, &decoded);
      }
      for (auto& ev : decoded.events) unit.unit.inputs.emplace_back(std::move(ev));
      for (auto& r : decoded.rejections) {
        std::string where = label + ":" + std::to_string(doc.line);
        if (r.item >= 0) where += " items[" + std::to_string(r.item) + "]";
        unit.unit.quarantine.push_back(
            {0, Time(), std::move(r.reason), std::move(where), std::move(r.raw)});
      }
      unit.events += decoded.events.size();
      unit.quarantined += decoded.rejections.size();
      ++unit.documents;
      pos = doc.next;
      if (unit.documents >= options.batch_documents) submit(base + pos);
    }
    // Keep the unfinished tail for the next read.
    std::memmove(buf.data(), buf.data() + pos, len - pos);
    len -= pos;
    base += pos;
  }
  if (committer_ok && unit.documents > 0) submit(base);
  CL_RETURN_IF_ERROR(committer.Finish());
  return progress;
}

}  // namespace cronledger::ingest
