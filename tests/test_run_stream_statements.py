#!/usr/bin/python3
# labels: mission
"""A streamed plan whose block waits while the plan text grows: the
statements recorded and printed are the plan's own text. A block header
waits to be recorded until a statement inside it runs; meanwhile the
streamed text grows and moves in memory, and the waiting header once
pointed into the old copy (a use after free the ASan build reports, and
garbage statements in the store of a release build)."""

import json
import os
import subprocess
import sys
import tempfile

from fake_llm_proc import Fake

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def main():
    words = "".join("l('%s');" % ("w%03d" % i * 8) for i in range(60))
    plan = "2{3{" + words + "}}"
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "m.db")
        # Many small pieces at a high rate: the text is reallocated many
        # times while the loops' headers wait.
        fake = Fake(tmp, [{"content": plan}], rate=4000)
        try:
            p = subprocess.run([ALOFT, "run", "--scene",
                                os.path.join(SRC, "examples/scenes/office.json"), "--task",
                                "say the words", "--llm-url", fake.url, "--model", "fake",
                                "--db", db, "--json"], capture_output=True, text=True,
                               timeout=240)
        finally:
            fake.stop()
        check(p.returncode == 0, "the mission flies: %s %s" % (p.returncode, p.stderr[-600:]))
        doc = json.loads(p.stdout) if p.stdout else {}
        check(len(doc.get("logs", [])) == 360, "every word logged: %d" % len(doc.get("logs", [])))
        lg = subprocess.run([ALOFT, "log", "--db", db, "--json", str(doc.get("mission_id", 0))],
                            capture_output=True, text=True)
        check(lg.returncode == 0, "log: %s" % lg.stderr)
        events = json.loads(lg.stdout)["events"] if lg.returncode == 0 else []
        stmts = [e for e in events if e["kind"] == "statement"]
        texts = [e.get("text") or e.get("args") or "" for e in stmts]
        check(stmts, "statements are recorded: %s" % events[:3])
        heads = [t for t in texts if isinstance(t, str) and t.endswith("{")]
        check("2{" in heads and "3{" in heads, "the loops' headers as written: %s" % heads[:4])
        bad = [t for t in texts if isinstance(t, str) and t not in plan]
        check(not bad, "every recorded statement is text of the plan: %r" % bad[:3])
    print("ok" if failures == 0 else "%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
