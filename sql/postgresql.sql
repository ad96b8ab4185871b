-- SPDX-License-Identifier: MIT
-- postgresql.sql: odbc-leader dialect for PostgreSQL (psqlODBC 13,
-- PostgreSQL 15).
--
-- The format of this file is described in docs/dialects.md
-- (installed as /usr/share/doc/odbc-leader/dialects.md).
--
-- Here "now" is clock_timestamp() (now() would be the transaction start),
-- computed once per statement in a "clock" CTE. attempt and renew are
-- single statements with data-modifying CTEs: one round trip each.
-- Parameters carry explicit CASTs so the server never has to guess types.

-- @dialect postgresql
-- @define now CAST(FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) AS BIGINT)
-- @define by_member 9223372036854775807
-- The wake-up lock of a namespace: a session-level advisory lock that
-- the leader takes with its term and lets go of after resigning, so that
-- followers blocked in "wait" wake up at once (see release and wait).
-- Advisory locks are per database; two table prefixes in one database
-- share a namespace's key, which only costs them fast wake-ups.
-- @define wake_key hashtext('odbc-leader'), hashtext(CAST(:ns AS TEXT))
-- Taking it without waiting, in attempt and renew; under transaction
-- pooling (LeaderPooler=transaction, e.g. pgbouncer pool_mode=transaction)
-- a session lock would stay on a server connection other clients get, so
-- it is never taken: the wake-up is off and followers poll.
-- @define wake_try pg_try_advisory_lock(hashtext('odbc-leader'), hashtext(CAST(:ns AS TEXT)))
-- @pooled wake_try FALSE
-- Under transaction pooling each operation is one transaction that starts
-- by bounding itself (SET LOCAL ends with the transaction), and psqlODBC
-- prepares nothing on the server (a named statement lives in one server
-- session and the next transaction may run in another).
-- @pooled-prologue SET LOCAL statement_timeout = {timeout_ms}
-- @pooled-connect-keys UseServerSidePrepare=0
-- The database epoch: the cluster's system identifier and the timeline
-- it writes on. A promoted standby (or a restored backup) starts a new
-- timeline; a restart keeps it. In recovery, writes fail with 25006
-- before this is read (the guard keeps pg_walfile_name from running).
-- @define epoch ((SELECT CAST(system_identifier AS TEXT) FROM pg_control_system()) || '/' || CASE WHEN pg_is_in_recovery() THEN 'recovery' ELSE SUBSTR(pg_walfile_name(pg_current_wal_insert_lsn()), 1, 8) END)
-- @dbms PostgreSQL
-- @schema-version 9
-- @query-timeout off
-- @unique-violation 23505
-- @transient 40001 40P01 55P03 57014
-- @connection-lost 08* 57P01 57P02 57P03
-- @undefined-table 42P01
-- @read-only 25006

-- @statement on_connect
-- Every statement is bounded in milliseconds by the session's
-- statement_timeout. The ODBC query timeout stays off (@query-timeout):
-- psqlODBC would send its own whole-second SET statement_timeout before
-- statements, overriding this one.
SET statement_timeout = {timeout_ms};

