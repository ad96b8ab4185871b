/* SPDX-License-Identifier: MIT */
/*
 * serve_page.c: serve's page, GET /: every namespace rendered now, with
 * the style of page.css; and GET /dashboard.js, the script that keeps the
 * page current (both files are built into the command by
 * build-aux/embed-text.sh). The markup here is what dashboard.js looks
 * for: section[data-ns] holding h2, p.state (b.leader) and
 * table.candidates; dashboard.js adds the rest.
 */
#include <build_config.h>

#include <string.h>

#include "serve.h"

extern const char odbc_leader__page_css[];
extern const char odbc_leader__dashboard_js[];

/* Writes the state line and the candidates of snapshot s. */
static void page_state(const struct odbc_leader__snapshot *s, FILE *f) {
    if (s->present) {
        fputs("<p class=\"state\">leader <b class=\"leader\">", f);
        odbc_leader__http_html(f, s->lease.leader_id);
        fprintf(f, "</b>, term %lld, lease %.1f s left</p>\n",
                (long long)s->lease.term, (double)s->remaining_ms / 1e3);
    } else {
        fprintf(f, "<p class=\"state bad\">no leader (last term %lld)</p>\n",
                (long long)s->lease.term);
    }
    fprintf(f,
            "<table class=\"candidates\"><tr><th>candidate (%zu alive)</th>"
            "<th>last heartbeat</th></tr>\n",
            s->n);
    for (size_t i = 0; i < s->n; i++) {
        fputs("<tr><td>", f);
        odbc_leader__http_html(f, s->cands[i].id);
        fprintf(f, "</td><td>%.1f s ago</td></tr>\n",
                (double)(s->cands[i].db_now_ms - s->cands[i].heartbeat_at_ms) /
                    1e3);
    }
    fputs("</table>", f);
}

/* Writes one namespace's section of the page. */
static void page_ns(struct odbc_leader__serve *sv,
                    struct odbc_leader__serve_ns *ns, FILE *f) {
    struct odbc_leader__snapshot s;

    fputs("<section data-ns=\"", f);
    odbc_leader__http_html(f, ns->name);
    fputs("\"><h2>", f);
    odbc_leader__http_html(f, ns->name);
    fputs("</h2>\n", f);
    if (odbc_leader__serve_snapshot(sv, ns, &s) != 0) {
        fputs("<p class=\"state bad\">cannot read: ", f);
        odbc_leader__http_html(f, ns->error);
        fputs("</p></section>\n", f);
        return;
    }
    page_state(&s, f);
    fputs("</section>\n", f);
    odbc_leader__cli_snapshot_free(&s);
}

enum MHD_Result odbc_leader__serve_page(struct odbc_leader__serve *sv,
                                        struct MHD_Connection *conn) {
    struct odbc_leader__body b;

    if (odbc_leader__httpd_body_open(&b) != 0)
        return MHD_NO;
    fprintf(b.f,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<noscript><meta http-equiv=\"refresh\" content=\"5\"></noscript>"
            "<title>odbc-leader</title><style>%s</style>"
            "<script src=\"dashboard.js\" defer></script></head><body>\n"
            "<h1>odbc-leader</h1><p id=\"updated\"></p>\n"
            "<div id=\"namespaces\">\n",
            odbc_leader__page_css);
    for (size_t i = 0; i < sv->n; i++)
        page_ns(sv, &sv->ns[i], b.f);
    fputs("</div><p><a href=\"metrics\">metrics</a> · <a "
          "href=\"api/v1/namespaces\">JSON</a></p></body></html>\n",
          b.f);
    return odbc_leader__httpd_reply_body(conn, MHD_HTTP_OK,
                                         "text/html; charset=utf-8", &b);
}

enum MHD_Result odbc_leader__serve_script(struct MHD_Connection *conn) {
    struct MHD_Response *r = MHD_create_response_from_buffer(
        strlen(odbc_leader__dashboard_js), (void *)odbc_leader__dashboard_js,
        MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret;

    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            "text/javascript; charset=utf-8");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}
