/*
 * tello_emu: a Tello that speaks SDK 2.0 on loopback, for the driver's tests.
 *
 *   tello_emu --state-port P [--port P] [--battery N] [--speed CM_S]
 *             [--turn-rate DEG_S] [--turn-error DEG] [--loss-in PCT] [--loss-out PCT]
 *             [--loss-state PCT] [--seed N] [--delay-ms N] [--autoland-ms N]
 *             [--reply WORD=TEXT]... [--drop-cmd WORD[:N]]
 *             [--drop-reply WORD[:N]] [--sdk3] [--silent] [--log FILE]
 *             [--max-runtime-s N] [--ignore WORD]... [--state-field KEY=VALUE]...
 *             [--state-bad-every N] [--video-port P [--video-clip FILE]
 *             [--video-start-ms N] [--video-dark-ms N] [--loss-video PCT]
 *             [--video-garbage]] [--height-offset CM]
 *
 * Listens for commands on 127.0.0.1:--port (0 = any free port) and prints
 * "port N" on stdout once ready. After `command` it sends the state string
 * ten times a second to 127.0.0.1:--state-port (with --sdk3, the Tello EDU
 * variant with mission-pad fields first). Motions take time (--speed,
 * --turn-rate) and are answered "ok" when over, like the real drone; commands
 * that arrive meanwhile wait their turn, except `stop` and `emergency`.
 * Range checks and error strings follow the drone: "out of range", "error
 * Motor stop" (moving on the ground), "unknown command: X", "error";
 * --reply WORD=TEXT answers TEXT to every command starting with WORD;
 * --turn-error DEG makes every turn DEG larger than asked, as a real drone's
 * turns are not exact. With no
 * command for --autoland-ms (15000) while flying, it lands by itself.
 *
 * Loss: each incoming command, outgoing reply and state packet is dropped
 * with the given percentage (seeded, reproducible); --drop-cmd WORD[:N] and
 * --drop-reply WORD[:N] drop the first N commands (or their replies) that
 * start with WORD; --delay-ms delays every reply. --silent never answers
 * and never sends state.
 *
 * A hostile drone, for the driver's validation and the constraint check:
 * --ignore WORD receives the commands starting with WORD but neither does
 * them nor answers (`--ignore land`: a landing never acknowledged, the
 * drone still in the air); --state-field KEY=VALUE sends VALUE as KEY's
 * value in the state string (yaw=nan, h=1e308, bat=-2147483649), in every
 * packet or, with --state-bad-every N, in every Nth one. Whatever it sends,
 * the emulator keeps its TRUE pose from the commands it accepted, and logs
 * it after every motion. --height-offset CM adds CM to the height (h, tof)
 * it reports while flying: a drone whose height sensor reads high, which
 * the watch on the measured state must bring down.
 *
 * --video-port P gives it a camera: after `streamon`, H.264 to that port as
 * a Tello sends it (tello_video.h says how, and the camera's faults).
 *
 * The log (--log, else stderr) has one line per event, for tests to assert:
 *   recv CMD | lost-in CMD | reply TEXT | lost-out TEXT | done CMD |
 *   interrupted CMD | ignored-cmd CMD | autoland | pose X Y Z YAW |
 *   video FRAMES DATAGRAMS LOST (at the end, with a camera)
 * (pose in cm, one decimal, and compass degrees from the take-off point and
 * heading, after every finished or interrupted motion).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tello_video.h"

#define MAX_QUEUE 64
#define MAX_REPLIES 8
#define MAX_PENDING 64
#define MAX_FIELDS 8

typedef struct pose {
    double x, y, z, yaw; /* yaw: compass degrees, unwrapped */
} pose;

typedef struct pending_reply {
    double due_ms;
    char text[128];
    struct sockaddr_in to;
} pending_reply;