-- @statement ddl
CREATE TABLE IF NOT EXISTS {prefix}schema (
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS {prefix}lease (
    namespace VARCHAR(128) NOT NULL PRIMARY KEY,
    leader_id VARCHAR(128) NULL,
    term BIGINT NOT NULL,
    elected_at_ms BIGINT,
    renewed_at_ms BIGINT,
    expires_at_ms BIGINT NOT NULL,
    -- request_resign sets both (renew reports them), attempt resets both
    resign_requested INTEGER NOT NULL DEFAULT 0,
    handoff_to VARCHAR(128) NULL
);
CREATE TABLE IF NOT EXISTS {prefix}candidate (
    namespace VARCHAR(128) NOT NULL,
    candidate_id VARCHAR(128) NOT NULL,
    registered_at_ms BIGINT NOT NULL,
    heartbeat_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    PRIMARY KEY (namespace, candidate_id)
);
-- These are the version-1 tables; the engine then runs upgrade, so a new
-- database takes the same path as an upgraded one.
INSERT INTO {prefix}schema (version)
SELECT 1
WHERE NOT EXISTS (SELECT 1 FROM {prefix}schema);

-- @statement upgrade
-- Any earlier version to 9, in one transaction (PostgreSQL DDL is
-- transactional; every statement can run again): version 2 added the fire
-- ledger, version 3 the lease's epoch, version 4 the database's epoch in
-- the schema row (and since when, in ms; 0: since before any lease),
-- version 5 sharded groups, version 6 the election log, version 7 the
-- fire lifecycle, version 8 schedule identities, version 9 shards held
-- under their member's lease.
-- Two candidates upgrading at once may collide on the catalog; the engine
-- then reads the version the other one wrote.
CREATE TABLE IF NOT EXISTS {prefix}fire (
    namespace VARCHAR(128) NOT NULL,
    job VARCHAR(128) NOT NULL,
    fire_ms BIGINT NOT NULL,
    term BIGINT NOT NULL,
    claimed_by VARCHAR(128) NOT NULL,
    claimed_at_ms BIGINT NOT NULL,
    finished_at_ms BIGINT NULL,
    status INTEGER NULL,
    PRIMARY KEY (namespace, job, fire_ms)
);
-- The epoch the lease row was last written in (NULL: before version 3,
-- taken as the current one).
ALTER TABLE {prefix}lease ADD COLUMN IF NOT EXISTS epoch VARCHAR(64) NULL;
ALTER TABLE {prefix}schema ADD COLUMN IF NOT EXISTS epoch VARCHAR(64) NULL;
ALTER TABLE {prefix}schema ADD COLUMN IF NOT EXISTS epoch_since_ms BIGINT NULL;
UPDATE {prefix}schema SET epoch = {epoch}, epoch_since_ms = 0
WHERE epoch IS NULL;
-- Version 5: sharded groups (docs/protocol.md, "Groups"). A group's
-- shards are lease rows named GROUP/SHARD with grp and shard set; inc is
-- the holder process's incarnation (a random number drawn at start), so
-- a restart under the same candidate id never renews the rows the old
-- process won; renew_seq is the number of the holder's tick that last
-- renewed or took the row (it only grows, whatever the clocks do).
ALTER TABLE {prefix}lease ADD COLUMN IF NOT EXISTS grp VARCHAR(128) NULL;
ALTER TABLE {prefix}lease ADD COLUMN IF NOT EXISTS shard INTEGER NULL;
ALTER TABLE {prefix}lease ADD COLUMN IF NOT EXISTS inc BIGINT NULL;
ALTER TABLE {prefix}lease ADD COLUMN IF NOT EXISTS renew_seq BIGINT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS {prefix}lease_grp_shard
    ON {prefix}lease (grp, shard);
CREATE INDEX IF NOT EXISTS {prefix}lease_grp_inc ON {prefix}lease (grp, inc);
-- Room on every page for the renewals' new row versions: a renewal
-- changes no indexed column, so with free space on the page it is a HOT
-- update that touches no index (ten members of a 10,000-shard group renew
-- 20,000 rows a second between them; with full pages each renewal also
-- wrote both indexes, which doubled in size between vacuums).
ALTER TABLE {prefix}lease SET (fillfactor = 50);
-- Version 6: the election log, one row per term of a namespace (not of a
-- group's shards): attempt writes the winner's row in the statement that
-- wins, resign and the next takeover end it (docs/protocol.md, "The
-- election log").
CREATE TABLE IF NOT EXISTS {prefix}election (
    namespace VARCHAR(128) NOT NULL,
    term BIGINT NOT NULL,
    leader_id VARCHAR(128) NOT NULL,
    started_at_ms BIGINT NOT NULL,
    ended_at_ms BIGINT NULL,
    ended_how VARCHAR(16) NULL,
    handed_to VARCHAR(128) NULL,
    PRIMARY KEY (namespace, term)
);
-- Version 7: the fire lifecycle (docs/lifecycle.md): a fire's state, its
-- attempt and how many attempts its job allows (1: at most once), and
-- the jobs an operator paused. Rows of earlier versions get the state
-- their columns tell.
ALTER TABLE {prefix}fire
    ADD COLUMN IF NOT EXISTS state VARCHAR(16) NOT NULL DEFAULT 'running',
    ADD COLUMN IF NOT EXISTS attempt INTEGER NOT NULL DEFAULT 1,
    ADD COLUMN IF NOT EXISTS max_attempts INTEGER NOT NULL DEFAULT 1;
UPDATE {prefix}fire
SET state = CASE WHEN status = 0 THEN 'done' ELSE 'failed' END
WHERE finished_at_ms IS NOT NULL AND state = 'running';
CREATE INDEX IF NOT EXISTS {prefix}fire_state
    ON {prefix}fire (namespace, state);
CREATE TABLE IF NOT EXISTS {prefix}job (
    namespace VARCHAR(128) NOT NULL,
    job VARCHAR(128) NOT NULL,
    paused INTEGER NOT NULL,
    changed_at_ms BIGINT NOT NULL,
    changed_by VARCHAR(128) NOT NULL,
    PRIMARY KEY (namespace, job)
);
UPDATE {prefix}schema SET version = 7 WHERE version < 7;
-- Version 8: schedule identities (docs/schedules.md): how a job's fires
-- are computed (expression, time zone, engine), recorded at its first
-- claim or by an operator's reschedule, and the claims refused since
-- because another host computes them otherwise.
ALTER TABLE {prefix}job
    ADD COLUMN IF NOT EXISTS schedule VARCHAR(512) NULL,
    ADD COLUMN IF NOT EXISTS schedule_at_ms BIGINT NULL,
    ADD COLUMN IF NOT EXISTS schedule_by VARCHAR(128) NULL,
    ADD COLUMN IF NOT EXISTS refusals BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS refused VARCHAR(512) NULL,
    ADD COLUMN IF NOT EXISTS refused_at_ms BIGINT NULL,
    ADD COLUMN IF NOT EXISTS refused_by VARCHAR(128) NULL;
UPDATE {prefix}schema SET version = 8 WHERE version < 8;
-- Version 9: shards held under their member's lease (docs/protocol.md,
-- "Shards held under the member's lease"). One row per member
-- incarnation: its lease in database time, its renewal counter (never
-- lowered) and the epoch it was written in. A shard row a member of this
-- version takes says so with the expiry {by_member}: it holds while its
-- holder's lease does, and is written again only when it moves. Members
-- of version 8 still running go on renewing their own rows; they never
-- take a row of {by_member} (never expired to them).
CREATE TABLE IF NOT EXISTS {prefix}member (
    grp VARCHAR(128) NOT NULL,
    inc BIGINT NOT NULL,
    member_id VARCHAR(128) NOT NULL,
    started_at_ms BIGINT NOT NULL,
    renewed_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    renew_seq BIGINT NOT NULL,
    epoch VARCHAR(64) NULL,
    PRIMARY KEY (grp, inc)
);
ALTER TABLE {prefix}member SET (fillfactor = 50);
UPDATE {prefix}schema SET version = 9 WHERE version < 9;

-- @statement schema_version
SELECT MAX(version) FROM {prefix}schema;

-- @statement attempt
-- Heartbeat, then take the lease when it was released (vacant and not
-- reserved for another candidate, or reserved for us, or reserved for
-- another whose reservation ran out), or when it expired AND it is
-- exactly the row the caller has watched for one TTL on its own clock
-- (:seen_term, :seen_expires_ms; 0 when it has not: matches no row). So
-- neither a forward step of the server clock nor a candidate that has
-- just started can take a held (or quarantined, handoff_to = '') lease
-- while its holder may still trust it (docs/protocol.md, "Takeover: the
-- watch").
-- Never an unexpired held lease, even our own. The UPDATE's own row
-- lock serialises takers: a concurrent attempt waits for it, then
-- re-checks its WHERE clause against the committed row and finds the
-- lease taken. The won=0 branch reads "cur" without a lock (a FOR SHARE
-- would make every follower's attempt write the row); after such a wait
-- it may report the statement's older snapshot, and the follower sees the
-- new holder at its next attempt. "cur" is only scanned when upd and ins
-- are both empty.
-- The first row of a namespace comes from a plain INSERT (not ON
-- CONFLICT): when two candidates create it at once, the second waits on
-- the primary key and then fails with 23505; the engine rolls back and
-- retries once (the integrity-error retry path). Its term is the database
-- clock in ms, so a namespace whose row was deleted (or a new table
-- prefix) starts above every term it had before (docs/protocol.md).
-- A row written in another epoch (the server is a promoted standby or a
-- restored copy: the row may be seconds old and its holder may have
-- renewed, or lost the lease, on the old primary) is not taken: "quar"
-- quarantines it for one TTL of this epoch's clock (vacant, reserved for
-- nobody: handoff_to = '') and moves its term above every term the old
-- primary can have issued (terms never outrun the clock in ms). upd and
-- quar read the same snapshot and exclude each other by epoch.
-- A promoted copy may also lack the row (the old primary created it after
-- the copy's last applied transaction). So ins only wins when the schema
-- row says this database has been in this epoch for one TTL ("settled");
-- otherwise it inserts the row quarantined, and "mark" records that the
-- epoch changed, and when (a new database is settled from the start).
-- The election log, in the same statement: "elog" opens the winner's entry
-- (an upsert: a term number may come back after the lease row was
-- deleted); a takeover ("upd") ends the open entries of earlier terms as
-- expired (the watched term at its expiry), a quarantine ("quar") as
-- quarantined. They write other rows than each other, so the CTEs' shared
-- snapshot does not matter.
-- The winner also tries to take the namespace's wake-up lock before its
-- term commits, so a follower that sees the new term finds it held.
-- Result: leader_id, term, expires_at_ms, now_ms, won, held (1 when the
-- wake-up lock was taken; when a waking follower held it for a moment,
-- the engine runs hold).
WITH clock AS (
    SELECT {now}
        AS now_ms
),
heartbeat AS (
    INSERT INTO {prefix}candidate AS c (namespace, candidate_id,
        registered_at_ms, heartbeat_at_ms, expires_at_ms)
    SELECT CAST(:ns AS VARCHAR(128)), CAST(:id AS VARCHAR(128)),
        clock.now_ms, clock.now_ms,
        clock.now_ms + CAST(:cand_ttl_ms AS BIGINT)
    FROM clock
    ON CONFLICT (namespace, candidate_id) DO UPDATE
    SET heartbeat_at_ms = EXCLUDED.heartbeat_at_ms,
        expires_at_ms = EXCLUDED.expires_at_ms
    RETURNING c.candidate_id
),
upd AS (
    UPDATE {prefix}lease AS l
    SET leader_id = CAST(:id AS VARCHAR(128)),
        term = l.term + 1,
        elected_at_ms = clock.now_ms,
        renewed_at_ms = clock.now_ms,
        expires_at_ms = clock.now_ms + CAST(:ttl_ms AS BIGINT),
        resign_requested = 0,
        handoff_to = NULL,
        epoch = {epoch}
    FROM clock
    WHERE l.namespace = CAST(:ns AS VARCHAR(128))
      AND (l.epoch IS NULL OR l.epoch = {epoch})
      AND ((l.leader_id IS NULL
            AND (l.handoff_to IS NULL
                 OR l.handoff_to = CAST(:id AS VARCHAR(128))
                 OR (l.handoff_to <> ''
                     AND l.expires_at_ms <= clock.now_ms)))
           OR (l.expires_at_ms <= clock.now_ms
               AND l.term = CAST(:seen_term AS BIGINT)
               AND l.expires_at_ms = CAST(:seen_expires_ms AS BIGINT)))
    RETURNING l.leader_id, l.term, l.expires_at_ms, clock.now_ms
),
quar AS (
    UPDATE {prefix}lease AS l
    SET leader_id = NULL,
        term = GREATEST(l.term + 1, clock.now_ms),
        renewed_at_ms = clock.now_ms,
        expires_at_ms = clock.now_ms + CAST(:ttl_ms AS BIGINT),
        resign_requested = 0,
        handoff_to = '',
        epoch = {epoch}
    FROM clock
    WHERE l.namespace = CAST(:ns AS VARCHAR(128))
      AND l.epoch IS NOT NULL
      AND l.epoch <> {epoch}
    RETURNING l.leader_id, l.term, l.expires_at_ms, clock.now_ms
),
settled AS (
    SELECT CASE WHEN EXISTS (
        SELECT 1 FROM {prefix}schema AS s, clock
        WHERE s.epoch IS NULL OR s.epoch <> {epoch}
           OR s.epoch_since_ms > clock.now_ms - CAST(:ttl_ms AS BIGINT))
        THEN 0 ELSE 1 END AS yes
),
mark AS (
    UPDATE {prefix}schema AS s
    SET epoch = {epoch}, epoch_since_ms = clock.now_ms
    FROM clock
    WHERE (s.epoch IS NULL OR s.epoch <> {epoch})
      AND NOT EXISTS (SELECT 1 FROM {prefix}lease
                      WHERE namespace = CAST(:ns AS VARCHAR(128)))
    RETURNING s.version
),
ins AS (
    INSERT INTO {prefix}lease (namespace, leader_id, term, elected_at_ms,
        renewed_at_ms, expires_at_ms, resign_requested, handoff_to, epoch)
    SELECT CAST(:ns AS VARCHAR(128)),
        CASE WHEN settled.yes = 1 THEN CAST(:id AS VARCHAR(128)) END,
        clock.now_ms, clock.now_ms, clock.now_ms,
        clock.now_ms + CAST(:ttl_ms AS BIGINT), 0,
        CASE WHEN settled.yes = 1 THEN NULL ELSE '' END, {epoch}
    FROM clock, settled
    WHERE NOT EXISTS (SELECT 1 FROM {prefix}lease
                      WHERE namespace = CAST(:ns AS VARCHAR(128)))
    RETURNING leader_id, term, expires_at_ms
),
elog AS (
    INSERT INTO {prefix}election AS e (namespace, term, leader_id,
        started_at_ms, ended_at_ms, ended_how, handed_to)
    SELECT CAST(:ns AS VARCHAR(128)), w.term, w.leader_id, clock.now_ms,
        NULL, NULL, NULL
    FROM (SELECT term, leader_id FROM upd
          UNION ALL
          SELECT term, leader_id FROM ins WHERE leader_id IS NOT NULL) AS w,
        clock
    ON CONFLICT (namespace, term) DO UPDATE
    SET leader_id = EXCLUDED.leader_id,
        started_at_ms = EXCLUDED.started_at_ms,
        ended_at_ms = NULL,
        ended_how = NULL,
        handed_to = NULL
    RETURNING e.term
),
eend AS (
    UPDATE {prefix}election AS e
    SET ended_at_ms = CASE WHEN quar.term IS NULL
                                AND e.term = CAST(:seen_term AS BIGINT)
                           THEN CAST(:seen_expires_ms AS BIGINT)
                           ELSE clock.now_ms END,
        ended_how = CASE WHEN quar.term IS NULL THEN 'expired'
                         ELSE 'quarantined' END
    FROM clock,
        (SELECT term FROM upd UNION ALL SELECT term FROM quar) AS w
        LEFT JOIN quar ON quar.term = w.term
    WHERE e.namespace = CAST(:ns AS VARCHAR(128))
      AND e.ended_at_ms IS NULL
      AND e.term < w.term
    RETURNING e.term
),
cur AS (
    SELECT leader_id, term, expires_at_ms
    FROM {prefix}lease
    WHERE namespace = CAST(:ns AS VARCHAR(128))
)
SELECT r.leader_id, r.term, r.expires_at_ms, r.now_ms, r.won,
    CASE WHEN r.won = 1 AND {wake_try} THEN 1
         ELSE 0 END AS held
FROM (
    SELECT upd.leader_id, upd.term, upd.expires_at_ms, upd.now_ms, 1 AS won
    FROM upd
    UNION ALL
    SELECT ins.leader_id, ins.term, ins.expires_at_ms, clock.now_ms,
        CASE WHEN ins.leader_id IS NULL THEN 0 ELSE 1 END
    FROM ins, clock
    UNION ALL
    SELECT quar.leader_id, quar.term, quar.expires_at_ms, quar.now_ms, 0
    FROM quar
    UNION ALL
    SELECT cur.leader_id, cur.term, cur.expires_at_ms, clock.now_ms, 0
    FROM cur, clock
    WHERE NOT EXISTS (SELECT 1 FROM upd)
      AND NOT EXISTS (SELECT 1 FROM ins)
      AND NOT EXISTS (SELECT 1 FROM quar)
) AS r;

-- @statement renew
-- Heartbeat, then extend the lease only for the exact holder and term,
-- and only while it is unexpired and written in this epoch. No row = the
-- lease is lost. The leader
-- also deletes candidate rows that expired more than one candidate TTL
-- ago (crashed processes with random ids would otherwise pile up).
-- A renewed term (re)takes the wake-up lock (a paused former leader may
-- have held it) and reports it in "held". Taking a held lock again only
-- counts up; release lets go of every count. "offered" counts the fires
-- offered to the leader (run-now and recoverable interrupted ones), each
-- kind by an equality on state: a search of the (namespace, state) index.
WITH clock AS (
    SELECT {now}
        AS now_ms
),
heartbeat AS (
    INSERT INTO {prefix}candidate AS c (namespace, candidate_id,
        registered_at_ms, heartbeat_at_ms, expires_at_ms)
    SELECT CAST(:ns AS VARCHAR(128)), CAST(:id AS VARCHAR(128)),
        clock.now_ms, clock.now_ms,
        clock.now_ms + CAST(:cand_ttl_ms AS BIGINT)
    FROM clock
    ON CONFLICT (namespace, candidate_id) DO UPDATE
    SET heartbeat_at_ms = EXCLUDED.heartbeat_at_ms,
        expires_at_ms = EXCLUDED.expires_at_ms
    RETURNING c.candidate_id
),
gc AS (
    DELETE FROM {prefix}candidate
    WHERE namespace = CAST(:ns AS VARCHAR(128))
      AND candidate_id <> CAST(:id AS VARCHAR(128))
      AND expires_at_ms < (SELECT now_ms FROM clock)
                          - CAST(:cand_ttl_ms AS BIGINT)
),
upd AS (
    UPDATE {prefix}lease AS l
    SET renewed_at_ms = clock.now_ms,
        expires_at_ms = clock.now_ms + CAST(:ttl_ms AS BIGINT),
        epoch = {epoch}
    FROM clock
    WHERE l.namespace = CAST(:ns AS VARCHAR(128))
      AND l.leader_id = CAST(:id AS VARCHAR(128))
      AND l.term = CAST(:term AS BIGINT)
      AND l.expires_at_ms > clock.now_ms
      AND (l.epoch IS NULL OR l.epoch = {epoch})
    RETURNING l.leader_id, l.term, l.expires_at_ms, clock.now_ms,
        l.resign_requested, l.handoff_to
)
SELECT leader_id, term, expires_at_ms, now_ms, resign_requested, handoff_to,
    CASE WHEN {wake_try} THEN 1 ELSE 0 END AS held,
    (SELECT COUNT(*) FROM {prefix}fire AS f
     WHERE f.namespace = CAST(:ns AS VARCHAR(128)) AND f.state = 'pending')
    + (SELECT COUNT(*) FROM {prefix}fire AS f
       WHERE f.namespace = CAST(:ns AS VARCHAR(128))
         AND f.state = 'interrupted'
         AND f.attempt < f.max_attempts) AS offered
FROM upd;

-- @statement resign
-- Only the exact term: the row and its term stay, the lease is vacant.
-- After a request with a handoff target the lease stays reserved for
-- that candidate for one TTL (attempt lets only it take a vacant,
-- unexpired lease), then it is open to anyone. "eend" ends the term's
-- entry in the election log by how the lease row ("was", read before this
-- UPDATE resets the request) says it was asked; the row count is the
-- lease's UPDATE's.
WITH was AS (
    SELECT resign_requested, handoff_to
    FROM {prefix}lease
    WHERE namespace = CAST(:ns AS VARCHAR(128))
      AND leader_id = CAST(:id AS VARCHAR(128))
      AND term = CAST(:term AS BIGINT)
),
eend AS (
    UPDATE {prefix}election AS e
    SET ended_at_ms = {now},
        ended_how = CASE WHEN was.handoff_to <> '' THEN 'handover'
                         WHEN was.resign_requested <> 0 THEN 'requested'
                         ELSE 'resigned' END,
        handed_to = NULLIF(was.handoff_to, '')
    FROM was
    WHERE e.namespace = CAST(:ns AS VARCHAR(128))
      AND e.term = CAST(:term AS BIGINT)
      AND e.ended_at_ms IS NULL
    RETURNING e.term
)
UPDATE {prefix}lease
SET leader_id = NULL,
    resign_requested = 0,
    expires_at_ms = CASE WHEN handoff_to IS NULL THEN {now}
                         ELSE {now} + CAST(:ttl_ms AS BIGINT) END
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND leader_id = CAST(:id AS VARCHAR(128))
  AND term = CAST(:term AS BIGINT);

-- @statement unregister
DELETE FROM {prefix}candidate
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND candidate_id = CAST(:id AS VARCHAR(128));

-- @statement leader
WITH clock AS (
    SELECT {now}
        AS now_ms
)
SELECT l.leader_id, l.term,
    CASE WHEN l.expires_at_ms = {by_member}
         THEN COALESCE(mb.expires_at_ms, 0) ELSE l.expires_at_ms END,
    clock.now_ms
FROM clock, {prefix}lease AS l
LEFT JOIN {prefix}member AS mb ON mb.grp = l.grp AND mb.inc = l.inc
WHERE l.namespace = CAST(:ns AS VARCHAR(128));

-- @statement candidates
WITH clock AS (
    SELECT {now}
        AS now_ms
)
SELECT c.candidate_id, c.heartbeat_at_ms, c.expires_at_ms, clock.now_ms
FROM {prefix}candidate AS c, clock
WHERE c.namespace = CAST(:ns AS VARCHAR(128))
  AND c.expires_at_ms > clock.now_ms
ORDER BY c.candidate_id;

-- @statement request_resign
-- Asks whoever leads now to resign at its next renewal, optionally
-- handing over to :to (NULL = anyone). Changes no row when nobody leads.
UPDATE {prefix}lease
SET resign_requested = 1,
    handoff_to = CAST(:to AS VARCHAR(128))
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND leader_id IS NOT NULL
  AND expires_at_ms > {now};

-- @statement release
-- Lets go of the wake-up lock (every count of it); run after resign has
-- committed and whenever the engine steps down.
SELECT 1 AS released FROM (SELECT pg_advisory_unlock_all()) AS u;

-- @statement wait
-- A follower blocks here until the leader lets go of the wake-up lock,
-- for at most :wait_ms (lock_timeout, local to this statement's
-- transaction; the timeout fails with 55P03, which the engine reads as
-- "not woken"). The shared lock is let go when the statement ends, and
-- many followers can hold it at once.
SELECT 1 AS woken,
    CAST(pg_advisory_xact_lock_shared({wake_key}) AS TEXT) AS lock
FROM (SELECT set_config('lock_timeout',
                        CAST(CAST(:wait_ms AS BIGINT) AS TEXT),
                        true) AS t) AS cfg
WHERE cfg.t IS NOT NULL;

-- @statement hold
-- Takes the wake-up lock when attempt or renew could not, waiting up to
-- :wait_ms for followers that hold it for a moment as they wake; a lock
-- timeout (55P03) means "not held". Result: held.
SELECT 1 AS held, CAST(pg_advisory_lock({wake_key}) AS TEXT) AS lock
FROM (SELECT set_config('lock_timeout',
                        CAST(CAST(:wait_ms AS BIGINT) AS TEXT),
                        true) AS t) AS cfg
WHERE cfg.t IS NOT NULL;

-- @statement claim
-- Records fire :fire_ms of :job for our term only while, at this
-- statement's clock, we hold the namespace's current, unexpired term (the
-- lease row is read in the same statement); only for a fire not older
-- than the retention (0, a one-off key, never is); and only while no
-- operator paused the job. No row inserted = not leader, too old or
-- paused (the engine reads the lease to tell which). A second claim of a
-- fire fails on the primary key with 23505: "already claimed", or a fire
-- offered again (the engine runs take).
-- A takeover needs the lease expired at its own clock reading, so a claim
-- that passed this check was made before any later term began.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT l.namespace, CAST(:job AS VARCHAR(128)), CAST(:fire_ms AS BIGINT),
    l.term, l.leader_id, clock.now_ms, NULL, NULL, 'running', 1,
    CAST(:max_attempts AS INTEGER)
FROM {prefix}lease AS l, clock
WHERE l.namespace = CAST(:ns AS VARCHAR(128))
  AND l.leader_id = CAST(:id AS VARCHAR(128))
  AND l.term = CAST(:term AS BIGINT)
  AND l.expires_at_ms > clock.now_ms
  AND (l.epoch IS NULL OR l.epoch = {epoch})
  AND (l.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                   WHERE mb.grp = l.grp AND mb.inc = l.inc
                     AND mb.expires_at_ms > clock.now_ms
                     AND (mb.epoch IS NULL OR mb.epoch = {epoch})))
  AND (CAST(:fire_ms AS BIGINT) = 0
       OR CAST(:fire_ms AS BIGINT)
          >= clock.now_ms - CAST(:retention_ms AS BIGINT))
  AND NOT EXISTS (SELECT 1 FROM {prefix}job AS j
                  WHERE j.namespace = CAST(:ns AS VARCHAR(128))
                    AND j.job = CAST(:job AS VARCHAR(128))
                    AND j.paused <> 0);

-- @statement take
-- Claims a fire that is offered (docs/lifecycle.md): a run-now
-- (pending), or an attempt whose term ended without an outcome while its
-- job allows another (interrupted, or still running in an earlier term:
-- a term ends only when its lease expired or was released, so that
-- attempt can no longer act). The fire becomes attempt + 1, running in
-- our term, while we hold it unexpired and the job is not paused. One
-- row changed = taken.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
UPDATE {prefix}fire AS f
SET max_attempts = CASE WHEN f.state = 'pending'
                        THEN CAST(:max_attempts AS INTEGER)
                        ELSE f.max_attempts END,
    attempt = f.attempt + 1,
    term = CAST(:term AS BIGINT),
    claimed_by = CAST(:id AS VARCHAR(128)),
    claimed_at_ms = clock.now_ms,
    finished_at_ms = NULL,
    status = NULL,
    state = 'running'
FROM clock
WHERE f.namespace = CAST(:ns AS VARCHAR(128))
  AND f.job = CAST(:job AS VARCHAR(128))
  AND f.fire_ms = CAST(:fire_ms AS BIGINT)
  AND f.term < CAST(:term AS BIGINT)
  AND (f.state = 'pending'
       OR (f.state IN ('interrupted', 'running')
           AND f.attempt < f.max_attempts))
  AND EXISTS (SELECT 1 FROM {prefix}lease AS l
              WHERE l.namespace = CAST(:ns AS VARCHAR(128))
                AND l.leader_id = CAST(:id AS VARCHAR(128))
                AND l.term = CAST(:term AS BIGINT)
                AND l.expires_at_ms > clock.now_ms
                AND (l.epoch IS NULL OR l.epoch = {epoch})
                AND (l.expires_at_ms < {by_member}
                     OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                                 WHERE mb.grp = l.grp AND mb.inc = l.inc
                                   AND mb.expires_at_ms > clock.now_ms
                                   AND (mb.epoch IS NULL OR mb.epoch = {epoch}))))
  AND NOT EXISTS (SELECT 1 FROM {prefix}job AS j
                  WHERE j.namespace = CAST(:ns AS VARCHAR(128))
                    AND j.job = CAST(:job AS VARCHAR(128))
                    AND j.paused <> 0);

-- @statement skip
-- Records that fire :fire_ms of paused :job was due and not run, while we
-- lead: it stays skipped after a resume. A fire already recorded keeps
-- its row.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT l.namespace, CAST(:job AS VARCHAR(128)), CAST(:fire_ms AS BIGINT),
    l.term, l.leader_id, clock.now_ms, clock.now_ms, NULL, 'skipped', 0,
    CAST(:max_attempts AS INTEGER)
FROM {prefix}lease AS l, clock
WHERE l.namespace = CAST(:ns AS VARCHAR(128))
  AND l.leader_id = CAST(:id AS VARCHAR(128))
  AND l.term = CAST(:term AS BIGINT)
  AND l.expires_at_ms > clock.now_ms
  AND (l.epoch IS NULL OR l.epoch = {epoch})
  AND (l.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                   WHERE mb.grp = l.grp AND mb.inc = l.inc
                     AND mb.expires_at_ms > clock.now_ms
                     AND (mb.epoch IS NULL OR mb.epoch = {epoch})))
ON CONFLICT (namespace, job, fire_ms) DO NOTHING;

-- @statement finish
-- Records the outcome of a fire we claimed, once, in the term we claimed
-- it in (:term 0: any of ours): done or failed. A fire found interrupted
-- or abandoned by a later term still takes its late outcome, unless it
-- was offered again and taken (then its term and claimant changed). No
-- row changed = already finished or not ours (the engine reads the fire
-- to tell which).
UPDATE {prefix}fire
SET finished_at_ms = {now},
    status = CAST(:status AS INTEGER),
    state = CASE WHEN CAST(:status AS INTEGER) = 0 THEN 'done'
                 ELSE 'failed' END
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND job = CAST(:job AS VARCHAR(128))
  AND fire_ms = CAST(:fire_ms AS BIGINT)
  AND claimed_by = CAST(:id AS VARCHAR(128))
  AND (CAST(:term AS BIGINT) = 0 OR term = CAST(:term AS BIGINT))
  AND state IN ('running', 'interrupted', 'abandoned');

-- @statement fire
-- One fire. Result: job, fire_ms, term, claimed_by, claimed_at_ms,
-- finished_at_ms, status, now_ms, state, attempt, max_attempts.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
SELECT f.job, f.fire_ms, f.term, f.claimed_by, f.claimed_at_ms,
    f.finished_at_ms, f.status, clock.now_ms, f.state, f.attempt,
    f.max_attempts
FROM {prefix}fire AS f, clock
WHERE f.namespace = CAST(:ns AS VARCHAR(128))
  AND f.job = CAST(:job AS VARCHAR(128))
  AND f.fire_ms = CAST(:fire_ms AS BIGINT);

-- @statement fires
-- Every fire of the namespace (of :job unless it is ''), oldest first;
-- columns as fire.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
SELECT f.job, f.fire_ms, f.term, f.claimed_by, f.claimed_at_ms,
    f.finished_at_ms, f.status, clock.now_ms, f.state, f.attempt,
    f.max_attempts
FROM {prefix}fire AS f, clock
WHERE f.namespace = CAST(:ns AS VARCHAR(128))
  AND (CAST(:job AS VARCHAR(128)) = ''
       OR f.job = CAST(:job AS VARCHAR(128)))
ORDER BY f.fire_ms, f.job;

-- @statement fire_gc
-- Retention, run by the leader: ended fires whose nominal time and end
-- are both older than :retention_ms. claim refuses fires that old, so a
-- deleted fire can never be claimed again. One-off keys (fire 0) stay.
-- A run-now's key is below 0 and its end the time to compare.
DELETE FROM {prefix}fire
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND fire_ms <> 0
  AND finished_at_ms IS NOT NULL
  AND state <> 'pending'
  AND fire_ms < {now} - CAST(:retention_ms AS BIGINT)
  AND finished_at_ms < {now} - CAST(:retention_ms AS BIGINT);

-- @statement sweep
-- Run once by each new term, fenced by it: a fire still running in an
-- earlier term lost its runner (that term can no longer act). It becomes
-- interrupted (offered again while its job allows another attempt) or,
-- after its last allowed attempt of several, abandoned.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
UPDATE {prefix}fire AS f
SET finished_at_ms = clock.now_ms,
    state = CASE WHEN f.max_attempts > 1 AND f.attempt >= f.max_attempts
                 THEN 'abandoned' ELSE 'interrupted' END
FROM clock
WHERE f.namespace = CAST(:ns AS VARCHAR(128))
  AND f.state = 'running'
  AND f.term < CAST(:term AS BIGINT)
  AND EXISTS (SELECT 1 FROM {prefix}lease AS l
              WHERE l.namespace = CAST(:ns AS VARCHAR(128))
                AND l.leader_id = CAST(:id AS VARCHAR(128))
                AND l.term = CAST(:term AS BIGINT)
                AND l.expires_at_ms > clock.now_ms
                AND (l.epoch IS NULL OR l.epoch = {epoch})
                AND (l.expires_at_ms < {by_member}
                     OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                                 WHERE mb.grp = l.grp AND mb.inc = l.inc
                                   AND mb.expires_at_ms > clock.now_ms
                                   AND (mb.epoch IS NULL OR mb.epoch = {epoch}))));

