-- SPDX-License-Identifier: MIT
-- mariadb.sql: odbc-leader dialect for MariaDB (MariaDB Connector/ODBC
-- 3.1, driver "MariaDB Unicode"; MariaDB 10.11, InnoDB).
--
-- The format of this file is described in docs/dialects.md
-- (installed as /usr/share/doc/odbc-leader/dialects.md).
--
-- One round trip per attempt and per renew: each is one anonymous compound
-- statement (BEGIN NOT ATOMIC ... END), prepared once with its parameters
-- and run with one COM_STMT_EXECUTE. It needs no privilege beyond SELECT,
-- INSERT, UPDATE and DELETE on the tables (no stored routine, no
-- trigger). Inside a block the inner statements end with ";" too, so those
-- semicolons start the next line instead of ending one: a ";" at the end
-- of a line would end the dialect statement there. (A batch "a; b" is no
-- alternative: Connector/ODBC 3.1 refuses it unless OPTION carries the
-- multi-statement flag, and then prepares and runs each part on its own,
-- one round trip per part.)
--
-- Each block is one transaction (START TRANSACTION ... COMMIT); its exit
-- handler rolls back and re-raises the error unchanged, so the client sees
-- the original SQLSTATE and native code, and no transaction stays open
-- after a failure, a deadlock or max_statement_time.
--
-- The attempt reads the lease row with a plain SELECT ... INTO, a
-- consistent read that waits for nobody (a condition such as IF EXISTS
-- (SELECT ...) would be a locking read and wait on an uncommitted row).
-- When it sees no row it INSERTs: if another candidate inserted the row
-- without committing yet, the INSERT waits on the primary key and fails
-- with 23000 / native 1062 once that one commits, and the engine rolls
-- back and retries once (the integrity-error retry path, as on
-- PostgreSQL). ON DUPLICATE KEY UPDATE would hide that collision, so the
-- lease row is never upserted. No statement is a locking read of a
-- missing row, so REPEATABLE READ's gap locks cannot deadlock two
-- creators.
--
-- on_connect pins REPEATABLE READ (InnoDB's default) rather than trusting
-- the server's: READ COMMITTED works as well, but makes every write fail
-- (1665) on a server that binlogs with binlog_format=STATEMENT, and under
-- SERIALIZABLE the plain reads would lock. The price: after its UPDATE
-- waited for another taker, a follower's report shows the lease as its
-- block first read it; the next attempt shows the new holder (PostgreSQL
-- has the same caveat). Each block runs inside the server in one go, so
-- its locks are held for microseconds. on_connect also pins sql_mode (a
-- server-wide sql_mode=ORACLE would change the syntax of the blocks).
--
-- The clock is UTC_TIMESTAMP(6) counted from the epoch: no time zone
-- conversion at all. UNIX_TIMESTAMP(NOW(3)) would convert the session's
-- local time back and is an hour off during the repeated hour after a
-- daylight-saving change (measured with time_zone America/New_York). A
-- block reads the clock once, into v_now.
--
-- Names are utf8mb4_bin: case-sensitive like PostgreSQL and SQLite, and
-- the driver's utf8mb4 parameters compare with the key without conversion.
-- SCHEMA is a reserved word in MariaDB, so LeaderTablePrefix must not be
-- empty here.

-- @dialect mariadb
-- @define now (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)
-- @define by_member 9223372036854775807
-- The wake-up lock of a namespace: a named lock (GET_LOCK) that the
-- leader takes with its term and lets go of after resigning, so that
-- followers blocked in "wait" wake up at once (see release and wait).
-- Lock names are server-wide: the name includes the database.
-- @define wake_lock SHA2(CONCAT('odbc-leader/', DATABASE(), '/', :ns), 224)
-- The database epoch: on a Galera node the cluster's state UUID (the same
-- on every node, new only when the cluster is bootstrapped again), else
-- the server's host, port and server_id (a promoted replica is another
-- server; a restart keeps it).
-- @define epoch IF(@@wsrep_on, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATE_UUID'), CONCAT(@@hostname, ':', @@port, '/', @@server_id))
-- @dbms MariaDB
-- @schema-version 9
-- @unique-violation *:1062
-- @transient 40001 *:1213 *:1205 *:1969
-- @connection-lost 08* *:2006 *:2013 *:2002 *:2003 *:2055 *:1927 *:1053
-- @undefined-table 42S02 *:1146
-- @read-only *:1290 *:1836

-- @statement on_connect
-- On a Galera node, reads wait until the node has applied every
-- transaction the cluster committed before them (causal reads), so a
-- follower on a lagging node sees the current lease and a new holder's
-- row; the lease's writes are safe without it (certification refuses a
-- write based on a stale row).
SET SESSION max_statement_time = {timeout_ms} / 1000.0,
    SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION';
SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;
BEGIN NOT ATOMIC
    IF @@wsrep_on THEN
        SET SESSION wsrep_sync_wait = 1
    ; END IF
; END;

