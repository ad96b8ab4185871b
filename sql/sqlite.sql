-- SPDX-License-Identifier: MIT
-- sqlite.sql: odbc-leader dialect for SQLite 3 through Christian Werner's
-- sqliteodbc (driver "SQLite3"; tested with SQLite 3.40).
--
-- The format of this file is described in docs/dialects.md
-- (installed as /usr/share/doc/odbc-leader/dialects.md).
--
-- SQLite has no server: "now" is the clock of the process running the
-- statement, (julianday('now') - 2440587.5) * 86400000, which is constant
-- within one statement. Transactions are BEGIN IMMEDIATE (write lock up
-- front, so no SQLITE_BUSY on a read-to-write upgrade). sqliteodbc drops
-- the rows of INSERT/UPDATE ... RETURNING, so each multi-statement
-- operation ends with a SELECT; changes() there counts the rows the
-- previous statement changed.
-- sqliteodbc reports every error as SQLSTATE HY000 with the SQLite result
-- code as native code (measured): 19 constraint (UNIQUE and NOT NULL
-- alike), 5 busy, 6 locked, and 1 for "no such table" -- but 1 is
-- SQLite's generic error, so a syntax error is classified as an undefined
-- table too. 23000 and 23505 are listed in case a driver version maps
-- SQLSTATEs.

-- @dialect sqlite
-- @define now CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)
-- @define by_member 9223372036854775807
-- @dbms SQLite
-- @schema-version 7
-- sqliteodbc waits on a busy file twice: SQLite's busy handler
-- (busy_timeout) and then the driver's own retry loop, bounded by its
-- Timeout key (default 100000 ms, which used to make a tick block for up
-- to minutes while another process held a read transaction). Measured:
-- with both set to half the statement timeout a blocked BEGIN IMMEDIATE
-- or COMMIT gives up after about the statement timeout (+10 ms).
-- @connect-keys Timeout={timeout_half_ms}
-- Followers wait for the leader to let go through a lock file beside the
-- database file (DATABASE-odbc-leader-wake; SQLite means one host), so a
-- resignation hands over in milliseconds, as the server dialects' wake-up
-- locks do.
-- @wake-file
-- @begin BEGIN IMMEDIATE
-- @commit COMMIT
-- @rollback ROLLBACK
-- @unique-violation HY000:19 23000 23505
-- @transient HY000:5 HY000:6
-- @undefined-table HY000:1

-- @statement on_connect
PRAGMA busy_timeout = {timeout_half_ms};

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
-- Each "@step N" takes the tables from version N - 1 to N: the engine runs
-- a step only on tables of a version below N, all the steps due in one
-- BEGIN IMMEDIATE transaction. SQLite cannot add a column only when it is
-- missing: a second upgrader fails, rolls back, and the engine reads the
-- version it finds.
-- @step 2
-- Version 2: the fire ledger.
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
UPDATE {prefix}schema SET version = 2 WHERE version < 2;
-- @step 3
-- Version 3: sharded groups (docs/protocol.md, "Groups"): a group's
-- shards are lease rows named GROUP/SHARD with grp and shard set, inc is
-- the holder process's incarnation and renew_seq the number of the
-- holder's tick that last renewed or took the row.
ALTER TABLE {prefix}lease ADD COLUMN grp VARCHAR(128) NULL;
ALTER TABLE {prefix}lease ADD COLUMN shard INTEGER NULL;
ALTER TABLE {prefix}lease ADD COLUMN inc BIGINT NULL;
ALTER TABLE {prefix}lease ADD COLUMN renew_seq BIGINT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS {prefix}lease_grp_shard
    ON {prefix}lease (grp, shard);
