#pragma once

// Stored objects decoded for a pass (the controller's live passes and replay's): the typed fields
// Decide reads, without the JSON trees (model::Job::raw, spec, metadata.raw, status.raw, the
// conditions' and owner references' raw are null) and without a Job's labels and annotations,
// which a pass never reads (they are checked as DecodeJob checks them). A pass never encodes a Job
// it read from the view (it encodes only the CronJob, for a status write, and a new Job from the
// CronJob's template), so it decides the same from these as from the whole objects; replay's
// what-if passes and observers (why, state) get the whole object from model::DecodeJob. The bytes
// are read with simdjson; anything it does not decide as nlohmann would goes to the nlohmann path,
// so the result, errors included, is always what the nlohmann path gives.

#include <string_view>

#include "model/api_call.h"
#include "model/inputs.h"
#include "model/objects.h"
#include "model/result.h"

namespace cronledger::model {

// Exactly DecodeJob(ParseJson(json)) with StripJobJson applied, errors included: the bytes are
// read with simdjson; anything it does not decide the same way as nlohmann (an error, a \u escape,
// a field of an unexpected type, a duplicate key) is decoded by the nlohmann path instead.
Result<model::Job> DecodeJobFields(std::string_view json);

// The simdjson path alone: false when it leaves the document to the nlohmann path (tests).
bool DecodeJobFieldsFast(std::string_view json, model::Job* job);

// Sets every JSON member of the Job to null and empties its labels and annotations.
void StripJobJson(model::Job* job);

// The same for a CronJob: DecodeCronJob(ParseJson(json)) with StripCronJobJson applied, except
// that status.raw and status.active[i].raw are also null when they hold nothing but the typed
// fields (then EncodeCronJobStatus writes the same bytes). spec.jobTemplate.spec, which the
// created Job embeds, is kept: nlohmann parses just its bytes.
Result<model::CronJob> DecodeCronJobFields(std::string_view json);
bool DecodeCronJobFieldsFast(std::string_view json, model::CronJob* cj);
// Sets the JSON members of the CronJob that a recorded pass without call objects never reads to
// null: all but spec.jobTemplate.spec, status.raw and status.active[i].raw.
void StripCronJobJson(model::CronJob* cj);

// The part of a created Job's API answer a pass reads (DecodeJobMetadata of it, then these four
// fields): {"apiVersion", "kind", "metadata": {"name", "namespace", "uid", "resourceVersion"}}.
// What the controller records of a create's answer (reconciler::RecordedOutcome) and what replay
// reads of a recorded one.
model::Json CreatedJobAsRead(std::string api_version, std::string kind, model::ObjectMeta meta);

// A recorded API outcome (model::EncodeApiOutcome's JSON) as a recorded pass without call objects
// reads it: DecodeApiOutcome(ParseJson(payload)), errors included, except the object. For a
// created Job (verb "create", kind Job) whose object decodes as a whole (DecodeJobFieldsFast),
// the object holds only apiVersion, kind and metadata's name, namespace, uid and resourceVersion
// (all the pass reads of it); for "updateStatus" and "delete" it is null (the pass reads only
// reason and message): reconciler::RecordedOutcome's form, which is what newer ledgers hold. Other
// verbs, a \u escape, a repeated key, anything simdjson rejects and a created Job that does not
// decode go through the nlohmann path (whole object).
Result<model::ApiOutcome> DecodeOutcomeFields(std::string_view payload, std::string_view verb,
                                              model::ObjectKind kind);
// The simdjson path alone: false when it leaves the payload to the nlohmann path (tests).
bool DecodeOutcomeFieldsFast(std::string_view payload, std::string_view verb,
                             model::ObjectKind kind, model::ApiOutcome* out);

}  // namespace cronledger::model
