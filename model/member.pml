/* SPDX-License-Identifier: MIT */
/*
 * member.pml: a Promela model of sharded groups whose shards are held
 * under their member's lease (docs/protocol.md, "Shards held under the
 * member's lease"), checked with spin by model/check.sh (make model).
 * This is the rule every shipped group dialect runs (src/member.c, with a
 * tick that answers an S row), so that a member's steady tick writes one
 * row whatever the number of shards it holds; the earlier rule, which
 * renews every shard row (still run for a site's dialect written for
 * it), is model/group.pml.
 *
 * N = 2 members, K = 1 or 2 shards. Each member incarnation h (a crash
 * and restart under the same id starts the next one, and so does a lapse,
 * below) has one lease row: its expiry (ticks left, 0 = expired) and its
 * renewal counter (the seq of the tick that last renewed it, never
 * lowered), in database time. A shard row names its holder incarnation
 * (0: vacant) and its term, and is written only when the shard moves. A
 * member's tick is one statement, sent, run by the database atomically at
 * any later time (or never, after a crash: an orphan), its answer
 * arriving later still:
 *   release  the shards the member hands over, each named with the term
 *            it held (held by its own incarnation in that term): vacant
 *            at once; a release is sent with every statement until an
 *            answer shows the shard gone;
 *   renew    the incarnation's lease row while unexpired (its first
 *            statement creates it). An expired lease is never renewed:
 *            the incarnation has lapsed, and the member, told so by the
 *            answer, forgets every shard and goes on as a new
 *            incarnation;
 *   take     only when the lease is live after the renew: the shards it
 *            chose that are vacant, or held by another incarnation whose
 *            lease expired in database time and which the member has
 *            watched standing still for one TTL on its own clock (its
 *            dead list: the lease's counter no higher than the member's
 *            last sighting); a take writes the shard's term + 1;
 *   answer   whether the lease was renewed, the shards the incarnation
 *            holds, and every other incarnation's lease counter.
 * The member trusts every shard the answer names for the window of the
 * statement, W local units from its send: nothing is renewed per shard.
 * A steady tick (docs/protocol.md, "A steady tick"), which takes and
 * releases nothing, may read no shard row: its answer says only whether
 * the lease was renewed, and the member then trusts the shards it
 * believes it holds (its last answer with rows, and its own releases
 * since) for the new window; whether a tick with nothing to list is
 * steady is chosen freely (the engine reads every row every two TTLs).
 * Which shards a member takes or releases is chosen freely at every tick:
 * the model covers every assignment and every disagreement of views.
 * Time is discrete: a database tick lowers every lease's expiry by one;
 * each member's local clock advances S-1, S or S+1 units per tick (rates
 * within rho = 1/S). W = TTL - margin local units. With -DSTEPS the
 * database clock also steps forward any number of times by any amount
 * (any lease's expiry drops to any smaller value), and the margin is
 * 2*T*S/(S+1) rounded up, as in leader.pml.
 *
 * Properties (assertions):
 *   NO_OVERLAP  no shard is inside two members' trust windows at once
 *               (after every step);
 *   TERMS       a shard's term only grows (a take writes term + 1), and a
 *               member starts trusting a shard only in a term no lower
 *               than one another member trusts (assert at each answer).
 * Smaller searches: with -DCRASH_ONE only member 0 crashes and restarts;
 * with -DNO_ORPHAN a statement given up on never runs (the configurations
 * of one shard cover orphans).
 *
 * Broken variants, each must give a counterexample:
 *   -DLAPSE_TRUSTED        the member trusts the shards the rows name
 *                          whether or not its lease was renewed (a shard
 *                          trusted after its holder's lease lapsed)
 *   -DSTEADY_RELEASE       a tick that releases may be steady: its answer
 *                          trusts again what the member believed it held,
 *                          the shard it released included
 *   -DRELEASE_BEFORE_STOP  a released shard stays trusted until its
 *                          window ends (take before release)
 *   -DRELEASE_UNFENCED     a release matches the row by incarnation
 *                          alone: an orphan release of an old term
 *                          empties a later term the member took since
 *   -DNO_WATCH             (with STEPS) a shard whose holder's lease
 *                          expired is taken at once (database time alone)
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
#define MAXINC 2 /* incarnations per member */
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
#define STEADY_M (1 << K) /* send's m: a steady tick, if it lists nothing */
/* holder incarnations: 1 + p * MAXINC + (incarnation - 1); 0 = vacant */
#define HOLDERS (1 + N * MAXINC)
#define INC(p) (1 + (p) * MAXINC + (inc[p] - 1))

#define IDLE 0
#define SENT 1 /* sent, not yet run */
#define RAN 2  /* run, its answer on the way */

