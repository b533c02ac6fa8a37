"""Starts tests/fake_llm.py as a process for Python tests and reads what it
received. (C tests use tests/fake_llm.h.)"""
import atexit
import json
import os
import subprocess
import tempfile
import time

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_llm.py")


class Fake:
    """The fake OpenAI-compatible server serving RESPONSES in order, streamed
    at RATE tokens per second (0: as fast as it can)."""

    def __init__(self, tmp, responses, rate=0):
        self.dir = tempfile.mkdtemp(dir=tmp)
        script = os.path.join(self.dir, "script.json")
        with open(script, "w") as f:
            json.dump({"responses": responses}, f)
        port_file = os.path.join(self.dir, "port")
        self.log = os.path.join(self.dir, "log.jsonl")
        self.proc = subprocess.Popen(["/usr/bin/python3", FAKE, "--script", script,
                                      "--port-file", port_file, "--log", self.log,
                                      "--token-rate", str(rate)])
        # a test that dies of an exception must not leave the server holding
        # ctest's output pipe (ctest then waits for it until its timeout)
        atexit.register(self.stop)
        deadline = time.monotonic() + 60  # only against a server that never starts
        while time.monotonic() < deadline:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    port = f.read().strip()
                if port:
                    self.url = f"http://127.0.0.1:{port}/v1"
                    return
            time.sleep(0.01)
        self.stop()
        raise RuntimeError("the fake LLM server did not start")

    def requests(self):
        """Every request the server received, in order."""
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait()