CREATE INDEX IF NOT EXISTS {prefix}lease_grp_inc ON {prefix}lease (grp, inc);
UPDATE {prefix}schema SET version = 3 WHERE version < 3;
-- @step 4
-- Version 4: the election log, one row per term of a namespace (not of a
-- group's shards): attempt writes the winner's row in the transaction
-- that wins, resign and the next takeover end it (docs/protocol.md,
-- "The election log").
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
UPDATE {prefix}schema SET version = 4 WHERE version < 4;
-- @step 5
-- Version 5: the fire lifecycle (docs/lifecycle.md): a fire's state, its
-- attempt and how many attempts its job allows (1: at most once), and
-- the jobs an operator paused. Rows of version 4 get the state their
-- columns tell.
ALTER TABLE {prefix}fire ADD COLUMN state VARCHAR(16) NOT NULL
    DEFAULT 'running';
ALTER TABLE {prefix}fire ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
ALTER TABLE {prefix}fire ADD COLUMN max_attempts INTEGER NOT NULL
    DEFAULT 1;
UPDATE {prefix}fire
SET state = CASE WHEN status = 0 THEN 'done' ELSE 'failed' END
WHERE finished_at_ms IS NOT NULL;
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
UPDATE {prefix}schema SET version = 5 WHERE version < 5;

-- @step 6
-- Version 6: schedule identities (docs/schedules.md): how a job's fires
-- are computed (expression, time zone, engine), recorded at its first
-- claim or by an operator's reschedule, and the claims refused since
-- because another host computes them otherwise.
ALTER TABLE {prefix}job ADD COLUMN schedule VARCHAR(512) NULL;
ALTER TABLE {prefix}job ADD COLUMN schedule_at_ms BIGINT NULL;
ALTER TABLE {prefix}job ADD COLUMN schedule_by VARCHAR(128) NULL;
ALTER TABLE {prefix}job ADD COLUMN refusals BIGINT NOT NULL DEFAULT 0;
ALTER TABLE {prefix}job ADD COLUMN refused VARCHAR(512) NULL;
ALTER TABLE {prefix}job ADD COLUMN refused_at_ms BIGINT NULL;
ALTER TABLE {prefix}job ADD COLUMN refused_by VARCHAR(128) NULL;
UPDATE {prefix}schema SET version = 6 WHERE version < 6;

-- @step 7
-- Version 7: shards held under their member's lease (docs/protocol.md,
-- "Shards held under the member's lease"). One row per member
-- incarnation: its lease in database time and its renewal counter (never
-- lowered). A shard row a member of this version takes says so with the
-- expiry {by_member}: it holds while its holder's lease does, and is
-- written again only when it moves. Members of version 6 still running
-- go on renewing their own rows; they never take a row of {by_member}
-- (never expired to them), and the rows they hold are taken by members
-- of this version only once expired and watched, as before.
CREATE TABLE IF NOT EXISTS {prefix}member (
    grp VARCHAR(128) NOT NULL,
    inc BIGINT NOT NULL,
    member_id VARCHAR(128) NOT NULL,
    started_at_ms BIGINT NOT NULL,
    renewed_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    renew_seq BIGINT NOT NULL,
    PRIMARY KEY (grp, inc)
);
UPDATE {prefix}schema SET version = 7 WHERE version < 7;

-- @statement schema_version
SELECT MAX(version) FROM {prefix}schema;

-- @statement attempt
-- Heartbeat; take the lease when it was released (vacant and not
-- reserved for another candidate, or reserved for us, or reserved for
-- another whose reservation ran out), or when it expired AND it is
-- exactly the row the caller has watched for one TTL on its own clock
-- (:seen_term, :seen_expires_ms; 0 when it has not: matches no row). A
-- forward step of the clock cannot hand over a held lease early: the
-- watch is the caller's own (docs/protocol.md, "Takeover: the watch").
-- Never an
-- unexpired held lease, even our own. changes() in the SELECT is 1 when
-- the upsert took the lease (inserted the first row or updated), 0 when
-- its WHERE kept the row. The first row's term is the clock in ms, so a
-- namespace whose row was deleted (or a new table prefix) starts above
-- every term it had before (docs/protocol.md).
-- The election log: before the upsert, a takeover of the watched row ends
-- that term's entry as expired at its expiry (the upsert's second branch
-- takes exactly that row, in this same write transaction); after it, a
-- won lease opens the new term's entry (an upsert: a term number may come
-- back after the lease row was deleted). The final SELECT's changes() is
-- then that entry's insert: 1 exactly when the upsert took the lease.
-- Result: leader_id, term, expires_at_ms, now_ms, won.
INSERT INTO {prefix}candidate (namespace, candidate_id, registered_at_ms,
    heartbeat_at_ms, expires_at_ms)
