#!/usr/bin/env python3
"""Checks docs/reference/openapi.yaml: that it is a well-formed OpenAPI 3 document, and that its
paths and query parameters are exactly the routes audit/api.cc serves.

- YAML parses; `openapi` is 3.x; `info.title` and `info.version` are set; `paths` is not empty;
- every operation has responses; every `$ref` resolves inside the document; every parameter has a
  name, `in` and a schema; every `{x}` in a path is a required path parameter of its operations;
- every route of audit/api.cc (the `path == "..."` tests, and the routes built from path segments)
  is documented with exactly the query parameters its `params({...})` list allows, and the document
  has no /v1 route that api.cc does not serve; each web asset (audit/web/) is documented.

Usage: check_openapi.py REPO_ROOT
"""
import os
import re
import sys

import yaml

METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def resolve(doc, ref):
    if not ref.startswith("#/"):
        return None
    node = doc
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def walk_refs(doc, node, where, problems):
    if isinstance(node, dict):
        if "$ref" in node and resolve(doc, node["$ref"]) is None:
            problems.append(f"{where}: $ref {node['$ref']} does not resolve")
        for k, v in node.items():
            walk_refs(doc, v, f"{where}/{k}", problems)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            walk_refs(doc, v, f"{where}[{i}]", problems)


def deref(doc, node):
    return resolve(doc, node["$ref"]) if isinstance(node, dict) and "$ref" in node else node


def check_structure(doc, problems):
    if not str(doc.get("openapi", "")).startswith("3."):
        problems.append("openapi: want a 3.x version")
    info = doc.get("info") or {}
    if not info.get("title") or not info.get("version"):
        problems.append("info: title and version are required")
    if not doc.get("paths"):
        problems.append("paths: empty")
    walk_refs(doc, doc, "#", problems)
    for path, item in (doc.get("paths") or {}).items():
        if not path.startswith("/"):
            problems.append(f"{path}: a path starts with /")
        ops = {m: op for m, op in item.items() if m in METHODS}
        if not ops:
            problems.append(f"{path}: no operations")
        templated = set(re.findall(r"\{(\w+)\}", path))
        for m, op in ops.items():
            if not op.get("responses"):
                problems.append(f"{path} {m}: no responses")
            params = [deref(doc, p) or {} for p in op.get("parameters", []) + item.get("parameters", [])]
            for p in params:
                if not p.get("name") or p.get("in") not in {"query", "path", "header", "cookie"}:
                    problems.append(f"{path} {m}: a parameter needs a name and a valid `in`")
                if "schema" not in p and "content" not in p:
                    problems.append(f"{path} {m}: parameter {p.get('name')} has no schema")
            in_path = {p["name"] for p in params if p.get("in") == "path" and p.get("required")}
            if in_path != templated:
                problems.append(f"{path} {m}: path parameters {sorted(in_path)} != {sorted(templated)}")


def served_routes(root):
    """{path: set of query parameters or None when api.cc checks none} from audit/api.cc."""
    text = open(os.path.join(root, "audit/api.cc"), encoding="utf-8").read()
    routes = {}
    for m in re.finditer(r'if \(path == "(/[^"]*)"\)', text):  # the routes Handle answers itself
        routes.setdefault(m.group(1), None)
    route_fn = text[text.find("Api::Route("):]
    for m in re.finditer(r"if \((.*?)\) \{\n(.*?)(?=\n  \}(?: else| *\n))", route_fn, re.S):
        cond, body = m.group(1), m.group(2)
        allowed = re.search(r"params\(\{(.*?)\}\)", body, re.S)
        names = set(re.findall(r'"([\w-]+)"', allowed.group(1))) if allowed else None
        lit = re.search(r'path == "(/[^"]*)"', cond)
        if lit:
            routes[lit.group(1)] = names
            continue
        size = re.search(r"parts\.size\(\) == (\d+)", cond)
        if not size:
            continue
        segs = [None] * int(size.group(1))
        for i, s in re.findall(r'parts\[(\d+)\] == "([^"]*)"', cond):
            segs[int(i)] = s
        placeholders = iter(["{namespace}", "{name}", "{x}", "{y}"])
        routes["/" + "/".join(s if s is not None else next(placeholders) for s in segs)] = names
    return routes


def main():
    root = os.path.abspath(sys.argv[1])
    problems = []
    doc = yaml.safe_load(open(os.path.join(root, "docs/reference/openapi.yaml"), encoding="utf-8"))
    check_structure(doc, problems)
    paths = doc.get("paths") or {}
    routes = served_routes(root)
    if not any(r.startswith("/v1/") for r in routes):
        problems.append("found no /v1 routes in audit/api.cc: update this checker")
    for route, allowed in sorted(routes.items()):
        if route not in paths:
            problems.append(f"audit/api.cc serves {route}, which openapi.yaml does not document")
            continue
        op = paths[route].get("get") or {}
        documented = {(deref(doc, p) or {}).get("name") for p in op.get("parameters", [])
                      if (deref(doc, p) or {}).get("in") == "query"}
        if (allowed or set()) != documented:
            problems.append(f"{route}: api.cc allows {sorted(allowed or [])}, openapi.yaml documents {sorted(documented)}")
    for path in paths:
        if path.startswith("/v1/") and path not in routes:
            problems.append(f"openapi.yaml documents {path}, which audit/api.cc does not serve")
    web = os.path.join(root, "audit/web")
    for asset in sorted(os.listdir(web)):
        want = "/" if asset == "index.html" else "/" + asset
        if want not in paths:
            problems.append(f"the page's file {asset} is served at {want}, which openapi.yaml does not document")
    for p in problems:
        print(p)
    print(f"check_openapi: {len(paths)} paths, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