-- @statement offers
-- The fires offered to the leader of term :term, oldest first, and the
-- fires still running in earlier terms (which the engine then sweeps and
-- reads again); columns as fire. The IN on state makes it a search of the (namespace, state)
-- index, not a scan of the namespace's ledger.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
SELECT f.job, f.fire_ms, f.term, f.claimed_by, f.claimed_at_ms,
    f.finished_at_ms, f.status, clock.now_ms, f.state, f.attempt,
    f.max_attempts
FROM {prefix}fire AS f, clock
WHERE f.namespace = CAST(:ns AS VARCHAR(128))
  AND f.state IN ('pending', 'interrupted', 'running')
  AND f.term < CAST(:term AS BIGINT)
  AND (f.state <> 'interrupted' OR f.attempt < f.max_attempts)
ORDER BY f.claimed_at_ms, f.job, f.fire_ms;

-- @statement pause
-- An operator pauses (:paused 1) or resumes (0) :job on every host.
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by)
VALUES (CAST(:ns AS VARCHAR(128)), CAST(:job AS VARCHAR(128)),
    CAST(:paused AS INTEGER), {now}, CAST(:id AS VARCHAR(128)))
ON CONFLICT (namespace, job) DO UPDATE
SET paused = EXCLUDED.paused,
    changed_at_ms = EXCLUDED.changed_at_ms,
    changed_by = EXCLUDED.changed_by;

