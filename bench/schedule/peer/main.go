// Command peer is the robfig/cron v3.0.1 side of bench/schedule: it runs the workload in
// bench/schedule/workload.txt through cron.ParseStandard and Schedule.Next, with the same loop
// structure, sampling and output format as the C++ harness (schedule_bench.cc), so that run.sh can
// compare checksums and rates measured in the same run. It only calls the library.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron"
)

type workload struct {
	chain     int
	starts    []time.Time
	schedules []string
}

func loadWorkload(path string) (*workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := &workload{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, rest, _ := strings.Cut(line, " ")
		switch key {
		case "chain":
			if w.chain, err = strconv.Atoi(rest); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, n, err)
			}
		case "start":
			t, err := time.Parse(time.RFC3339Nano, rest)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, n, err)
			}
			w.starts = append(w.starts, t.UTC())
		case "schedule":
			w.schedules = append(w.schedules, rest)
		default:
			return nil, fmt.Errorf("%s:%d: unknown key %q", path, n, key)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if w.chain <= 0 || len(w.starts) == 0 || len(w.schedules) == 0 {
		return nil, fmt.Errorf("%s: needs chain > 0, starts and schedules", path)
	}
	return w, nil
}

// tally is what one round produces: the number of Next calls, the number of non-zero results and
// the sum of their unix seconds (the checksum both sides must agree on).
type tally struct {
	calls, results int64
	sum            int64
}

func nextRound(w *workload, scheds []cron.Schedule, dump bool) tally {
	var r tally
	for i, s := range scheds {
		for j, start := range w.starts {
			t := start
			for k := 0; k < w.chain; k++ {
				r.calls++
				n := s.Next(t)
				if n.IsZero() {
					break
				}
				r.results++
				r.sum += n.Unix()
				if dump {
					fmt.Printf("dump %d %d %d %d\n", i, j, k, n.Unix())
				}
				t = n
			}
		}
	}
	return r
}

func parseRound(specs []string) int64 {
	var ok int64
	for _, spec := range specs {
		if _, err := cron.ParseStandard(spec); err == nil {
			ok++
		}
	}
	return ok
}

// measure runs `round` (which does `ops` operations) repeatedly for at least minTime per sample
// and returns the median and best rate over the samples, in operations per second.
func measure(samples int, minTime time.Duration, ops int64, round func()) (median, best float64) {
	rates := make([]float64, 0, samples)
	for s := 0; s < samples; s++ {
		var rounds int64
		begin := time.Now()
		elapsed := time.Duration(0)
		for elapsed < minTime {
			round()
			rounds++
			elapsed = time.Since(begin)
		}
		rates = append(rates, float64(rounds*ops)/elapsed.Seconds())
	}
	sort.Float64s(rates)
	return rates[len(rates)/2], rates[len(rates)-1]
}

func hasZone(spec string) bool {
	return strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=")
}

func main() {
	path := flag.String("workload", "workload.txt", "workload file")
	minTime := flag.Duration("min-time", 500*time.Millisecond, "minimum duration of one sample")
	samples := flag.Int("samples", 5, "samples per figure (the median is reported)")
	dump := flag.Bool("dump", false, "print every Next result and exit")
	perSchedule := flag.Bool("per-schedule", false, "also measure each schedule's chains on their own")
	flag.Parse()

	w, err := loadWorkload(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "peer:", err)
		os.Exit(1)
	}
	var scheds []cron.Schedule
	var plain, zoned []string
	for _, spec := range w.schedules {
		s, err := cron.ParseStandard(spec)
		if err != nil {
			fmt.Fprintf(os.Stderr, "peer: %q: %v\n", spec, err)
			os.Exit(1)
		}
		scheds = append(scheds, s)
		if hasZone(spec) {
			zoned = append(zoned, spec)
		} else {
			plain = append(plain, spec)
		}
	}
	check := nextRound(w, scheds, *dump)
	if *dump {
		return
	}
	fmt.Println("impl robfig/cron-v3.0.1")
	fmt.Println("next_calls", check.calls)
	fmt.Println("next_results", check.results)
	fmt.Println("next_checksum", check.sum)
	fmt.Println("parse_ok", parseRound(plain)+parseRound(zoned))

	var sink int64
	med, best := measure(*samples, *minTime, check.calls, func() {
		r := nextRound(w, scheds, false)
		if r != check {
			panic("nondeterministic Next")
		}
		sink += r.sum
	})
	fmt.Printf("next_rate %.0f\nnext_rate_best %.0f\n", med, best)
	med, best = measure(*samples, *minTime, int64(len(plain)), func() { sink += parseRound(plain) })
	fmt.Printf("parse_plain_rate %.0f\nparse_plain_rate_best %.0f\n", med, best)
	med, best = measure(*samples, *minTime, int64(len(zoned)), func() { sink += parseRound(zoned) })
	fmt.Printf("parse_tz_rate %.0f\nparse_tz_rate_best %.0f\n", med, best)
	if *perSchedule {
		// One line per schedule: "sched_rate <index> <median Next calls/s>".
		for i := range scheds {
			one := scheds[i : i+1]
			c := nextRound(w, one, false)
			med, _ := measure(*samples, *minTime, c.calls, func() { sink += nextRound(w, one, false).sum })
			fmt.Printf("sched_rate %d %.0f\n", i, med)
		}
	}
	fmt.Fprintln(os.Stderr, "peer: sink", sink)
}
