#!/usr/bin/env python3
"""Checks of tests/e2e/k8s/15-helm.sh on the Helm chart and deploy/monitoring.

  same-objects HELM_YAML KUSTOMIZE_YAML   the chart's objects equal the overlay's in substance
  rule-groups RULES_FILE CR_YAML [JOB]    the PrometheusRule CR's spec is the rule file's groups
                                          (with job="cronledger" as job="JOB")
  same-spec A_YAML B_YAML KIND            the one object of KIND in each has the same spec, after
                                          dropping the chart's instance label from selectors
  dashboard-rules DASHBOARD OUT           every panel query of the Grafana dashboard as a recording
                                          rule in the rule file OUT (for `promtool check rules`)
  untested-alerts RULES TESTS             the alerts of RULES without a test in TESTS where they fire
                                          and one where they do not (prints their names)
  served-names METRICS_TEXT FILE...       every metric the rule files and dashboards in FILE...
                                          select (NAME{...}) is in the /metrics text's families
"""
import json
import re
import sys

import yaml

INSTANCE = "app.kubernetes.io/instance"
# Labels only the chart sets (Helm's conventions); the overlays carry app.kubernetes.io/name alone.
HELM_LABELS = {INSTANCE, "helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"}


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def strip_labels(labels):
    return {k: v for k, v in (labels or {}).items() if k not in HELM_LABELS}


def normalize(obj):
    """The object without what the chart adds by convention: Helm's labels (in metadata,
    selectors, pod templates and claim templates)."""
    obj = json.loads(json.dumps(obj))
    meta = obj.get("metadata", {})
    if "labels" in meta:
        meta["labels"] = strip_labels(meta["labels"])
    spec = obj.get("spec", {})
    if obj["kind"] == "Service":
        spec["selector"] = strip_labels(spec.get("selector"))
    if obj["kind"] in ("StatefulSet", "Deployment"):
        spec["selector"]["matchLabels"] = strip_labels(spec["selector"]["matchLabels"])
        tmeta = spec["template"]["metadata"]
        tmeta["labels"] = strip_labels(tmeta.get("labels"))
        for claim in spec.get("volumeClaimTemplates", []):
            claim["metadata"]["labels"] = strip_labels(claim["metadata"].get("labels"))
    if obj["kind"] == "ServiceMonitor":
        spec["selector"]["matchLabels"] = strip_labels(spec["selector"]["matchLabels"])
    return obj


