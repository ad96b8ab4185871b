#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dashboard_check.py: the browser side of tests/cli/dashboard.test.

  dashboard_check.py URL NS ID=PID[,ID=PID...] SHOT [--block-script]
  dashboard_check.py jobs URL NS USER:PASSWORD SHOT

Opens serve's page at URL in Debian's Chromium (headless, driven by
Selenium and chromedriver), reads the leader the page shows for namespace
NS, then kills that leader's process (its PID in the list of candidates)
with SIGKILL; a process that already ended (a leader that stepped down on
its own on a loaded machine, as it must when a renewal answers late) is
not an error: its lease lapses all the same. Once serve's own
JSON (URL api/v1/namespaces/NS) names another leader, the page must show
it within 3 s without being reloaded (a marker set in the page must
survive), and by then its timeline of NS must hold a bar of the killed
leader, ended "expired", followed by an open one ("to now", "leads") of
the new leader, both labelled and titled with their leader's id; and the
fires of namespace "jobs" must show a failed fire of job "backup". Saves a
screenshot to SHOT. Exits 0 when all holds, 1 with the reasons otherwise
("stale leader" when the page kept the dead leader, "timeline" when its
timeline does not show the failover).

--block-script blocks dashboard.js in the browser (the broken variant: a
page that never updates); the run must then fail with a stale leader and
a timeline without the failover.

"jobs" checks the jobs of namespace NS (which has a good fire of job
"nightly" and a failed one of "backup", claimed by "f"), as a user of
serve (every request carries USER:PASSWORD): the jobs table lists both;
backup's "history" button shows its failed fire with its host, term,
attempt, start and outcome; nightly's "pause" button pauses it (serve's
JSON then says so, and so does the page), "run now" asks for a run-now
(one fire offered, the page says its key) and "resume" resumes it. Exits 1
with the reason when one does not hold ("pause" when the button did not
reach the database: the broken variant is a serve that refuses changes).
"""
import base64
import json
import os
import signal
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import harness  # noqa: E402  (tests/lib: wait_for)
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


def fail(msg):
    print(f"dashboard_check: {msg}", file=sys.stderr)
    sys.exit(1)


def api_leader(url, ns):
    with urllib.request.urlopen(url + "api/v1/namespaces/" + ns, timeout=10) as r:
        return json.load(r).get("leader")


def page_leader(driver, ns):
    """Returns the leader the page shows for NS, or None. Read in one
    script, so in one turn of the page's event loop: the page redraws its
    state line every poll, and an element found by one WebDriver call can
    be gone (stale) by the next."""
    return driver.execute_script("""
        const s = [...document.querySelectorAll('section[data-ns]')]
            .find(x => x.dataset.ns === arguments[0]);
        const b = s && s.querySelector('.state .leader');
        return b ? b.innerText : null;""", ns)


def timeline_problem(driver, ns, old, new):
    """Returns why NS's timeline does not show old's term expired and
    new's open after it, or None when it does."""
    bars = driver.execute_script("""
        const s = [...document.querySelectorAll('section[data-ns]')]
            .find(x => x.dataset.ns === arguments[0]);
        if (!s) return [];
        return [...s.querySelectorAll('.timeline .lane .term')].map(b => {
            const r = b.getBoundingClientRect();
            return [b.textContent, b.title, r.left, r.right];
        });""", ns)
    if not bars:
        return "no bars"
    dead = [b for b in bars if b[0] == old and b[1].startswith(f"{old}, term ")
            and b[1].endswith(" UTC, expired")]
    cur = bars[-1]
    if not dead:
        return f"no bar of {old} ended expired in {bars!r}"
    if not (cur[0] == new and cur[1].startswith(f"{new}, term ")
            and cur[1].endswith(" to now UTC, leads")):
        return f"the last bar is not {new}'s open term: {bars!r}"
    if dead[-1][3] > cur[2] + 1:
        return f"{old}'s bar does not end before {new}'s starts: {bars!r}"
    return None


