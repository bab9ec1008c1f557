// Command oracle prints robfig/cron v3.0.1's answers for a deterministic corpus of schedules, zones
// and start times, as JSON lines, for cronledger's differential conformance test
// (tests/schedule/conformance_test.cc). Regenerate with tests/schedule/oracle/regen.sh.
//
// Each line: {"spec": text handed to ParseStandard, "from": RFC 3339 (UTC), "next": [chained
// results], "bug": [indices of results where robfig misbehaves], "error": parse error}. A chain
// stops at robfig's zero time. A result is flagged as a robfig bug when it is not after its input
// or its wall-clock reading in the schedule's zone does not match the schedule's fields.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"time"

	"github.com/robfig/cron"
)

type result struct {
	Spec  string   `json:"spec"`
	From  string   `json:"from,omitempty"`
	Next  []string `json:"next,omitempty"`
	Bug   []int    `json:"bug,omitempty"`
	Error string   `json:"error,omitempty"`
}

var zones = []string{
	"UTC", "Etc/GMT+5", "Etc/GMT-14", "America/New_York", "America/Chicago", "America/Los_Angeles",
	"America/Denver", "America/Phoenix", "America/St_Johns", "America/Halifax", "America/Havana",
	"America/Sao_Paulo", "America/Santiago", "America/Asuncion", "America/Mexico_City",
	"America/Godthab", "America/Caracas", "America/Scoresbysund", "Europe/London", "Europe/Dublin",
	"Europe/Berlin", "Europe/Rome", "Europe/Moscow", "Europe/Lisbon", "Atlantic/Azores",
	"Africa/Casablanca", "Africa/Cairo", "Asia/Beirut", "Asia/Gaza", "Asia/Jerusalem", "Asia/Tehran",
	"Asia/Kathmandu", "Asia/Kolkata", "Asia/Tokyo", "Asia/Shanghai", "Asia/Pyongyang", "Australia/Sydney",
	"Australia/Adelaide", "Australia/Lord_Howe", "Australia/Perth", "Pacific/Chatham",
	"Pacific/Auckland", "Pacific/Apia", "Pacific/Kiritimati", "Pacific/Kwajalein", "Pacific/Norfolk",
	"Antarctica/Troll", "Antarctica/Macquarie", "Asia/Dhaka", "America/Whitehorse",
}

// The DST-heavy zones get most of the transition-adjacent cases.
var dstZones = []string{
	"America/New_York", "Europe/London", "Australia/Lord_Howe", "Pacific/Chatham", "America/Sao_Paulo",
	"America/Havana", "Asia/Beirut", "America/Santiago", "Europe/Dublin", "Antarctica/Troll",
	"Africa/Casablanca", "Asia/Gaza", "America/Asuncion", "Pacific/Apia", "Asia/Tehran",
	"America/St_Johns", "Australia/Adelaide", "Europe/Moscow", "America/Scoresbysund",
}

var monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
var dowNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

