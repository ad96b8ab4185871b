-- SPDX-License-Identifier: MIT
-- generic.sql: odbc-leader fallback dialect in portable SQL, for a database
-- that has no dialect of its own. It has no @dbms, so LeaderDialect=auto
-- never picks it: copy it, edit the one "@define now" line for your
-- database and point LeaderDialect at the copy.
-- The format of this file is described in docs/dialects.md
-- (installed as /usr/share/doc/odbc-leader/dialects.md).
-- That page also gives the contract of every operation and how to
-- validate a copy against a real database.
--
-- Portable means: no upsert (ON CONFLICT, ON DUPLICATE KEY, MERGE), no
-- RETURNING, no data-modifying CTE, no SELECT without FROM (the one-row
-- {prefix}schema table stands in for DUAL), no vendor function outside
-- {now}, no row counts: the engine cannot branch on them, so every
-- "insert if missing" is INSERT ... SELECT ... WHERE NOT EXISTS after the
-- UPDATE that would have changed the row.
-- Tested unchanged apart from {now} on PostgreSQL 15 (psqlODBC 13),
-- MariaDB 10.11 (Connector/ODBC 3.1) and SQLite 3.40 (sqliteodbc).
--
-- Transactions: attempt, renew and resign have several statements, so the
-- engine runs each inside one ODBC transaction (autocommit off, then
-- SQLEndTran); there is no @begin because BEGIN differs between databases.
-- The first statement of each is an UPDATE of the lease row. SQLite
-- takes its write lock at the first write of a transaction, before
-- reading anything, so the driver's deferred transaction never has to
-- upgrade a read lock; InnoDB keeps the row lock of that UPDATE even
-- when no row matches, which serialises the transactions of a namespace
-- once its row exists. Through sqliteodbc, set the busy timeout with
-- Timeout=<ms> in the connection string (the default is 100 s): this
-- file has no on_connect.
--
-- The mark: attempt must say whether it took the lease and renew whether
-- it extended it, without RETURNING or changes(). The statement that takes
-- or extends the lease stores renewed_at_ms negated (-now); the final
-- SELECT reports success when the row carries our id (and term) and a
-- negative renewed_at_ms. Each attempt and renew first turns our own old
-- mark positive again, so a mark it sees was written by itself: marks are
-- only written for rows holding our id, our transactions run one after
-- another, and from our takeover or renew until our commit the row is
-- locked (SQLite: the whole database). A predicate on the row alone
-- cannot do this -- a row our id took in an earlier attempt looks the same
-- as one taken now -- and comparing times breaks when the clock steps
-- back. So a negative renewed_at_ms means "extended by the holder's last
-- attempt or renew"; its absolute value is the time. Nothing else reads
-- renewed_at_ms, and the shipped dialects only ever write it positive, so
-- they can share the tables with this one. It relies on ids being unique
-- among running candidates (the default random UUID is): two processes
-- given the same LeaderId could both read the mark as their own.
--
-- Error codes: the union of what psqlODBC, MariaDB Connector/ODBC and
-- sqliteodbc report (measured on Debian 12): unique violation 23505 /
-- 23000 native 1062 / HY000 native 19 (sqliteodbc says HY000 for every
-- error; SQL Server and Oracle also say 23000); deadlock and
-- serialization 40001 40P01; lock timeout 55P03 / HY000 native 1205 /
-- SQLite busy and locked, HY000 native 5 and 6; statement timeout 57014 /
-- HY018 native 1969 (max_statement_time); connection lost 08* (MariaDB
-- 08S01, psqlODBC 08S01 after 57P01); undefined table 42P01 / 42S02 /
-- HY000 native 1 (SQLite's generic error code, so a syntax error there
-- counts as a missing table too).

-- @dialect generic
-- @define by_member 9223372036854775807
-- @schema-version 7
-- @unique-violation 23505 23000 HY000:19
-- @transient 40001 40P01 55P03 57014 HY018:1969 HY000:1205 HY000:5 HY000:6
-- @connection-lost 08* 57P01 57P02 57P03
-- @undefined-table 42P01 42S02 HY000:1

-- The database clock as epoch milliseconds (a BIGINT), UTC, with at least
-- millisecond resolution. It is pasted wherever {now} stands, also as an
-- operand of + and -, so keep it a single term (a call or parentheses).
-- Replace the placeholder on the "@define now" line with one of these:
--   PostgreSQL (tested; CockroachDB should take the same):
--     CAST(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000) AS BIGINT)
--   MariaDB 10.3+ / MySQL 8 (tested on MariaDB; time-zone independent):
--     (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)
--   SQLite (tested; the clock of the process running the statement):
--     CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)
--   SQL Server 2016+ (UNTESTED):
--     DATEDIFF_BIG(MILLISECOND, CAST('1970-01-01' AS DATETIME2), SYSUTCDATETIME())
--   Oracle (UNTESTED; the four parts must come from one reading of the clock):
--     (EXTRACT(DAY FROM (SYS_EXTRACT_UTC(SYSTIMESTAMP) - TIMESTAMP '1970-01-01 00:00:00')) * 86400000 + EXTRACT(HOUR FROM (SYS_EXTRACT_UTC(SYSTIMESTAMP) - TIMESTAMP '1970-01-01 00:00:00')) * 3600000 + EXTRACT(MINUTE FROM (SYS_EXTRACT_UTC(SYSTIMESTAMP) - TIMESTAMP '1970-01-01 00:00:00')) * 60000 + FLOOR(EXTRACT(SECOND FROM (SYS_EXTRACT_UTC(SYSTIMESTAMP) - TIMESTAMP '1970-01-01 00:00:00')) * 1000))
--   Db2 LUW (UNTESTED):
--     ((DAYS(CURRENT TIMESTAMP - CURRENT TIMEZONE) - DAYS('1970-01-01')) * BIGINT(86400000) + MIDNIGHT_SECONDS(CURRENT TIMESTAMP - CURRENT TIMEZONE) * BIGINT(1000) + MICROSECOND(CURRENT TIMESTAMP) / 1000)
-- Until it is replaced, preparing attempt fails with an error naming the
-- placeholder.
-- @define now edit_the_now_line_of_generic_sql
-- The numbers 0 to 15, a table without a table of numbers: four of them
-- make a group's shard numbers, 0 to 65,535 (group_init). Each comes from
-- an aggregate, one row that a planner knows to be one row (PostgreSQL
-- guesses thousands for the never-analyzed {prefix}schema, and JIT-
-- compiled the cross join of four for 400 ms, past the statement timeout).
-- @define hex (SELECT 0 AS d FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 1 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 2 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 3 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 4 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 5 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 6 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 7 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 8 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 9 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 10 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 11 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 12 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 13 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 14 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z UNION ALL SELECT 15 FROM (SELECT COUNT(*) AS n FROM {prefix}schema) z)

