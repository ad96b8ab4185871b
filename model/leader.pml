/*
 * leader.pml: a Promela model of the odbc-leader election, checked with
 * spin by model/check.sh (make model). docs/protocol.md explains it.
 *
 * Properties:
 *   NO_OVERLAP    no two candidates are inside their trust windows for
 *                 different terms at the same instant (monitor);
 *   TERMS         the database's term only grows and every term is won
 *                 once: a new term is above every term a candidate holds
 *                 or carries in a statement (assert in the attempt); a
 *                 candidate starts trusting only the database's current
 *                 term, so trusted terms never go back (assert at receipt);
 *   LEASE_COVERS  a candidate inside its trust window holds the lease in
 *                 the database, for its term, unexpired (monitor): the
 *                 inductive invariant behind the other two.
 *
 * Time is discrete. The database clock is the reference: a clock step is
 * one database tick, and lease times are kept relative to "now" (exp =
 * expires_at_ms - now in ticks, 0 = expired), so the state space stays
 * finite however long a run is. Each candidate's local clock
 * (CLOCK_BOOTTIME) advances by S-1, S or S+1 local units per tick, chosen
 * anew at every tick for every candidate: local clocks keep the
 * database's rate within rho = 1/S. Trust windows are in local units.
 *
 * Every step may happen at any time or never, so candidates pause for any
 * length of time: sending a statement, the database running it (later),
 * the response arriving (later still), errors, crashes and restarts with
 * the same id. A statement whose sender gave up on it (crash, time-out,
 * lost connection) is an orphan: the database may still run it at any
 * later time, or never.
 *
 * Variants, each of which must give a counterexample to NO_OVERLAP:
 *   -DNO_MARGIN        safety margin 0
 *   -DSHORT_MARGIN     safety margin one local unit below rho * TTL
 *   -DANCHOR_RESPONSE  the trust window starts when the response arrives
 *                      instead of when the attempt started
 * Variants check NO_OVERLAP alone, so their counterexamples are overlaps.
 *
 * By hand: spin -a leader.pml && gcc -O2 -DSAFETY -o pan pan.c &&
 *          ./pan -m100000; after an error, spin -t leader.pml prints the
 *          trail as the "|" lines below.
 */

/* ---- constants ------------------------------------------------------- */

#ifndef N
#define N 3                 /* candidates, ids 0..N-1 (2 or 3) */
#endif
#ifndef T
#define T 2                 /* TTL in database ticks */
#endif
#ifndef S
#define S 2                 /* local units per database tick, nominal */
#endif
#ifndef MAXTERM
#define MAXTERM 2           /* bound: no attempt wins a term above this */
#endif

#define TTL_L (T * S)       /* TTL in local units */

/*
 * The safety margin. A local clock may run slow by rho = 1/S, so in one
 * TTL of database time it advances at least TTL_L - rho * TTL_L = TTL_L -
 * T local units. A window of TTL_L - M local units from the attempt start
 * therefore ends within one TTL of database time after the attempt start
 * when M >= T, and the database's expiry is one TTL after the attempt ran,
 * which is no earlier. M = T is the smallest margin that is safe.
 */
#if defined(NO_MARGIN)
#define M 0
#elif defined(SHORT_MARGIN)
#define M (T - 1)
#else
#define M T
#endif

#if defined(NO_MARGIN) || defined(SHORT_MARGIN) || defined(ANCHOR_RESPONSE)
#define VARIANT 1
#endif

#define W (TTL_L - M)       /* trust window, local units */
#define NONE 255            /* no candidate (SQL NULL) */

/* candidate states st[p]; ATT, REN and RES are also orphan kinds ok[p] */
#define IDLE 0              /* no statement in flight */
#define ATT 1               /* attempt sent, not yet run by the database */
#define ATT_R 2             /* attempt ran, its response on the way */
#define REN 3               /* renew sent, not yet run */
#define REN_R 4             /* renew ran, its response on the way */
#define RES 5               /* resign sent, not yet run */

/* ---- the database: the lease row ------------------------------------- */

byte lid = NONE;            /* leader_id */
byte term = 0;              /* term (0: no row yet) */
byte exp = 0;               /* expires_at_ms - now, ticks; 0: expired */
bit rreq = 0;               /* resign_requested */
byte hto = NONE;            /* handoff_to */

/* ---- each candidate's local state, lost when it crashes --------------- */

