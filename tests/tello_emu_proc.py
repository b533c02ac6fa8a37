"""Starts tests/tools/tello_emu (the Tello emulator, built beside aloft) as a
process for Python tests and reads the commands it received."""
import atexit
import os
import socket
import subprocess
import tempfile

ALOFT = os.environ.get("ALOFT", "build/aloft")
BUILD = os.environ.get("BUILD", os.path.dirname(ALOFT) or ".")
EMU = os.path.join(BUILD, "tello_emu")


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Emu:
    """One tello_emu process on loopback, with its command log."""

    def __init__(self, tmp, *args, camera=False):
        """CAMERA: the emulator streams H.264 to our video port after
        `streamon` (tests/tools/tello_video.h; ARGS may add its faults)."""
        self.state_port = free_udp_port()
        self.video_port = free_udp_port()
        fd, self.log = tempfile.mkstemp(dir=tmp, suffix=".log")
        os.close(fd)
        video = ["--video-port", str(self.video_port)] if camera else []
        self.proc = subprocess.Popen(
            [EMU, "--port", "0", "--state-port", str(self.state_port), "--log", self.log,
             "--max-runtime-s", "120"] + video + list(args),
            stdout=subprocess.PIPE, text=True)
        atexit.register(self.stop)
        line = self.proc.stdout.readline()
        if not line.startswith("port "):
            raise RuntimeError("tello_emu did not start: %r" % line)
        self.port = int(line.split()[1])

    def args(self, host="127.0.0.1"):
        return ["--drone", "tello:" + host, "--tello-port", str(self.port),
                "--tello-state-port", str(self.state_port),
                "--tello-video-port", str(self.video_port)]

    def lines(self, kind):
        with open(self.log) as f:
            return [l.rstrip("\n")[len(kind) + 1:] for l in f if l.startswith(kind + " ")]

    def sent(self):
        """The commands received, repeated stops folded into one."""
        out = []
        for c in self.lines("recv"):
            if not (c == "stop" and out and out[-1] == "stop"):
                out.append(c)
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait()
        self.proc.stdout.close()
