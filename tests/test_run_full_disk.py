# labels: waits
"""A full disk or a file-size limit ends a mission cleanly (SPEC §2, §12):
the process is not killed by SIGXFSZ, the drone lands, `run --json` still
prints exactly one document with "ok" false and the error, and what the
store could still write records it. Covered: RLIMIT_FSIZE before the store
opens, RLIMIT_FSIZE in flight (on the Tello emulator, which must see
`land`), a full filesystem for the pictures (a small tmpfs, when this test
may mount one) and for the store, and a --json report that stdout cannot
take."""

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tello_emu_proc import Emu  # noqa: E402

ALOFT = os.environ["ALOFT"]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


def limit(nbytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return apply


def aloft(*args, fsize=None, stdout=subprocess.PIPE):
    e = dict(os.environ)
    e.pop("ALOFT_DB", None)
    return subprocess.run([ALOFT, *args], stdout=stdout, stderr=subprocess.PIPE, env=e,
                          timeout=120, preexec_fn=limit(fsize) if fsize else None)


def failed_doc(name, p, says):
    """P ended by itself with exit 1 and one failure document saying SAYS."""
    check(p.returncode != -signal.SIGXFSZ, f"{name}: killed by SIGXFSZ")
    check(p.returncode == 1, f"{name}: exit {p.returncode}: {p.stderr[-400:]!r}")
    lines = p.stdout.decode("utf-8").splitlines()
    check(len(lines) == 1, f"{name}: one document, got {len(lines)} lines")
    try:
        doc = json.loads(p.stdout.decode("utf-8"))
    except ValueError:
        check(False, f"{name}: no JSON document: {p.stdout[:300]!r}")
        return {}
    check(doc.get("ok") is False, f"{name}: ok false")
    err = doc.get("error") or ""
    check(any(s in err for s in says), f"{name}: error {err!r} says one of {says}")
    return doc


def landed(sent):
    """The emulator took off and was told to land last of all motions."""
    motions = [c for c in sent if c.split()[0] not in ("streamoff", "stop", "command")]
    return "takeoff" in motions and motions[-1] == "land"


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                       capture_output=True)
    return r.returncode == 0


def main():
    tmp = tempfile.mkdtemp(prefix="aloft-full-disk-")
    scene = os.path.join(tmp, "scene.json")
    with open(scene, "w") as f:
        json.dump({"drone": {"x": 0, "y": 0, "z": 100, "yaw": 0}, "objects": []}, f)
    plan = os.path.join(tmp, "plan.ms")
    with open(plan, "w") as f:
        f.write("tc(10);l('x')\n")
    many = os.path.join(tmp, "many.ms")
    with open(many, "w") as f:
        f.write("500{l('" + "x" * 200 + "')}\n")
    pictures = os.path.join(tmp, "pictures.ms")
    with open(pictures, "w") as f:
        f.write("200{tp}\n")

    # 1. RLIMIT_FSIZE: a new store cannot be written at all
    p = aloft("run", "--json", "--scene", scene, "--plan", plan, "--db",
              os.path.join(tmp, "new.db"), fsize=8192)
    failed_doc("fsize, new store", p, ["cannot record the mission"])

    # 2. RLIMIT_FSIZE in flight: a store that grows past the limit during
    # the mission ends it; the Tello lands.
    db = os.path.join(tmp, "m.db")
    p = aloft("run", "--scene", scene, "--plan", plan, "--db", db, "--quiet")
    check(p.returncode == 0, f"a first mission makes the store: {p.stderr!r}")
    size = os.path.getsize(db)
    emu = Emu(tmp)
    try:
        p = aloft("run", "--json", *emu.args(), "--plan", many, "--db", db,
                  fsize=size + 64 * 1024)
        doc = failed_doc("fsize in flight", p, ["mission store"])
        check(0 < len(doc.get("calls", [])) < 500, "fsize in flight: it stopped mid-mission")
        sent = emu.sent()
        check(landed(sent), f"fsize in flight: landed: {sent[-4:]}")
    finally:
        emu.stop()

    # 3. a --json report that stdout cannot take (a file past RLIMIT_FSIZE)
    script = os.path.join(tmp, "big.lua")
    with open(script, "w") as f:
        f.write("for i = 1, 200 do print(string.rep('y', 100)) end\n")
    with open(os.path.join(tmp, "out.json"), "wb") as out:
        p = aloft("lua", "--json", script, fsize=4096, stdout=out)
    check(p.returncode != -signal.SIGXFSZ, "lua --json past the limit: killed by SIGXFSZ")
    check(p.returncode == 1, f"lua --json past the limit: exit {p.returncode}")
    check(b"could not be written" in p.stderr, f"lua --json: says so: {p.stderr!r}")

    # 4. a full filesystem for the pictures, then for the store
    small = os.path.join(tmp, "small")
    if not mount_tmpfs(small, "96k"):
        print("note: cannot mount a tmpfs here; full-disk cases not covered", file=sys.stderr)
        return failures
    try:
        p = aloft("run", "--json", "--scene", scene, "--plan", pictures, "--db", db,
                  "--pictures", small)
        doc = failed_doc("full disk, pictures", p, ["No space left"])
        mid = doc.get("mission_id")
        shots = [c for c in doc.get("calls", []) if c["skill"] == "take_picture"]
        check(0 < len(shots) < 200, f"full disk: stopped at the picture that did not fit")
        r = aloft("log", "--db", db, "--json", str(mid))
        rec = json.loads(r.stdout.decode("utf-8")) if r.returncode == 0 else {}
        m = rec.get("mission", {})
        check(m.get("status") == "failed" and "No space left" in (m.get("error") or ""),
              f"full disk: the store records the failure: {m}")
        subprocess.run(["umount", small])
        check(mount_tmpfs(small, "160k"), "remount")
        emu = Emu(tmp)
        try:
            p = aloft("run", "--json", *emu.args(), "--plan", many, "--db",
                      os.path.join(small, "s.db"))
            failed_doc("full disk, store", p, ["full", "cannot record"])
            sent = emu.sent()
            check(landed(sent), f"full store: landed: {sent[-4:]}")
        finally:
            emu.stop()
    finally:
        subprocess.run(["umount", small])
    subprocess.run(["rm", "-rf", tmp])
    return failures


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