-- @statement ddl
-- Plain CREATE TABLE (IF NOT EXISTS is not portable): the engine runs this
-- only when {prefix}schema is missing or empty. Oracle wants NUMBER(19)
-- for BIGINT and VARCHAR2 for VARCHAR. The schema table comes last: where
-- DDL is not transactional, a creation that stops halfway leaves it
-- missing, and the next start reports which table is in the way.
CREATE TABLE {prefix}lease (
    namespace VARCHAR(128) NOT NULL PRIMARY KEY,
    leader_id VARCHAR(128),
    term BIGINT NOT NULL,
    elected_at_ms BIGINT,
    -- negative: the mark described above
    renewed_at_ms BIGINT,
    expires_at_ms BIGINT NOT NULL,
    -- request_resign sets both (renew reports them), attempt resets both
    resign_requested INTEGER DEFAULT 0 NOT NULL,
    handoff_to VARCHAR(128)
);
CREATE TABLE {prefix}candidate (
    namespace VARCHAR(128) NOT NULL,
    candidate_id VARCHAR(128) NOT NULL,
    registered_at_ms BIGINT NOT NULL,
    heartbeat_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    PRIMARY KEY (namespace, candidate_id)
);
CREATE TABLE {prefix}schema (
    version INTEGER NOT NULL
);
-- These are the version-1 tables; the engine then runs upgrade, so a new
-- database takes the same path as an upgraded one.
INSERT INTO {prefix}schema (version) VALUES (1);

