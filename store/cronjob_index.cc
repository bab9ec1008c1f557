#include "store/cronjob_index.h"

#include <optional>
#include <utility>

#include "model/inputs.h"
#include "store/keys.h"

namespace cronledger::store::cronjob_index {
namespace {

constexpr int64_t kMaxOffsetSeconds = 24 * 3600;

Status Malformed(std::string_view what) {
  return Status::Corruption("audit CronJob index value: " + std::string(what));
}

// The Json members are moved out of a decision for the life of this object and moved back.
class MembersMovedOut {
 public:
  explicit MembersMovedOut(model::Decision& d)
      : d_(d), job_object_(std::move(d.job_object)), status_(std::move(d.status)) {
    d_.job_object = nullptr;
    d_.status = nullptr;
  }
  ~MembersMovedOut() {
    d_.job_object = std::move(job_object_);
    d_.status = std::move(status_);
  }
  MembersMovedOut(const MembersMovedOut&) = delete;
  MembersMovedOut& operator=(const MembersMovedOut&) = delete;
  model::Json& job_object() { return job_object_; }
  model::Json& status() { return status_; }

 private:
  model::Decision& d_;
  model::Json job_object_;
  model::Json status_;
};

// By std::string: nlohmann's find(const char*) would build a key string each call.
std::string* StringMember(model::Json& obj, const std::string& key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return nullptr;
  return &it->get_ref<std::string&>();
}

// The UTC offset of an RFC 3339 time as FormatRfc3339(t, offset) writes it ("Z" or "+hh:mm").
std::optional<int> OffsetOf(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text.back() == 'Z') return 0;
  if (text.size() < 6) return std::nullopt;
  const std::string_view o = text.substr(text.size() - 6);
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if ((o[0] != '+' && o[0] != '-') || !digit(o[1]) || !digit(o[2]) || o[3] != ':' || !digit(o[4]) ||
      !digit(o[5])) {
    return std::nullopt;
  }
  const int seconds =
      ((o[1] - '0') * 10 + (o[2] - '0')) * 3600 + ((o[4] - '0') * 10 + (o[5] - '0')) * 60;
  if (seconds > kMaxOffsetSeconds) return std::nullopt;  // what a value may hold (DecodeIndexValue)
  return o[0] == '-' ? -seconds : seconds;
}

// The slot's value as derived from the decision record; nullopt when the record lacks its input.
std::optional<std::string> Derive(JobSlot slot, const model::Decision& d, int offset) {
  switch (slot) {
    case kSlotName:
      return d.job_name;
    case kSlotCreationTimestamp:
      if (!d.scheduled_time) return std::nullopt;
      return FormatRfc3339(*d.scheduled_time);
    case kSlotScheduledAnnotation:
      if (!d.scheduled_time) return std::nullopt;
      return FormatRfc3339(*d.scheduled_time, offset);
    case kSlotCount:
      break;
  }
  return std::nullopt;
}

}  // namespace

std::array<std::string*, kSlotCount> FindSlots(model::Json& job) {
  static const std::string kMetadata = "metadata", kName = "name",
                           kCreationTimestamp = "creationTimestamp", kAnnotations = "annotations",
                           kAnnotation(kScheduledTimestampAnnotation);
  std::array<std::string*, kSlotCount> slots{};
  if (!job.is_object()) return slots;
  auto meta = job.find(kMetadata);
  if (meta == job.end() || !meta->is_object()) return slots;
  slots[kSlotName] = StringMember(*meta, kName);
  slots[kSlotCreationTimestamp] = StringMember(*meta, kCreationTimestamp);
  auto annotations = meta->find(kAnnotations);
  if (annotations != meta->end() && annotations->is_object()) {
    slots[kSlotScheduledAnnotation] = StringMember(*annotations, kAnnotation);
  }
  return slots;
}

void AppendJobTemplate(model::Json& job, std::string* cbor) {
  const auto slots = FindSlots(job);
  std::array<std::string, kSlotCount> saved;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] != nullptr) slots[i]->swap(saved[i]);  // the slot is now ""
  }
  model::Json::to_cbor(job, *cbor);
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i] != nullptr) slots[i]->swap(saved[i]);
  }
}

