// SPDX-License-Identifier: MIT
// lib/config.js: a value as the library's parser reads it back as one
// value (src/config.c: key=value pairs separated by ';', a value in braces
// when it holds ';', '{', '}' or blanks at either end, '}' doubled inside).
'use strict';

const BLANKS = ' \t\r\n\v\f';
const isBlank = (c) => c !== undefined && c !== '' && BLANKS.includes(c);

/** value as the parser reads it back as one value: as it is, or braced. */
function quote(value) {
    const s = String(value);
    if (!/[;{}\0]/.test(s) && !isBlank(s[0]) && !isBlank(s[s.length - 1]))
        return s;
    return `{${s.replace(/}/g, '}}')}}`;
}

module.exports = { quote };
