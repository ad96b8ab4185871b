/* SPDX-License-Identifier: MIT */
/*
 * group.pml: a Promela model of sharded groups (src/member.c, the
 * dialects' group_tick), checked with spin by model/check.sh (make
 * model). docs/protocol.md ("Sharded groups") explains the protocol.
 *
 * N = 2 members, K = 1 or 2 shards. A member is a process with incarnations
 * (a crash and restart under the same id starts the next one); each shard
 * row names its holder incarnation (0: vacant), its term, its expiry
 * (ticks left, 0 = expired) in database time. A member's tick is one
 * statement, sent, run by the database atomically at any later time (or
 * never, after a crash: an orphan), its answer arriving later still:
 *   release  the shards the member hands over, each named with the term
 *            it held (held by its own incarnation in that term): vacant
 *            at once; a release is sent with every statement until an
 *            answer shows the shard gone;
 *   renew    every other row of its incarnation that is unexpired;
 *   take     the shards it chose that are vacant, or expired and held by
 *            its own incarnation (unrenewed: it could not renew them), or
 *            expired and held by
 *            an incarnation on its dead list whose rows were not renewed
 *            since its sighting of that holder (renew_seq <= seen);
 *   answer   the shards it holds after the statement and, per other
 *            holder, whether that holder renewed anything since the
 *            member's last sighting (its highest renew_seq grew). A shard
 *            it held that the answer lacks is lost: the member forgets it
 *            (and may take it again) or releases it in the term it held
 *            (settle_lost(): the assignment gives it to another).
 * Which shards a member takes or releases is chosen freely at every tick:
 * the model covers every assignment and every disagreement of views.
 * Time is discrete: a database tick lowers every expiry by one; each
 * member's local clock advances S-1, S or S+1 units per tick (rates within
 * rho = 1/S). A trust window is W = TTL - margin local units from the
 * statement's send; a holder is on the dead list once the member has seen
 * its renewals stand still for one TTL on its own clock. With -DSTEPS the
 * database clock also steps forward any number of times by any amount
 * (any row's expiry drops to any smaller value), and the margin is
 * 2*T*S/(S+1) rounded up, as in leader.pml.
 *
 * Properties (assertions):
 *   NO_OVERLAP  no shard is inside two members' trust windows at once
 *               (monitor);
 *   TERMS       a shard's term only grows (the take writes term + 1),
 *               and a member starts trusting a shard only in a term no
 *               lower than one another member trusts (assert at each
 *               answer).
 * Smaller searches: with -DCRASH_ONE only member 0 crashes and restarts;
 * with -DNO_ORPHAN a statement given up on never runs (the configurations
 * of one shard cover orphans).
 *
 * Broken variants, each must give a counterexample:
 *   -DRELEASE_BEFORE_STOP  a released shard stays trusted until its
 *                          window ends (the host's work is not stopped
 *                          before the release: take before release)
 *   -DREVIVE_STALE         an answer that lacks a shard the member held
 *                          leaves it trusted (a member that revives after
 *                          a pause keeps its stale assignment)
 *   -DRELEASE_UNFENCED     a release matches the row by incarnation
 *                          alone: an orphan release of an old term
 *                          empties a later term the member took since
 *   -DSEQ_LOWERED          (with STEPS) a renewal writes its own seq even
 *                          when lower (not refuted within MAXSEQ 4 and
 *                          depth 40: not in check.sh; docs/protocol.md)
 *   -DNO_WATCH             (with STEPS) an expired row of any other
 *                          holder is taken at once (database time alone)
 */

