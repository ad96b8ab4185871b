// SPDX-License-Identifier: MIT
// test/exports.test.js: what the declarations promise is there at run time
// (node --test). For the package root and every subpath of package.json's
// "exports", the names its "types" file declares as values (class,
// function, const...) are read from that file and must be exactly what the
// subpath exports, through require() and through import() (Node's ESM view
// of a CommonJS module sees only the names it can find by reading the
// module's source). A program that type-checks must not fail at run time.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const PKG_DIR = path.join(__dirname, '..');
const pkg = require('../package.json');

const VALUE = new Set(['class', 'function', 'const', 'let', 'var', 'enum']);
const TYPE = new Set(['interface', 'type']);

/**
 * The names file declares as exported values. Every top-level `export`
 * must be a declaration this reader knows (a value or a type): any other
 * form (export { }, export *, export default, export =) fails, so that a
 * name cannot slip past the check.
 */
function declaredValues(file) {
    const names = new Set();
    const text = fs.readFileSync(file, 'utf8');
    for (const line of text.split('\n')) {
        if (!/^export\b/.test(line))
            continue;
        const m = /^export\s+(?:declare\s+)?(?:abstract\s+)?(\w+)\s+([A-Za-z_$][\w$]*)/.exec(line);
        assert.ok(m && (VALUE.has(m[1]) || TYPE.has(m[1])),
            `${path.basename(file)}: an export this test cannot read: ${line}`);
        if (VALUE.has(m[1]))
            names.add(m[2]);
    }
    return names;
}

/** [specifier, types file] of the root and every subpath with types. */
function entries() {
    const out = [];
    for (const [sub, target] of Object.entries(pkg.exports)) {
        if (typeof target !== 'object' || target === null)
            continue;
        assert.ok(target.types, `exports["${sub}"] has no types`);
        const spec = sub === '.' ? pkg.name : `${pkg.name}/${sub.slice(2)}`;
        out.push([spec, target.types]);
    }
    return out;
}

test('package.json: the root\'s types are the package\'s types', () => {
    assert.equal(path.normalize(pkg.types), path.normalize(pkg.exports['.'].types));
    assert.equal(path.normalize(pkg.main), path.normalize(pkg.exports['.'].default));
});

test('each subpath has types of its own', () => {
    const files = entries().map(([, types]) => path.normalize(types));
    assert.equal(new Set(files).size, files.length,
        `subpaths share a declaration file: ${files.join(', ')}`);
    for (const f of files) {
        assert.ok(pkg.files.some((p) => path.normalize(p) === f || f.startsWith(path.normalize(p))),
            `${f} is not in package.json's files (npm pack would leave it out)`);
    }
});

for (const [spec, types] of entries()) {
    test(`${spec}: exports what ${types} declares`, async () => {
        const declared = declaredValues(path.join(PKG_DIR, types));
        assert.ok(declared.size > 0, `${types} declares no value`);
        const cjs = require(spec);
        const esm = await import(spec);
        const missing = [...declared].filter((n) => cjs[n] === undefined);
        const missingEsm = [...declared].filter((n) => !(n in esm) || esm[n] !== cjs[n]);
        const undeclared = Object.keys(cjs).filter((n) => !declared.has(n));
        assert.deepEqual({ missing, missingEsm, undeclared },
            { missing: [], missingEsm: [], undeclared: [] },
            `${types} against ${spec}: declared but not exported by require() ` +
            `[${missing}], nor by import() [${missingEsm}]; exported but not ` +
            `declared [${undeclared}]`);
    });
}