byte st[N];                 /* IDLE, ATT, ... */
byte held[N];               /* held_term; 0: follower */
byte trust[N];              /* trusted_until - local now; 0: not trusted */
byte since[N];              /* local now - start of the statement in flight,
                               capped at W */
byte req[N];                /* term carried by the renew or resign in flight */
byte rterm[N];              /* response: the term won or renewed */
bit rok[N];                 /* response: won (attempt), found (renew) */
bit rrr[N];                 /* response: resign_requested (renew) */

/* ---- statements given up by their sender, which may still run ---------- */

byte ok[N];                 /* 0, ATT, REN or RES */
byte oterm[N];              /* term carried by it */

/* ---- clocks for printing trails only: not part of the state ----------- */

hidden int dbnow;
hidden int lnow[N];

/* ---- properties ------------------------------------------------------- */

#define TR(i) (trust[i] > 0)
#define APART(i, j) (!(TR(i) && TR(j) && held[i] != held[j]))
#define COVERS(i) (!TR(i) || (lid == i && term == held[i] && exp > 0))
#if N == 2
#define NO_OVERLAP APART(0, 1)
#define LEASE_COVERS (COVERS(0) && COVERS(1))
#elif N == 3
#define NO_OVERLAP (APART(0, 1) && APART(0, 2) && APART(1, 2))
#define LEASE_COVERS (COVERS(0) && COVERS(1) && COVERS(2))
#else
#error "N must be 2 or 3"
#endif

/* TERMS at receipt (base model only) */
#ifdef VARIANT
#define CHECK_NEWEST(p) skip
#else
#define CHECK_NEWEST(p) assert(trust[p] == 0 || held[p] == term)
#endif

/* attempt's WHERE clause: expired, or vacant and not reserved for another */
#define CANTAKE(p) (exp == 0 || (lid == NONE && (hto == NONE || hto == p)))
/* the term bound: an attempt that would win term MAXTERM + 1 never runs */
#define MAYRUN(p) (!(CANTAKE(p) && term >= MAXTERM))

#define SAY(p, what) \
    printf("| db %d, p%d at local %d: ", dbnow, p, lnow[p]); \
    printf(what); \
    printf("\n")

/* ---- orphans that can no longer act ------------------------------------ */

/*
 * An orphan renew or resign of term t acts only while its candidate holds
 * t in the database. Once the lease has moved on it never can again (every
 * win makes a new term), so it is dropped at once: the same state as if it
 * never ran, which the model allows anyway. This keeps the state space
 * small and changes no behaviour.
 */
#define DEAD(i) ((ok[i] == REN || ok[i] == RES) && \
                 !(lid == i && term == oterm[i]))

inline gc_one(i)
{
    if
    :: DEAD(i) -> ok[i] = 0; oterm[i] = 0
    :: else -> skip
    fi
}

#if N == 2
#define gc() gc_one(0); gc_one(1)
#else
#define gc() gc_one(0); gc_one(1); gc_one(2)
#endif

/* ---- the named statements, each run atomically by the database -------- */

/* @statement attempt: take the lease when CANTAKE; won says whether this
 * run took it. (The candidate row's heartbeat has no safety role.) */
inline db_attempt(p, won)
{
    if
    :: CANTAKE(p) ->
        term = term + 1;
        assert(term > held[0] && term > req[0] && term > oterm[0]);
        assert(term > held[1] && term > req[1] && term > oterm[1]);
#if N == 3
        assert(term > held[2] && term > req[2] && term > oterm[2]);
#endif
        lid = p;
        exp = T;
        rreq = 0;
        hto = NONE;
        won = 1;
        gc()
    :: else -> won = 0
    fi
}

/* @statement renew: extend the exact holder and term, only while it is
 * unexpired; found says whether a row came back. */
inline db_renew(p, t, found)
{
    if
    :: lid == p && term == t && exp > 0 -> exp = T; found = 1
    :: else -> found = 0
    fi
}

/* @statement resign: the exact holder and term only. The lease becomes
 * vacant, reserved for one TTL when a handoff target is set. */
inline db_resign(p, t)
{
    if
    :: lid == p && term == t ->
        lid = NONE;
        rreq = 0;
        if
        :: hto == NONE -> exp = 0
        :: else -> exp = T
        fi;
        gc()
    :: else -> skip
    fi
}

/* ---- a candidate: its client (elector.c) and its database session ------ */