#ifndef T
#define T 2 /* TTL in database ticks */
#endif
#ifndef S
#define S 2 /* local units per database tick, nominal */
#endif
#ifndef MAXTERM
#define MAXTERM 2 /* bound: no take above this term */
#endif
#ifndef MAXSEQ
#define MAXSEQ 4 /* bound: ticks per incarnation of a member */
#endif
#ifndef MAXINC
#define MAXINC 2 /* incarnations per member: one crash and restart */
#endif
#define N 2
#ifndef K
#define K 2 /* shards: 1 or 2 */
#endif
#define TTL_L (T * S)
#ifdef STEPS
#define M ((2 * T * S + S) / (S + 1))
#else
#define M T
#endif
#define W (TTL_L - M) /* trust window, local units */
/* holder incarnations: 1 + p * MAXINC + (incarnation - 1); 0 = vacant */
#define HOLDERS (1 + N * MAXINC)
#define INC(p) (1 + (p) * MAXINC + (inc[p] - 1))

#define IDLE 0
#define SENT 1 /* sent, not yet run */
#define RAN 2  /* run, its answer on the way */

/* the database */
byte hold[K];   /* holder incarnation, 0 vacant */
byte term[K];   /* the shard's term */
byte exp[K];    /* ticks left, 0 = expired */
byte rseq[K];   /* renew_seq: the seq of the tick that last renewed or
                   took the row (a renewal never lowers it) */

/* the members */
byte inc[N];           /* current incarnation (1..MAXINC) */
byte trust[N * K];     /* [p * K + s]: local units left in the window */
byte held[N * K];      /* the term the member believes it holds, 0 none */
bool relp[N * K];      /* a release of held[] is pending: sent with every
                          statement until an answer shows the shard gone */
bool lost[N * K];      /* the last answer lacked held[] (settle_lost()):
                          the next send takes it again or releases it */
byte sq[N];            /* the seq of the member's last tick (1..MAXSEQ) */
byte seen[N * HOLDERS]; /* [p * HOLDERS + h]: the highest renew_seq of
                           holder h the member has seen */
byte wt[N * HOLDERS];  /* local units since the answer that showed it */
bool wseen[N * HOLDERS];

/* Statements in flight: slot q = p is member p's current statement, slot
 * q = N + p one it gave up on (a time-out, a lost connection, a crash):
 * an orphan, which the database may still run at any later time, or
 * never, and whose answer is dropped. */
#define Q (2 * N)
byte phase[Q];
byte sinc[Q];           /* the incarnation that sent it */
byte win[Q];            /* local units left of the window it would open */
byte sseq[Q];           /* its seq */
bool rel[Q * K];        /* its release list */
byte rterm[Q * K];      /* the term each release names */
bool tak[Q * K];        /* its take list */
bool dead[Q * HOLDERS]; /* its dead list: holder h ... */
byte dseen[Q * HOLDERS]; /* ... with the highest renew_seq seen of it */
byte got[Q * K];        /* answer: the term held after it ran, 0 none */
byte hmax[Q * HOLDERS]; /* answer: holder h's highest renew_seq, 0 when
                           it holds no row */

/* locals of init, used by the inlines; CLEAN zeroes them (and the
 * answer of a slot once read) at the end of every step, so that they do
 * not tell states apart */
byte p, q, s, h, w, a, me;
#define CLEAN p = 0; q = 0; s = 0; h = 0; w = 0; a = 0; me = 0

/* Forgets the answer of slot q once read or dropped. */
inline forget(q)
{
    s = 0;
    do
    :: s < K -> got[q * K + s] = 0; s++
    :: else -> break
    od;
    h = 0;
    do
    :: h < HOLDERS -> hmax[q * HOLDERS + h] = 0; h++
    :: else -> break
    od
}

#define TR(p, s) (trust[(p) * K + (s)] > 0)
#if K == 1
#define NO_OVERLAP (!(TR(0, 0) && TR(1, 0)))
#else
#define NO_OVERLAP (!(TR(0, 0) && TR(1, 0)) && !(TR(0, 1) && TR(1, 1)))
#endif

/* the monitor: checked in every reachable state */
active proctype monitor()
{
end:
    do
    :: assert(NO_OVERLAP)
    od
}

/* The database runs the statement in slot q (of incarnation sinc[q],
 * member q % N, whose sightings it updates). */
