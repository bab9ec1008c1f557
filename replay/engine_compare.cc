// The replay engine's verifying half: the recorded decision stream of the replayed passes, the
// two digests, and the first divergence.

#include "model/inputs.h"
#include "replay/digest.h"
#include "replay/engine_internal.h"

namespace cronledger::replay::internal {

Status Engine::ReadRecorded(std::vector<model::Decision>* out) {
  return source_.ScanDecisions([&](const model::Decision& d) {
    out->push_back(d);
    return true;
  });
}

bool Engine::Selected(const model::Decision& d) const {
  const ReplayScope& scope = options_.scope;
  const uint64_t tick = d.cause.tick_seq;
  // A decision of a replayed pass, or one that no pass of the log made (forged, or its Tick
  // lost) but that falls in the scope: both must match the derived stream.
  return replayed_ticks_.Contains(tick) ||
         (!all_ticks_.Contains(tick) && scope.Selects(d.cron_job.namespace_, d.cron_job.name) &&
          scope.InWindow(d.time) &&
          (!scope.selector ||
           label_selected_.count(FamilyKey(d.cron_job.namespace_, d.cron_job.name)) != 0));
}

void Engine::SelectRecorded(std::vector<model::Decision>&& all) {
  for (model::Decision& d : all) {
    ++result_.decisions_scanned;
    ++records_;
    Progress(false);
    if (Selected(d)) result_.recorded.push_back(std::move(d));
  }
}

Status RecordedStream::Read(RecordSource& source) {
  Batch b;
  bool stop = false;
  const Status s = source.ScanDecisionBytes([&](uint64_t seq, std::string_view bytes) {
    b.bytes.append(bytes);
    b.ends.push_back(static_cast<uint32_t>(b.bytes.size()));
    b.seqs.push_back(seq);
    if (b.seqs.size() == kBatch || b.bytes.size() > (64u << 20)) {
      Publish(std::move(b));
      b = Batch();
      std::lock_guard<std::mutex> l(mu_);
      stop = stopped_;
    }
    return !stop;
  });
  if (!b.seqs.empty()) Publish(std::move(b));
  std::lock_guard<std::mutex> l(mu_);
  done_ = true;
  ready_.notify_one();
  return s;
}

void RecordedStream::Publish(Batch&& b) {
  std::unique_lock<std::mutex> l(mu_);
  space_.wait(l, [&] { return batches_.size() < kMaxBatches || stopped_; });
  if (stopped_) return;
  batches_.push_back(std::move(b));
  ready_.notify_one();
}

RecordedStream::Next RecordedStream::NextBatch(bool wait) {
  std::unique_lock<std::mutex> l(mu_);
  if (wait) ready_.wait(l, [&] { return !batches_.empty() || done_ || stopped_; });
  if (stopped_ || (batches_.empty() && done_)) return kEnd;
  if (batches_.empty()) return kNotYet;
  cur_ = std::move(batches_.front());
  batches_.pop_front();
  pos_ = 0;
  space_.notify_one();
  return kRecord;
}

void RecordedStream::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  stopped_ = true;
  space_.notify_one();
  ready_.notify_one();
}

namespace {

std::optional<PassSummary> PassOfTick(const std::vector<PassSummary>& passes, uint64_t tick) {
  for (const PassSummary& p : passes) {
    if (p.tick_seq == tick) return p;
  }
  return std::nullopt;
}

}  // namespace

