/* SPDX-License-Identifier: MIT */
/*
 * log.h - OBC_DEBUG logging. Every line goes to stderr (or OBC_LOG_FILE),
 * never stdout, prefixed "obc host:pid:rank LEVEL subsys". The level and
 * subsystem mask are read once per process, from the config table.
 */
#ifndef OBC_CORE_LOG_H
#define OBC_CORE_LOG_H

enum obc__log_level { OBC_LOG_LEVEL_WARN = 0, OBC_LOG_LEVEL_INFO = 1, OBC_LOG_LEVEL_TRACE = 2 };

enum obc__log_subsys {
    OBC_LOG_INIT = 1 << 0,
    OBC_LOG_BOOT = 1 << 1,
    OBC_LOG_SHM = 1 << 2,
    OBC_LOG_TCP = 1 << 3,
    OBC_LOG_COLL = 1 << 4,
    OBC_LOG_PROGRESS = 1 << 5,
};

extern int obc__log_level;
extern unsigned obc__log_subsys_mask;

void obc__log_init(void);
void obc__log_set_rank(int rank);
/* The rank the prefix shows now (-1 before any communicator). */
int obc__log_rank(void);
void obc__log_write(int level, unsigned subsys, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define OBC_LOG_ENABLED(level, subsys) \
    (obc__log_init(), obc__log_level >= (level) && (obc__log_subsys_mask & (subsys)) != 0)

#define OBC_WARN(...) obc__log_write(OBC_LOG_LEVEL_WARN, ~0u, __FILE__, __LINE__, __VA_ARGS__)
#define OBC_INFO(subsys, ...) \
    do { \
        if (OBC_LOG_ENABLED(OBC_LOG_LEVEL_INFO, subsys)) { \
            obc__log_write(OBC_LOG_LEVEL_INFO, subsys, __FILE__, __LINE__, __VA_ARGS__); \
        } \
    } while (0)
#ifdef NDEBUG_TRACE
#define OBC_TRACE(subsys, ...) ((void)0)
#else
#define OBC_TRACE(subsys, ...) \
    do { \
        if (OBC_LOG_ENABLED(OBC_LOG_LEVEL_TRACE, subsys)) { \
            obc__log_write(OBC_LOG_LEVEL_TRACE, subsys, __FILE__, __LINE__, __VA_ARGS__); \
        } \
    } while (0)
#endif

#endif