-- @statement upgrade
-- Each "@step N" takes the tables from version N - 1 to N: the engine runs
-- a step only on tables of a version below N, all the steps due in one
-- transaction. Where DDL is not transactional and two candidates upgrade
-- at once, one CREATE or ALTER fails; the engine then reads the version
-- the other one wrote.
-- @step 2
-- Version 1 to 2: the fire ledger.
CREATE TABLE {prefix}fire (
    namespace VARCHAR(128) NOT NULL,
    job VARCHAR(128) NOT NULL,
    fire_ms BIGINT NOT NULL,
    term BIGINT NOT NULL,
    claimed_by VARCHAR(128) NOT NULL,
    claimed_at_ms BIGINT NOT NULL,
    finished_at_ms BIGINT,
    status INTEGER,
    PRIMARY KEY (namespace, job, fire_ms)
);
UPDATE {prefix}schema SET version = 2 WHERE version = 1;
-- @step 3
-- Version 2 to 3: sharded groups (docs/protocol.md, "Groups"). A group's
-- shards are lease rows named GROUP/SHARD with grp and shard set; inc is
-- the holder process's incarnation and renew_seq the number of the
-- holder's tick that last renewed or took the row. Single leases leave
-- the four NULL (a unique index where NULLs count as equal, as on SQL
-- Server, needs a filtered index instead: WHERE grp IS NOT NULL).
ALTER TABLE {prefix}lease ADD COLUMN grp VARCHAR(128);
ALTER TABLE {prefix}lease ADD COLUMN shard INTEGER;
ALTER TABLE {prefix}lease ADD COLUMN inc BIGINT;
ALTER TABLE {prefix}lease ADD COLUMN renew_seq BIGINT;
CREATE UNIQUE INDEX {prefix}lease_grp_shard ON {prefix}lease (grp, shard);
CREATE INDEX {prefix}lease_grp_inc ON {prefix}lease (grp, inc);
UPDATE {prefix}schema SET version = 3 WHERE version = 2;
-- @step 4
-- Version 3 to 4: the election log, one row per term of a namespace (not
-- of a group's shards): attempt writes the winner's row in the
-- transaction that wins, resign and the next takeover end it
-- (docs/protocol.md, "The election log").
CREATE TABLE {prefix}election (
    namespace VARCHAR(128) NOT NULL,
    term BIGINT NOT NULL,
    leader_id VARCHAR(128) NOT NULL,
    started_at_ms BIGINT NOT NULL,
    ended_at_ms BIGINT,
    ended_how VARCHAR(16),
    handed_to VARCHAR(128),
    PRIMARY KEY (namespace, term)
);
UPDATE {prefix}schema SET version = 4 WHERE version = 3;
-- @step 5
-- Version 4 to 5: the fire lifecycle (docs/lifecycle.md): a fire's state,
-- its attempt and how many attempts its job allows (1: at most once), and
-- the jobs an operator paused. Rows of version 4 get the state their
-- columns tell.
ALTER TABLE {prefix}fire ADD COLUMN state VARCHAR(16) DEFAULT 'running'
    NOT NULL;
ALTER TABLE {prefix}fire ADD COLUMN attempt INTEGER DEFAULT 1 NOT NULL;
ALTER TABLE {prefix}fire ADD COLUMN max_attempts INTEGER DEFAULT 1 NOT NULL;
UPDATE {prefix}fire
SET state = CASE WHEN status = 0 THEN 'done' ELSE 'failed' END
WHERE finished_at_ms IS NOT NULL;
CREATE INDEX {prefix}fire_state ON {prefix}fire (namespace, state);
CREATE TABLE {prefix}job (
    namespace VARCHAR(128) NOT NULL,
    job VARCHAR(128) NOT NULL,
    paused INTEGER NOT NULL,
    changed_at_ms BIGINT NOT NULL,
    changed_by VARCHAR(128) NOT NULL,
    PRIMARY KEY (namespace, job)
);
UPDATE {prefix}schema SET version = 5 WHERE version = 4;

-- @step 6
-- Version 5 to 6: schedule identities (docs/schedules.md): how a job's fires
-- are computed (expression, time zone, engine), recorded at its first
-- claim or by an operator's reschedule, and the claims refused since
-- because another host computes them otherwise.
ALTER TABLE {prefix}job ADD COLUMN schedule VARCHAR(512) NULL;
ALTER TABLE {prefix}job ADD COLUMN schedule_at_ms BIGINT NULL;
ALTER TABLE {prefix}job ADD COLUMN schedule_by VARCHAR(128) NULL;
ALTER TABLE {prefix}job ADD COLUMN refusals BIGINT DEFAULT 0 NOT NULL;
ALTER TABLE {prefix}job ADD COLUMN refused VARCHAR(512) NULL;
ALTER TABLE {prefix}job ADD COLUMN refused_at_ms BIGINT NULL;
ALTER TABLE {prefix}job ADD COLUMN refused_by VARCHAR(128) NULL;
UPDATE {prefix}schema SET version = 6 WHERE version = 5;

-- @step 7
-- Version 6 to 7: shards held under their member's lease
-- (docs/protocol.md, "Shards held under the member's lease"). One row per
-- member incarnation: its lease in database time and its renewal counter
-- (never lowered); an expiry of 0 marks a lease a taker ended for good. A
-- shard row a member of this version takes says so with the expiry
-- {by_member}: it holds while its holder's lease does, and is written
-- again only when it moves. Members of version 6 still running go on
-- renewing their own rows; they never take a row of {by_member} (never
-- expired to them).
CREATE TABLE {prefix}member (
    grp VARCHAR(128) NOT NULL,
    inc BIGINT NOT NULL,
    member_id VARCHAR(128) NOT NULL,
    started_at_ms BIGINT NOT NULL,
    renewed_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    renew_seq BIGINT NOT NULL,
    PRIMARY KEY (grp, inc)
);
UPDATE {prefix}schema SET version = 7 WHERE version = 6;

-- @statement schema_version
SELECT MAX(version) FROM {prefix}schema;

-- @statement attempt
-- 1. Clear our own old mark (and take the write lock, see above).
UPDATE {prefix}lease
SET renewed_at_ms = -renewed_at_ms
WHERE namespace = :ns AND leader_id = :id AND renewed_at_ms < 0;
-- 2. Take the lease when it was released (vacant and not reserved for
-- another candidate, or reserved for us, or reserved for another whose
-- reservation ran out), or when it expired AND it is exactly the row the
-- caller has watched for one TTL on its own clock (:seen_term,
-- :seen_expires_ms; 0 when it has not: matches no row), so that a forward
-- step of the database clock cannot hand over a held lease early
-- (docs/protocol.md, "Takeover: the watch"). Never an unexpired held
-- lease (even our own). On PostgreSQL a concurrent taker waits for this
-- row lock and then re-checks the WHERE clause against the committed row.
UPDATE {prefix}lease
SET leader_id = :id,
    term = term + 1,
    elected_at_ms = {now},
    renewed_at_ms = -({now}),
    expires_at_ms = {now} + :ttl_ms,
    resign_requested = 0,
    handoff_to = NULL
WHERE namespace = :ns
  AND ((leader_id IS NULL
        AND (handoff_to IS NULL
             OR handoff_to = :id
             OR (handoff_to <> '' AND expires_at_ms <= {now})))
       OR (expires_at_ms <= {now}
           AND term = :seen_term
           AND expires_at_ms = :seen_expires_ms));
-- 2a. The election log: when step 2 took the lease (our mark is on the
-- row), the open entries of earlier terms end as expired, the watched
-- term at its expiry (:seen_expires_ms), any other now. Without the mark
-- the subquery is empty (NULL) and no entry matches. Before step 3: a
-- namespace's first row ends no entry.
UPDATE {prefix}election
SET ended_at_ms = CASE WHEN term = :seen_term THEN :seen_expires_ms
                       ELSE {now} END,
    ended_how = 'expired'
WHERE namespace = :ns
  AND ended_at_ms IS NULL
  AND term < (SELECT l.term FROM {prefix}lease l
              WHERE l.namespace = :ns AND l.leader_id = :id
                AND l.renewed_at_ms < 0);
-- 3. The namespace's first row. Two candidates doing this at once collide
-- on the primary key; the loser gets a unique violation, and the engine
-- rolls back, retries once, then reads the lease. Its term is the clock
-- in ms, so a namespace whose row was deleted (or a new table prefix)
-- starts above every term it had before (docs/protocol.md).
INSERT INTO {prefix}lease (namespace, leader_id, term, elected_at_ms,
    renewed_at_ms, expires_at_ms, resign_requested, handoff_to)
SELECT :ns, :id, {now}, {now}, -({now}), {now} + :ttl_ms, 0, NULL
FROM {prefix}schema
WHERE NOT EXISTS (SELECT 1 FROM {prefix}lease WHERE namespace = :ns);
-- 3a. A won term (step 2 or 3: our mark is on the row) opens its entry,
-- with the lease row's term and elected_at_ms: an entry of that term left
-- from before (a term number may come back after the lease row was
-- deleted) is overwritten, else one is inserted. Nothing when we lost.
UPDATE {prefix}election
SET leader_id = :id,
    started_at_ms = (SELECT l.elected_at_ms FROM {prefix}lease l
                     WHERE l.namespace = :ns AND l.leader_id = :id
                       AND l.renewed_at_ms < 0),
    ended_at_ms = NULL,
    ended_how = NULL,
    handed_to = NULL
WHERE namespace = :ns
  AND term = (SELECT l.term FROM {prefix}lease l
              WHERE l.namespace = :ns AND l.leader_id = :id
                AND l.renewed_at_ms < 0);
INSERT INTO {prefix}election (namespace, term, leader_id, started_at_ms,
    ended_at_ms, ended_how, handed_to)
SELECT l.namespace, l.term, l.leader_id, l.elected_at_ms, NULL, NULL, NULL
FROM {prefix}lease l
WHERE l.namespace = :ns AND l.leader_id = :id AND l.renewed_at_ms < 0
  AND NOT EXISTS (SELECT 1 FROM {prefix}election e
                  WHERE e.namespace = :ns AND e.term = l.term);
-- 4. Heartbeat: update our candidate row, create it when missing.
UPDATE {prefix}candidate
SET heartbeat_at_ms = {now},
    expires_at_ms = {now} + :cand_ttl_ms
WHERE namespace = :ns AND candidate_id = :id;
INSERT INTO {prefix}candidate (namespace, candidate_id, registered_at_ms,
    heartbeat_at_ms, expires_at_ms)
SELECT :ns, :id, {now}, {now}, {now} + :cand_ttl_ms
FROM {prefix}schema
WHERE NOT EXISTS (SELECT 1 FROM {prefix}candidate
                  WHERE namespace = :ns AND candidate_id = :id);
-- 5. Result: leader_id, term, expires_at_ms, now_ms, won.
SELECT leader_id, term, expires_at_ms, {now},
    CASE WHEN leader_id = :id AND renewed_at_ms < 0 THEN 1 ELSE 0 END
FROM {prefix}lease
WHERE namespace = :ns;

-- @statement renew
-- 1. Clear our own old mark (and take the write lock).
UPDATE {prefix}lease
SET renewed_at_ms = -renewed_at_ms
WHERE namespace = :ns AND leader_id = :id AND renewed_at_ms < 0;
-- 2. Extend only the exact holder and term, only while unexpired.
UPDATE {prefix}lease
SET renewed_at_ms = -({now}),
    expires_at_ms = {now} + :ttl_ms
WHERE namespace = :ns AND leader_id = :id AND term = :term
  AND expires_at_ms > {now};
-- 3. Heartbeat, and delete the candidate rows that expired more than one
-- candidate TTL ago (crashed processes with random ids would pile up).
UPDATE {prefix}candidate
SET heartbeat_at_ms = {now},
    expires_at_ms = {now} + :cand_ttl_ms
WHERE namespace = :ns AND candidate_id = :id;
INSERT INTO {prefix}candidate (namespace, candidate_id, registered_at_ms,
    heartbeat_at_ms, expires_at_ms)
SELECT :ns, :id, {now}, {now}, {now} + :cand_ttl_ms
FROM {prefix}schema
WHERE NOT EXISTS (SELECT 1 FROM {prefix}candidate
                  WHERE namespace = :ns AND candidate_id = :id);
DELETE FROM {prefix}candidate
WHERE namespace = :ns AND candidate_id <> :id
  AND expires_at_ms < {now} - :cand_ttl_ms;
-- 4. Result: the row only when step 2 extended it (no row = lease lost):
-- leader_id, term, expires_at_ms, now_ms, resign_requested, handoff_to,
-- no wake-up lock (NULL), and the count of fires offered to the leader
-- (run-now and recoverable interrupted ones).
SELECT leader_id, term, expires_at_ms, {now}, resign_requested, handoff_to,
    NULL,
    (SELECT COUNT(*) FROM {prefix}fire
     WHERE {prefix}fire.namespace = :ns AND {prefix}fire.state = 'pending')
    + (SELECT COUNT(*) FROM {prefix}fire
       WHERE {prefix}fire.namespace = :ns
         AND {prefix}fire.state = 'interrupted'
         AND {prefix}fire.attempt < {prefix}fire.max_attempts)
FROM {prefix}lease
WHERE namespace = :ns AND leader_id = :id AND term = :term
  AND renewed_at_ms < 0;

-- @statement resign
-- Only the exact term: the row and its term stay, the lease is vacant.
-- After a request with a handoff target the lease stays reserved for
-- that candidate for one TTL, then it is open to anyone.
-- 1. Lock the lease row while we hold it, before anything reads it (on
-- InnoDB step 2's subqueries take a shared lock, and upgrading that in
-- step 3 while a follower's attempt waits for the row would deadlock;
-- SQLite takes its write lock here). It only clears our mark, which step
-- 3 does too.
UPDATE {prefix}lease
SET renewed_at_ms = ABS(renewed_at_ms)
WHERE namespace = :ns AND leader_id = :id AND term = :term;
-- 2. End the term's entry in the election log, by how the lease row says
-- it was asked (read before step 3 resets the request).
UPDATE {prefix}election
SET ended_at_ms = {now},
    ended_how = (SELECT CASE WHEN l.handoff_to IS NOT NULL
                                  AND l.handoff_to <> '' THEN 'handover'
                             WHEN l.resign_requested <> 0 THEN 'requested'
                             ELSE 'resigned' END
                 FROM {prefix}lease l
                 WHERE l.namespace = :ns),
    handed_to = (SELECT NULLIF(l.handoff_to, '')
                 FROM {prefix}lease l
                 WHERE l.namespace = :ns)
WHERE namespace = :ns
  AND term = :term
  AND ended_at_ms IS NULL
  AND EXISTS (SELECT 1 FROM {prefix}lease l
              WHERE l.namespace = :ns AND l.leader_id = :id
                AND l.term = :term);
-- 3. Vacate the lease; stays last: its row count is the result.
UPDATE {prefix}lease
SET leader_id = NULL,
    renewed_at_ms = ABS(renewed_at_ms),
    resign_requested = 0,
    expires_at_ms = CASE WHEN handoff_to IS NULL THEN {now}
                         ELSE {now} + :ttl_ms END
WHERE namespace = :ns AND leader_id = :id AND term = :term;

-- @statement unregister
DELETE FROM {prefix}candidate
WHERE namespace = :ns AND candidate_id = :id;

-- @statement leader
-- A shard held under its member's lease (schema 7) expires with the
-- lease.
SELECT leader_id, term,
    CASE WHEN expires_at_ms = {by_member}
         THEN COALESCE((SELECT {prefix}member.expires_at_ms
                        FROM {prefix}member
                        WHERE {prefix}member.grp = {prefix}lease.grp
                          AND {prefix}member.inc = {prefix}lease.inc), 0)
         ELSE expires_at_ms END,
    {now}
FROM {prefix}lease
WHERE namespace = :ns;

-- @statement candidates
SELECT candidate_id, heartbeat_at_ms, expires_at_ms, {now}
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

-- @statement claim
-- Records fire :fire_ms of :job for our term only while, at this
-- statement's clock, we hold the namespace's current, unexpired term (the
-- lease row is read in the same statement); only for a fire not older
-- than the retention (0, a one-off key, never is); and only while no
-- operator paused the job. No row inserted = not leader, too old or
-- paused (the engine reads the lease to tell which). A second claim of a
-- fire fails on the primary key, a unique violation: "already claimed",
-- or a fire offered again (the engine runs take). "term - term" is a
-- BIGINT zero: PostgreSQL types an untyped parameter by what it is
-- compared with, and ":fire_ms = 0" would make it a 32-bit INTEGER (no
-- CAST: MariaDB has no CAST AS BIGINT).
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT namespace, :job, :fire_ms, term, leader_id, {now}, NULL, NULL,
    'running', 1, :max_attempts
FROM {prefix}lease
WHERE namespace = :ns
  AND leader_id = :id
  AND term = :term
  AND expires_at_ms > {now}
  AND ({prefix}lease.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member
                   WHERE {prefix}member.grp = {prefix}lease.grp
                     AND {prefix}member.inc = {prefix}lease.inc
                     AND {prefix}member.expires_at_ms > {now}))
  AND (:fire_ms >= {now} - :retention_ms OR :fire_ms = term - term)
  AND NOT EXISTS (SELECT 1 FROM {prefix}job
                  WHERE {prefix}job.namespace = :ns
                    AND {prefix}job.job = :job
                    AND {prefix}job.paused <> 0);

