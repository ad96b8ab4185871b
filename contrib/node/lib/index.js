// SPDX-License-Identifier: MIT
// lib/index.js: the odbc-leader package. Leader campaigns and claims
// fires; the scheduler integrations are odbc-leader/node-cron,
// odbc-leader/node-schedule, odbc-leader/croner and odbc-leader/cron;
// plugin is the ABI binding itself; fence gives a job's own SQL the
// predicate that fences its writes by term. index.d.ts declares exactly
// these names (test/exports.test.js); they are listed one by one so that
// an ES module's `import { Plugin } from 'odbc-leader'` finds them too.
'use strict';

const {
    Plugin, Instance, ABI_MAJOR, ABI_MINOR, EABI, ENOTLEADER, ESCHEDULE,
} = require('./plugin');
const { Leader, findPlugin, currentFire, PLUGIN_ENV } = require('./leader');
const { LeaderPluginError, NotLeaderError, ScheduleError } = require('./errors');
const { fence, Fence } = require('./fence');
const { FireRunner } = require('./runner');

module.exports = {
    Leader, findPlugin, currentFire, fence, Fence, FireRunner,
    LeaderPluginError, NotLeaderError, ScheduleError, PLUGIN_ENV,
    Plugin, Instance,
    ABI_MAJOR, ABI_MINOR, EABI, ENOTLEADER, ESCHEDULE,
};
