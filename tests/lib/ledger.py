#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ledger.py: the rules of the leadership ledger (who claimed which term,
and which fire, when), shared by the checkers of the fault suite
(tests/faults/checker, cmdcheck, groupcheck, claimcheck), the combined
checks of tests/cluster and tests/contrib/check_fires.py.

    python3 ledger.py --self-test      every rule on made-up claims

A claim is a dict {"holder", "term", "first", "last"}: a holder (a pid, a
candidate id) believed it held term from first to last (ns or ms on one
clock that every holder shares). Each holder's claims come in its own
order.

term_order(): the term rules.
  overlap     an older term was claimed after a newer term's first claim
              (the latest "last" of the terms below a term is later than
              its earliest "first"; equal times are not an overlap): for
              a moment two holders both acted as leader
  shared      two holders claimed one term
  regression  a holder claimed a term below 1, or below one it claimed
              before (with tenures=True: at or below, since each claim of
              a holder is then a tenure of its own, as a CMD's life is)
at_once(): spans of different keys that intersect (CMD lives, tenures of
  both kinds of candidate): the longest intersection per pair of keys.
fire_counts(): how often each fire of a range was claimed (0: a gap).
first_claim(): the first claim of a term >= min_term at or after a time;
claiming_now(): the claim of whoever claims right now.
"""
import sys


def term_order(claims, tenures=False):
    """Applies the term rules to claims. Returns a dict:
    terms: {term: {"holders": set, "first": ns, "last": ns}};
    order: the terms, ascending;
    overlaps: [(older term, newer term, ns the older one went on)];
    shared: [(term, sorted holders)];
    regressions: [(holder, term, the highest term it claimed before)];
    gaps: [ns from each term's last claim to the next term's first]."""
    terms = {}
    high = {}
    regressions = []
    for c in claims:
        t = terms.setdefault(c["term"], {"holders": set(), "first": None,
                                         "last": None})
        t["holders"].add(c["holder"])
        if t["first"] is None or c["first"] < t["first"]:
            t["first"] = c["first"]
        if t["last"] is None or c["last"] > t["last"]:
            t["last"] = c["last"]
        before = high.get(c["holder"])
        if c["term"] < 1 or before is not None and (
                c["term"] < before or tenures and c["term"] == before):
            regressions.append((c["holder"], c["term"],
                                0 if before is None else before))
        if before is None or c["term"] > before:
            high[c["holder"]] = c["term"]
    order = sorted(terms)
    shared = [(term, sorted(terms[term]["holders"], key=str))
              for term in order if len(terms[term]["holders"]) > 1]
    overlaps = []
    older_term, older_last = None, None  # the older term claimed last
    for term in order:
        t = terms[term]
        if older_last is not None and older_last > t["first"]:
            overlaps.append((older_term, term, older_last - t["first"]))
        if older_last is None or t["last"] > older_last:
            older_term, older_last = term, t["last"]
    gaps = [terms[b]["first"] - terms[a]["last"]
            for a, b in zip(order, order[1:])]
    return {"terms": terms, "order": order, "overlaps": overlaps,
            "shared": shared, "regressions": regressions, "gaps": gaps}


def at_once(spans):
    """spans: (key, start, end, item). Returns {(key a, key b): (ns, item
    a, item b)}: for each pair of different keys whose spans intersect,
    the longest intersection (a starts first)."""
    order = sorted(spans, key=lambda s: s[1])
    pairs = {}
    for i, (ka, a0, a1, ia) in enumerate(order):
        for kb, b0, b1, ib in order[i + 1:]:
            if b0 >= a1:
                break  # b and every later span start after a's end
            if ka == kb:
                continue
            inter = min(a1, b1) - b0
            if inter > pairs.get((ka, kb), (-1,))[0]:
                pairs[(ka, kb)] = (inter, ia, ib)
    return pairs


def fire_counts(fires, first, last, step):
    """{fire: times claimed} for every fire first, first + step, ...,
    last (0: never claimed, a gap; above 1: claimed twice), and the fires
    of the whole list claimed more than once, ascending."""
    seen = {}
    for f in fires:
        seen[f] = seen.get(f, 0) + 1
    counts = {f: seen.get(f, 0) for f in range(first, last + 1, step)}
    return counts, sorted(f for f, n in seen.items() if n > 1)


def first_claim(records, ref_ns, min_term):
    """(ns, term, pid) of the first is_leader() claim (fault-host records)
    of a term >= min_term at or after ref_ns: a record that began before
    ref_ns and went on past it counts from ref_ns. None when none."""
    best = None
    for r in records:
        if r["last_before"] < ref_ns or r["term"] < min_term:
            continue
        t = r["first_after"] if r["first_before"] >= ref_ns else ref_ns
        if best is None or t < best[0]:
            best = (t, r["term"], r["pid"])
    return best


def claiming_now(records, now_ns, fresh_ns=50e6):
    """The record claiming last (the greatest last_before) when that claim
    is less than fresh_ns old at now_ns (its process claims right now),
    else None."""
    r = max(records, key=lambda r: r["last_before"]) if records else None
    return r if r is not None and now_ns - r["last_before"] < fresh_ns \
        else None


# ---- self-test ----------------------------------------------------------

def _c(holder, term, first, last):
    return {"holder": holder, "term": term, "first": first, "last": last}


def self_test():
    """Each rule on claims that must pass it and claims that must break
    it. Returns 0 when every verdict is right."""
    bad = []

    def want(name, got, expected):
        ok = got == expected
        print("self-test %-44s %s %r" % (name, "ok " if ok else "BAD", got))
        if not ok:
            bad.append(name)

    def figures(claims, tenures=False):
        r = term_order(claims, tenures)
        return (len(r["overlaps"]), len(r["shared"]), len(r["regressions"]))

    want("clean handover", figures([_c(1, 1, 0, 10), _c(2, 2, 11, 20)]),
         (0, 0, 0))
    want("handover at the same instant",
         figures([_c(1, 1, 0, 10), _c(2, 2, 10, 20)]), (0, 0, 0))
    want("overlap", figures([_c(1, 1, 0, 12), _c(2, 2, 11, 20)]), (1, 0, 0))
    want("older term after a skipped one",
         figures([_c(1, 1, 0, 5), _c(2, 2, 6, 8), _c(3, 3, 9, 20),
                  _c(1, 1, 21, 22)]), (2, 0, 0))
    want("shared term", figures([_c(1, 1, 0, 5), _c(2, 1, 6, 8)]),
         (0, 1, 0))
    want("regression", figures([_c(1, 2, 0, 5), _c(1, 1, 6, 8)]),
         (1, 0, 1))
    # groupcheck compared with the claim before, not the highest: 6, 4, 5
    # was one regression there, two here (5 is below 6 too)
    want("regression after a dip counts each claim",
         figures([_c(1, 6, 0, 1), _c(1, 4, 2, 3), _c(1, 5, 4, 5)]),
         (1, 0, 2))
    want("term zero is one regression", figures([_c(1, 0, 0, 5)]),
         (0, 0, 1))
    want("term zero after term 3, one finding",
         figures([_c(1, 3, 0, 5), _c(1, 0, 6, 7)]), (1, 0, 1))
    want("a tenure repeating a term", figures(
        [_c("a", 2, 0, 5), _c("a", 2, 6, 7)], tenures=True), (0, 0, 1))
    want("samples repeating a term", figures(
        [_c("a", 2, 0, 5), _c("a", 2, 6, 7)]), (0, 0, 0))
    r = term_order([_c(1, 1, 0, 10), _c(2, 2, 11, 20), _c(3, 4, 25, 30)])
    want("gaps between terms", r["gaps"], [1, 5])
    pairs = at_once([("a", 0, 10, 1), ("b", 5, 20, 2), ("a", 8, 30, 3),
                     ("c", 20, 25, 4)])
    want("at once: longest per pair of keys",
         sorted((k, v[0]) for k, v in pairs.items()),
         [(("a", "b"), 5), (("a", "c"), 5), (("b", "a"), 12)])
    want("at once: touching spans do not intersect",
         at_once([("a", 0, 10, 1), ("b", 10, 20, 2)]), {})
    counts, twice = fire_counts([100, 200, 200, 400, 900], 100, 400, 100)
    want("fire counts in the range", counts,
         {100: 1, 200: 2, 300: 0, 400: 1})
    want("fires claimed twice anywhere", twice, [200])
    recs = [{"pid": 1, "term": 3, "first_before": 0, "first_after": 1,
             "last_before": 50, "last_after": 51},
            {"pid": 2, "term": 4, "first_before": 60, "first_after": 61,
             "last_before": 90, "last_after": 91}]
    want("first claim since, a term or newer", first_claim(recs, 55, 4),
         (61, 4, 2))
    want("first claim since, a claim going on", first_claim(recs, 30, 1),
         (30, 3, 1))
    want("first claim since, none", first_claim(recs, 95, 1), None)
    want("claiming now", claiming_now(recs, 100, 20)["pid"], 2)
    want("nobody claiming now", claiming_now(recs, 200, 20), None)
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    print(__doc__, file=sys.stderr)
    sys.exit(2)
