/* SPDX-License-Identifier: MIT */
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
 *                 inductive invariant behind the other two. With -DSTEPS,
 *                 expired or not: a step ends the lease in database time,
 *                 and then only the watch keeps others out.
 * With -DFIRES=k (1..3), candidates also claim k fires of the fire ledger
 * (one claim statement each, term-fenced, under a unique key), and each
 * successful claim asserts:
 *   CLAIM_ONCE    each fire is claimed at most once;
 *   CLAIM_FENCED  the claimant holds the lease in the database, for the
 *                 term the claim carries, unexpired, and no other
 *                 candidate is inside a trust window (nor the claimant
 *                 for another term);
 *   CLAIM_ORDER   a claim's term is no lower than that of any fire
 *                 claimed before it.
 * With -DRECOVER (and FIRES), a claimed fire may be taken again as its
 * next attempt (the fire lifecycle's take, docs/lifecycle.md), up to two
 * attempts: by a candidate that believes it holds a term, in one
 * statement that requires the taker's current, unexpired term and a
 * fire claimed in an earlier term. Each take asserts
 *   RECOVER_APART the previous attempt's claimant is not inside a trust
 *                 window of the term that attempt carries: it can no
 *                 longer act as leader for it.
 *   -DBROKEN_RECOVER_ON_EXPIRY the take checks only that the previous
 *                 attempt's lease is over in the database (its row
 *                 expired or moved on), not that the taker holds a later
 *                 term: with clock steps, RECOVER_APART fails.
 *
 * Time is discrete. The database clock is the reference: a clock tick is
 * one database tick, and lease times are kept relative to "now" (exp =
 * expires_at_ms - now in ticks, 0 = expired), so the state space stays
 * finite however long a run is. Each candidate's local clock
 * (CLOCK_BOOTTIME) advances by S-1, S or S+1 local units per tick, chosen
 * anew at every tick for every candidate: local clocks keep the
 * database's rate within rho = 1/S. Trust windows are in local units.
 * With -DSTEPS the database clock also steps forward, any number of times
 * and by any amount: a running lease's exp drops to any smaller value,
 * while the stored values and the local clocks stay.
 *
 * The takeover rule (the watch): every candidate keeps the (term,
 * expires_at_ms) pair of the last row its answers showed (attempt, renew,
 * and the followers' read) and the local time it first saw that pair.
 * attempt takes the lease when it is vacant and not reserved for another,
 * when it is vacant, reserved for another (not quarantined) and expired,
 * or when it is expired and is exactly the row the candidate has watched
 * unchanged for one TTL on its own clock (the attempt carries the pair
 * only then). A trust window is TTL - margin local units from the start
 * of the attempt or renewal. Without steps the margin is T (rho * TTL);
 * with steps it is 2 * T * S / (S + 1), rounded up (STEP_M).
 *
 * Every action may happen at any time or never, so candidates pause for any
 * length of time: sending a statement, the database running it (later),
 * the response arriving (later still), errors, crashes and restarts with
 * the same id. A statement whose sender gave up on it (crash, time-out,
 * lost connection) is an orphan: the database may still run it at any
 * later time, or never.
 *
 * Variants, each of which must give a counterexample to NO_OVERLAP:
 *   -DNO_MARGIN        safety margin 0
 *   -DSHORT_MARGIN     safety margin one local unit below rho * TTL (with
 *                      -DSTEPS: one unit below STEP_M)
 *   -DANCHOR_RESPONSE  the trust window starts when the response arrives
 *                      instead of when the attempt started
 * With -DSTEPS:
 *   -DWATCH_SHORT      the watch's floor is one local unit short of TTL
 *   -DNO_WATCH         attempt takes any expired lease (database time
 *                      alone, no watch, no quarantine)
 *   -DOLD_RULE         the rule of ed8ea1f: the old WHERE clause (any
 *                      expired lease), step detection by comparing each
 *                      answer with the previous one (a step counter,
 *                      detection exact), a quarantine of one TTL after a
 *                      detected step in which a won term is held but not
 *                      trusted, and the first-sight read before the first
 *                      attempt (a held lease with less than T ticks left
 *                      starts the quarantine; no row gives no baseline)
 * These check NO_OVERLAP alone, so their counterexamples are overlaps.
 * -DMARGIN=m sets the margin to m local units.
 * Claim variants (with FIRES > 0), whose election is the correct one and
 * keeps every election assertion:
 *   -DBROKEN_CLAIM_UNFENCED  the claim checks only that the fire is
 *                            unclaimed, not the lease (CLAIM_FENCED fails)
 *   -DBROKEN_CLAIM_NO_UNIQUE the fire table has no unique key: a fenced
 *                            claim also inserts a fire already claimed
 *                            (CLAIM_ONCE fails)
 *
 * With -DPROMOTE=k (1 or 2), the database may at any time, k times per
 * run, be replaced by a promoted asynchronous replica: its copy of the
 * lease row and the fire ledger as they were at some earlier step (the
 * copy is refreshed at any time or never: any replication lag), in a new
 * epoch. Writes after the copy are lost; candidates reach the new primary
 * at the same address. The lease row records its epoch; attempt
 * quarantines a row of another epoch (no leader, reserved for nobody, one
 * TTL, term GREATEST(term + 1, clock in ms)), which only an attempt that
 * watched it takes, and renew and claim require the current epoch. The
 * clock in ms is abstracted as hiterm + 1, hiterm
 * being the highest term issued so far: the least reading that the
 * assumption "terms never outrun the clock" allows. NO_OVERLAP then says
 * that no two different candidates trust at once, LEASE_COVERS lets a
 * window opened in an earlier epoch be covered by the stale or
 * quarantined row, and TERMS also asserts at each win that the term is
 * above every term ever issued (hiterm), in any epoch, lost or not.
 * -DERASE_STALE keeps only the stale row's epoch (exact for the
 * statements above, see docs/protocol.md).
 * Variants, each of which must give a counterexample:
 *   -DBROKEN_NO_QUARANTINE   attempt ignores the epoch (TERMS: a lost term
 *                            is issued again; or NO_OVERLAP)
 *   -DBROKEN_FIRST_ROW       the missing row of a promoted database is
 *                            inserted and won at once (NO_OVERLAP)
 *   -DBROKEN_TERM_REISSUE    the quarantine's term is term + 1, not the
 *                            clock (TERMS)
 *   -DBROKEN_CLAIM_NO_EPOCH  (with FIRES) the claim ignores the epoch
 *                            (CLAIM_FENCED, its window half)
 *
 * By hand: spin -a leader.pml && gcc -O2 -DSAFETY -o pan pan.c &&
 *          ./pan -m100000 (add -DFIRES=2, -DSTEPS, ... to spin -a); after
 *          an error, spin -t leader.pml (with the same -D flags) prints the
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

#ifndef FIRES
#define FIRES 0             /* fires in the ledger (0..3); 0: no claims */
#endif

#ifndef PROMOTE
#define PROMOTE 0           /* promotions of the replica per run (0..2) */
#endif

