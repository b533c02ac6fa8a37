"""take_picture in `aloft run` (SPEC §5): each mission writes into a
directory of its own under --pictures (aloft-pictures-XXXXXX, 0700), at
most --max-pictures pictures (default 100) and --max-picture-bytes bytes
(default 64M); past a cap take_picture returns False and the mission goes
on. Names planted in the pictures directory, symlinks included, are never
written through."""

import json
import os
import stat
import subprocess
import sys
import tempfile

ALOFT = os.environ["ALOFT"]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


def fly(tmp, plan, *args):
    """Runs PLAN in an empty scene; returns (exit status, report)."""
    path = os.path.join(tmp, "plan.ms")
    with open(path, "w") as f:
        f.write(plan)
    p = subprocess.run([ALOFT, "run", "--json", "--quiet", "--scene", SCENE, "--plan", path,
                        "--db", os.path.join(tmp, "m.db"), *args],
                       capture_output=True, timeout=300)
    try:
        return p.returncode, json.loads(p.stdout.decode("utf-8"))
    except ValueError:
        check(False, f"{plan} {args}: no report: {p.stdout!r} {p.stderr!r}")
        return p.returncode, {"calls": []}


def pictures_of(doc):
    return [c["ret"] for c in doc["calls"] if c["skill"] == "take_picture"]


def cap_check(tmp, name, plan, args, want):
    parent = tempfile.mkdtemp(dir=tmp)
    rc, doc = fly(tmp, plan, "--pictures", parent, *args)
    rets = pictures_of(doc)
    saved = [r for r in rets if isinstance(r, str)]
    check(rc == 0 and doc.get("ok") is True, f"{name}: the mission goes on past the cap")
    check(len(saved) == want, f"{name}: {len(saved)} pictures, want {want}")
    check(rets[:want] == saved and all(r is False for r in rets[want:]),
          f"{name}: pictures first, then False: {rets[:want + 2]}")
    dirs = os.listdir(parent)
    check(len(dirs) == (1 if want else 0), f"{name}: one directory for the mission: {dirs}")
    if dirs and not os.path.isdir(os.path.join(parent, dirs[0])):
        check(False, f"{name}: pictures in a directory of their own: {dirs[:3]}")
    elif dirs:
        d = os.path.join(parent, dirs[0])
        st = os.lstat(d)
        check(stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700,
              f"{name}: a real directory, 0700: {oct(st.st_mode)}")
        check(dirs[0].startswith("aloft-pictures-") and len(dirs[0]) == len("aloft-pictures-") + 6,
              f"{name}: named aloft-pictures-XXXXXX: {dirs[0]}")
        files = os.listdir(d)
        check(len(files) == want, f"{name}: {len(files)} files on disk")
        check(all(os.path.dirname(s) == d for s in saved), f"{name}: every path in it")
        for s in saved[:1]:
            with open(s, "rb") as f:
                check(f.read(4) == b"\x89PNG", f"{name}: a PNG")
    return saved


def test_caps(tmp):
    cap_check(tmp, "count cap 5", "200{tp}", ["--max-pictures", "5"], 5)
    cap_check(tmp, "count cap 1", "3{tp}", ["--max-pictures", "1"], 1)
    cap_check(tmp, "default count cap", "200{tp}", [], 100)
    # The empty scene's pictures are all alike: the byte cap at, just inside
    # and just outside a whole number of pictures.
    one = cap_check(tmp, "one picture", "tp", [], 1)
    size = os.path.getsize(one[0])
    cap_check(tmp, "bytes cap at 2 pictures", "10{tp}", ["--max-picture-bytes", str(2 * size)], 2)
    cap_check(tmp, "bytes cap one short of 2", "10{tp}",
              ["--max-picture-bytes", str(2 * size - 1)], 1)
    cap_check(tmp, "bytes cap one past 2", "10{tp}",
              ["--max-picture-bytes", str(2 * size + 1)], 2)
    cap_check(tmp, "bytes cap below one", "3{tp}", ["--max-picture-bytes", str(size - 1)], 0)
    # --replay flies again under the recorded caps
    parent = tempfile.mkdtemp(dir=tmp)
    rc, doc = fly(tmp, "4{tp}", "--pictures", parent, "--max-pictures", "2")
    p = subprocess.run([ALOFT, "run", "--json", "--quiet", "--replay", str(doc.get("mission_id")),
                        "--db", os.path.join(tmp, "m.db"), "--pictures", parent],
                       capture_output=True, timeout=120)
    rep = json.loads(p.stdout.decode("utf-8")) if p.stdout else {"calls": []}
    rets = pictures_of(rep)
    check(len(rets) == 4 and rets[2:] == [False, False] and all(rets[:2]),
          f"replay keeps the recorded cap: {rets}")
    for bad in (["--max-pictures", "0"], ["--max-pictures", "-1"], ["--max-pictures", "x"],
                ["--max-picture-bytes", "0"]):
        rc, doc = fly(tmp, "tp", *bad)
        check(rc == 2 and doc.get("ok") is False, f"{bad}: a usage error")


def test_planted_symlinks(tmp):
    """The names an attacker can predict in a shared pictures directory (the
    old scheme: aloft-PID-K.png) are planted as symlinks to a file while the
    mission waits before its picture; the file stays as it was."""
    parent = tempfile.mkdtemp(dir=tmp)
    os.chmod(parent, 0o1777)  # like /tmp
    target = os.path.join(tmp, "precious")
    with open(target, "w") as f:
        f.write("precious")
    plan = os.path.join(tmp, "slow.ms")
    with open(plan, "w") as f:
        f.write("d(1500);tp;tp")
    p = subprocess.Popen([ALOFT, "run", "--json", "--quiet", "--scene", SCENE, "--plan", plan,
                          "--db", os.path.join(tmp, "m.db"), "--pictures", parent,
                          "--time-scale", "1"], stdout=subprocess.PIPE)
    for k in range(1, 10):
        for name in (f"aloft-{p.pid}-{k}.png", f"picture-00{k}.png"):
            os.symlink(target, os.path.join(parent, name))
    out, _ = p.communicate(timeout=120)
    doc = json.loads(out.decode("utf-8"))
    saved = pictures_of(doc)
    check(p.returncode == 0 and len(saved) == 2 and all(isinstance(s, str) for s in saved),
          f"pictures taken beside the planted names: {saved}")
    with open(target, "rb") as f:
        check(f.read() == b"precious", "the symlinks' target is untouched")
    for s in saved:
        if isinstance(s, str):
            check(not os.path.islink(s) and not os.path.islink(os.path.dirname(s)),
                  f"{s}: no symlink on the way")


def main():
    global SCENE
    tmp = tempfile.mkdtemp(prefix="aloft-pictures-test-")
    SCENE = os.path.join(tmp, "scene.json")
    with open(SCENE, "w") as f:
        json.dump({"drone": {"x": 0, "y": 0, "z": 100, "yaw": 0}, "objects": []}, f)
    test_caps(tmp)
    test_planted_symlinks(tmp)
    subprocess.run(["rm", "-rf", tmp])
    return failures


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
