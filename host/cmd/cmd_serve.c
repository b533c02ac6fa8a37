/* aloft serve: the web UI (SPEC §13).
 *
 * Serves the page and the JSON API of host/web/web_server.h for the drones
 * given with --drone, until Ctrl-C (or SIGTERM): then every mission is
 * cancelled, the drones land, and the server ends its streams and exits. */
#include "cmd/cli.h"
#include "drone/tello.h"
#include "loader/loader.h"
#include "web/web_fleet.h"
#include "web/web_server.h"
#include "worker/vm.h"

#include "errmsg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "Usage: aloft serve [--port P] [--host ADDR] [--drone SPEC]... [--scene S] [options]\n"
    "\n"
    "Serve the web UI: for each drone, its live camera, a task box, the plan as\n"
    "the LLM writes it, the execution log, the scene description and a stop\n"
    "button. The first line on stdout is the address it listens on.\n"
    "\n"
    "  --port P              TCP port (default 8080; 0 = any free port)\n"
    "  --host ADDR           IPv4 or IPv6 address to listen on (default 127.0.0.1;\n"
    "                        anything but loopback lets other machines fly your\n"
    "                        drones, and needs a token)\n"
    "  --token T             every request must carry T: \"Authorization: Bearer T\",\n"
    "                        or open http://ADDR:PORT/?token=T once in the browser\n"
    "                        (it sets a cookie); default $ALOFT_TOKEN. 16 to 256\n"
    "                        characters from A-Z a-z 0-9 - . _ ~\n"
    "  --tls-cert FILE       serve https with this PEM certificate ...\n"
    "  --tls-key FILE        ... and this PEM private key (both or neither)\n"
    "  --drone SPEC          a drone, repeatable; ids 0, 1, ... in order:\n"
    "                          sim:SCENE       the simulator in that scene file\n"
    "                          sim             the simulator in --scene\n"
    "                          tello[:HOST]    a Tello (default 192.168.10.1);\n"
    "                                          --scene gives its limits\n"
    "                          mavlink[:URL][,sysid=N]\n"
    "                                          a PX4 or ArduPilot vehicle (default\n"
    "                                          udpin:0.0.0.0:14540); ,sysid=N flies\n"
    "                                          the vehicle of system id N, else\n"
    "                                          the first vehicle on the link not\n"
    "                                          flown yet; --scene gives limits\n"
    "                        (default: one simulator in --scene)\n"
    "                        (drones of one scene file share it and its camera)\n"
    "  --max-drones N        take at most N drones (default 256, at most 4096):\n"
    "                        each flying drone is two threads\n"
    "  --scene FILE          the scene of `--drone sim`\n"
    "  --tello-port P, --tello-state-port P, --tello-video-port P,\n"
    "  --tello-timeout-ms N, --no-video   as for `aloft run`, for every Tello\n" CLI_LLM_HELP
        CLI_CANDIDATES_HELP
    "  --time-scale X        simulated seconds per real second (default 1)\n"
    "  --seed N              seed for the simulator's noise (default 1)\n"
    "  --db FILE             the mission store (default $ALOFT_DB, else\n"
    "                        $XDG_DATA_HOME/aloft/aloft.db)\n"
    "  --skills DIR          also load the skill files of DIR (repeatable; a file\n"
    "                        that cannot be read keeps the server from starting)\n"
    "  --max-instructions N  instruction budget per mission (default 10000000)\n"
    "  --max-memory BYTES    memory cap per mission, k/M/G suffixes (default 16M)\n"
    "  --timeout-ms N        wall-clock limit per mission (default 300000)\n"
    "  --in-process          run Lua in this process, not in worker processes\n"
    "                        (debugging only; ALOFT_WORKERS sets the pool's size)\n"
    "\n"
    "Every mission is recorded in the store like `aloft run --task`.\n"
    "Ctrl-C cancels the missions (the drones hover, then land) and exits.\n"
    "State-changing requests (missions, stop) must be application/json from the\n"
    "server's own page (a foreign Origin or Referer is refused). Each client may\n"
    "hold only so many idle connections and streams, so that Stop is answered.\n"
    "Exit status: 0 after Ctrl-C, 1 the server could not start, 2 usage.\n";