#define TTL_L (T * S)       /* TTL in local units */

#if defined(OLD_RULE) && !defined(STEPS)
#error "OLD_RULE needs STEPS"
#endif
#if defined(OLD_RULE) && (FIRES > 0 || PROMOTE > 0)
#error "OLD_RULE is checked without claims and promotions"
#endif
#if defined(OLD_RULE) && (defined(NO_WATCH) || defined(WATCH_SHORT))
#error "OLD_RULE has no watch"
#endif
#ifndef MAXSTEPS
#define MAXSTEPS 2          /* OLD_RULE: clock steps per run (the counter) */
#endif

/* the watch of the lease row (the takeover rule), unless a variant drops it */
#if !defined(OLD_RULE) && !defined(NO_WATCH)
#define WATCH 1
#endif
/* local units a row must be watched unchanged before attempt carries it */
#ifdef WATCH_SHORT
#define FLOOR (TTL_L - 1)
#else
#define FLOOR TTL_L
#endif

/*
 * The safety margin. A local clock may run slow by rho = 1/S, so in one
 * TTL of database time it advances at least TTL_L - rho * TTL_L = TTL_L -
 * T local units. A window of TTL_L - M local units from the attempt start
 * therefore ends within one TTL of database time after the attempt start
 * when M >= T, and the database's expiry is one TTL after the attempt ran,
 * which is no earlier. M = T is the smallest margin that is safe.
 *
 * With clock steps (STEPS) the database's expiry protects nothing: the
 * watch does. The holder's window starts before the write that the taker
 * watched, and the taker carries the watch only FLOOR local units after
 * it first saw it. The holder's clock may run at S - 1 units per tick and
 * the taker's at S + 1, so the window must fit: (TTL_L - M) / (S - 1) <=
 * TTL_L / (S + 1), that is M >= 2 * T * S / (S + 1) (rounded up: STEP_M).
 * With ticks, the taker can act only between them, so the model can show
 * this bound to be tight only where S + 1 divides TTL_L (S = 2, T = 3).
 * -DMARGIN=m sets the margin directly.
 */
#define STEP_M ((2 * T * S + S) / (S + 1))
#if defined(MARGIN)
#define M MARGIN
#elif defined(NO_MARGIN)
#define M 0
#elif defined(SHORT_MARGIN) && defined(STEPS)
#define M (STEP_M - 1)
#elif defined(SHORT_MARGIN)
#define M (T - 1)
#elif defined(STEPS)
#define M STEP_M
#else
#define M T
#endif

#if defined(NO_MARGIN) || defined(SHORT_MARGIN) || defined(ANCHOR_RESPONSE)
#define VARIANT 1
#endif
#if defined(OLD_RULE) || defined(NO_WATCH) || defined(WATCH_SHORT)
#define VARIANT 1
#endif

#if (defined(BROKEN_CLAIM_UNFENCED) || defined(BROKEN_CLAIM_NO_UNIQUE)) && \
    FIRES == 0
#error "the claim variants need FIRES > 0"
#endif

#if (defined(BROKEN_NO_QUARANTINE) || defined(BROKEN_TERM_REISSUE) || \
     defined(BROKEN_FIRST_ROW) || defined(BROKEN_CLAIM_NO_EPOCH)) && \
    PROMOTE == 0
#error "the promotion variants need PROMOTE > 0"
#endif
#if defined(BROKEN_CLAIM_NO_EPOCH) && FIRES == 0
#error "BROKEN_CLAIM_NO_EPOCH needs FIRES > 0"
#endif
#if (defined(RECOVER) || defined(BROKEN_RECOVER_ON_EXPIRY)) && FIRES == 0
#error "RECOVER needs FIRES > 0"
#endif
#if defined(BROKEN_RECOVER_ON_EXPIRY) && !defined(RECOVER)
#error "BROKEN_RECOVER_ON_EXPIRY needs RECOVER"
#endif
#if (defined(BROKEN_NO_QUARANTINE) || defined(BROKEN_TERM_REISSUE) || \
     defined(BROKEN_FIRST_ROW) || defined(BROKEN_CLAIM_NO_EPOCH)) && \
    defined(ERASE_STALE)
#error "the promotion variants read the stale row: no ERASE_STALE"
#endif

/* the two promotion variants that break the windows check NO_OVERLAP
 * (and TERMS at each win) but not the lemmas LEASE_COVERS and
 * CHECK_NEWEST, which they break first */
#if defined(BROKEN_NO_QUARANTINE) || defined(BROKEN_FIRST_ROW)
#define VARIANT 1
#endif

#define W (TTL_L - M)       /* trust window, local units */
#define NONE 255            /* no candidate (SQL NULL) */
#define QUAR 254            /* handoff_to of a quarantined row: nobody */

/* candidate states st[p]; ATT, REN and RES are also orphan kinds ok[p] */
#define IDLE 0              /* no statement in flight */
#define ATT 1               /* attempt sent, not yet run by the database */
#define ATT_R 2             /* attempt ran, its response on the way */
#define REN 3               /* renew sent, not yet run */
#define REN_R 4             /* renew ran, its response on the way */
#define RES 5               /* resign sent, not yet run */
#define RD 6                /* read sent, not yet run */
#define RD_R 7              /* read ran, its response on the way */

/* ---- the database: the lease row ------------------------------------- */

byte lid = NONE;            /* leader_id */
byte term = 0;              /* term (0: no row yet) */
byte exp = 0;               /* expires_at_ms - now, ticks; 0: expired */
bit rreq = 0;               /* resign_requested */
byte hto = NONE;            /* handoff_to */

#if PROMOTE > 0
/* ---- the database's epoch, the row's epoch, the clock in terms --------- */

byte ep = 0;                /* the database's current epoch: promotions so
                               far. Every statement sees it. */
byte lep = 0;               /* the epoch the lease row was written in (the
                               missing row of a new database: epoch 0) */
byte hiterm = 0;            /* the highest term issued so far, in any
                               epoch, lost or not. Also the clock
                               abstraction: the database clock in ms is
                               above it, and hiterm + 1 stands for it. */

/* ---- the asynchronous replica: a copy of the primary as it was at some
 * earlier step (the lease row and the fire ledger), refreshed at any time
 * or never. A promotion makes it the database. ------------------------- */

byte r_lid = NONE;
byte r_term = 0;
byte r_exp = 0;
bit r_rreq = 0;
byte r_hto = NONE;
byte r_lep = 0;
#endif

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

#ifdef WATCH
/* ---- each candidate's watch of the lease row ---------------------------
 *
 * The candidate keeps the (term, expires_at_ms) pair of the last row its
 * answers showed and the local time it first saw that pair. Every write
 * that changes the pair (a win, a renewal, a resign, a quarantine) makes a
 * pair that was never there before, so "the watched pair is the row's
 * pair" is "no such write since the statement that showed it ran", kept
 * as bits that every such write (and a promotion) clears: rowchg. */