-- @statement ddl
CREATE TABLE IF NOT EXISTS {prefix}schema (
    version INTEGER NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
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
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS {prefix}candidate (
    namespace VARCHAR(128) NOT NULL,
    candidate_id VARCHAR(128) NOT NULL,
    registered_at_ms BIGINT NOT NULL,
    heartbeat_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    PRIMARY KEY (namespace, candidate_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
-- These are the version-1 tables; the engine then runs upgrade, so a new
-- database takes the same path as an upgraded one.
INSERT INTO {prefix}schema (version)
SELECT 1 FROM DUAL
WHERE NOT EXISTS (SELECT 1 FROM {prefix}schema);

-- @statement upgrade
-- Any earlier version to 8 (DDL commits on its own in MariaDB; every
-- statement can run again): version 2 added the fire ledger, version 3
-- the lease's epoch (NULL: written before version 3, taken as the
-- current one), version 4 the server's epoch in the schema row (and since
-- when, in ms; 0: since before any lease), version 5 sharded groups
-- (docs/protocol.md, "Sharded groups"): a group's shards are lease rows
-- named GROUP/SHARD with grp and shard set, inc is the holder process's
-- incarnation and renew_seq the number of its tick that last renewed the
-- row; version 6 the election log, version 7 the fire lifecycle, version
-- 8 schedule identities (below).
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
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
ALTER TABLE {prefix}lease ADD COLUMN IF NOT EXISTS epoch VARCHAR(64) NULL;
ALTER TABLE {prefix}schema ADD COLUMN IF NOT EXISTS epoch VARCHAR(64) NULL,
    ADD COLUMN IF NOT EXISTS epoch_since_ms BIGINT NULL;
UPDATE {prefix}schema SET epoch = {epoch}, epoch_since_ms = 0
WHERE epoch IS NULL;
ALTER TABLE {prefix}lease ADD COLUMN IF NOT EXISTS grp VARCHAR(128) NULL,
    ADD COLUMN IF NOT EXISTS shard INTEGER NULL,
    ADD COLUMN IF NOT EXISTS inc BIGINT NULL,
    ADD COLUMN IF NOT EXISTS renew_seq BIGINT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS {prefix}lease_grp_shard
    ON {prefix}lease (grp, shard);
CREATE INDEX IF NOT EXISTS {prefix}lease_grp_inc ON {prefix}lease (grp, inc);
-- Version 6: the election log, one row per term of a namespace (not of a
-- group's shards): attempt writes the winner's row in the block that
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
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
-- Version 7: the fire lifecycle (docs/lifecycle.md): a fire's state, its
-- attempt and how many attempts its job allows (1: at most once), and
-- the jobs an operator paused. Rows of earlier versions get the state
-- their columns tell.
ALTER TABLE {prefix}fire
    ADD COLUMN IF NOT EXISTS state VARCHAR(16) NOT NULL DEFAULT 'running',
    ADD COLUMN IF NOT EXISTS attempt INTEGER NOT NULL DEFAULT 1,
    ADD COLUMN IF NOT EXISTS max_attempts INTEGER NOT NULL DEFAULT 1;
UPDATE {prefix}fire
SET state = IF(status = 0, 'done', 'failed')
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
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
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
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
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
-- Never an unexpired held lease, even our own; report it. The UPDATE's
-- row lock serialises takers: a concurrent attempt waits for it, then
-- re-checks its WHERE clause against the committed row and finds the
-- lease taken.
-- ROW_COUNT() is 1 exactly when the UPDATE took the lease (term always
-- changes). When we won, the final SELECT reads our own row, under our
-- lock; else the lease as this block's first read saw it. The first
-- row's term is the clock in ms, so a namespace whose row was deleted (or
-- a new table prefix) starts above every term it had before
-- (docs/protocol.md). A row written in another epoch (a promoted replica,
-- another Galera cluster) is not taken: the first UPDATE quarantines it
-- for one TTL of this server's clock (vacant, reserved for nobody:
-- handoff_to = '') and moves its term above every term the old server can
-- have issued (terms never outrun the clock in ms); the second then finds
-- it unexpired. A promoted copy may also lack the row (created on the old
-- server after the copy's last applied transaction): the first row is
-- only won when the schema row says this server has been in this epoch
-- for one TTL; otherwise it is inserted quarantined, and the schema row
-- records that the epoch changed, and when (a new database is settled
-- from the start).
-- The election log, in the same transaction and only when a term was
-- won or quarantined: a takeover (v_won = 1 from the second UPDATE) ends
-- the open entries of earlier terms as expired (the watched term at its
-- expiry, :seen_expires_ms; any other at v_now), a quarantine (v_quar) as
-- quarantined at v_now; then a won term, taken or first, opens its entry
-- with the lease row's own term and elected_at_ms. That entry is upserted
-- (a term number may come back after the lease row was deleted): the
-- collision between two first winners has already happened on the lease
-- row's primary key. Both read the lease row under the lock this block's
-- UPDATE or INSERT holds. attempt and resign take that row lock before
-- they touch the log, so their locks on it cannot deadlock each other;
-- election_gc, one statement, takes no lock but the log's.
-- Result: leader_id, term, expires_at_ms, now_ms, won, held (1 when this
-- session holds the wake-up lock after winning).
BEGIN NOT ATOMIC
    DECLARE v_now BIGINT DEFAULT {now}
    ; DECLARE v_epoch VARCHAR(64) DEFAULT {epoch}
    ; DECLARE v_rows, v_won, v_quar, v_unsettled INT DEFAULT 0
    ; DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END
    ; START TRANSACTION
    ; INSERT INTO {prefix}candidate (namespace, candidate_id,
          registered_at_ms, heartbeat_at_ms, expires_at_ms)
      VALUES (:ns, :id, v_now, v_now, v_now + :cand_ttl_ms)
      ON DUPLICATE KEY UPDATE heartbeat_at_ms = VALUES(heartbeat_at_ms),
          expires_at_ms = VALUES(expires_at_ms)
    ; SELECT COUNT(*) INTO v_rows FROM {prefix}lease WHERE namespace = :ns
    ; IF v_rows = 0 THEN
          SELECT COUNT(*) INTO v_unsettled FROM {prefix}schema
          WHERE epoch IS NULL OR epoch <> v_epoch
             OR epoch_since_ms > v_now - :ttl_ms
        ; UPDATE {prefix}schema SET epoch = v_epoch, epoch_since_ms = v_now
          WHERE epoch IS NULL OR epoch <> v_epoch
        ; SET v_won = IF(v_unsettled = 0, 1, 0)
        ; INSERT INTO {prefix}lease (namespace, leader_id, term,
              elected_at_ms, renewed_at_ms, expires_at_ms, resign_requested,
              handoff_to, epoch)
          VALUES (:ns, IF(v_won = 1, :id, NULL), v_now, v_now, v_now,
              v_now + :ttl_ms, 0, IF(v_won = 1, NULL, ''), v_epoch)
    ; ELSE
          UPDATE {prefix}lease
          SET leader_id = NULL,
              term = GREATEST(term + 1, v_now),
              renewed_at_ms = v_now,
              expires_at_ms = v_now + :ttl_ms,
              resign_requested = 0,
              handoff_to = '',
              epoch = v_epoch
          WHERE namespace = :ns
            AND epoch IS NOT NULL
            AND epoch <> v_epoch
        ; SET v_quar = ROW_COUNT()
        ; UPDATE {prefix}lease
          SET leader_id = :id,
              term = term + 1,
              elected_at_ms = v_now,
              renewed_at_ms = v_now,
              expires_at_ms = v_now + :ttl_ms,
              resign_requested = 0,
              handoff_to = NULL,
              epoch = v_epoch
          WHERE namespace = :ns
            AND (epoch IS NULL OR epoch = v_epoch)
            AND ((leader_id IS NULL
                  AND (handoff_to IS NULL
                       OR handoff_to = :id
                       OR (handoff_to <> '' AND expires_at_ms <= v_now)))
                 OR (expires_at_ms <= v_now
                     AND term = :seen_term
                     AND expires_at_ms = :seen_expires_ms))
        ; SET v_won = ROW_COUNT()
        ; IF v_won = 1 OR v_quar > 0 THEN
              UPDATE {prefix}election
              SET ended_at_ms = IF(v_won = 1 AND term = :seen_term,
                                   :seen_expires_ms, v_now),
                  ended_how = IF(v_won = 1, 'expired', 'quarantined')
              WHERE namespace = :ns
                AND ended_at_ms IS NULL
                AND term < (SELECT l.term FROM {prefix}lease AS l
                            WHERE l.namespace = :ns)
        ; END IF
    ; END IF
    ; IF v_won = 1 THEN
          INSERT INTO {prefix}election (namespace, term, leader_id,
              started_at_ms, ended_at_ms, ended_how, handed_to)
          SELECT namespace, term, leader_id, elected_at_ms, NULL, NULL, NULL
          FROM {prefix}lease
          WHERE namespace = :ns
          ON DUPLICATE KEY UPDATE leader_id = VALUES(leader_id),
              started_at_ms = VALUES(started_at_ms),
              ended_at_ms = NULL,
              ended_how = NULL,
              handed_to = NULL
    ; END IF
    ; IF v_won = 1 AND NOT (IS_USED_LOCK({wake_lock}) <=> CONNECTION_ID())
      THEN
          DO GET_LOCK({wake_lock}, 0)
    ; END IF
    ; SELECT leader_id, term, expires_at_ms, v_now AS now_ms, v_won AS won,
          IF(v_won = 1 AND IS_USED_LOCK({wake_lock}) <=> CONNECTION_ID(),
             1, 0) AS held
      FROM {prefix}lease
      WHERE namespace = :ns
    ; COMMIT
; END;

-- @statement renew
-- Heartbeat; delete candidate rows that expired more than one candidate
-- TTL ago (crashed processes with random ids would pile up); extend the
-- lease only for the exact holder and term while it is unexpired; report
-- it only when this block renewed it (no row = the lease is lost).
-- "renewed_at_ms = v_now" says so whatever ROW_COUNT() counts (MariaDB
-- counts changed rows, and a renew in the same millisecond changes
-- nothing): a row holding our id, our term and renewed_at_ms = v_now is
-- unexpired at v_now, so the UPDATE matched it. The DELETE runs only
-- when a plain read (SELECT ... INTO; IF EXISTS (SELECT ...) would lock)
-- finds such rows: it locks every candidate row it scans, and on Galera
-- a follower's heartbeat replicated from another node aborts a local
-- transaction holding such a lock (1213).
BEGIN NOT ATOMIC
    DECLARE v_now BIGINT DEFAULT {now}
    ; DECLARE v_epoch VARCHAR(64) DEFAULT {epoch}
    ; DECLARE v_gone INT DEFAULT 0
    ; DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END
    ; START TRANSACTION
    ; INSERT INTO {prefix}candidate (namespace, candidate_id,
          registered_at_ms, heartbeat_at_ms, expires_at_ms)
      VALUES (:ns, :id, v_now, v_now, v_now + :cand_ttl_ms)
      ON DUPLICATE KEY UPDATE heartbeat_at_ms = VALUES(heartbeat_at_ms),
          expires_at_ms = VALUES(expires_at_ms)
    ; SELECT COUNT(*) INTO v_gone FROM {prefix}candidate
      WHERE namespace = :ns
        AND candidate_id <> :id
        AND expires_at_ms < v_now - :cand_ttl_ms
    ; IF v_gone > 0 THEN
          DELETE FROM {prefix}candidate
          WHERE namespace = :ns
            AND candidate_id <> :id
            AND expires_at_ms < v_now - :cand_ttl_ms
    ; END IF
    ; UPDATE {prefix}lease
      SET renewed_at_ms = v_now,
          expires_at_ms = v_now + :ttl_ms,
          epoch = v_epoch
      WHERE namespace = :ns
        AND leader_id = :id
        AND term = :term
        AND expires_at_ms > v_now
        AND (epoch IS NULL OR epoch = v_epoch)
    ; IF ROW_COUNT() > 0
         AND NOT (IS_USED_LOCK({wake_lock}) <=> CONNECTION_ID()) THEN
          DO GET_LOCK({wake_lock}, 0)
    ; END IF
    ; SELECT leader_id, term, expires_at_ms, v_now AS now_ms,
          resign_requested, handoff_to,
          IF(IS_USED_LOCK({wake_lock}) <=> CONNECTION_ID(), 1, 0) AS held,
          (SELECT COUNT(*) FROM {prefix}fire AS f
           WHERE f.namespace = :ns AND f.state = 'pending')
          + (SELECT COUNT(*) FROM {prefix}fire AS f
             WHERE f.namespace = :ns AND f.state = 'interrupted'
               AND f.attempt < f.max_attempts) AS offered
      FROM {prefix}lease
      WHERE namespace = :ns
        AND leader_id = :id
        AND term = :term
        AND renewed_at_ms = v_now
    ; COMMIT
; END;

-- @statement resign
-- Only the exact term: the row and its term stay, the lease is vacant.
-- After a request with a handoff target the lease stays reserved for
-- that candidate for one TTL, then it is open to anyone.
-- Three statements, one transaction (the engine's): the first locks the
-- lease row while we hold it, before anything reads it (the join below
-- may read it with a shared lock, InnoDB's under REPEATABLE READ, and
-- upgrading that to the last UPDATE's exclusive one while a follower's
-- attempt waits for the row would deadlock). The second ends the term's
-- entry in the election log by how the lease row says it was asked (read
-- before the last UPDATE resets the request). The lease's UPDATE stays
-- last: its row count is the result. (Its assignments run left to right:
-- expires_at_ms is computed before handoff_to changes.)
SELECT term FROM {prefix}lease
WHERE namespace = :ns AND leader_id = :id AND term = :term
FOR UPDATE;
UPDATE {prefix}election AS e
JOIN {prefix}lease AS l
  ON l.namespace = e.namespace AND l.leader_id = :id AND l.term = e.term
SET e.ended_at_ms = {now},
    e.ended_how = CASE WHEN l.handoff_to <> '' THEN 'handover'
                       WHEN l.resign_requested <> 0 THEN 'requested'
                       ELSE 'resigned' END,
    e.handed_to = NULLIF(l.handoff_to, '')
WHERE e.namespace = :ns
  AND e.term = :term
  AND e.ended_at_ms IS NULL;
UPDATE {prefix}lease
SET expires_at_ms = CASE WHEN handoff_to IS NULL THEN {now}
                         ELSE {now} + :ttl_ms END,
    leader_id = NULL,
    resign_requested = 0
WHERE namespace = :ns AND leader_id = :id AND term = :term;

-- @statement unregister
DELETE FROM {prefix}candidate
WHERE namespace = :ns AND candidate_id = :id;

-- @statement leader
-- A shard held under its member's lease (schema 9) expires with the
-- lease.
SELECT l.leader_id, l.term,
    CASE WHEN l.expires_at_ms = {by_member}
         THEN COALESCE(mb.expires_at_ms, 0) ELSE l.expires_at_ms END,
    {now}
FROM {prefix}lease AS l
LEFT JOIN {prefix}member AS mb ON mb.grp = l.grp AND mb.inc = l.inc
WHERE l.namespace = :ns;

-- @statement candidates
SELECT candidate_id, heartbeat_at_ms, expires_at_ms,
    {now}
FROM {prefix}candidate
WHERE namespace = :ns
  AND expires_at_ms > {now}
ORDER BY candidate_id;

-- @statement request_resign
-- Asks whoever leads now to resign at its next renewal, optionally
-- handing over to :to (NULL = anyone). Changes no row when nobody leads.
UPDATE {prefix}lease
SET resign_requested = 1,
    handoff_to = :to
WHERE namespace = :ns
  AND leader_id IS NOT NULL
  AND expires_at_ms > {now};

-- @statement release
-- Lets go of the wake-up lock; run after resign has committed and
-- whenever the engine steps down.
SELECT RELEASE_ALL_LOCKS() AS released;

-- @statement wait
-- A follower blocks here until the leader lets go of the wake-up lock,
-- for at most :wait_ms, and lets go of it at once (left to right in the
-- select list). GET_LOCK returns 0 when the time runs out.
SELECT COALESCE(GET_LOCK({wake_lock}, :wait_ms / 1000), 0) AS woken,
    RELEASE_LOCK({wake_lock}) AS released;

-- @statement hold
-- Takes the wake-up lock when attempt or renew could not, waiting up to
-- :wait_ms for followers that hold it for a moment as they wake.
-- Result: held.
SELECT IF(IS_USED_LOCK({wake_lock}) <=> CONNECTION_ID(), 1,
          COALESCE(GET_LOCK({wake_lock}, :wait_ms / 1000), 0)) AS held;

-- @statement claim
-- Records fire :fire_ms of :job for our term only while, at this
-- statement's clock (UTC_TIMESTAMP is fixed for a statement), we hold the
-- namespace's current, unexpired term (InnoDB reads the lease row of an
-- INSERT ... SELECT with a shared lock, so a takeover waits for the
-- claim); only for a fire not older than the retention (0, a one-off
-- key, never is); and only while no operator paused the job. No row
-- inserted = not leader, too old or paused (the engine reads the lease to
-- tell which). A second claim of a fire fails on the primary key with
-- 1062: "already claimed", or a fire offered again (the engine runs
-- take).
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT namespace, :job, :fire_ms, term, leader_id, {now}, NULL, NULL,
    'running', 1, :max_attempts
FROM {prefix}lease
WHERE namespace = :ns
  AND leader_id = :id
  AND term = :term
  AND expires_at_ms > {now}
  AND (epoch IS NULL OR epoch = {epoch})
  AND ({prefix}lease.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                   WHERE mb.grp = {prefix}lease.grp AND mb.inc = {prefix}lease.inc
                     AND mb.expires_at_ms > {now}
                     AND (mb.epoch IS NULL OR mb.epoch = {epoch})))
  AND (:fire_ms = 0 OR :fire_ms >= {now} - :retention_ms)
  AND NOT EXISTS (SELECT 1 FROM {prefix}job AS j
                  WHERE j.namespace = :ns AND j.job = :job
                    AND j.paused <> 0);