inline db_run(q)
{
    me = sinc[q];
    p = q % N;
    s = 0;
    do
    :: s < K ->
        if
        :: hold[s] == me && rel[q * K + s] &&
#ifdef RELEASE_UNFENCED
           1 ->
#else
           term[s] == rterm[q * K + s] ->
#endif
            hold[s] = 0; exp[s] = 0
        :: hold[s] == me && !rel[q * K + s] && exp[s] > 0 ->
            exp[s] = T;
#ifdef SEQ_LOWERED
            rseq[s] = sseq[q]
#else
            rseq[s] = (rseq[s] > sseq[q] -> rseq[s] : sseq[q])
#endif
        :: hold[s] == me && tak[q * K + s] && exp[s] == 0 &&
           term[s] < MAXTERM ->
            /* its own incarnation's row, expired unrenewed: taken back in
             * a new term, its seq never lowered */
            term[s] = term[s] + 1;
            exp[s] = T;
            rseq[s] = (rseq[s] > sseq[q] -> rseq[s] : sseq[q])
        :: hold[s] != me && tak[q * K + s] && term[s] < MAXTERM &&
           (hold[s] == 0 ||
#ifdef NO_WATCH
            exp[s] == 0
#else
            (exp[s] == 0 && dead[q * HOLDERS + hold[s]] &&
             rseq[s] <= dseen[q * HOLDERS + hold[s]])
#endif
           ) ->
            term[s] = term[s] + 1;
            hold[s] = me; exp[s] = T;
            rseq[s] = sseq[q]
        :: else -> skip
        fi;
        s++
    :: else -> break
    od;
    /* the answer: shards held (renewed or taken by this statement: both
     * set exp to T, and nothing else runs in between) and the sightings */
    s = 0;
    do
    :: s < K ->
        got[q * K + s] = (hold[s] == me && exp[s] == T -> term[s] : 0);
        s++
    :: else -> break
    od;
    h = 1;
    do
    :: h < HOLDERS ->
        hmax[q * HOLDERS + h] = 0;
        s = 0;
        do
        :: s < K ->
            if
            :: hold[s] == h && h != me && rseq[s] > hmax[q * HOLDERS + h] ->
                hmax[q * HOLDERS + h] = rseq[s]
            :: else -> skip
            fi;
            s++
        :: else -> break
        od;
        h++
    :: else -> break
    od
}

/* Member p's answer arrives. */
inline answer(p)
{
    s = 0;
    do
    :: s < K ->
        if
        :: got[p * K + s] != 0 && win[p] > 0 ->
            /* TERMS: no other member trusts a newer term of it */
            assert(!TR(1 - p, s) || held[(1 - p) * K + s] <= got[p * K + s]);
            trust[p * K + s] = win[p];
            held[p * K + s] = got[p * K + s]
        :: got[p * K + s] != 0 && win[p] == 0 ->
            trust[p * K + s] = 0; /* late: held, not trusted */
            held[p * K + s] = got[p * K + s]
        :: got[p * K + s] == 0 ->
#ifdef REVIVE_STALE
            if
            :: held[p * K + s] != 0 && win[p] > 0 ->
                trust[p * K + s] = win[p]
            :: else -> trust[p * K + s] = 0; held[p * K + s] = 0;
                relp[p * K + s] = 0
            fi
#else
            if
            :: held[p * K + s] != 0 && !relp[p * K + s] ->
                /* lost: settled at the next send (settle_lost()) */
                trust[p * K + s] = 0;
                lost[p * K + s] = 1
            :: else ->
                trust[p * K + s] = 0;
                held[p * K + s] = 0;
                relp[p * K + s] = 0
            fi
#endif
        fi;
        s++
    :: else -> break
    od;
    h = 1;
    do
    :: h < HOLDERS ->
        /* as take_holders(): a holder not listed is forgotten; a watch
         * starts at the answer that shows a higher renew_seq */
        if
        :: hmax[p * HOLDERS + h] == 0 ->
            wseen[p * HOLDERS + h] = 0; wt[p * HOLDERS + h] = 0;
            seen[p * HOLDERS + h] = 0
        :: hmax[p * HOLDERS + h] != 0 &&
           (!wseen[p * HOLDERS + h] ||
            hmax[p * HOLDERS + h] > seen[p * HOLDERS + h]) ->
            wseen[p * HOLDERS + h] = 1; wt[p * HOLDERS + h] = 0;
            seen[p * HOLDERS + h] = hmax[p * HOLDERS + h]
        :: else -> skip
        fi;
        h++
    :: else -> break
    od
}

