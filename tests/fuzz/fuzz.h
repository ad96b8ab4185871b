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
#include <unistd.h>

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

/* The private odbcinst directory of the target (fuzz_private_odbc()). */
static char fuzz_ini_dir[64];   /* the temporary directory */
static char fuzz_ini_path[96];  /* fuzz_ini_dir/odbc.ini */
static char fuzz_inst_path[96]; /* fuzz_ini_dir/odbcinst.ini */

/* Removes the private directory and its files (atexit handler). */
static void fuzz_remove_odbc_dir(void) {
    unlink(fuzz_ini_path);
    unlink(fuzz_inst_path);
    rmdir(fuzz_ini_dir);
}

/* Writes text into a new file at path (borrowed); aborts on failure. */
static inline void fuzz_write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");

    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        fuzz_fail("cannot write", path);
}

/* Makes a private directory in $TMPDIR (or /tmp), removed at exit, with
 * an odbc.ini holding odbc_ini (borrowed; "" for an empty one) and an
 * empty odbcinst.ini, and points unixODBC and iODBC (and $HOME, for
 * ~/.odbc.ini) at it, so a DSN= in the input reads no system file. Aborts
 * on failure. */
static inline void fuzz_private_odbc(const char *odbc_ini) {
    const char *tmp = getenv("TMPDIR");

    snprintf(fuzz_ini_dir, sizeof fuzz_ini_dir, "%.40s/ol-fuzz-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(fuzz_ini_dir) == NULL)
        fuzz_fail("mkdtemp failed", fuzz_ini_dir);
    snprintf(fuzz_ini_path, sizeof fuzz_ini_path, "%s/odbc.ini", fuzz_ini_dir);
    snprintf(fuzz_inst_path, sizeof fuzz_inst_path, "%s/odbcinst.ini",
             fuzz_ini_dir);
    fuzz_write_file(fuzz_ini_path, odbc_ini);
    fuzz_write_file(fuzz_inst_path, "");
    atexit(fuzz_remove_odbc_dir);
    setenv("ODBCSYSINI", fuzz_ini_dir, 1);
    setenv("ODBCINI", fuzz_ini_path, 1);
    setenv("ODBCINSTINI", "odbcinst.ini", 1);
    setenv("HOME", fuzz_ini_dir, 1);
}

#endif /* ODBC_LEADER_FUZZ_H */