typedef struct emu {
    /* options */
    int port, state_port, battery;
    double speed, turn_rate, turn_error;
    double height_offset; /* cm added to the reported height while flying */
    double loss_in, loss_out, loss_state;
    int delay_ms, autoland_ms;
    bool sdk3, silent;
    struct {
        char word[32], text[96];
    } replies[MAX_REPLIES];
    int n_replies;
    struct {
        char word[32];
        int left;
    } drop_cmd, drop_reply; /* deterministic losses: the first N of WORD */
    struct {
        char key[16], value[48];
    } fields[MAX_FIELDS]; /* --state-field */
    int n_fields, bad_every;
    long state_sent;
    char ignore[MAX_REPLIES][32]; /* --ignore */
    int n_ignore;
    FILE *log;
    uint64_t rng_in, rng_out, rng_state; /* one stream per direction */
    const char *cur;                     /* the command being answered */

    int fd, state_fd;
    struct sockaddr_in peer; /* who sent the last command */
    bool sdk_mode, flying, video;
    double last_cmd_ms, next_state_ms, t0_ms;

    pose p;
    /* the motion under way */
    bool busy;
    char busy_cmd[64];
    pose from, to;
    double start_ms, dur_ms;
    bool lands; /* the motion ends on the ground */
    bool reply_when_done;

    char queue[MAX_QUEUE][64];
    int q_head, q_len;
    pending_reply pending[MAX_PENDING];
    int n_pending;
    tello_video cam;
} emu;

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* xorshift64*: reproducible per --seed; each direction has its own stream
 * so that the timing of state packets does not change which replies drop. */
static bool chance(uint64_t *rng, double pct)
{
    if (pct <= 0) return false;
    *rng ^= *rng >> 12;
    *rng ^= *rng << 25;
    *rng ^= *rng >> 27;
    uint64_t r = (*rng * 2685821657736338717ULL) >> 11;
    return (double)(r % 1000000) / 10000.0 < pct;
}