-- @statement trigger
-- An operator asks for one run of :job now: a pending fire offered to the
-- leader, keyed below 0 so that no nominal time can collide with it (the
-- negated database clock, or one below the job's lowest key). Result:
-- the key.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT CAST(:ns AS VARCHAR(128)), CAST(:job AS VARCHAR(128)),
    LEAST(-clock.now_ms,
          COALESCE((SELECT MIN(f.fire_ms) FROM {prefix}fire AS f
                    WHERE f.namespace = CAST(:ns AS VARCHAR(128))
                      AND f.job = CAST(:job AS VARCHAR(128))), 0) - 1),
    0, CAST(:id AS VARCHAR(128)), clock.now_ms, NULL, NULL, 'pending', 0, 1
FROM clock
RETURNING fire_ms;

-- @statement jobs
-- Every job of the namespace that has fires or a pause record: job,
-- paused, changed_at_ms, changed_by, fires, running, offered,
-- last_fire_ms (the latest nominal time), last_done_ms, last_failed_ms
-- (the latest end that failed, was interrupted or abandoned), now_ms.
SELECT u.job, MAX(u.paused), MAX(u.changed_at_ms), MAX(u.changed_by),
    SUM(u.n), SUM(u.running), SUM(u.offered), MAX(u.nominal),
    MAX(u.done_at), MAX(u.bad_at), {now}
FROM (SELECT job, paused, changed_at_ms, changed_by, 0 AS n,
          0 AS running, 0 AS offered, CAST(NULL AS BIGINT) AS nominal,
          CAST(NULL AS BIGINT) AS done_at, CAST(NULL AS BIGINT) AS bad_at
      FROM {prefix}job
      WHERE namespace = CAST(:ns AS VARCHAR(128))
      UNION ALL
      SELECT job, 0, NULL, NULL, 1,
          CASE WHEN state = 'running' THEN 1 ELSE 0 END,
          CASE WHEN state = 'pending'
                    OR (state = 'interrupted' AND attempt < max_attempts)
               THEN 1 ELSE 0 END,
          CASE WHEN fire_ms > 0 THEN fire_ms END,
          CASE WHEN state = 'done' THEN finished_at_ms END,
          CASE WHEN state IN ('failed', 'interrupted', 'abandoned')
               THEN finished_at_ms END
      FROM {prefix}fire
      WHERE namespace = CAST(:ns AS VARCHAR(128))) AS u
GROUP BY u.job
ORDER BY u.job;

-- @statement schedule
-- A claim of :job computed by schedule :schedule (docs/schedules.md):
-- records it as the job's when the job has none (its first claim), counts
-- a refusal when the job's differs, and returns the job's schedule, since
-- when and by whom; the engine claims only when it equals :schedule. In
-- the steady state nothing is written (DO NOTHING, no row matches).
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by,
    schedule, schedule_at_ms, schedule_by, refusals)