VALUES (:ns, :id,
    {now},
    {now},
    {now} + :cand_ttl_ms)
ON CONFLICT (namespace, candidate_id) DO UPDATE
SET heartbeat_at_ms = excluded.heartbeat_at_ms,
    expires_at_ms = excluded.expires_at_ms;
UPDATE {prefix}election
SET ended_at_ms = :seen_expires_ms,
    ended_how = 'expired'
WHERE namespace = :ns
  AND term = :seen_term
  AND ended_at_ms IS NULL
  AND EXISTS (SELECT 1 FROM {prefix}lease AS l
              WHERE l.namespace = :ns
                AND l.term = :seen_term
                AND l.expires_at_ms = :seen_expires_ms
                AND l.expires_at_ms <= {now});
INSERT INTO {prefix}lease (namespace, leader_id, term, elected_at_ms,
    renewed_at_ms, expires_at_ms, resign_requested, handoff_to)
VALUES (:ns, :id, {now},
    {now},
    {now},
    {now} + :ttl_ms,
    0, NULL)
ON CONFLICT (namespace) DO UPDATE
SET leader_id = excluded.leader_id,
    term = term + 1,
    elected_at_ms = excluded.elected_at_ms,
    renewed_at_ms = excluded.renewed_at_ms,
    expires_at_ms = excluded.expires_at_ms,
    resign_requested = 0,
    handoff_to = NULL
WHERE (leader_id IS NULL
       AND (handoff_to IS NULL
            OR handoff_to = excluded.leader_id
            OR (handoff_to <> ''
                AND expires_at_ms <= excluded.elected_at_ms)))
   OR (expires_at_ms <= excluded.elected_at_ms
       AND term = :seen_term
       AND expires_at_ms = :seen_expires_ms);
INSERT INTO {prefix}election (namespace, term, leader_id, started_at_ms,
    ended_at_ms, ended_how, handed_to)
SELECT namespace, term, leader_id, elected_at_ms, NULL, NULL, NULL
FROM {prefix}lease
WHERE namespace = :ns AND changes() = 1
ON CONFLICT (namespace, term) DO UPDATE
SET leader_id = excluded.leader_id,
    started_at_ms = excluded.started_at_ms,
    ended_at_ms = NULL,
    ended_how = NULL,
    handed_to = NULL;
SELECT leader_id, term, expires_at_ms,
    {now}, changes()
FROM {prefix}lease
WHERE namespace = :ns;

-- @statement renew
-- Heartbeat; delete candidate rows that expired more than one candidate
-- TTL ago (crashed processes with random ids would pile up); extend the
-- lease only for the exact holder and term while it is unexpired; report
-- it only when the UPDATE changed the row (no row = the lease is lost).
-- The last column counts the fires offered to the leader (run-now and
-- recoverable interrupted ones): the leader reads them when it is not 0.
-- One equality on state per count, so each is a search of the index on
-- (namespace, state), never a scan of the namespace's ledger.
INSERT INTO {prefix}candidate (namespace, candidate_id, registered_at_ms,
    heartbeat_at_ms, expires_at_ms)
VALUES (:ns, :id,
    {now},
    {now},
    {now} + :cand_ttl_ms)
ON CONFLICT (namespace, candidate_id) DO UPDATE
SET heartbeat_at_ms = excluded.heartbeat_at_ms,
    expires_at_ms = excluded.expires_at_ms;
DELETE FROM {prefix}candidate
WHERE namespace = :ns
  AND candidate_id <> :id
  AND expires_at_ms < {now}
                      - :cand_ttl_ms;
UPDATE {prefix}lease
SET renewed_at_ms = {now},
    expires_at_ms =
        {now} + :ttl_ms
WHERE namespace = :ns
  AND leader_id = :id
  AND term = :term
  AND expires_at_ms > {now};