void Engine::Compare() {
  DecisionDigest derived_digest, recorded_digest;
  const auto& derived = result_.derived;
  auto& recorded = result_.recorded;
  const size_t n = std::max(derived.size(), recorded.size());
  std::optional<Divergence> first;
  std::string bytes;
  for (size_t i = 0; i < n; ++i) {
    if (i < derived.size() && i < recorded.size()) {
      // Equal records (seq aside) have equal canonical bytes: encode them once for both chains,
      // and while the chains are equal (equal streams so far) hash them once.
      model::Decision& r = recorded[i];
      const uint64_t seq = r.seq;
      r.seq = 0;
      const bool equal = r == derived[i];
      if (equal) {
        bytes.clear();
        model::AppendCanonicalDecisionBytes(r, &bytes);
        const bool same_chain = derived_digest == recorded_digest;
        derived_digest.AddBytes(bytes);
        if (same_chain) {
          recorded_digest = derived_digest;
        } else {
          recorded_digest.AddBytes(bytes);
        }
      }
      r.seq = seq;
      if (equal) continue;
    }
    std::string d = i < derived.size() ? DigestBytes(derived[i]) : std::string();
    std::string r = i < recorded.size() ? DigestBytes(recorded[i]) : std::string();
    if (i < derived.size()) derived_digest.AddBytes(d);
    if (i < recorded.size()) recorded_digest.AddBytes(r);
    if (i < derived.size() && i < recorded.size() && d == r) continue;
    ++result_.divergences;
    if (first) continue;
    first.emplace();
    first->index = i;
    if (i < recorded.size()) first->recorded = recorded[i];
    if (i < derived.size()) first->derived = derived[i];
    first->what = i >= derived.size()
                      ? "the recorded stream has a decision the replay did not derive"
                  : i >= recorded.size() ? "the replay derived a decision that was not recorded"
                                         : "the decisions differ";
    first->pass = i < derived.size()
                      ? std::optional<PassSummary>(result_.passes[result_.derived_pass[i]])
                      : PassOfTick(result_.passes, recorded[i].cause.tick_seq);
  }
  // A pass that did not replay exactly but whose decisions happen to match (e.g. only its
  // accounting state differs) is a divergence too; report whichever comes first in the stream.
  size_t before = 0;
  for (size_t p = 0, k = 0; p < result_.passes.size(); ++p) {
    before = k;
    while (k < result_.derived_pass.size() && result_.derived_pass[k] == p) ++k;
    if (result_.passes[p].problem.empty()) continue;
    if (!first || before < first->index) {
      first.emplace();
      first->index = before;
      if (before < recorded.size()) first->recorded = recorded[before];
      if (before < derived.size()) first->derived = derived[before];
      first->what = result_.passes[p].problem;
      first->pass = result_.passes[p];
    }
    break;
  }
  result_.derived_digest = {derived_digest.count(), derived_digest.Hex()};
  result_.recorded_digest = {recorded_digest.count(), recorded_digest.Hex()};
  result_.first_divergence = std::move(first);
}

StreamVerifier::StreamVerifier(RecordSource& source) {
  reader_ = std::thread([this, &source] { read_status_ = stream_.Read(source); });
  matcher_ = std::thread([this] { Match(); });
}

StreamVerifier::~StreamVerifier() {
  Fail();
  Close();
  if (matcher_.joinable()) matcher_.join();
  stream_.Stop();
  if (reader_.joinable()) reader_.join();
}

void StreamVerifier::Flush() {
  std::unique_lock<std::mutex> l(mu_);
  space_.wait(l, [&] { return batches_.size() < kMaxBatches; });
  batches_.push_back(std::move(batch_));
  batch_.clear();
  ready_.notify_one();
  l.unlock();
  // A moved-from vector has no storage: without this the next batch grows 1, 2, 4... 256,
  // moving every decision up to eight times on the adding thread.
  batch_.reserve(kBatch);
}

void StreamVerifier::Close() {
  if (!batch_.empty()) Flush();
  std::lock_guard<std::mutex> l(mu_);
  closed_ = true;
  ready_.notify_one();
}

bool StreamVerifier::Finish() {
  Close();
  matcher_.join();
  stream_.Stop();
  reader_.join();
  if (!read_status_.ok()) Fail();  // reported by the full replay
  return !failed();
}

