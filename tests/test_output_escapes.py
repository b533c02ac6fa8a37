"""What aloft prints is safe to print (SPEC §2). Text from plans, skills,
the LLM and the store reaches stdout and stderr with its control characters
escaped: `l('\\033]0;x\\007')` shows as \\x1b]0;x\\x07 in every command that
prints it (run's progress and logs, lua's print and errors, log's listing
and mission view, check's diagnostics, transpile, skills), and no C0, DEL
or C1 control, nor a byte that is not UTF-8, comes out raw. Every JSON
document (run, lua, check, log, skills, detect --json; the LLM's text in
run --task) is valid UTF-8, invalid bytes replaced with U+FFFD."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402

ALOFT = os.environ["ALOFT"]
failures = 0

# The hostile text: an OSC window title, a bell, a cursor move, CR, DEL, a
# C1 CSI (U+009B), a raw 0x9B byte, and bytes that are not UTF-8.
HOSTILE = b"\x1b]0;x\x07 \x1b[2J\r\x7f \xc2\x9b1m \x9b \xff\xfe \xe2\x82"
ESCAPED = "\\x1b]0;x\\x07 \\x1b[2J\\x0d\\x7f \\xc2\\x9b1m \\x9b \\xff\\xfe \\xe2\\x82"
# HOSTILE in a Lua string literal (a raw CR would end the line there).
LUA_HOSTILE = "".join("\\%d" % b for b in HOSTILE).encode()
RAW = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


def aloft(*args, env=None):
    e = dict(os.environ)
    e.pop("ALOFT_DB", None)
    e.update(env or {})
    return subprocess.run([ALOFT, *args], capture_output=True, env=e, timeout=120)


def safe_text(name, data, escaped=None):
    """DATA (bytes printed) holds no raw control and is valid UTF-8."""
    m = RAW.search(data)
    check(m is None, f"{name}: raw control {m.group(0) if m else b''!r} in {data[:300]!r}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as ex:
        check(False, f"{name}: not UTF-8 ({ex}): {data[:300]!r}")
        return
    if escaped:
        check(escaped in text, f"{name}: shows {escaped!r}: {text[:600]!r}")


def json_doc(name, data):
    """DATA is one JSON document, valid UTF-8 (strict), with no raw control."""
    safe_text(name, data)
    try:
        return json.loads(data.decode("utf-8", "strict"))
    except ValueError as ex:
        check(False, f"{name}: not JSON ({ex}): {data[:300]!r}")
        return None


def has_fffd(doc):
    return "\ufffd" in json.dumps(doc, ensure_ascii=False)


def main():
    tmp = tempfile.mkdtemp(prefix="aloft-escapes-")
    db = os.path.join(tmp, "m.db")
    scene = os.path.join(tmp, "scene.json")
    with open(scene, "w") as f:
        json.dump({"drone": {"x": 0, "y": 0, "z": 100, "yaw": 0}, "objects": []}, f)
    plan = os.path.join(tmp, "plan.ms")
    with open(plan, "wb") as f:
        f.write(b"l('" + HOSTILE + b"');->'" + HOSTILE + b"'\n")

    # run: progress (stderr) and the plan's log lines (stdout)
    p = aloft("run", "--scene", scene, "--plan", plan, "--db", db)
    check(p.returncode == 0, f"run: {p.stderr!r}")
    safe_text("run stdout", p.stdout, ESCAPED)
    safe_text("run stderr", p.stderr, ESCAPED)
    # run --json: the same text as valid JSON
    run_logs = None
    p = aloft("run", "--json", "--scene", scene, "--plan", plan, "--db", db)
    doc = json_doc("run --json", p.stdout)
    safe_text("run --json stderr", p.stderr, ESCAPED)
    if doc:
        check(has_fffd(doc["logs"]) and has_fffd(doc["plans"]) and has_fffd(doc["calls"]),
              "run --json: U+FFFD in logs, plans and the calls' args")
        check("\x1b]0;x\x07" in doc["logs"][0], "run --json: the log keeps its text (escaped)")
        mid = doc.get("mission_id")
        run_logs = doc["logs"]

        # log: the listing, the mission view and --json
        p = aloft("log", "--db", db, str(mid))
        check(p.returncode == 0, f"log ID: {p.stderr!r}")
        safe_text("log ID", p.stdout, ESCAPED)
        p = aloft("log", "--db", db, "--json", str(mid))
        d = json_doc("log --json ID", p.stdout)
        check(d is not None and has_fffd(d), "log --json ID: U+FFFD for the invalid bytes")

    # a task with the hostile text is recorded and listed; the LLM's reply
    # carries controls too (JSON cannot carry invalid bytes: \u escapes)
    reply = "l('\u001b]0;llm\u0007 \u009b')\n->True"
    fake = Fake(tmp, [{"content": reply}])
    try:
        task = HOSTILE.decode("utf-8", "surrogateescape")
        p = subprocess.run([ALOFT, "run", "--json", "--scene", scene, "--task", task, "--db", db,
                            "--model", "m", "--llm-url", fake.url, "--no-stream"],
                           capture_output=True, timeout=120,
                           env={**os.environ, "OPENAI_API_KEY": "k"})
        d = json_doc("run --task --json", p.stdout)
        safe_text("run --task stderr", p.stderr, "\\x1b]0;llm\\x07 \\xc2\\x9b")
        check(d is not None and d.get("ok") is True, f"run --task: {p.stderr[-300:]!r}")
    finally:
        fake.stop()
    p = aloft("log", "--db", db)
    safe_text("log listing", p.stdout, ESCAPED)
    d = json_doc("log --json", aloft("log", "--db", db, "--json").stdout)
    check(d is not None and any(has_fffd(m.get("task")) for m in d if m.get("task")),
          "log --json: the task with U+FFFD")

    # lua: print and log to stdout, an error to stderr; --json
    script = os.path.join(tmp, "s.lua")
    with open(script, "wb") as f:
        f.write(b"print('" + LUA_HOSTILE + b"')\nerror('" + LUA_HOSTILE + b"', 0)\n")
    p = aloft("lua", script)
    check(p.returncode == 1, "lua: the error fails the script")
    safe_text("lua stdout", p.stdout, ESCAPED)
    safe_text("lua stderr", p.stderr, ESCAPED)
    d = json_doc("lua --json", aloft("lua", "--json", script).stdout)
    check(d is not None and has_fffd(d["logs"]) and has_fffd(d["error"]),
          "lua --json: U+FFFD in logs and error")

    # check: a diagnostic that quotes the plan
    bad = os.path.join(tmp, "bad.ms")
    with open(bad, "wb") as f:
        f.write(b"l('ok');zz\x1b]0;x\x07\xff(1)\n")
    p = aloft("check", bad)
    safe_text("check stderr", p.stderr)
    safe_text("check stdout", p.stdout)
    json_doc("check --json", aloft("check", "--json", bad).stdout)
    # transpile: the Lua of the hostile plan
    p = aloft("transpile", plan)
    safe_text("transpile", p.stdout)
    safe_text("transpile stderr", p.stderr)
    # ... whose escapes are Lua's own: it still runs, logging the same text
    lua = os.path.join(tmp, "plan.lua")
    with open(lua, "wb") as f:
        f.write(p.stdout)
    d = json_doc("transpiled plan run by lua --json", aloft("lua", "--json", lua).stdout)
    check(d is not None and run_logs and d.get("logs") == run_logs,
          f"the transpiled plan logs what the plan logs: {d and d.get('logs')} {run_logs}")

    # skills: a user skill whose description is hostile
    sdir = os.path.join(tmp, "skills")
    os.mkdir(sdir)
    with open(os.path.join(sdir, "hostile.lua"), "wb") as f:
        f.write(b"return {name='hostile', description='" + LUA_HOSTILE + b"', args={}, "
                b"returns='bool', minispec='->True'}\n")
    p = aloft("skills", "--skills", sdir)
    safe_text("skills", p.stdout, ESCAPED)
    safe_text("skills stderr", p.stderr)
    d = json_doc("skills --json", aloft("skills", "--json", "--skills", sdir).stdout)
    check(d is not None and any(s["name"] == "hostile" and has_fffd(s["description"]) for s in d),
          "skills --json: the description with U+FFFD")

    # detect: an image whose file name is not UTF-8
    photos = sorted(glob.glob("/usr/share/darknet/data/*.jpg"))
    if photos:
        img = os.path.join(tmp.encode(), b"photo\xff\x1b.jpg")
        shutil.copy(photos[0], img)
        p = subprocess.run([ALOFT.encode(), b"detect", b"--detector", b"hog", b"--json", img],
                           capture_output=True, timeout=120)
        d = json_doc("detect --json", p.stdout)
        check(d is not None and has_fffd(d[0]["image"]), "detect --json: the image name")
        p = subprocess.run([ALOFT.encode(), b"detect", b"--detector", b"hog", img],
                           capture_output=True, timeout=120)
        safe_text("detect", p.stdout, "photo\\xff\\x1b.jpg")
    else:
        print("note: no darknet photos; detect not covered", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    return failures


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