SELECT leader_id, term, expires_at_ms,
    {now}, resign_requested, handoff_to, NULL,
    (SELECT COUNT(*) FROM {prefix}fire
     WHERE namespace = :ns AND state = 'pending')
    + (SELECT COUNT(*) FROM {prefix}fire
       WHERE namespace = :ns AND state = 'interrupted'
         AND attempt < max_attempts)
FROM {prefix}lease
WHERE namespace = :ns AND changes() = 1;

-- @statement resign
-- Only the exact term: the row and its term stay, the lease is vacant.
-- After a request with a handoff target the lease stays reserved for
-- that candidate for one TTL, then it is open to anyone. First the term's
-- entry in the election log ends, by how the lease row says it was asked
-- (read before the lease's UPDATE resets the request); the lease's UPDATE
-- stays last: its row count is the result.
UPDATE {prefix}election
SET ended_at_ms = {now},
    ended_how = (SELECT CASE WHEN l.handoff_to IS NOT NULL
                                  AND l.handoff_to <> '' THEN 'handover'
                             WHEN l.resign_requested <> 0 THEN 'requested'
                             ELSE 'resigned' END
                 FROM {prefix}lease AS l
                 WHERE l.namespace = :ns),
    handed_to = (SELECT NULLIF(l.handoff_to, '')
                 FROM {prefix}lease AS l
                 WHERE l.namespace = :ns)
WHERE namespace = :ns
  AND term = :term
  AND ended_at_ms IS NULL
  AND EXISTS (SELECT 1 FROM {prefix}lease AS l
              WHERE l.namespace = :ns AND l.leader_id = :id
                AND l.term = :term);
UPDATE {prefix}lease
SET leader_id = NULL,
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

-- @statement claim
-- Records fire :fire_ms of :job for our term only while, at this
-- statement's clock, we hold the namespace's current, unexpired term (the
-- lease row is read in the same statement, under the write lock); only
-- for a fire not older than the retention (0, a one-off key, never is);
-- and only while no operator paused the job. No row inserted = not
-- leader, too old or paused (the engine reads the lease to tell which).
-- A second claim of a fire fails on the primary key (HY000 native 19):
-- "already claimed", or a fire offered again (the engine runs take).
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
       OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                   WHERE mb.grp = {prefix}lease.grp AND mb.inc = {prefix}lease.inc
                     AND mb.expires_at_ms > {now}))
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
-- row changed = taken.
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
  AND EXISTS (SELECT 1 FROM {prefix}lease AS l
              WHERE l.namespace = :ns AND l.leader_id = :id
                AND l.term = :term AND l.expires_at_ms > {now}
                AND (l.expires_at_ms < {by_member}
                     OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                                 WHERE mb.grp = l.grp AND mb.inc = l.inc
                                   AND mb.expires_at_ms > {now})))
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
  AND ({prefix}lease.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                   WHERE mb.grp = {prefix}lease.grp AND mb.inc = {prefix}lease.inc
                     AND mb.expires_at_ms > {now}));

-- @statement finish
-- Records the outcome of a fire we claimed, once, in the term we claimed
-- it in (:term 0: any of ours): done or failed. A fire found interrupted
-- or abandoned by a later term still takes its late outcome, unless it
-- was offered again and taken (then its term and claimant changed). No
-- row changed = already finished or not ours (the engine reads the fire
-- to tell which).
UPDATE {prefix}fire
SET finished_at_ms = {now},
    status = :status,
    state = CASE WHEN :status = 0 THEN 'done' ELSE 'failed' END
WHERE namespace = :ns AND job = :job AND fire_ms = :fire_ms
  AND claimed_by = :id
  AND (:term = 0 OR term = :term)
  AND (state = 'running'
       OR state IN ('interrupted', 'abandoned'));

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
  AND EXISTS (SELECT 1 FROM {prefix}lease AS l
              WHERE l.namespace = :ns AND l.leader_id = :id
                AND l.term = :term AND l.expires_at_ms > {now}
                AND (l.expires_at_ms < {by_member}
                     OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                                 WHERE mb.grp = l.grp AND mb.inc = l.inc
                                   AND mb.expires_at_ms > {now})));

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
ON CONFLICT (namespace, job) DO UPDATE
SET paused = excluded.paused,
    changed_at_ms = excluded.changed_at_ms,
    changed_by = excluded.changed_by;