/* the database: shard rows, written only on a move */
byte hold[K]; /* holder incarnation, 0 vacant */
byte term[K]; /* the shard's term */
/* the database: one lease row per member incarnation */
bool lreg[HOLDERS]; /* created (by the incarnation's first statement) */
byte lexp[HOLDERS]; /* ticks left, 0 = expired */
byte lseq[HOLDERS]; /* renew_seq: the seq of the tick that last renewed
                       it (a renewal never lowers it) */

/* the members */
byte inc[N];           /* current incarnation (1..MAXINC) */
byte trust[N * K];     /* [p * K + s]: local units left in the window */
byte held[N * K];      /* the term the member believes it holds, 0 none */
bool relp[N * K];      /* a release of held[] is pending: sent with every
                          statement until an answer shows the shard gone */
bool stdy[N];          /* the member's statement in flight is steady: its
                          answer names no shard */
byte sq[N];            /* the seq of the member's last tick (1..MAXSEQ) */
byte seen[N * HOLDERS]; /* [p * HOLDERS + h]: the highest counter of
                           incarnation h's lease the member has seen */
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
bool dead[Q * HOLDERS]; /* its dead list: incarnation h ... */
byte dseen[Q * HOLDERS]; /* ... with the highest counter seen of it */
bool ok[Q];             /* answer: the lease was renewed */
byte got[Q * K];        /* answer: the term held after it ran, 0 none */
byte hmax[Q * HOLDERS]; /* answer: incarnation h's lease counter, 0 when
                           it has no lease row */

/* locals of init, used by the inlines; CLEAN zeroes them at the end of
 * every step, so that they do not tell states apart, and checks
 * NO_OVERLAP there: in the state every step leaves (only init changes
 * the state). Not in a monitor process: with spin's partial order
 * reduction such a monitor missed this model's LAPSE_TRUSTED violation,
 * which the same search without the reduction (-DNOREDUCE) found. */
byte p, q, s, h, w, a, me;
#define CLEAN p = 0; q = 0; s = 0; h = 0; w = 0; a = 0; me = 0; \
    assert(NO_OVERLAP)