-- @statement take
-- Claims a fire that is offered (docs/lifecycle.md): a run-now
-- (pending), or an attempt whose term ended without an outcome while its
-- job allows another (interrupted, or still running in an earlier term:
-- a term ends only when its lease expired or was released, so that
-- attempt can no longer act). The fire becomes attempt + 1, running in
-- our term, while we hold it unexpired and the job is not paused. One
-- row changed = taken. state, which the first assignment reads, comes
-- last (MySQL and MariaDB assign left to right, each seeing the ones
-- before).
UPDATE {prefix}fire
SET max_attempts = CASE WHEN state = 'pending' THEN :max_attempts
                        ELSE max_attempts END,
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
  AND EXISTS (SELECT 1 FROM {prefix}lease
              WHERE {prefix}lease.namespace = :ns
                AND {prefix}lease.leader_id = :id
                AND {prefix}lease.term = :term
                AND {prefix}lease.expires_at_ms > {now}
                AND ({prefix}lease.expires_at_ms < {by_member}
                     OR EXISTS (SELECT 1 FROM {prefix}member
                                 WHERE {prefix}member.grp = {prefix}lease.grp
                                   AND {prefix}member.inc = {prefix}lease.inc
                                   AND {prefix}member.expires_at_ms > {now})))
  AND NOT EXISTS (SELECT 1 FROM {prefix}job
                  WHERE {prefix}job.namespace = :ns
                    AND {prefix}job.job = :job
                    AND {prefix}job.paused <> 0);

