#!/usr/bin/env python3
"""Compares what cronledger did (namespace e2e-cl, CRD CronJobs) with what the upstream CronJob
controller did (namespace e2e-up, batch/v1 CronJobs), fire time by fire time, from the files
30-controller-vs-upstream.sh collected; checks cronledger's own behaviour over the whole run and the
shadow auditor's divergences. Prints every finding; exits 1 if any check failed.

Deliberate differences (docs/e2e.md) are applied here by name: the owner reference's apiVersion
(cronledger.io/v1 instead of batch/v1) and nothing else."""
import argparse
import calendar
import json
import os
import sys
import time

NAMES = ["allow", "forbid", "replace", "suspended", "tz", "deadline", "history", "gc"]
failures = []


def check(ok, what):
    print(("ok:   " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def ts(s):
    return calendar.timegm(time.strptime(s.replace("Z", "").split(".")[0], "%Y-%m-%dT%H:%M:%S"))


def watch_stream(path):
    """The objects of `kubectl get --watch --output-watch-events -o json`: concatenated JSON."""
    text = open(path).read()
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        obj, i = dec.raw_decode(text, i)
        out.append(obj)


def jobs_created(path):
    """{job name: {"uids": set, "first": the object as first announced}}"""
    jobs = {}
    for ev in watch_stream(path):
        obj = ev["object"]
        name = obj["metadata"]["name"]
        entry = jobs.setdefault(name, {"uids": set(), "first": obj})
        entry["uids"].add(obj["metadata"]["uid"])
    return jobs


def owner(job):
    refs = job["metadata"].get("ownerReferences", [])
    return refs[0]["name"] if refs else None


def fire_time(job):
    return int(job["metadata"]["name"].rsplit("-", 1)[1]) * 60


def by_cronjob(jobs, lo, hi):
    """{cronjob: sorted fire times} of the Jobs whose fire time is in [lo, hi)."""
    out = {n: [] for n in NAMES}
    for j in jobs.values():
        o, t = owner(j["first"]), fire_time(j["first"])
        if o in out and lo <= t < hi:
            out[o].append(t)
    return {k: sorted(v) for k, v in out.items()}


def hm(times):
    return [time.strftime("%H:%M", time.gmtime(t)) for t in times]


def comparable_job(job):
    """What must be equal between the two controllers' Jobs of one fire time."""
    md = job["metadata"]
    refs = [{k: v for k, v in r.items() if k not in ("apiVersion", "uid")}
            for r in md.get("ownerReferences", [])]
    spec = json.loads(json.dumps(job["spec"]))
    # The selector and the template's labels carry the Job's own uid (set by the API server).
    spec.pop("selector", None)
    tl = spec.get("template", {}).get("metadata", {}).get("labels", {})
    for k in ("controller-uid", "batch.kubernetes.io/controller-uid"):
        tl.pop(k, None)
    labels = {k: v for k, v in md.get("labels", {}).items()
              if k not in ("controller-uid", "batch.kubernetes.io/controller-uid")}
    return {"labels": labels, "annotations": md.get("annotations", {}), "ownerReferences": refs,
            "generateName": md.get("generateName"), "spec": spec}


def tz_fires(t):  # "*/2 * * * *" in Asia/Kathmandu (UTC+05:45): even local minutes
    return ((t // 60) % 60 + 45) % 60 % 2 == 0


def fires(name, t):
    return name != "tz" or tz_fires(t)


def main():
    ap = argparse.ArgumentParser()
    for a in ("work",):
        ap.add_argument("--" + a, required=True)
    for a in ("b1", "diff-end", "kcm-stopped", "kcm-started", "grace"):
        ap.add_argument("--" + a, type=int, required=True)
    a = ap.parse_args()
    w = a.work
    up = jobs_created(os.path.join(w, "jobs-e2e-up.json"))
    cl = jobs_created(os.path.join(w, "jobs-e2e-cl.json"))
    b1, end_diff = a.b1, a.diff_end

    # --- differential: fire times while both controllers ran ---------------------------------
    print("== differential (fire times %s .. %s)" % (hm([b1])[0], hm([end_diff - 60])[0]))
    u, c = by_cronjob(up, b1, end_diff), by_cronjob(cl, b1, end_diff)
    for n in NAMES:
        check(u[n] == c[n], "%s: Jobs for the same fire times (upstream %s, cronledger %s)"
              % (n, hm(u[n]), hm(c[n])))
    for name in sorted(set(up) & set(cl)):
        if owner(up[name]["first"]) not in NAMES or fire_time(up[name]["first"]) >= end_diff:
            continue
        a_, b_ = comparable_job(up[name]["first"]), comparable_job(cl[name]["first"])
        for k in a_:
            check(a_[k] == b_[k], "Job %s: %s equal%s" % (
                name, k, "" if a_[k] == b_[k] else " (upstream %s, cronledger %s)"
                % (json.dumps(a_[k], sort_keys=True), json.dumps(b_[k], sort_keys=True))))
    for j in cl.values():
        refs = j["first"]["metadata"].get("ownerReferences", [])
        check(len(refs) == 1 and refs[0].get("apiVersion") == "cronledger.io/v1"
              and refs[0].get("kind") == "CronJob" and refs[0].get("controller") is True
              and refs[0].get("blockOwnerDeletion") is True,
              "Job %s is controlled by its cronledger.io/v1 CronJob" % j["first"]["metadata"]["name"])

    su = {o["metadata"]["name"]: o.get("status", {}) for o in json.load(open(os.path.join(w, "status-up.json")))["items"]}
    sc = {o["metadata"]["name"]: o.get("status", {}) for o in json.load(open(os.path.join(w, "status-cl.json")))["items"]}
    for n in NAMES:
        if n == "gc":
            continue
        x, y = su.get(n, {}), sc.get(n, {})
        check(x.get("lastScheduleTime") == y.get("lastScheduleTime"),
              "%s: status.lastScheduleTime (upstream %s, cronledger %s)"
              % (n, x.get("lastScheduleTime"), y.get("lastScheduleTime")))
        xa = sorted(r["name"] for r in x.get("active", []))
        ya = sorted(r["name"] for r in y.get("active", []))
        check(xa == ya, "%s: status.active (upstream %s, cronledger %s)" % (n, xa, ya))
        xs, ys = x.get("lastSuccessfulTime"), y.get("lastSuccessfulTime")
        check((xs is None) == (ys is None) and (xs is None or abs(ts(xs) - ts(ys)) <= 10),
              "%s: status.lastSuccessfulTime (upstream %s, cronledger %s)" % (n, xs, ys))

    def reasons(path):
        out = {}
        for e in json.load(open(path))["items"]:
            io = e.get("involvedObject", {})
            if io.get("kind") != "CronJob":
                continue
            out.setdefault(io.get("name"), set()).add((e.get("type"), e.get("reason")))
        return out
    eu, ec = reasons(os.path.join(w, "events-up.json")), reasons(os.path.join(w, "events-cl.json"))
    for n in NAMES:
        x, y = sorted(eu.get(n, set())), sorted(ec.get(n, set()))
        check(x == y, "%s: Event types and reasons (upstream %s, cronledger %s)" % (n, x, y))

    # --- cronledger over the whole run: leader killed, no double Job, no missed fire time --------
    print("== cronledger over the whole run")
    all_c = by_cronjob(cl, b1, b1 + 8 * 60)
    for name, j in cl.items():
        check(len(j["uids"]) == 1, "Job %s created once (%d uids)" % (name, len(j["uids"])))
    every = [b1 + 60 * i for i in range(8)]
    for n in ("allow", "deadline", "replace", "history"):
        check(all_c[n] == every, "%s: one Job per fire time across the leader change (%s)" % (n, hm(all_c[n])))
    check(all_c["tz"] == [t for t in every if tz_fires(t)], "tz: Jobs at even Kathmandu minutes (%s)" % hm(all_c["tz"]))
    check(all_c["forbid"] == [b1], "forbid: only the first Job while it runs (%s)" % hm(all_c["forbid"]))
    check(all_c["suspended"] == [], "suspended: no Job (%s)" % hm(all_c["suspended"]))
    end = json.load(open(os.path.join(w, "jobs-end-cl.json")))["items"]
    end_up = json.load(open(os.path.join(w, "jobs-end-up.json")))["items"]
    left = lambda items, n: [j["metadata"]["name"] for j in items if owner(j) == n]
    check(len(left(end, "replace")) == 1, "replace: one Job left (%s)" % left(end, "replace"))
    done_hist = [j["metadata"]["name"] for j in end if owner(j) == "history" and j.get("status", {}).get("completionTime")]
    check(len(done_hist) <= 1, "history: at most successfulJobsHistoryLimit=1 finished Job kept (%s)" % done_hist)
    check(left(end, "gc") == [] and left(end_up, "gc") == [],
          "gc: no Job of a deleted CronJob left (cronledger %s, upstream %s)" % (left(end, "gc"), left(end_up, "gc")))

    # --- the shadow auditor -----------------------------------------------------------------
    print("== shadow auditor")
    items = json.load(open(os.path.join(w, "divergences.json")))["items"]
    for d in items:
        print("      divergence %s %s/%s %s %s" % (d["kind"], d["namespace"], d["cronJob"], d["job"], json.dumps(d["detail"])))
    steady = [d for d in items if ts(d["time"]) < a.kcm_stopped]
    check(steady == [], "no divergence while the upstream controller ran (%d)" % len(steady))
    missed = sorted((d["cronJob"], fire_time({"metadata": {"name": d["job"]}})) for d in items if d["kind"] == "MissedRun")
    expected = sorted((n, t) for n in ("allow", "replace", "deadline", "history", "tz")
                      for t in every if fires(n, t) and a.kcm_stopped < t and t + a.grace < a.kcm_started)
    check(missed == expected, "MissedRun for exactly the fire times the upstream controller missed "
          "(expected %s, recorded %s)" % ([(n, hm([t])[0]) for n, t in expected], [(n, hm([t])[0]) for n, t in missed]))
    late = {d["cronJob"]: d for d in items if d["kind"] == "LateRun"}
    for n in ("allow", "replace", "history", "tz"):
        last = max((t for m, t in expected if m == n), default=None)
        d = late.get(n)
        ok = d is not None and last is not None and d["job"] == "%s-%d" % (n, last // 60) \
            and abs(float(d["detail"].get("skewSeconds", -1)) - (a.kcm_started - last)) <= 15
        check(ok, "%s: LateRun for the latest missed fire time %s with its skew (%s)"
              % (n, hm([last])[0] if last else None, json.dumps(d["detail"]) if d else None))
    check("deadline" not in late, "deadline: no late run (past startingDeadlineSeconds)")
    check([d for d in items if d["kind"] == "UnexpectedJob"] == [], "no UnexpectedJob")

    print("%d check(s) failed" % len(failures) if failures else "all comparisons passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