def wait(what, secs, fn):
    """Returns fn()'s first true value within secs; else fails with what."""
    v = harness.wait_for(fn, secs, 0.1)
    if not v:
        fail(f"{what} (after {secs} s)")
    return v


def start_browser():
    """Returns a headless Chromium, or None after a message."""
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu",
              "--disable-dev-shm-usage", "--window-size=1100,900"):
        opts.add_argument(a)
    try:
        return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    except WebDriverException as e:
        print(f"dashboard_check: cannot start Chromium: {e.msg}", file=sys.stderr)
        return None


def api_job(url, ns, job, auth):
    """Returns serve's JSON of job in ns (api/v1/jobs), or None."""
    req = urllib.request.Request(url + "api/v1/jobs?namespace=" + ns,
                                 headers={"Authorization": auth})
    with urllib.request.urlopen(req, timeout=10) as r:
        for j in json.load(r)["jobs"]:
            if j["job"] == job:
                return j
    return None


def click(driver, ns, job, action):
    """Clicks job's button action in ns's jobs table (found and clicked in
    one script: the table is redrawn every 5 s). Returns 1 when clicked."""
    return driver.execute_script("""
        const s = [...document.querySelectorAll('section[data-ns]')]
            .find(x => x.dataset.ns === arguments[0]);
        const r = s && [...s.querySelectorAll('table.jobs tr')]
            .find(x => x.dataset.job === arguments[1]);
        const b = r && r.querySelector('button[data-action="' + arguments[2] + '"]');
        if (!b) return 0;
        b.click();
        return 1;""", ns, job, action)


def section_text(driver, ns, css):
    """The text of the elements css inside ns's section, one per line."""
    return driver.execute_script("""
        const s = [...document.querySelectorAll('section[data-ns]')]
            .find(x => x.dataset.ns === arguments[0]);
        return s ? [...s.querySelectorAll(arguments[1])].map(e => e.innerText).join('\\n') : '';""",
        ns, css)


def check_jobs(url, ns, user, shot):
    """The "jobs" check (see the docstring). Returns the exit code."""
    auth = "Basic " + base64.b64encode(user.encode()).decode()
    driver = start_browser()
    if driver is None:
        return 77
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Authorization": auth}})
        driver.get(url)
        wait(f"no jobs table with nightly and backup in {ns}", 15, lambda: {
            "nightly", "backup"} <= set(driver.execute_script("""
            const s = [...document.querySelectorAll('section[data-ns]')]
                .find(x => x.dataset.ns === arguments[0]);
            return s ? [...s.querySelectorAll('table.jobs tr[data-job]')]
                .map(r => r.dataset.job) : [];""", ns)))
        wait("no history button of backup", 5, lambda: click(driver, ns, "backup", "history"))
        row = wait("no failed fire in backup's history", 10, lambda: section_text(
            driver, ns, 'div.history table.history tr.bad'))
        cells = row.split("\t")
        if len(cells) != 7 or cells[2] != "f" or cells[4] != "1 of 1" or \
                cells[6] != "1" or cells[1] == "-" or not cells[3].isdigit():
            fail(f"backup's history row: {cells!r} (want host f, attempt 1 of 1, outcome 1, a start, a term)")
        for action, want in (("pause", lambda j: j["paused"]),
                             ("trigger", lambda j: j["offered"] == 1),
                             ("resume", lambda j: not j["paused"])):
            wait(f"no {action} button of nightly", 10, lambda: click(driver, ns, "nightly", action))
            deadline = time.monotonic() + 5
            while not want(api_job(url, ns, "nightly", auth)):
                if time.monotonic() > deadline:
                    fail(f"{action}: the button did not reach the database after 5 s "
                         f"(serve: {api_job(url, ns, 'nightly', auth)!r}); the page said: "
                         f"{section_text(driver, ns, 'p.said')!r}")
                time.sleep(0.1)
            said = wait(f"{action}: the page said nothing", 5,
                        lambda: section_text(driver, ns, "p.said"))
            if action == "trigger" and "run-now asked (key -" not in said:
                fail(f"run now: the page said {said!r}")
            if action == "pause":
                wait("the page does not show nightly paused", 5, lambda: "\tpaused by " in
                     section_text(driver, ns, "table.jobs tr.skip"))
        driver.execute_script("""
            const s = [...document.querySelectorAll('section[data-ns]')]
                .find(x => x.dataset.ns === arguments[0]);
            const j = s && s.querySelector('div.jobs');
            if (j) j.scrollIntoView();""", ns)
        time.sleep(0.3)
        driver.save_screenshot(shot)
        print("dashboard_check: jobs listed, backup's history shown, nightly paused, run now and resumed from the page")
        return 0
    finally:
        driver.quit()


