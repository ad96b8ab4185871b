/* SPDX-License-Identifier: MIT */
/*
 * serve_auth.c: serve's TLS and basic authentication: reading the PEM
 * certificate and key (--tls-cert, --tls-key) and the users file
 * (--basic-auth, lines NAME:HASH of crypt(3) hashes), and checking a
 * request's credentials in time that does not tell a known name from an
 * unknown one.
 */
#include <build_config.h>

#include <crypt.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define MAX_FILE (1024 * 1024) /* --tls-cert, --tls-key, --basic-auth */

/* Reads the file path (at most MAX_FILE bytes) into *out, NUL-terminated;
 * the caller frees it. Returns 0 or an exit code after a message naming
 * option and file. */
static int read_file(struct odbc_leader__serve *sv, const char *option,
                     const char *path, char **out) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;
    int rc = EX_NOINPUT;

    *out = NULL;
    if (f == NULL) {
        odbc_leader__cli_err(sv->cli, "serve: %s %s: %s", option, path,
                             strerror(errno));
        return EX_NOINPUT;
    }
    buf = malloc(MAX_FILE + 1);
    if (buf == NULL) {
        rc = EX_OSERR;
        goto out;
    }
    n = fread(buf, 1, MAX_FILE + 1, f);
    if (ferror(f) || n == 0 || n > MAX_FILE) {
        odbc_leader__cli_err(sv->cli, "serve: %s %s: %s", option, path,
                             ferror(f) ? strerror(errno)
                             : n == 0  ? "empty"
                                       : "larger than 1 MiB");
        goto out;
    }
    buf[n] = '\0';
    *out = buf;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    fclose(f);
    return rc;
}

/* Reads --basic-auth: one "name:hash" a line (hash a crypt(3) string, as
 * `openssl passwd -6` or mkpasswd print it), blank lines and # comments
 * skipped. Returns 0 or an exit code after a message naming the line. */
static int load_users(struct odbc_leader__serve *sv) {
    char *line, *next;
    unsigned no = 0;
    int rc = read_file(sv, "--basic-auth", sv->auth_file, &sv->auth);

    if (rc != 0)
        return rc;
    for (line = sv->auth; line != NULL; line = next) {
        char *name, *hash;
        int kind;

        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        no++;
        kind = odbc_leader__http_user_line(line, &name, &hash);
        if (kind == 0)
            continue;
        if (kind < 0 || sv->nusers == ODBC_LEADER__SERVE_MAX_USERS) {
            odbc_leader__cli_err(
                sv->cli, "serve: --basic-auth %s:%u: %s", sv->auth_file, no,
                kind > 0 ? "more than 64 users"
                         : "want NAME:HASH (openssl passwd -6)");
            return EX_CONFIG;
        }
        sv->users[sv->nusers] = name;
        sv->hashes[sv->nusers++] = hash;
    }
    if (sv->nusers == 0) {
        odbc_leader__cli_err(sv->cli, "serve: --basic-auth %s: no user",
                             sv->auth_file);
        return EX_CONFIG;
    }
    return 0;
}

int odbc_leader__serve_load_secrets(struct odbc_leader__serve *sv) {
    int rc = 0;

    if (sv->tls_cert_file != NULL)
        rc = read_file(sv, "--tls-cert", sv->tls_cert_file, &sv->tls_cert);
    if (rc == 0 && sv->tls_key_file != NULL)
        rc = read_file(sv, "--tls-key", sv->tls_key_file, &sv->tls_key);
    if (rc == 0 && sv->auth_file != NULL)
        rc = load_users(sv);
    return rc;
}

void odbc_leader__serve_secrets_free(struct odbc_leader__serve *sv) {
    if (sv->tls_key != NULL)
        explicit_bzero(sv->tls_key, strlen(sv->tls_key));
    free(sv->tls_key);
    free(sv->tls_cert);
    free(sv->auth);
    sv->tls_key = sv->tls_cert = sv->auth = NULL;
}

/* Returns 1 when a and b (of length n) are equal, in time independent of
 * where they differ. */
static int same(const char *a, const char *b, size_t n) {
    unsigned char d = 0;

    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

int odbc_leader__serve_authorized(struct odbc_leader__serve *sv,
                                  struct MHD_Connection *conn) {
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(conn, &pass);
    struct crypt_data *cd = calloc(1, sizeof(*cd));
    const char *hash = sv->hashes[0], *got;
    int known = 0, ok = 0;

    if (user == NULL || pass == NULL || cd == NULL)
        goto out;
    for (size_t i = 0; i < sv->nusers; i++) {
        if (strcmp(sv->users[i], user) == 0) {
            hash = sv->hashes[i];
            known = 1;
            break;
        }
    }
    /* an unknown name still costs one hash, as a known one does */
    got = crypt_r(pass, hash, cd);
    ok = known && got != NULL && got[0] != '*' && strlen(got) == strlen(hash) &&
         same(got, hash, strlen(hash));
out:
    if (pass != NULL) {
        explicit_bzero(pass, strlen(pass));
        MHD_free(pass);
    }
    if (user != NULL)
        MHD_free(user);
    free(cd);
    return ok;
}

enum MHD_Result odbc_leader__serve_reply_auth(struct MHD_Connection *conn) {
    static const char msg[] = "authentication required\n";
    struct MHD_Response *r = MHD_create_response_from_buffer(
        sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret;

    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "text/plain; charset=utf-8");
    ret = MHD_queue_basic_auth_fail_response(conn, "odbc-leader", r);
    MHD_destroy_response(r);
    return ret;
}