-- @statement take
-- Claims a fire that is offered (docs/lifecycle.md): a run-now
-- (pending), or an attempt whose term ended without an outcome while its
-- job allows another (interrupted, or still running in an earlier term:
-- a term ends only when its lease expired or was released, so that
-- attempt can no longer act). The fire becomes attempt + 1, running in
-- our term, while we hold it unexpired and the job is not paused. One
-- row changed = taken. MariaDB assigns left to right, each assignment
-- seeing the ones before: state, which the first reads, comes last.
UPDATE {prefix}fire
SET max_attempts = IF(state = 'pending', :max_attempts, max_attempts),
    attempt = attempt + 1,
    term = :term,
    claimed_by = :id,
    claimed_at_ms = {now},
    finished_at_ms = NULL,
    status = NULL,
    state = 'running'
WHERE namespace = :ns AND job = :job AND fire_ms = :fire_ms
  AND term < :term
  AND (state = 'pending'
       OR (state IN ('interrupted', 'running')
           AND attempt < max_attempts))
  AND EXISTS (SELECT 1 FROM {prefix}lease AS l
              WHERE l.namespace = :ns AND l.leader_id = :id
                AND l.term = :term AND l.expires_at_ms > {now}
                AND (l.epoch IS NULL OR l.epoch = {epoch})
                AND (l.expires_at_ms < {by_member}
                     OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                                 WHERE mb.grp = l.grp AND mb.inc = l.inc
                                   AND mb.expires_at_ms > {now}
                                   AND (mb.epoch IS NULL OR mb.epoch = {epoch}))))
  AND NOT EXISTS (SELECT 1 FROM {prefix}job AS j
                  WHERE j.namespace = :ns AND j.job = :job
                    AND j.paused <> 0);