bit wv[N];                  /* the watched pair is the row's current pair */
byte wf[N];                 /* local units until the watch is FLOOR old;
                               0: passed (or no valid watch) */
bit pend[N];                /* the answer in flight shows the row's current
                               pair (set when the database runs p's
                               statement, cleared by a change) */
bit cas[N];                 /* the attempt in flight carries the row's
                               current pair */
bit ocas[N];                /* the orphan attempt carries the row's pair */
#endif

#ifdef OLD_RULE
/* ---- ed8ea1f's step detection and quarantine --------------------------- */

byte nsteps = 0;            /* clock steps so far, at most MAXSTEPS */
byte obs[N];                /* baseline: 1 + the step count when the last
                               answer with a row ran; 0: none yet */
byte rsc[N];                /* the answer in flight: the step count when it
                               ran */
byte quar[N];               /* local units of quarantine left */
bit sq[N];                  /* the statement in flight started inside the
                               quarantine */
bit ut[N];                  /* held but not trusted (won in a quarantine) */
bit fs[N];                  /* the first-sight read was answered (no
                               baseline yet): the attempt may go */
#endif

#if FIRES > 0
/* ---- the database: the fire ledger ------------------------------------ */

/* fire f's row: the term and holder it was claimed for (0 and NONE: not
 * claimed) and how many rows exist for it (the unique key allows 1; the
 * count stops at 2) */
byte cterm[FIRES];
byte cby[FIRES] = NONE;
byte ccount[FIRES];
#if PROMOTE > 0
byte r_cterm[FIRES];        /* the replica's copy of the ledger */
byte r_cby[FIRES] = NONE;
byte r_ccount[FIRES];
#endif

/* ---- the claim each candidate id has in flight ------------------------ */

/* one per id, kept across crashes: fire + 1 (0: none), the term it
 * carries. It runs at any later time, or never. */
byte cf[N];
byte ct[N];
#ifdef RECOVER
bit ck[N];                  /* the statement in flight is a take */
byte catt[FIRES];           /* attempts started of fire f (0..2) */
#define MAXATT 2
#define CLEAR_TAKE(p) ck[p] = 0
#define SET_ATT1(f) catt[f] = 1
#else
#define CLEAR_TAKE(p) skip
#define SET_ATT1(f) skip
#endif
#endif

/* ---- clocks for printing trails only: not part of the state ----------- */

hidden int dbnow;
hidden int lnow[N];

/* ---- properties ------------------------------------------------------- */

#define TR(i) (trust[i] > 0)
/* With clock steps, a running lease may expire in database time while its
 * holder trusts it: the row then still names the holder and its term, and
 * only the watch keeps others out. */
#ifdef STEPS
#define UNEXPIRED 1
#else
#define UNEXPIRED (exp > 0)
#endif
#if PROMOTE > 0
/* Two different candidates never trust at once, whatever their terms (a
 * term issued twice would make two windows of one number). The lease
 * covers a window of the current epoch; a window from an earlier epoch
 * (whose row was lost or is stale) is covered by the stale row, which
 * nobody can take, then by the quarantine, which keeps everybody out for
 * one TTL. */
#define APART(i, j) (!(TR(i) && TR(j)))
#define COVERS(i) (!TR(i) || \
    (lid == i && term == held[i] && UNEXPIRED && lep == ep) || \
    lep != ep || (lid == NONE && hto == QUAR && UNEXPIRED))
#else
#define APART(i, j) (!(TR(i) && TR(j) && held[i] != held[j]))
#define COVERS(i) (!TR(i) || (lid == i && term == held[i] && UNEXPIRED))
#endif
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
#elif PROMOTE > 0
/* a window opens on the current term, or on a term of an earlier epoch
 * that nobody can have overtaken yet */
#define CHECK_NEWEST(p) assert(COVERS(p))
#else
#define CHECK_NEWEST(p) assert(trust[p] == 0 || held[p] == term)
#endif

#if FIRES > 0
/* CLAIM_FENCED: the lease row, read directly (not the claim's WHERE
 * clause, which the variants weaken), and every trust window */
#define ALONE(q, p, t) (!TR(q) || (q == p && held[q] == t))
#if N == 2
#define WINDOWS_AGREE(p, t) (ALONE(0, p, t) && ALONE(1, p, t))
#else
#define WINDOWS_AGREE(p, t) \
    (ALONE(0, p, t) && ALONE(1, p, t) && ALONE(2, p, t))
#endif
#if PROMOTE > 0 && !defined(BROKEN_CLAIM_NO_EPOCH)
#define CLAIM_FENCED(p, t) \
    (lid == p && term == t && exp > 0 && lep == ep && WINDOWS_AGREE(p, t))
#else
#define CLAIM_FENCED(p, t) \
    (lid == p && term == t && exp > 0 && WINDOWS_AGREE(p, t))
#endif

/* CLAIM_ORDER: no fire was claimed for a higher term */
#if FIRES == 1
#define CLAIM_ORDER(t) (t >= cterm[0])
#elif FIRES == 2
#define CLAIM_ORDER(t) (t >= cterm[0] && t >= cterm[1])
#elif FIRES == 3
#define CLAIM_ORDER(t) (t >= cterm[0] && t >= cterm[1] && t >= cterm[2])
#else
#error "FIRES must be 0 to 3"
#endif

/* the claim's condition: INSERT INTO fire SELECT f, term, leader_id FROM
 * lease WHERE leader_id = p AND term = t AND expires_at_ms > now, and the
 * unique key (namespace, job, fire_ms) refuses a second row */
#if PROMOTE > 0 && !defined(BROKEN_CLAIM_NO_EPOCH)
#define HOLDS(p, t) (lid == p && term == t && exp > 0 && lep == ep)
#else
#define HOLDS(p, t) (lid == p && term == t && exp > 0)
#endif
#define FREE(f) (ccount[f] == 0)
#if defined(BROKEN_CLAIM_UNFENCED)
#define CLAIM_WHERE(p, f, t) FREE(f)
#elif defined(BROKEN_CLAIM_NO_UNIQUE)
#define CLAIM_WHERE(p, f, t) HOLDS(p, t)
#else
#define CLAIM_WHERE(p, f, t) (HOLDS(p, t) && FREE(f))
#endif
#endif

/*
 * attempt's WHERE clause; c says whether the attempt carries the row's
 * current (term, expires_at_ms) pair. The protocol takes the lease when it
 * is
 *   open:              vacant and not reserved for another (after a
 *                      resign, a handoff to p, or no row yet);
 *   reservation over:  vacant, reserved for another (not the quarantine
 *                      marker), and expired;
 *   watched:           expired, and exactly the row p has watched
 *                      unchanged for FLOOR local units.
 * The old WHERE clause (OLD_RULE, NO_WATCH) takes any expired row.
 */
#define OPEN(p) (lid == NONE && (hto == NONE || hto == p))
#ifdef WATCH
#define CANTAKE(p, c) \
    (OPEN(p) || (lid == NONE && hto != QUAR && exp == 0) || (exp == 0 && c))