static void logf_line(emu *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_line(emu *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(e->log, fmt, ap);
    va_end(ap);
    fputc('\n', e->log);
    fflush(e->log);
}

/* ---- replies ---------------------------------------------------------------- */

/* Is CMD one of the first N commands starting with the word of D? */
static bool targeted(const char *cmd, const char *word, int *left)
{
    size_t n = strlen(word);
    if (*left <= 0 || !n || strncmp(cmd, word, n) != 0) return false;
    --*left;
    return true;
}

static void send_now(emu *e, const char *text, const struct sockaddr_in *to)
{
    if (chance(&e->rng_out, e->loss_out)) {
        logf_line(e, "lost-out %s", text);
        return;
    }
    char buf[160];
    /* The drone ends query answers with CRLF; the driver must cope. */
    int n =
        snprintf(buf, sizeof buf, "%s%s", text, (text[0] >= '0' && text[0] <= '9') ? "\r\n" : "");
    sendto(e->fd, buf, (size_t)n, 0, (const struct sockaddr *)to, sizeof *to);
    logf_line(e, "reply %s", text);
}

static void reply(emu *e, const char *text)
{
    if (e->silent) return;
    if (e->cur && targeted(e->cur, e->drop_reply.word, &e->drop_reply.left)) {
        logf_line(e, "lost-out %s", text);
        return;
    }
    if (e->delay_ms <= 0) {
        send_now(e, text, &e->peer);
        return;
    }
    if (e->n_pending == MAX_PENDING) return;
    pending_reply *r = &e->pending[e->n_pending++];
    r->due_ms = now_ms() + e->delay_ms;
    snprintf(r->text, sizeof r->text, "%s", text);
    r->to = e->peer;
}

static void flush_replies(emu *e, double now)
{
    int kept = 0;
    for (int i = 0; i < e->n_pending; i++) {
        if (e->pending[i].due_ms <= now)
            send_now(e, e->pending[i].text, &e->pending[i].to);
        else
            e->pending[kept++] = e->pending[i];
    }
    e->n_pending = kept;
}

/* ---- motion ----------------------------------------------------------------- */

static pose pose_at(const emu *e, double now)
{
    if (!e->busy) return e->p;
    double f = e->dur_ms <= 0 ? 1 : fmin(1, (now - e->start_ms) / e->dur_ms);
    pose q = {e->from.x + f * (e->to.x - e->from.x), e->from.y + f * (e->to.y - e->from.y),
              e->from.z + f * (e->to.z - e->from.z), e->from.yaw + f * (e->to.yaw - e->from.yaw)};
    return q;
}

static void start_motion(emu *e, const char *cmd, pose to, double rate, double amount,
                         bool reply_done)
{
    e->busy = true;
    snprintf(e->busy_cmd, sizeof e->busy_cmd, "%s", cmd);
    e->from = e->p;
    e->to = to;
    e->start_ms = now_ms();
    e->dur_ms = amount / rate * 1000.0;
    e->reply_when_done = reply_done;
}

static void log_pose(emu *e)
{
    double yaw = fmod(e->p.yaw, 360);
    if (yaw < 0) yaw += 360;
    logf_line(e, "pose %.1f %.1f %.1f %.0f", e->p.x, e->p.y, e->p.z, yaw);
}

static void finish_motion(emu *e)
{
    e->p = e->to;
    e->busy = false;
    if (e->lands) {
        e->flying = false;
        e->lands = false;
    }
    logf_line(e, "done %s", e->busy_cmd);
    log_pose(e);
    e->cur = e->busy_cmd;
    if (e->reply_when_done) reply(e, "ok");
}

/* ---- commands --------------------------------------------------------------- */

/* A whole integer argument in [lo, hi]. */
static bool int_arg(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

static void move_cmd(emu *e, const char *cmd, const char *word, const char *arg)
{
    static const struct {
        const char *word;
        double fwd, right, up;
    } dirs[] = {{"forward", 1, 0, 0}, {"back", -1, 0, 0}, {"left", 0, -1, 0},
                {"right", 0, 1, 0},   {"up", 0, 0, 1},    {"down", 0, 0, -1}};
    int cm;
    if (!int_arg(arg, 20, 500, &cm)) {
        reply(e, "out of range");
        return;
    }
    if (!e->flying) {
        reply(e, "error Motor stop");
        return;
    }
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (strcmp(word, dirs[i].word) != 0) continue;
        double r = e->p.yaw * M_PI / 180;
        pose to = e->p;
        to.x += cm * (dirs[i].fwd * sin(r) + dirs[i].right * cos(r));
        to.y += cm * (dirs[i].fwd * cos(r) - dirs[i].right * sin(r));
        to.z = fmax(20, to.z + cm * dirs[i].up);
        start_motion(e, cmd, to, e->speed, cm, true);
        return;
    }
}

static void query_cmd(emu *e, const char *word)
{
    char buf[96];
    if (strcmp(word, "battery?") == 0)
        snprintf(buf, sizeof buf, "%d", e->battery);
    else if (strcmp(word, "height?") == 0)
        snprintf(buf, sizeof buf, "%ddm", (int)lround(e->p.z / 10));
    else if (strcmp(word, "tof?") == 0)
        snprintf(buf, sizeof buf, "%dmm", (int)lround(e->p.z * 10 + 100));
    else if (strcmp(word, "time?") == 0)
        snprintf(buf, sizeof buf, "%ds", 0);
    else if (strcmp(word, "speed?") == 0)
        snprintf(buf, sizeof buf, "%.1f", e->speed);
    else if (strcmp(word, "sdk?") == 0)
        snprintf(buf, sizeof buf, "%s", e->sdk3 ? "30" : "20");
    else
        snprintf(buf, sizeof buf, "unknown command: %s", word);
    reply(e, buf);
}

/* Runs one command that is allowed to start now. */
static void execute(emu *e, const char *cmd)
{
    char word[64] = "", arg[64] = "", extra[64] = "";
    int n = sscanf(cmd, "%63s %63s %63s", word, arg, extra);
    e->cur = cmd;
    for (int i = 0; i < e->n_replies; i++) {
        if (strncmp(cmd, e->replies[i].word, strlen(e->replies[i].word)) == 0) {
            reply(e, e->replies[i].text);
            return;
        }
    }
    if (strcmp(word, "command") == 0) {
        e->sdk_mode = true;
        reply(e, "ok");
    } else if (word[strlen(word) - 1] == '?') {
        query_cmd(e, word);
    } else if (strcmp(word, "streamon") == 0 || strcmp(word, "streamoff") == 0) {
        e->video = strcmp(word, "streamon") == 0;
        tello_video_switch(&e->cam, e->video, now_ms());
        reply(e, "ok");
    } else if (strcmp(word, "speed") == 0) {
        int v;
        reply(e, n == 2 && int_arg(arg, 10, 100, &v) ? "ok" : "out of range");
    } else if (strcmp(word, "takeoff") == 0) {
        if (e->flying) {
            reply(e, "error");
            return;
        }
        e->flying = true;
        pose to = e->p;
        to.z = 80;
        start_motion(e, cmd, to, e->speed, 80, true);
    } else if (strcmp(word, "land") == 0) {
        if (!e->flying) {
            reply(e, "error");
            return;
        }
        pose to = e->p;
        to.z = 0;
        e->lands = true;
        start_motion(e, cmd, to, e->speed, fmax(e->p.z, 1), true);
    } else if (strcmp(word, "cw") == 0 || strcmp(word, "ccw") == 0) {
        int deg;
        if (n != 2 || !int_arg(arg, 1, 360, &deg)) {
            reply(e, "out of range");
        } else if (!e->flying) {
            reply(e, "error Motor stop");
        } else {
            pose to = e->p;
            double turned = deg + e->turn_error; /* a real drone is a little off */
            to.yaw += word[1] == 'w' ? turned : -turned;
            start_motion(e, cmd, to, e->turn_rate, deg, true);
        }
    } else if (strcmp(word, "forward") == 0 || strcmp(word, "back") == 0 ||
               strcmp(word, "left") == 0 || strcmp(word, "right") == 0 || strcmp(word, "up") == 0 ||
               strcmp(word, "down") == 0) {
        if (n != 2)
            reply(e, "error");
        else
            move_cmd(e, cmd, word, arg);
    } else if (strcmp(word, "rc") == 0) {
        /* no answer, like the drone */
    } else {
        char buf[96];
        snprintf(buf, sizeof buf, "unknown command: %s", word);
        reply(e, buf);
    }
}

static void receive(emu *e, const char *cmd, double now)
{
    if (e->silent) {
        logf_line(e, "recv %s", cmd);
        return;
    }
    if (!e->sdk_mode && strcmp(cmd, "command") != 0) {
        logf_line(e, "ignored %s", cmd); /* not in SDK mode yet: the drone says nothing */
        return;
    }
    logf_line(e, "recv %s", cmd);
    e->last_cmd_ms = now;
    e->cur = cmd;
    for (int i = 0; i < e->n_ignore; i++) {
        if (strncmp(cmd, e->ignore[i], strlen(e->ignore[i])) == 0) {
            logf_line(e, "ignored-cmd %s", cmd);
            return;
        }
    }
    if (strcmp(cmd, "stop") == 0 || strcmp(cmd, "emergency") == 0) {
        if (e->busy) {
            e->p = pose_at(e, now);
            e->busy = false;
            e->lands = false;
            logf_line(e, "interrupted %s", e->busy_cmd);
        }
        e->q_len = 0;
        if (cmd[0] == 'e') {
            e->flying = false;
            e->p.z = 0;
        }
        log_pose(e);
        reply(e, "ok");
        return;
    }
    if (e->busy || e->q_len > 0) {
        if (e->q_len < MAX_QUEUE) {
            snprintf(e->queue[(e->q_head + e->q_len) % MAX_QUEUE], 64, "%.63s", cmd);
            e->q_len++;
        }
        return;
    }
    execute(e, cmd);
}

/* ---- state ------------------------------------------------------------------ */

/* Replaces the value of KEY in the state string BUF (of capacity CAP) with
 * VALUE; returns the new length. */
static int replace_field(char *buf, size_t cap, const char *key, const char *value)
{
    size_t klen = strlen(key);
    for (char *p = buf; (p = strstr(p, key)) != NULL; p += klen) {
        if ((p != buf && p[-1] != ';') || p[klen] != ':') continue;
        char *v = p + klen + 1, *end = strchr(v, ';');
        if (!end) break;
        char rest[512];
        snprintf(rest, sizeof rest, "%s", end);
        snprintf(v, cap - (size_t)(v - buf), "%s%s", value, rest);
        break;
    }
    return (int)strlen(buf);
}

static void send_state(emu *e, double now)
{
    pose q = pose_at(e, now);
    double hoff = e->flying ? e->height_offset : 0;
    double vx = 0, vy = 0, vz = 0;
    if (e->busy && e->dur_ms > 0) {
        vx = (e->to.x - e->from.x) / e->dur_ms * 100; /* dm/s */
        vy = (e->to.y - e->from.y) / e->dur_ms * 100;
        vz = (e->to.z - e->from.z) / e->dur_ms * 100;
    }
    double yaw = fmod(q.yaw, 360);
    if (yaw > 180) yaw -= 360;
    if (yaw <= -180) yaw += 360;
    char buf[512];
    int n = 0;
    if (e->sdk3) n = snprintf(buf, sizeof buf, "mid:-1;x:-100;y:-100;z:-100;mpry:0,0,0;");
    n += snprintf(buf + n, sizeof buf - (size_t)n,
                  "pitch:0;roll:0;yaw:%d;vgx:%d;vgy:%d;vgz:%d;templ:60;temph:63;tof:%d;h:%d;"
                  "bat:%d;baro:%.2f;time:%d;agx:0.00;agy:0.00;agz:-1000.00;\r\n",
                  (int)lround(yaw), (int)lround(vx), (int)lround(vy), (int)lround(vz),
                  (int)lround(q.z + hoff) + 10, (int)lround(q.z + hoff), e->battery,
                  100.0 + q.z / 100, e->flying ? (int)((now - e->t0_ms) / 1000) : 0);
    e->state_sent++;
    for (int i = 0; i < e->n_fields && e->state_sent % e->bad_every == 0; i++)
        n = replace_field(buf, sizeof buf, e->fields[i].key, e->fields[i].value);
    if (chance(&e->rng_state, e->loss_state)) return;
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)e->state_port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sendto(e->state_fd, buf, (size_t)n, 0, (struct sockaddr *)&to, sizeof to);
}