VALUES (CAST(:ns AS VARCHAR(128)), CAST(:job AS VARCHAR(128)), 0, 0, '',
    CAST(:schedule AS VARCHAR(512)), {now}, CAST(:id AS VARCHAR(128)), 0)
ON CONFLICT (namespace, job) DO NOTHING;
UPDATE {prefix}job
SET schedule = CAST(:schedule AS VARCHAR(512)), schedule_at_ms = {now},
    schedule_by = CAST(:id AS VARCHAR(128))
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND job = CAST(:job AS VARCHAR(128)) AND schedule IS NULL;
UPDATE {prefix}job
SET refusals = refusals + 1, refused = CAST(:schedule AS VARCHAR(512)),
    refused_at_ms = {now}, refused_by = CAST(:id AS VARCHAR(128))
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND job = CAST(:job AS VARCHAR(128))
  AND schedule <> CAST(:schedule AS VARCHAR(512));
SELECT schedule, schedule_at_ms, schedule_by FROM {prefix}job
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND job = CAST(:job AS VARCHAR(128));

-- @statement schedule_read
-- The schedule recorded for :job (no row: the job has none yet): a claim
-- whose identity equals it goes on after this one read; any other answer
-- runs the schedule statement, which records or refuses. Optional: without
-- it every check runs the schedule statement.
SELECT schedule, schedule_at_ms, schedule_by FROM {prefix}job
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND job = CAST(:job AS VARCHAR(128));

-- @statement reschedule
-- An operator records :schedule as :job's schedule (NULL: none, so that
-- the next claim records its own), counting refusals from 0 again.
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by,
    schedule, schedule_at_ms, schedule_by, refusals)
