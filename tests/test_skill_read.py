#!/usr/bin/env python3
# labels: safety sandbox skill_read
"""User skill files are read in a worker process, not in the host (SPEC §6).

Learning a skill file's name, arguments and description means running its
top-level chunk, which is user code. The host sends the file to a worker,
which runs the chunk and sends back the fields; the host judges them as
untrusted input. Checked here, through the aloft program:

  - a chunk that crashes Lua 5.4.4 (tests/hostile/lua_bug_concat_grows_stack.lua
    as a skill file) is an error naming the file and how the worker died; the
    host lists the other skills (aloft skills), flies (aloft run), or refuses
    to start (aloft serve). With --in-process the same file kills aloft
    itself: proof that in the default mode the chunk never ran in the host;
  - a worker that never answers is killed and the file is named; one killed
    by its filter (SIGSYS), or that answers with a broken frame, is named too
    (the test-only worker modes of host/worker/worker.h);
  - a chunk that loops for ever, fields far too long, a count of arguments
    far too large, a name that is not UTF-8, a table whose metamethods raise
    or loop: each is that file's own clear error, the same in both modes.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile

from worker_proc import orphan_workers

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
SCENE = os.path.join(SRC, "examples/scenes/office.json")
CRASHER = os.path.join(SRC, "tests/hostile/lua_bug_concat_grows_stack.lua")
GUARD_S = 60  # only against a host that never ends
failures = 0

GOOD = ('return {name="wave", description="waves", args={}, returns="bool",\n'
        '        run=function() return true end}\n')


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def skills_dir(tmp, name, files):
    d = os.path.join(tmp, name)
    os.mkdir(d)
    for fname, text in files.items():
        with open(os.path.join(d, fname), "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
    return d


def aloft(args, env=None):
    try:
        return subprocess.run([ALOFT] + args, capture_output=True, timeout=GUARD_S,
                              env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        return None


def listed(p):
    """The skill names of `aloft skills --json`, or None."""
    try:
        return [s["name"] for s in json.loads(p.stdout)]
    except (ValueError, TypeError, KeyError):
        return None


def problem(p, path):
    """What aloft said about the file PATH on stderr ("" when nothing)."""
    prefix = path + ": "
    for line in p.stderr.decode(errors="replace").splitlines():
        at = line.find(prefix)
        if at >= 0:
            return line[at + len(prefix):]
    return ""


def died_how(msg):
    """A crash report names the worker and how it died. In the ASan build a
    crash shows as SIGSYS: the sanitizer's report needs calls the worker's
    confinement forbids."""
    return msg.startswith("the worker process reading it died") and (
        "SIGSEGV" in msg or "killed by SIGSYS" in msg or "SIGBUS" in msg)


def check_crasher(tmp):
    with open(CRASHER) as f:
        crasher = f.read()
    d = skills_dir(tmp, "crash", {"crash.lua": crasher, "wave.lua": GOOD})
    path = os.path.join(d, "crash.lua")

    p = aloft(["skills", "--json", "--skills", d])
    check(p is not None and p.returncode == 1, "skills with a crasher: exit %s" %
          (p and p.returncode))
    if p is None:
        return
    names = listed(p)
    check(names is not None and "wave" in names and "scan" in names,
          "skills with a crasher: the other skills listed: %r" % names)
    check(died_how(problem(p, path)), "skills with a crasher: %r" % p.stderr[-500:])

    # --in-process: the same chunk runs in aloft itself, which dies of it
    p = aloft(["skills", "--json", "--in-process", "--skills", d])
    check(p is not None and (p.returncode < 0 or b"Sanitizer" in p.stderr) and
          listed(p) is None,
          "skills --in-process with a crasher: aloft itself should die of it: exit %s %r" %
          (p and p.returncode, p and p.stderr[-300:]))

    # run: reported, and the flight goes on without it
    with open(os.path.join(tmp, "turn.ms"), "w") as f:
        f.write("tc(90);wave()\n")
    p = aloft(["run", "--json", "--scene", SCENE, "--skills", d, "--plan",
               os.path.join(tmp, "turn.ms"), "--db", os.path.join(tmp, "m.db")])
    try:
        doc = json.loads(p.stdout) if p else None
    except ValueError:
        doc = None
    check(p is not None and p.returncode == 0 and doc and doc.get("ok") is True and
          [c["skill"] for c in doc["calls"]] == ["turn_cw", "wave"],
          "run with a crasher: exit %s %r" % (p and p.returncode, doc))
    check(p is not None and died_how(problem(p, path)), "run with a crasher: %r" %
          (p and p.stderr[-500:]))

    # serve: does not start
    p = aloft(["serve", "--port", "0", "--scene", SCENE, "--model", "fake", "--skills", d,
               "--db", os.path.join(tmp, "serve.db")],
              env={"ALOFT_TOKEN": ""})
    err = p.stderr.decode(errors="replace") if p else ""
    check(p is not None and p.returncode == 1 and p.stdout == b"" and
          died_how(problem(p, path)) and "not starting: 1 skill file could not be read" in err,
          "serve with a crasher: exit %s %r %r" % (p and p.returncode, p and p.stdout, err))


def check_worker_modes(tmp):
    d = skills_dir(tmp, "modes", {"wave.lua": GOOD})
    path = os.path.join(d, "wave.lua")
    want = {
        # killed past the chunk's 2 s and the 2 s grace
        "hang": "the worker process reading it did not answer in time: killed (killed by signal 9",
        "open": "the worker process reading it died (killed by SIGSYS: a forbidden system call "
                "(open",
        "socket": "the worker process reading it died (killed by SIGSYS: a forbidden system call "
                  "(socket)",
        "execve": "the worker process reading it died (killed by SIGSYS: a forbidden system call "
                  "(execve)",
        "malformed": "the worker process reading it sent a frame header that is not one: cut off",
        "flood": "the worker process reading it sent a frame out of turn: cut off",
    }
    for mode, text in want.items():
        p = aloft(["skills", "--json", "--skills", d], env={"ALOFT_TEST_WORKER": mode})
        check(p is not None, "%s: aloft skills did not end" % mode)
        if p is None:
            continue
        msg = problem(p, path)
        check(p.returncode == 1 and msg.startswith(text) and "scan" in (listed(p) or []),
              "%s: exit %d, %r" % (mode, p.returncode, msg))


def lua_str(b):
    return '"' + "".join("\\%d" % c for c in b) + '"'


# file: (text, the error aloft gives for it)
BAD_FILES = {
    "loop.lua": ("while true do end\n", "instruction limit"),
    "loop_in_index.lua": ("return setmetatable({}, {__index = function() while true do end end})\n",
                          "instruction limit"),
    "raise_in_index.lua": ("return setmetatable({}, {__index = function(t, k) "
                           "error('no field ' .. k, 0) end})\n", "no field name"),
    "long_name.lua": ('return {name=string.rep("a", 1000000), description="d", minispec="->True"}\n',
                      "field 'name' is longer than 47 characters"),
    "long_description.lua": ('return {name="longdesc", description=string.rep("d", 1000000),'
                             ' minispec="->True"}\n',
                             "field 'description' is longer than 511 characters"),
    "long_type.lua": ('return {name="longtype", description="d", minispec="->True",'
                      ' args={{name="a", type=string.rep("t", 100000)}}}\n',
                      "args[1]: field 'type' is longer than 15 characters"),
    "long_minispec.lua": ('return {name="longms", description="d",'
                          ' minispec=string.rep(" ", 300000) .. "->True"}\n',
                          "field 'minispec' is longer than 262143 characters"),
    "many_args.lua": ('local a, e = {}, {name="x", type="int"} for i = 1, 50000 do a[i] = e end\n'
                      'return {name="many", description="d", minispec="->True", args=a}\n',
                      "at most 8 arguments are allowed, got 50000"),
    "not_utf8_name.lua": ("return {name=%s, description=\"d\", minispec=\"->True\"}\n" %
                          lua_str(b"caf\xc3"),
                          "name 'caf"),
    "number_name.lua": ('return {name=12, description="d", minispec="->True"}\n',
                        "field 'name' must be a string"),
    "no_table.lua": ("return 42\n", "the file must return a table"),
}


def check_bad_files(tmp):
    d = skills_dir(tmp, "bad", dict({k: v[0] for k, v in BAD_FILES.items()}, **{"wave.lua": GOOD}))
    for mode in ([], ["--in-process"]):
        p = aloft(["skills", "--json"] + mode + ["--skills", d])
        check(p is not None and p.returncode == 1, "bad files %s: exit %s" %
              (mode, p and p.returncode))
        if p is None:
            continue
        names = listed(p)
        check(names is not None and "wave" in names and "scan" in names and
              not [n for n in names if n in ("longdesc", "longtype", "longms", "many")],
              "bad files %s: listed %r" % (mode, names))
        for fname, (_, text) in BAD_FILES.items():
            msg = problem(p, os.path.join(d, fname))
            check(text in msg, "%s %s: %r" % (fname, mode, msg))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_crasher(tmp)
        check_worker_modes(tmp)
        check_bad_files(tmp)
    left = orphan_workers(ALOFT)
    check(not left, "workers outlived their host: %r" % left)
    print("ok" if failures == 0 else "%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