func randCase(r *rand.Rand, s string) string {
	switch r.Intn(3) {
	case 0:
		return strings.ToUpper(s)
	case 1:
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

func value(r *rand.Rand, min, max int, names []string) string {
	v := min + r.Intn(max-min+1)
	if names != nil && r.Intn(3) == 0 {
		return randCase(r, names[v-min])
	}
	return fmt.Sprint(v)
}

// field generates one field; dense fields (every minute) are kept rarer so chains cover time.
func field(r *rand.Rand, min, max int, names []string, star bool) string {
	switch k := r.Intn(20); {
	case k < 5 && star:
		if r.Intn(6) == 0 {
			return "?"
		}
		return "*"
	case k < 9:
		return value(r, min, max, names)
	case k < 11:
		a, b := min+r.Intn(max-min+1), min+r.Intn(max-min+1)
		if a > b {
			a, b = b, a
		}
		return fmt.Sprintf("%d-%d", a, b)
	case k < 13:
		return fmt.Sprintf("*/%d", 1+r.Intn(max-min+1))
	case k < 14:
		return fmt.Sprintf("%d/%d", min+r.Intn(max-min+1), 1+r.Intn(max-min))
	case k < 16:
		a, b := min+r.Intn(max-min+1), min+r.Intn(max-min+1)
		if a > b {
			a, b = b, a
		}
		return fmt.Sprintf("%d-%d/%d", a, b, 1+r.Intn(4))
	default:
		n := 2 + r.Intn(3)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = value(r, min, max, names)
		}
		return strings.Join(parts, ",")
	}
}

func cronSpec(r *rand.Rand) string {
	if r.Intn(12) == 0 {
		d := []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
		return d[r.Intn(len(d))]
	}
	if r.Intn(25) == 0 {
		e := []string{"@every 1h", "@every 90m", "@every 1h30m10.5s", "@every 45s", "@every 24h",
			"@every 500ms", "@every 26h3m", "@every 0s", "@every 168h"}
		return e[r.Intn(len(e))]
	}
	minute := field(r, 0, 59, nil, r.Intn(4) == 0)
	hour := field(r, 0, 23, nil, true)
	dom := field(r, 1, 31, nil, true)
	month := field(r, 1, 12, monthNames, true)
	dow := field(r, 0, 6, dowNames, true)
	return strings.Join([]string{minute, hour, dom, month, dow}, " ")
}

// A transition of zone near a random instant, found by bisection on the offset.
func nearTransition(r *rand.Rand, loc *time.Location) (time.Time, bool) {
	start := time.Date(1990+r.Intn(60), time.Month(1+r.Intn(12)), 1, 0, 0, 0, 0, time.UTC)
	_, off0 := start.In(loc).Zone()
	for d := 1; d < 400; d++ {
		t := start.AddDate(0, 0, d)
		if _, off := t.In(loc).Zone(); off != off0 {
			lo, hi := t.AddDate(0, 0, -1).Unix(), t.Unix()
			for hi-lo > 1 {
				mid := (lo + hi) / 2
				if _, o := time.Unix(mid, 0).In(loc).Zone(); o == off0 {
					lo = mid
				} else {
					hi = mid
				}
			}
			return time.Unix(hi, 0), true
		}
	}
	return time.Time{}, false
}

func fromTime(r *rand.Rand, loc *time.Location) time.Time {
	if r.Intn(10) < 6 {
		if t, ok := nearTransition(r, loc); ok {
			// Land within two days either side, often exactly on a minute or hour boundary.
			t = t.Add(time.Duration(r.Intn(4*86400)-2*86400) * time.Second)
			switch r.Intn(3) {
			case 0:
				t = t.Truncate(time.Hour)
			case 1:
				t = t.Truncate(time.Minute)
			}
			return t
		}
	}
	if r.Intn(40) == 0 { // before the first transitions (local mean time)
		return time.Unix(-2500000000+r.Int63n(400000000), 0)
	}
	t := time.Unix(r.Int63n(2900000000), 0)
	if r.Intn(5) == 0 {
		t = t.Add(time.Duration(r.Intn(1000000000)))
	}
	return t
}

func matches(s *cron.SpecSchedule, t time.Time) bool {
	t = t.In(s.Location)
	bit := func(set uint64, v int) bool { return set&(1<<uint(v)) != 0 }
	const star = 1 << 63
	dom, dow := bit(s.Dom, t.Day()), bit(s.Dow, int(t.Weekday()))
	day := dom || dow
	if s.Dom&star != 0 || s.Dow&star != 0 {
		day = dom && dow
	}
	return day && bit(s.Month, int(t.Month())) && bit(s.Hour, t.Hour()) &&
		bit(s.Minute, t.Minute()) && bit(s.Second, t.Second())
}

func parse(spec string) (sched cron.Schedule, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("invalid schedule format: %v", p)
		}
	}()
	return cron.ParseStandard(spec)
}

// next runs robfig's Next with a time limit, so a pathological loop cannot hang the generator.
func next(s cron.Schedule, t time.Time) (time.Time, bool) {
	done := make(chan time.Time, 1)
	go func() { done <- s.Next(t) }()
	select {
	case n := <-done:
		return n, true
	case <-time.After(5 * time.Second):
		return time.Time{}, false
	}
}