proctype candidate(byte p)
{
    bit b;

end:
    do
    /* attempt(): a follower sends the attempt; start = local now */
    :: d_step {
        st[p] == IDLE && held[p] == 0 ->
        st[p] = ATT; since[p] = 0;
        SAY(p, "sends attempt")
    }

    /* renew(): a leader inside its window renews its exact term */
    :: d_step {
        st[p] == IDLE && held[p] != 0 && trust[p] > 0 ->
        st[p] = REN; since[p] = 0; req[p] = held[p];
        printf("| db %d, p%d at local %d: sends renew of term %d\n",
               dbnow, p, lnow[p], req[p])
    }

    /* tick(): the window passed without a renewal: step_down() */
    :: d_step {
        st[p] == IDLE && held[p] != 0 && trust[p] == 0 ->
        held[p] = 0;
        SAY(p, "steps down, window passed")
    }

    /* elector_resign(): step down first, then send resign (exact term) */
    :: d_step {
        st[p] == IDLE && held[p] != 0 ->
        req[p] = held[p]; held[p] = 0; trust[p] = 0; st[p] = RES;
        SAY(p, "steps down, sends resign")
    }

    /* attempt() reads its response: trust(term, start) when it won */
    :: d_step {
        st[p] == ATT_R ->
        if
        :: rok[p] ->
            held[p] = rterm[p];
#ifdef ANCHOR_RESPONSE
            trust[p] = W;
#else
            trust[p] = W - since[p];
#endif
            CHECK_NEWEST(p);
            printf("| db %d, p%d at local %d: attempt won term %d, trust %d\n",
                   dbnow, p, lnow[p], held[p], trust[p])
        :: else ->
            SAY(p, "attempt lost, stays follower")
        fi;
        st[p] = IDLE; since[p] = 0; rok[p] = 0; rterm[p] = 0
    }

    /* renew() reads its response: trust again from the renew's start,
     * or resign when asked to, or step down when no row came back */
    :: d_step {
        st[p] == REN_R ->
        if
        :: rok[p] && rrr[p] ->
            held[p] = 0; trust[p] = 0; st[p] = RES;
            SAY(p, "renewed, asked to resign: steps down, sends resign")
        :: rok[p] && !rrr[p] ->
            trust[p] = W - since[p]; st[p] = IDLE; req[p] = 0;
            CHECK_NEWEST(p);
            printf("| db %d, p%d at local %d: renewed term %d, trust %d\n",
                   dbnow, p, lnow[p], held[p], trust[p])
        :: else ->
            held[p] = 0; trust[p] = 0; st[p] = IDLE; req[p] = 0;
            SAY(p, "renew found no row, steps down")
        fi;
        since[p] = 0; rok[p] = 0; rrr[p] = 0; rterm[p] = 0
    }

    /* failed() in renew(): time-out or lost connection before the renew
     * ran (it may still run, as an orphan) or after (the response is
     * lost). The leader keeps its last window: nothing extends it. A
     * failed attempt or resign leaves the client as a crash does. */
    :: d_step {
        st[p] == REN && ok[p] == 0 ->
        ok[p] = REN; oterm[p] = req[p];
        st[p] = IDLE; since[p] = 0; req[p] = 0;
        gc_one(p);
        SAY(p, "renew fails before it ran (may still run), keeps window")
    }
    :: d_step {
        st[p] == REN_R ->
        st[p] = IDLE; since[p] = 0; req[p] = 0;
        rok[p] = 0; rrr[p] = 0; rterm[p] = 0;
        SAY(p, "renew fails after it ran (response lost), keeps window")
    }

    /* crash and restart with the same id: the local state is lost, the
     * rows stay, a statement in flight becomes an orphan. (Only one
     * orphan per id at a time: a candidate with one does not abandon a
     * second statement before the first has run or been dropped.) */
    :: d_step {
        !((st[p] == ATT || st[p] == REN || st[p] == RES) && ok[p] != 0) ->
        if
        :: st[p] == ATT || st[p] == REN || st[p] == RES ->
            ok[p] = st[p]; oterm[p] = req[p]
        :: else -> skip
        fi;
        st[p] = IDLE; held[p] = 0; trust[p] = 0; since[p] = 0; req[p] = 0;
        rok[p] = 0; rrr[p] = 0; rterm[p] = 0;
        gc_one(p);
        SAY(p, "crashes and restarts")
    }

    /* the database runs p's statements */
    :: d_step {
        st[p] == ATT && MAYRUN(p) ->
        db_attempt(p, b);
        rok[p] = b; rterm[p] = (b -> term : 0); b = 0;
        st[p] = ATT_R;
        printf("| db %d: attempt of p%d runs, won %d, lease: p%d term %d\n",
               dbnow, p, rok[p], lid, term)
    }
    :: d_step {
        st[p] == REN ->
        db_renew(p, req[p], b);
        rok[p] = b; rrr[p] = (b -> rreq : 0); rterm[p] = (b -> req[p] : 0);
        b = 0;
        st[p] = REN_R;
        printf("| db %d: renew of p%d runs, extended %d\n", dbnow, p, rok[p])
    }
    :: d_step {
        st[p] == RES ->
        db_resign(p, req[p]);
        st[p] = IDLE; req[p] = 0;
        printf("| db %d: resign of p%d runs\n", dbnow, p)
    }

    /* orphans run late, with nobody to read the result, or never */
    :: d_step {
        ok[p] == ATT && MAYRUN(p) ->
        db_attempt(p, b);
        b = 0; ok[p] = 0;
        printf("| db %d: orphan attempt of p%d runs, lease: p%d term %d\n",
               dbnow, p, lid, term)
    }
    :: d_step {
        ok[p] == REN ->
        db_renew(p, oterm[p], b);
        b = 0; ok[p] = 0; oterm[p] = 0;
        printf("| db %d: orphan renew of p%d runs\n", dbnow, p)
    }
    :: d_step {
        ok[p] == RES ->
        db_resign(p, oterm[p]);
        ok[p] = 0; oterm[p] = 0;
        printf("| db %d: orphan resign of p%d runs\n", dbnow, p)
    }
    :: d_step {
        ok[p] != 0 ->
        ok[p] = 0; oterm[p] = 0;
        printf("| db %d: orphan of p%d is dropped, never runs\n", dbnow, p)
    }
    od
}

