#!/usr/bin/env python3
"""Checks the Markdown documentation and the code's citations of it.

Fails (exit 1, one line per problem) when:
- a relative link in README.md, CHANGELOG.md or docs/**/*.md names a file that does not exist, or an
  anchor that is not a heading of the target file (GitHub's heading ids);
- any document or source file refers to ../shared (files outside the repository), or cites the old
  outside documents ("spec §N", "DESIGN.md", "STYLE.md");
- a source file cites "docs/semantics.md §N" or "docs/design.md §N" for a section that does not exist,
  or names a docs/*.md file that does not exist.

Usage: check_links.py REPO_ROOT
"""
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
OUTSIDE = re.compile(r"\.\./shared|shared/spec|\bDESIGN\.md\b|\bSTYLE\.md\b|\b[Ss]pec §")
SOURCE_EXT = (".cc", ".h", ".txt", ".cmake", ".sh", ".py", ".js", ".go", ".yaml", ".html")
SKIP_DIRS = {".git", "node_modules", "testdata"}


def strip_code(text):
    """The text with fenced code blocks blanked (line numbers kept) and inline code removed."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
        elif fenced:
            out.append("")
        else:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = re.sub(r"`", "", heading).strip().lower()
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = "".join(c for c in s if c.isalnum() or c in " -_")
    return s.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        ids, seen = set(), {}
        fenced = False
        for line in open(path, encoding="utf-8").read().split("\n"):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            m = None if fenced else HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            ids.add(base if n == 0 else f"{base}-{n}")
        cache[path] = ids
    return cache[path]


def section_numbers(path):
    """Section numbers of headings such as "## 6.5 Building ..." or "## 4. Stable interfaces"."""
    nums = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s", line)
        if m:
            nums.add(m.group(1))
    return nums


def markdown_files(root):
    files = [os.path.join(root, f) for f in ("README.md", "CHANGELOG.md")]
    for d, dirs, names in os.walk(os.path.join(root, "docs")):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        files += [os.path.join(d, n) for n in names if n.endswith(".md")]
    return [f for f in files if os.path.exists(f)]


def check_markdown(root, problems):
    for md in markdown_files(root):
        rel = os.path.relpath(md, root)
        raw = open(md, encoding="utf-8").read().split("\n")
        for no, line in enumerate(raw, 1):
            if OUTSIDE.search(line):
                problems.append(f"{rel}:{no}: refers to a document outside the repository: {line.strip()}")
        for no, line in enumerate(strip_code("\n".join(raw)), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                dest = md if not path else os.path.normpath(os.path.join(os.path.dirname(md), path))
                if not os.path.abspath(dest).startswith(os.path.abspath(root) + os.sep):
                    problems.append(f"{rel}:{no}: link leaves the repository: {target}")
                    continue
                if not os.path.exists(dest):
                    problems.append(f"{rel}:{no}: broken link: {target}")
                    continue
                if anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    problems.append(f"{rel}:{no}: no heading #{anchor} in {os.path.relpath(dest, root)}")


def check_sources(root, problems):
    sections = {
        "docs/semantics.md": section_numbers(os.path.join(root, "docs/semantics.md")),
        "docs/design.md": section_numbers(os.path.join(root, "docs/design.md")),
    }
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build") and x != "docs"]
        for n in names:
            if not n.endswith(SOURCE_EXT) or n == "check_links.py":
                continue
            path = os.path.join(d, n)
            rel = os.path.relpath(path, root)
            try:
                lines = open(path, encoding="utf-8").read().split("\n")
            except UnicodeDecodeError:
                continue
            for no, line in enumerate(lines, 1):
                if OUTSIDE.search(line):
                    problems.append(f"{rel}:{no}: cites a document outside the repository: {line.strip()}")
                for doc in re.findall(r"\bdocs/[\w./-]+\.md\b", line):
                    if not os.path.exists(os.path.join(root, doc)):
                        problems.append(f"{rel}:{no}: names a missing document: {doc}")
                # Every §N after a document's name up to the next document named on the line, e.g.
                # "docs/semantics.md §6.2-§6.13" or "docs/semantics.md §5, §6.10".
                for m in re.finditer(r"\b(docs/[\w./-]+\.md) §([^\n]*?)(?=docs/|$)", line):
                    known = sections.get(m.group(1))
                    if known is None:
                        continue
                    for num in re.findall(r"§(\d+(?:\.\d+)*)", "§" + m.group(2)):
                        if num not in known:
                            problems.append(f"{rel}:{no}: {m.group(1)} has no section §{num}")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    problems = []
    check_markdown(root, problems)
    check_sources(root, problems)
    for p in problems:
        print(p)
    print(f"check_links: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