def key(obj):
    return (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def diff(a, b, path=""):
    """The paths where a and b differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{path}.{k}: only in the overlay: {json.dumps(b[k])[:200]}")
            elif k not in b:
                out.append(f"{path}.{k}: only in the chart: {json.dumps(a[k])[:200]}")
            else:
                out.extend(diff(a[k], b[k], f"{path}.{k}"))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: chart {json.dumps(a)[:300]} != overlay {json.dumps(b)[:300]}"]


def same_objects(helm_path, kustomize_path):
    # The overlay's Namespace is left to `helm install --create-namespace` (and the Pod Security
    # label to the user); the CRD is compared as a file (crds/ is a copy of deploy/kubernetes/crd).
    skip = {"Namespace", "CustomResourceDefinition"}
    chart = {key(o): normalize(o) for o in load(helm_path) if o["kind"] not in skip}
    overlay = {key(o): normalize(o) for o in load(kustomize_path) if o["kind"] not in skip}
    problems = []
    for k in sorted(set(chart) | set(overlay)):
        if k not in chart:
            problems.append(f"{'/'.join(k)}: in the overlay, not in the chart")
        elif k not in overlay:
            problems.append(f"{'/'.join(k)}: in the chart, not in the overlay")
        else:
            problems.extend(f"{'/'.join(k)}{d}" for d in diff(chart[k], overlay[k]))
    for p in problems:
        print(p)
    print(f"{len(chart)} chart objects, {len(overlay)} overlay objects, {len(problems)} differences")
    return not problems


def rule_groups(rules_path, cr_path, job="cronledger"):
    with open(rules_path) as f:
        text = f.read().replace('job="cronledger"', f'job="{job}"')
    groups = yaml.safe_load(text)["groups"]
    crs = [o for o in load(cr_path) if o["kind"] == "PrometheusRule"]
    if len(crs) != 1:
        print(f"{cr_path}: {len(crs)} PrometheusRule objects, expected 1")
        return False
    problems = diff(crs[0]["spec"], {"groups": groups})
    for p in problems:
        print(p)
    alerts = sum(len(g["rules"]) for g in groups)
    print(f"{len(groups)} groups, {alerts} rules; {len(problems)} differences")
    return not problems


def same_spec(a_path, b_path, kind):
    a = [normalize(o) for o in load(a_path) if o["kind"] == kind]
    b = [normalize(o) for o in load(b_path) if o["kind"] == kind]
    if len(a) != 1 or len(b) != 1:
        print(f"expected one {kind} in each, found {len(a)} and {len(b)}")
        return False
    problems = diff(a[0]["spec"], b[0]["spec"])
    for p in problems:
        print(p)
    return not problems


# Grafana's variables, given values that keep the queries valid PromQL.
GRAFANA_VARS = {"$__rate_interval": "2m", "$__interval": "1m", "$__range": "1h"}


def dashboard_queries(path):
    with open(path) as f:
        dash = json.load(f)
    out = []
    for panel in dash["panels"]:
        for t in panel.get("targets", []):
            out.append((panel["title"], t["expr"]))
    for var in dash.get("templating", {}).get("list", []):
        if var["type"] == "query":
            q = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            m = re.fullmatch(r"label_values\((.*), *\w+\)", q)
            out.append((f"variable {var['name']}", m.group(1) if m else q))
    return out


def grafana_expr(expr):
    for k, v in GRAFANA_VARS.items():
        expr = expr.replace(k, v)
    return re.sub(r"\$\{?\w+\}?", ".*", expr)


def dashboard_rules(path, out):
    rules = [{"record": f"dashboard:query{i}", "expr": grafana_expr(e)}
             for i, (_, e) in enumerate(dashboard_queries(path))]
    with open(out, "w") as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f, sort_keys=False)
    print(f"{len(rules)} dashboard queries")
    return True


# Series Prometheus itself adds to every target.
PROMETHEUS_SERIES = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}


def selected_names(expr):
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # label values are not names
    return set(re.findall(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{", expr))


def served_names(metrics_path, files):
    served = set()
    with open(metrics_path) as f:
        for line in f:
            m = re.match(r"# TYPE (\S+) (\S+)", line)
            if m:
                served.add(m.group(1))
                if m.group(2) == "histogram":
                    served.update(m.group(1) + s for s in ("_bucket", "_sum", "_count"))
    ok = True
    for path in files:
        if path.endswith(".json"):
            exprs = [e for _, e in dashboard_queries(path)]
        else:
            with open(path) as f:
                doc = yaml.safe_load(f)
            groups = doc["spec"]["groups"] if "spec" in doc else doc["groups"]
            exprs = [r["expr"] for g in groups for r in g["rules"]]
        names = set().union(*(selected_names(e) for e in exprs))
        unknown = sorted(names - served - PROMETHEUS_SERIES)
        print(f"{path}: {len(exprs)} expressions select {len(names)} metrics; not served: {unknown or 'none'}")
        if not names or unknown:
            ok = False
    return ok


def untested_alerts(rules_path, tests_path):
    with open(rules_path) as f:
        alerts = {r["alert"] for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r}
    with open(tests_path) as f:
        tests = yaml.safe_load(f)["tests"]
    fires, quiet = set(), set()
    for t in tests:
        for a in t.get("alert_rule_test", []):
            (fires if a.get("exp_alerts") else quiet).add(a["alertname"])
    for name in sorted(alerts):
        if name not in fires or name not in quiet:
            print(f"{name} (fires: {name in fires}, quiet: {name in quiet})")
    return True


def main(argv):
    cmds = {"same-objects": same_objects, "rule-groups": rule_groups, "same-spec": same_spec,
            "dashboard-rules": dashboard_rules, "untested-alerts": untested_alerts}
    if len(argv) >= 2 and argv[0] == "served-names":
        return served_names(argv[1], argv[2:])
    if not argv or argv[0] not in cmds:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    return cmds[argv[0]](*argv[1:])


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1:]) else 1)
