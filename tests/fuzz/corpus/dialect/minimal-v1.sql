-- @dialect tiny
-- @schema-version 1
-- @unique-violation 23505 23000 HY000:19
-- @transient 40001 *:1213
-- @define now CURRENT_TIMESTAMP
-- @statement ddl
CREATE TABLE {prefix}lease (ns VARCHAR(128) PRIMARY KEY);
-- @statement schema_version
SELECT 1;
-- @statement attempt
SELECT :id, :term, {now}, 'a:b', '{x}' WHERE :ns = 'x'; -- note
-- @statement renew
UPDATE {prefix}lease SET ns = :ns WHERE ns = :ns AND :ttl_ms > {timeout_ms};
-- @statement resign
DELETE FROM {prefix}lease WHERE ns = :ns;
-- @statement unregister
DELETE FROM {prefix}lease WHERE ns = :id;
-- @statement leader
SELECT ns::text FROM {prefix}lease WHERE ns = :ns;
-- @statement candidates
SELECT :cand_ttl_ms;
-- @statement request_resign
UPDATE {prefix}lease SET ns = :to WHERE ns = :ns;