/* ---- main loop -------------------------------------------------------------- */

static void tick(emu *e, double now)
{
    if (e->busy && now >= e->start_ms + e->dur_ms) finish_motion(e);
    while (!e->busy && e->q_len > 0) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "%s", e->queue[e->q_head]);
        e->q_head = (e->q_head + 1) % MAX_QUEUE;
        e->q_len--;
        execute(e, cmd);
        if (e->busy && now >= e->start_ms + e->dur_ms) finish_motion(e);
    }
    if (e->flying && !e->busy && now - e->last_cmd_ms >= e->autoland_ms) {
        logf_line(e, "autoland");
        pose to = e->p;
        to.z = 0;
        e->lands = true;
        start_motion(e, "land", to, e->speed, fmax(e->p.z, 1), false);
    }
    flush_replies(e, now);
    tello_video_tick(&e->cam, now);
    if (e->sdk_mode && !e->silent && now >= e->next_state_ms) {
        send_state(e, now);
        e->next_state_ms = now + 100;
    }
}

static int bind_udp(int port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int usage(void)
{
    fprintf(stderr, "usage: tello_emu --state-port P [--port P] [--battery N] [--speed CM_S] "
                    "[--turn-rate DEG_S] [--turn-error DEG] [--loss-in PCT] [--loss-out PCT] "
                    "[--loss-state PCT] "
                    "[--seed N] [--delay-ms N] [--autoland-ms N] [--reply WORD=TEXT]... "
                    "[--drop-cmd WORD[:N]] [--drop-reply WORD[:N]] [--sdk3] [--silent] [--log "
                    "FILE] [--max-runtime-s N] [--ignore WORD]... [--state-field KEY=VALUE]... "
                    "[--state-bad-every N] [--video-port P] [--video-clip FILE] "
                    "[--video-start-ms N] [--video-dark-ms N] [--loss-video PCT] "
                    "[--video-garbage] [--height-offset CM]\n");
    return 2;
}

int main(int argc, char **argv)
{
    static emu e;
    e.battery = 87;
    e.speed = 100;
    e.turn_rate = 180;
    e.autoland_ms = 15000;
    uint64_t seed = 1;
    e.log = stderr;
    double max_runtime_s = 120;
    static const struct option opts[] = {{"port", required_argument, 0, 'p'},
                                         {"state-port", required_argument, 0, 's'},
                                         {"battery", required_argument, 0, 'b'},
                                         {"speed", required_argument, 0, 'v'},
                                         {"turn-rate", required_argument, 0, 't'},
                                         {"turn-error", required_argument, 0, 'T'},
                                         {"loss-in", required_argument, 0, 'i'},
                                         {"loss-out", required_argument, 0, 'o'},
                                         {"loss-state", required_argument, 0, 'S'},
                                         {"seed", required_argument, 0, 'r'},
                                         {"delay-ms", required_argument, 0, 'd'},
                                         {"autoland-ms", required_argument, 0, 'a'},
                                         {"reply", required_argument, 0, 'R'},
                                         {"sdk3", no_argument, 0, '3'},
                                         {"silent", no_argument, 0, 'q'},
                                         {"drop-cmd", required_argument, 0, 'D'},
                                         {"drop-reply", required_argument, 0, 'X'},
                                         {"log", required_argument, 0, 'l'},
                                         {"max-runtime-s", required_argument, 0, 'm'},
                                         {"ignore", required_argument, 0, 'I'},
                                         {"state-field", required_argument, 0, 'F'},
                                         {"state-bad-every", required_argument, 0, 'E'},
                                         {"video-port", required_argument, 0, 'V'},
                                         {"video-clip", required_argument, 0, 'C'},
                                         {"video-start-ms", required_argument, 0, 'A'},
                                         {"video-dark-ms", required_argument, 0, 'K'},
                                         {"loss-video", required_argument, 0, 'L'},
                                         {"video-garbage", no_argument, 0, 'G'},
                                         {"height-offset", required_argument, 0, 'H'},
                                         {0, 0, 0, 0}};
    e.state_port = -1;
    e.bad_every = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'p': e.port = atoi(optarg); break;
        case 's': e.state_port = atoi(optarg); break;
        case 'b': e.battery = atoi(optarg); break;
        case 'v': e.speed = atof(optarg); break;
        case 't': e.turn_rate = atof(optarg); break;
        case 'T': e.turn_error = atof(optarg); break;
        case 'i': e.loss_in = atof(optarg); break;
        case 'o': e.loss_out = atof(optarg); break;
        case 'S': e.loss_state = atof(optarg); break;
        case 'r': seed = strtoull(optarg, NULL, 10); break;
        case 'D':
        case 'X': {
            char word[32];
            int count = 1;
            if (sscanf(optarg, "%31[^:]:%d", word, &count) < 1) return usage();
            if (c == 'D') {
                snprintf(e.drop_cmd.word, sizeof word, "%s", word);
                e.drop_cmd.left = count;
            } else {
                snprintf(e.drop_reply.word, sizeof word, "%s", word);
                e.drop_reply.left = count;
            }
            break;
        }
        case 'd': e.delay_ms = atoi(optarg); break;
        case 'a': e.autoland_ms = atoi(optarg); break;
        case '3': e.sdk3 = true; break;
        case 'q': e.silent = true; break;
        case 'm': max_runtime_s = atof(optarg); break;
        case 'I':
            if (e.n_ignore == MAX_REPLIES) return usage();
            snprintf(e.ignore[e.n_ignore++], sizeof e.ignore[0], "%s", optarg);
            break;
        case 'F': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || e.n_fields == MAX_FIELDS) return usage();
            snprintf(e.fields[e.n_fields].key, sizeof e.fields[0].key, "%.*s", (int)(eq - optarg),
                     optarg);
            snprintf(e.fields[e.n_fields].value, sizeof e.fields[0].value, "%s", eq + 1);
            e.n_fields++;
            break;
        }
        case 'E': e.bad_every = atoi(optarg); break;
        case 'H': e.height_offset = atof(optarg); break;
        case 'V': e.cam.port = atoi(optarg); break;
        case 'C': e.cam.clip_path = optarg; break;
        case 'A': e.cam.start_ms = atof(optarg); break;
        case 'K': e.cam.dark_ms = atof(optarg); break;
        case 'L': e.cam.loss = atof(optarg); break;
        case 'G': e.cam.garbage = true; break;
        case 'l':
            e.log = fopen(optarg, "w");
            if (!e.log) {
                fprintf(stderr, "tello_emu: cannot write %s: %s\n", optarg, strerror(errno));
                return 1;
            }
            break;
        case 'R': {
            const char *eq = strchr(optarg, '=');
            if (!eq || e.n_replies == MAX_REPLIES) return usage();
            snprintf(e.replies[e.n_replies].word, sizeof e.replies[0].word, "%.*s",
                     (int)(eq - optarg), optarg);
            snprintf(e.replies[e.n_replies].text, sizeof e.replies[0].text, "%s", eq + 1);
            e.n_replies++;
            break;
        }
        default: return usage();
        }
    }
    if (e.state_port <= 0 || e.speed <= 0 || e.turn_rate <= 0 || e.bad_every < 1) return usage();
    e.rng_in = seed * 0x9E3779B97F4A7C15ULL + 1;
    e.rng_out = seed * 0xBF58476D1CE4E5B9ULL + 2;
    e.rng_state = seed * 0x94D049BB133111EBULL + 3;
    char verr[300];
    if (e.cam.port > 0 && tello_video_open(&e.cam, seed, verr, sizeof verr) != 0) {
        fprintf(stderr, "tello_emu: camera: %s\n", verr);
        return 1;
    }
    e.fd = bind_udp(e.port);
    e.state_fd = bind_udp(0);
    if (e.fd < 0 || e.state_fd < 0) {
        fprintf(stderr, "tello_emu: cannot bind UDP port %d: %s\n", e.port, strerror(errno));
        return 1;
    }
    struct sockaddr_in bound;
    socklen_t blen = sizeof bound;
    getsockname(e.fd, (struct sockaddr *)&bound, &blen);
    printf("port %d\n", ntohs(bound.sin_port));
    fflush(stdout);

    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    e.t0_ms = e.last_cmd_ms = now_ms();
    double end_ms = e.t0_ms + max_runtime_s * 1000;
    while (!stop_requested && now_ms() < end_ms) {
        struct pollfd pfd = {.fd = e.fd, .events = POLLIN};
        if (poll(&pfd, 1, 5) > 0) {
            char buf[256];
            socklen_t plen = sizeof e.peer;
            struct sockaddr_in from;
            ssize_t n = recvfrom(e.fd, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &plen);
            if (n > 0) {
                buf[n] = '\0';
                while (n > 0 && (buf[n - 1] == '\r' || buf[n - 1] == '\n'))
                    buf[--n] = '\0';
                if (chance(&e.rng_in, e.loss_in) ||
                    targeted(buf, e.drop_cmd.word, &e.drop_cmd.left)) {
                    logf_line(&e, "lost-in %s", buf);
                } else {
                    e.peer = from;
                    receive(&e, buf, now_ms());
                }
            }
        }
        tick(&e, now_ms());
    }
    if (e.cam.port > 0)
        logf_line(&e, "video %ld %ld %ld", e.cam.frames, e.cam.datagrams, e.cam.lost);
    tello_video_close(&e.cam);
    if (e.log != stderr) fclose(e.log);
    return 0;
}
