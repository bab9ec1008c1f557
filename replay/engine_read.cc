// The input scan of a verify-only replay read ahead on its own thread (InputReadAhead).

#include "replay/engine_internal.h"

namespace cronledger::replay::internal {
namespace {

// *to = from without the bytes the scanning thread does not read: a watch event's raw bytes when
// its object is decoded, an intent's payload. Fields are assigned one by one, so the slot's
// strings keep their capacity.
void CopyRecord(const store::LogRecord& from, bool without_raw, store::LogRecord* to) {
  to->seq = from.seq;
  to->recorded_at = from.recorded_at;
  to->raw_pruned = from.raw_pruned;
  if (const auto* ev = std::get_if<model::WatchEvent>(&from.input)) {
    auto* t = std::get_if<model::WatchEvent>(&to->input);
    if (t == nullptr) t = &to->input.emplace<model::WatchEvent>();
    t->type = ev->type;
    t->kind = ev->kind;
    t->api_version = ev->api_version;
    t->namespace_ = ev->namespace_;
    t->name = ev->name;
    t->uid = ev->uid;
    t->resource_version = ev->resource_version;
    t->owner_name = ev->owner_name;
    t->owner_uid = ev->owner_uid;
    if (without_raw) {
      t->raw.clear();
    } else {
      t->raw = ev->raw;
    }
  } else if (const auto* i = std::get_if<model::ActionIntent>(&from.input)) {
    auto* t = std::get_if<model::ActionIntent>(&to->input);
    if (t == nullptr) t = &to->input.emplace<model::ActionIntent>();
    t->time = i->time;
    t->tick_seq = i->tick_seq;
    t->call_index = i->call_index;
    t->verb = i->verb;
    t->kind = i->kind;
    t->namespace_ = i->namespace_;
    t->name = i->name;
    t->payload.clear();  // the engine reads the call from the other fields
  } else {
    to->input = from.input;
  }
}

}  // namespace

void InputReadAhead::Fill(const store::LogRecord& rec, ReadItem* item) const {
  item->object = history_.Decode(rec);
  CopyRecord(rec, item->object.decoded, &item->rec);
}

void InputReadAhead::Read() {
  std::unique_ptr<Batch> b;
  auto publish = [&] {
    std::unique_lock<std::mutex> l(mu_);
    full_.push_back(std::move(b));
    full_cv_.notify_one();
    free_cv_.wait(l, [&] { return !free_.empty() || stopped_; });
    if (stopped_) return false;
    b = std::move(free_.front());
    free_.pop_front();
    b->size = 0;
    return true;
  };
  {
    std::lock_guard<std::mutex> l(mu_);
    b = std::move(free_.front());
    free_.pop_front();
  }
  const Status s = source_.ScanInputs([&](const store::LogRecord& rec) {
    Fill(rec, &b->items[b->size++]);
    return b->size < kBatch || publish();
  });
  std::lock_guard<std::mutex> l(mu_);
  if (b != nullptr && b->size > 0) full_.push_back(std::move(b));
  status_ = s;
  done_ = true;
  full_cv_.notify_one();
}

Status InputReadAhead::Scan(const std::function<bool(ReadItem&)>& fn) {
  for (size_t i = 0; i < kBatches; ++i) {
    auto b = std::make_unique<Batch>();
    b->items.resize(kBatch);
    free_.push_back(std::move(b));
  }
  reader_ = std::thread([this] { Read(); });
  for (;;) {
    std::unique_ptr<Batch> b;
    {
      std::unique_lock<std::mutex> l(mu_);
      full_cv_.wait(l, [&] { return !full_.empty() || done_; });
      if (full_.empty()) break;  // done: every batch consumed
      b = std::move(full_.front());
      full_.pop_front();
    }
    bool go = true;
    for (size_t i = 0; i < b->size && go; ++i) go = fn(b->items[i]);
    std::lock_guard<std::mutex> l(mu_);
    free_.push_back(std::move(b));
    stopped_ = !go;
    free_cv_.notify_one();
    if (stopped_) break;
  }
  reader_.join();
  return status_;
}

InputReadAhead::~InputReadAhead() {
  if (reader_.joinable()) {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopped_ = true;
      free_cv_.notify_one();
    }
    reader_.join();
  }
}

}  // namespace cronledger::replay::internal
