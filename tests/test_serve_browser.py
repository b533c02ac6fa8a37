#!/usr/bin/python3
"""The web UI in headless Chromium (Debian's chromium, chromium-driver and
python3-selenium, installed by `scripts/setup.sh --test`): the page lists
the drones with their camera, a typed task is flown and its plan and log
appear as they stream, text from the server is shown as text, and Stop ends
a long mission, clicked while another client holds 200 slow connections and
asks for 100 event streams; a drone blown out of its geofence shows the
watch's violation in its log as such. A machine that cannot run Chromium fails this
test."""

import json
import os
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402
from serve_proc import Serve, SlowClients, open_stream, start_browser  # noqa: E402

SRC = os.environ.get("SRC", ".")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


PLAN = "l('hello web');tc(90);mf(50);->True"
LONG = "l('waiting');d(60000);->True"
WINDY = "l('waiting in the wind');d(6000);->True"

with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    office = os.path.join(SRC, "examples/scenes/office.json")
    spec = os.path.join(SRC, "examples/scenes/spec-example.json")
    # drone 1 flies the spec's example scene in a wind, in a 60 cm geofence
    windy = os.path.join(tmp, "windy.json")
    with open(spec) as f:
        doc = json.load(f)
    doc.setdefault("limits", {})["geofence_radius"] = 60
    doc["wind"] = {"speed": 45, "heading": 90}
    with open(windy, "w") as f:
        json.dump(doc, f)
    fake = Fake(tmp, [{"content": PLAN}, {"content": LONG}, {"content": WINDY},
                      {"content": "l('back inside');->True", "times": 3}], rate=40)
    srv = Serve(["--drone", "sim:" + office, "--drone", "sim:" + windy, "--llm-url", fake.url,
                 "--model", "fake", "--db", os.path.join(tmp, "m.db")], env=env)
    browser = None
    try:
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import WebDriverWait

        browser = start_browser(os.path.join(tmp, "chromium"))
        wait = WebDriverWait(browser, 40, poll_frequency=0.1)

        def until(what, fn):
            try:
                return wait.until(lambda b: fn())
            except TimeoutException:
                check(False, what)
                return None

        def q(drone, cls):
            return browser.find_element(By.CSS_SELECTOR, "#drone-%d .%s" % (drone, cls))

        def text(drone, cls):
            return browser.execute_script("return arguments[0].textContent", q(drone, cls))

        def log_lines(drone):
            # in one call: the list is replaced when a mission starts
            return browser.execute_script(
                "return Array.from(document.querySelectorAll(arguments[0]), li => li.textContent)",
                "#drone-%d .log li" % drone)

        browser.get(srv.url)
        until("both drone cards", lambda: len(browser.find_elements(By.CSS_SELECTOR, ".drone")) == 2)
        check("sim:" in text(0, "name"), "drone 0's name: %r" % text(0, "name"))
        until("drone 0's scene description", lambda: "table_" in text(0, "scene"))
        until("the camera shows frames", lambda: browser.execute_script(
            "const i = arguments[0]; return i.complete && i.naturalWidth > 0", q(1, "camera")))

        # a task typed and flown: the plan and the log appear as they stream
        q(0, "task").send_keys("Say hello, turn right and go forward.")
        q(0, "fly").click()
        until("a first piece of the plan", lambda: text(0, "plan").startswith("l("))
        until("the whole plan", lambda: text(0, "plan") == PLAN)
        until("the mission ends ok", lambda: text(0, "status") == "ok")
        lines = log_lines(0)
        check(any("hello web" in li for li in lines), "the log line: %s" % lines)
        check(any(li == "▶ tc(90)" for li in lines), "a statement: %s" % lines)
        check(any(li.startswith("move_forward(50)") for li in lines), "a skill call: %s" % lines)
        check(any(li == "mission ok" for li in lines), "the end: %s" % lines)
        until("the pose after the mission", lambda: "yaw 90" in text(0, "pose"))

        # a long mission stopped with the button; markup in the task stays text
        task = 'wait <b id="injected">here</b>'
        q(0, "task").clear()
        q(0, "task").send_keys(task)
        q(0, "fly").click()
        until("the delay starts", lambda: any(li.startswith("delay(") for li in log_lines(0)))
        check(text(0, "status") == "flying", "flying: %r" % text(0, "status"))
        check(("task: " + task) in log_lines(0), "the task shown as typed: %s" % log_lines(0))
        check(browser.execute_script("return document.getElementById('injected')") is None,
              "markup from the server is not inserted as HTML")
        until("Stop is enabled", lambda: q(0, "stop").is_enabled())
        # the load: every idle connection and stream one client may hold,
        # and more (the browser is that same client, on loopback)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        slow = SlowClients(srv, 200)
        streams = []
        codes = []
        for _ in range(100):
            s, st, _ = open_stream(srv, 1)
            streams.append(s)
            codes.append(st)
        check(429 in codes, "streams past the cap refused: %s" % codes)
        time.sleep(2)
        check(slow.reopened > 0, "the load's idle connections are closed past the cap")
        q(0, "stop").click()
        until("the mission ends cancelled under load",
              lambda: text(0, "status") == "cancelled")
        check(text(0, "message") == "", "no error shown: %r" % text(0, "message"))
        slow.close()
        for s in streams:
            s.close()
        check(any(li.startswith("mission cancelled") for li in log_lines(0)),
              "the log says cancelled: %s" % log_lines(0))
        until("Fly is enabled again", lambda: q(0, "fly").is_enabled())
        check(srv.drones()[0]["busy"] is False, "the drone is free again")
        # the wind carries drone 1 out of its 60 cm geofence while it waits:
        # the watch's violation is shown as the watch's, not as a refused skill
        q(1, "task").send_keys("Wait here.")
        q(1, "fly").click()
        until("the watch acts", lambda: any(li.startswith("watch: geofence")
                                            for li in log_lines(1)))
        watched = browser.execute_script(
            "return Array.from(document.querySelectorAll('#drone-1 .log li.watch'),"
            " li => li.textContent)")
        check(len(watched) >= 1 and all("measured position" in w for w in watched),
              "the watch's lines: %s" % watched)
        check(not any(li.startswith("refused monitor") for li in log_lines(1)),
              "not shown as a refused skill: %s" % log_lines(1))
        until("the windy mission ends", lambda: text(1, "status") in ("ok", "failed"))
        errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        check(not errors, "no errors in the page: %s" % errors)
    finally:
        if browser:
            browser.quit()
        srv.stop()
        fake.stop()

if failures:
    print("%d check(s) failed" % failures)
    sys.exit(1)
print("ok")