VALUES (CAST(:ns AS VARCHAR(128)), CAST(:job AS VARCHAR(128)), 0, 0, '',
    CAST(:schedule AS VARCHAR(512)), {now}, CAST(:id AS VARCHAR(128)), 0)
ON CONFLICT (namespace, job) DO UPDATE
SET schedule = EXCLUDED.schedule,
    schedule_at_ms = EXCLUDED.schedule_at_ms,
    schedule_by = EXCLUDED.schedule_by,
    refusals = 0, refused = NULL, refused_at_ms = NULL, refused_by = NULL;

-- @statement schedules
-- The jobs with a schedule or refused claims: job, schedule,
-- schedule_at_ms, schedule_by, refusals, refused, refused_at_ms,
-- refused_by, now_ms.
SELECT job, schedule, schedule_at_ms, schedule_by, refusals, refused,
    refused_at_ms, refused_by, {now}
FROM {prefix}job
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND (schedule IS NOT NULL OR refusals > 0)
ORDER BY job;

-- @statement last_fire
-- The latest nominal time of :job's fires (NULL: none) and now_ms: where
-- the catch-up policy starts (docs/catch-up.md). One index range, where
-- the jobs statement reads the whole namespace.
SELECT MAX(fire_ms), {now} FROM {prefix}fire
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND job = CAST(:job AS VARCHAR(128)) AND fire_ms > 0;

-- @statement fence
-- The fence of docs/fencing.md (odbc-leader fence prints it): a row while
-- term :term of namespace :ns still holds at the statement's clock. A
-- job's write adds "AND EXISTS (this)" to apply only inside its term.
SELECT 1 FROM {prefix}lease
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND term = CAST(:term AS BIGINT)
  AND leader_id IS NOT NULL
  AND expires_at_ms > {now}
  AND (epoch IS NULL OR epoch = {epoch})
  AND ({prefix}lease.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                   WHERE mb.grp = {prefix}lease.grp AND mb.inc = {prefix}lease.inc
                     AND mb.expires_at_ms > {now}
                     AND (mb.epoch IS NULL OR mb.epoch = {epoch})));

-- @statement elections
-- The election log of the namespace, oldest term first: term, leader_id,
-- started_at_ms, ended_at_ms, ended_how, handed_to, now_ms. A term whose
-- entry is still open but that has ended all the same (a later term
-- began, or its lease expired and nobody took over yet) reads as expired:
-- at the next term's start, or at the lease's expiry.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
SELECT e.term, e.leader_id, e.started_at_ms,
    COALESCE(e.ended_at_ms, nxt.started_at_ms,
             CASE WHEN l.expires_at_ms <= clock.now_ms
                  THEN l.expires_at_ms END),
    COALESCE(e.ended_how,
             CASE WHEN nxt.started_at_ms IS NOT NULL
                    OR l.expires_at_ms <= clock.now_ms
                  THEN 'expired' END),
    e.handed_to, clock.now_ms
FROM clock, {prefix}election AS e
    LEFT JOIN LATERAL (
        SELECT n.started_at_ms FROM {prefix}election AS n
        WHERE n.namespace = e.namespace AND n.term > e.term
        ORDER BY n.term LIMIT 1) AS nxt ON TRUE
    LEFT JOIN {prefix}lease AS l
        ON l.namespace = e.namespace AND l.term = e.term
WHERE e.namespace = CAST(:ns AS VARCHAR(128))
ORDER BY e.term;

-- @statement election_gc
-- Retention, run by the leader: terms that ended more than
-- :election_retention_ms ago, and entries left open by a term that a
-- later one followed, started that long ago.
DELETE FROM {prefix}election AS e
WHERE e.namespace = CAST(:ns AS VARCHAR(128))
  AND ((e.ended_at_ms IS NOT NULL
        AND e.ended_at_ms < {now} - CAST(:election_retention_ms AS BIGINT))
       OR (e.ended_at_ms IS NULL
           AND e.started_at_ms
               < {now} - CAST(:election_retention_ms AS BIGINT)
           AND EXISTS (SELECT 1 FROM {prefix}election AS n
                       WHERE n.namespace = e.namespace
                         AND n.term > e.term)));

-- @statement session_id
-- The server session this statement ran in, for the library's check for a
-- transaction pooler (pgbouncer pool_mode=transaction) between it and the
-- server: the backend's process id and the server's start time (two
-- servers behind one address may have backends of the same pid).
SELECT CAST(pg_backend_pid() AS TEXT) || '@'
    || CAST(EXTRACT(EPOCH FROM pg_postmaster_start_time()) AS TEXT);

-- @statement group_init
-- Creates the rows of group :ns's :shards shards (GROUP/0 ...) when the
-- group has none yet, vacant, with the clock in ms as their term (a group
-- whose rows were deleted starts above every term it had); an existing
-- group keeps its size, and the engine compares it with :shards. As attempt's ins: in
-- an epoch this database has not been in for one TTL (a promoted copy may
-- lack rows the old primary created and someone led), the new rows are
-- quarantined instead (reserved for nobody, holder incarnation 0) until
-- one TTL has passed. Result: the group's rows, the lowest and highest
-- shard, and whether a row named like a shard belongs to no group.
WITH clock AS (
    SELECT {now}
        AS now_ms
),
settled AS (
    SELECT CASE WHEN EXISTS (
        SELECT 1 FROM {prefix}schema AS s, clock
        WHERE s.epoch IS NULL OR s.epoch <> {epoch}
           OR s.epoch_since_ms > clock.now_ms - CAST(:ttl_ms AS BIGINT))
        THEN 0 ELSE 1 END AS yes
),
ins AS (
    INSERT INTO {prefix}lease (namespace, leader_id, term, elected_at_ms,
        renewed_at_ms, expires_at_ms, resign_requested, handoff_to, epoch,
        grp, shard, inc, renew_seq)
    SELECT CAST(:ns AS VARCHAR(128)) || '/' || CAST(g.s AS VARCHAR(12)),
        NULL, clock.now_ms, NULL, clock.now_ms,
        CASE WHEN settled.yes = 1 THEN clock.now_ms
             ELSE clock.now_ms + CAST(:ttl_ms AS BIGINT) END,
        0, CASE WHEN settled.yes = 1 THEN NULL ELSE '' END, {epoch},
        CAST(:ns AS VARCHAR(128)), g.s,
        CASE WHEN settled.yes = 1 THEN NULL ELSE 0 END,
        CASE WHEN settled.yes = 1 THEN NULL ELSE 0 END
    FROM generate_series(0, CAST(:shards AS INTEGER) - 1) AS g(s), clock,
        settled
    WHERE NOT EXISTS (SELECT 1 FROM {prefix}lease
                      WHERE grp = CAST(:ns AS VARCHAR(128)))
    ON CONFLICT DO NOTHING
    RETURNING shard
)
SELECT (SELECT COUNT(*) FROM {prefix}lease
        WHERE grp = CAST(:ns AS VARCHAR(128)))
       + (SELECT COUNT(*) FROM ins) AS shards,
    (SELECT COUNT(*) FROM {prefix}lease
     WHERE grp IS NULL
       AND SUBSTR(namespace, 1, LENGTH(CAST(:ns AS VARCHAR(128))) + 1)
           = CAST(:ns AS VARCHAR(128)) || '/') AS foreign_rows;