-- @statement skip
-- Records that fire :fire_ms of paused :job was due and not run, while we
-- lead: it stays skipped after a resume. A fire already recorded keeps
-- its row (the unique violation is ignored).
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT namespace, :job, :fire_ms, term, leader_id, {now}, {now}, NULL,
    'skipped', 0, :max_attempts
FROM {prefix}lease
WHERE namespace = :ns
  AND leader_id = :id
  AND term = :term
  AND expires_at_ms > {now}
  AND (epoch IS NULL OR epoch = {epoch})
  AND ({prefix}lease.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                   WHERE mb.grp = {prefix}lease.grp AND mb.inc = {prefix}lease.inc
                     AND mb.expires_at_ms > {now}
                     AND (mb.epoch IS NULL OR mb.epoch = {epoch})));

-- @statement finish
-- Records the outcome of a fire we claimed, once, in the term we claimed
-- it in (:term 0: any of ours): done or failed. A fire found interrupted
-- or abandoned by a later term still takes its late outcome, unless it
-- was offered again and taken (then its term and claimant changed). No
-- row changed = already finished or not ours (the engine reads the fire
-- to tell which). state, which the WHERE reads, is assigned last.
UPDATE {prefix}fire
SET finished_at_ms = {now},
    status = :status,
    state = IF(:status = 0, 'done', 'failed')
WHERE namespace = :ns AND job = :job AND fire_ms = :fire_ms
  AND claimed_by = :id
  AND (:term = 0 OR term = :term)
  AND state IN ('running', 'interrupted', 'abandoned');

-- @statement fire
-- One fire. Result: job, fire_ms, term, claimed_by, claimed_at_ms,
-- finished_at_ms, status, now_ms, state, attempt, max_attempts.
SELECT job, fire_ms, term, claimed_by, claimed_at_ms, finished_at_ms,
    status, {now}, state, attempt, max_attempts
FROM {prefix}fire
WHERE namespace = :ns AND job = :job AND fire_ms = :fire_ms;

-- @statement fires
-- Every fire of the namespace (of :job unless it is ''), oldest first;
-- columns as fire.
SELECT job, fire_ms, term, claimed_by, claimed_at_ms, finished_at_ms,
    status, {now}, state, attempt, max_attempts
FROM {prefix}fire
WHERE namespace = :ns AND (:job = '' OR job = :job)
ORDER BY fire_ms, job;

-- @statement fire_gc
-- Retention, run by the leader: ended fires whose nominal time and end
-- are both older than :retention_ms. claim refuses fires that old, so a
-- deleted fire can never be claimed again. One-off keys (fire 0) stay.
-- A run-now's key is below 0 and its end the time to compare.
DELETE FROM {prefix}fire
WHERE namespace = :ns
  AND fire_ms <> 0
  AND finished_at_ms IS NOT NULL
  AND state <> 'pending'
  AND fire_ms < {now} - :retention_ms
  AND finished_at_ms < {now} - :retention_ms;

-- @statement sweep
-- Run once by each new term, fenced by it: a fire still running in an
-- earlier term lost its runner (that term can no longer act). It becomes
-- interrupted (offered again while its job allows another attempt) or,
-- after its last allowed attempt of several, abandoned.
UPDATE {prefix}fire
SET finished_at_ms = {now},
    state = IF(max_attempts > 1 AND attempt >= max_attempts, 'abandoned',
               'interrupted')
WHERE namespace = :ns
  AND state = 'running'
  AND term < :term
  AND EXISTS (SELECT 1 FROM {prefix}lease AS l
              WHERE l.namespace = :ns AND l.leader_id = :id
                AND l.term = :term AND l.expires_at_ms > {now}
                AND (l.epoch IS NULL OR l.epoch = {epoch})
                AND (l.expires_at_ms < {by_member}
                     OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                                 WHERE mb.grp = l.grp AND mb.inc = l.inc
                                   AND mb.expires_at_ms > {now}
                                   AND (mb.epoch IS NULL OR mb.epoch = {epoch}))));

-- @statement offers
-- The fires offered to the leader of term :term, oldest first, and the
-- fires still running in earlier terms (which the engine then sweeps and
-- reads again); columns as fire. The IN on state makes it a search of the (namespace, state)
-- index, not a scan of the namespace's ledger.
SELECT job, fire_ms, term, claimed_by, claimed_at_ms, finished_at_ms,
    status, {now}, state, attempt, max_attempts
