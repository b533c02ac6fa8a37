# `aloft bench` holds every benchmark to leaving nothing behind: it runs each
# bench_* program beside the binary with a TMPDIR of its own, removes what is
# left there, names what a benchmark left in the build directory, and marks
# both in the benchmark's "left_behind" row and "leaves_nothing_met" verdict.
#
# The binary is copied into a directory of the test's own with three small
# benchmark programs (shell scripts): one tidy, one that leaves two files in
# its TMPDIR, one that leaves a file beside the binary.
import json
import os
import shutil
import subprocess
import sys
import tempfile

ALOFT = os.environ.get("ALOFT", "build/aloft")

BENCHES = {
    "bench_tidy": 'echo \'{"x": {"value": 1, "unit": "u"}}\' > "$1"\n'
                  'mkdir "$TMPDIR/work" && touch "$TMPDIR/work/a" && rm -r "$TMPDIR/work"\n',
    "bench_messy": 'echo \'{"x": 2}\' > "$1"\n'
                   'mkdir "$TMPDIR/aloft-pictures-1" && touch "$TMPDIR/aloft-pictures-1/p.png"\n',
    "bench_stray": 'echo \'{"x": 3}\' > "$1"\ntouch ./stray.lock\n',
}


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    with tempfile.TemporaryDirectory() as d:
        aloft = os.path.join(d, "aloft")
        shutil.copy(ALOFT, aloft)
        for name, body in BENCHES.items():
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\nset -e\n" + body)
            os.chmod(path, 0o755)
        out = os.path.join(d, "all.json")
        # The benchmarks' TMPDIR must be aloft bench's, not this one.
        env = dict(os.environ, TMPDIR=d)
        r = subprocess.run([aloft, "bench", "--out", out], capture_output=True, text=True,
                           env=env, timeout=60)
        print(r.stdout)
        print(r.stderr, file=sys.stderr)
        check(r.returncode == 0, "aloft bench exits 0 (got %d)" % r.returncode)
        doc = json.load(open(out))

        tidy, messy, stray = doc["bench_tidy"], doc["bench_messy"], doc["bench_stray"]
        check(tidy["left_behind"] == {"value": 0, "unit": "files"}, "the tidy one left nothing")
        check(tidy["leaves_nothing_met"] is True, "the tidy one's verdict is met")
        check(tidy["x"] == {"value": 1, "unit": "u"}, "its own numbers are kept")
        # A directory and the file in it.
        check(messy["left_behind"]["value"] == 2, "the messy one left 2: %r" % messy)
        check(messy["leaves_nothing_met"] is False, "the messy one's verdict is missed")
        check("bench_messy left 2 file(s)" in r.stderr, "stderr names what it left")
        check(stray["left_behind"]["value"] == 1, "the stray file beside the binary counts")
        check(stray["leaves_nothing_met"] is False, "the stray one's verdict is missed")
        check(os.path.join(d, "stray.lock") in r.stderr, "stderr names the stray file")
        check("leaves_nothing_met" in r.stdout and "MISSED" in r.stdout,
              "the table marks the verdicts")
        # What a benchmark left in its TMPDIR is gone; nothing of the harness
        # stays in the test's own TMPDIR either.
        left = sorted(n for n in os.listdir(d)
                      if n not in BENCHES and n not in ("aloft", "all.json", "stray.lock"))
        check(left == [], "nothing else is left beside the binary: %r" % left)
        check(not any(n.startswith("aloft-pictures") for n in os.listdir(d)),
              "the messy one's pictures were removed")

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
