/* SPDX-License-Identifier: MIT */
/*
 * fault-proxy.c: a TCP forwarder on loopback that the fault suite puts
 * between candidates and the database, to stall or cut the network.
 *
 *   fault-proxy -t TARGET_PORT [-l LISTEN_PORT]
 *
 * It listens on 127.0.0.1:LISTEN_PORT (0 or absent: any free port), prints
 * the port it got on stdout, and forwards each connection to
 * 127.0.0.1:TARGET_PORT. Signals steer it:
 *   SIGUSR1  stall: stop reading from any socket and stop accepting; bytes
 *            in flight stay where they are and new connects wait in the
 *            listen backlog, as behind a dead switch
 *   SIGHUP   cut: close every connection and close new ones at once, as
 *            when the database host is unreachable
 *   SIGUSR2  back to forwarding
 *   SIGWINCH lose one answer: the next bytes a client sends (on any
 *            connection) are forwarded, and when the server's first answer
 *            to them arrives the proxy reads it and closes that connection
 *            on both sides; the server has run the request, the client
 *            never learns its outcome. One-shot, in FORWARD mode
 *   SIGTERM  exit
 * One thread, poll(2), signals through a signalfd: no handler, no global.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONN 256
#define BUF_SIZE 65536

enum mode { FORWARD, STALL, CUT };

/* One direction of a connection: bytes read from src, not yet written to
 * the other side. */
struct pipe_buf {
    char data[BUF_SIZE];
    size_t off, len;
};

struct conn {
    int fd[2];              /* 0 client, 1 server; -1 when closed */
    struct pipe_buf buf[2]; /* buf[i]: read from fd[i], to write to fd[!i] */
    int losing;             /* the server's next answer is lost (SIGWINCH) */
};

struct proxy {
    int listen_fd, sig_fd, target_port;
    enum mode mode;
    int lose;                 /* armed by SIGWINCH: see the header */
    struct conn *c[MAX_CONN]; /* owned */
};

/* Closes both sides of connection i and frees it. */
static void drop(struct proxy *px, int i) {
    struct conn *c = px->c[i];

    if (c == NULL)
        return;
    close(c->fd[0]);
    close(c->fd[1]);
    free(c);
    px->c[i] = NULL;
}

/* Returns a socket connected to 127.0.0.1:port, or -1. */
static int connect_target(int port) {
    struct sockaddr_in sa = {0};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    if (fd < 0)
        return -1;
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* Accepts one client and connects it to the target; in CUT mode closes it
 * at once. */
static void accept_one(struct proxy *px) {
    int fd = accept4(px->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK),
        i, up;
    struct conn *c;

    if (fd < 0)
        return;
    if (px->mode == CUT)
        goto fail;
    for (i = 0; i < MAX_CONN && px->c[i] != NULL; i++)
        ;
    up = i < MAX_CONN ? connect_target(px->target_port) : -1;
    if (up < 0)
        goto fail;
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        close(up);
        goto fail;
    }
    c->fd[0] = fd;
    c->fd[1] = up;
    px->c[i] = c;
    return;
fail:
    close(fd);
}

/* Moves bytes for connection c according to the poll results in r[2];
 * *lose is the proxy's SIGWINCH flag, taken by the first client bytes
 * read. Returns 0, or -1 when the connection ended or is to be cut (the
 * answer it was to lose has arrived). */
static int pump(struct conn *c, const short r[2], int *lose) {
    int s;

    for (s = 0; s < 2; s++) {
        struct pipe_buf *b = &c->buf[s];
        ssize_t n;

        if ((r[s] & (POLLIN | POLLHUP | POLLERR)) && b->len == 0) {
            n = read(c->fd[s], b->data, sizeof(b->data));
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                return -1;
            b->off = 0;
            b->len = n > 0 ? (size_t)n : 0;
            if (n > 0 && s == 0 && *lose) {
                *lose = 0;
                c->losing = 1;
            } else if (n > 0 && s == 1 && c->losing) {
                return -1; /* the answer: dropped with the connection */
            }
        }
        if (b->len > 0) {
            n = write(c->fd[!s], b->data + b->off, b->len);
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                return -1;
            if (n > 0) {
                b->off += (size_t)n;
                b->len -= (size_t)n;
            }
        }
    }
    return 0;
}