FROM {prefix}fire
WHERE namespace = :ns
  AND state IN ('pending', 'interrupted', 'running')
  AND term < :term
  AND (state <> 'interrupted' OR attempt < max_attempts)
ORDER BY claimed_at_ms, job, fire_ms;

-- @statement pause
-- An operator pauses (:paused 1) or resumes (0) :job on every host.
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by)
VALUES (:ns, :job, :paused, {now}, :id)
ON DUPLICATE KEY UPDATE paused = VALUES(paused),
    changed_at_ms = VALUES(changed_at_ms),
    changed_by = VALUES(changed_by);

-- @statement trigger
-- An operator asks for one run of :job now: a pending fire offered to the
-- leader, keyed below 0 so that no nominal time can collide with it (the
-- negated database clock, or one below the job's lowest key). Result:
-- the key (the job's lowest, in this transaction).
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT :ns, :job,
    LEAST(-{now},
          COALESCE((SELECT MIN(f.fire_ms) FROM {prefix}fire AS f
                    WHERE f.namespace = :ns AND f.job = :job), 0) - 1),
    0, :id, {now}, NULL, NULL, 'pending', 0, 1
FROM DUAL;
SELECT MIN(fire_ms) FROM {prefix}fire
WHERE namespace = :ns AND job = :job;

-- @statement jobs
-- Every job of the namespace that has fires or a pause record: job,
-- paused, changed_at_ms, changed_by, fires, running, offered,
-- last_fire_ms (the latest nominal time), last_done_ms, last_failed_ms
-- (the latest end that failed, was interrupted or abandoned), now_ms.
SELECT u.job, MAX(u.paused), MAX(u.changed_at_ms), MAX(u.changed_by),
    SUM(u.n), SUM(u.running), SUM(u.offered), MAX(u.nominal),
    MAX(u.done_at), MAX(u.bad_at), {now}
FROM (SELECT job, paused, changed_at_ms, changed_by, 0 AS n,
          0 AS running, 0 AS offered, CAST(NULL AS SIGNED) AS nominal,
          CAST(NULL AS SIGNED) AS done_at, CAST(NULL AS SIGNED) AS bad_at
      FROM {prefix}job
      WHERE namespace = :ns
      UNION ALL
      SELECT job, 0, NULL, NULL, 1,
          IF(state = 'running', 1, 0),
          IF(state = 'pending'
             OR (state = 'interrupted' AND attempt < max_attempts), 1, 0),
          IF(fire_ms > 0, fire_ms, NULL),
          IF(state = 'done', finished_at_ms, NULL),
          IF(state IN ('failed', 'interrupted', 'abandoned'),
             finished_at_ms, NULL)
      FROM {prefix}fire
      WHERE namespace = :ns) AS u
GROUP BY u.job
ORDER BY u.job;

-- @statement schedule
-- A claim of :job computed by schedule :schedule (docs/schedules.md):
-- records it as the job's when the job has none (its first claim), counts
-- a refusal when the job's differs, and returns the job's schedule, since
-- when and by whom; the engine claims only when it equals :schedule. The
-- no-op update of an existing row changes nothing (0 rows affected).
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by,
    schedule, schedule_at_ms, schedule_by, refusals)
VALUES (:ns, :job, 0, 0, '', :schedule, {now}, :id, 0)
ON DUPLICATE KEY UPDATE job = {prefix}job.job;
UPDATE {prefix}job
SET schedule = :schedule, schedule_at_ms = {now}, schedule_by = :id
WHERE namespace = :ns AND job = :job AND schedule IS NULL;
UPDATE {prefix}job
SET refusals = refusals + 1, refused = :schedule, refused_at_ms = {now},
    refused_by = :id
WHERE namespace = :ns AND job = :job AND schedule <> :schedule;
SELECT schedule, schedule_at_ms, schedule_by FROM {prefix}job
WHERE namespace = :ns AND job = :job;

-- @statement schedule_read
-- The schedule recorded for :job (no row: the job has none yet): a claim
-- whose identity equals it goes on after this one read; any other answer
-- runs the schedule statement, which records or refuses. Optional: without
-- it every check runs the schedule statement.
SELECT schedule, schedule_at_ms, schedule_by FROM {prefix}job
WHERE namespace = :ns AND job = :job;

-- @statement reschedule
-- An operator records :schedule as :job's schedule (NULL: none, so that
-- the next claim records its own), counting refusals from 0 again.
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by,
    schedule, schedule_at_ms, schedule_by, refusals)
VALUES (:ns, :job, 0, 0, '', :schedule, {now}, :id, 0)
ON DUPLICATE KEY UPDATE schedule = VALUES(schedule),
    schedule_at_ms = VALUES(schedule_at_ms),
    schedule_by = VALUES(schedule_by),
    refusals = 0, refused = NULL, refused_at_ms = NULL, refused_by = NULL;

-- @statement schedules
-- The jobs with a schedule or refused claims: job, schedule,
-- schedule_at_ms, schedule_by, refusals, refused, refused_at_ms,
-- refused_by, now_ms.
SELECT job, schedule, schedule_at_ms, schedule_by, refusals, refused,
    refused_at_ms, refused_by, {now}
FROM {prefix}job
WHERE namespace = :ns AND (schedule IS NOT NULL OR refusals > 0)
ORDER BY job;

-- @statement last_fire
-- The latest nominal time of :job's fires (NULL: none) and now_ms: where
-- the catch-up policy starts (docs/catch-up.md). One index range, where
-- the jobs statement reads the whole namespace.
SELECT MAX(fire_ms), {now} FROM {prefix}fire
WHERE namespace = :ns AND job = :job AND fire_ms > 0;

-- @statement fence
-- The fence of docs/fencing.md (odbc-leader fence prints it): a row while
-- term :term of namespace :ns still holds at the statement's clock. A
-- job's write adds "AND EXISTS (this)" to apply only inside its term.
SELECT 1 FROM {prefix}lease
WHERE namespace = :ns
  AND term = :term
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
-- at the next term's start, or at the lease's expiry. A plain read: it
-- locks nothing ({now} is fixed for the statement).
SELECT e.term, e.leader_id, e.started_at_ms,
    COALESCE(e.ended_at_ms,
             (SELECT n.started_at_ms FROM {prefix}election AS n
              WHERE n.namespace = e.namespace AND n.term > e.term
              ORDER BY n.term LIMIT 1),
             IF(l.expires_at_ms <= {now}, l.expires_at_ms, NULL))
        AS ended_at_ms,
    COALESCE(e.ended_how,
             IF(EXISTS (SELECT 1 FROM {prefix}election AS n
                        WHERE n.namespace = e.namespace AND n.term > e.term)
                OR l.expires_at_ms <= {now}, 'expired', NULL))
        AS ended_how,
    e.handed_to, {now} AS now_ms
FROM {prefix}election AS e
LEFT JOIN {prefix}lease AS l
  ON l.namespace = e.namespace AND l.term = e.term
WHERE e.namespace = :ns
ORDER BY e.term;

