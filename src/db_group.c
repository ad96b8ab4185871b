/* SPDX-License-Identifier: MIT */
/*
 * db_group.c: the ODBC port of a group member (member.h): the group
 * statements on the executor (db.c) with their parameters; connect and
 * create the group's rows (group_init), one tick (group_tick) read into
 * struct odbc_leader__group_row, and the graceful leave (group_leave);
 * for a dialect without JSON (generic.sql), the tick's lists as masks.
 * The statements come from the dialect; db.c binds and runs them.
 */
#include <build_config.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "db.h"
#include "db_group.h"
#include "db_internal.h"
#include "dialect.h"
#include "log.h"
#include "member.h"

/* ---- the group statements ---- */

int odbc_leader__db_has_group(const struct odbc_leader__db *db) {
    return db->dialect != NULL &&
           db->dialect->ops[ODBC_LEADER__OP_GROUP_TICK].n > 0;
}

int odbc_leader__db_group_op(struct odbc_leader__db *db, int op,
                             const struct odbc_leader__group_args *a,
                             odbc_leader__db_row_fn fn, void *ctx) {
    int cls, rc;

    if (!odbc_leader__db_has_group(db))
        return ODBC_LEADER_EDIALECT;
    db->p_inc = a->inc;
    db->p_seq = a->seq;
    db->p_shards = a->shards;
    db->p_list[0] = a->take;
    db->p_list[1] = a->release;
    db->p_list[2] = a->dead;
    db->p_mask[0] = a->take_mask;
    db->p_mask[1] = a->release_mask;
    db->p_dead_inc = a->dead_inc;
    db->p_dead_seq = a->dead_seq;
    db->p_full = a->full;
    rc = odbc_leader__db_run_op(db, op, fn, ctx, &cls);
    db->p_list[0] = db->p_list[1] = db->p_list[2] = NULL;
    db->p_mask[0] = db->p_mask[1] = NULL;
    return rc;
}

/* ---- the lists for a dialect without JSON (generic.sql) ---- */

/* Reads the next integer of one of member.c's JSON lists ("[1,2]",
 * "[[1,2],[3,4]]") from *s into *v, moving *s past it. Returns 1, or 0 at
 * the end of the text. */
static int next_num(const char **s, int64_t *v) {
    const char *p = *s;
    char *end;

    while (*p != '\0' && *p != '-' && (*p < '0' || *p > '9'))
        p++;
    if (*p == '\0')
        return 0;
    *v = strtoll(p, &end, 10);
    *s = end;
    return 1;
}

/* Returns list (pairs when stride is 2, the shard first) as a new mask of
 * shards characters: '1' at each shard listed, '0' elsewhere; NULL when
 * out of memory. The caller frees it. */
static char *make_mask(const char *list, int64_t shards, int stride) {
    size_t n = (size_t)(shards > 0 ? shards : 0);
    char *m = malloc(n + 1);
    int64_t v;
    int i = 0;

    if (m == NULL)
        return NULL;
    memset(m, '0', n);
    m[n] = '\0';
    while (list != NULL && next_num(&list, &v)) {
        if (i++ % stride == 0 && v >= 0 && v < shards)
            m[v] = '1';
    }
    return m;
}

/* Picks one pair of the :dead list into a->dead_inc, a->dead_seq (0 and
 * -1 when empty): a different one at each tick (seq modulo their count),
 * since a portable statement cannot take a list of pairs; the others are
 * offered at the next ticks. */
static void pick_dead(struct odbc_leader__group_args *a) {
    const char *d = a->dead;
    int64_t v, n = 0, pick;

    a->dead_inc = 0;
    a->dead_seq = -1;
    while (d != NULL && next_num(&d, &v))
        n++;
    if (n < 2)
        return;
    pick = (a->seq < 0 ? 0 : a->seq) % (n / 2);
    d = a->dead;
    for (int64_t i = 0; next_num(&d, &v); i++) {
        if (i == 2 * pick)
            a->dead_inc = v;
        else if (i == 2 * pick + 1)
            a->dead_seq = v;
    }
}

int odbc_leader__db_group_run(struct odbc_leader__db *db, int op,
                              const struct odbc_leader__group_args *in,
                              odbc_leader__db_row_fn fn, void *ctx) {
    const struct odbc_leader__dialect *d = odbc_leader__db_dialect(db);
    struct odbc_leader__group_args a = *in;
    char *take = NULL, *rel = NULL;
    int rc = 0;

    if (d != NULL &&
        odbc_leader__dialect_uses(d, op, ODBC_LEADER__P_TAKE_MASK)) {
        take = make_mask(a.take, a.shards, 1);
        rc = take == NULL ? ODBC_LEADER_ENOMEM : 0;
        a.take_mask = take;
    }
    if (rc == 0 && d != NULL &&
        odbc_leader__dialect_uses(d, op, ODBC_LEADER__P_RELEASE_MASK)) {
        rel = make_mask(a.release, a.shards, 2);
        rc = rel == NULL ? ODBC_LEADER_ENOMEM : 0;
        a.release_mask = rel;
    }
    if (d != NULL && odbc_leader__dialect_uses(d, op, ODBC_LEADER__P_DEAD_INC))
        pick_dead(&a);
    if (rc == 0)
        rc = odbc_leader__db_group_op(db, op, &a, fn, ctx);
    free(take);
    free(rel);
    return rc;
}