/* ---- @statement request_resign: anyone, at any time -------------------- */

#define ASK(to) \
    d_step { \
        lid != NONE && exp > 0 && !(rreq && hto == to) -> \
        rreq = 1; hto = to; \
        printf("| db %d: request_resign, handoff to %d\n", dbnow, to) \
    }

active proctype requester()
{
end:
    do
    :: ASK(NONE)
    :: ASK(0)
    :: ASK(1)
#if N == 3
    :: ASK(2)
#endif
    od
}

/* ---- time ------------------------------------------------------------ */

/* Candidate i's clock advances a local units in one database tick: the
 * start of its statement in flight recedes, its window shrinks. Only a
 * clock someone reads gets a choice of rate. */
#define TIMED(i) \
    (((st[i] == ATT || st[i] == ATT_R || st[i] == REN || st[i] == REN_R) && \
      since[i] < W) || trust[i] > 0)

inline advance(i, a)
{
    if
    :: TIMED(i) ->
        if
        :: a = S - 1
        :: a = S
        :: a = S + 1
        fi;
        if
        :: st[i] == ATT || st[i] == ATT_R || st[i] == REN ||
           st[i] == REN_R ->
            since[i] = (since[i] + a >= W -> W : since[i] + a)
        :: else -> skip
        fi;
        trust[i] = (trust[i] > a -> trust[i] - a : 0)
    :: else -> a = S
    fi;
    lnow[i] = lnow[i] + a
}

active proctype clock()
{
    byte a[N];

end:
    do
    :: atomic {
        advance(0, a[0]);
        advance(1, a[1]);
#if N == 3
        advance(2, a[2]);
#endif
        /* one atomic step: the monitor sees all clocks move together */
        exp = (exp > 0 -> exp - 1 : 0);
        dbnow = dbnow + 1;
#if N == 3
        printf("| tick: db %d, local clocks +%d +%d +%d\n",
               dbnow, a[0], a[1], a[2]);
        a[2] = 0;
#else
        printf("| tick: db %d, local clocks +%d +%d\n", dbnow, a[0], a[1]);
#endif
        a[0] = 0;
        a[1] = 0
    }
    od
}

/* ---- the monitor: checked in every reachable state -------------------- */

active proctype monitor()
{
end:
    do
#ifdef VARIANT
    :: assert(NO_OVERLAP)
#else
    :: assert(NO_OVERLAP && LEASE_COVERS)
#endif
    od
}

init
{
    byte i;

    atomic {
        for (i : 0 .. N - 1) {
            run candidate(i)
        }
        i = 0
    }
}