-- @statement trigger
-- An operator asks for one run of :job now: a pending fire offered to the
-- leader, keyed below 0 so that no nominal time can collide with it (the
-- negated database clock, or one below the job's lowest key). Result:
-- the key.
INSERT INTO {prefix}fire (namespace, job, fire_ms, term, claimed_by,
    claimed_at_ms, finished_at_ms, status, state, attempt, max_attempts)
SELECT :ns, :job,
    MIN(-{now},
        COALESCE((SELECT MIN(fire_ms) FROM {prefix}fire
                  WHERE namespace = :ns AND job = :job), 0) - 1),
    0, :id, {now}, NULL, NULL, 'pending', 0, 1;
SELECT MIN(fire_ms) FROM {prefix}fire
WHERE namespace = :ns AND job = :job AND changes() = 1;

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
      WHERE namespace = :ns) AS u
GROUP BY u.job
ORDER BY u.job;

-- @statement schedule
-- A claim of :job computed by schedule :schedule (docs/schedules.md):
-- records it as the job's when the job has none (its first claim), counts
-- a refusal when the job's differs, and returns the job's schedule, since
-- when and by whom; the engine claims only when it equals :schedule.
INSERT INTO {prefix}job (namespace, job, paused, changed_at_ms, changed_by,
    schedule, schedule_at_ms, schedule_by, refusals)
VALUES (:ns, :job, 0, 0, '', :schedule, {now}, :id, 0)
ON CONFLICT (namespace, job) DO NOTHING;
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
ON CONFLICT (namespace, job) DO UPDATE
SET schedule = excluded.schedule,
    schedule_at_ms = excluded.schedule_at_ms,
    schedule_by = excluded.schedule_by,
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
  AND ({prefix}lease.expires_at_ms < {by_member}
       OR EXISTS (SELECT 1 FROM {prefix}member AS mb
                   WHERE mb.grp = {prefix}lease.grp AND mb.inc = {prefix}lease.inc
                     AND mb.expires_at_ms > {now}));

-- @statement elections
-- The election log of the namespace, oldest term first: term, leader_id,
-- started_at_ms, ended_at_ms, ended_how, handed_to, now_ms. A term whose
-- entry is still open but that has ended all the same (a later term
-- began, or its lease expired and nobody took over yet) reads as expired:
-- at the next term's start, or at the lease's expiry.
SELECT e.term, e.leader_id, e.started_at_ms,
    COALESCE(e.ended_at_ms,
             (SELECT MIN(n.started_at_ms) FROM {prefix}election AS n
              WHERE n.namespace = e.namespace AND n.term > e.term),
             (SELECT l.expires_at_ms FROM {prefix}lease AS l
              WHERE l.namespace = e.namespace AND l.term = e.term
                AND l.expires_at_ms <= {now})),
    COALESCE(e.ended_how,
             CASE WHEN EXISTS (SELECT 1 FROM {prefix}election AS n
                               WHERE n.namespace = e.namespace
                                 AND n.term > e.term)
                    OR EXISTS (SELECT 1 FROM {prefix}lease AS l
                               WHERE l.namespace = e.namespace
                                 AND l.term = e.term
                                 AND l.expires_at_ms <= {now})
                  THEN 'expired' END),
    e.handed_to, {now}
FROM {prefix}election AS e
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
           AND term < (SELECT MAX(term) FROM {prefix}election
                       WHERE namespace = :ns)));

-- @statement group_init
-- Creates the rows of group :ns's :shards shards (GROUP/0 ...) when the
-- group has none yet, vacant, with the clock in ms as their term; an
-- existing group keeps its size. Result: the group's rows, and the rows
-- named like a shard that belong to no group.
WITH RECURSIVE g(s) AS (
    SELECT 0
    UNION ALL
    SELECT s + 1 FROM g WHERE s + 1 < :shards
)
INSERT INTO {prefix}lease (namespace, leader_id, term, elected_at_ms,
    renewed_at_ms, expires_at_ms, resign_requested, handoff_to, grp, shard,
    inc, renew_seq)