enum {
    OPT_PORT = OPT_FIRST_FREE,
    OPT_HOST,
    OPT_TOKEN,
    OPT_TLS_CERT,
    OPT_TLS_KEY,
    OPT_MAX_DRONES, /* --drone and the Tello's options: cli.h's codes */
};

typedef struct serve_args {
    cli_common c;
    int port;
    const char *host;
    const char *token, *tls_cert, *tls_key;
    const char **drones; /* room for every argument */
    int n_drones;
    long long max_drones;
    cli_flight_args f;  /* the LLM, the controller, the simulator, the store */
    tello_config tello; /* --tello-* and --no-video, for every Tello */
} serve_args;

static int on_option(void *ud, int opt, const char *arg)
{
    serve_args *a = ud;
    const char *cmd = a->c.cmd;
    switch (opt) {
    case OPT_PORT: {
        unsigned long long v;
        if (cli_parse_u64(arg, false, &v) || v > 65535)
            return cli_usage_error(cmd, "--port: '%s' is not a port (0-65535)", arg);
        a->port = (int)v;
        return 0;
    }
    case OPT_HOST: a->host = arg; return 0;
    case OPT_TOKEN: a->token = arg; return 0;
    case OPT_TLS_CERT: a->tls_cert = arg; return 0;
    case OPT_TLS_KEY: a->tls_key = arg; return 0;
    case OPT_DRONE: a->drones[a->n_drones++] = arg; return 0;
    case OPT_MAX_DRONES: {
        unsigned long long v;
        if (cli_parse_u64(arg, false, &v) || v > 100000000 || v == 0)
            return cli_usage_error(cmd, "--max-drones: '%s' is not a number >= 1", arg);
        if (v > WEB_MAX_DRONES_LIMIT)
            return cli_usage_error(cmd, "--max-drones: at most %d, not %s", WEB_MAX_DRONES_LIMIT,
                                   arg);
        a->max_drones = (long long)v;
        return 0;
    }
    case OPT_TELLO: {
        char err[300];
        if (tello_config_option(&a->tello, a->c.option, arg, err, sizeof err) != 1)
            return cli_usage_error(cmd, "--%s: %s", a->c.option, err);
        return 0;
    }
    }
    int r = cli_flight_option(&a->f, cmd, opt, arg);
    if (r) return r < 0 ? CLI_USAGE : 0;
    return cli_usage_error(cmd, "unknown option");
}

/* True when HOST is a loopback address (127.0.0.0/8 or ::1). */
static bool is_loopback(const char *host)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, host, &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, host, &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

/* The token (from --token or $ALOFT_TOKEN) and TLS options are sound, and
 * there is a token when listening beyond loopback: -1, or the exit status. */
static int check_access(serve_args *a)
{
    const char *env = getenv("ALOFT_TOKEN");
    if (!a->token && env && *env) a->token = env;
    if (a->token) {
        size_t n = strlen(a->token);
        bool ok = n >= 16 && n <= 256 &&
                  strspn(a->token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                   "qrstuvwxyz0123456789-._~") == n;
        if (!ok)
            return cli_usage_error(a->c.cmd, "the token must be 16 to 256 characters from A-Z a-z "
                                             "0-9 - . _ ~");
    }
    struct in6_addr any;
    if (inet_pton(AF_INET, a->host, &any) != 1 && inet_pton(AF_INET6, a->host, &any) != 1)
        return cli_usage_error(a->c.cmd, "--host %s: not an IPv4 or IPv6 address", a->host);
    if (!is_loopback(a->host) && !a->token)
        return cli_usage_error(a->c.cmd,
                               "--host %s is not loopback: give --token T (or set "
                               "ALOFT_TOKEN), or anyone who reaches it flies the drones",
                               a->host);
    if (!a->tls_cert != !a->tls_key)
        return cli_usage_error(a->c.cmd, "give both --tls-cert and --tls-key, or neither");
    return -1;
}