/* ---- create, tick, leave ---- */

/* What group_init answered. */
struct init_answer {
    int64_t rows;    /* the group's shard rows */
    int64_t foreign; /* rows named like a shard that belong to no group */
};

static int init_row(void *ctx, void *stmt) {
    struct init_answer *a = ctx;
    int rc = odbc_leader__db_col_int(stmt, 1, &a->rows);

    return rc < 0 ? rc : odbc_leader__db_col_int(stmt, 2, &a->foreign);
}

/* 1 when the port's last failure is worth another run of group_init: a
 * transient one in the dialect's terms (a deadlock, a lock wait or
 * statement timeout), or a unique violation (a dialect without upsert,
 * such as generic.sql, inserting the rows another first member has just
 * committed: the integrity-error retry path). */
static int transient(const struct odbc_leader__db *db) {
    struct odbc_leader__diag d;

    odbc_leader__db_diag(db, &d);
    return d.errclass == ODBC_LEADER__ERR_TRANSIENT ||
           d.errclass == ODBC_LEADER__ERR_UNIQUE;
}

/*
 * Creates the group's missing rows and checks that the group has the
 * configured size. Returns 0, ODBC_LEADER_ECONFIG (another size, or
 * shard namespaces used by single handles) with a message in err, or a
 * negative error.
 *
 * An answer of no rows at all means another first member created the
 * group while this statement ran: the statement waited on that member's
 * uncommitted keys, skipped them, and counted from a snapshot taken
 * before they were committed (PostgreSQL's statement snapshot, InnoDB's
 * transaction snapshot). The rows are committed by then, so it runs once
 * more, as the integrity-error retry path does for a single lease.
 * A transient failure is retried too, up to INIT_RUNS runs in all after
 * a growing pause: when a fleet starts at once, every member but one
 * waits on the first member's uncommitted rows, and inserting 10,000 of
 * them can outlast the statement timeout (the renew interval).
 */
#define INIT_RUNS 6
static int init_group(struct odbc_leader__db *db,
                      const struct odbc_leader__config *cfg, char *err,
                      size_t errlen) {
    struct odbc_leader__group_args a;
    struct init_answer ans = {0, 0};
    int rc = 0;

    memset(&a, 0, sizeof(a));
    a.shards = cfg->shards;
    for (int run = 0; ans.rows == 0 && ans.foreign == 0 && run < INIT_RUNS;
         run++) {
        if (rc < 0) {
            struct timespec pause = {0, (50L << run) * 1000000L};

            if (!transient(db))
                break;
            odbc_leader__logf(odbc_leader__db_log(db), LOG_INFO,
                              "creating the rows of group %s: retrying "
                              "after a transient failure",
                              cfg->ns);
            nanosleep(&pause, NULL);
        }
        ans.rows = -1;
        ans.foreign = 0;
        rc = odbc_leader__db_group_run(db, ODBC_LEADER__OP_GROUP_INIT, &a,
                                       init_row, &ans);
        if (rc < 0)
            ans.rows = 0;
    }
    if (rc < 0) {
        odbc_leader__errf(err, errlen, "creating the rows of group %s failed",
                          cfg->ns);
        return rc;
    }
    if (ans.foreign > 0) {
        odbc_leader__errf(err, errlen,
                          "group %s: %lld namespaces named %s/... are led "
                          "by single handles; choose another LeaderNamespace "
                          "for the group",
                          cfg->ns, (long long)ans.foreign, cfg->ns);
        return ODBC_LEADER_ECONFIG;
    }
    if (ans.rows != cfg->shards) {
        odbc_leader__errf(err, errlen,
                          "group %s has %lld shards in table %slease and "
                          "LeaderShards says %d; every member of a group "
                          "must give the same count",
                          cfg->ns, (long long)ans.rows, cfg->prefix,
                          cfg->shards);
        return ODBC_LEADER_ECONFIG;
    }
    return 0;
}