-- @statement skip
-- Records that fire :fire_ms of paused :job was due and not run, while we
-- lead: it stays skipped after a resume. A fire already recorded keeps
-- its row.
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT namespace, :job, :fire_ms, term, leader_id, {now}, {now}, NULL,
    'skipped', 0, :max_attempts
FROM {prefix}lease
WHERE namespace = :ns
  AND leader_id = :id
  AND term = :term
  AND expires_at_ms > {now}
  AND ({prefix}lease.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member
                   WHERE {prefix}member.grp = {prefix}lease.grp
                     AND {prefix}member.inc = {prefix}lease.inc
                     AND {prefix}member.expires_at_ms > {now}))
  AND NOT EXISTS (SELECT 1 FROM {prefix}fire
                  WHERE {prefix}fire.namespace = :ns
                    AND {prefix}fire.job = :job
                    AND {prefix}fire.fire_ms = :fire_ms);

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
    state = CASE WHEN :status = 0 THEN 'done' ELSE 'failed' END
WHERE namespace = :ns AND job = :job AND fire_ms = :fire_ms
  AND claimed_by = :id
  AND (:term = term - term OR term = :term)
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
    state = CASE WHEN max_attempts > 1 AND attempt >= max_attempts
                 THEN 'abandoned' ELSE 'interrupted' END
WHERE namespace = :ns
  AND state = 'running'
  AND term < :term
  AND EXISTS (SELECT 1 FROM {prefix}lease
              WHERE {prefix}lease.namespace = :ns
                AND {prefix}lease.leader_id = :id
                AND {prefix}lease.term = :term
                AND {prefix}lease.expires_at_ms > {now}
                AND ({prefix}lease.expires_at_ms < {by_member}
                     OR EXISTS (SELECT 1 FROM {prefix}member
                                 WHERE {prefix}member.grp = {prefix}lease.grp
                                   AND {prefix}member.inc = {prefix}lease.inc
                                   AND {prefix}member.expires_at_ms > {now})));

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
-- An operator pauses (:paused 1) or resumes (0) :job on every host: the
-- UPDATE, then the row when it is missing, in one transaction (a second
-- operator's row at the same moment is a unique violation, which the
-- engine tries once more).
UPDATE {prefix}job
SET paused = :paused,
    changed_at_ms = {now},
    changed_by = :id