/* Reads one signal from the signalfd and changes mode. Returns 1 on
 * SIGTERM/SIGINT, else 0. */
static int on_signal(struct proxy *px) {
    struct signalfd_siginfo si;
    int i;

    if (read(px->sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
        return 0;
    switch (si.ssi_signo) {
    case SIGUSR1:
        px->mode = STALL;
        break;
    case SIGUSR2:
        px->mode = FORWARD;
        break;
    case SIGWINCH:
        px->lose = 1;
        break;
    case SIGHUP:
        px->mode = CUT;
        for (i = 0; i < MAX_CONN; i++)
            drop(px, i);
        break;
    default:
        return 1;
    }
    return 0;
}

/* The poll loop; returns when asked to exit. */
static void serve(struct proxy *px) {
    struct pollfd pfd[2 + 2 * MAX_CONN];
    int idx[MAX_CONN];

    for (;;) {
        int n = 0, i, s;

        pfd[n++] = (struct pollfd){px->sig_fd, POLLIN, 0};
        pfd[n++] =
            (struct pollfd){px->listen_fd, px->mode == STALL ? 0 : POLLIN, 0};
        for (i = 0; i < MAX_CONN; i++) {
            struct conn *c = px->c[i];

            idx[i] = -1;
            if (c == NULL)
                continue;
            idx[i] = n;
            for (s = 0; s < 2; s++) {
                short ev = 0;

                if (px->mode == FORWARD && c->buf[s].len == 0)
                    ev |= POLLIN;
                if (px->mode == FORWARD && c->buf[!s].len > 0)
                    ev |= POLLOUT;
                /* a negative fd is skipped: a stalled peer's hangup must
                 * not wake the loop */
                pfd[n++] =
                    (struct pollfd){px->mode == FORWARD ? c->fd[s] : -1, ev, 0};
            }
        }
        if (poll(pfd, (nfds_t)n, -1) < 0 && errno != EINTR)
            return;
        /* signals first: a SIGWINCH sent before a client's request is
         * armed before that request is read */
        if ((pfd[0].revents & POLLIN) && on_signal(px))
            return;
        if (px->mode != STALL && (pfd[1].revents & POLLIN))
            accept_one(px);
        for (i = 0; i < MAX_CONN; i++) {
            short r[2];

            if (idx[i] < 0 || px->c[i] == NULL || px->mode != FORWARD)
                continue;
            r[0] = pfd[idx[i]].revents;
            r[1] = pfd[idx[i] + 1].revents;
            if ((r[0] | r[1]) != 0 && pump(px->c[i], r, &px->lose) != 0)
                drop(px, i);
        }
    }
}

/* Opens the listening socket on 127.0.0.1:port; returns it or -1 and
 * stores the port actually bound in *bound. */
static int listen_on(int port, int *bound) {
    struct sockaddr_in sa = {0};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        close(fd);
        return -1;
    }
    *bound = ntohs(sa.sin_port);
    return fd;
}

int main(int argc, char **argv) {
    struct proxy px = {.listen_fd = -1, .sig_fd = -1, .mode = FORWARD};
    int opt, port = 0, bound = 0, status = 1, i;
    sigset_t sigs;

    for (opt = getopt(argc, argv, "l:t:"); opt != -1;
         opt = getopt(argc, argv, "l:t:")) {
        if (opt == 'l')
            port = atoi(optarg);
        else if (opt == 't')
            px.target_port = atoi(optarg);
        else
            goto usage;
    }
    if (px.target_port <= 0 || optind != argc)
        goto usage;
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGUSR1);
    sigaddset(&sigs, SIGUSR2);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGWINCH);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    px.sig_fd = signalfd(-1, &sigs, SFD_CLOEXEC);
    px.listen_fd = listen_on(port, &bound);
    if (px.sig_fd < 0 || px.listen_fd < 0) {
        perror("fault-proxy");
        goto out;
    }
    printf("%d\n", bound);
    fflush(stdout);
    serve(&px);
    status = 0;
out:
    for (i = 0; i < MAX_CONN; i++)
        drop(&px, i);
    if (px.listen_fd >= 0)
        close(px.listen_fd);
    if (px.sig_fd >= 0)
        close(px.sig_fd);
    return status;
usage:
    fprintf(stderr, "usage: fault-proxy -t TARGET_PORT [-l LISTEN_PORT]\n");
    return 2;
}
