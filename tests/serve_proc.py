"""Starts `aloft serve --port 0` for Python tests and talks to it over HTTP:
JSON requests, the Server-Sent Events stream and the MJPEG camera."""
import atexit
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ALOFT = os.environ.get("ALOFT", "build/aloft")


class Serve:
    """aloft serve with ARGS (BINARY: another build of aloft); the URL it
    printed is in .url."""

    def __init__(self, args, env=None, binary=None, ssl_context=None, headers=None):
        # SSL_CONTEXT: for https; HEADERS: sent with every request (a token)
        self.ssl_context = ssl_context
        self.headers = headers or {}
        # stderr to a file: a pipe nobody reads could fill and stall the server
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([binary or ALOFT, "serve", "--port", "0"] + args,
                                     stdout=subprocess.PIPE, stderr=self.err, text=True,
                                     env=env)
        atexit.register(self.reap)
        line = self.proc.stdout.readline()
        if not line.startswith(("listening on http://", "listening on https://")):
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("aloft serve did not start: %r %s" % (line, self.stderr()))
        self.url = line.split()[2]
        u = urllib.parse.urlparse(self.url)
        self.host, self.port, self.scheme = u.hostname, u.port, u.scheme

    def reap(self):
        """Kills the server if a failed test left it running."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def stderr(self):
        """What the server wrote to stderr so far."""
        self.err.seek(0)
        return self.err.read()

    def conn(self, timeout=30):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout,
                                               context=self.ssl_context)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None):
        """(status, parsed JSON or raw bytes)"""
        c = self.conn()
        try:
            c.request(method, path, body=body, headers=dict(self.headers, **(headers or {})))
            r = c.getresponse()
            data = r.read()
            if r.getheader("Content-Type", "").startswith("application/json"):
                data = json.loads(data)
            return r.status, data
        finally:
            c.close()

    def post_json(self, path, doc):
        return self.request("POST", path, json.dumps(doc),
                            {"Content-Type": "application/json"})

    def drones(self):
        status, doc = self.request("GET", "/api/drones")
        assert status == 200, status
        return doc

    def stop(self, sig=None):
        """Ends the server (SIGINT by default); returns its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig or 2)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


class Events:
    """A drone's event stream: next() returns (kind, data) events."""

    def __init__(self, serve, drone, timeout=30):
        self.c = serve.conn(timeout)
        self.c.request("GET", "/api/drones/%d/events" % drone, headers=serve.headers)
        self.r = self.c.getresponse()
        assert self.r.status == 200, self.r.status
        assert self.r.getheader("Content-Type").startswith("text/event-stream")

    def next(self):
        kind, data = None, []
        while True:
            line = self.r.readline()  # the response's: it may be chunked
            if not line:
                raise EOFError("the event stream ended")
            line = line.decode().rstrip("\r\n")
            if line == "":
                if data:
                    return kind or "message", json.loads("\n".join(data))
                kind, data = None, []
            elif line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())

    def until(self, kind, pred=lambda d: True, seen=None, deadline_s=60):
        """Events up to and including the first KIND that PRED accepts; all
        of them are appended to SEEN."""
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            k, d = self.next()
            if seen is not None:
                seen.append((k, d))
            if k == kind and pred(d):
                return d
        raise TimeoutError("no %s event" % kind)

    def close(self):
        self.c.close()


def mjpeg_frames(serve, drone, count, timeout=30):
    """The first COUNT JPEG frames of the drone's camera stream."""
    c = serve.conn(timeout)
    c.request("GET", "/api/drones/%d/camera.mjpg" % drone)
    r = c.getresponse()
    ctype = r.getheader("Content-Type")
    frames = []
    try:
        assert r.status == 200 and ctype.startswith("multipart/x-mixed-replace"), ctype
        boundary = ctype.split("boundary=")[1].encode()
        while len(frames) < count:
            line = r.fp.readline()
            if not line:
                break
            if line.strip() != b"--" + boundary:
                continue
            length = None
            while True:
                h = r.fp.readline().strip()
                if not h:
                    break
                name, _, value = h.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            frames.append(r.fp.read(length))
    finally:
        c.close()
    return frames


class SlowClients:
    """N connections that send a request's headers a byte a second and
    never finish; any the server closes is opened again."""

    def __init__(self, srv, n):
        self.srv, self.n = srv, n
        self.socks = []
        self.reopened = 0
        self.stop = threading.Event()
        for _ in range(n):
            self.socks.append(self.open())
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def open(self):
        s = socket.create_connection((self.srv.host, self.srv.port), timeout=5)
        s.sendall(b"GET /api/drones HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        return s

    def run(self):
        while not self.stop.wait(1.0):
            for i, s in enumerate(self.socks):
                if self.stop.is_set():
                    return
                try:
                    s.sendall(b"a")
                except OSError:
                    s.close()
                    try:
                        self.socks[i] = self.open()
                        self.reopened += 1
                    except OSError:
                        pass

    def close(self):
        self.stop.set()
        self.thread.join()
        for s in self.socks:
            s.close()


def open_stream(srv, drone, source="127.0.0.1"):
    """A raw event stream from SOURCE: (socket, status, first bytes)."""
    s = socket.create_connection((srv.host, srv.port), timeout=10,
                                 source_address=(source, 0))
    s.sendall(b"GET /api/drones/%d/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % drone)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    status = int(data.split(b" ")[1]) if data.startswith(b"HTTP/1.1 ") else None
    return s, status, data


def start_browser(profile):
    """Headless Chromium under selenium, its profile in PROFILE (a directory of
    the test's, removed with it: left to itself Chromium makes one under /tmp
    and may leave it); the test fails (exit 1) without it."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:
        print("FAIL: selenium is missing (scripts/setup.sh --test installs python3-selenium):", e)
        sys.exit(1)
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1600", "--no-first-run", "--disable-extensions",
              "--user-data-dir=" + profile):
        opts.add_argument(a)
    try:
        return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    except Exception as e:  # any reason Chromium does not come up fails the test
        print("FAIL: headless Chromium does not start (scripts/setup.sh --test installs "
              "chromium and chromium-driver):", e)
        sys.exit(1)