/* Forgets the answer of slot q once read or dropped. */
inline forget(q)
{
    ok[q] = 0;
    if
    :: q < N -> stdy[q] = 0
    :: else -> skip
    fi;
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

/* The database runs the statement in slot q (of incarnation sinc[q]). */
inline db_run(q)
{
    me = sinc[q];
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
            hold[s] = 0
        :: else -> skip
        fi;
        s++
    :: else -> break
    od;
    if
    :: !lreg[me] || lexp[me] > 0 ->
        lreg[me] = 1;
        lexp[me] = T;
        lseq[me] = (lseq[me] > sseq[q] -> lseq[me] : sseq[q]);
        ok[q] = 1
    :: else -> ok[q] = 0 /* lapsed: never renewed again */
    fi;
    s = 0;
    do
    :: s < K ->
        if
        :: ok[q] && hold[s] != me && tak[q * K + s] && term[s] < MAXTERM &&
           (hold[s] == 0 ||
#ifdef NO_WATCH
            lexp[hold[s]] == 0
#else
            (lexp[hold[s]] == 0 && dead[q * HOLDERS + hold[s]] &&
             lseq[hold[s]] <= dseen[q * HOLDERS + hold[s]])
#endif
           ) ->
            term[s] = term[s] + 1;
            hold[s] = me
        :: else -> skip
        fi;
#ifdef LAPSE_TRUSTED
        got[q * K + s] = (hold[s] == me -> term[s] : 0);
#else
        got[q * K + s] = (ok[q] && hold[s] == me -> term[s] : 0);
#endif
        s++
    :: else -> break
    od;
    h = 1;
    do
    :: h < HOLDERS ->
        hmax[q * HOLDERS + h] = (h != me && lreg[h] -> lseq[h] : 0);
        h++
    :: else -> break
    od
}

/* Member p's local state is gone (a crash, a lapse): it trusts and holds
 * nothing. */
inline drop_all(p)
{
    s = 0;
    do
    :: s < K ->
        trust[p * K + s] = 0; held[p * K + s] = 0; relp[p * K + s] = 0;
        s++
    :: else -> break
    od
}

/* The answer of member p's steady tick, its lease renewed: the shards it
 * believes it holds are trusted for the statement's window (held, not
 * trusted, when the answer came too late). */
inline steady(p)
{
    s = 0;
    do
    :: s < K ->
        if
        :: held[p * K + s] != 0 && win[p] > 0 ->
            assert(!TR(1 - p, s) ||
                   held[(1 - p) * K + s] <= held[p * K + s]);
            trust[p * K + s] = win[p]
        :: else -> trust[p * K + s] = 0
        fi;
        s++
    :: else -> break
    od
}

/* The answer of member p's tick that read its rows: it trusts the shards
 * the rows name for the statement's window (held, not trusted, when the
 * answer came too late) and forgets the others. */
inline rows(p)
{
    s = 0;
    do
    :: s < K ->
        if
        :: got[p * K + s] != 0 && win[p] > 0 ->
            /* TERMS: no other member trusts a newer term of it */
            assert(!TR(1 - p, s) ||
                   held[(1 - p) * K + s] <= got[p * K + s]);
            trust[p * K + s] = win[p];
            held[p * K + s] = got[p * K + s]
        :: got[p * K + s] != 0 && win[p] == 0 ->
            trust[p * K + s] = 0; /* late: held, not trusted */
            held[p * K + s] = got[p * K + s]
        :: got[p * K + s] == 0 ->
            trust[p * K + s] = 0;
            held[p * K + s] = 0;
            relp[p * K + s] = 0
        fi;
        s++
    :: else -> break
    od
}

/* Member p's answer arrives. */
inline answer(p)
{
#ifndef LAPSE_TRUSTED
    if
    :: !ok[p] ->
        /* lapsed: forgets every shard; a new incarnation goes on (the
         * last one allowed stops ticking) */
        drop_all(p);
        if
        :: inc[p] < MAXINC -> inc[p] = inc[p] + 1; sq[p] = 0
        :: else -> sq[p] = MAXSEQ
        fi
    :: else ->
#endif
        if
        :: stdy[p] -> steady(p)
        :: else -> rows(p)
        fi
#ifndef LAPSE_TRUSTED
    fi;
#else
    ;
#endif
    h = 1;
    do
    :: h < HOLDERS ->
        /* a watch starts at the answer that shows a higher counter */
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
 * lists the incarnations it has watched standing still for one TTL. Bit
 * s of m, chosen freely before, says for a shard it holds whether to
 * release it, for a shard it does not hold whether to take it; m =
 * STEADY_M lists no shard of its own choice and makes the tick steady
 * unless it still lists a pending release. */
inline send(p, m)
{
    sinc[p] = INC(p);
    sq[p] = sq[p] + 1;
    sseq[p] = sq[p];
    win[p] = W;
    stdy[p] = (m == STEADY_M); /* when it lists nothing, below */
    s = 0;
    do
    :: s < K ->
        rel[p * K + s] = 0;
        rterm[p * K + s] = 0;
        tak[p * K + s] = 0;
        if
        :: held[p * K + s] != 0 && (relp[p * K + s] || (m & (1 << s))) ->
            relp[p * K + s] = 1;
            rel[p * K + s] = 1;
            rterm[p * K + s] = held[p * K + s];
#ifndef STEADY_RELEASE
            stdy[p] = 0;
#endif
#ifndef RELEASE_BEFORE_STOP
            trust[p * K + s] = 0
#else
            skip
#endif
        :: held[p * K + s] == 0 && (m & (1 << s)) ->
            tak[p * K + s] = 1;
            stdy[p] = 0
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
    stdy[p] = 0;
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
    drop_all(p);
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
    h = 1;
    do
    :: h < HOLDERS -> lexp[h] = (lexp[h] > 0 -> lexp[h] - 1 : 0); h++
    :: else -> break
    od;
    advance(0, a);
    advance(1, w)
}

/* A rate choice: r is S-1, S or S+1. */
#define RATE(r) if :: r = S - 1 :: r = S :: r = S + 1 fi
/* A free choice of the K bits of m, or of STEADY_M: no bit, and the tick
 * is steady if it lists nothing (one choice, so that it costs no step of
 * a trail). */
#if K == 1
#define PICK(m) if :: m = 0 :: m = 1 :: m = STEADY_M fi
#else
#define PICK(m) \
    if :: m = 0 :: m = 1 :: m = 2 :: m = 3 :: m = STEADY_M fi
#endif

init
{
    inc[0] = 1;
    inc[1] = 1;
    do
    :: atomic { RATE(a); RATE(w); d_step { clock_tick(); CLEAN } }
#ifdef STEPS
    /* a forward step of the database clock: one lease's expiry drops */
    :: atomic {
           if
           :: lexp[1] > 0 -> d_step { lexp[1] = lexp[1] - 1 }
           :: lexp[2] > 0 -> d_step { lexp[2] = lexp[2] - 1 }
#if HOLDERS > 3
           :: lexp[3] > 0 -> d_step { lexp[3] = lexp[3] - 1 }
           :: lexp[4] > 0 -> d_step { lexp[4] = lexp[4] - 1 }
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