-- @statement election_gc
-- Retention, run by the leader: terms that ended more than
-- :election_retention_ms ago, and entries left open by a term that a
-- later one followed, started that long ago. (MariaDB reads the table a
-- DELETE writes in its subquery since 10.3.)
DELETE FROM {prefix}election
WHERE namespace = :ns
  AND ((ended_at_ms IS NOT NULL
        AND ended_at_ms < {now} - :election_retention_ms)
       OR (ended_at_ms IS NULL
           AND started_at_ms < {now} - :election_retention_ms
           AND term < (SELECT MAX(n.term) FROM {prefix}election AS n
                       WHERE n.namespace = :ns)));

-- @statement session_id
-- The server session this statement ran in, for the library's check for a
-- pooler that hands each transaction whichever server connection is free:
-- the connection id, which counts from 1 at every server start, with the
-- server it belongs to (as in {epoch}).
SELECT CONCAT(CONNECTION_ID(), '@', @@hostname, ':', @@port, '/',
    @@server_id);

-- @statement group_init
-- Creates the rows of group :ns's :shards shards (GROUP/0 ...) when the
-- group has none yet, vacant, with the clock in ms as their term; an
-- existing group keeps its size (the engine compares it with :shards). As
-- attempt's first row: in an epoch this server has not been in for one
-- TTL the new rows are quarantined (reserved for nobody, holder
-- incarnation 0) for one TTL. INSERT IGNORE skips the rows a concurrent
-- first member inserted, and rows named like a shard that belong to no
-- group, which the result counts. The shard numbers come from two
-- copies of 0..255 (a recursion of 1,000 steps or more stops silently at
-- max_recursive_iterations, 1,000 by default; up to 65,536 shards).
-- Result: the group's rows, those rows.
BEGIN NOT ATOMIC
    DECLARE v_now BIGINT DEFAULT {now}
    ; DECLARE v_epoch VARCHAR(64) DEFAULT {epoch}
    ; DECLARE v_rows, v_unsettled INT DEFAULT 0
    ; DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END
    ; START TRANSACTION
    ; SELECT COUNT(*) INTO v_rows FROM {prefix}lease WHERE grp = :ns
    ; IF v_rows = 0 THEN
          SELECT COUNT(*) INTO v_unsettled FROM {prefix}schema
          WHERE epoch IS NULL OR epoch <> v_epoch
             OR epoch_since_ms > v_now - :ttl_ms
        ; UPDATE {prefix}schema SET epoch = v_epoch, epoch_since_ms = v_now
          WHERE epoch IS NULL OR epoch <> v_epoch
        ; INSERT IGNORE INTO {prefix}lease (namespace, leader_id, term,
              elected_at_ms, renewed_at_ms, expires_at_ms, resign_requested,
              handoff_to, epoch, grp, shard, inc, renew_seq)
          WITH RECURSIVE d(x) AS (
              SELECT 0 UNION ALL SELECT x + 1 FROM d WHERE x < 255),
          g(s) AS (
              SELECT a.x * 256 + b.x FROM d AS a, d AS b
              WHERE a.x * 256 + b.x < :shards)
          SELECT CONCAT(:ns, '/', g.s), NULL, v_now, NULL, v_now,
              IF(v_unsettled = 0, v_now, v_now + :ttl_ms), 0,
              IF(v_unsettled = 0, NULL, ''), v_epoch, :ns, g.s,
              IF(v_unsettled = 0, NULL, 0), IF(v_unsettled = 0, NULL, 0)
          FROM g
    ; END IF
    ; SELECT (SELECT COUNT(*) FROM {prefix}lease WHERE grp = :ns) AS shards,
          (SELECT COUNT(*) FROM {prefix}lease
           WHERE grp IS NULL
             AND LEFT(namespace, CHAR_LENGTH(:ns) + 1) = CONCAT(:ns, '/'))
          AS foreign_rows
    ; COMMIT
; END;

