#include "controller/decoded_cache.h"

namespace cronledger::controller {

std::string DecodedCache::KeyOf(model::ObjectKind kind, std::string_view ns,
                                std::string_view name) {
  std::string key;
  key.reserve(ns.size() + name.size() + 2);
  key.push_back(kind == model::ObjectKind::kJob ? 'j' : 'c');
  key.append(ns);
  key.push_back('/');
  key.append(name);
  return key;
}

std::string DecodedCache::AccountingKeyOf(std::string_view key) {
  std::string out = "s";
  out.append(key);
  return out;
}

std::shared_ptr<const CachedAccounting> DecodedCache::GetAccounting(std::string_view key,
                                                                    std::string_view blob) {
  // Entries of accounting states carry seq 1: their bytes, not a seq, say what they hold.
  auto held = std::static_pointer_cast<const CachedAccounting>(Get(AccountingKeyOf(key), 1));
  if (held == nullptr || held->blob != blob) return nullptr;
  return held;
}

void DecodedCache::PutAccounting(std::string_view key,
                                 std::shared_ptr<const CachedAccounting> accounting) {
  Put(AccountingKeyOf(key), 1, std::move(accounting));
}

std::shared_ptr<const void> DecodedCache::Get(const std::string& key, uint64_t source_seq) {
  if (!enabled()) return nullptr;
  std::lock_guard<std::mutex> l(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.source_seq != source_seq || source_seq == 0) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.object;
}

void DecodedCache::Put(std::string key, uint64_t source_seq, std::shared_ptr<const void> object) {
  if (!enabled() || source_seq == 0) return;
  std::lock_guard<std::mutex> l(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    it->second.source_seq = source_seq;
    it->second.object = std::move(object);
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return;
  }
  while (entries_.size() >= max_objects_ && !lru_.empty()) {
    entries_.erase(lru_.back());
    lru_.pop_back();
    ++stats_.evictions;
  }
  lru_.push_front(key);
  entries_.emplace(std::move(key), Entry{source_seq, std::move(object), lru_.begin()});
}

std::shared_ptr<const model::CronJob> DecodedCache::GetCronJob(std::string_view ns,
                                                               std::string_view name,
                                                               uint64_t source_seq) {
  return std::static_pointer_cast<const model::CronJob>(
      Get(KeyOf(model::ObjectKind::kCronJob, ns, name), source_seq));
}

std::shared_ptr<const model::Job> DecodedCache::GetJob(std::string_view ns, std::string_view name,
                                                       uint64_t source_seq) {
  return std::static_pointer_cast<const model::Job>(
      Get(KeyOf(model::ObjectKind::kJob, ns, name), source_seq));
}

void DecodedCache::PutCronJob(std::string_view ns, std::string_view name, uint64_t source_seq,
                              std::shared_ptr<const model::CronJob> object) {
  Put(KeyOf(model::ObjectKind::kCronJob, ns, name), source_seq, std::move(object));
}

void DecodedCache::PutJob(std::string_view ns, std::string_view name, uint64_t source_seq,
                          std::shared_ptr<const model::Job> object) {
  Put(KeyOf(model::ObjectKind::kJob, ns, name), source_seq, std::move(object));
}

void DecodedCache::Forget(model::ObjectKind kind, std::string_view ns, std::string_view name) {
  if (!enabled()) return;
  std::lock_guard<std::mutex> l(mu_);
  auto drop = [this](const std::string& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    lru_.erase(it->second.lru);
    entries_.erase(it);
  };
  drop(KeyOf(kind, ns, name));
  if (kind == model::ObjectKind::kCronJob) {
    std::string key(ns);
    key.push_back('/');
    key.append(name);
    drop(AccountingKeyOf(key));
  }
}

DecodedCacheStats DecodedCache::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  DecodedCacheStats s = stats_;
  s.objects = entries_.size();
  return s;
}

}  // namespace cronledger::controller