func run(spec string, from time.Time, n int) result {
	res := result{Spec: spec}
	s, err := parse(spec)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.From = from.UTC().Format(time.RFC3339Nano)
	t := from
	for i := 0; i < n; i++ {
		nt, ok := next(s, t)
		if !ok {
			fmt.Fprintf(os.Stderr, "robfig did not return for %q from %s; case dropped\n", spec, t)
			return result{}
		}
		if nt.IsZero() {
			break
		}
		if ss, ok := s.(*cron.SpecSchedule); ok && (!nt.After(t) || !matches(ss, nt)) {
			res.Bug = append(res.Bug, i)
		}
		res.Next = append(res.Next, nt.UTC().Format(time.RFC3339))
		t = nt
	}
	return res
}

// Parse-error and edge inputs, checked for robfig's exact messages.
var fixed = []string{
	"", " ", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * 32 * *",
	"* * * 13 *", "* * * 0 *", "* * * * 7", "*/0 * * * *", "5-1 * * * *", "1-2-3 * * * *",
	"1/2/3 * * * *", "x * * * *", "-1 * * * *", "+5 * * * *", "1-x * * * *", "* * * foo *",
	"* * * * funday", "* * * JAN-mar MON", "@every", "@every x", "@every 1", "@every -5s",
	"@fortnightly", "@daily ", " @daily", "TZ=UTC", "TZ=", "TZ=0", "CRON_TZ=UTC",
	"TZ=Invalid/Timezone", "TZ=Invalid/Timezone * * * * *", "TZ= 0 * * * *", "TZ=Local 0 * * * *",
	"CRON_TZ=Asia/Tokyo @daily", "TZ=America/New_York  0 3 * * *", "TZ=../etc 0 * * * *",
	"TZ=America 0 * * * *", "TZ=utc 0 * * * *", "99999999999999999999 * * * *",
	"*/99999999999999999999 * * * *", "1,,2 * * * *", ", * * * *", "*-5 * * * *", "?/5 * * * *",
	"0 0 ? * ?", "0 0 */1 * 1", "0 0 */2 * 1", "0\t0\t*\t*\t*", "0 0 * * *\u00a0", "0 0 * * \u200b",
	"0 0 29 2 *", "59 23 31 2 *", "0 0 31 4,6,9,11 *", "30 2 * * *", "30 1 * * *", "0 0 * * 0",
	"0 0 1 1 *", "*/15 * * * *", "0 */6 * * *", "45 2 * * *", "0-59/7 * * * *", "0 0 1-7 * 1",
}

func main() {
	r := rand.New(rand.NewSource(20240101))
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	emit := func(res result) {
		if res.Spec != "" || res.Error != "" {
			if err := enc.Encode(res); err != nil {
				panic(err)
			}
		}
	}
	for _, spec := range fixed {
		for _, z := range []string{"", "America/New_York", "Australia/Lord_Howe", "Pacific/Chatham"} {
			full := spec
			if z != "" {
				if strings.Contains(spec, "TZ") {
					continue
				}
				full = "TZ=" + z + " " + spec
			}
			loc := time.UTC
			if z != "" {
				loc, _ = time.LoadLocation(z)
			}
			emit(run(full, fromTime(r, loc), 6))
		}
	}
	const cases = 7000
	for i := 0; i < cases; i++ {
		var z string
		if r.Intn(3) > 0 {
			z = dstZones[r.Intn(len(dstZones))]
		} else {
			z = zones[r.Intn(len(zones))]
		}
		loc, err := time.LoadLocation(z)
		if err != nil {
			panic(err)
		}
		spec := "TZ=" + z + " " + cronSpec(r)
		if r.Intn(10) == 0 {
			spec = "CRON_TZ=" + z + " " + cronSpec(r)
		}
		emit(run(spec, fromTime(r, loc), 6))
	}
}
