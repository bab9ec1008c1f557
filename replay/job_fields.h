#pragma once

// The Jobs of a replayed view decoded for the recorded pass only (docs/replay.md "Throughput"):
// the typed fields Decide reads, without the JSON trees (model::Job::raw, spec, metadata.raw,
// status.raw, the conditions' and owner references' raw are null). A recorded pass without call
// objects never encodes a Job, so it decides the same from it; what-if passes and the observers
// (why, state) get the whole object from model::DecodeJob.

#include <string_view>

#include "model/api_call.h"
#include "model/inputs.h"
#include "model/objects.h"
#include "model/result.h"

namespace cronledger::replay {

// Exactly DecodeJob(ParseJson(json)) with StripJobJson applied, errors included: the bytes are
// read with simdjson; anything it does not decide the same way as nlohmann (an error, a \u escape,
// a field of an unexpected type, a duplicate key) is decoded by the nlohmann path instead.
Result<model::Job> DecodeJobFields(std::string_view json);

// The simdjson path alone: false when it leaves the document to the nlohmann path (tests).
bool DecodeJobFieldsFast(std::string_view json, model::Job* job);

// Sets every JSON member of the Job to null.
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

// A recorded API outcome (model::EncodeApiOutcome's JSON) as a recorded pass without call objects
// reads it: DecodeApiOutcome(ParseJson(payload)), errors included, except the object. For a
// created Job (verb "create", kind Job) whose object decodes as a whole (DecodeJobFieldsFast),
// the object holds only apiVersion, kind and metadata's name, namespace, uid and resourceVersion
// (all the pass reads of it); for "updateStatus" and "delete" it is null (the pass reads only
// reason and message). Other verbs, a \u escape, a repeated key, anything simdjson rejects and a
// created Job that does not decode go through the nlohmann path (whole object).
Result<model::ApiOutcome> DecodeOutcomeFields(std::string_view payload, std::string_view verb,
                                              model::ObjectKind kind);
// The simdjson path alone: false when it leaves the payload to the nlohmann path (tests).
bool DecodeOutcomeFieldsFast(std::string_view payload, std::string_view verb,
                             model::ObjectKind kind, model::ApiOutcome* out);

}  // namespace cronledger::replay
