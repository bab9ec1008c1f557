// `cronledger verify-proof --proof FILE --checkpoint FILE`: checks an inclusion proof
// (`cronledger prove`) against a saved checkpoint, without the store (replay/trail.h). Exit 0
// when the decision is in the trail, 1 when the proof does not lead to the checkpoint's tree head.
#include <cstdio>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "app/support_replay.h"
#include "replay/trail.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger verify-proof --proof FILE --checkpoint FILE [-o table|json]\n"
    "Exit 0: the proof's decision is in the trail whose tree head the checkpoint holds; 1: it\n"
    "is not (why is printed); 2: bad flags, or a file that is not a proof or a checkpoint.\n";

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("proof").Value("checkpoint").Value("output", "o");
  Status parsed = flags.Parse(args);
  const std::string output = flags.GetOr("output", "table");
  if (parsed.ok() && (!flags.Has("proof") || !flags.Has("checkpoint"))) {
    parsed = Status::InvalidArgument("--proof and --checkpoint are required");
  } else if (parsed.ok() && output != "table" && output != "json") {
    parsed = Status::InvalidArgument("-o: want table or json, got \"" + output + "\"");
  } else if (parsed.ok() && !flags.positionals().empty()) {
    parsed = Status::InvalidArgument("unexpected argument " + flags.positionals()[0]);
  }
  if (!parsed.ok()) {
    std::fprintf(io.err, "cronledger verify-proof: %s\n%s", parsed.message().c_str(), kUsage);
    return kExitUsage;
  }
  auto proof_text = replay_cli::ReadWholeFile(*flags.Get("proof"));
  auto proof = proof_text.ok() ? replay::trail::ParseProof(*proof_text)
                               : Result<replay::trail::InclusionProof>(proof_text.status());
  auto checkpoint = replay_cli::ReadCheckpointFile(*flags.Get("checkpoint"));
  if (!proof.ok() || !checkpoint.ok()) {
    std::fprintf(io.err, "cronledger verify-proof: %s\n",
                 (!proof.ok() ? proof.status() : checkpoint.status()).message().c_str());
    return kExitUsage;
  }
  const Status verdict = replay::trail::VerifyProof(*proof, *checkpoint);
  const model::Json decision = replay::trail::ProofDecision(*proof);
  if (output == "json") {
    model::Json j = {{"included", verdict.ok()},
                     {"seq", proof->seq},
                     {"leafIndex", proof->leaf_index},
                     {"treeSize", proof->tree_size},
                     {"treeHead", replay::trail::Hex(proof->tree_head)},
                     {"checkpointTakenAt", FormatRfc3339Nano(checkpoint->taken_at)},
                     {"decision", decision},
                     {"reason", verdict.ok() ? "" : verdict.message()}};
    if (proof->copy_of) j["copyOf"] = *proof->copy_of;
    std::fprintf(io.out, "%s\n", j.dump(2).c_str());
  } else if (verdict.ok()) {
    std::fprintf(io.out,
                 "included: decision %llu (%s %s/%s%s%s)%s is leaf %llu of %llu in the trail of "
                 "the checkpoint taken at %s\n",
                 static_cast<unsigned long long>(proof->seq),
                 model::StringOr(decision, "action").c_str(),
                 model::StringOr(model::MemberOr(decision, "cronJob"), "namespace").c_str(),
                 model::StringOr(model::MemberOr(decision, "cronJob"), "name").c_str(),
                 decision.contains("scheduledTime") ? ", scheduled " : "",
                 model::StringOr(decision, "scheduledTime").c_str(),
                 proof->copy_of ? (" of source " + *proof->copy_of).c_str() : "",
                 static_cast<unsigned long long>(proof->leaf_index),
                 static_cast<unsigned long long>(proof->tree_size),
                 FormatRfc3339Nano(checkpoint->taken_at).c_str());
  } else {
    std::fprintf(io.out, "NOT included: %s\n", verdict.message().c_str());
  }
  return verdict.ok() ? kExitOk : kExitFailure;
}

}  // namespace

CL_REGISTER_COMMAND("verify-proof", "check an inclusion proof against a saved checkpoint", Run,
                    kUsage);

}  // namespace cronledger::app
