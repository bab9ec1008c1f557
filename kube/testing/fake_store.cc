#include "kube/testing/fake_store.h"

namespace cronledger::kube::testing {

std::string StoreKey(const std::string& group_resource, const std::string& ns,
                     const std::string& name) {
  return group_resource + "/" + ns + "/" + name;
}

const Json* FakeStore::AtRevision(const std::vector<Revision>& history, int64_t at) const {
  const Json* found = nullptr;
  bool exists = false;
  for (const Revision& r : history) {
    if (at != 0 && r.revision > at) break;
    exists = r.object.has_value();
    found = exists ? &*r.object : nullptr;
  }
  return exists ? found : nullptr;
}

const Json* FakeStore::Get(const std::string& key) const {
  auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : AtRevision(it->second, 0);
}

Result<FakeStore::Page> FakeStore::List(const std::string& prefix, int64_t at,
                                        const std::string& start_after, int64_t limit,
                                        const std::function<bool(const Json&)>& match) const {
  if (at != 0 && at < compacted_) {
    return Status::OutOfRange("revision " + std::to_string(at) + " is compacted");
  }
  Page page;
  auto it = start_after.empty() ? keys_.lower_bound(prefix) : keys_.upper_bound(start_after);
  for (; it != keys_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    const Json* object = AtRevision(it->second, at);
    if (object == nullptr || !match(*object)) continue;
    if (limit > 0 && static_cast<int64_t>(page.items.size()) == limit) {
      page.more = true;
      ++page.remaining;
      continue;
    }
    page.items.push_back(*object);
    page.last_key = it->first;
  }
  return page;
}

int64_t FakeStore::Put(const std::string& key, Json* object) {
  const bool existed = Get(key) != nullptr;
  const int64_t rev = ++revision_;
  (*object)["metadata"]["resourceVersion"] = std::to_string(rev);
  keys_[key].push_back({rev, *object});
  events_.push_back({rev, existed ? "MODIFIED" : "ADDED", key, *object});
  return rev;
}

int64_t FakeStore::Remove(const std::string& key) {
  const Json* live = Get(key);
  Json last = live ? *live : Json::object();
  const int64_t rev = ++revision_;
  last["metadata"]["resourceVersion"] = std::to_string(rev);
  keys_[key].push_back({rev, std::nullopt});
  events_.push_back({rev, "DELETED", key, std::move(last)});
  return rev;
}

Result<std::vector<FakeStore::Event>> FakeStore::EventsAfter(int64_t revision) const {
  if (revision < compacted_) {
    return Status::OutOfRange("revision " + std::to_string(revision) + " is compacted");
  }
  std::vector<Event> out;
  for (auto it = events_.rbegin(); it != events_.rend() && it->revision > revision; ++it) {
    out.push_back(*it);
  }
  return std::vector<Event>(out.rbegin(), out.rend());
}

void FakeStore::CompactTo(int64_t revision) {
  if (revision <= compacted_) return;
  compacted_ = std::min(revision, revision_);
  while (!events_.empty() && events_.front().revision <= compacted_) events_.pop_front();
  for (auto it = keys_.begin(); it != keys_.end();) {
    std::vector<Revision>& history = it->second;
    // Keep the newest revision at or below the compaction point (it is still the state there)
    // and everything after it; drop a key whose only remaining state is a deletion.
    size_t keep_from = 0;
    for (size_t i = 0; i < history.size() && history[i].revision <= compacted_; ++i) keep_from = i;
    history.erase(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(keep_from));
    if (history.size() == 1 && !history[0].object.has_value()) {
      it = keys_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace cronledger::kube::testing
