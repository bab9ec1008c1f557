#pragma once

// The fold of one watch event into the view, written once: what an event does to its resource's
// resourceVersion entry, to its object's entry and to the owner index. It runs over three
// storages: any ViewStore (FoldWatchEvent: the commit's overlay over RocksDB, MemViewStore),
// FlatViewStore's own table (FlatViewStore::Fold: rebuild, replay) and the controller's decoded
// view (controller/typed_view.h), each through an accessor that knows how to find, write and erase
// there. The accessor supplies:
//
//   void PutResourceVersion(const model::WatchEventRef& ev, uint64_t seq);
//   Result<bool> FindObject(const model::WatchEventRef& ev);  // true when the view holds it
//   // Of the object found: its uid and controller owner's name, viewing the stored entry (valid
//   // until the entry is written or erased); false when the entry is malformed.
//   bool PriorUidAndOwner(std::string_view* uid, std::string_view* owner);
//   void WriteObject(const view_entry::EntryView& entry, std::string_view encoded_fields);
//   void EraseObject();
//   void PutIndex(std::string_view key);  // an owner index entry (empty value)
//   void DeleteIndex(std::string_view key);
//   std::string& IndexKey();              // a scratch buffer for index keys

#include <string>
#include <string_view>

#include "model/inputs.h"
#include "model/result.h"
#include "store/view.h"
#include "store/view_entry.h"

namespace cronledger::store::view_fold {

// Folds `ev` (seq `seq`) through `a`: ADDED/MODIFIED upsert the object (and re-point the owner
// index when a Job's controller owner changes), DELETED removes it when the uid matches (or the
// event has none), BOOKMARK only advances the resourceVersion. With `effect`, says what it did to
// the object's entry (reset first).
template <class Access>
Status Fold(const model::WatchEventRef& ev, uint64_t seq, Access& a,
            FlatViewStore::FoldEffect* effect = nullptr) {
  using model::WatchEventType;
  if (effect != nullptr) {
    effect->changed = false;
    effect->written = false;
    effect->left_owner.clear();
  }
  if (!ev.resource_version.empty()) a.PutResourceVersion(ev, seq);
  if (ev.type == WatchEventType::kBookmark) return Status::Ok();

  CL_ASSIGN_OR_RETURN(const bool has_prior, a.FindObject(ev));
  std::string_view prior_uid, prior_owner;
  if (has_prior && !a.PriorUidAndOwner(&prior_uid, &prior_owner)) {
    return Status::Corruption("view: malformed object entry");
  }
  const bool is_job = ev.kind == model::ObjectKind::kJob;
  std::string& index_key = a.IndexKey();
  if (ev.type == WatchEventType::kDeleted) {
    // A DELETED for another incarnation (a different uid under the same name) leaves the stored
    // object alone: it is the newer one.
    if (!has_prior || (!ev.uid.empty() && prior_uid != ev.uid)) return Status::Ok();
    const bool unindex = is_job && !prior_owner.empty();
    // Everything that views the entry is taken before it is erased.
    if (unindex) view_entry::OwnerIndexTo(ev.namespace_, prior_owner, ev.name, &index_key);
    if (effect != nullptr) {
      effect->changed = true;
      if (unindex) effect->left_owner.assign(prior_owner);
    }
    a.EraseObject();
    if (unindex) a.DeleteIndex(index_key);
    return Status::Ok();
  }
  const std::string_view owner_name = is_job ? ev.owner_name : "";
  const bool owner_changed = !has_prior || prior_owner != owner_name;
  const bool unindex = is_job && has_prior && !prior_owner.empty() && owner_changed;
  if (unindex) view_entry::OwnerIndexTo(ev.namespace_, prior_owner, ev.name, &index_key);
  if (effect != nullptr) {
    effect->changed = true;
    effect->written = true;
    if (unindex) effect->left_owner.assign(prior_owner);
  }
  a.WriteObject({ev.kind, ev.api_version, ev.namespace_, ev.name, ev.uid, ev.resource_version,
                 owner_name, is_job ? ev.owner_uid : "", seq},
                ev.encoded_fields);
  if (unindex) a.DeleteIndex(index_key);
  if (is_job && !owner_name.empty() && owner_changed) {
    view_entry::OwnerIndexTo(ev.namespace_, owner_name, ev.name, &index_key);
    a.PutIndex(index_key);
  }
  return Status::Ok();
}

// The size of an object's entry and its writer: from the decoded record's encoded fields when they
// are the entry's strings as the entry encodes them (one copy of them all), else field by field.
inline size_t ObjectEntrySize(const view_entry::EntryView& e, std::string_view encoded,
                              bool* whole) {
  *whole = view_entry::IsEncodingOf(encoded, e);
  return *whole ? view_entry::EntrySizeFrom(encoded, e.source_seq) : view_entry::EntrySize(e);
}
inline void WriteObjectEntry(const view_entry::EntryView& e, std::string_view encoded, bool whole,
                             char* p) {
  if (whole) {
    view_entry::WriteEntryFrom(e.kind, encoded, e.source_seq, p);
  } else {
    view_entry::WriteEntry(e, p);
  }
}

}  // namespace cronledger::store::view_fold