WHERE namespace = :ns AND job = :job;
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by)
SELECT :ns, :job, :paused, {now}, :id
FROM {prefix}schema
WHERE NOT EXISTS (SELECT 1 FROM {prefix}job
                  WHERE namespace = :ns AND job = :job);

-- @statement trigger
-- An operator asks for one run of :job now: a pending fire offered to the
-- leader, keyed below 0 so that no nominal time can collide with it (the
-- negated database clock, or one below the job's lowest key). Result:
-- the key (the job's lowest, in this transaction).
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT :ns, :job,
    CASE WHEN 0 - {now}
              < COALESCE((SELECT MIN(f.fire_ms) FROM {prefix}fire f
                          WHERE f.namespace = :ns AND f.job = :job), 0) - 1
         THEN 0 - {now}
         ELSE COALESCE((SELECT MIN(f.fire_ms) FROM {prefix}fire f
                        WHERE f.namespace = :ns AND f.job = :job), 0) - 1
    END,
    0, :id, {now}, NULL, NULL, 'pending', 0, 1
FROM {prefix}schema;
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
          0 AS running, 0 AS offered, NULL AS nominal, NULL AS done_at,
          NULL AS bad_at
      FROM {prefix}job
      WHERE namespace = :ns
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
      WHERE namespace = :ns) u
GROUP BY u.job
ORDER BY u.job;

-- @statement schedule
-- A claim of :job computed by schedule :schedule (docs/schedules.md):
-- records it as the job's when the job has none (its first claim), counts
-- a refusal when the job's differs, and returns the job's schedule, since
-- when and by whom; the engine claims only when it equals :schedule. A
-- second host creating the row at the same moment is a unique violation,
-- which the engine tries once more.
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by,
    schedule, schedule_at_ms, schedule_by, refusals)
SELECT :ns, :job, 0, 0, '', :schedule, {now}, :id, 0
FROM {prefix}schema
WHERE NOT EXISTS (SELECT 1 FROM {prefix}job
                  WHERE namespace = :ns AND job = :job);
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
-- the next claim records its own), counting refusals from 0 again: the
-- UPDATE, then the row when it is missing.
UPDATE {prefix}job
SET schedule = :schedule, schedule_at_ms = {now}, schedule_by = :id,
    refusals = 0, refused = NULL, refused_at_ms = NULL, refused_by = NULL
WHERE namespace = :ns AND job = :job;
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by,
    schedule, schedule_at_ms, schedule_by, refusals)
SELECT :ns, :job, 0, 0, '', :schedule, {now}, :id, 0
FROM {prefix}schema
WHERE NOT EXISTS (SELECT 1 FROM {prefix}job
                  WHERE namespace = :ns AND job = :job);

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
  AND ({prefix}lease.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member
                   WHERE {prefix}member.grp = {prefix}lease.grp
                     AND {prefix}member.inc = {prefix}lease.inc
                     AND {prefix}member.expires_at_ms > {now}));

-- @statement elections
-- The election log of the namespace, oldest term first: term, leader_id,
-- started_at_ms, ended_at_ms, ended_how, handed_to, now_ms. A term whose
-- entry is still open but that has ended all the same (a later term
-- began, or its lease expired and nobody took over yet) reads as expired:
-- at the next term's start, or at the lease's expiry.
SELECT e.term, e.leader_id, e.started_at_ms,
    COALESCE(e.ended_at_ms,
             (SELECT n.started_at_ms FROM {prefix}election n
              WHERE n.namespace = e.namespace
                AND n.term = (SELECT MIN(m.term) FROM {prefix}election m
                              WHERE m.namespace = e.namespace
                                AND m.term > e.term)),
             CASE WHEN l.expires_at_ms <= {now} THEN l.expires_at_ms END),
    COALESCE(e.ended_how,
             CASE WHEN EXISTS (SELECT 1 FROM {prefix}election n
                               WHERE n.namespace = e.namespace
                                 AND n.term > e.term)
                    OR l.expires_at_ms <= {now}
                  THEN 'expired' END),
    e.handed_to, {now}
FROM {prefix}election e
    LEFT JOIN {prefix}lease l
        ON l.namespace = e.namespace AND l.term = e.term
WHERE e.namespace = :ns
ORDER BY e.term;

-- @statement election_gc
-- Retention, run by the leader: terms that ended more than
-- :election_retention_ms ago, and entries left open by a term that a
-- later one followed, started that long ago.
DELETE FROM {prefix}election
WHERE namespace = :ns
  AND ((ended_at_ms IS NOT NULL
        AND ended_at_ms < {now} - :election_retention_ms)
       OR (ended_at_ms IS NULL
           AND started_at_ms < {now} - :election_retention_ms
           AND term < (SELECT MAX(n.term) FROM {prefix}election n
                       WHERE n.namespace = :ns)));

-- @statement group_init
-- Creates the rows of group :ns's :shards shards (GROUP/0 ...) when the
-- group has none yet, vacant, with the clock in ms as their term; an
-- existing group keeps its size. The name is built with REPLACE, which
-- every database has, since concatenation is not portable ('#' and '$'
-- cannot occur in a namespace). Two first members at once: one of them
-- fails on the primary key, and the engine runs this again (the rows
-- exist by then). Nothing is created while single handles hold names
-- like the group's shards. Result: the group's rows, and the rows named
-- like a shard that belong to no group.
-- It first removes what members that are gone left behind (group_tick
-- does not, so that a steady tick locks no row of another member): the
-- candidate rows that expired more than one candidate TTL ago, and the
-- member leases that expired more than a day ago and hold no shard.
DELETE FROM {prefix}candidate
WHERE namespace = :ns AND candidate_id <> :id
  AND expires_at_ms < {now} - :cand_ttl_ms;