namespace {

// The next decision's object and out-of-line strings, loaded while the current one is written and
// hashed: they were written on the deciding thread's core, and the canonical writer otherwise
// waits for each of them in turn.
void Prefetch(const model::Decision& d) {
  const char* p = reinterpret_cast<const char*>(&d);
  for (size_t off = 0; off < sizeof d; off += 64) __builtin_prefetch(p + off);
  for (const std::string* s : {&d.cron_job.uid, &d.cron_job.name, &d.cron_job.namespace_}) {
    __builtin_prefetch(s->data());
  }
  if (d.job_name) __builtin_prefetch(d.job_name->data());
  if (d.message) __builtin_prefetch(d.message->data());
}

}  // namespace

void StreamVerifier::Match() {
  std::vector<model::Decision> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> l(mu_);
      ready_.wait(l, [&] { return !batches_.empty() || closed_; });
      if (batches_.empty()) break;
      batch = std::move(batches_.front());
      batches_.pop_front();
      space_.notify_one();
    }
    if (failed()) continue;  // the scan is stopping: take its batches, do nothing
    for (size_t i = 0; i < batch.size(); ++i) {
      if (i + 1 < batch.size()) Prefetch(batch[i + 1]);
      canonical_.resize(DecisionDigest::kFrame);  // the chain and length go there
      model::AppendCanonicalDecisionBytes(batch[i], &canonical_);
      digest_.AddFramed(&canonical_);
    }
    if (!batch.empty()) pending_.push_back(std::move(batch));
    batch = std::vector<model::Decision>();
    MatchPending(false);
  }
  if (failed()) return;
  // The scan is over: the reader may go on now.
  MatchPending(true);
  uint64_t seq = 0;
  std::string_view bytes;
  while (!failed() && stream_.Take(true, &seq, &bytes) == RecordedStream::kRecord) {
    ++records_;
    auto recorded = model::DecodeDecisionRecord(bytes);
    if (!recorded.ok()) return Fail();  // the full replay reports it
    passed_over_.push_back(std::move(*recorded));
  }
}

// Equal records have equal stored bytes (the encoding is deterministic and decodes to the same
// record), so a derived decision is encoded as the record it would be stored as (with the
// recorded seq) and compared with the recorded bytes; only a record whose bytes differ is
// decoded. One of another pass is passed over (a window, a pass out of scope): the engine checks
// it against the final selection; any other difference ends the fast verify.
void StreamVerifier::MatchPending(bool wait) {
  while (!pending_.empty() && !failed()) {
    if (pending_pos_ == pending_.front().size()) {  // the whole batch matched
      pending_.pop_front();
      pending_pos_ = 0;
      continue;
    }
    model::Decision& d = pending_.front()[pending_pos_];
    uint64_t seq = 0;
    std::string_view bytes;
    const RecordedStream::Next next = stream_.Take(wait, &seq, &bytes);
    if (next == RecordedStream::kNotYet) return;
    if (next == RecordedStream::kEnd) return Fail();  // a derived decision was not recorded
    ++records_;
    d.seq = seq;
    encoded_.clear();
    model::EncodeDecisionRecord(d, &encoded_);
    d.seq = 0;
    if (encoded_ == bytes) {
      ++pending_pos_;
      continue;
    }
    auto recorded = model::DecodeDecisionRecord(bytes);
    if (!recorded.ok() || recorded->cause.tick_seq == d.cause.tick_seq) return Fail();
    passed_over_.push_back(std::move(*recorded));
  }
}

void Engine::FinishFast() {
  if (!verifier_->Finish()) {
    fast_failed_ = true;
    return;
  }
  for (const model::Decision& d : verifier_->passed_over()) {
    if (Selected(d)) {
      fast_failed_ = true;
      return;
    }
  }
  result_.decisions_scanned = verifier_->recorded_records();
  records_ += verifier_->recorded_records();
  result_.derived_digest = {verifier_->digest().count(), verifier_->digest().Hex()};
  result_.recorded_digest = result_.derived_digest;
}

}  // namespace cronledger::replay::internal
