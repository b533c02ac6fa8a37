#!/usr/bin/python3
# labels: mavlink waits
"""`aloft serve` with two MAVLink drones on one shared link, each naming its
vehicle with `--drone mavlink:URL,sysid=N`: two missions at once, each flies
its own vehicle (the drones name them in the reverse order of their ids, so
"the first vehicle heard" would cross them); a bad or doubled sysid is
refused when serve starts."""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402
from mavlink_emu_proc import Emu, free_udp_port  # noqa: E402
from mavlink_mission import event, in_order, near, sequence, write_scene  # noqa: E402
from serve_proc import Events, Serve  # noqa: E402

ALOFT = os.environ.get("ALOFT", "build/aloft")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def env_without_llm():
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_DB"):
        env.pop(k, None)
    return env


def refused_at_start(tmp, drones, wanted):
    """serve with DRONES exits 2 before listening, naming WANTED."""
    args = [ALOFT, "serve", "--port", "0", "--db", os.path.join(tmp, "r.db"), "--model", "fake",
            "--llm-url", "http://127.0.0.1:9/v1"]
    for d in drones:
        args += ["--drone", d]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env_without_llm())
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:  # it took the drones and serves
        p.kill()
        out, err = p.communicate()
    check(p.returncode not in (0, -9) and wanted in err and "listening" not in out,
          "serve refuses %r: %d %r" % (drones, p.returncode, err[-300:]))


def two_missions(tmp):
    port = free_udp_port()
    emu = Emu(tmp, "--personality", "ardupilot", "--sysids", "1,2",
              "--connect", "127.0.0.1:%d" % port)
    link = "mavlink:udpin:127.0.0.1:%d" % port
    fake = Fake(tmp, [{"match": "task-zq-one", "content": "mf(150);->True", "times": -1},
                      {"match": "task-zq-two", "content": "mb(100);->True", "times": -1}])
    srv = Serve(["--drone", link + ",sysid=2", "--drone", link + ",sysid=1",
                 "--scene", write_scene(tmp), "--llm-url", fake.url, "--model", "fake",
                 "--db", os.path.join(tmp, "serve.db"), "--max-tries", "1"],
                env=env_without_llm())
    ends = {}
    try:
        streams = {i: Events(srv, i, timeout=120) for i in (0, 1)}
        for i, task in ((0, "task-zq-one"), (1, "task-zq-two")):
            status, doc = srv.post_json("/api/drones/%d/missions" % i, {"task": task})
            check(status == 202, "drone %d took its mission: %s %s" % (i, status, doc))
        for i, ev in streams.items():
            try:
                ends[i] = ev.until("end", deadline_s=120)
            except (TimeoutError, EOFError) as e:
                check(False, "drone %d: no end of its mission: %s" % (i, e))
            ev.close()
    finally:
        srv.stop()
        fake.stop()
        emu.stop()
    for i in (0, 1):
        end = ends.get(i, {})
        check(end.get("status") == "ok", "drone %d: its mission succeeds: %r %s"
              % (i, end, srv.stderr()[-400:]))
    # drone 0 (sysid=2) flew north 1.5 m, drone 1 (sysid=1) south 1 m
    for sysid, x in ((2, 1.5), (1, -1.0)):
        landing = event(emu, "landed_state", sysid, state="LANDING")
        check(landing and near(landing[0]["pos"], x, 0.0),
              "vehicle %d flew the mission of the drone that names it: %r"
              % (sysid, landing[0]["pos"] if landing else None))
        check(in_order(sequence(emu, sysid), ["armed", "landed:ON_GROUND", "disarmed"]),
              "vehicle %d took off and landed: %r" % (sysid, sequence(emu, sysid)))
    check(not emu.entries("unrouted"), "nothing sent to a vehicle that is not there")


def main():
    tmp = tempfile.mkdtemp()
    only = sys.argv[1:]
    if not only or "refused" in only:
        link = "mavlink:udpin:127.0.0.1:%d" % free_udp_port()
        refused_at_start(tmp, [link + ",sysid=0"], "sysid=0")
        refused_at_start(tmp, [link + ",sysid=256"], "sysid=256")
        refused_at_start(tmp, [link + ",sysid=x"], "sysid=x")
        refused_at_start(tmp, [link + ",sysid=3", link + ",sysid=3"], "drone 0's already")
    if not only or "two_missions" in only:
        two_missions(tmp)
    print("%d failed" % failures if failures else "ok")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
