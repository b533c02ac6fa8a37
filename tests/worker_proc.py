"""Finding the worker processes (SPEC §6) of an aloft process, for tests."""
import os
import time


def orphan_workers(program):
    """Workers of PROGRAM whose host is gone (adopted by init or by a
    subreaper such as ctest): a worker must end when its host's end of the
    socket closes."""
    found = []
    prog = os.path.realpath(program)
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if f.read().split(b"\0")[1:2] != [b"__worker"]:
                    continue
            if os.path.realpath("/proc/%s/exe" % d) != prog:
                continue
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if os.path.realpath("/proc/%d/exe" % ppid) != prog:
                found.append(int(d))
        except (OSError, ValueError, IndexError):
            continue
    return found


def workers_of(pid):
    """The pids of PID's worker processes (`aloft __worker 3`, its children)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid and argv[1:2] == [b"__worker"]:
            found.append(int(d))
    return found


def busy_workers(pid):
    """The pids of PID's workers that host a mission: a worker runs one
    thread at rest and one more for each mission it hosts (a server starts
    its workers before any mission, so a new mission's worker is not
    necessarily a new process)."""
    busy = []
    for w in workers_of(pid):
        try:
            if len(os.listdir("/proc/%d/task" % w)) > 1:
                busy.append(w)
        except OSError:
            continue
    return busy


def wait_worker(pid, timeout=60):
    """The first worker of PID once it has one, or None after TIMEOUT s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        w = workers_of(pid)
        if w:
            return w[0]
        time.sleep(0.01)
    return None