SELECT :ns || '/' || s, NULL, {now}, NULL,
    {now}, {now}, 0, NULL, :ns, s, NULL, NULL
FROM g
WHERE NOT EXISTS (SELECT 1 FROM {prefix}lease WHERE grp = :ns)
ON CONFLICT (namespace) DO NOTHING;
SELECT (SELECT COUNT(*) FROM {prefix}lease WHERE grp = :ns),
    (SELECT COUNT(*) FROM {prefix}lease
     WHERE grp IS NULL
       AND SUBSTR(namespace, 1, LENGTH(:ns) + 1) = :ns || '/');

-- @statement group_tick
-- A member's tick in one transaction (docs/protocol.md, "Groups" and
-- "Shards held under the member's lease"): heartbeat; the lease of this
-- incarnation (:id, :inc), created when it has no row and renewed while
-- unexpired, never after: renew_seq = :seq afterwards says it holds (a
-- row goes a day after it expired, and only when it holds no shard, so
-- a late statement that makes it again holds only what it then takes); release the shards in :release (a JSON array of [shard,
-- term] pairs: a row is released only in the term named, so a late copy
-- of an old tick cannot release a later term; the host stopped their
-- work first); and, only while the lease holds, take the shards in :take
-- that are vacant and reserved for nobody, or held by an incarnation the
-- caller has watched standing still for one TTL on its own clock (:dead,
-- a JSON array of [incarnation, the highest renew_seq seen of it]): one
-- whose lease expired in database time and was not renewed since (a
-- shard row of {by_member}), or, a row a member of schema version 6
-- renews itself, one that expired unrenewed since. A take writes the
-- term + 1 and {by_member}: the shard holds while the lease does, and a
-- steady tick writes no shard row. The lists are read as uncorrelated IN
-- subqueries, which SQLite builds into a temporary index once per
-- statement (a correlated EXISTS would read the list again for every row:
-- a member releasing 9,000 of 10,000 shards held the write lock for
-- seconds). Leases of incarnations that hold nothing and expired a day
-- ago go. Result rows, kind first: S renewed(1/0) renew_seq expires_at_ms
-- (this incarnation's lease, one row), L shard term expires_at_ms (held
-- after this tick), M candidate_id heartbeat_at_ms expires_at_ms (live
-- members), H holder_id inc renew_seq count (holders: the lease's
-- counter, or a version-6 holder's highest renew_seq), V shard term
-- expires_at_ms (vacant); now_ms last.
-- L, H and V only when :full = 1; when :full = 0 (a steady tick, which
-- reads no shard row), K member_id inc renew_seq expires_at_ms (the
-- member leases that hold a shard: an index probe each) instead.
INSERT INTO {prefix}candidate (namespace, candidate_id, registered_at_ms,
    heartbeat_at_ms, expires_at_ms)
VALUES (:ns, :id,
    {now},
    {now},
    {now} + :cand_ttl_ms)
ON CONFLICT (namespace, candidate_id) DO UPDATE
SET heartbeat_at_ms = excluded.heartbeat_at_ms,
    expires_at_ms = excluded.expires_at_ms;
DELETE FROM {prefix}candidate
WHERE namespace = :ns
  AND candidate_id <> :id
  AND expires_at_ms < {now}
                      - :cand_ttl_ms;
INSERT INTO {prefix}member (grp, inc, member_id, started_at_ms,
    renewed_at_ms, expires_at_ms, renew_seq)
VALUES (:ns, :inc, :id, {now}, {now}, {now} + :ttl_ms, :seq)
ON CONFLICT (grp, inc) DO NOTHING;
UPDATE {prefix}member
SET renewed_at_ms = {now},
    expires_at_ms = {now} + :ttl_ms,
    renew_seq = :seq
WHERE grp = :ns
  AND inc = :inc
  AND member_id = :id
  AND renew_seq < :seq
  AND expires_at_ms > {now};
DELETE FROM {prefix}member
WHERE grp = :ns
  AND :full = 1
  AND expires_at_ms < {now} - 86400000
  AND inc NOT IN (SELECT inc FROM {prefix}lease
                  WHERE grp = :ns AND inc IS NOT NULL);
UPDATE {prefix}lease
SET leader_id = NULL,
    inc = NULL,
    resign_requested = 0,
    expires_at_ms = {now}
WHERE grp = :ns
  AND json_array_length(:release) > 0
  AND inc = :inc
  AND leader_id = :id
  AND (shard, term) IN (SELECT json_extract(r.value, '$[0]'),
                               json_extract(r.value, '$[1]')
                        FROM json_each(:release) AS r);
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
  AND shard IN (SELECT value FROM json_each(:take))
  AND EXISTS (SELECT 1 FROM {prefix}member AS mb
              WHERE mb.grp = :ns AND mb.inc = :inc AND mb.renew_seq = :seq
                AND mb.expires_at_ms > {now})
  AND ((leader_id IS NULL AND inc IS NULL AND handoff_to IS NULL)
       OR (inc <> :inc
           AND EXISTS (SELECT 1 FROM json_each(:dead) AS d
                       WHERE json_extract(d.value, '$[0]') = inc
                         AND CASE WHEN expires_at_ms = {by_member}
                             THEN NOT EXISTS (
                                 SELECT 1 FROM {prefix}member AS h
                                 WHERE h.grp = :ns
                                   AND h.inc = {prefix}lease.inc
                                   AND (h.expires_at_ms > {now}
                                        OR h.renew_seq >
                                           json_extract(d.value, '$[1]')))
                             ELSE expires_at_ms <= {now}
                                  AND renew_seq <=
                                      json_extract(d.value, '$[1]')
                             END)));
SELECT 'S', NULL,
    COALESCE((SELECT renew_seq = :seq AND expires_at_ms > {now}
              FROM {prefix}member WHERE grp = :ns AND inc = :inc), 0),
    COALESCE((SELECT renew_seq FROM {prefix}member
              WHERE grp = :ns AND inc = :inc), 0),
    COALESCE((SELECT expires_at_ms FROM {prefix}member
              WHERE grp = :ns AND inc = :inc), 0), 0,
    {now}
UNION ALL
SELECT 'L', NULL, shard, term, expires_at_ms, 0,
    {now}
FROM {prefix}lease
WHERE grp = :ns AND inc = :inc AND leader_id = :id AND :full = 1
UNION ALL
SELECT 'M', candidate_id, 0, heartbeat_at_ms, expires_at_ms, 0,
    {now}
FROM {prefix}candidate
WHERE namespace = :ns
  AND expires_at_ms > {now}
UNION ALL
SELECT 'H', MAX(l.leader_id), l.inc,
    COALESCE(MAX(mb.renew_seq), MAX(l.renew_seq)), COUNT(*), 0,
    {now}
FROM {prefix}lease AS l
LEFT JOIN {prefix}member AS mb ON mb.grp = :ns AND mb.inc = l.inc
WHERE l.grp = :ns AND l.inc IS NOT NULL AND :full = 1
GROUP BY l.inc
UNION ALL
SELECT 'V', NULL, shard, term, expires_at_ms, 0,
    {now}
FROM {prefix}lease
WHERE grp = :ns AND inc IS NULL AND :full = 1
UNION ALL
SELECT 'K', member_id, inc, renew_seq, expires_at_ms, 0,
    {now}
FROM {prefix}member
WHERE grp = :ns AND :full = 0
  AND EXISTS (SELECT 1 FROM {prefix}lease AS l
              WHERE l.grp = :ns AND l.inc = {prefix}member.inc);

-- @statement group_leave
-- A member leaving gracefully: every shard this process holds becomes
-- vacant at once (its host stopped their work first), its lease ends and
-- its candidate row goes, so the others take them at their next tick.
UPDATE {prefix}lease
SET leader_id = NULL,
    inc = NULL,
    resign_requested = 0,
    expires_at_ms = {now}
WHERE grp = :ns
  AND inc = :inc
  AND leader_id = :id;
UPDATE {prefix}member
SET expires_at_ms = {now}
WHERE grp = :ns
  AND inc = :inc
  AND expires_at_ms > {now};
DELETE FROM {prefix}candidate
WHERE namespace = :ns
  AND candidate_id = :id;

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
