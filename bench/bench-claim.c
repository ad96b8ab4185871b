/* SPDX-License-Identifier: MIT */
/*
 * bench-claim.c: times odbc_leader_claim() for make bench
 * (bench/part-claims.sh).
 *
 *   bench-claim [-n CLAIMS] [-H HOOK] CONFIG
 *
 * Creates a handle from CONFIG plus ";LeaderId=bench-claimer" and ticks it
 * until it leads. Then three roles, each CLAIMS calls timed one by one with
 * CLOCK_MONOTONIC between "HOOK before-ROLE" and "HOOK after-ROLE" (run
 * through system(), so a script can read the server's counters around
 * exactly those calls): "claim", new fires (each call inserts a row), and
 * "claimed", the same fires again (each call ends in the unique violation,
 * the "already claimed" answer), and "scheduled", new fires of a job with
 * a schedule identity (odbc_leader_set_schedule: each call checks it
 * first, docs/schedules.md). The fires are CLAIMS consecutive
 * milliseconds ending at the database clock read once before. Prints one
 * line per role:
 *   role=claim n=N median_us=M p99_us=P errors=E
 * Exits 1 when the handle cannot lead or a call answers anything but 1
 * (claim) or 0 (claimed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "odbc_leader.h"
#include "tickstats.h"

#define CONFIG_MAX 4096

/* Times n claims of fires base .. base + n - 1, each of which must answer
 * want. Returns the number of wrong answers, or -1 when a hook failed. */
static long run_role(odbc_leader_t *h, const char *hook, const char *role,
                     const char *job, int64_t base, long n, int want) {
    int64_t *t = calloc((size_t)n, sizeof(*t));
    double median, p99;
    long errors = 0;

    if (t == NULL || tickstats_hook("bench-claim", hook, "before", role) < 0) {
        free(t);
        return -1;
    }
    for (long i = 0; i < n; i++) {
        int64_t start = tickstats_mono_ns();
        int rc = odbc_leader_claim(h, job, base + i);

        t[i] = tickstats_mono_ns() - start;
        if (rc != want && errors++ == 0)
            fprintf(stderr, "bench-claim: %s %ld answered %d (%s)\n", role, i,
                    rc, rc < 0 ? odbc_leader_strerror(rc) : "");
    }
    if (tickstats_hook("bench-claim", hook, "after", role) < 0)
        errors = -1;
    tickstats_summary(t, n, &median, &p99);
    printf("role=%s n=%ld median_us=%.1f p99_us=%.1f errors=%ld\n", role, n,
           median, p99, errors);
    free(t);
    return errors;
}

int main(int argc, char **argv) {
    struct odbc_leader_lease lease;
    const char *hook = NULL;
    char conf[CONFIG_MAX], err[512];
    odbc_leader_t *h = NULL;
    long n = 1000;
    int c, rc = 1;

    while ((c = getopt(argc, argv, "n:H:")) != -1) {
        if (c == 'n')
            n = strtol(optarg, NULL, 10);
        else if (c == 'H')
            hook = optarg;
        else
            return 64;
    }
    if (optind + 1 != argc || n < 1)
        return 64;
    snprintf(conf, sizeof(conf), "%s;LeaderId=bench-claimer", argv[optind]);
    if (odbc_leader_create(&h, conf, NULL, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench-claim: %s\n", err);
        return 1;
    }
    for (int i = 0; i < 5 && odbc_leader_tick(h, NULL) != 1; i++)
        usleep(100000);
    if (!odbc_leader_is_leader(h) || odbc_leader_read_lease(h, &lease) < 0) {
        fprintf(stderr, "bench-claim: did not lead\n");
        goto out;
    }
    rc = odbc_leader_set_schedule(h, "bench-scheduled", "every 1 ms", "",
                                  "bench-claim");
    if (rc < 0) {
        fprintf(stderr, "bench-claim: set_schedule: %s\n",
                odbc_leader_strerror(rc));
        rc = 1;
        goto out;
    }
    rc = 1;
    if (run_role(h, hook, "claim", "bench", lease.db_now_ms - n, n, 1) == 0 &&
        run_role(h, hook, "claimed", "bench", lease.db_now_ms - n, n, 0) == 0 &&
        run_role(h, hook, "scheduled", "bench-scheduled", lease.db_now_ms - n,
                 n, 1) == 0)
        rc = 0;
out:
    odbc_leader_destroy(h);
    return rc;
}
