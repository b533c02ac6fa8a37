"""Starts tests/mavlink/vehicle_emu.js (the MAVLink vehicle emulator, on
node-mavlink) as a process for Python tests, and reads its log: one JSON
line per message received and per state change."""
import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SRC = os.environ.get("SRC", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MAVLINK_DIR = os.path.join(SRC, "tests", "mavlink")
EMU = os.path.join(MAVLINK_DIR, "vehicle_emu.js")
GCS = os.path.join(MAVLINK_DIR, "gcs_script.js")
VECTORS = os.path.join(MAVLINK_DIR, "vectors.js")
NODE = shutil.which("node") or "node"


def require_node_mavlink():
    """Fails the test, naming the set-up step, when node-mavlink is missing:
    make test installs it (scripts/setup.sh --test)."""
    if not os.path.isdir(os.path.join(MAVLINK_DIR, "node_modules", "node-mavlink")):
        print("FAIL: node-mavlink is not installed in tests/mavlink; run scripts/setup.sh --test")
        sys.exit(1)


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Emu:
    """One vehicle_emu.js process on loopback, with its log. ARGS are the
    emulator's options (--personality, --sysids, --connect or --listen,
    faults); its UDP port is self.port."""

    def __init__(self, tmp, *args, max_runtime_s=120):
        require_node_mavlink()
        fd, self.log = tempfile.mkstemp(dir=tmp, suffix=".emu.log")
        os.close(fd)
        self.proc = subprocess.Popen(
            [NODE, EMU, "--log", self.log, "--max-runtime-s", str(max_runtime_s)] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        atexit.register(self.stop)
        line = self.proc.stdout.readline()
        if not line.startswith("port "):
            raise RuntimeError("vehicle_emu did not start: %r %r" % (line, self.proc.stderr.read()))
        self.port = int(line.split()[1])

    def entries(self, kind=None):
        """The log's entries (dicts with 'kind' added), of KIND if given."""
        out = []
        with open(self.log) as f:
            for line in f:
                k, _, body = line.partition(" ")
                if kind is None or k == kind:
                    try:
                        e = json.loads(body)
                    except ValueError:
                        continue  # a line being written as we read
                    e["kind"] = k
                    out.append(e)
        return out

    def received(self, msg, sysid=None):
        """The messages named MSG the emulator received (for SYSID)."""
        return [e for e in self.entries("recv")
                if e["msg"] == msg and (sysid is None or e["sysid"] == sysid)]

    def events(self, sysid=None):
        """The state changes, as (event, details) for SYSID or all."""
        return [e for e in self.entries("state") if sysid is None or e.get("sysid") == sysid]

    def wait_for(self, pred, timeout=30.0):
        """Polls the log until PRED(entries) is true; returns whether it was."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pred(self.entries()):
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


class Gcs:
    """tests/mavlink/gcs_script.js (a ground station on node-mavlink) running
    SCRIPT (a list of steps, see that file) against the emulator: CONNECT to
    the emulator's --listen port, or LISTEN on a port the emulator
    --connect's to. result() waits and returns (received, steps)."""

    def __init__(self, script, connect=None, listen=None, sysid=255):
        require_node_mavlink()
        args = [NODE, GCS, "--sysid", str(sysid)]
        args += ["--connect", "127.0.0.1:%d" % connect] if connect else ["--listen", str(listen)]
        self.proc = subprocess.Popen(args + [json.dumps(script)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        atexit.register(self.kill)

    def result(self, timeout=90):
        out, err = self.proc.communicate(timeout=timeout)
        if self.proc.returncode != 0:
            raise RuntimeError("gcs_script failed: " + err)
        lines = [json.loads(l) for l in out.splitlines() if l.strip()]
        return ([l for l in lines if l["kind"] == "recv"],
                [l for l in lines if l["kind"] == "step"])

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def gcs(script, connect=None, listen=None, sysid=255, timeout=90):
    """Runs a Gcs to its end; returns (received messages, step results)."""
    return Gcs(script, connect, listen, sysid).result(timeout)