#else
#define CANTAKE(p, c) (exp == 0 || OPEN(p))
#endif
#if PROMOTE > 0
/*
 * With promotion, attempt first compares the row's epoch with the
 * database's. A row of another epoch (STALE; also the missing row of a
 * promoted database: term 0, epoch 0) is not taken but quarantined
 * (QUARANTINES): epoch := current, no leader, reserved for nobody, expires
 * in one TTL, term := GREATEST(term + 1, clock in ms) = QTERM. A row of
 * the current epoch is taken on the usual WHERE clause (TAKES), term + 1;
 * the first row of a database never promoted starts at the clock
 * (NEXTTERM), as in the SQL. The variants:
 *   BROKEN_NO_QUARANTINE  the epoch is ignored: a stale row is taken on
 *                         the usual WHERE clause, term + 1 (a missing row
 *                         is still quarantined)
 *   BROKEN_FIRST_ROW      a missing row in a promoted database is inserted
 *                         and won at once, term from the clock
 *   BROKEN_TERM_REISSUE   the quarantine sets term + 1, not the clock
 */
#define STALE (lep != ep)
#define CLOCKTERM (hiterm + 1)
#define NEXTTERM (term == 0 -> CLOCKTERM : term + 1)
#if defined(BROKEN_TERM_REISSUE)
#define QTERM (term + 1)
#else
#define QTERM (term + 1 > CLOCKTERM -> term + 1 : CLOCKTERM)
#endif
#if defined(BROKEN_NO_QUARANTINE)
#define TAKES_STALE(p, c) (term != 0 && CANTAKE(p, c))
#elif defined(BROKEN_FIRST_ROW)
#define TAKES_STALE(p, c) (term == 0)
#else
#define TAKES_STALE(p, c) 0
#endif
#define TAKES(p, c) (STALE -> TAKES_STALE(p, c) : CANTAKE(p, c))
#if defined(BROKEN_NO_QUARANTINE)
#define QUARANTINES(p, c) (STALE && term == 0)
#else
#define QUARANTINES(p, c) (STALE && !TAKES_STALE(p, c))
#endif
/* the term bound: an attempt that would issue a term above MAXTERM (by a
 * win or a quarantine) never runs */
#define MAYRUN(p, c) \
    (TAKES(p, c) -> NEXTTERM <= MAXTERM : \
                     (QUARANTINES(p, c) -> QTERM <= MAXTERM : 1))
#else
/* the term bound: an attempt that would win term MAXTERM + 1 never runs */
#define MAYRUN(p, c) (!(CANTAKE(p, c) && term >= MAXTERM))
#endif

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
#if PROMOTE > 0
/* an orphan renew also needs the row's epoch to be the current one. An
 * orphan resign dropped here could still match a stale row after a
 * promotion: there its effect is invisible (renew and claim refuse a stale
 * row, the next attempt overwrites all of it, and its term is below the
 * clock) */
#define DEAD(i) ((ok[i] == REN && !(lid == i && term == oterm[i] && \
                                    lep == ep)) || \
                 (ok[i] == RES && !(lid == i && term == oterm[i])))
#else
#define DEAD(i) ((ok[i] == REN || ok[i] == RES) && \
                 !(lid == i && term == oterm[i]))
#endif

inline gc_one(i)
{
    if
    :: DEAD(i) -> ok[i] = 0; oterm[i] = 0
    :: else -> skip
    fi
}

/*
 * Likewise a claim in flight whose condition is false can never succeed:
 * the fence's terms never come back, an expired term is never extended,
 * a claimed fire stays claimed. It is dropped at once, after every step
 * that can falsify a condition (a win, a resign, a tick, a clock step, a
 * claim). So the claims that run are the ones that succeed.
 */
#if FIRES > 0
/* Without the epoch check, a promotion can make a refused claim pass
 * again (the replica's copy of the lease names its term): no claim is
 * dropped while a promotion may still come. */
#ifdef RECOVER
#define IS_TAKE(i) ck[i]
#else
#define IS_TAKE(i) 0
#endif
#if defined(BROKEN_CLAIM_NO_EPOCH)
#define MAY_DROP_CLAIM (ep == PROMOTE)
#else
#define MAY_DROP_CLAIM 1
#endif
inline gc_claim(i)
{
    if
    :: cf[i] != 0 && MAY_DROP_CLAIM && !IS_TAKE(i) &&
       !CLAIM_WHERE(i, cf[i] - 1, ct[i]) ->
        printf("| db %d: claim of p%d can no longer succeed, dropped\n",
               dbnow, i);
        cf[i] = 0; ct[i] = 0
    :: else -> skip
    fi
}
#if N == 2
#define gc_claims() gc_claim(0); gc_claim(1)
#else
#define gc_claims() gc_claim(0); gc_claim(1); gc_claim(2)
#endif
#endif

#ifdef RECOVER
/* the take's condition; the previous attempt: claimed by cby[f] in term
 * cterm[f] */
#ifdef BROKEN_RECOVER_ON_EXPIRY
#define TAKE_WHERE(p, f, t) (ccount[f] == 1 && catt[f] < MAXATT && \
    !(lid == cby[f] && term == cterm[f] && exp > 0))
#else
#define TAKE_WHERE(p, f, t) (HOLDS(p, t) && ccount[f] == 1 && \
    cterm[f] < t && catt[f] < MAXATT)
#endif
#define RECOVER_APART(f) (!(TR(cby[f]) && held[cby[f]] == cterm[f]))
#endif

#if FIRES > 0 && N == 2
#define gc() gc_one(0); gc_one(1); gc_claims()
#elif FIRES > 0
#define gc() gc_one(0); gc_one(1); gc_one(2); gc_claims()
#elif N == 2
#define gc() gc_one(0); gc_one(1)
#else
#define gc() gc_one(0); gc_one(1); gc_one(2)
#endif

/* ---- the watch: every write that changes the row's pair ---------------- */

/*
 * A win, a renewal, a resign and a quarantine write a (term,
 * expires_at_ms) pair that the row never had before: the term grows, or
 * the expiry moves to a new now (+ TTL). (That fails only when the
 * database clock steps back onto a millisecond it showed before, or when
 * one leader renews twice within one millisecond; neither is in the
 * model.) So no watch, answer or attempt made before such a write can match
 * the row after it: rowchg clears them all. request_resign and clock
 * steps leave the pair as it is. A promotion brings back an older row,
 * whose pair a candidate may have watched; but that row is stale, and
 * attempt never takes a stale row, it quarantines it (a new pair), so
 * clearing the watches at the promotion changes no behaviour.
 */
#ifdef WATCH
#define WCLR(i) wv[i] = 0; wf[i] = 0; pend[i] = 0; cas[i] = 0; ocas[i] = 0
#if N == 2
#define rowchg() WCLR(0); WCLR(1)
#else
#define rowchg() WCLR(0); WCLR(1); WCLR(2)
#endif
#else
#define rowchg() skip
#endif

