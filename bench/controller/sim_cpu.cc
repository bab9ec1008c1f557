#include "bench/controller/sim_cpu.h"

#include <ctime>

namespace cronledger::bench {

int64_t SimCpu::ThreadNanos() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

model::ApiOutcome SimCpu::TimedActuator::Perform(const model::ApiCall& call) {
  const int64_t start = ThreadNanos();
  model::ApiOutcome out = inner_.Perform(call);
  cpu_.Add(ThreadNanos() - start);
  return out;
}

void SimCpu::TimedActuator::RecordEvent(const model::CronJobRef& cron_job,
                                        const reconciler::Event& event) {
  const int64_t start = ThreadNanos();
  inner_.RecordEvent(cron_job, event);
  cpu_.Add(ThreadNanos() - start);
}

void SimCpu::IngestStarted() {
  if (!has_pump_.load(std::memory_order_acquire)) {
    pump_ = pthread_self();
    has_pump_.store(true, std::memory_order_release);
  }
  ingest_started_ = ThreadNanos();
}

void SimCpu::IngestFinished() {
  in_ingest_.fetch_add(ThreadNanos() - ingest_started_, std::memory_order_relaxed);
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
