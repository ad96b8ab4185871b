// SPDX-License-Identifier: MIT
// lib/index.js: the odbc-leader package. Leader campaigns and claims
// fires; the scheduler integrations are odbc-leader/node-cron,
// odbc-leader/node-schedule, odbc-leader/croner and odbc-leader/cron;
// plugin is the ABI binding itself; fence gives a job's own SQL the
// predicate that fences its writes by term.
'use strict';

const plugin = require('./plugin');
const { Leader, findPlugin, currentFire, PLUGIN_ENV } = require('./leader');
const { LeaderPluginError, NotLeaderError } = require('./errors');
const { fence, Fence } = require('./fence');
const { FireRunner } = require('./runner');

module.exports = {
    Leader, findPlugin, currentFire, fence, Fence, FireRunner,
    LeaderPluginError, NotLeaderError, PLUGIN_ENV,
    Plugin: plugin.Plugin, Instance: plugin.Instance, shardOf: plugin.shardOf,
    ABI_MAJOR: plugin.ABI_MAJOR, ABI_MINOR: plugin.ABI_MINOR, EABI: plugin.EABI,
    ENOTLEADER: plugin.ENOTLEADER,
};
