// The aloft web UI: one card per drone with its camera, a task box, the plan
// as it streams, the execution log and the scene, all fed by the server's
// JSON API and Server-Sent Events. Text from the server only ever goes into
// the page through textContent.
"use strict";

const POLL_MS = 2000;
const LOG_MAX = 500;
// Cards whose camera and events stream at once: a browser opens at most 6
// connections to one server over HTTP/1.1, a streaming card holds two, and
// the poll and the buttons need the rest. Every card shows its state, pose
// and scene from the poll; "Watch" (or flying a task) streams a card, and
// the card watched longest ago stops streaming.
const LIVE_MAX = 2;
const live = [];

function watch(card) {
  if (live.includes(card)) return;
  live.push(card);
  card.live(true);
  while (live.length > LIVE_MAX) live.shift().live(false);
}

function $(root, cls) {
  return root.querySelector("." + cls);
}

function short(v) {
  const s = JSON.stringify(v);
  return s === undefined ? "nil" : s.length > 200 ? s.slice(0, 200) + "…" : s;
}

class DroneCard {
  constructor(info, parent) {
    this.id = info.id;
    const node = document.getElementById("drone-card").content.firstElementChild.cloneNode(true);
    node.id = "drone-" + info.id;
    this.node = node;
    for (const k of ["name", "status", "camera", "pose", "task", "fly", "stop", "message",
      "plan", "log", "scene"]) {
      this[k] = $(node, k);
    }
    this.name.textContent = "Drone " + info.id + " — " + info.spec;
    this.watch = $(node, "watch");
    this.watch.addEventListener("click", () => watch(this));
    this.es = null;
    this.planIndex = -1;
    $(node, "mission").addEventListener("submit", (e) => {
      e.preventDefault();
      this.fly_();
    });
    this.stop.addEventListener("click", () => this.stop_());
    parent.appendChild(node);
    this.update(info);
  }

  // Streams the camera and the events (the mission so far, then live), or stops.
  live(on) {
    this.watch.disabled = on;
    this.watch.textContent = on ? "Watching" : "Watch";
    if (on) {
      this.camera.src = "/api/drones/" + this.id + "/camera.mjpg";
      this.listen();
    } else {
      this.camera.removeAttribute("src"); // ends the MJPEG request
      if (this.es) this.es.close();
      this.es = null;
    }
  }

  setStatus(text) {
    this.status.textContent = text;
    this.status.className = "status " + text;
  }

  update(info) {
    const p = info.pose;
    this.pose.textContent = "x " + p.x.toFixed(0) + " cm  y " + p.y.toFixed(0) + " cm  z " +
      p.z.toFixed(0) + " cm  yaw " + p.yaw.toFixed(0) + "°";
    // a hung drone takes no more missions (the watchdog landed it)
    const hung = info.hung === true;
    this.busy = info.busy;
    this.stop.disabled = !info.busy || hung;
    this.fly.disabled = info.busy || hung;
    if (hung) this.setStatus("hung");
    else if (info.busy) this.setStatus("flying");
    else if (this.status.textContent === "flying") this.setStatus("idle");
    if (!info.busy) this.scene.textContent = info.scene || "(nothing in view)";
  }

  addLog(cls, text) {
    const li = document.createElement("li");
    li.className = cls;
    li.textContent = text;
    this.log.appendChild(li);
    while (this.log.childElementCount > LOG_MAX) this.log.firstElementChild.remove();
    this.log.scrollTop = this.log.scrollHeight;
  }

  listen() {
    const es = new EventSource("/api/drones/" + this.id + "/events");
    this.es = es;
    const on = (kind, fn) => es.addEventListener(kind, (e) => fn(JSON.parse(e.data)));
    on("start", (d) => {
      this.plan.textContent = "";
      this.log.replaceChildren();
      this.planIndex = -1;
      this.setStatus("flying");
      this.fly.disabled = true;
      this.stop.disabled = false;
      this.addLog("start", "task: " + d.task);
    });
    on("mission", (d) => this.addLog("info", "mission " + d.mission_id + " (recorded)"));
    on("scene", (d) => {
      this.scene.textContent = d.text || "(nothing in view)";
    });
    on("plan_text", (d) => {
      if (d.plan !== this.planIndex) {
        if (this.planIndex >= 0) this.plan.append("\n-- plan " + (d.plan + 1) + " --\n");
        this.planIndex = d.plan;
      }
      this.plan.append(d.text);
      this.plan.scrollTop = this.plan.scrollHeight;
    });
    on("plan", (d) => {
      if (!d.ok) this.addLog("problem", "plan " + (d.plan + 1) + " rejected: " + d.diagnostics);
    });
    on("llm", (d) => {
      const what = "LLM " + d.kind + ": " + d.status + " in " + (d.latency_ms / 1000).toFixed(1) + " s";
      this.addLog(d.status === "ok" ? "info" : "problem", d.error ? what + " — " + d.error : what);
    });
    on("statement", (d) => this.addLog("statement", "▶ " + d.text));
    on("call", (d) => {
      if (d.depth === 0 && d.skill !== "log") {
        this.addLog("call", d.skill + "(" + d.args.map(short).join(", ") + ")");
      }
    });
    on("return", (d) => {
      if (d.depth === 0 && d.skill !== "log") this.addLog("result", "→ " + short(d.ret));
      this.update({pose: d.pose, busy: true});
    });
    on("log", (d) => this.addLog("say", "“" + d.text + "”"));
    // The watch on the measured state is nobody's skill: it says what it saw and did.
    on("violation", (d) => d.skill === "monitor"
      ? this.addLog("problem watch", "watch: " + d.reason)
      : this.addLog("problem", "refused " + d.skill + ": " + d.reason));
    on("end", (d) => {
      const what = "mission " + d.status + (d.error ? ": " + d.error : "");
      this.addLog(d.status === "ok" ? "end" : "end problem", what);
      this.setStatus(d.status);
      this.fly.disabled = d.status === "hung";
      this.stop.disabled = true;
      if (d.pose) {
        this.update({pose: d.pose, busy: false, hung: d.status === "hung",
                     scene: this.scene.textContent});
      }
    });
  }

  async fly_() {
    const task = this.task.value.trim();
    this.message.textContent = "";
    if (!task) {
      this.message.textContent = "Type a task first.";
      return;
    }
    watch(this);
    try {
      const r = await fetch("/api/drones/" + this.id + "/missions", {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({task: task}),
      });
      if (!r.ok) this.message.textContent = (await r.json()).error || "HTTP " + r.status;
    } catch (e) {
      this.message.textContent = "The server did not answer: " + e.message;
    }
  }

  async stop_() {
    try {
      const r = await fetch("/api/drones/" + this.id + "/stop", {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: "{}",
      });
      if (!r.ok) this.message.textContent = (await r.json()).error || "HTTP " + r.status;
    } catch (e) {
      this.message.textContent = "The server did not answer: " + e.message;
    }
  }
}

async function main() {
  const main = document.getElementById("drones");
  let drones;
  try {
    drones = await (await fetch("/api/drones")).json();
  } catch (e) {
    document.getElementById("loading").textContent = "Cannot reach the server: " + e.message;
    return;
  }
  main.replaceChildren();
  const cards = drones.map((d) => new DroneCard(d, main));
  cards.slice(0, LIVE_MAX).forEach(watch);
  setInterval(async () => {
    try {
      const now = await (await fetch("/api/drones")).json();
      now.forEach((d, i) => cards[i] && cards[i].update(d));
    } catch (e) {
      // the server is gone or busy: try again next time
    }
  }, POLL_MS);
}

main();
