/* The flight options that `aloft run` and `aloft serve` share (cli.h):
 * one parser and one set of messages for both. */
#include "cmd/cli.h"

#include "llm/llm.h"

#include <stdio.h>
#include <stdlib.h>

void cli_flight_args_init(cli_flight_args *a)
{
    *a = (cli_flight_args){.max_replans = -1, .time_scale = 1, .seed = 1};
}

/* A count option --NAME: at least LO, at most 10^8. */
static int count(const char *cmd, const char *name, const char *arg, int lo, long long *out)
{
    unsigned long long v;
    if (cli_parse_u64(arg, false, &v) || v < (unsigned long long)lo || v > 100000000) {
        cli_usage_error(cmd, "--%s: '%s' is not a number >= %d", name, arg, lo);
        return -1;
    }
    *out = (long long)v;
    return 1;
}

int cli_flight_option(cli_flight_args *a, const char *cmd, int opt, const char *arg)
{
    switch (opt) {
    case OPT_LLM_URL: a->llm_url = arg; return 1;
    case OPT_MODEL: a->model = arg; return 1;
    case OPT_PROMPTS: a->prompts = arg; return 1;
    case OPT_DB: a->db = arg; return 1;
    case OPT_NO_STREAM: a->no_stream = true; return 1;
    case OPT_MAX_TRIES: return count(cmd, "max-tries", arg, 1, &a->max_tries);
    case OPT_MAX_REPLANS: return count(cmd, "max-replans", arg, 0, &a->max_replans);
    case OPT_LLM_TIMEOUT: return count(cmd, "llm-timeout-ms", arg, 1, &a->llm_timeout_ms);
    case OPT_LLM_IDLE: return count(cmd, "llm-idle-timeout-ms", arg, 1, &a->llm_idle_ms);
    case OPT_CANDIDATES: return cli_candidates(cmd, arg, &a->candidates) ? -1 : 1;
    case OPT_TIME_SCALE: {
        char *end;
        a->time_scale = strtod(arg, &end);
        if (end == arg || *end || !(a->time_scale >= 0) || a->time_scale > 1e6) {
            cli_usage_error(cmd, "--time-scale: '%s' is not a number >= 0", arg);
            return -1;
        }
        a->time_scale_set = true;
        return 1;
    }
    case OPT_SEED:
        if (cli_parse_u64(arg, false, &a->seed)) {
            cli_usage_error(cmd, "--seed: '%s' is not a number", arg);
            return -1;
        }
        a->seed_set = true;
        return 1;
    default: return 0;
    }
}

void cli_flight_llm(const cli_flight_args *a, llm_config *cfg)
{
    llm_config_defaults(cfg);
    if (a->llm_url) snprintf(cfg->base_url, sizeof cfg->base_url, "%s", a->llm_url);
    if (a->model) snprintf(cfg->model, sizeof cfg->model, "%s", a->model);
    if (a->llm_timeout_ms) cfg->total_timeout_ms = (long)a->llm_timeout_ms;
    if (a->llm_idle_ms) cfg->idle_timeout_ms = (long)a->llm_idle_ms;
}
