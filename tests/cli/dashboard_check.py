#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""dashboard_check.py: the browser side of tests/cli/dashboard.test.

  dashboard_check.py URL NS PID SHOT [--block-script]

Opens serve's page at URL in Debian's Chromium (headless, driven by
Selenium and chromedriver), reads the leader the page shows for namespace
NS, then kills that leader's process PID with SIGKILL. Once serve's own
JSON (URL api/v1/namespaces/NS) names another leader, the page must show
it within 3 s without being reloaded (a marker set in the page must
survive), and the fires of namespace "jobs" must show a failed fire of job
"backup". Saves a screenshot to SHOT. Exits 0 when all holds, 1 with the
reason otherwise ("stale leader" when the page kept the dead leader).

--block-script blocks dashboard.js in the browser (the broken variant: a
page that never updates); the run must then fail with a stale leader.
"""
import json
import os
import signal
import sys
import time
import urllib.request

from selenium import webdriver
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
    for s in driver.find_elements(By.CSS_SELECTOR, "section[data-ns]"):
        if s.get_attribute("data-ns") == ns:
            b = s.find_elements(By.CSS_SELECTOR, ".state .leader")
            return b[0].text if b else None
    return None


def wait(what, secs, fn):
    deadline = time.monotonic() + secs
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            fail(f"{what} (after {secs} s)")
        time.sleep(0.1)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    block = "--block-script" in sys.argv
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        return 64
    url, ns, pid, shot = args[0].rstrip("/") + "/", args[1], int(args[2]), args[3]
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu",
              "--disable-dev-shm-usage", "--window-size=1100,900"):
        opts.add_argument(a)
    try:
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    except WebDriverException as e:
        print(f"dashboard_check: cannot start Chromium: {e.msg}", file=sys.stderr)
        return 77
    try:
        if block:
            driver.execute_cdp_cmd("Network.enable", {})
            driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*dashboard.js"]})
        driver.get(url)
        old = wait(f"the page shows no leader of {ns}", 10, lambda: page_leader(driver, ns))
        driver.execute_script("window.olMarker = 42;")
        os.kill(pid, signal.SIGKILL)
        new = wait(f"serve names no new leader of {ns}", 30,
                   lambda: (lambda l: l if l and l != old else None)(api_leader(url, ns)))
        deadline = time.monotonic() + 3
        while page_leader(driver, ns) != new:
            if time.monotonic() > deadline:
                fail(f"stale leader: the page shows {page_leader(driver, ns)!r} for {ns} "
                     f"3 s after serve named {new!r} (killed: {old!r})")
            time.sleep(0.1)
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