/* Member p sends a tick: it stops the shards it releases first, and
 * lists the holders it has watched standing still for one TTL. Bit s of
 * m, chosen freely before, says for a shard it holds whether to release
 * it, for a shard it does not hold whether to take it. */
inline send(p, m)
{
    sinc[p] = INC(p);
    sq[p] = sq[p] + 1;
    sseq[p] = sq[p];
    win[p] = W;
    s = 0;
    do
    :: s < K ->
        rel[p * K + s] = 0;
        rterm[p * K + s] = 0;
        tak[p * K + s] = 0;
        if
        :: lost[p * K + s] && (m & (1 << s)) ->
            /* lost, the assignment gives it to another: released in the
             * term it was held in */
            lost[p * K + s] = 0;
            relp[p * K + s] = 1;
            rel[p * K + s] = 1;
            rterm[p * K + s] = held[p * K + s]
        :: lost[p * K + s] && !(m & (1 << s)) ->
            /* lost, the assignment gives it to this member: taken again */
            lost[p * K + s] = 0;
            held[p * K + s] = 0;
            tak[p * K + s] = 1
        :: !lost[p * K + s] && held[p * K + s] != 0 &&
           (relp[p * K + s] || (m & (1 << s))) ->
            relp[p * K + s] = 1;
            rel[p * K + s] = 1;
            rterm[p * K + s] = held[p * K + s];
#ifndef RELEASE_BEFORE_STOP
            trust[p * K + s] = 0
#else
            skip
#endif
        :: held[p * K + s] == 0 && (m & (1 << s)) ->
            tak[p * K + s] = 1
        :: else -> skip
        fi;
        s++
    :: else -> break
    od;
    h = 1;
    do
    :: h < HOLDERS ->
        dead[p * HOLDERS + h] =
            (wseen[p * HOLDERS + h] && wt[p * HOLDERS + h] >= TTL_L);
        dseen[p * HOLDERS + h] =
            (dead[p * HOLDERS + h] -> seen[p * HOLDERS + h] : 0);
        h++
    :: else -> break
    od;
    phase[p] = SENT
}

/* Member p gives up on its statement (a time-out, a lost connection):
 * a statement not yet run becomes the orphan of slot N + p when that slot
 * is free, else it never runs. */
inline give_up(p)
{
#ifdef NO_ORPHAN
    phase[p] = IDLE
#else
    if
    :: phase[p] == SENT && phase[N + p] == IDLE ->
        sinc[N + p] = sinc[p];
        sseq[N + p] = sseq[p];
        s = 0;
        do
        :: s < K ->
            rel[(N + p) * K + s] = rel[p * K + s];
            rterm[(N + p) * K + s] = rterm[p * K + s];
            tak[(N + p) * K + s] = tak[p * K + s];
            s++
        :: else -> break
        od;
        h = 0;
        do
        :: h < HOLDERS ->
            dead[(N + p) * HOLDERS + h] = dead[p * HOLDERS + h];
            dseen[(N + p) * HOLDERS + h] = dseen[p * HOLDERS + h];
            h++
        :: else -> break
        od;
        phase[N + p] = SENT;
        phase[p] = IDLE
    :: phase[p] == SENT && phase[N + p] != IDLE -> phase[p] = IDLE
    :: else -> skip
    fi
#endif
}

/* Member p crashes and restarts under the same id: its local state is
 * gone; a statement in flight becomes an orphan, which may still run. */