-- @statement group_tick
-- A member's tick, one block and one round trip (docs/protocol.md,
-- "Sharded groups" and "Shards held under the member's lease"):
-- heartbeat; the lease of this incarnation (:id, :inc), made when it has
-- no row and renewed while unexpired, never after; release the shards in
-- :release (a JSON array of [shard, term] pairs: a row is released only
-- in the term named, so an old tick still running on a lost connection
-- cannot release a later term; the host stopped their work first);
-- quarantine the group's rows written in another epoch; and, only while
-- the lease holds, take the shards in :take that are vacant and reserved
-- for nobody, or held by an incarnation the caller has watched standing
-- still for one TTL on its own clock (:dead, a JSON array of
-- [incarnation, the highest renew_seq seen of it]): for a row of
-- {by_member}, one whose lease expired and was not renewed since; for a
-- row a member of version 8 renews itself, one that expired unrenewed
-- since. A take writes the term + 1, renew_seq = :seq and {by_member}:
-- the shard holds while the lease does, and a steady tick writes no
-- shard row. Leases of incarnations that hold nothing and expired a day
-- ago go.
--
-- Locks: under REPEATABLE READ an InnoDB UPDATE locks every row it reads
-- (and the gaps of a range it scans), whether it matches or not. So each
-- UPDATE here is given its rows as a JSON list, read with JSON_TABLE
-- (MariaDB 10.6) and joined on the unique (grp, shard) index: one record
-- lock per row listed, no gap locks. The renewal's and the take's lists
-- come from a consistent read (SELECT ... INTO, which locks nothing) of
-- the rows that qualify, and the UPDATE checks the same conditions again
-- on the rows as they are now. A whole-group UPDATE (10.11 runs UPDATE
-- ... WHERE IN (subquery) as one too) made ten members of a 10,000-shard
-- group deadlock on each other at every tick; the quarantine still is
-- one, run only when a consistent read finds a row to quarantine (after
-- a failover). Likewise the candidates' garbage collection: IF EXISTS
-- (SELECT ...) is a locking read here, whose shared locks on the other
-- members' candidate rows deadlocked with their heartbeats. The watched
-- holders' leases are read FOR UPDATE by primary key, the :dead list
-- first (STRAIGHT_JOIN; member.c lists them in ascending incarnation):
-- where the optimizer scanned the group's member rows instead, the read
-- locked live members' leases and deadlocked with their renewals (7
-- deadlocks in one fleet run of 10 members over 10,000 shards). An empty
-- list runs nothing.
--
-- The lease and a take from it are ordered by the lease row's lock: the
-- renewal locks the row first (an upsert that changes nothing), then
-- renews it in an UPDATE whose clock is read after that lock ({now}, not
-- the block's v_now); a take locks each watched holder's lease (SELECT
-- ... FOR UPDATE: the newest committed renewal, and none after it until
-- this commits) and finds it expired on a clock read after that lock. So
-- a renewal waiting on a take fails after it, and a take waiting on a
-- renewal sees it. Result rows, kind first: S renewed(1/0) renew_seq
-- expires_at_ms (this incarnation's lease), L shard term expires_at_ms
-- (held after this tick), M candidate_id heartbeat_at_ms expires_at_ms
-- (live members), H holder_id inc renew_seq count (holders: the lease's
-- counter, or a version-8 holder's highest renew_seq), V shard term
-- expires_at_ms (vacant); now_ms last.
-- L, H and V only when :full = 1; when :full = 0 (a steady tick, which
-- reads no shard row), K member_id inc renew_seq expires_at_ms (the
-- member leases that hold a shard: an index probe each) instead. The
-- probe is a scalar subquery with LIMIT 1 on both columns of the (grp,
-- inc) index: as an EXISTS, the optimizer made it a semi-join that
-- materialized every shard key of the group at every tick (4.4 ms
-- against 0.2 ms for 13 members over 10,000 shards, ANALYZE).
BEGIN NOT ATOMIC
    DECLARE v_now BIGINT DEFAULT {now}
    ; DECLARE v_epoch VARCHAR(64) DEFAULT {epoch}
    ; DECLARE v_stale, v_gone, v_lease, v_old INT DEFAULT 0
    ; DECLARE v_take, v_dead LONGTEXT DEFAULT NULL
    ; DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END
    ; START TRANSACTION
    ; INSERT INTO {prefix}candidate (namespace, candidate_id,
          registered_at_ms, heartbeat_at_ms, expires_at_ms)
      VALUES (:ns, :id, v_now, v_now, v_now + :cand_ttl_ms)
      ON DUPLICATE KEY UPDATE heartbeat_at_ms = VALUES(heartbeat_at_ms),
          expires_at_ms = VALUES(expires_at_ms)
    ; SELECT COUNT(*) INTO v_gone FROM {prefix}candidate
      WHERE namespace = :ns
        AND candidate_id <> :id
        AND expires_at_ms < v_now - :cand_ttl_ms
    ; IF v_gone > 0 THEN
          DELETE FROM {prefix}candidate
          WHERE namespace = :ns
            AND candidate_id <> :id
            AND expires_at_ms < v_now - :cand_ttl_ms
    ; END IF
    ; INSERT INTO {prefix}member (grp, inc, member_id, started_at_ms,
          renewed_at_ms, expires_at_ms, renew_seq, epoch)
      VALUES (:ns, :inc, :id, v_now, v_now, v_now + :ttl_ms, :seq, v_epoch)
      ON DUPLICATE KEY UPDATE inc = inc
    ; UPDATE {prefix}member
      SET renewed_at_ms = v_now, expires_at_ms = v_now + :ttl_ms,
          renew_seq = :seq
      WHERE grp = :ns AND inc = :inc AND member_id = :id
        AND renew_seq < :seq
        AND expires_at_ms > {now}
        AND (epoch IS NULL OR epoch = v_epoch)
    ; SELECT COUNT(*) INTO v_lease FROM {prefix}member
      WHERE grp = :ns AND inc = :inc AND renew_seq = :seq
        AND expires_at_ms > v_now
    ; IF :full = 1 THEN
          SELECT COUNT(*) INTO v_old FROM {prefix}member
          WHERE grp = :ns AND expires_at_ms < v_now - 86400000
    ; END IF
    ; IF v_old > 0 THEN
          DELETE FROM {prefix}member
          WHERE grp = :ns AND inc <> :inc
            AND expires_at_ms < v_now - 86400000
            AND inc NOT IN (SELECT inc FROM {prefix}lease
                            WHERE grp = :ns AND inc IS NOT NULL)
    ; END IF
    ; IF JSON_LENGTH(:release) > 0 THEN
          UPDATE {prefix}lease AS l
          JOIN JSON_TABLE(:release, '$[*]'
                          COLUMNS (s INT PATH '$[0]', t BIGINT PATH '$[1]')) AS j
            ON l.grp = :ns AND l.shard = j.s AND l.term = j.t
          SET l.leader_id = NULL, l.inc = NULL, l.resign_requested = 0,
              l.expires_at_ms = v_now
          WHERE l.inc = :inc AND l.leader_id = :id
            AND (l.epoch IS NULL OR l.epoch = v_epoch)
    ; END IF
    ; IF :full = 1 THEN
          SELECT COUNT(*) INTO v_stale FROM {prefix}lease
          WHERE grp = :ns AND epoch IS NOT NULL AND epoch <> v_epoch
    ; END IF
    ; IF v_stale > 0 THEN
          UPDATE {prefix}lease
          SET leader_id = NULL, inc = 0, renew_seq = 0,
              term = GREATEST(term + 1, v_now), renewed_at_ms = v_now,
              expires_at_ms = v_now + :ttl_ms, resign_requested = 0,
              handoff_to = '', epoch = v_epoch
          WHERE grp = :ns AND epoch IS NOT NULL AND epoch <> v_epoch
    ; END IF
    ; IF JSON_LENGTH(:take) > 0 AND v_lease > 0 THEN
          IF JSON_LENGTH(:dead) > 0 THEN
              SELECT JSON_ARRAYAGG(h.inc) INTO v_dead
              FROM JSON_TABLE(:dead, '$[*]' COLUMNS (i BIGINT PATH '$[0]',
                                                     q BIGINT PATH '$[1]')) AS d
              STRAIGHT_JOIN {prefix}member AS h
                ON h.grp = :ns AND h.inc = d.i
              WHERE h.inc <> :inc
                AND ((h.expires_at_ms <= {now} AND h.renew_seq <= d.q)
                     OR (h.epoch IS NOT NULL AND h.epoch <> v_epoch))
              FOR UPDATE
          ; END IF
        ; SELECT JSON_ARRAYAGG(l.shard) INTO v_take
          FROM {prefix}lease AS l
          JOIN JSON_TABLE(:take, '$[*]' COLUMNS (s INT PATH '$')) AS j
            ON l.grp = :ns AND l.shard = j.s
          WHERE (l.epoch IS NULL OR l.epoch = v_epoch)
            AND ((l.leader_id IS NULL AND l.inc IS NULL
                  AND l.handoff_to IS NULL)
                 OR (l.expires_at_ms = {by_member} AND l.inc <> :inc
                     AND JSON_CONTAINS(COALESCE(v_dead, '[]'),
                                       CAST(l.inc AS CHAR)))
                 OR (l.expires_at_ms <= v_now
                     AND l.inc <> :inc
                     AND EXISTS (SELECT 1 FROM JSON_TABLE(:dead, '$[*]'
                                 COLUMNS (i BIGINT PATH '$[0]',
                                          q BIGINT PATH '$[1]')) AS d
                                 WHERE d.i = l.inc AND l.renew_seq <= d.q)))
    ; END IF
    ; IF v_take IS NOT NULL THEN
          UPDATE {prefix}lease AS l
          JOIN JSON_TABLE(v_take, '$[*]' COLUMNS (s INT PATH '$')) AS j
            ON l.grp = :ns AND l.shard = j.s
          SET l.leader_id = :id, l.inc = :inc, l.renew_seq = :seq,
              l.term = l.term + 1, l.elected_at_ms = v_now,
              l.renewed_at_ms = v_now, l.expires_at_ms = {by_member},
              l.resign_requested = 0, l.handoff_to = NULL, l.epoch = v_epoch
          WHERE (l.epoch IS NULL OR l.epoch = v_epoch)
            AND ((l.leader_id IS NULL AND l.inc IS NULL
                  AND l.handoff_to IS NULL)
                 OR (l.expires_at_ms = {by_member} AND l.inc <> :inc
                     AND JSON_CONTAINS(COALESCE(v_dead, '[]'),
                                       CAST(l.inc AS CHAR)))
                 OR (l.expires_at_ms <= v_now
                     AND l.inc <> :inc
                     AND EXISTS (SELECT 1 FROM JSON_TABLE(:dead, '$[*]'
                                 COLUMNS (i BIGINT PATH '$[0]',
                                          q BIGINT PATH '$[1]')) AS d
                                 WHERE d.i = l.inc AND l.renew_seq <= d.q)))
    ; END IF
    ; SELECT 'S' AS kind, CAST(NULL AS CHAR(128)) AS name,
          CAST(v_lease > 0 AS SIGNED) AS a,
          COALESCE((SELECT renew_seq FROM {prefix}member
                    WHERE grp = :ns AND inc = :inc), 0) AS b,
          COALESCE((SELECT expires_at_ms FROM {prefix}member
                    WHERE grp = :ns AND inc = :inc), 0) AS c,
          0 AS won, v_now AS now_ms
      UNION ALL
      SELECT 'L', NULL, CAST(shard AS SIGNED), term, expires_at_ms, 0, v_now
      FROM {prefix}lease
      WHERE grp = :ns AND inc = :inc AND leader_id = :id AND :full = 1
      UNION ALL
      SELECT 'M', candidate_id, 0, heartbeat_at_ms, expires_at_ms, 0, v_now
      FROM {prefix}candidate
      WHERE namespace = :ns AND expires_at_ms > v_now
      UNION ALL
      SELECT 'H', MAX(l.leader_id), l.inc,
          COALESCE(MAX(mb.renew_seq), MAX(l.renew_seq)), COUNT(*), 0, v_now
      FROM {prefix}lease AS l
      LEFT JOIN {prefix}member AS mb ON mb.grp = l.grp AND mb.inc = l.inc
      WHERE l.grp = :ns AND l.inc IS NOT NULL AND :full = 1
      GROUP BY l.inc
      UNION ALL
      SELECT 'V', NULL, shard, term, expires_at_ms, 0, v_now
      FROM {prefix}lease
      WHERE grp = :ns AND inc IS NULL AND :full = 1
      UNION ALL
      SELECT 'K', mb.member_id, mb.inc, mb.renew_seq, mb.expires_at_ms, 0,
          v_now
      FROM {prefix}member AS mb
      WHERE mb.grp = :ns AND :full = 0
        AND (SELECT 1 FROM {prefix}lease AS l
             WHERE l.grp = mb.grp AND l.inc = mb.inc LIMIT 1) = 1
    ; COMMIT
; END;

-- @statement group_steady
-- A steady tick (docs/protocol.md, "A steady tick"): what group_tick does
-- and answers with :full = 0 and nothing to take, release or offer, as a
-- block of its own: heartbeat, the garbage collection of candidates, the
-- lease renewed by the same two statements (the upsert that locks the
-- row, then the UPDATE whose clock is read after that lock), then S, M
-- and K rows. The server parses a block at every run; this one is a
-- quarter of group_tick's text.
BEGIN NOT ATOMIC
    DECLARE v_now BIGINT DEFAULT {now}
    ; DECLARE v_epoch VARCHAR(64) DEFAULT {epoch}
    ; DECLARE v_gone, v_lease INT DEFAULT 0
    ; DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END
    ; START TRANSACTION
    ; INSERT INTO {prefix}candidate (namespace, candidate_id,
          registered_at_ms, heartbeat_at_ms, expires_at_ms)
      VALUES (:ns, :id, v_now, v_now, v_now + :cand_ttl_ms)
      ON DUPLICATE KEY UPDATE heartbeat_at_ms = VALUES(heartbeat_at_ms),
          expires_at_ms = VALUES(expires_at_ms)
    ; SELECT COUNT(*) INTO v_gone FROM {prefix}candidate
      WHERE namespace = :ns
        AND candidate_id <> :id
        AND expires_at_ms < v_now - :cand_ttl_ms
    ; IF v_gone > 0 THEN
          DELETE FROM {prefix}candidate
          WHERE namespace = :ns
            AND candidate_id <> :id
            AND expires_at_ms < v_now - :cand_ttl_ms
    ; END IF
    ; INSERT INTO {prefix}member (grp, inc, member_id, started_at_ms,
          renewed_at_ms, expires_at_ms, renew_seq, epoch)
      VALUES (:ns, :inc, :id, v_now, v_now, v_now + :ttl_ms, :seq, v_epoch)
      ON DUPLICATE KEY UPDATE inc = inc
    ; UPDATE {prefix}member
      SET renewed_at_ms = v_now, expires_at_ms = v_now + :ttl_ms,
          renew_seq = :seq
      WHERE grp = :ns AND inc = :inc AND member_id = :id
        AND renew_seq < :seq
        AND expires_at_ms > {now}
        AND (epoch IS NULL OR epoch = v_epoch)
    ; SELECT COUNT(*) INTO v_lease FROM {prefix}member
      WHERE grp = :ns AND inc = :inc AND renew_seq = :seq
        AND expires_at_ms > v_now
    ; SELECT 'S' AS kind, CAST(NULL AS CHAR(128)) AS name,
          CAST(v_lease > 0 AS SIGNED) AS a,
          COALESCE((SELECT renew_seq FROM {prefix}member
                    WHERE grp = :ns AND inc = :inc), 0) AS b,
          COALESCE((SELECT expires_at_ms FROM {prefix}member
                    WHERE grp = :ns AND inc = :inc), 0) AS c,
          0 AS won, v_now AS now_ms
      UNION ALL
      SELECT 'M', candidate_id, 0, heartbeat_at_ms, expires_at_ms, 0, v_now
      FROM {prefix}candidate
      WHERE namespace = :ns AND expires_at_ms > v_now
      UNION ALL
      SELECT 'K', mb.member_id, mb.inc, mb.renew_seq, mb.expires_at_ms, 0,
          v_now
      FROM {prefix}member AS mb
      WHERE mb.grp = :ns
        AND (SELECT 1 FROM {prefix}lease AS l
             WHERE l.grp = mb.grp AND l.inc = mb.inc LIMIT 1) = 1
    ; COMMIT
; END;

-- @statement group_leave
-- A member leaving gracefully: every shard this process holds becomes
-- vacant at once (its host stopped their work first), its lease ends and
-- its candidate row goes, so the others take them at their next tick.
BEGIN NOT ATOMIC
    DECLARE v_now BIGINT DEFAULT {now}
    ; DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END
    ; START TRANSACTION
    ; UPDATE {prefix}lease
      SET leader_id = NULL, inc = NULL, resign_requested = 0,
          expires_at_ms = v_now
      WHERE grp = :ns AND inc = :inc AND leader_id = :id
    ; UPDATE {prefix}member
      SET expires_at_ms = v_now
      WHERE grp = :ns AND inc = :inc AND expires_at_ms > v_now
    ; DELETE FROM {prefix}candidate
      WHERE namespace = :ns AND candidate_id = :id
    ; COMMIT
; END;

-- @statement group_shards
-- Every shard of group :ns as the database holds it now, for status: a
-- shard held under its member's lease expires with that lease.
-- Result: shard, leader_id, term, expires_at_ms, now_ms.
SELECT l.shard, l.leader_id, l.term,
    CASE WHEN l.expires_at_ms = {by_member}
         THEN COALESCE(mb.expires_at_ms, 0) ELSE l.expires_at_ms END,
    {now}
FROM {prefix}lease AS l
LEFT JOIN {prefix}member AS mb ON mb.grp = l.grp AND mb.inc = l.inc
WHERE l.grp = :ns
ORDER BY l.shard;
