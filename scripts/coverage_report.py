#!/usr/bin/env python3
"""Branch coverage of the safety files, from an lcov tracefile.

    scripts/coverage_report.py TRACEFILE MIN FILE...

Prints, for each FILE, its branches taken of all branches (the raw figure)
and the figure that counts: the same without the branches that no input
can reach, which docs/testing.md lists in its table "Branches left
uncovered" (file, the line's text or a piece of it that occurs once in
the file, or the Nth of identical lines written `text` (Nth), and why). Only branches of a listed line that were not taken are left out,
so a listed line whose branches all ran is an error of the list, as is a
listed text that is not found exactly once. Exit status 1 when a file
counts under MIN percent or the list is wrong.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "testing.md")


def listed():
    """(file, text, why) rows of the doc's table of uncovered branches."""
    rows, on = [], False
    with open(DOC) as f:
        for line in f:
            if line.startswith("## "):
                on = line.strip() == "## Branches left uncovered"
                continue
            m = re.match(r"\|\s*`([^`]+)`\s*\|\s*`(.+?)`(?:\s*\((\d+)(?:st|nd|rd|th)\))?\s*\|"
                         r"\s*(.+?)\s*\|\s*$", line)
            if on and m:
                nth = int(m.group(3)) if m.group(3) else 0
                rows.append((m.group(1), m.group(2).replace("\\|", "|"), nth, m.group(4)))
    return rows


def branches(trace):
    """{abs path: {line: [taken, ...]}} from the tracefile's BRDA records."""
    out, cur = {}, None
    with open(trace) as f:
        for line in f:
            line = line.strip()
            if line.startswith("SF:"):
                cur = out.setdefault(line[3:], {})
            elif line.startswith("BRDA:") and cur is not None:
                ln, _, _, taken = line[5:].split(",")
                cur.setdefault(int(ln), []).append(taken)
    return out


def main():
    trace, minimum, files = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    data = branches(trace)
    errors = []
    skip = {}  # (file, line) of listed lines
    for path, text, nth, _ in listed():
        try:
            with open(os.path.join(ROOT, path)) as f:
                lines = f.read().split("\n")
        except OSError:
            errors.append("%s: no such file (docs/testing.md)" % path)
            continue
        at = [i + 1 for i, l in enumerate(lines) if l.strip() == text]
        if not at:
            at = [i + 1 for i, l in enumerate(lines) if text in l]
        if nth:
            at = at[nth - 1:nth]
        if len(at) != 1:
            errors.append("%s: `%s` is on %d lines, not one (docs/testing.md)" % (path, text, len(at)))
            continue
        skip[(path, at[0])] = text
    status = 0
    print("%-28s %15s %8s %15s" % ("branch coverage", "all branches", "listed", "counted"))
    for path in files:
        per_line = data.get(os.path.join(ROOT, path), {})
        found = sum(len(t) for t in per_line.values())
        hit = sum(1 for t in per_line.values() for x in t if x not in ("-", "0"))
        out = 0
        for (p, ln), text in skip.items():
            if p != path:
                continue
            missed = sum(1 for x in per_line.get(ln, []) if x in ("-", "0"))
            if missed == 0:
                errors.append("%s:%d `%s`: listed as unreachable, but every branch ran" %
                              (path, ln, text))
            out += missed
        counted = found - out
        pct = 100.0 * hit / counted if counted else 100.0
        raw = 100.0 * hit / found if found else 100.0
        mark = "met" if pct >= minimum else "MISSED"
        if pct < minimum:
            status = 1
        print("%-28s %4d/%-4d %5.1f%% %8d %4d/%-4d %5.1f%%  (target %g%%: %s)" %
              (path, hit, found, raw, out, hit, counted, pct, minimum, mark))
    for e in errors:
        print("coverage: " + e, file=sys.stderr)
    return 1 if errors else status


if __name__ == "__main__":
    sys.exit(main())
