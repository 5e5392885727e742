#!/usr/bin/env python3
"""Measures the web UI's speed targets in headless Chromium against a running `slackindex serve`.

Usage: web_ui_speed.py BASE_URL TOKEN CHANNEL_ID PAGES QUERY...

- first useful paint: BASE/#/CHANNEL loaded 10 times; the script notes performance.now() in the frame after the
  first messages are placed (body[data-paint]), i.e. ms since the navigation started.
- search: for each query, the box is given the query and an `input` event (the last keystroke), and the time until
  the result summary names that query is taken in the page (debounce, request, server, render): p50 and max. The
  results come before their count (which follows in its own request).
- scroll back: PAGES older pages loaded by scrolling to the top; each page's request from the Resource Timing API
  (responseStart - requestStart: server time plus loopback) and the whole request.
Prints JSON.
"""
import json
import shutil
import statistics
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

BASE, TOKEN, CHANNEL, PAGES, QUERIES = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]

options = webdriver.ChromeOptions()
for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,800"):
    options.add_argument(flag)
driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
driver.set_script_timeout(30)
wait = WebDriverWait(driver, 60, poll_frequency=0.02)
js = driver.execute_script

driver.get(BASE + "/")
driver.find_element("id", "token").send_keys(TOKEN)
driver.find_element("id", "token").submit()
wait.until(lambda d: js("return document.body.classList.contains('ready')"))

paints = []
for _ in range(10):
    driver.get("about:blank")
    driver.get("%s/#/%s" % (BASE, CHANNEL))
    wait.until(lambda d: js("return !!document.body.dataset.paint"))
    paints.append(int(js("return document.body.dataset.paint")))

searches = {}
for query in QUERIES:
    js("document.getElementById('q').value = ''; document.getElementById('q').dispatchEvent(new Event('input'))")
    took = driver.execute_async_script("""
      const [query, done] = arguments;
      const summary = document.getElementById('summary');
      const before = summary.textContent;
      const q = document.getElementById('q');
      setTimeout(() => {
        const start = performance.now();
        // The summary names the query once its results are shown (an earlier query's count may land first).
        new MutationObserver((_, o) => {
          if (!summary.textContent.includes('“' + query + '”')) return;
          o.disconnect();
          done(Math.round(performance.now() - start));
        }).observe(summary, { childList: true, characterData: true, subtree: true });
        q.value = query;
        q.dispatchEvent(new Event('input'));
      }, 300);
    """, query)
    searches[query] = took

driver.get("about:blank")
driver.get("%s/#/%s" % (BASE, CHANNEL))
wait.until(lambda d: js("return !!document.body.dataset.paint"))
js("performance.clearResourceTimings(); performance.setResourceTimingBufferSize(5000)")
for _ in range(PAGES):
    n = js("return document.querySelectorAll('#timeline article.msg').length")
    js("document.getElementById('timeline').scrollTop = 0")
    try:
        wait.until(lambda d: js("return document.querySelectorAll('#timeline article.msg').length") > n)
    except Exception:  # noqa: BLE001 - the start of the conversation
        break
entries = js("""return performance.getEntriesByType('resource').filter(e => e.name.includes('slackindex.timeline'))
  .map(e => [e.responseStart - e.requestStart, e.responseEnd - e.startTime]);""")
messages = js("return document.querySelectorAll('#timeline article.msg').length")
driver.quit()

server = sorted(e[0] for e in entries)
whole = sorted(e[1] for e in entries)
print(json.dumps({
    "first_paint_ms": sorted(paints), "first_paint_p50": statistics.median(paints),
    "search_ms": searches, "search_p50": statistics.median(searches.values()) if searches else None,
    "scroll_pages": len(entries), "messages_loaded": messages,
    "page_server_ms_p50": round(statistics.median(server), 1) if server else None,
    "page_server_ms_max": round(max(server), 1) if server else None,
    "page_request_ms_p50": round(statistics.median(whole), 1) if whole else None,
    "page_request_ms_max": round(max(whole), 1) if whole else None,
}, indent=1))
