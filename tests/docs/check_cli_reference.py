#!/usr/bin/env python3
"""Checks docs/reference/cli.md against the cronledger binary and the flags app/ declares.

For every command:
- the commands `cronledger help` lists, the commands app/cmd_*.cc register and the commands the
  reference documents (one "## `cronledger NAME`" section each) are the same;
- every flag the binary prints for `cronledger NAME --help` (whether --help succeeds or the command
  rejects it and prints its usage) is documented;
- every flag the command declares in app/ (Flags::Value / Flags::Switch, including helpers such as
  DeclareLedgerMemoryFlags) is documented;
- every flag the reference documents is declared or printed, so the reference lists no flag the
  binary does not have.
`--help`/`-h` themselves are left out: every command takes them.

Usage: check_cli_reference.py REPO_ROOT CRONLEDGER_BINARY
"""
import os
import re
import subprocess
import sys

DECL = re.compile(r'\.(?:Value|Switch)\(\s*"([\w-]+)"(?:\s*,\s*"(\w?)")?')
FLAG_TEXT = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")
HELP = {"--help", "-h"}


def flag_tokens(name, short):
    """The spellings a declared flag accepts that users see: --name, and -s when it has one. A
    one-letter long name (`-n`) is written with one dash."""
    tokens = set()
    tokens.add(f"-{name}" if len(name) == 1 else f"--{name}")
    if short:
        tokens.add(f"-{short}")
    return tokens


def declared_flags(root):
    """{command: set of flag spellings} from app/cmd_*.cc and the Declare*Flags helpers."""
    app = os.path.join(root, "app")
    helpers = {}
    for n in sorted(os.listdir(app)):
        if not n.endswith(".cc") or n.endswith("_test.cc"):
            continue
        text = open(os.path.join(app, n), encoding="utf-8").read()
        for m in re.finditer(r"^void (Declare\w*Flags)\(Flags& \w+\) \{\n(.*?)^\}", text, re.M | re.S):
            helpers[m.group(1)] = {t for a, b in DECL.findall(m.group(2)) for t in flag_tokens(a, b)}
    commands = {}
    for n in sorted(os.listdir(app)):
        if not (n.startswith("cmd_") and n.endswith(".cc")):
            continue
        text = open(os.path.join(app, n), encoding="utf-8").read()
        reg = re.search(r'CL_REGISTER_COMMAND\(\s*"([\w-]+)"', text)
        if not reg:
            continue
        flags = {t for a, b in DECL.findall(text) for t in flag_tokens(a, b)}
        for helper, hflags in helpers.items():
            if re.search(rf"\b{helper}\(", text):
                flags |= hflags
        commands[reg.group(1)] = flags - HELP
    return commands


def binary_commands(binary):
    out = subprocess.run([binary, "help"], capture_output=True, text=True, timeout=60).stdout
    names, listing = [], False
    for line in out.split("\n"):
        if line.strip() == "commands:":
            listing = True
        elif listing and line.startswith("  ") and line.strip():
            names.append(line.split()[0])
        elif listing and not line.strip():
            listing = False
    return set(names)


def printed_flags(binary, command):
    args = [binary, command] + (["adherence"] if command == "report" else []) + ["--help"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return set(FLAG_TEXT.findall(r.stdout + "\n" + r.stderr)) - HELP


def documented(root):
    """{command: set of flag spellings} from the first column of each command's flag table."""
    text = open(os.path.join(root, "docs/reference/cli.md"), encoding="utf-8").read()
    out, current = {}, None
    for line in text.split("\n"):
        m = re.match(r"^## `cronledger ([\w-]+)`", line)
        if m:
            current = m.group(1)
            out[current] = set()
            continue
        if line.startswith("## "):
            current = None
        if current and line.startswith("| ") and not line.startswith("| flag") and "---" not in line:
            first = line.split(" | ")[0]
            for code in re.findall(r"`([^`]*)`", first):
                out[current] |= set(FLAG_TEXT.findall(code))
    return out


def main():
    root, binary = os.path.abspath(sys.argv[1]), sys.argv[2]
    problems = []
    declared = declared_flags(root)
    docs = documented(root)
    listed = binary_commands(binary)
    if not listed:
        problems.append("`cronledger help` listed no commands")
    for name, where in ((set(declared), "registered in app/"), (listed, "listed by `cronledger help`")):
        for c in sorted(name - set(docs)):
            problems.append(f"command {c} is {where} but has no section in docs/reference/cli.md")
        for c in sorted(set(docs) - name):
            problems.append(f"docs/reference/cli.md documents command {c}, which is not {where}")
    for c in sorted(set(docs) & listed):
        printed = printed_flags(binary, c)
        mine = declared.get(c, set())
        for f in sorted(printed - docs[c]):
            problems.append(f"{c}: `{c} --help` prints {f}, which the reference does not document")
        for f in sorted(mine - docs[c]):
            problems.append(f"{c}: app/ declares {f}, which the reference does not document")
        for f in sorted(docs[c] - printed - mine):
            problems.append(f"{c}: the reference documents {f}, which the command neither declares nor prints")
    for p in problems:
        print(p)
    print(f"check_cli_reference: {len(docs)} commands, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
