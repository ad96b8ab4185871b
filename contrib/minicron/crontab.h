/* SPDX-License-Identifier: MIT */
/*
 * crontab.h: the crontab subset minicron reads. Each job line has the five
 * time fields (minute hour day-of-month month day-of-week) and a command;
 * NAME=VALUE lines set the environment of the job lines after them.
 * crontab_due() says whether a job is due in a given minute.
 */
#ifndef MINICRON_CRONTAB_H
#define MINICRON_CRONTAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* One job line. Bit i of a field is set when value i matches. */
struct cron_job {
    uint64_t minute; /* bits 0..59 */
    uint32_t hour;   /* bits 0..23 */
    uint32_t dom;    /* bits 1..31 */
    uint16_t month;  /* bits 1..12 */
    uint8_t dow;     /* bits 0..6, 0 = Sunday */
    int dom_star;    /* the day-of-month field started with '*' */
    int dow_star;    /* the day-of-week field started with '*' */
    unsigned line;   /* line number in the file, from 1 */
    char *spec;      /* owned: the five time fields as one line, one space
                        apart (an @ shorthand expanded) */
    char *command;   /* owned; run with /bin/sh -c */
    char **env;      /* owned "NAME=VALUE" strings in effect for this job */
    size_t n_env;
};

/* A whole file's jobs, in file order. */
struct crontab {
    struct cron_job *jobs; /* owned */
    size_t n_jobs;
};

/* Reads a crontab from f (borrowed) into *tab, which the caller frees with
 * crontab_free() whatever the outcome. name is used in messages only.
 * Returns 0, or -1 with "NAME:LINE: reason" in err. */
int crontab_read(FILE *f, const char *name, struct crontab *tab, char *err,
                 size_t errlen);

/* Frees what tab owns and leaves it empty. */
void crontab_free(struct crontab *tab);

/* 1 when job (borrowed) is due in the minute tm (borrowed) describes,
 * else 0. */
int crontab_due(const struct cron_job *job, const struct tm *tm);

#endif /* MINICRON_CRONTAB_H */