DELETE FROM {prefix}member
WHERE grp = :ns
  AND expires_at_ms < {now} - 86400000
  AND NOT EXISTS (SELECT 1 FROM {prefix}lease
                  WHERE {prefix}lease.grp = :ns
                    AND {prefix}lease.inc = {prefix}member.inc);
INSERT INTO {prefix}lease (namespace, leader_id, term, elected_at_ms,
    renewed_at_ms, expires_at_ms, resign_requested, handoff_to, grp, shard,
    inc, renew_seq)
SELECT REPLACE(REPLACE('#/$', '#', :ns), '$', CAST(g.s AS CHAR(10))),
    NULL, {now}, NULL, {now}, {now}, 0, NULL, :ns, g.s, NULL, NULL
FROM (SELECT a.d + 16 * b.d + 256 * c.d + 4096 * e.d AS s
      FROM {hex} a, {hex} b, {hex} c, {hex} e) g
WHERE g.s < :shards
  AND NOT EXISTS (SELECT 1 FROM {prefix}lease WHERE grp = :ns)
  AND NOT EXISTS (SELECT 1 FROM {prefix}lease
                  WHERE grp IS NULL
                    AND SUBSTRING(namespace, 1, LENGTH(:ns) + 1)
                        = REPLACE('#/', '#', :ns));
SELECT (SELECT COUNT(*) FROM {prefix}lease WHERE grp = :ns),
    (SELECT COUNT(*) FROM {prefix}lease
     WHERE grp IS NULL
       AND SUBSTRING(namespace, 1, LENGTH(:ns) + 1) = REPLACE('#/', '#', :ns))
FROM {prefix}schema;

-- @statement group_tick
-- A member's tick in one transaction (docs/protocol.md, "Groups" and
-- "Shards held under the member's lease"), with the lists as the engine
-- gives them to a dialect without JSON: :take_mask and :release_mask
-- hold one character per shard, '1' at position shard + 1 for a shard
-- listed; :dead_inc and :dead_seq are one watched-dead holder and the
-- highest renew_seq seen of it (0 and -1 when there is none; the engine
-- offers another one, when there are several, at each tick).
-- A steady tick locks two rows: this member's candidate row and the lease
-- of its incarnation. Rows that other ticks write are only read, at the
-- end, without locks; the group's shard rows are locked only by a tick
-- that takes or releases some (the constant ":take_mask LIKE '%1%'"
-- lets InnoDB, which under REPEATABLE READ locks every row a statement
-- reads, see at once that an empty mask matches no row). So members'
-- ticks do not wait for each other. They used to: the tick began by
-- deleting the candidate rows that expired long ago, which locked every
-- candidate row of the group until the commit, and a member's ten
-- statements then ran one after another behind that lock; under load the
-- ticks of 5 members took 0.7 to 1.9 s instead of 6 to 11 ms and shards
-- went unled for up to 7.7 s. That cleanup now runs in group_init, at
-- each join and reconnection. Ticks that do lock more rows lock them in
-- one order: their own rows, then the watched-dead holder's lease, then
-- the group's shard rows.
-- 1. The heartbeat: update our row, create it when missing.
UPDATE {prefix}candidate
SET heartbeat_at_ms = {now},
    expires_at_ms = {now} + :cand_ttl_ms
WHERE namespace = :ns AND candidate_id = :id;
INSERT INTO {prefix}candidate (namespace, candidate_id, registered_at_ms,
    heartbeat_at_ms, expires_at_ms)
SELECT :ns, :id, {now}, {now}, {now} + :cand_ttl_ms
FROM {prefix}schema
WHERE NOT EXISTS (SELECT 1 FROM {prefix}candidate
                  WHERE namespace = :ns AND candidate_id = :id);
-- 2. The lease of this incarnation (:id, :inc): made when it has no row,
-- renewed while unexpired, never after (renew_seq = :seq afterwards says
-- it holds). group_init removes a row a day after it expired, and only
-- when it holds no shard, so a late statement that makes it again holds
-- only what it then takes.
INSERT INTO {prefix}member (grp, inc, member_id, started_at_ms,
    renewed_at_ms, expires_at_ms, renew_seq)
SELECT :ns, :inc, :id, {now}, {now}, {now} + :ttl_ms, :seq
FROM {prefix}schema
WHERE NOT EXISTS (SELECT 1 FROM {prefix}member
                  WHERE grp = :ns AND inc = :inc);
UPDATE {prefix}member
SET renewed_at_ms = {now},
    expires_at_ms = {now} + :ttl_ms,
    renew_seq = :seq
WHERE grp = :ns
  AND inc = :inc
  AND member_id = :id
  AND renew_seq < :seq
  AND expires_at_ms > {now};
-- 3. The watched-dead holder's lease, when it expired and was not renewed
-- since it was seen: ended for good (expiry 0). This write orders a take
-- from it after the holder's last renewal: a renewal waiting on it finds
-- the lease ended, whatever its own clock says, and a renewal it waits on
-- makes it match nothing.
UPDATE {prefix}member
SET expires_at_ms = 0
WHERE grp = :ns
  AND inc = :dead_inc
  AND inc <> :inc
  AND expires_at_ms <= {now}
  AND expires_at_ms <> 0
  AND renew_seq <= :dead_seq;
