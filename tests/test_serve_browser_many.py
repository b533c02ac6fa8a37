#!/usr/bin/python3
# labels: web
"""The web page with more drones than a browser can stream (headless
Chromium, like test_serve_browser.py): of 30 drone cards only two stream
their camera and events at once (a browser opens 6 connections to a server,
a streaming card holds two), every card still shows its pose and state from
the poll, "Watch" streams a card and stops the one watched longest ago, and
flying a task from a card that was not streaming streams it: its plan and log
appear."""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402
from serve_proc import Serve, start_browser  # noqa: E402

SRC = os.environ.get("SRC", ".")
DRONES = 30
PLAN = "l('hello from far down');tc(45);->True"
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_TOKEN"):
        env.pop(k, None)
    office = os.path.join(SRC, "examples/scenes/office.json")
    fake = Fake(tmp, [{"content": PLAN}])
    srv = Serve(["--scene", office] + ["--drone", "sim"] * DRONES +
                ["--llm-url", fake.url, "--model", "fake", "--db", os.path.join(tmp, "m.db")],
                env=env)
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

        def streaming():
            """The cards whose camera has a source."""
            return browser.execute_script(
                "return Array.from(document.querySelectorAll('.drone'))"
                ".filter(c => c.querySelector('.camera').hasAttribute('src'))"
                ".map(c => Number(c.id.slice(6)))")

        def frames(drone):
            return browser.execute_script(
                "const i = arguments[0]; return i.complete && i.naturalWidth > 0",
                q(drone, "camera"))

        browser.get(srv.url)
        until("every card", lambda: len(browser.find_elements(By.CSS_SELECTOR, ".drone")) ==
              DRONES)
        check(streaming() == [0, 1], "the first two cards stream: %s" % streaming())
        until("the first card's camera shows frames", lambda: frames(0))
        until("every card shows its pose from the poll",
              lambda: all("yaw 0" in text(i, "pose") for i in range(DRONES)))
        check(text(DRONES - 1, "status") == "idle", "the last card's state")
        check(not q(0, "watch").is_enabled() and q(DRONES - 1, "watch").is_enabled(),
              "Watch is offered where a card does not stream")

        # watching the last card stops the first, not the second
        last = DRONES - 1
        q(last, "watch").click()
        until("the watched card streams", lambda: sorted(streaming()) == [1, last])
        until("its camera shows frames", lambda: frames(last))
        check(q(0, "watch").is_enabled(), "the card no longer streaming offers Watch again")

        # flying from a card that does not stream: it streams, its log fills
        far = DRONES - 5
        q(far, "task").send_keys("say hello and turn")
        q(far, "fly").click()
        until("the card flown from streams", lambda: sorted(streaming()) == [far, last])
        until("its mission ends ok", lambda: text(far, "status") == "ok")
        until("its plan", lambda: text(far, "plan") == PLAN)
        until("its log", lambda: "hello from far down" in text(far, "log"))
        until("its pose", lambda: "yaw 45" in text(far, "pose"))
        check("yaw 0" in text(0, "pose"), "the other drones did not move")
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
