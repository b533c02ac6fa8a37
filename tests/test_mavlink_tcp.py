#!/usr/bin/python3
# labels: mavlink waits
"""A MAVLink mission over `tcp:HOST:PORT` (as to ArduPilot SITL's serial
ports) whose TCP connection drops: the vehicle emulator sits behind a small
TCP-to-UDP relay written here, which closes aloft's connection once the
vehicle is flying.
- The relay listens again: aloft connects again and the mission completes,
  ending where the plan says.
- The relay is gone: the mission ends with the silent-link error in bounded
  time (a JSON report, no death by SIGPIPE on the closed socket), sends no
  landing, and the vehicle's own GCS failsafe (set on in the emulator, off by
  default as in ArduCopter) takes it home."""

import os
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mavlink_emu_proc import Emu  # noqa: E402
from mavlink_mission import PLAN, ends_where, event, mission, write_scene  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def frames(buf):
    """Splits BUF into whole MAVLink frames; returns (frames, the rest)."""
    out = []
    while buf:
        if buf[0] not in (0xFD, 0xFE):
            buf = buf[1:]
            continue
        if len(buf) < 3:
            break
        if buf[0] == 0xFD:
            n = 12 + buf[1] + (13 if buf[2] & 1 else 0)
        else:
            n = 8 + buf[1]
        if len(buf) < n:
            break
        out.append(buf[:n])
        buf = buf[n:]
    return out, buf


class Relay:
    """TCP on one side (aloft connects), the emulator's UDP port on the
    other; each frame from TCP one datagram. drop() closes the current
    connection and, with ACCEPT false, stops listening."""

    def __init__(self, emu_port):
        self.emu = ("127.0.0.1", emu_port)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(4)
        self.port = self.srv.getsockname()[1]
        self.conn = None
        self.accepted = 0
        self.dropped_at = None
        self.lock = threading.Lock()
        self.done = False
        threading.Thread(target=self.accept_loop, daemon=True).start()
        threading.Thread(target=self.from_emu, daemon=True).start()

    def accept_loop(self):
        while not self.done:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            with self.lock:
                self.conn = c
                self.accepted += 1
            threading.Thread(target=self.from_aloft, args=(c,), daemon=True).start()

    def from_aloft(self, c):
        rest = b""
        while True:
            try:
                data = c.recv(65536)
            except OSError:
                return
            if not data:
                return
            fs, rest = frames(rest + data)
            for f in fs:
                self.udp.sendto(f, self.emu)

    def from_emu(self):
        self.udp.settimeout(0.2)
        while not self.done:
            try:
                data, _ = self.udp.recvfrom(65536)
            except OSError:
                continue
            with self.lock:
                c = self.conn
            if c:
                try:
                    c.sendall(data)
                except OSError:
                    pass

    def drop(self, accept):
        self.dropped_at = time.time()
        if not accept:
            try:  # wakes the accept() and stops listening (close alone does not)
                self.srv.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.srv.close()
        with self.lock:
            c, self.conn = self.conn, None
        if c:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:  # aloft closed it first
                pass
            c.close()

    def close(self):
        self.done = True
        at = self.dropped_at
        self.drop(False)
        self.dropped_at = at
        self.udp.close()


def drop_when_flying(emu, relay, accept):
    """Drops the connection 1 s after the vehicle left the ground."""
    def run():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not event(emu, "landed_state", state="TAKEOFF"):
            time.sleep(0.1)
        time.sleep(1.0)
        relay.drop(accept)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def flight(tmp, accept):
    # its GCS failsafe on, 2 s (ArduCopter's is off unless FS_GCS_ENABLE is set)
    emu = Emu(tmp, "--personality", "ardupilot", "--listen", "0", "--fs-gcs-s", "2")
    relay = Relay(emu.port)
    t = drop_when_flying(emu, relay, accept)
    rc, report, err, took = mission("mavlink:tcp:127.0.0.1:%d" % relay.port, PLAN, tmp,
                                    "--scene", write_scene(tmp))
    t.join()
    relay.close()
    emu.stop()
    return emu, relay, rc, report, err, took


def reconnects(tmp):
    emu, relay, rc, report, err, _ = flight(tmp, True)
    landing = event(emu, "landed_state", state="LANDING")
    check(relay.dropped_at and landing and relay.dropped_at < landing[0]["wall"],
          "reconnects: the connection dropped in flight")
    check(relay.accepted >= 2, "reconnects: aloft connected again (%d connections)"
          % relay.accepted)
    check(not event(emu, "gcs_failsafe"), "reconnects: back before the vehicle's GCS failsafe")
    check(rc == 0 and report and report["ok"],
          "reconnects: the mission completes: %d %s" % (rc, err[-400:]))
    for ok, how in ends_where(emu):
        check(ok, "reconnects: " + how)


def gone(tmp):
    emu, relay, rc, report, err, took = flight(tmp, False)
    check(rc == 1 and report is not None and not report["ok"],
          "gone: the mission fails with a report (exit %d, no SIGPIPE): %s" % (rc, err[-300:]))
    error = (report or {}).get("error") or ""
    check("fell silent" in error and "failsafe" in error,
          "gone: the error says the link fell silent and the failsafe acts: %r" % error)
    # The plan is about 20 s; the silence limit is 3 s. Bounded well
    # before the plan could have ended (slack for a loaded machine).
    took_up = event(emu, "landed_state", state="TAKEOFF")
    check(took < 60, "gone: ended in bounded time (%.1f s)" % took)
    check(took_up and not [r for r in emu.received("COMMAND_LONG") if r["fields"]["command"] == 21],
          "gone: no landing was commanded over a dead link")
    fs = event(emu, "gcs_failsafe")
    check(fs and event(emu, "mode", mode="RTL") and relay.dropped_at < fs[0]["wall"],
          "gone: the vehicle's own GCS failsafe acted (RTL) once aloft fell silent: %r" % fs)


def main():
    tmp = tempfile.mkdtemp()
    only = sys.argv[1:]
    for t in (reconnects, gone):
        if not only or t.__name__ in only:
            t(tmp)
    print("%d failed" % failures if failures else "ok")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