-- 4. Only while the lease holds, take the shards of :take_mask that are
-- vacant and reserved for nobody, or held under the watched-dead
-- holder's ended lease (no higher renew_seq than seen), or held by a
-- member of version 6 (its own expiry) that expired unrenewed since it
-- was seen. A take writes {by_member} as the expiry: the shard holds
-- while the lease does.
UPDATE {prefix}lease
SET leader_id = :id,
    renew_seq = :seq,
    inc = :inc,
    term = term + 1,
    elected_at_ms = {now},
    renewed_at_ms = {now},
    expires_at_ms = {by_member},
    resign_requested = 0,
    handoff_to = NULL
WHERE grp = :ns
  AND :take_mask LIKE '%1%'
  AND SUBSTRING(:take_mask, shard + 1, 1) = '1'
  AND EXISTS (SELECT 1 FROM {prefix}member
              WHERE {prefix}member.grp = :ns
                AND {prefix}member.inc = :inc
                AND {prefix}member.renew_seq = :seq
                AND {prefix}member.expires_at_ms > {now})
  AND ((leader_id IS NULL AND inc IS NULL AND handoff_to IS NULL)
       OR (expires_at_ms = {by_member}
           AND inc <> :inc
           AND inc = :dead_inc
           AND EXISTS (SELECT 1 FROM {prefix}member
                       WHERE {prefix}member.grp = :ns
                         AND {prefix}member.inc = :dead_inc
                         AND {prefix}member.expires_at_ms = 0
                         AND {prefix}member.renew_seq <= :dead_seq))
       OR (expires_at_ms <= {now}
           AND inc <> :inc
           AND inc = :dead_inc
           AND renew_seq <= :dead_seq));
-- 5. Release the shards of :release_mask (their host stopped their work
-- first). A row is released only when no later tick of this process
-- took it (renew_seq < :seq) -- the masks carry no terms, and this is
-- what the term in the other dialects' list guards: a late copy of an
-- old tick must not release a term taken after it.
UPDATE {prefix}lease
SET leader_id = NULL,
    inc = NULL,
    resign_requested = 0,
    expires_at_ms = {now}
WHERE grp = :ns
  AND inc = :inc
  AND leader_id = :id
  AND renew_seq < :seq
  AND :release_mask LIKE '%1%'
  AND SUBSTRING(:release_mask, shard + 1, 1) = '1';
-- 6. Result rows, kind first: S renewed(1/0) renew_seq expires_at_ms
-- (this incarnation's lease, one row), L shard term expires_at_ms (held
-- after this tick), M candidate_id heartbeat_at_ms expires_at_ms (live
-- members), H holder_id inc renew_seq count (holders: the lease's
-- counter, or a version-6 holder's highest renew_seq), V shard term
-- expires_at_ms (vacant); now_ms last.
-- L, H and V only when :full = 1; when :full = 0 (a steady tick, which
-- reads no shard row), K member_id inc renew_seq expires_at_ms (the
-- member leases that hold a shard: an index probe each) instead.
SELECT 'S', NULL,
    COUNT(CASE WHEN renew_seq = :seq AND expires_at_ms > {now}
               THEN 1 END),
    COALESCE(MAX(renew_seq), 0), COALESCE(MAX(expires_at_ms), 0), 0, {now}
FROM {prefix}member
WHERE grp = :ns AND inc = :inc
UNION ALL
SELECT 'L', NULL, shard, term, expires_at_ms, 0, {now}
FROM {prefix}lease
WHERE grp = :ns AND inc = :inc AND leader_id = :id AND :full = 1
UNION ALL
SELECT 'M', candidate_id, 0, heartbeat_at_ms, expires_at_ms, 0, {now}
FROM {prefix}candidate
WHERE namespace = :ns
  AND expires_at_ms > {now}
UNION ALL
SELECT 'H', MAX(leader_id), inc,
    COALESCE((SELECT MAX({prefix}member.renew_seq) FROM {prefix}member
              WHERE {prefix}member.grp = :ns
                AND {prefix}member.inc = {prefix}lease.inc),
             MAX(renew_seq)),
    COUNT(*), 0, {now}
FROM {prefix}lease
WHERE grp = :ns AND inc IS NOT NULL AND :full = 1
GROUP BY inc
UNION ALL
SELECT 'V', NULL, shard, term, expires_at_ms, 0, {now}
FROM {prefix}lease
WHERE grp = :ns AND inc IS NULL AND :full = 1
UNION ALL
SELECT 'K', member_id, inc, renew_seq, expires_at_ms, 0, {now}
FROM {prefix}member
WHERE grp = :ns AND :full = 0
  AND EXISTS (SELECT 1 FROM {prefix}lease
              WHERE {prefix}lease.grp = :ns
                AND {prefix}lease.inc = {prefix}member.inc);

-- @statement group_leave
-- A member leaving gracefully: its candidate row goes, its lease ends and
-- every shard this process holds becomes vacant at once (its host stopped
-- their work first), so the others take them at their next tick.
-- Candidate rows first, as in group_tick, then the lease.
DELETE FROM {prefix}candidate
WHERE namespace = :ns
  AND candidate_id = :id;
UPDATE {prefix}member
SET expires_at_ms = {now}
WHERE grp = :ns
  AND inc = :inc
  AND expires_at_ms > {now};
UPDATE {prefix}lease
SET leader_id = NULL,
    inc = NULL,
    resign_requested = 0,
    expires_at_ms = {now}
WHERE grp = :ns
  AND inc = :inc
  AND leader_id = :id;

-- @statement group_shards
-- Every shard of group :ns as the database holds it now, for status: a
-- shard held under its member's lease expires with that lease.
-- Result: shard, leader_id, term, expires_at_ms, now_ms.
SELECT shard, leader_id, term,
    CASE WHEN expires_at_ms = {by_member}
         THEN COALESCE((SELECT {prefix}member.expires_at_ms
                        FROM {prefix}member
                        WHERE {prefix}member.grp = {prefix}lease.grp
                          AND {prefix}member.inc = {prefix}lease.inc), 0)
         ELSE expires_at_ms END,
    {now}
FROM {prefix}lease
WHERE grp = :ns
ORDER BY shard;