-- @statement group_tick
-- One round trip per tick for a member of group :ns (docs/protocol.md,
-- "Groups" and "Shards held under the member's lease"): heartbeat the
-- member's candidate row; renew the lease of this incarnation (:id,
-- :inc), or make it when it has no row, in one upsert that renews only
-- while the lease is unexpired at the moment the row is locked (a
-- volatile {now} in the conflict's WHERE: a take that locked the row
-- first and found it expired makes this renewal fail after it, never
-- succeed on the clock of this statement's start) and of this epoch;
-- release the shards in :release (a JSON array of [shard, term] pairs,
-- each released in the term named only: vacant at once; the host
-- stopped their work before this statement; an old tick still running on
-- a lost connection cannot release a later term); and, only when the
-- lease was renewed or made here, take the shards in :take that are
-- vacant and reserved for nobody, or held by an incarnation the caller
-- has watched standing still for one TTL on its own clock (:dead, a JSON
-- array of [incarnation, the highest renew_seq seen of it] pairs): for a
-- row of {by_member}, one whose lease, read with FOR UPDATE (the newest
-- committed renewal, and none after it until this commits), expired
-- and was not renewed since; for a row a member of version 8 renews
-- itself, one that expired unrenewed since (its row lock orders the two).
-- A take writes the term + 1, renew_seq = :seq and {by_member}: the shard
-- holds while the lease does, and a steady tick writes no shard row.
-- Quarantine the group's rows written in another epoch. The CTEs touch
-- disjoint rows. The take and release lists are read as "(... IN
-- (SELECT ...)) IS TRUE": a hashed subplan probed once per row of the
-- group, whatever the statistics say. As a join, a planner that had not
-- analyzed the new rows yet (53 of 10,000 estimated) ran the JSON list as
-- the inner side of a nested loop: 25 million comparisons, 5.7 s for a
-- member taking 5,038 shards, a statement timeout at every tick. An
-- empty list is a one-time filter (jsonb_array_length(...) > 0): no scan
-- of the group at all. Leases of incarnations that hold nothing and
-- expired a day ago go.
-- Result, one row per line, kind first: S renewed(1/0) renew_seq
-- expires_at_ms (this incarnation's lease), L shard term expires_at_ms
-- won (the shards held after this statement), M candidate_id
-- heartbeat_at_ms expires_at_ms (live members), H holder_id inc renew_seq
-- count (holders, as before this statement: the lease's counter, or a
-- version-8 holder's highest renew_seq), V shard term expires_at_ms
-- (vacant shards, as before); now_ms last.
-- L, H and V only when :full = 1; when :full = 0 (a steady tick, which
-- reads no shard row), K member_id inc renew_seq expires_at_ms (the
-- member leases that hold a shard: an index probe each) instead, as a
-- scalar subquery with LIMIT 1 on both columns of the (grp, inc) index:
-- as an EXISTS, the planner could make it a semi-join that read every
-- shard key of the group for each member.
WITH clock AS (
    SELECT {now}
        AS now_ms
),
heartbeat AS (
    INSERT INTO {prefix}candidate AS c (namespace, candidate_id,
        registered_at_ms, heartbeat_at_ms, expires_at_ms)
    SELECT CAST(:ns AS VARCHAR(128)), CAST(:id AS VARCHAR(128)),
        clock.now_ms, clock.now_ms,
        clock.now_ms + CAST(:cand_ttl_ms AS BIGINT)
    FROM clock
    ON CONFLICT (namespace, candidate_id) DO UPDATE
    SET heartbeat_at_ms = EXCLUDED.heartbeat_at_ms,
        expires_at_ms = EXCLUDED.expires_at_ms
    RETURNING c.candidate_id
),
gc AS (
    DELETE FROM {prefix}candidate
    WHERE namespace = CAST(:ns AS VARCHAR(128))
      AND candidate_id <> CAST(:id AS VARCHAR(128))
      AND expires_at_ms < (SELECT now_ms FROM clock)
                          - CAST(:cand_ttl_ms AS BIGINT)
),
lease AS (
    INSERT INTO {prefix}member AS mb (grp, inc, member_id, started_at_ms,
        renewed_at_ms, expires_at_ms, renew_seq, epoch)
    SELECT CAST(:ns AS VARCHAR(128)), CAST(:inc AS BIGINT),
        CAST(:id AS VARCHAR(128)), clock.now_ms, clock.now_ms,
        clock.now_ms + CAST(:ttl_ms AS BIGINT), CAST(:seq AS BIGINT),
        {epoch}
    FROM clock
    ON CONFLICT (grp, inc) DO UPDATE
    SET renewed_at_ms = EXCLUDED.renewed_at_ms,
        expires_at_ms = EXCLUDED.expires_at_ms,
        renew_seq = EXCLUDED.renew_seq
    WHERE mb.member_id = EXCLUDED.member_id
      AND mb.renew_seq < EXCLUDED.renew_seq
      AND mb.expires_at_ms > {now}
      AND (mb.epoch IS NULL OR mb.epoch = EXCLUDED.epoch)
    RETURNING mb.renew_seq, mb.expires_at_ms
),
lease_gc AS (
    DELETE FROM {prefix}member AS mb
    WHERE mb.grp = CAST(:ns AS VARCHAR(128))
      AND CAST(:full AS BIGINT) = 1
      AND mb.inc <> CAST(:inc AS BIGINT)
      AND mb.expires_at_ms < (SELECT now_ms FROM clock) - 86400000
      AND NOT EXISTS (SELECT 1 FROM {prefix}lease AS l
                      WHERE l.grp = mb.grp AND l.inc = mb.inc)
),
rel_list AS (
    SELECT CAST(r ->> 0 AS INTEGER) AS shard, CAST(r ->> 1 AS BIGINT) AS term
    FROM jsonb_array_elements(CAST(:release AS JSONB)) AS r
),
take_list AS (
    SELECT CAST(x AS INTEGER) AS shard
    FROM jsonb_array_elements_text(CAST(:take AS JSONB)) AS x
),
dead_list AS (
    SELECT CAST(d ->> 0 AS BIGINT) AS inc, CAST(d ->> 1 AS BIGINT) AS seen
    FROM jsonb_array_elements(CAST(:dead AS JSONB)) AS d
),
dead_leases AS (
    SELECT h.inc, h.expires_at_ms, h.renew_seq, h.epoch
    FROM {prefix}member AS h
    WHERE h.grp = CAST(:ns AS VARCHAR(128))
      AND jsonb_array_length(CAST(:take AS JSONB)) > 0
      AND h.inc IN (SELECT inc FROM dead_list)
      AND h.inc <> CAST(:inc AS BIGINT)
    FOR UPDATE OF h
),
dead_now AS (
    SELECT d.inc
    FROM dead_list AS d
    WHERE NOT EXISTS (
        SELECT 1 FROM dead_leases AS h
        WHERE h.inc = d.inc
          AND (h.expires_at_ms > {now} OR h.renew_seq > d.seen)
          AND (h.epoch IS NULL OR h.epoch = {epoch}))
),
rel AS (
    UPDATE {prefix}lease AS l
    SET leader_id = NULL,
        inc = NULL,
        resign_requested = 0,
        expires_at_ms = clock.now_ms
    FROM clock
    WHERE l.grp = CAST(:ns AS VARCHAR(128))
      AND l.inc = CAST(:inc AS BIGINT)
      AND l.leader_id = CAST(:id AS VARCHAR(128))
      AND (l.epoch IS NULL OR l.epoch = {epoch})
      AND jsonb_array_length(CAST(:release AS JSONB)) > 0
      AND ((l.shard, l.term) IN (SELECT shard, term FROM rel_list)) IS TRUE
    RETURNING l.shard
),
tak AS (
    UPDATE {prefix}lease AS l
    SET leader_id = CAST(:id AS VARCHAR(128)),
        inc = CAST(:inc AS BIGINT),
        renew_seq = CAST(:seq AS BIGINT),
        term = l.term + 1,
        elected_at_ms = clock.now_ms,
        renewed_at_ms = clock.now_ms,
        expires_at_ms = {by_member},
        resign_requested = 0,
        handoff_to = NULL,
        epoch = {epoch}
    FROM clock
    WHERE l.grp = CAST(:ns AS VARCHAR(128))
      AND jsonb_array_length(CAST(:take AS JSONB)) > 0
      AND (l.shard IN (SELECT shard FROM take_list)) IS TRUE
      AND (l.epoch IS NULL OR l.epoch = {epoch})
      AND EXISTS (SELECT 1 FROM lease)
      AND ((l.leader_id IS NULL AND l.inc IS NULL
            AND l.handoff_to IS NULL)
           OR (l.inc <> CAST(:inc AS BIGINT)
               AND l.expires_at_ms = {by_member}
               AND EXISTS (SELECT 1 FROM dead_now AS d
                           WHERE d.inc = l.inc))
           OR (l.inc <> CAST(:inc AS BIGINT)
               AND l.expires_at_ms <= clock.now_ms
               AND EXISTS (SELECT 1 FROM dead_list AS d
                           WHERE d.inc = l.inc
                             AND l.renew_seq <= d.seen)))
    RETURNING l.shard, l.term, l.expires_at_ms
),
quar AS (
    UPDATE {prefix}lease AS l
    SET leader_id = NULL,
        inc = 0,
        renew_seq = 0,
        term = GREATEST(l.term + 1, clock.now_ms),
        renewed_at_ms = clock.now_ms,
        expires_at_ms = clock.now_ms + CAST(:ttl_ms AS BIGINT),
        resign_requested = 0,
        handoff_to = '',
        epoch = {epoch}
    FROM clock
    WHERE l.grp = CAST(:ns AS VARCHAR(128))
      AND CAST(:full AS BIGINT) = 1
      AND l.epoch IS NOT NULL
      AND l.epoch <> {epoch}
    RETURNING l.shard
)
SELECT 'S' AS kind, CAST(NULL AS VARCHAR(128)) AS name,
    CAST(CASE WHEN EXISTS (SELECT 1 FROM lease) THEN 1 ELSE 0 END
         AS BIGINT) AS a,
    COALESCE((SELECT renew_seq FROM lease),
             (SELECT renew_seq FROM {prefix}member
              WHERE grp = CAST(:ns AS VARCHAR(128))
                AND inc = CAST(:inc AS BIGINT)), 0) AS b,
    COALESCE((SELECT expires_at_ms FROM lease), 0) AS c, 0 AS won,
    clock.now_ms
FROM clock
UNION ALL
SELECT 'L', NULL, CAST(l.shard AS BIGINT), l.term, l.expires_at_ms, 0,
    clock.now_ms
FROM {prefix}lease AS l, clock
WHERE l.grp = CAST(:ns AS VARCHAR(128))
  AND CAST(:full AS BIGINT) = 1
  AND l.inc = CAST(:inc AS BIGINT)
  AND l.leader_id = CAST(:id AS VARCHAR(128))
  AND (l.epoch IS NULL OR l.epoch = {epoch})
  AND l.shard NOT IN (SELECT shard FROM rel)
  AND l.shard NOT IN (SELECT shard FROM quar)
UNION ALL
SELECT 'L', NULL, shard, term, expires_at_ms, 1, clock.now_ms
FROM tak, clock
UNION ALL
SELECT 'M', c.candidate_id, 0, c.heartbeat_at_ms, c.expires_at_ms, 0,
    clock.now_ms
FROM {prefix}candidate AS c, clock
WHERE c.namespace = CAST(:ns AS VARCHAR(128))
  AND c.expires_at_ms > clock.now_ms
UNION ALL
SELECT 'H', MAX(l.leader_id), l.inc,
    COALESCE(MAX(mb.renew_seq), MAX(l.renew_seq)), COUNT(*), 0,
    MAX(clock.now_ms)
FROM clock, {prefix}lease AS l
LEFT JOIN {prefix}member AS mb ON mb.grp = l.grp AND mb.inc = l.inc
WHERE l.grp = CAST(:ns AS VARCHAR(128))
  AND CAST(:full AS BIGINT) = 1
  AND l.inc IS NOT NULL
GROUP BY l.inc
UNION ALL
SELECT 'V', NULL, l.shard, l.term, l.expires_at_ms, 0, clock.now_ms
FROM {prefix}lease AS l, clock
WHERE l.grp = CAST(:ns AS VARCHAR(128))
  AND CAST(:full AS BIGINT) = 1
  AND l.inc IS NULL
UNION ALL
SELECT 'K', mb.member_id, mb.inc, mb.renew_seq, mb.expires_at_ms, 0,
    clock.now_ms
FROM {prefix}member AS mb, clock
WHERE mb.grp = CAST(:ns AS VARCHAR(128))
  AND CAST(:full AS BIGINT) = 0
  AND (SELECT 1 FROM {prefix}lease AS l
       WHERE l.grp = mb.grp AND l.inc = mb.inc LIMIT 1) = 1;

-- @statement group_steady
-- A steady tick (docs/protocol.md, "A steady tick"): what group_tick does
-- and answers with :full = 0 and nothing to take, release or offer, as a
-- statement of its own: heartbeat, renew the lease (the same upsert),
-- then S, M and K rows. PostgreSQL keeps one plan for it; group_tick's
-- plan, which covers every shard row, was made again at every run once
-- a group had 10,000 shards (its custom plans, which drop the branches a
-- steady tick does not run, were always estimated cheaper).
WITH clock AS (
    SELECT {now}
        AS now_ms
),
heartbeat AS (
    INSERT INTO {prefix}candidate AS c (namespace, candidate_id,
        registered_at_ms, heartbeat_at_ms, expires_at_ms)
    SELECT CAST(:ns AS VARCHAR(128)), CAST(:id AS VARCHAR(128)),
        clock.now_ms, clock.now_ms,
        clock.now_ms + CAST(:cand_ttl_ms AS BIGINT)
    FROM clock
    ON CONFLICT (namespace, candidate_id) DO UPDATE
    SET heartbeat_at_ms = EXCLUDED.heartbeat_at_ms,
        expires_at_ms = EXCLUDED.expires_at_ms
    RETURNING c.candidate_id
),
gc AS (
    DELETE FROM {prefix}candidate
    WHERE namespace = CAST(:ns AS VARCHAR(128))
      AND candidate_id <> CAST(:id AS VARCHAR(128))
      AND expires_at_ms < (SELECT now_ms FROM clock)
                          - CAST(:cand_ttl_ms AS BIGINT)
),
lease AS (
    INSERT INTO {prefix}member AS mb (grp, inc, member_id, started_at_ms,
        renewed_at_ms, expires_at_ms, renew_seq, epoch)
    SELECT CAST(:ns AS VARCHAR(128)), CAST(:inc AS BIGINT),
        CAST(:id AS VARCHAR(128)), clock.now_ms, clock.now_ms,
        clock.now_ms + CAST(:ttl_ms AS BIGINT), CAST(:seq AS BIGINT),
        {epoch}
    FROM clock
    ON CONFLICT (grp, inc) DO UPDATE
    SET renewed_at_ms = EXCLUDED.renewed_at_ms,
        expires_at_ms = EXCLUDED.expires_at_ms,
        renew_seq = EXCLUDED.renew_seq
    WHERE mb.member_id = EXCLUDED.member_id
      AND mb.renew_seq < EXCLUDED.renew_seq
      AND mb.expires_at_ms > {now}
      AND (mb.epoch IS NULL OR mb.epoch = EXCLUDED.epoch)
    RETURNING mb.renew_seq, mb.expires_at_ms
)
SELECT 'S' AS kind, CAST(NULL AS VARCHAR(128)) AS name,
    CAST(CASE WHEN EXISTS (SELECT 1 FROM lease) THEN 1 ELSE 0 END
         AS BIGINT) AS a,
    COALESCE((SELECT renew_seq FROM lease),
             (SELECT renew_seq FROM {prefix}member
              WHERE grp = CAST(:ns AS VARCHAR(128))
                AND inc = CAST(:inc AS BIGINT)), 0) AS b,
    COALESCE((SELECT expires_at_ms FROM lease), 0) AS c, 0 AS won,
    clock.now_ms
FROM clock
UNION ALL
SELECT 'M', c.candidate_id, 0, c.heartbeat_at_ms, c.expires_at_ms, 0,
    clock.now_ms
FROM {prefix}candidate AS c, clock
WHERE c.namespace = CAST(:ns AS VARCHAR(128))
  AND c.expires_at_ms > clock.now_ms
UNION ALL
SELECT 'K', mb.member_id, mb.inc, mb.renew_seq, mb.expires_at_ms, 0,
    clock.now_ms
FROM {prefix}member AS mb, clock
WHERE mb.grp = CAST(:ns AS VARCHAR(128))
  AND (SELECT 1 FROM {prefix}lease AS l
       WHERE l.grp = mb.grp AND l.inc = mb.inc LIMIT 1) = 1;

-- @statement group_leave
-- A member leaving gracefully: every shard this process holds becomes
-- vacant at once (its host stopped their work first), its lease ends and
-- its candidate row goes, so the others take them at their next tick.
WITH rel AS (
    UPDATE {prefix}lease
    SET leader_id = NULL,
        inc = NULL,
        resign_requested = 0,
        expires_at_ms = {now}
    WHERE grp = CAST(:ns AS VARCHAR(128))
      AND inc = CAST(:inc AS BIGINT)
      AND leader_id = CAST(:id AS VARCHAR(128))
    RETURNING shard
),
ended AS (
    UPDATE {prefix}member
    SET expires_at_ms = {now}
    WHERE grp = CAST(:ns AS VARCHAR(128))
      AND inc = CAST(:inc AS BIGINT)
      AND expires_at_ms > {now}
    RETURNING inc
)
DELETE FROM {prefix}candidate
WHERE namespace = CAST(:ns AS VARCHAR(128))
  AND candidate_id = CAST(:id AS VARCHAR(128));

-- @statement group_shards
-- Every shard of group :ns as the database holds it now, for status: a
-- shard held under its member's lease expires with that lease.
-- Result: shard, leader_id, term, expires_at_ms, now_ms.
WITH clock AS (
    SELECT {now}
        AS now_ms
)
SELECT l.shard, l.leader_id, l.term,
    CASE WHEN l.expires_at_ms = {by_member}
         THEN COALESCE(mb.expires_at_ms, 0) ELSE l.expires_at_ms END,
    clock.now_ms
FROM clock, {prefix}lease AS l
LEFT JOIN {prefix}member AS mb ON mb.grp = l.grp AND mb.inc = l.inc
WHERE l.grp = CAST(:ns AS VARCHAR(128))
ORDER BY l.shard;
