#!/usr/bin/python3
# labels: web
"""aloft serve refuses what a page on another site, a stranger or bad bytes
send (SPEC §13): state-changing requests (missions, stop) need
application/json and this server's own Origin/Referer, with each content
type a browser sends cross-site without asking first; a task that is not
UTF-8 text gets 400 and /api/drones stays strict JSON; beyond loopback a
token is required (Bearer, or a cookie set by ?token= on the page); https
with --tls-cert/--tls-key; IPv6 with --host ::1."""

import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402
from serve_proc import Events, Serve  # noqa: E402

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
TOKEN = "s3cret-token_0123456789abcdef"
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def wait_for(pred, what, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    check(False, what)
    return False


def raw(srv, method, path, body=b"", headers=None):
    """(status, headers, body bytes) of one request, headers exactly as given."""
    c = srv.conn()
    try:
        c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        hs = {"Host": "%s:%d" % (srv.host, srv.port)}
        hs.update(headers or {})
        for k, v in hs.items():
            if v is not None:
                c.putheader(k, v)
        if body or method == "POST":
            c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        return r.status, r, r.read()
    finally:
        c.close()


def strict_json(data):
    """DATA parsed as JSON whose bytes are UTF-8 and whose strings are all
    Unicode scalar values (no lone surrogates from \\u escapes)."""
    doc = json.loads(data.decode("utf-8", errors="strict"))

    def walk(v):
        if isinstance(v, str):
            v.encode("utf-8", errors="strict")
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
    walk(doc)
    return doc


LONG = "l('waiting');d(60000);->True"

with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_TOKEN"):
        env.pop(k, None)
    office = os.path.join(SRC, "examples/scenes/office.json")
    db = os.path.join(tmp, "m.db")
    fake = Fake(tmp, [{"content": LONG, "times": 20}])
    base = ["--drone", "sim:" + office, "--llm-url", fake.url, "--model", "fake", "--db", db]

    # ---- 1. cross-site requests ----------------------------------------
    srv = Serve(base, env=env)
    try:
        me = "http://127.0.0.1:%d" % srv.port
        task = json.dumps({"task": "wait"}).encode()
        foreign = [
            ({"Content-Type": "text/plain"}, 415, "text/plain"),
            ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "a form"),
            ({"Content-Type": "multipart/form-data; boundary=x"}, 415, "a multipart form"),
            ({"Content-Type": None}, 415, "no content type"),
            ({"Content-Type": "application/jsonx"}, 415, "application/jsonx"),
            ({"Content-Type": "text/plain", "Origin": me}, 415, "text/plain from our page"),
            ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403,
             "a foreign Origin"),
            ({"Content-Type": "application/json", "Origin": "null"}, 403, "Origin null"),
            ({"Content-Type": "application/json", "Origin": me + "0"}, 403,
             "an Origin with our address as a prefix"),
            ({"Content-Type": "application/json", "Origin": "https://127.0.0.1:%d" % srv.port},
             403, "another scheme"),
            ({"Content-Type": "application/json", "Referer": "http://evil.example/x"}, 403,
             "a foreign Referer"),
            ({"Content-Type": "application/json", "Referer": me + ".evil.example/"}, 403,
             "a Referer with our address as a prefix"),
            ({"Content-Type": "application/json", "Origin": "http://evil.example",
              "Referer": me + "/"}, 403, "a foreign Origin with our Referer"),
        ]
        for headers, want, what in foreign:
            status, _, body = raw(srv, "POST", "/api/drones/0/missions", task, headers)
            check(status == want and "error" in json.loads(body),
                  "mission, %s: %s %s" % (what, status, body))
        check(srv.drones()[0]["busy"] is False, "no mission started cross-site")

        # from our own page: started
        status, _, body = raw(srv, "POST", "/api/drones/0/missions", task,
                              {"Content-Type": "application/json; charset=utf-8", "Origin": me})
        check(status == 202, "a mission from our Origin: %s %s" % (status, body))
        wait_for(lambda: srv.drones()[0]["busy"], "flying")
        for headers, want, what in foreign:
            status, _, body = raw(srv, "POST", "/api/drones/0/stop", b"{}", headers)
            check(status == want, "stop, %s: %s %s" % (what, status, body))
        time.sleep(0.3)
        check(srv.drones()[0]["busy"] is True, "no cross-site request stopped the mission")
        status, _, body = raw(srv, "POST", "/api/drones/0/stop", b"{}",
                              {"Content-Type": "application/json", "Referer": me + "/"})
        check(status == 200 and json.loads(body)["stopped"] is True,
              "stop from our page (Referer): %s %s" % (status, body))
        wait_for(lambda: not srv.drones()[0]["busy"], "stopped")
        # localhost is this server too
        status, _, body = raw(srv, "POST", "/api/drones/0/stop", b"{}",
                              {"Content-Type": "application/json",
                               "Host": "localhost:%d" % srv.port,
                               "Origin": "http://localhost:%d" % srv.port})
        check(status == 200, "stop from http://localhost: %s %s" % (status, body))
        # a method other than POST is state-changing too
        status, _, _ = raw(srv, "DELETE", "/api/drones/0/stop", b"", {"Origin": "null"})
        check(status in (403, 415), "DELETE from Origin null: %s" % status)

        # ---- 4. invalid UTF-8 --------------------------------------------
        bad = [
            (b'{"task": "caf\xc3"}', "a cut sequence"),
            (b'{"task": "\xc0\xaf etc"}', "an overlong slash"),
            (b'{"task": "\xe0\x80\xaf"}', "an overlong 3-byte form"),
            (b'{"task": "\xed\xa0\x80 high"}', "a raw surrogate"),
            (b'{"task": "\xf4\x90\x80\x80"}', "past U+10FFFF"),
            (b'{"task": "\xff"}', "a byte never in UTF-8"),
            (b'{"task": "\\ud800 x"}', "an escaped lone high surrogate"),
            (b'{"task": "x \\udc00"}', "an escaped lone low surrogate"),
            (b'{"task": "a\x00b"}', "a raw NUL"),
            (b'{"task": "a\\u0000b"}', "an escaped NUL"),
            (b'{"task": "ok", "x\xc3": 1}', "invalid bytes in a name"),
        ]
        for body, what in bad:
            status, _, out = raw(srv, "POST", "/api/drones/0/missions", body,
                                 {"Content-Type": "application/json"})
            check(status == 400 and "error" in strict_json(out),
                  "%s: %s %s" % (what, status, out))
        status, _, out = raw(srv, "GET", "/api/drones")
        doc = strict_json(out)
        check(status == 200 and doc[0]["busy"] is False, "no mission from bad bytes: %s" % doc)
        # good text, escapes included, is taken as sent
        good = "café \U0001F600 ✓ C:\\u0000"
        body = b'{"task": "caf\xc3\xa9 \\ud83d\\ude00 \xe2\x9c\x93 C:\\\\u0000"}'
        status, _, out = raw(srv, "POST", "/api/drones/0/missions", body,
                             {"Content-Type": "application/json"})
        check(status == 202, "a task in good UTF-8: %s %s" % (status, out))
        status, _, out = raw(srv, "GET", "/api/drones")
        doc = strict_json(out)
        check(doc[0]["task"] == good, "the task as sent: %r" % doc[0]["task"])
        ev = Events(srv, 0)
        start = ev.until("start")
        ev.close()
        check(start.get("task") == good, "the start event's task: %s" % start)
        srv.post_json("/api/drones/0/stop", {})
    finally:
        srv.stop()

    # ---- 5. token, https, IPv6 ------------------------------------------
    def usage(args, e=env):
        r = subprocess.run([ALOFT, "serve"] + base + args, capture_output=True, text=True,
                           env=e, timeout=30)
        return r.returncode, r.stderr

    rc, err = usage(["--host", "0.0.0.0"])
    check(rc == 2 and "token" in err, "beyond loopback without a token: %s %r" % (rc, err))
    rc, err = usage(["--host", "::"])
    check(rc == 2 and "token" in err, "IPv6 any without a token: %s %r" % (rc, err))
    rc, err = usage(["--host", "0.0.0.0", "--token", "short"])
    check(rc == 2 and "16" in err, "a short token: %s %r" % (rc, err))
    rc, err = usage(["--token", "x" * 15])
    check(rc == 2, "15 characters: %s" % rc)
    rc, err = usage(["--token", "x" * 257])
    check(rc == 2, "257 characters: %s" % rc)
    rc, err = usage(["--token", "0123456789abcde;"])
    check(rc == 2, "a token with ';' (a cookie could not carry it): %s" % rc)
    rc, err = usage(["--tls-cert", "/nonexistent"])
    check(rc == 2 and "tls-key" in err, "a certificate without a key: %s %r" % (rc, err))
    rc, err = usage(["--host", "localhost"])
    check(rc == 2 and "IPv4 or IPv6" in err, "--host localhost: %s %r" % (rc, err))

    tenv = dict(env, ALOFT_TOKEN=TOKEN)
    srv = Serve(base, env=tenv)  # 16 characters is enough: the token of ALOFT_TOKEN
    try:
        def get(path, headers=None):
            status, r, body = raw(srv, "GET", path, b"", headers)
            return status, r, body

        status, r, body = get("/api/drones")
        check(status == 401 and "error" in json.loads(body), "no token: %s" % status)
        status, r, body = get("/")
        check(status == 401, "the page without the token: %s" % status)
        wrong = TOKEN[:-1] + ("x" if TOKEN[-1] != "x" else "y")
        for hs, what in (({"Authorization": "Bearer " + wrong}, "a wrong token"),
                         ({"Authorization": "Bearer " + TOKEN[:-1]}, "a prefix of it"),
                         ({"Authorization": "Bearer " + TOKEN + "x"}, "it and more"),
                         ({"Authorization": "Basic " + TOKEN}, "not Bearer"),
                         ({"Cookie": "aloft_token=" + wrong}, "a wrong cookie")):
            status, _, _ = get("/api/drones", hs)
            check(status == 401, "%s: %s" % (what, status))
        status, _, body = get("/api/drones", {"Authorization": "Bearer " + TOKEN})
        check(status == 200 and strict_json(body)[0]["id"] == 0, "Bearer: %s" % status)
        status, _, _ = get("/api/drones?token=" + TOKEN)
        check(status == 401, "the query token is for the page only: %s" % status)
        status, _, _ = get("/?token=" + wrong)
        check(status == 401, "the page with a wrong query token: %s" % status)
        status, r, _ = get("/?token=" + TOKEN)
        cookie = r.getheader("Set-Cookie") or ""
        check(status == 303 and r.getheader("Location") == "/", "?token= redirects: %s" % status)
        check(cookie.startswith("aloft_token=" + TOKEN + ";") and "HttpOnly" in cookie and
              "SameSite=Strict" in cookie, "the cookie: %r" % cookie)
        jar = {"Cookie": "aloft_token=" + TOKEN}
        status, _, body = get("/", jar)
        check(status == 200 and b"<html" in body, "the page with the cookie: %s" % status)
        status, _, _ = get("/api/drones", jar)
        check(status == 200, "the API with the cookie: %s" % status)
        # with a token, any name reaches the server (not loopback: no rebinding)
        status, _, _ = get("/api/drones", dict(jar, Host="drones.example:%d" % srv.port))
        check(status == 200, "another Host with the token: %s" % status)
        # the token does not make a foreign page's request acceptable
        status, _, _ = raw(srv, "POST", "/api/drones/0/stop", b"{}",
                           dict(jar, **{"Content-Type": "application/json",
                                        "Origin": "http://evil.example"}))
        check(status == 403, "a foreign Origin with the cookie: %s" % status)
        status, _, _ = raw(srv, "POST", "/api/drones/0/stop", b"{}",
                           {"Content-Type": "application/json"})
        check(status == 401, "stop without the token: %s" % status)
        status, _, body = raw(srv, "POST", "/api/drones/0/stop", b"{}",
                              {"Content-Type": "application/json",
                               "Authorization": "Bearer " + TOKEN})
        check(status == 200, "stop with the token: %s %s" % (status, body))
    finally:
        srv.stop()

    # https: a certificate made now, for 127.0.0.1
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    made = None
    if shutil.which("openssl"):
        made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                               "-keyout", key, "-out", cert, "-days", "1", "-subj",
                               "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                              capture_output=True, timeout=60).returncode == 0
    if not made:
        print("SKIP https: no openssl to make a certificate with")
    else:
        ctx = ssl.create_default_context(cafile=cert)
        srv = Serve(base + ["--tls-cert", cert, "--tls-key", key], env=tenv, ssl_context=ctx,
                    headers={"Authorization": "Bearer " + TOKEN})
        try:
            check(srv.url.startswith("https://127.0.0.1:"), "https URL: %s" % srv.url)
            check(srv.drones()[0]["id"] == 0, "the drones over https")
            status, r, _ = raw(srv, "GET", "/?token=" + TOKEN, b"", {"Authorization": None})
            check(status == 303 and "Secure" in (r.getheader("Set-Cookie") or ""),
                  "the cookie is Secure over https: %s" % r.getheader("Set-Cookie"))
            status, _, body = raw(srv, "POST", "/api/drones/0/stop", b"{}",
                                  {"Content-Type": "application/json",
                                   "Authorization": "Bearer " + TOKEN,
                                   "Origin": "https://127.0.0.1:%d" % srv.port})
            check(status == 200, "stop from our https page: %s %s" % (status, body))
            status, _, _ = raw(srv, "POST", "/api/drones/0/stop", b"{}",
                               {"Content-Type": "application/json",
                                "Authorization": "Bearer " + TOKEN,
                                "Origin": "http://127.0.0.1:%d" % srv.port})
            check(status == 403, "an http Origin to the https server: %s" % status)
            # plain http to the https port gets nothing useful
            c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
            try:
                c.request("GET", "/api/drones")
                plain = c.getresponse().status
            except (http.client.HTTPException, OSError):
                plain = None
            c.close()
            check(plain != 200, "plain http to the https port: %s" % plain)
        finally:
            srv.stop()
        with open(os.path.join(tmp, "junk.pem"), "w") as f:
            f.write("not a certificate\n")
        rc, err = usage(["--tls-cert", os.path.join(tmp, "junk.pem"), "--tls-key", key])
        check(rc == 1 and "certificate" in err, "a junk certificate: %s %r" % (rc, err))
        rc, err = usage(["--tls-cert", cert, "--tls-key", os.path.join(tmp, "none.pem")])
        check(rc == 1 and "none.pem" in err, "a missing key: %s %r" % (rc, err))

    # IPv6 loopback
    try:
        s6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s6.bind(("::1", 0))
        s6.close()
        have6 = True
    except OSError as e:
        print("SKIP IPv6: ::1 cannot be bound here:", e)
        have6 = False
    if have6:
        srv = Serve(base + ["--host", "::1"], env=env)
        try:
            check(srv.url.startswith("http://[::1]:"), "IPv6 URL: %s" % srv.url)
            status, _, body = raw(srv, "GET", "/api/drones", b"",
                                  {"Host": "[::1]:%d" % srv.port})
            check(status == 200 and strict_json(body)[0]["id"] == 0, "over ::1: %s" % status)
            status, _, _ = raw(srv, "GET", "/api/drones", b"", {"Host": "evil.example"})
            check(status == 403, "a foreign Host over ::1: %s" % status)
            status, _, body = raw(srv, "POST", "/api/drones/0/stop", b"{}",
                                  {"Host": "[::1]:%d" % srv.port,
                                   "Content-Type": "application/json",
                                   "Origin": "http://[::1]:%d" % srv.port})
            check(status == 200, "stop from our page over ::1: %s %s" % (status, body))
        finally:
            srv.stop()
    fake.stop()

if failures:
    print("%d check(s) failed" % failures)
    sys.exit(1)
print("ok")