/* The whole of the PEM file PATH (at most 1 MiB), or NULL with a message. */
static char *read_pem(const char *what, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) return errmsg_set(err, errlen, "%s %s: %s", what, path, strerror(errno)), NULL;
    size_t cap = 1u << 20;
    char *buf = malloc(cap + 1);
    size_t n = buf ? fread(buf, 1, cap + 1, f) : 0;
    bool bad = ferror(f) || n > cap || n == 0;
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return errmsg_set(err, errlen, "%s %s: %s", what, path,
                          !buf      ? "out of memory"
                          : n > cap ? "larger than 1 MiB"
                                    : "cannot read it"),
               NULL;
    }
    buf[n] = '\0';
    return buf;
}

static int serve(serve_args *ap, int argc, char **argv, const struct option *opts);

/* A server runs unattended for long: one that started without a skill its
 * operator gave (a file that does not load, or that crashed the worker
 * reading it) would fail its missions later, so it does not start. */
static void skill_problem(void *ud, const char *path, const char *message)
{
    (*(int *)ud)++;
    fprintf(stderr, "aloft serve: %s: %s\n", path, message);
}

int cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_LIMIT_OPTIONS,
        {"scene", required_argument, 0, OPT_SCENE},
        {"port", required_argument, 0, OPT_PORT},
        {"host", required_argument, 0, OPT_HOST},
        {"drone", required_argument, 0, OPT_DRONE},
        CLI_FLIGHT_OPTIONS,
        {"token", required_argument, 0, OPT_TOKEN},
        {"tls-cert", required_argument, 0, OPT_TLS_CERT},
        {"tls-key", required_argument, 0, OPT_TLS_KEY},
        {"max-drones", required_argument, 0, OPT_MAX_DRONES},
        {"tello-port", required_argument, 0, OPT_TELLO},
        {"tello-state-port", required_argument, 0, OPT_TELLO},
        {"tello-video-port", required_argument, 0, OPT_TELLO},
        {"tello-timeout-ms", required_argument, 0, OPT_TELLO},
        {"no-video", no_argument, 0, OPT_TELLO},
        {0, 0, 0, 0},
    };
    serve_args a = {.c = {.cmd = "serve"},
                    .port = 8080,
                    .host = "127.0.0.1",
                    .max_drones = WEB_DEFAULT_MAX_DRONES};
    cli_flight_args_init(&a.f);
    tello_config_init(&a.tello);
    /* Every --drone takes an argument: there are fewer than ARGC. */
    a.drones = calloc((size_t)argc + 1, sizeof *a.drones);
    if (!a.drones) return cli_fail(a.c.cmd, "out of memory");
    int rc = serve(&a, argc, argv, opts);
    free(a.drones);
    return rc;
}

/* The server's life, once the arguments have room: parse, start, wait for
 * a signal, stop. */
