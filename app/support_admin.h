#pragma once

// The admin socket of a process that holds a ledger for writing (`run`, `ingest`):
// <data-dir>/admin.sock, a Unix domain socket with mode 0600, so only the user that runs the
// process can connect. Maintenance that needs the ledger's write lock (`backup`, `retention`)
// is asked of that process instead of failing on the lock: one JSON request line, one JSON
// answer line, one request per connection, served one at a time.
//
//   {"op":"backup","to":DIR}
//     -> {"ok":true,"lastInputSeq":N,"lastDecisionSeq":N}
//   {"op":"retention","rawMaxAgeNanos":N,"logMaxAgeNanos":N,"dryRun":B}
//     -> {"ok":true,"item":{"rawPruned":N,"inputsPruned":N,"pinned":N,"unchained":N,"dryRun":B}}
//   anything that fails -> {"ok":false,"error":"..."}

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "model/clock.h"
#include "model/json.h"
#include "model/result.h"
#include "model/time.h"
#include "store/ledger.h"

namespace cronledger::app {

std::string AdminSocketPath(const std::string& data_dir);

// Held by whatever brings the ledger's audit trail up to date in this process (retention through
// the admin socket, the checkpoints `run` publishes): two updates of one chain never interleave.
std::mutex& TrailUpdateMutex();

class AdminSocket {
 public:
  using Handler = std::function<model::Json(const model::Json& request)>;

  // Binds `path` and serves on a thread of its own. A socket file nobody listens on (left by a
  // process that was killed) is replaced; one a live process listens on is AlreadyExists.
  static Result<std::unique_ptr<AdminSocket>> Start(const std::string& path, Handler handler);
  // Stops accepting, finishes the request being served, removes the socket file.
  ~AdminSocket();
  AdminSocket(const AdminSocket&) = delete;
  AdminSocket& operator=(const AdminSocket&) = delete;

 private:
  AdminSocket(std::string path, int fd, Handler handler);
  void Serve();
  void Answer(int connection);

  const std::string path_;
  const int fd_;
  const Handler handler_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Sends `request` to the process serving `path` and returns its answer. NotFound when nothing
// listens there (no socket file, or a stale one): the caller opens the ledger itself.
// Unavailable when the process does not answer within `timeout`.
Result<model::Json> CallAdminSocket(const std::string& path, const model::Json& request,
                                    Duration timeout);

// The maintenance both sides run on an open ledger: `run`'s and `ingest`'s socket handler, and
// `backup`/`retention` themselves when they hold the ledger. Answers as above.
model::Json RunLedgerMaintenance(store::Ledger& ledger, const model::Json& request, Time now);

// The socket of a command that holds `ledger` at `data_dir`, answering with
// RunLedgerMaintenance at `clock`'s time. Null when it cannot start (a warning in the log says
// why; backup and retention then need the command stopped). `ledger` and `clock` must outlive it.
std::unique_ptr<AdminSocket> StartAdminSocket(const std::string& command,
                                              const std::string& data_dir, store::Ledger& ledger,
                                              const WallClock& clock);

}  // namespace cronledger::app
