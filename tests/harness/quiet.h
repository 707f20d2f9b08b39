/* SPDX-License-Identifier: MIT */
/*
 * quiet.h - quiet scopes: the output of a scenario, shown only if it fails.
 *
 * A fault scenario prints hundreds of lines when it passes (every child's
 * library WARN lines, the parent's per-rank reports), and a CI log that shows
 * only the first lines of a test then hides the FAIL line that matters. In a
 * quiet scope the parent's stdout and stderr (fds 1 and 2) point at a capture
 * file, which the children it forks inherit. When the scope ends, the capture
 * is dropped if nothing failed, or copied to the real stderr between framing
 * lines, followed by its FAIL lines, if a check failed (obct_failures() grew)
 * or any FAIL line was printed. A fatal obct_fail, the watchdog, or an exit
 * inside a scope replays it first. OBCT_VERBOSE=1 turns capturing off:
 * everything is printed live.
 *
 * obct_spawn opens a scope and obct_job_free closes it, so the fault tests
 * need no calls of their own (spawn_ranks.h: obct_scenario names them).
 * obct_finish repeats the first FAIL lines at the end of the output.
 *
 * Part of the obct test library (tests/harness), used by obct.c and
 * spawn_ranks.c.
 */
#ifndef OBCT_QUIET_H
#define OBCT_QUIET_H

/* Start capturing; label names the scope in the replay. Returns 1 if this call
 * opened a scope, 0 if one was open already, OBCT_VERBOSE is set, or no capture
 * file could be made (then everything stays live). */
int obct_quiet_begin(const char *label);
/* Stop capturing and replay the capture if something failed; returns 1 if it did. */
int obct_quiet_end(void);
/* For obct_fail: replay the open scope's capture, if any, before the exit. */
void obct_quiet_end_fatal(void);
/* For a signal handler about to _exit: restore fds 1 and 2 and copy the capture
 * to stderr, with async-signal-safe calls only. */
void obct_quiet_abandon_in_signal(void);

/* Remember a FAIL line printed outside a scope (inside one, the scope's replay
 * finds it), for obct_quiet_print_fail_lines. */
void obct_quiet_note_fail_line(const char *line);
/* Print the first FAIL lines this process noted or replayed, on stderr. */
void obct_quiet_print_fail_lines(void);

#endif /* OBCT_QUIET_H */