static int serve(serve_args *ap, int argc, char **argv, const struct option *opts)
{
    serve_args a = *ap;
    int rc = cli_parse_options(&a.c, argc, argv, opts, usage, on_option, &a);
    if (rc >= 0) return rc;
    if (optind < argc) return cli_usage_error(a.c.cmd, "unexpected argument '%s'", argv[optind]);
    if (a.c.json) return cli_usage_error(a.c.cmd, "--json is not an option of serve");
    if (!cli_model(a.f.model))
        return cli_usage_error(a.c.cmd, "missions need a model: give --model NAME or set "
                                        "ALOFT_MODEL");
    if (a.f.prompts && (rc = cli_check_prompts(a.c.cmd, a.f.prompts)) >= 0) return rc;
    if ((rc = check_access(&a)) >= 0) return rc;
    if (a.n_drones == 0) {
        if (!a.c.scene) return cli_usage_error(a.c.cmd, "give --drone SPEC or --scene FILE");
        a.drones[a.n_drones++] = "sim";
    }
    if (a.n_drones > a.max_drones)
        return cli_usage_error(a.c.cmd, "%d drones given, but --max-drones is %lld", a.n_drones,
                               a.max_drones);

    llm_config llm;
    cli_flight_llm(&a.f, &llm);

    int problems = 0;
    skill_registry *reg =
        loader_standard(a.c.skill_dirs, a.c.n_skill_dirs, skill_problem, &problems);
    if (!reg) return cli_fail(a.c.cmd, "the built-in skills failed to load");
    if (problems) {
        registry_free(reg);
        return cli_fail(a.c.cmd, "not starting: %d skill file%s could not be read (above)",
                        problems, problems == 1 ? "" : "s");
    }
    web_fleet_config cfg = {.reg = reg,
                            .llm = &llm,
                            .limits = cli_limits(&a.c),
                            .time_scale = a.f.time_scale,
                            .seed = a.f.seed,
                            .db = a.f.db,
                            .max_drones = (int)a.max_drones,
                            .prompts = a.f.prompts,
                            .stream = !a.f.no_stream,
                            .max_tries = (int)a.f.max_tries,
                            .max_replans = (int)a.f.max_replans,
                            .candidates = a.f.candidates,
                            .skill_dirs = a.c.skill_dirs,
                            .n_skill_dirs = a.c.n_skill_dirs,
                            .tello = &a.tello};
    char err[1024];
    /* Signals go to this thread only (sigwait below): every thread started
     * from here on inherits the mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    web_fleet *fleet = web_fleet_new(&cfg, a.drones, a.n_drones, a.c.scene, err, sizeof err);
    if (!fleet) {
        registry_free(reg);
        return cli_fail(a.c.cmd, "%s", err);
    }
    /* The Lua workers run before the first mission comes: a hundred
     * missions started together then do not wait for their start. */
    if (vm_pool_prestart(err, sizeof err))
        fprintf(stderr, "aloft serve: %s (workers start with the missions)\n", err);
    char *cert = a.tls_cert ? read_pem("--tls-cert", a.tls_cert, err, sizeof err) : NULL;
    char *key = cert ? read_pem("--tls-key", a.tls_key, err, sizeof err) : NULL;
    web_server *srv = NULL;
    if (!a.tls_cert || (cert && key)) {
        web_server_options wo = {
            .host = a.host, .port = a.port, .token = a.token, .tls_cert = cert, .tls_key = key};
        srv = web_server_start(fleet, &wo, err, sizeof err);
    }
    free(cert);
    if (key) memset(key, 0, strlen(key)); /* the private key lingers no longer */
    free(key);
    if (!srv) {
        web_fleet_free(fleet);
        registry_free(reg);
        return cli_fail(a.c.cmd, "%s", err);
    }
    bool v6 = strchr(a.host, ':') != NULL;
    printf("listening on %s://%s%s%s:%d/\n", a.tls_cert ? "https" : "http", v6 ? "[" : "", a.host,
           v6 ? "]" : "", web_server_port(srv));
    fflush(stdout);
    for (int i = 0; i < a.n_drones; i++)
        fprintf(stderr, "drone %d: %s\n", i, a.drones[i]);
    if (!is_loopback(a.host))
        fprintf(stderr,
                "aloft serve: listening on %s: anyone who can reach it and has the token can "
                "fly the drones%s\n",
                a.host, a.tls_cert ? "" : " (and, without --tls-cert, read the token on the way)");

    int sig = 0;
    sigwait(&sigs, &sig);
    fprintf(stderr, "aloft serve: stopping (missions cancelled, drones landing)\n");
    web_fleet_shutdown(fleet);
    web_server_stop(srv);
    if (web_fleet_hung(fleet)) {
        /* A hung mission's thread is still stuck in its VM, holding the
         * fleet and the skills: leave them, and exit()'s handlers, alone. */
        fflush(stdout);
        fflush(stderr);
        _exit(CLI_OK);
    }
    web_fleet_free(fleet);
    registry_free(reg);
    return CLI_OK;
}