/* ---- the named statements, each run atomically by the database -------- */

/* @statement attempt: take the lease when CANTAKE; won says whether this
 * run took it; c says whether it carries the row's current pair. (The
 * candidate row's heartbeat has no safety role.) */
#if PROMOTE > 0
inline db_attempt(p, c, won)
{
    if
    :: TAKES(p, c) ->
        term = NEXTTERM;
        assert(term > hiterm);  /* TERMS across epochs: never issued before */
        hiterm = term;
        assert(term > held[0] && term > req[0] && term > oterm[0]);
        assert(term > held[1] && term > req[1] && term > oterm[1]);
#if N == 3
        assert(term > held[2] && term > req[2] && term > oterm[2]);
#endif
        lid = p;
        exp = T;
        rreq = 0;
        hto = NONE;
        lep = ep;
        won = 1;
        rowchg();
        gc()
    :: QUARANTINES(p, c) ->
        assert(term <= hiterm); /* so QTERM is the clock: above every term */
        printf("| db %d: the row of epoch %d is quarantined in epoch %d, ",
               dbnow, lep, ep);
        term = QTERM;
        hiterm = (term > hiterm -> term : hiterm);
        lid = NONE;
        exp = T;
        rreq = 0;
        hto = QUAR;
        lep = ep;
        won = 0;
        printf("term %d\n", term);
        rowchg();
        gc()
    :: else -> won = 0
    fi
}
#else
inline db_attempt(p, c, won)
{
    if
    :: CANTAKE(p, c) ->
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
        rowchg();
        gc()
    :: else -> won = 0
    fi
}
#endif

/* @statement renew: extend the exact holder and term, only while it is
 * unexpired; found says whether a row came back. */
inline db_renew(p, t, found)
{
    if
#if PROMOTE > 0
    :: lid == p && term == t && exp > 0 && lep == ep ->
        exp = T; found = 1; rowchg()
#else
    :: lid == p && term == t && exp > 0 -> exp = T; found = 1; rowchg()
#endif
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
        rowchg();
        gc()
    :: else -> skip
    fi
}

#if FIRES > 0
/* @statement claim: insert fire f for term t when CLAIM_WHERE holds. */
inline db_claim(p, f, t)
{
    if
    :: CLAIM_WHERE(p, f, t) ->
        assert(CLAIM_FENCED(p, t));
        assert(CLAIM_ORDER(t));
        if
        :: ccount[f] == 0 -> cterm[f] = t; cby[f] = p; SET_ATT1(f)
        :: else -> skip
        fi;
        ccount[f] = (ccount[f] < 2 -> ccount[f] + 1 : 2);
        assert(ccount[f] <= 1);
        gc_claims()
    :: else -> skip
    fi
}

#ifdef RECOVER
/* @statement take: fire f's next attempt for term t when TAKE_WHERE
 * holds. */
inline db_take(p, f, t)
{
    if
    :: TAKE_WHERE(p, f, t) ->
        assert(RECOVER_APART(f));
        cterm[f] = t; cby[f] = p; catt[f]++
    :: else -> skip
    fi
}

/* A candidate that believes it holds a term sends a take of fire f. */
#define TAKE(f) \
    d_step { \
        held[p] != 0 && cf[p] == 0 && ccount[f] == 1 -> \
        cf[p] = f + 1; ct[p] = held[p]; ck[p] = 1; \
        printf("| db %d, p%d at local %d: sends take of fire %d, ", \
               dbnow, p, lnow[p], f); \
        printf("term %d, trust %d\n", ct[p], trust[p]) \
    }
#endif

/* A candidate that believes it holds a term (held != 0, whether or not
 * its window is still open: is_leader() is not asked) claims fire f with
 * that term. The statement runs later, or never, also after a crash. */
#define CLAIM(f) \
    d_step { \
        held[p] != 0 && cf[p] == 0 -> \
        cf[p] = f + 1; ct[p] = held[p]; \
        printf("| db %d, p%d at local %d: sends claim of fire %d, ", \
               dbnow, p, lnow[p], f); \
        printf("term %d, trust %d\n", ct[p], trust[p]); \
        gc_claim(p) \
    }
#endif

/* ---- the watch and the old rule's detection, at an answer --------------- */

#ifdef WATCH
#define CAS(p) cas[p]
#define OCAS(p) ocas[p]
/* An answer that shows a row arrives: the watch takes its pair. The same
 * pair as the watch's keeps the first-seen time (wf counts on); another
 * pair starts it now (wf = FLOOR). A row that changed after the statement
 * ran (pend cleared) is not the row's pair any more: no valid watch.
 * A vacant row that is not quarantined is taken without the watch (open,
 * or a reservation that is over, whose condition "expired" is the
 * watched clause's), and it stays so until its pair changes: its watch is
 * dropped at once (WATCHABLE), which changes no behaviour. */
#define WATCHABLE (lid != NONE || hto == QUAR)
inline watch_answer(p)
{
    if
    :: pend[p] && wv[p] ->
        printf("| db %d, p%d at local %d: same row as watched, ",
               dbnow, p, lnow[p]);
        printf("floor in %d\n", wf[p])
    :: pend[p] && !wv[p] && WATCHABLE ->
        wv[p] = 1; wf[p] = FLOOR;
        printf("| db %d, p%d at local %d: watches the row (term %d), ",
               dbnow, p, lnow[p], term);
        printf("floor in %d\n", wf[p])
    :: pend[p] && !wv[p] && !WATCHABLE ->
        SAY(p, "a vacant row: no watch needed")
    :: else ->
        wv[p] = 0; wf[p] = 0;
        SAY(p, "the row changed since the answer: no valid watch")
    fi;
    pend[p] = 0
}
#else
#define CAS(p) 0
#define OCAS(p) 0
#endif

#ifdef OLD_RULE
/* observe() of ed8ea1f, with exact detection: an answer that ran after a
 * step that this candidate's baseline predates shows the step (det = 1)
 * and starts a quarantine of one TTL from the answer's arrival. The answer
 * becomes the baseline. */
inline old_observe(p, det)
{
    if
    :: obs[p] != 0 && rsc[p] + 1 > obs[p] ->
        det = 1; quar[p] = TTL_L;
        SAY(p, "detects a database clock step, starts a quarantine")
    :: else -> skip
    fi;
    obs[p] = rsc[p] + 1; rsc[p] = 0
}
#define MAYSEND(p) (obs[p] != 0 || fs[p])
#define MAYREAD(p) (obs[p] == 0 && !fs[p])
#else
#define MAYSEND(p) 1
#ifdef WATCH
/* A read that runs while the watch is valid shows the watched pair and
 * changes nothing; a read runs whenever it likes, so one sent later does
 * what one sent now would do. Reads are sent without a valid watch. */
#define MAYREAD(p) (!wv[p])
#else
#define MAYREAD(p) 1
#endif
#endif

/* ---- a candidate: its client (elector.c) and its database session ------ */

