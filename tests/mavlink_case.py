"""The frame the MAVLink mission test files share (test_mavlink_fly.py,
test_mavlink_faults.py, test_mavlink_acks.py, test_mavlink_streams.py):
checks that count their failures, a vehicle of the emulator sending to a
udpin port of aloft's, and a main that runs the parts named on the command
line (all without names) in a fresh temporary directory."""
import sys
import tempfile

from mavlink_emu_proc import Emu, free_udp_port
from mavlink_mission import url_in

failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def vehicle(tmp, personality, *args):
    """An emulated vehicle of PERSONALITY (emulator options ARGS) sending to
    a free UDP port: returns (the emulator, aloft's --drone for it)."""
    port = free_udp_port()
    emu = Emu(tmp, "--personality", personality, "--connect", "127.0.0.1:%d" % port, *args)
    return emu, url_in(port)


def main(tests):
    """Runs TESTS (functions of a temporary directory), or those named in
    argv; exits 1 when a check failed."""
    tmp = tempfile.mkdtemp()
    only = sys.argv[1:]
    for t in tests:
        if not only or t.__name__ in only:
            t(tmp)
    print("%d failed" % failures if failures else "ok")
    sys.exit(1 if failures else 0)