inline crash(p)
{
    s = 0;
    do
    :: s < K ->
        trust[p * K + s] = 0; held[p * K + s] = 0; relp[p * K + s] = 0;
        lost[p * K + s] = 0; s++
    :: else -> break
    od;
    h = 0;
    do
    :: h < HOLDERS ->
        wseen[p * HOLDERS + h] = 0; wt[p * HOLDERS + h] = 0;
        seen[p * HOLDERS + h] = 0; h++
    :: else -> break
    od;
    give_up(p);
    if
    :: phase[p] == RAN -> phase[p] = IDLE /* its answer is dropped */
    :: else -> skip
    fi;
    inc[p] = inc[p] + 1;
    sq[p] = 0
}

/* One database tick: expiries fall by one; member p's clock advances by
 * its rate r (S-1, S or S+1 local units, chosen before): windows shrink,
 * watches grow. */
inline advance(p, r)
{
    s = 0;
    do
    :: s < K ->
        trust[p * K + s] = (trust[p * K + s] > r -> trust[p * K + s] - r : 0);
        s++
    :: else -> break
    od;
    win[p] = (win[p] > r -> win[p] - r : 0);
    h = 0;
    do
    :: h < HOLDERS ->
        if
        :: wseen[p * HOLDERS + h] ->
            wt[p * HOLDERS + h] =
                (wt[p * HOLDERS + h] + r < TTL_L -> wt[p * HOLDERS + h] + r
                                                 : TTL_L)
        :: else -> skip
        fi;
        h++
    :: else -> break
    od
}

inline clock_tick()
{
    s = 0;
    do
    :: s < K -> exp[s] = (exp[s] > 0 -> exp[s] - 1 : 0); s++
    :: else -> break
    od;
    advance(0, a);
    advance(1, w)
}

/* A rate choice: r is S-1, S or S+1. */
#define RATE(r) if :: r = S - 1 :: r = S :: r = S + 1 fi
/* A free choice of the K bits of m. */
#if K == 1
#define PICK(m) if :: m = 0 :: m = 1 fi
#else
#define PICK(m) if :: m = 0 :: m = 1 :: m = 2 :: m = 3 fi
#endif

init
{
    inc[0] = 1;
    inc[1] = 1;
    do
    :: atomic { RATE(a); RATE(w); d_step { clock_tick(); CLEAN } }
#ifdef STEPS
    :: atomic {
           if
           :: exp[0] > 0 -> d_step { exp[0] = exp[0] - 1 }
#if K == 2
           :: exp[1] > 0 -> d_step { exp[1] = exp[1] - 1 }
#endif
           fi
       }
#endif
    :: atomic {
           phase[0] == IDLE && sq[0] < MAXSEQ ->
           PICK(me); d_step { send(0, me); CLEAN }
       }
    :: atomic {
           phase[1] == IDLE && sq[1] < MAXSEQ ->
           PICK(me); d_step { send(1, me); CLEAN }
       }
    :: d_step { phase[0] == SENT -> db_run(0); phase[0] = RAN; CLEAN }
    :: d_step { phase[1] == SENT -> db_run(1); phase[1] = RAN; CLEAN }
    :: d_step {
           phase[2] == SENT -> db_run(2); forget(2); phase[2] = IDLE; CLEAN
       }
    :: d_step {
           phase[3] == SENT -> db_run(3); forget(3); phase[3] = IDLE; CLEAN
       }
    :: d_step { phase[2] == SENT -> phase[2] = IDLE } /* never runs */
    :: d_step { phase[3] == SENT -> phase[3] = IDLE }
    :: d_step {
           phase[0] == RAN -> answer(0); forget(0); phase[0] = IDLE; CLEAN
       }
    :: d_step {
           phase[1] == RAN -> answer(1); forget(1); phase[1] = IDLE; CLEAN
       }
    :: d_step { phase[0] == SENT -> give_up(0); CLEAN }
    :: d_step { phase[1] == SENT -> give_up(1); CLEAN }
    :: d_step { inc[0] < MAXINC -> crash(0); forget(0); CLEAN }
#ifndef CRASH_ONE
    :: d_step { inc[1] < MAXINC -> crash(1); forget(1); CLEAN }
#endif
    od
}
