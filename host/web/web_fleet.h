/*
 * The drones a web server flies (SPEC §13): each has an id (0, 1, ...), flies
 * one mission at a time on its own thread through the mission controller
 * (the same path as `aloft run --task`, recorded in the store), and keeps an
 * event log (web_events.h) and a view for its camera stream.
 *
 * Missions on different drones run at the same time. Every function here
 * may be called from any thread.
 */
#ifndef ALOFT_WEB_FLEET_H
#define ALOFT_WEB_FLEET_H

#include "llm/llm.h"
#include "sandbox/sandbox.h"
#include "skills/registry.h"
#include "web/web_events.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How many drones a server takes unless told (--max-drones), and the most
 * it can be told: each drone costs memory when idle (its scene, its camera
 * simulator, its event log) and two threads while it flies (the mission's
 * and its watchdog's), so the cap bounds both. */
#define WEB_DEFAULT_MAX_DRONES 256
#define WEB_MAX_DRONES_LIMIT 4096
/* What the drones' event logs keep at most, together: each drone keeps
 * this over the number of drones, between 256 KiB and
 * WEB_EVENTS_MAX_BYTES (8 MiB from 32 drones down). */
#define WEB_EVENTS_FLEET_BYTES (256u * 1024u * 1024u)
#define WEB_EVENTS_MIN_BYTES (256u * 1024u)

typedef struct web_fleet_config {
    const skill_registry *reg; /* shared by every mission, read only */
    const llm_config *llm;     /* the LLM every mission asks; must outlive the fleet */
    sandbox_limits limits;     /* per mission, defaults filled in */
    double time_scale;         /* simulated seconds per real second */
    uint64_t seed;
    const char *db;                /* the store (NULL: $ALOFT_DB or the default), opened once
                                    * by web_fleet_new and shared by every mission */
    int max_drones;                /* 0: WEB_DEFAULT_MAX_DRONES */
    const char *prompts;           /* template directory (NULL: the built-in ones) */
    bool stream;                   /* stream interpreting */
    int max_tries;                 /* 0: the controller's default */
    int max_replans;               /* -1: the controller's default */
    int candidates;                /* > 0: candidate plans per round (run --candidates) */
    const char *const *skill_dirs; /* recorded with each mission */
    int n_skill_dirs;
    /* The settings every Tello starts from (ports, timeout, video), or
     * NULL for the defaults; a drone's "tello:HOST" sets its host. */
    const struct tello_config *tello;
} web_fleet_config;

typedef struct web_fleet web_fleet;

/* Opens the store and the drones SPECS[0..N) (N at most CFG's max_drones):
 * "sim:SCENE", "sim" (DEFAULT_SCENE), "tello" or "tello:HOST". Simulators
 * are checked now (the scene loads; drones of one scene file share it); a
 * Tello is only contacted when a mission starts. CFG must outlive the
 * fleet. NULL with a message. */
web_fleet *web_fleet_new(const web_fleet_config *cfg, const char *const *specs, int n,
                         const char *default_scene, char *err, size_t errlen);

/* Cancels every mission, waits for them to end (drones landed), wakes every
 * event reader for good. Idempotent. */
void web_fleet_shutdown(web_fleet *f);

/* True when a drone of F is hung (see web_fleet_json): its mission's thread
 * may still be stuck, so F must not be freed (web_fleet_free leaves it). */
bool web_fleet_hung(web_fleet *f);

/* Shuts down, then frees F. */
void web_fleet_free(web_fleet *f);

int web_fleet_count(const web_fleet *f);

/* [{"id","kind","spec","busy","hung","run","task","pose":{x,y,z,yaw},"scene"}]:
 * "scene" is the scene description of what the camera sees (simulator) or
 * last saw (Tello). "hung": the watchdog (SPEC §6) ended a mission of this
 * drone whose VM did not stop, and landed it; such a drone takes no new
 * mission (web_fleet_start fails) until the server restarts. */
cJSON *web_fleet_json(web_fleet *f);

enum { WEB_STARTED = 0, WEB_BUSY = 1, WEB_ERROR = -1 };

/* Starts TASK on drone ID in a new thread. Returns WEB_STARTED with the
 * drone's mission number in *RUN, WEB_BUSY when it flies already, or
 * WEB_ERROR with a message. */
int web_fleet_start(web_fleet *f, int id, const char *task, int *run, char *err, size_t errlen);

/* Cancels drone ID's mission (the drone hovers, then lands). Returns true
 * if one was running. */
bool web_fleet_stop(web_fleet *f, int id);

/* Drone ID's event log. */
web_events *web_fleet_events(web_fleet *f, int id);

/* A JPEG of what drone ID's camera sees now, detections drawn, or NULL
 * with a message. */
unsigned char *web_fleet_frame(web_fleet *f, int id, size_t *len, char *err, size_t errlen);

#endif
