#include "store/cronjob_index.h"

#include <algorithm>
#include <cstdint>
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

// Reads CBOR as the decision record stores a Json member (model::AppendCbor, which writes what
// nlohmann's to_cbor writes): definite lengths, text-string map keys. Fails on anything else.
class CborReader {
 public:
  explicit CborReader(std::string_view in) : p_(in.data()), end_(in.data() + in.size()) {}
  const char* pos() const { return p_; }
  // The initial byte's major type and its argument.
  bool Head(uint8_t* major, uint64_t* arg) {
    if (p_ == end_) return false;
    const auto b = static_cast<uint8_t>(*p_++);
    *major = b >> 5;
    const uint8_t info = b & 0x1f;
    if (info < 24) {
      *arg = info;
      return true;
    }
    if (info > 27) return false;  // indefinite lengths and reserved values
    const size_t n = size_t{1} << (info - 24);
    if (static_cast<size_t>(end_ - p_) < n) return false;
    *arg = 0;
    for (size_t i = 0; i < n; ++i) *arg = *arg << 8 | static_cast<uint8_t>(*p_++);
    return true;
  }
  bool Text(std::string_view* s) {
    uint8_t major = 0;
    uint64_t n = 0;
    if (!Head(&major, &n) || major != 3 || n > static_cast<uint64_t>(end_ - p_)) return false;
    *s = std::string_view(p_, n);
    p_ += n;
    return true;
  }
  // Skips one item; `depth` bounds the nesting.
  bool Skip(int depth = 0) {
    uint8_t major = 0;
    uint64_t arg = 0;
    if (depth > 512 || !Head(&major, &arg)) return false;
    switch (major) {
      case 0:
      case 1:
      case 7:  // integers; simple values and floats (their bytes were the argument)
        return true;
      case 2:
      case 3:
        if (arg > static_cast<uint64_t>(end_ - p_)) return false;
        p_ += arg;
        return true;
      case 4:
        for (uint64_t i = 0; i < arg; ++i) {
          if (!Skip(depth + 1)) return false;
        }
        return true;
      case 5:
        for (uint64_t i = 0; i < arg; ++i) {
          if (!Skip(depth + 1) || !Skip(depth + 1)) return false;
        }
        return true;
      default:  // tags: not written by the encoder
        return false;
    }
  }
  bool done() const { return p_ == end_; }

 private:
  const char* p_;
  const char* end_;
};

// Where a slot's string is in the CBOR: its item's [begin, end) (head included) and its text.
struct SlotAt {
  size_t begin = 0, end = 0;
  std::string_view text;
};
using CborSlotRanges = std::array<std::optional<SlotAt>, kSlotCount>;

// The string at the reader, as the slot's value; any other item is skipped (not a slot).
bool StringValue(CborReader& r, const char* base, std::optional<SlotAt>* slot) {
  const char* begin = r.pos();
  CborReader probe = r;
  std::string_view text;
  if (probe.Text(&text)) {
    *slot =
        SlotAt{static_cast<size_t>(begin - base), static_cast<size_t>(probe.pos() - base), text};
    r = probe;
    return true;
  }
  return r.Skip();
}

// Calls value(key) for each entry of the map at the reader, with the reader at the entry's value
// (which the call must read or skip). An item that is not a map is skipped. False when the CBOR is
// not as expected or a call fails.
template <typename F>
bool ForEachMapEntry(CborReader& r, F&& value) {
  CborReader probe = r;
  uint8_t major = 0;
  uint64_t n = 0;
  if (!probe.Head(&major, &n)) return false;
  if (major != 5) return r.Skip();
  r = probe;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view key;
    if (!r.Text(&key) || !value(key)) return false;
  }
  return true;
}

// FindSlots on a Job object's stored CBOR: the slots' items in the bytes.
bool FindCborSlots(std::string_view cbor, CborSlotRanges* slots) {
  *slots = {};
  const char* base = cbor.data();
  CborReader r(cbor);
  auto annotations = [&](std::string_view key) {
    if (key != kScheduledTimestampAnnotation) return r.Skip();
    return StringValue(r, base, &(*slots)[kSlotScheduledAnnotation]);
  };
  auto metadata = [&](std::string_view key) {
    if (key == "name") return StringValue(r, base, &(*slots)[kSlotName]);
    if (key == "creationTimestamp") return StringValue(r, base, &(*slots)[kSlotCreationTimestamp]);
    if (key == "annotations") return ForEachMapEntry(r, annotations);
    return r.Skip();
  };
  auto job = [&](std::string_view key) {
    return key == "metadata" ? ForEachMapEntry(r, metadata) : r.Skip();
  };
  return ForEachMapEntry(r, job) && r.done();
}

}  // namespace

bool TemplateOfCbor(std::string_view job_cbor, std::string* template_cbor, CborSlots* slots) {
  CborSlotRanges at;
  if (!FindCborSlots(job_cbor, &at)) return false;
  template_cbor->clear();
  size_t copied = 0;
  // The slots in byte order (at most three); each becomes an empty text string (0x60).
  std::array<size_t, kSlotCount> order{0, 1, 2};
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const size_t x = at[a] ? at[a]->begin : SIZE_MAX, y = at[b] ? at[b]->begin : SIZE_MAX;
    return x < y;
  });
  for (const size_t i : order) {
    (*slots)[i].reset();
    if (!at[i]) continue;
    template_cbor->append(job_cbor.substr(copied, at[i]->begin - copied));
    template_cbor->push_back(static_cast<char>(0x60));
    copied = at[i]->end;
    (*slots)[i] = at[i]->text;
  }
  template_cbor->append(job_cbor.substr(copied));
  return true;
}

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

Status JobTemplateWriter::EncodeStored(const model::Decision& d,
                                       const model::DecisionMembers& members, uint64_t unit,
                                       TemplateStore& store, std::string* out) {
  const bool has_job = !members.job_object_cbor.empty();
  const bool has_status = !members.status_cbor.empty();
  record_.clear();
  model::EncodeDecisionRecord(d, &record_);
  out->clear();
  model::RecordWriter w(out);
  w.Byte(kV2);
  w.Byte(static_cast<uint8_t>((has_job ? kHasJobObject : 0) | (has_status ? kHasStatus : 0)));
  w.Bytes(record_);
  if (has_job) {
    CborSlots slots;
    std::optional<uint64_t> id;
    if (TemplateOfCbor(members.job_object_cbor, &template_cbor_, &slots)) {
      CL_ASSIGN_OR_RETURN(id, Choose(d.cron_job, unit, store));
    }
    if (id) {
      w.Byte(kJobTemplate);
      keys::PutBe64(out, *id);
      for (size_t i = 0; i < kSlotCount; ++i) {
        if (!slots[i]) {
          w.Byte(kSlotKept);
          continue;
        }
        const std::string_view value = *slots[i];
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
      w.Byte(kJobInline);
      w.Bytes(members.job_object_cbor);
      ++stats_.inline_;
    }
  }
  if (has_status) w.Bytes(members.status_cbor);
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
