// SPDX-License-Identifier: MIT
// lib/fence.js: fenced writes in a job's own SQL (docs/fencing.md). A
// leader that was paused may write after another host took over; the
// fence moves the check into the write: the statement applies only while
// the fire's term still holds, by the database clock. The predicate is the
// dialect's; it needs the lease table in the database the job writes to.
// leader.fence() builds one from the plugin (no odbc-leader command
// needed); Fence.fromCommand asks `odbc-leader fence --bare`, for a
// process without a Leader.
'use strict';

const { execFileSync } = require('node:child_process');

const STYLES = ['?', '$'];

/**
 * The fence of namespace (in a group: "NAMESPACE/SHARD", see
 * Fence.forFire) for predicate, the SELECT that goes inside EXISTS ( ... )
 * with two `?` placeholders (namespace, then term). placeholder is '?'
 * (mysql2, sqlite) or '$' (pg's $1, $2, ...).
 */
class Fence {
    constructor(predicate, namespace, placeholder = '?') {
        const n = predicate.split('?').length - 1;
        if (n !== 2)
            throw new Error(`a fence predicate has two ? placeholders (namespace, term); got ${n}`);
        if (!STYLES.includes(placeholder))
            throw new Error(`placeholder ${placeholder}: use '?' or '$'`);
        this.predicate = predicate.trim();
        this.namespace = namespace;
        this.placeholder = placeholder;
    }

    /**
     * Asks `odbc-leader fence --bare` for dialect's predicate (sqlite,
     * postgresql, mariadb or a dialect file). options: namespace,
     * placeholder, prefix, odbcLeader (the command). Throws with the
     * command's message when it fails.
     */
    static fromCommand(dialect, options = {}) {
        const args = ['fence', '--bare', '--dialect', dialect];
        if (options.prefix !== undefined)
            args.push('--prefix', options.prefix);
        const exe = options.odbcLeader || 'odbc-leader';
        let out;
        try {
            out = execFileSync(exe, args, { encoding: 'utf8', timeout: 30000,
                stdio: ['ignore', 'pipe', 'pipe'] });
        } catch (e) {
            const why = e.stderr ? String(e.stderr).trim() : e.message;
            throw new Error(`${exe} fence failed: ${why}`);
        }
        return new Fence(out, options.namespace, options.placeholder || '?');
    }

    /** " AND EXISTS (predicate)" with its placeholders; firstParam numbers
     * them for '$' (the number of the statement's own parameters + 1). */
    clause(firstParam = 1) {
        let i = firstParam;
        const text = this.placeholder === '$'
            ? this.predicate.replace(/\?/g, () => `$${i++}`)
            : this.predicate;
        return ` AND EXISTS (${text})`;
    }

    /** The predicate's parameters for a fire's term: [namespace, term]. */
    params(term) {
        return [this.namespace, Number(term)];
    }

    /**
     * { text, values }: sql (an UPDATE or DELETE whose WHERE clause ends
     * the statement, or an INSERT ... SELECT ... WHERE) with the fence
     * appended and its parameters after values: run it with the job's
     * client; 0 rows changed means the term no longer holds (or no row
     * matched).
     */
    statement(sql, values, term) {
        const text = sql.trim().replace(/;$/, '') + this.clause(values.length + 1);
        return { text, values: [...values, ...this.params(term)] };
    }

    /** The fence of a fire's namespace: namespace itself, or in a group
     * of leader's, "namespace/shard" of the fire's job. */
    forFire(leader, fire) {
        const ns = leader.shards ? `${this.namespace}/${leader.shardOf(fire.job)}`
            : this.namespace;
        return new Fence(this.predicate, ns, this.placeholder);
    }
}

/** Fence.fromCommand(dialect, options). */
function fence(dialect, options) {
    return Fence.fromCommand(dialect, options);
}

module.exports = { Fence, fence };
