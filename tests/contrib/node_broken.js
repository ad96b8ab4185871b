// SPDX-License-Identifier: MIT
// node_broken.js: broken variants of the Node binding, preloaded with
// `node --require` by scheduler_fires.py --broken, which the fire checker
// must fail. ODBC_LEADER_BROKEN selects one:
//   nogate   every process runs every fire: no leadership gate, no claim;
//   release  a coordinator that frees its key when the fire completes (as
//            node-cron's Redis coordinator does): fires are gated by
//            leadership only and leave no ledger row behind, so a new
//            leader catching up (every fire within the grace: nothing
//            records the old one's) runs fires the old one already ran.
'use strict';

const path = require('node:path');
const pkg = process.env.ODBC_LEADER_NODE_PKG ||
    path.join(__dirname, '..', '..', 'contrib', 'node');
const { Leader } = require(path.join(pkg, 'lib', 'leader.js'));
const mode = process.env.ODBC_LEADER_BROKEN;

if (mode === 'nogate') {
    Leader.prototype.leads = function leads() {
        return this.inst !== null;
    };
    Leader.prototype.claim = async function claim(job, fireMs) {
        return { job: String(job), fireMs, term: this.term(), attempt: 1,
            recovering: false, triggered: false };
    };
    Leader.prototype.finish = async function finish() {};
} else if (mode === 'release') {
    const held = new Set(); // the keys of fires under way, freed when done
    Leader.prototype.claim = async function claim(job, fireMs) {
        const key = `${job}:${fireMs}`;
        if (!this.leads(job) || held.has(key))
            return null;
        held.add(key);
        return { job: String(job), fireMs, term: this.termOf(job), attempt: 1,
            recovering: false, triggered: false };
    };
    Leader.prototype.finish = async function finish(fire) {
        held.delete(`${fire.job}:${fire.fireMs}`);
    };
    // no ledger either: a new leader's catch-up takes every fire within
    // the grace, as before the library's policy read the ledger
    Leader.prototype.catchUp = async function catchUp(job, times, policy, graceMs) {
        const floor = Date.now() - graceMs;
        return times.filter((t) => t >= floor);
    };
} else {
    throw new Error(`node_broken.js: ODBC_LEADER_BROKEN=${mode}: use nogate or release`);
}
