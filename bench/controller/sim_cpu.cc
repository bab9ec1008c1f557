#include "bench/controller/sim_cpu.h"

#include <ctime>

#include "bench/cpu_time.h"

namespace cronledger::bench {
namespace {

int64_t Nanos(double seconds) { return static_cast<int64_t>(seconds * 1e9); }

}  // namespace

model::ApiOutcome SimCpu::TimedActuator::Perform(const model::ApiCall& call) {
  const double start = ThreadCpuSeconds();
  model::ApiOutcome out = inner_.Perform(call);
  cpu_.Add(Nanos(ThreadCpuSeconds() - start));
  return out;
}

void SimCpu::TimedActuator::RecordEvent(const model::CronJobRef& cron_job,
                                        const reconciler::Event& event) {
  const double start = ThreadCpuSeconds();
  inner_.RecordEvent(cron_job, event);
  cpu_.Add(Nanos(ThreadCpuSeconds() - start));
}

void SimCpu::IngestStarted() {
  if (!has_pump_.load(std::memory_order_acquire)) {
    pump_ = pthread_self();
    has_pump_.store(true, std::memory_order_release);
  }
  ingest_started_ = ThreadCpuSeconds();
}

void SimCpu::IngestFinished() {
  in_ingest_.fetch_add(Nanos(ThreadCpuSeconds() - ingest_started_), std::memory_order_relaxed);
}

double SimCpu::Seconds() const {
  int64_t pump_other = 0;
  if (has_pump_.load(std::memory_order_acquire)) {
    clockid_t clock{};
    timespec t{};
    if (pthread_getcpuclockid(pump_, &clock) == 0 && ::clock_gettime(clock, &t) == 0) {
      pump_other = static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec -
                   in_ingest_.load(std::memory_order_relaxed);
    }
  }
  return static_cast<double>(in_calls_.load(std::memory_order_relaxed) + pump_other) / 1e9;
}

}  // namespace cronledger::bench
