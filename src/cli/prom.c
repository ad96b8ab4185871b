/* SPDX-License-Identifier: MIT */
/*
 * prom.c: the Prometheus text writer (exposition format 0.0.4) of status
 * and serve. A family is declared once, with its name, type, help and
 * label names (struct odbc_leader__prom_family, cli.h); its HELP and TYPE
 * lines and every sample are written from that declaration, so each
 * sample of a family carries the same labels in the same order.
 */
#include <build_config.h>

#include <inttypes.h>

#include "cli.h"

/* The label names a family's namespace is given under. */
static const char ns_new[] = "leader_namespace";
static const char ns_old[] = "namespace";

/* Writes s escaped as a label value (no quotes) to f. */
static void label_value(FILE *f, const char *s) {
    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

/* Writes one label, name="value", after sep (',' or '{'). */
static void label(FILE *f, char sep, const char *name, const char *value) {
    fprintf(f, "%c%s=\"", sep, name);
    label_value(f, value);
    fputc('"', f);
}

/* Writes a sample's name and labels up to the blank before its value: ns
 * under the family's namespace labels, then values[i] under labels[i]. */
static void sample(FILE *f, const struct odbc_leader__prom_family *m,
                   const char *ns, const char *const *values) {
    char sep = '{';

    fputs(m->name, f);
    if (m->ns & ODBC_LEADER__PROM_NS_NEW) {
        label(f, sep, ns_new, ns);
        sep = ',';
    }
    if (m->ns & ODBC_LEADER__PROM_NS_OLD) {
        label(f, sep, ns_old, ns);
        sep = ',';
    }
    for (size_t i = 0; i < ODBC_LEADER__PROM_LABELS && m->labels[i] != NULL;
         i++) {
        label(f, sep, m->labels[i], values[i]);
        sep = ',';
    }
    fputs(sep == '{' ? " " : "} ", f);
}

void odbc_leader__prom_head(FILE *f, const struct odbc_leader__prom_family *m) {
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name,
            m->type == ODBC_LEADER__PROM_COUNTER ? "counter" : "gauge");
}

void odbc_leader__prom_int(FILE *f, const struct odbc_leader__prom_family *m,
                           const char *ns, const char *const *values,
                           int64_t v) {
    sample(f, m, ns, values);
    fprintf(f, "%" PRId64 "\n", v);
}

void odbc_leader__prom_ms(FILE *f, const struct odbc_leader__prom_family *m,
                          const char *ns, const char *const *values,
                          int64_t ms) {
    sample(f, m, ns, values);
    fprintf(f, "%.3f\n", (double)ms / 1e3);
}

void odbc_leader__prom_nanos(FILE *f, const struct odbc_leader__prom_family *m,
                             const char *ns, const char *const *values,
                             int64_t nanos) {
    sample(f, m, ns, values);
    fprintf(f, "%.6f\n", (double)nanos / 1e9);
}