uint64_t TemplateId(std::string_view template_cbor) {
  uint64_t h = 14695981039346656037ULL;  // FNV-1a 64
  for (char c : template_cbor) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string TemplateValue(std::string_view template_cbor) {
  std::string v(1, static_cast<char>(kTemplateV1));
  v.append(template_cbor);
  return v;
}

Result<model::Json> DecodeTemplateValue(std::string_view value) {
  if (value.empty() || static_cast<uint8_t>(value[0]) != kTemplateV1) {
    return Status::Corruption("audit Job template: unknown version");
  }
  return DecodeCbor(value.substr(1), "audit Job template");
}

Result<model::Json> DecodeCbor(std::string_view cbor, std::string_view what) {
  model::Json j = model::Json::from_cbor(cbor.begin(), cbor.end(), /*strict=*/true,
                                         /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Corruption(std::string(what) + ": malformed CBOR");
  return j;
}

Result<IndexValue> DecodeIndexValue(std::string_view bytes, model::Decision* d, bool members) {
  IndexValue v;
  if (bytes.empty()) return v;
  const uint8_t version = static_cast<uint8_t>(bytes[0]);
  if (version == kV1) {
    if (bytes.size() < 2) return Malformed("truncated");
    v.omitted = static_cast<uint8_t>(bytes[1]);
    CL_ASSIGN_OR_RETURN(*d, model::DecodeDecisionRecord(bytes.substr(2)));
  } else if (version == kV2) {
    model::RecordReader r(bytes.substr(1));
    uint8_t has = 0;
    std::string_view record;
    if (!r.Byte(&has) || !r.Bytes(&record)) return Malformed("truncated");
    if ((has & ~(kHasJobObject | kHasStatus)) != 0) return Malformed("unknown member bits");
    CL_ASSIGN_OR_RETURN(*d, model::DecodeDecisionRecord(record));
    v.has_job_object = (has & kHasJobObject) != 0;
    v.has_status = (has & kHasStatus) != 0;
    if (members) {
      if (v.has_job_object) {
        JobObjectRef& job = v.job_object;
        if (!r.Byte(&job.form)) return Malformed("truncated Job object");
        if (job.form == kJobInline) {
          if (!r.Bytes(&job.cbor)) return Malformed("truncated Job object");
        } else if (job.form == kJobTemplate) {
          for (int i = 0; i < 8; ++i) {
            uint8_t b = 0;
            if (!r.Byte(&b)) return Malformed("truncated template id");
            job.template_id = job.template_id << 8 | b;
          }
          for (size_t i = 0; i < kSlotCount; ++i) {
            JobObjectRef::Slot& slot = job.slots[i];
            if (!r.Byte(&slot.tag)) return Malformed("truncated slot");
            if (slot.tag == kSlotLiteral) {
              if (!r.Bytes(&slot.literal)) return Malformed("truncated slot");
            } else if (slot.tag == kSlotDerived && i == kSlotScheduledAnnotation) {
              if (!r.Signed(&slot.offset) || slot.offset < -kMaxOffsetSeconds ||
                  slot.offset > kMaxOffsetSeconds) {
                return Malformed("bad offset");
              }
            } else if (slot.tag != kSlotKept && slot.tag != kSlotDerived) {
              return Malformed("unknown slot tag");
            }
          }
        } else {
          return Malformed("unknown Job object form");
        }
      }
      if (v.has_status && !r.Bytes(&v.status_cbor)) return Malformed("truncated status");
      if (!r.done()) return Malformed("trailing bytes");
    }
  } else {
    return v;  // v0 semantics: a later layout is read from the decision log
  }
  if (!d->job_object.is_null() || !d->status.is_null()) return Malformed("holds a Json member");
  v.version = version;
  return v;
}

Status RestoreJobObject(const JobObjectRef& ref, const model::Json& tmpl, const model::Decision& d,
                        model::Json* out) {
  *out = tmpl;
  const auto slots = FindSlots(*out);
  for (size_t i = 0; i < kSlotCount; ++i) {
    const JobObjectRef::Slot& slot = ref.slots[i];
    if (slot.tag == kSlotKept) {
      if (slots[i] != nullptr) return Malformed("template holds a slot the value keeps");
      continue;
    }
    if (slots[i] == nullptr) return Malformed("template lacks a slot the value sets");
    if (slot.tag == kSlotLiteral) {
      slots[i]->assign(slot.literal);
      continue;
    }
    std::optional<std::string> derived =
        Derive(static_cast<JobSlot>(i), d, static_cast<int>(slot.offset));
    if (!derived) return Malformed("a derived slot without its input in the record");
    *slots[i] = std::move(*derived);
  }
  return Status::Ok();
}

void EncodeV1(model::Decision& d, std::string* out) {
  out->clear();
  out->push_back(static_cast<char>(kV1));
  uint8_t omitted = 0;
  if (!d.job_object.is_null()) omitted |= kOmittedJobObject;
  if (!d.status.is_null()) omitted |= kOmittedStatus;
  out->push_back(static_cast<char>(omitted));
  MembersMovedOut moved(d);
  model::EncodeDecisionRecord(d, out);
}

Status JobTemplateWriter::Encode(model::Decision& d, uint64_t unit, TemplateStore& store,
                                 std::string* out) {
  MembersMovedOut moved(d);
  model::Json& job = moved.job_object();
  model::Json& status = moved.status();
  record_.clear();
  model::EncodeDecisionRecord(d, &record_);
  out->clear();
  model::RecordWriter w(out);
  w.Byte(kV2);
  w.Byte(static_cast<uint8_t>((job.is_null() ? 0 : kHasJobObject) |
                              (status.is_null() ? 0 : kHasStatus)));
  w.Bytes(record_);
  if (!job.is_null()) {
    template_cbor_.clear();
    AppendJobTemplate(job, &template_cbor_);
    CL_ASSIGN_OR_RETURN(const std::optional<uint64_t> id, Choose(d.cron_job, unit, store));
    if (id) {
      w.Byte(kJobTemplate);
      keys::PutBe64(out, *id);
      const auto slots = FindSlots(job);
      for (size_t i = 0; i < kSlotCount; ++i) {
        if (slots[i] == nullptr) {
          w.Byte(kSlotKept);
          continue;
        }
        const std::string& value = *slots[i];
        int offset = 0;
        if (i == kSlotScheduledAnnotation) offset = OffsetOf(value).value_or(0);  // checked below
        const std::optional<std::string> derived = Derive(static_cast<JobSlot>(i), d, offset);
        if (derived && *derived == value) {
          w.Byte(kSlotDerived);
          if (i == kSlotScheduledAnnotation) w.Signed(offset);
        } else {
          w.Byte(kSlotLiteral);
          w.Bytes(value);
        }
      }
      ++stats_.templated;
    } else {
      cbor_.clear();
      model::Json::to_cbor(job, cbor_);
      w.Byte(kJobInline);
      w.Bytes(cbor_);
      ++stats_.inline_;
    }
  }
  if (!status.is_null()) {
    cbor_.clear();
    model::Json::to_cbor(status, cbor_);
    w.Bytes(cbor_);
  }
  return Status::Ok();
}

Result<std::optional<uint64_t>> JobTemplateWriter::Choose(const model::CronJobRef& cj,
                                                          uint64_t unit, TemplateStore& store) {
  key_.assign(cj.namespace_).push_back('\0');
  key_.append(cj.name);
  auto it = by_cron_job_.find(key_);
  if (it == by_cron_job_.end() || it->second.template_cbor != template_cbor_) {
    // Another template than the last one of this CronJob (or the first): not known to be stored.
    if (it != by_cron_job_.end()) bytes_ -= it->second.template_cbor.size();
    if (bytes_ + key_.size() + template_cbor_.size() > kMaxBytes) {
      by_cron_job_.clear();
      bytes_ = 0;
      it = by_cron_job_.end();
    }
    if (it == by_cron_job_.end()) {
      it = by_cron_job_.emplace(key_, Entry()).first;
      bytes_ += key_.size();
    }
    Entry& e = it->second;
    e.template_cbor = template_cbor_;
    bytes_ += template_cbor_.size();
    e.id = TemplateId(template_cbor_);
    e.state = State::kUnknown;
  }
  Entry& e = it->second;
  switch (e.state) {
    case State::kStored:
      return std::optional<uint64_t>(e.id);
    case State::kUnusable:
      return std::optional<uint64_t>();
    case State::kPending:
      if (e.unit == unit) return std::optional<uint64_t>(e.id);  // Put in this very batch
      break;
    case State::kUnknown:
      break;
  }
  CL_RETURN_IF_ERROR(EnsureStored(cj, &e, unit, store));
  if (e.state == State::kUnusable) return std::optional<uint64_t>();
  return std::optional<uint64_t>(e.id);
}

Status JobTemplateWriter::EnsureStored(const model::CronJobRef& cj, Entry* e, uint64_t unit,
                                       TemplateStore& store) {
  const std::string key = keys::JobTemplateKey(cj.namespace_, cj.name, e->id);
  value_ = TemplateValue(e->template_cbor);
  ++stats_.template_gets;
  CL_ASSIGN_OR_RETURN(const std::optional<std::string> stored, store.Get(key));
  if (stored) {
    // Stored by an earlier unit; other bytes under this id (a hash collision) are never replaced.
    e->state = *stored == value_ ? State::kStored : State::kUnusable;
    return Status::Ok();
  }
  CL_RETURN_IF_ERROR(store.Put(key, value_));
  ++stats_.templates_put;
  e->state = State::kPending;
  e->unit = unit;
  return Status::Ok();
}

}  // namespace cronledger::store::cronjob_index
