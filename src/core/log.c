/* SPDX-License-Identifier: MIT */
/*
 * log.c - the log sink. Reads OBC_DEBUG, OBC_DEBUG_SUBSYS and OBC_LOG_FILE
 * once (pthread_once) through the config table, formats one whole line per
 * call and writes it with a single write(2) so lines of different ranks and
 * threads never interleave mid-line.
 */
#include "core/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/config.h"

int obc__log_level = OBC_LOG_LEVEL_WARN;
unsigned obc__log_subsys_mask = ~0u;

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static FILE *log_stream;
static char log_host[64] = "?";
static _Atomic int log_rank = -1;

static const struct {
    const char *name;
    unsigned bit;
} subsys_names[] = {
    {"init", OBC_LOG_INIT}, {"boot", OBC_LOG_BOOT}, {"shm", OBC_LOG_SHM},
    {"tcp", OBC_LOG_TCP},   {"coll", OBC_LOG_COLL}, {"progress", OBC_LOG_PROGRESS},
};

static unsigned parse_subsys(const char *list)
{
    unsigned mask = 0;
    char buf[OBC_CFG_STR_BYTES];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (strcasecmp(tok, "all") == 0) {
            return ~0u;
        }
        for (size_t i = 0; i < sizeof(subsys_names) / sizeof(subsys_names[0]); i++) {
            if (strcasecmp(tok, subsys_names[i].name) == 0) {
                mask |= subsys_names[i].bit;
            }
        }
    }
    return mask != 0 ? mask : ~0u;
}

static void open_log_file(const char *pattern)
{
    char path[OBC_CFG_STR_BYTES + 32];
    const char *p = strstr(pattern, "%p");
    if (p != NULL) {
        snprintf(path, sizeof(path), "%.*s%d%s", (int)(p - pattern), pattern, (int)getpid(), p + 2);
    } else {
        snprintf(path, sizeof(path), "%s", pattern);
    }
    log_stream = fopen(path, "a");
}

static void log_setup(void)
{
    struct obc__config cfg;
    char err[128];
    log_stream = stderr;
    gethostname(log_host, sizeof(log_host) - 1);
    if (obc__config_load(&cfg, err, sizeof(err)) != 0) {
        return; /* the error is reported by the init that loads the config */
    }
    if (strcasecmp(cfg.debug, "INFO") == 0) {
        obc__log_level = OBC_LOG_LEVEL_INFO;
    } else if (strcasecmp(cfg.debug, "TRACE") == 0) {
        obc__log_level = OBC_LOG_LEVEL_TRACE;
    }
    obc__log_subsys_mask = parse_subsys(cfg.debug_subsys);
    if (cfg.log_file[0] != '\0') {
        open_log_file(cfg.log_file);
        if (log_stream == NULL) {
            log_stream = stderr;
        }
    }
}

void obc__log_init(void)
{
    pthread_once(&log_once, log_setup);
}

void obc__log_set_rank(int rank)
{
    atomic_store_explicit(&log_rank, rank, memory_order_relaxed);
}

int obc__log_rank(void)
{
    return atomic_load_explicit(&log_rank, memory_order_relaxed);
}

static const char *level_name(int level)
{
    return level == OBC_LOG_LEVEL_WARN ? "WARN" : level == OBC_LOG_LEVEL_INFO ? "INFO" : "TRACE";
}

void obc__log_write(int level, unsigned subsys, const char *file, int line, const char *fmt, ...)
{
    char text[1024];
    int n;
    va_list ap;
    obc__log_init();
    (void)subsys;
    n = snprintf(text, sizeof(text), "obc %s:%d:%d %s ", log_host, (int)getpid(),
                 atomic_load_explicit(&log_rank, memory_order_relaxed), level_name(level));
    va_start(ap, fmt);
    n += vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
    va_end(ap);
    if (level == OBC_LOG_LEVEL_TRACE && n < (int)sizeof(text) - 2) {
        const char *base = strrchr(file, '/');
        n += snprintf(text + n, sizeof(text) - (size_t)n, " (%s:%d)", base ? base + 1 : file, line);
    }
    if (n > (int)sizeof(text) - 2) {
        n = (int)sizeof(text) - 2;
    }
    text[n++] = '\n';
    if (write(fileno(log_stream), text, (size_t)n) < 0) {
        return; /* nowhere left to report a failing log */
    }
}
