#!/usr/bin/python3
"""A database of schema version 1 (the first one, before status 'hung')
opened by this aloft: it is migrated to the current version (4: candidate
plans) without losing a row, its
missions keep their events, 'hung' is then a valid status (and nonsense still
is not), and new runs are recorded in it."""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
failures = 0

# Schema version 1, as aloft wrote it (host/store/store_schema.c, migration 0 -> 1).
V1 = """
CREATE TABLE missions( id INTEGER PRIMARY KEY, task TEXT,
 status TEXT NOT NULL DEFAULT 'running'
  CHECK(status IN ('running','ok','failed','cancelled','interrupted')),
 started TEXT NOT NULL, ended TEXT, duration_ms REAL, drone TEXT, model TEXT, seed INTEGER,
 scene TEXT, params TEXT, replay_of INTEGER REFERENCES missions(id), owner TEXT, error TEXT,
 result TEXT);
CREATE INDEX missions_running ON missions(status) WHERE status = 'running';
CREATE TABLE llm_exchanges( id INTEGER PRIMARY KEY,
 mission_id INTEGER NOT NULL REFERENCES missions(id), seq INTEGER NOT NULL, t_ms REAL NOT NULL,
 kind TEXT NOT NULL CHECK(kind IN ('plan','retry','replan','probe')), model TEXT,
 prompt TEXT NOT NULL, response TEXT NOT NULL, latency_ms REAL, ttft_ms REAL,
 prompt_tokens INTEGER, completion_tokens INTEGER, error TEXT, UNIQUE(mission_id, seq));
CREATE TABLE plans( id INTEGER PRIMARY KEY, mission_id INTEGER NOT NULL REFERENCES missions(id),
 seq INTEGER NOT NULL, t_ms REAL NOT NULL, plan_no INTEGER NOT NULL,
 llm_id INTEGER REFERENCES llm_exchanges(id), text TEXT NOT NULL, ok INTEGER NOT NULL,
 diagnostics TEXT, UNIQUE(mission_id, seq), UNIQUE(mission_id, plan_no));
CREATE TABLE statements( id INTEGER PRIMARY KEY,
 mission_id INTEGER NOT NULL REFERENCES missions(id), seq INTEGER NOT NULL, t_ms REAL NOT NULL,
 plan_no INTEGER, line INTEGER, col INTEGER, text TEXT NOT NULL, UNIQUE(mission_id, seq));
CREATE TABLE skill_calls( id INTEGER PRIMARY KEY,
 mission_id INTEGER NOT NULL REFERENCES missions(id), seq INTEGER NOT NULL, t_ms REAL NOT NULL,
 skill TEXT NOT NULL, args TEXT NOT NULL, depth INTEGER NOT NULL DEFAULT 0,
 done INTEGER NOT NULL DEFAULT 0, ret TEXT, x REAL, y REAL, z REAL, yaw REAL,
 sim_ms REAL, wall_ms REAL, UNIQUE(mission_id, seq));
CREATE TABLE violations( id INTEGER PRIMARY KEY,
 mission_id INTEGER NOT NULL REFERENCES missions(id), seq INTEGER NOT NULL, t_ms REAL NOT NULL,
 skill TEXT NOT NULL, args TEXT, reason TEXT NOT NULL, UNIQUE(mission_id, seq));
CREATE TABLE scene_snapshots( id INTEGER PRIMARY KEY,
 mission_id INTEGER NOT NULL REFERENCES missions(id), seq INTEGER NOT NULL, t_ms REAL NOT NULL,
 description TEXT NOT NULL, x REAL, y REAL, z REAL, yaw REAL, UNIQUE(mission_id, seq));
CREATE TABLE objects( id INTEGER PRIMARY KEY, class TEXT NOT NULL,
 x REAL NOT NULL, y REAL NOT NULL, z REAL NOT NULL, conf REAL NOT NULL,
 sightings INTEGER NOT NULL, first_seen TEXT NOT NULL, last_seen TEXT NOT NULL,
 last_mission INTEGER REFERENCES missions(id));
CREATE INDEX objects_class ON objects(class);
PRAGMA application_id = 1095517780;
PRAGMA user_version = 1;
"""


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


def aloft(*args):
    return subprocess.run([ALOFT, *args], capture_output=True, text=True, timeout=60)


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "v1.db")
    c = sqlite3.connect(db)
    c.executescript(V1)
    c.execute("INSERT INTO missions(task, status, started, ended, duration_ms, drone, error)"
              " VALUES ('old task', 'cancelled', '2026-01-02T03:04:05.000Z',"
              " '2026-01-02T03:04:06.000Z', 1000, 'sim', 'cancelled')")
    c.execute("INSERT INTO plans(mission_id, seq, t_ms, plan_no, text, ok)"
              " VALUES (1, 1, 0, 1, 'tc(90);->True', 1)")
    c.execute("INSERT INTO skill_calls(mission_id, seq, t_ms, skill, args, done, ret)"
              " VALUES (1, 2, 5, 'turn_cw', '[90]', 1, 'true')")
    c.commit()
    c.close()

    r = aloft("log", "--db", db, "--json", "1")
    check(r.returncode == 0, "aloft log on a version 1 database: %s" % r.stderr)
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    m = doc.get("mission", {})
    check(m.get("task") == "old task" and m.get("status") == "cancelled" and
          m.get("error") == "cancelled" and m.get("duration_ms") == 1000,
          "the old mission kept its row: %r" % m)
    check(doc.get("plans") == ["tc(90);->True"], "and its plan: %r" % doc.get("plans"))
    check(doc.get("candidates") == [], "and no candidate plans: %r" % doc.get("candidates"))
    check([e["skill"] for e in doc.get("events", []) if e["kind"] == "call"] == ["turn_cw"],
          "and its calls: %r" % doc.get("events"))

    c = sqlite3.connect(db)
    check(c.execute("PRAGMA user_version").fetchone()[0] == 6, "migrated to version 6")
    check(c.execute("SELECT count(*) FROM candidates").fetchone()[0] == 0,
          "version 4's candidates table is there, empty")
    check(c.execute("SELECT count(*) FROM sqlite_master WHERE name = 'objects_at'").fetchone()[0]
          == 1, "version 5's spatial index of the objects")
    # 'crashed' (a worker process that died, version 6) is a status now
    c.execute("UPDATE missions SET status = 'crashed' WHERE id = 1")
    c.execute("UPDATE missions SET status = 'hung' WHERE id = 1")
    c.commit()
    try:
        c.execute("UPDATE missions SET status = 'exploded' WHERE id = 1")
        check(False, "an unknown status is still refused")
    except sqlite3.IntegrityError:
        pass
    c.close()
    r = aloft("log", "--db", db, "--json")
    lst = json.loads(r.stdout) if r.returncode == 0 else []
    check([x["status"] for x in lst] == ["hung"], "'hung' reads back: %r %s" % (lst, r.stderr))

    plan = os.path.join(tmp, "p.ms")
    with open(plan, "w") as f:
        f.write("tc(90);->True\n")
    r = aloft("run", "--json", "--scene", os.path.join(SRC, "examples/scenes/office.json"),
              "--plan", plan, "--db", db)
    check(r.returncode == 0, "a run recorded in the migrated database: %s" % r.stderr[-500:])
    r = aloft("log", "--db", db, "--json")
    lst = json.loads(r.stdout) if r.returncode == 0 else []
    check(sorted(x["status"] for x in lst) == ["hung", "ok"], "two missions: %r" % lst)

if failures:
    print(f"{failures} check(s) failed", file=sys.stderr)
sys.exit(1 if failures else 0)