proctype candidate(byte p)
{
    bit b;
#if FIRES > 0
    byte g;                 /* the claim running: fire, term */
    byte u;
#endif

end:
    do
    /* attempt(): a follower sends the attempt; start = local now. It
     * carries the watched pair when the watch is FLOOR old (cas: the pair
     * is also the row's). With the old rule, a candidate without a
     * baseline reads the lease first (first sight). */
    :: d_step {
        st[p] == IDLE && held[p] == 0 && MAYSEND(p) ->
        st[p] = ATT; since[p] = 0;
#ifdef WATCH
        cas[p] = (wv[p] && wf[p] == 0);
        printf("| db %d, p%d at local %d: sends attempt, ",
               dbnow, p, lnow[p]);
        printf("carries the row's pair %d\n", cas[p])
#else
#ifdef OLD_RULE
        sq[p] = (quar[p] > 0); fs[p] = 0;
#endif
        SAY(p, "sends attempt")
#endif
    }

    /* read: a follower reads the lease row (the watch; with the old rule,
     * the first sight before the first attempt) */
    :: d_step {
        st[p] == IDLE && held[p] == 0 && MAYREAD(p) ->
        st[p] = RD;
        SAY(p, "sends read")
    }

    /* renew(): a leader inside its window renews its exact term (with the
     * old rule also a leader that holds its term untrusted) */
    :: d_step {
        st[p] == IDLE && held[p] != 0 &&
#ifdef OLD_RULE
        (trust[p] > 0 || ut[p]) ->
        sq[p] = (quar[p] > 0);
#else
        trust[p] > 0 ->
#endif
        st[p] = REN; since[p] = 0; req[p] = held[p];
        printf("| db %d, p%d at local %d: sends renew of term %d\n",
               dbnow, p, lnow[p], req[p])
    }

    /* tick(): the window passed without a renewal: step_down() */
    :: d_step {
        st[p] == IDLE && held[p] != 0 && trust[p] == 0 ->
        held[p] = 0;
#ifdef OLD_RULE
        ut[p] = 0;
#endif
        SAY(p, "steps down, window passed")
    }

    /* elector_resign(): step down first, then send resign (exact term) */
    :: d_step {
        st[p] == IDLE && held[p] != 0 ->
        req[p] = held[p]; held[p] = 0; trust[p] = 0; st[p] = RES;
#ifdef OLD_RULE
        ut[p] = 0;
#endif
        SAY(p, "steps down, sends resign")
    }

    /* attempt() reads its response: trust(term, start) when it won (with
     * the old rule: held but not trusted when the attempt started inside
     * a quarantine or its answer showed a step) */
    :: d_step {
        st[p] == ATT_R ->
#ifdef WATCH
        watch_answer(p);
#endif
#ifdef OLD_RULE
        old_observe(p, b);
        b = (b || sq[p]);
#endif
        if
#ifdef OLD_RULE
        :: rok[p] && b ->
            held[p] = rterm[p]; ut[p] = 1;
            printf("| db %d, p%d at local %d: attempt won term %d, ",
                   dbnow, p, lnow[p], held[p]);
            printf("holds it untrusted (quarantine %d)\n", quar[p])
        :: rok[p] && !b ->
#else
        :: rok[p] ->
#endif
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
        st[p] = IDLE; since[p] = 0; rok[p] = 0; rterm[p] = 0; b = 0;
#ifdef OLD_RULE
        sq[p] = 0
#endif
    }

    /* renew() reads its response: trust again from the renew's start,
     * or resign when asked to, or step down when no row came back */
    :: d_step {
        st[p] == REN_R ->
#ifdef WATCH
        if
        :: rok[p] -> watch_answer(p)
        :: else -> skip
        fi;
#endif
#ifdef OLD_RULE
        if
        :: rok[p] -> old_observe(p, b)
        :: else -> skip
        fi;
        b = (b || sq[p]);
#endif
        if
        :: rok[p] && rrr[p] ->
            held[p] = 0; trust[p] = 0; st[p] = RES;
#ifdef OLD_RULE
            ut[p] = 0;
#endif
            SAY(p, "renewed, asked to resign: steps down, sends resign")
#ifdef OLD_RULE
        :: rok[p] && !rrr[p] && b ->
            trust[p] = 0; ut[p] = 1; st[p] = IDLE; req[p] = 0;
            printf("| db %d, p%d at local %d: renewed term %d, ",
                   dbnow, p, lnow[p], held[p]);
            printf("holds it untrusted (quarantine %d)\n", quar[p])
        :: rok[p] && !rrr[p] && !b ->
            ut[p] = 0;
#else
        :: rok[p] && !rrr[p] ->
#endif
            trust[p] = W - since[p]; st[p] = IDLE; req[p] = 0;
            CHECK_NEWEST(p);
            printf("| db %d, p%d at local %d: renewed term %d, trust %d\n",
                   dbnow, p, lnow[p], held[p], trust[p])
        :: else ->
            held[p] = 0; trust[p] = 0; st[p] = IDLE; req[p] = 0;
#ifdef OLD_RULE
            ut[p] = 0;
#endif
            SAY(p, "renew found no row, steps down")
        fi;
        since[p] = 0; rok[p] = 0; rrr[p] = 0; rterm[p] = 0; b = 0;
#ifdef OLD_RULE
        sq[p] = 0
#endif
    }

    /* the read's answer: the watch takes the row (with the old rule: the
     * first sight; a row gives the baseline, a held lease with less than
     * T left starts a quarantine; no row gives no baseline) */
    :: d_step {
        st[p] == RD_R ->
#ifdef WATCH
        watch_answer(p);
#endif
#ifdef OLD_RULE
        fs[p] = 1;
        if
        :: rok[p] ->
            obs[p] = rsc[p] + 1;
            if
            :: rrr[p] ->
                quar[p] = TTL_L;
                SAY(p, "first sight: a held lease near its end, quarantine")
            :: else ->
                SAY(p, "first sight: the baseline, no quarantine")
            fi
        :: else ->
            SAY(p, "first sight: no row, no baseline")
        fi;
        rsc[p] = 0;
#endif
        st[p] = IDLE; rok[p] = 0; rrr[p] = 0
    }

    /* failed() in renew(): time-out or lost connection before the renew
     * ran (it may still run, as an orphan) or after (the response is
     * lost). The leader keeps its last window: nothing extends it. A
     * failed attempt or resign leaves the client as a crash does, and a
     * failed read as one never sent (it changes nothing). */
    :: d_step {
        st[p] == REN && ok[p] == 0 ->
        ok[p] = REN; oterm[p] = req[p];
        st[p] = IDLE; since[p] = 0; req[p] = 0;
#ifdef OLD_RULE
        sq[p] = 0;
#endif
        gc_one(p);
        SAY(p, "renew fails before it ran (may still run), keeps window")
    }
    :: d_step {
        st[p] == REN_R ->
        st[p] = IDLE; since[p] = 0; req[p] = 0;
        rok[p] = 0; rrr[p] = 0; rterm[p] = 0;
#ifdef WATCH
        pend[p] = 0;
#endif
#ifdef OLD_RULE
        sq[p] = 0; rsc[p] = 0;
#endif
        SAY(p, "renew fails after it ran (response lost), keeps window")
    }

    /* crash and restart with the same id: the local state is lost (the
     * watch too: the new process is a fresh candidate), the rows stay, a
     * statement in flight becomes an orphan (an attempt keeps the pair it
     * carries). (Only one orphan per id at a time: a candidate with one
     * does not abandon a second statement before the first has run or
     * been dropped.) */
    :: d_step {
        !((st[p] == ATT || st[p] == REN || st[p] == RES) && ok[p] != 0) ->
        if
        :: st[p] == ATT || st[p] == REN || st[p] == RES ->
            ok[p] = st[p]; oterm[p] = req[p]
        :: else -> skip
        fi;
#ifdef WATCH
        ocas[p] = (st[p] == ATT -> cas[p] : ocas[p]);
        cas[p] = 0; wv[p] = 0; wf[p] = 0; pend[p] = 0;
#endif
#ifdef OLD_RULE
        obs[p] = 0; rsc[p] = 0; quar[p] = 0; sq[p] = 0; ut[p] = 0; fs[p] = 0;
#endif
        st[p] = IDLE; held[p] = 0; trust[p] = 0; since[p] = 0; req[p] = 0;
        rok[p] = 0; rrr[p] = 0; rterm[p] = 0;
        gc_one(p);
        SAY(p, "crashes and restarts")
    }

    /* the database runs p's statements; the answer shows the row as the
     * statement left it (pend: it is the row's pair until the next change) */
    :: d_step {
        st[p] == ATT && MAYRUN(p, CAS(p)) ->
        db_attempt(p, CAS(p), b);
        rok[p] = b; rterm[p] = (b -> term : 0); b = 0;
        st[p] = ATT_R;
#ifdef WATCH
        cas[p] = 0; pend[p] = 1;
#endif
#ifdef OLD_RULE
        rsc[p] = nsteps;
#endif
        printf("| db %d: attempt of p%d runs, won %d, ", dbnow, p, rok[p]);
        printf("lease: p%d term %d expires in %d\n", lid, term, exp)
    }
    :: d_step {
        st[p] == REN ->
        db_renew(p, req[p], b);
        rok[p] = b; rrr[p] = (b -> rreq : 0); rterm[p] = (b -> req[p] : 0);
#ifdef WATCH
        pend[p] = b;
#endif
#ifdef OLD_RULE
        rsc[p] = nsteps;
#endif
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
    :: d_step {
        st[p] == RD ->
        st[p] = RD_R;
#ifdef WATCH
        pend[p] = (term != 0);
#endif
#ifdef OLD_RULE
        rok[p] = (term != 0); rrr[p] = (lid != NONE && exp < T);
        rsc[p] = nsteps;
#endif
        printf("| db %d: read of p%d runs, lease: p%d term %d expires in %d\n",
               dbnow, p, lid, term, exp)
    }

    /* orphans run late, with nobody to read the result, or never */
    :: d_step {
        ok[p] == ATT && MAYRUN(p, OCAS(p)) ->
        db_attempt(p, OCAS(p), b);
        b = 0; ok[p] = 0;
#ifdef WATCH
        ocas[p] = 0;
#endif
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
#ifdef WATCH
        ocas[p] = 0;
#endif
        printf("| db %d: orphan of p%d is dropped, never runs\n", dbnow, p)
    }

#if FIRES > 0
    /* claims: sent, run by the database, or lost (never run) */
    :: CLAIM(0)
#if FIRES >= 2
    :: CLAIM(1)
#endif
#if FIRES >= 3
    :: CLAIM(2)
#endif
#ifdef RECOVER
    :: TAKE(0)
    :: d_step {
        cf[p] != 0 && ck[p] ->
        g = cf[p] - 1; u = ct[p]; cf[p] = 0; ct[p] = 0; ck[p] = 0;
        printf("| db %d: take of p%d runs (fire %d, term %d), ",
               dbnow, p, g, u);
        printf("lease: p%d term %d expires in %d\n", lid, term, exp);
        db_take(p, g, u);
        printf("| db %d: fire %d: attempt %d, term %d, by p%d\n", dbnow,
               g, catt[g], cterm[g], cby[g]);
        g = 0; u = 0
    }
#endif
    :: d_step {
        cf[p] != 0 && !IS_TAKE(p) ->
        g = cf[p] - 1; u = ct[p]; cf[p] = 0; ct[p] = 0;
        printf("| db %d: claim of p%d runs (fire %d, term %d), ",
               dbnow, p, g, u);
        printf("lease: p%d term %d expires in %d\n", lid, term, exp);
        db_claim(p, g, u);
        printf("| db %d: fire %d has %d row(s)\n", dbnow, g, ccount[g]);
        g = 0; u = 0
    }
    :: d_step {
        cf[p] != 0 ->
        cf[p] = 0; ct[p] = 0; CLEAR_TAKE(p);
        printf("| db %d: claim of p%d is lost, never runs\n", dbnow, p)
    }
#endif
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

#if PROMOTE > 0
/* ---- replication and promotion ----------------------------------------- */

#if FIRES == 0
#define SAME_LEDGER 1
#else
#define SAME_FIRE(f) \
    (r_cterm[f] == cterm[f] && r_cby[f] == cby[f] && r_ccount[f] == ccount[f])
#if FIRES == 1
#define SAME_LEDGER SAME_FIRE(0)
#elif FIRES == 2
#define SAME_LEDGER (SAME_FIRE(0) && SAME_FIRE(1))
#else
#define SAME_LEDGER (SAME_FIRE(0) && SAME_FIRE(1) && SAME_FIRE(2))
#endif
#endif
#ifdef ERASE_STALE
#define REPLICA_SAME (r_lep == lep && SAME_LEDGER)
#else
#define REPLICA_SAME \
    (r_lid == lid && r_term == term && r_exp == exp && r_rreq == rreq && \
     r_hto == hto && r_lep == lep && SAME_LEDGER)
#endif

/*
 * The replica applies the primary's writes up to some step, at any time or
 * never (asynchronous replication, any lag): its copy is the primary's
 * state at that step. A promotion, at any time, PROMOTE times per run at
 * most, replaces the database with the copy: the writes after it are lost.
 * The promoted database is in a new epoch; candidates reach it at the same
 * address, and statements in flight run on it. The old primary runs no
 * statement after the promotion. A new replica starts as a copy of the new
 * primary (after the last promotion the copy is no longer used and is
 * cleared).
 */
active proctype replica()
{
#if FIRES > 0
    byte f;
#endif

end:
    do
    :: d_step {
        ep < PROMOTE && !REPLICA_SAME ->
#ifndef ERASE_STALE
        r_lid = lid; r_term = term; r_exp = exp; r_rreq = rreq; r_hto = hto;
#endif
        r_lep = lep;
#if FIRES > 0
        for (f : 0 .. FIRES - 1) {
            r_cterm[f] = cterm[f]; r_cby[f] = cby[f]; r_ccount[f] = ccount[f]
        }
        f = 0;
#endif
        printf("| db %d: the replica catches up: p%d term %d epoch %d\n",
               dbnow, lid, term, lep)
    }
    :: d_step {
        ep < PROMOTE ->
        lid = r_lid; term = r_term; exp = r_exp; rreq = r_rreq; hto = r_hto;
        lep = r_lep;
#if FIRES > 0
        for (f : 0 .. FIRES - 1) {
            cterm[f] = r_cterm[f]; cby[f] = r_cby[f]; ccount[f] = r_ccount[f]
        }
        f = 0;
#endif
        ep = ep + 1;
        printf("| db %d: PROMOTION to epoch %d, the replica's copy: ",
               dbnow, ep);
        printf("p%d term %d expires in %d, epoch %d\n", lid, term, exp, lep);
        if
        :: ep == PROMOTE ->
            r_lid = NONE; r_term = 0; r_exp = 0; r_rreq = 0; r_hto = NONE;
            r_lep = 0;
#if FIRES > 0
            for (f : 0 .. FIRES - 1) {
                r_cterm[f] = 0; r_cby[f] = NONE; r_ccount[f] = 0
            }
            f = 0;
#endif
        :: else -> skip
        fi;
        rowchg();
        gc()
    }
    od
}
#endif

/* ---- time ------------------------------------------------------------ */

/* Candidate i's clock advances a local units in one database tick: the
 * start of its statement in flight recedes, its window shrinks, and so do
 * its watch's floor and (old rule) its quarantine. Only a clock someone
 * reads gets a choice of rate; the others advance S. */
#ifdef WATCH
#define TIMED_WATCH(i) || wf[i] > 0
#else
#define TIMED_WATCH(i)
#endif
#ifdef OLD_RULE
#define TIMED_QUAR(i) || quar[i] > 0
#else
#define TIMED_QUAR(i)
#endif
#define TIMED(i) \
    (((st[i] == ATT || st[i] == ATT_R || st[i] == REN || st[i] == REN_R) && \
      since[i] < W) || trust[i] > 0 TIMED_WATCH(i) TIMED_QUAR(i))
#define RATE(i, a) ((a) == S || TIMED(i))

#ifdef WATCH
#define ADV_WATCH(i, a) wf[i] = (wf[i] > a -> wf[i] - a : 0)
#else
#define ADV_WATCH(i, a) skip
#endif
#ifdef OLD_RULE
#define ADV_QUAR(i, a) quar[i] = (quar[i] > a -> quar[i] - a : 0)
#else
#define ADV_QUAR(i, a) skip
#endif
#define ADVANCE(i, a) \
    if \
    :: st[i] == ATT || st[i] == ATT_R || st[i] == REN || st[i] == REN_R -> \
        since[i] = (since[i] + (a) >= W -> W : since[i] + (a)) \
    :: else -> skip \
    fi; \
    trust[i] = (trust[i] > (a) -> trust[i] - (a) : 0); \
    ADV_WATCH(i, (a)); \
    ADV_QUAR(i, (a)); \
    lnow[i] = lnow[i] + (a)

#if PROMOTE > 0
#define TICK_REPLICA r_exp = (r_exp > 0 -> r_exp - 1 : 0)
#else
#define TICK_REPLICA skip
#endif
#if FIRES > 0
#define TICK_CLAIMS gc_claims()
#else
#define TICK_CLAIMS skip
#endif

/* One database tick, with candidate clocks advancing a0, a1 (and a2)
 * local units: one indivisible step, so the monitor sees all clocks move
 * together. */
#if N == 2
#define TICK(a0, a1, a2) \
    d_step { \
        RATE(0, a0) && RATE(1, a1) -> \
        ADVANCE(0, a0); \
        ADVANCE(1, a1); \
        exp = (exp > 0 -> exp - 1 : 0); \
        TICK_REPLICA; \
        TICK_CLAIMS; \
        dbnow = dbnow + 1; \
        printf("| tick: db %d, local clocks +%d +%d\n", dbnow, (a0), (a1)) \
    }
#define TICKS(a0, a1) :: TICK(a0, a1, S)
#else
#define TICK(a0, a1, a2) \
    d_step { \
        RATE(0, a0) && RATE(1, a1) && RATE(2, a2) -> \
        ADVANCE(0, a0); \
        ADVANCE(1, a1); \
        ADVANCE(2, a2); \
        exp = (exp > 0 -> exp - 1 : 0); \
        TICK_REPLICA; \
        TICK_CLAIMS; \
        dbnow = dbnow + 1; \
        printf("| tick: db %d, local clocks +%d +%d +%d\n", \
               dbnow, (a0), (a1), (a2)) \
    }
#define TICKS(a0, a1) \
    :: TICK(a0, a1, S - 1) :: TICK(a0, a1, S) :: TICK(a0, a1, S + 1)
#endif
#define TICKS1(a0) TICKS(a0, S - 1) TICKS(a0, S) TICKS(a0, S + 1)

#ifdef STEPS
#if PROMOTE > 0
#define STEPPABLE (exp > 0 || r_exp > 0)
#else
#define STEPPABLE (exp > 0)
#endif
#ifdef OLD_RULE
#define MAYSTEP (STEPPABLE && nsteps < MAXSTEPS)
#define COUNT_STEP nsteps = nsteps + 1
#else
#define MAYSTEP STEPPABLE
#define COUNT_STEP skip
#endif
#if PROMOTE > 0
#define STEP_REPLICA(d) r_exp = (r_exp > d -> r_exp - d : 0)
#else
#define STEP_REPLICA(d) skip
#endif
#if FIRES > 0
#define STEP_CLAIMS gc_claims()
#else
#define STEP_CLAIMS skip
#endif

/* A forward step of the database clock by d ticks (any d: a step of T or
 * more has the effect of T): running leases end sooner, the stored values
 * and the local clocks stay. The replica's copy is read against the same
 * clock (the promoted database's clock is the model's, "one clock"), so
 * it steps too. With the old rule, steps are counted. */
#define STEP(d) \
    d_step { \
        MAYSTEP -> \
        exp = (exp > d -> exp - d : 0); \
        STEP_REPLICA(d); \
        COUNT_STEP; \
        STEP_CLAIMS; \
        dbnow = dbnow + d; \
        printf("| db %d: the database clock steps forward by %d tick(s), ", \
               dbnow, d); \
        printf("lease: p%d term %d expires in %d\n", lid, term, exp) \
    }
#endif

active proctype clock()
{
end:
    do
#ifdef STEPS
    :: STEP(1)
#if T >= 2
    :: STEP(2)
#endif
#if T >= 3
    :: STEP(3)
#endif
#if T >= 4
#error "STEPS: T at most 3"
#endif
#endif
    TICKS1(S - 1)
    TICKS1(S)
    TICKS1(S + 1)
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
