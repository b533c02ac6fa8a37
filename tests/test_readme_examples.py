#!/usr/bin/python3
# labels: docs
"""The README's examples work when pasted. Every command line of its code
blocks is run as written, from a directory laid out like the repository's root
(build/, examples/) that also holds the files the README says the reader makes:
room.json, plan.ms, photo.jpg, and my_skills/circle.lua taken from the README's
own Lua block. `aloft` is on PATH (as after `make install`); a task asks the
fake LLM server (tests/fake_llm.py), as the README's exports would a real one. A line that needs
what a test cannot have (a Tello, a real LLM server, a model file to download,
a server that runs until stopped) is skipped by a rule below that says why; a
command line that no rule covers and that is not run fails the test, so a new
example cannot go untested by accident."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402

SRC = os.environ.get("SRC", ".")
ALOFT = os.path.abspath(os.environ.get("ALOFT", "build/aloft"))
PHOTO = "/usr/share/darknet/data/person.jpg"  # Debian's darknet, installed by the set-up

# (pattern, why it is not run here)
SKIPS = [
    (r"^make ", "builds and tests the project itself"),
    (r"--drone tello", "needs a Tello (tests/test_run_tello.py flies the emulator)"),
    (r"--drone mavlink", "needs a PX4 or ArduPilot vehicle (tests/test_mavlink_fly.py flies "
                         "the emulator)"),
    (r"ollama|11434", "needs an Ollama server"),
    (r"eval --compare", "compares two eval runs made against a real LLM"),
    (r"yolov5s\.onnx|yolov4-tiny\.cfg|yolov5n\.onnx", "needs a model file to download"),
    (r"^aloft serve|^build/aloft serve", "runs until stopped (tests/test_serve.py)"),
    (r"fuzz-artifacts/", "replays a file that only a failing fuzz run writes"),
    (r"test_campaign --seconds", "runs for a minute (make test runs the campaign)"),
]

# A usage synopsis, not a command: placeholders in capitals or brackets.
SYNOPSIS = re.compile(r"\[|\|-|\bFILE\b|\bSCRIPT\b|\bIMAGE\b|\bTEXT\b|\bSCENE\b|\.\.\.\s|\bN\b")

failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def blocks(text):
    """(language, [lines]) of every fenced code block."""
    out, lang, cur = [], None, None
    for line in text.split("\n"):
        if line.startswith("```"):
            if cur is None:
                lang, cur = line[3:].strip(), []
            else:
                out.append((lang, cur))
                cur = None
        elif cur is not None:
            cur.append(line)
    return out


def commands(lines):
    """Command lines of a shell block, continuations joined, comments cut."""
    out, acc = [], ""
    for line in lines:
        if acc:
            acc += " " + line.strip()
        else:
            acc = line.rstrip()
        if acc.endswith("\\"):
            acc = acc[:-1].rstrip()
            continue
        cmd = re.sub(r"\s+#.*$", "", acc).strip()
        acc = ""
        if cmd.startswith(("aloft ", "build/", "examples/", "make ")):
            out.append(cmd)
    return out


with open(os.path.join(SRC, "README.md")) as f:
    readme = f.read()

with tempfile.TemporaryDirectory() as tmp:
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "bin"))
    os.symlink(os.path.dirname(ALOFT), os.path.join(root, "build"))
    os.symlink(os.path.abspath(os.path.join(SRC, "examples")), os.path.join(root, "examples"))
    os.symlink(ALOFT, os.path.join(root, "bin", "aloft"))
    shutil.copy(os.path.join(SRC, "examples/scenes/office.json"), os.path.join(root, "room.json"))
    with open(os.path.join(root, "plan.ms"), "w") as f:
        f.write("tc(90);mf(100)\n")
    if os.path.exists(PHOTO):
        shutil.copy(PHOTO, os.path.join(root, "photo.jpg"))
    env = dict(os.environ, PATH=os.path.join(root, "bin") + ":" + os.environ["PATH"],
               XDG_DATA_HOME=os.path.join(tmp, "data"), HOME=tmp)
    # a reader's own environment: the store in the data directory
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_TOKEN", "ALOFT_DB"):
        env.pop(k, None)

    # every task gets the same harmless plan
    fake = Fake(tmp, [{"content": "tc(90);l('done');->True"}] * 8)
    llm_env = dict(env, OPENAI_BASE_URL=fake.url, ALOFT_MODEL="fake")

    def sh(cmd, timeout=180):
        return subprocess.run(["bash", "-c", cmd], cwd=root,
                              env=llm_env if "--task" in cmd else env,
                              capture_output=True, text=True, timeout=timeout)

    ran = skipped = 0
    wrote_skill = False
    for lang, lines in blocks(readme):
        if lang == "lua":
            # a block that names its file in its first line is the reader's file
            m = re.match(r"^-- (\S+\.lua)$", lines[0]) if lines else None
            if m:
                path = os.path.join(root, m.group(1))
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write("\n".join(lines) + "\n")
                wrote_skill = True
            continue
        if lang not in ("", "sh", "bash", "shell"):
            continue
        for cmd in commands(lines):
            why = next((w for p, w in SKIPS if re.search(p, cmd)), None)
            if why is None and SYNOPSIS.search(cmd):
                why = "a usage synopsis"
            if why:
                print("skip: %s  (%s)" % (cmd, why))
                skipped += 1
                continue
            # `aloft log 12` and `run --replay 12` need a twelfth mission
            m = re.search(r"(?:log|--replay) (\d+)\b", cmd)
            while m and int(sh("aloft log --json").stdout.count('"id"')) < int(m.group(1)):
                r = sh("aloft run --scene room.json --plan plan.ms")
                if r.returncode != 0:
                    check(False, "a mission to fill the log: %s" % r.stderr)
                    break
            r = sh(cmd)
            ran += 1
            check(r.returncode == 0, "%s\n  exit %d\n  stdout: %s\n  stderr: %s"
                  % (cmd, r.returncode, r.stdout[-600:], r.stderr[-600:]))
            print("ok:   %s" % cmd)

    check(wrote_skill, "the README's skill example (a lua block starting with its path) was found")
    # the examples the README is for are there: simulator, plan, skill, vision
    check(ran >= 15, "at least 15 README commands run: %d" % ran)
    print("%d README commands run, %d skipped" % (ran, skipped))

if failures:
    print("%d check(s) failed" % failures)
    sys.exit(1)
print("ok")