def main():
    if sys.argv[1:2] == ["jobs"]:
        if len(sys.argv) != 6:
            print(__doc__, file=sys.stderr)
            return 64
        return check_jobs(sys.argv[2].rstrip("/") + "/", *sys.argv[3:])
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    block = "--block-script" in sys.argv
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        return 64
    url, ns, shot = args[0].rstrip("/") + "/", args[1], args[3]
    pids = {k: int(v) for k, v in (x.split("=", 1) for x in args[2].split(","))}
    driver = start_browser()
    if driver is None:
        return 77
    try:
        if block:
            driver.execute_cdp_cmd("Network.enable", {})
            driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*dashboard.js"]})
        driver.get(url)

        def first_leader():
            leader = page_leader(driver, ns)
            if leader is None and block:
                # without its script the page shows what serve read at
                # its GET (on a loaded machine, a lease that lapsed or a
                # read that failed) and never changes: ask again, before
                # the marker is set
                time.sleep(0.2)
                driver.get(url)
            return leader
        deadline = time.monotonic() + 10
        while (old := first_leader()) is None:
            if time.monotonic() > deadline:
                text = driver.execute_script("""
                    const s = [...document.querySelectorAll('section[data-ns]')]
                        .find(x => x.dataset.ns === arguments[0]);
                    return s ? s.innerText : document.body.innerText;""", ns)
                fail(f"the page shows no leader of {ns} (after 10 s); it shows:\n{text}")
            time.sleep(0.1)
        driver.execute_script("window.olMarker = 42;")
        if old not in pids:
            fail(f"the page shows {old!r}, not one of the candidates {sorted(pids)}")
        try:
            os.kill(pids[old], signal.SIGKILL)
        except ProcessLookupError:
            print(f"dashboard_check: {old} (pid {pids[old]}) had already ended",
                  file=sys.stderr)
        new = wait(f"serve names no new leader of {ns}", 30,
                   lambda: (lambda l: l if l and l != old else None)(api_leader(url, ns)))
        deadline = time.monotonic() + 3
        problems = []
        while page_leader(driver, ns) != new:
            if time.monotonic() > deadline:
                problems.append(f"stale leader: the page shows {page_leader(driver, ns)!r} "
                                f"for {ns} 3 s after serve named {new!r} (killed: {old!r})")
                break
            time.sleep(0.1)
        while (why := timeline_problem(driver, ns, old, new)) is not None:
            if time.monotonic() > deadline:  # the same 3 s: no wait of its own
                problems.append(f"timeline of {ns} 3 s after serve named {new!r}: {why}")
                break
            time.sleep(0.1)
        if problems:
            fail("\n".join(problems))
        if driver.execute_script("return window.olMarker;") != 42:
            fail("the page was reloaded to show the new leader")
        wait("no failed fire of backup in the page", 10, lambda: driver.find_elements(
            By.CSS_SELECTOR, 'section[data-ns="jobs"] table.fires tr.bad[data-job="backup"]'))
        wait("no strip of job nightly", 10, lambda: driver.find_elements(
            By.CSS_SELECTOR, 'section[data-ns="jobs"] .strip .dot.ok'))
        driver.save_screenshot(shot)
        print(f"dashboard_check: the page went from {old} to {new} without a reload")
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