int odbc_leader__db_group_connect(struct odbc_leader__db *db, char *err,
                                  size_t errlen) {
    const struct odbc_leader__config *cfg = odbc_leader__db_config(db);
    const struct odbc_leader__dialect *d;
    int rc = odbc_leader__db_connect(db, err, errlen);

    if (rc < 0)
        return rc;
    d = odbc_leader__db_dialect(db);
    if (!odbc_leader__db_has_group(db)) {
        odbc_leader__errf(err, errlen,
                          "dialect %s has no group statements (group_init, "
                          "group_tick, group_leave, group_shards): copy "
                          "them from the generic dialect (generic.sql) or "
                          "use a shipped dialect",
                          d != NULL ? d->name : "?");
        odbc_leader__db_disconnect(db);
        return ODBC_LEADER_EDIALECT;
    }
    rc = init_group(db, cfg, err, errlen);
    if (rc < 0)
        odbc_leader__db_disconnect(db);
    return rc;
}

/* Reads one group_tick row into a struct odbc_leader__group_row. */
struct tick_ctx {
    odbc_leader__group_row_fn fn;
    void *ctx;
};

/* The columns of group_tick after the kind: name, a, b, c and (column 7)
 * now_ms. */
static const struct odbc_leader__db_col tick_cols[] = {
    ODBC_LEADER__DB_TEXT(2, struct odbc_leader__group_row, name),
    ODBC_LEADER__DB_NUM(3, struct odbc_leader__group_row, a),
    ODBC_LEADER__DB_NUM(4, struct odbc_leader__group_row, b),
    ODBC_LEADER__DB_NUM(5, struct odbc_leader__group_row, c),
    ODBC_LEADER__DB_NUM(7, struct odbc_leader__group_row, now_ms),
};

static int tick_row(void *ctx, void *stmt) {
    const struct tick_ctx *t = ctx;
    struct odbc_leader__group_row r;
    char kind[4];
    int rc;

    memset(&r, 0, sizeof(r));
    rc = odbc_leader__db_col_text(stmt, 1, kind, sizeof(kind));
    if (rc == 0)
        rc = odbc_leader__db_read_row(stmt, &r, tick_cols,
                                      sizeof(tick_cols) / sizeof(tick_cols[0]));
    if (rc < 0)
        return rc;
    r.kind = kind[0];
    return t->fn(t->ctx, &r);
}

/* The columns of group_shards: shard, leader_id, term, expires_at_ms,
 * now_ms. */
static const struct odbc_leader__db_col shard_cols[] = {
    ODBC_LEADER__DB_NUM(1, struct odbc_leader_shard, shard),
    ODBC_LEADER__DB_TEXT(2, struct odbc_leader_shard, leader_id),
    ODBC_LEADER__DB_NUM(3, struct odbc_leader_shard, term),
    ODBC_LEADER__DB_NUM(4, struct odbc_leader_shard, expires_at_ms),
    ODBC_LEADER__DB_NUM(5, struct odbc_leader_shard, db_now_ms),
};

int odbc_leader__db_group_shards(struct odbc_leader__db *db,
                                 odbc_leader_shard_fn fn, void *ctx) {
    struct odbc_leader__group_args a;
    struct odbc_leader__db_host host = {.shard = fn, .ctx = ctx};
    struct odbc_leader_shard sh;
    struct odbc_leader__db_rows rows =
        ODBC_LEADER__DB_ROWS(shard_cols, &sh, odbc_leader__db_to_host, &host);

    if (!odbc_leader__db_has_group(db))
        return 0;
    memset(&a, 0, sizeof(a));
    return odbc_leader__db_group_run(db, ODBC_LEADER__OP_GROUP_SHARDS, &a,
                                     odbc_leader__db_table_row, &rows);
}

static int port_connect(void *port, char *err, size_t errlen) {
    char buf[512];

    if (err == NULL) {
        err = buf;
        errlen = sizeof(buf);
    }
    return odbc_leader__db_group_connect(port, err, errlen);
}

static void port_disconnect(void *port) { odbc_leader__db_disconnect(port); }

/* Runs one tick: group_steady for a steady one (:full 0; member.c asks
 * so only with nothing to take, release or offer) when the dialect has
 * it, else group_tick. Returns what odbc_leader__db_group_run() does. */
static int port_tick(void *port, const struct odbc_leader__group_args *a,
                     odbc_leader__group_row_fn fn, void *ctx) {
    const struct odbc_leader__db *db = port;
    struct tick_ctx t = {fn, ctx};
    int op = ODBC_LEADER__OP_GROUP_TICK;

    if (a->full == 0 && db->dialect != NULL &&
        db->dialect->ops[ODBC_LEADER__OP_GROUP_STEADY].n > 0)
        op = ODBC_LEADER__OP_GROUP_STEADY;
    return odbc_leader__db_group_run(port, op, a, tick_row, &t);
}

static int port_leave(void *port, int64_t inc) {
    struct odbc_leader__group_args a;

    memset(&a, 0, sizeof(a));
    a.inc = inc;
    return odbc_leader__db_group_run(port, ODBC_LEADER__OP_GROUP_LEAVE, &a,
                                     NULL, NULL);
}

const struct odbc_leader__group_port_ops odbc_leader__db_group_ops = {
    port_connect,
    port_disconnect,
    port_tick,
    port_leave,
};
