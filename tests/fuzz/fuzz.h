/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h: helpers shared by the libFuzzer targets of tests/fuzz (built
 * only by make fuzz): turning the fuzzer's bytes into a C string and
 * stopping the run when a checked property fails.
 */
#ifndef ODBC_LEADER_FUZZ_H
#define ODBC_LEADER_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer's entry points, defined by each target. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Returns a new NUL-terminated copy of data[0..size) (owned by the
 * caller; the text ends at the first NUL byte, as the parsers read it).
 * Aborts when out of memory. */
static inline char *fuzz_string(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);

    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Prints what property failed and aborts, so libFuzzer keeps the input
 * as a crash artifact. Never returns. */
__attribute__((noreturn)) static inline void fuzz_fail(const char *what,
                                                       const char *detail) {
    fprintf(stderr, "fuzz property failed: %s\n%s\n", what,
            detail ? detail : "");
    abort();
}

/* Aborts with what unless ok is non-zero. */
static inline void fuzz_check(int ok, const char *what) {
    if (!ok)
        fuzz_fail(what, NULL);
}

#endif /* ODBC_LEADER_FUZZ_H */
