#!/usr/bin/env python3
"""Drives `slackindex serve`'s web UI in headless Chromium over an archive of two workspaces that share channel
names (issue 55): what the sidebar, the conversation's title, the in: chip and the results call them; then the
workspace switcher (issue 51): with TEAM chosen, the sidebar's conversations and TEAM_QUERY's results (ids).

Usage: web_ui_workspaces.py BASE_URL TOKEN QUERY [TEAM TEAM_QUERY]

Prints one JSON object of what it saw; exits 1 with the failing check on stderr.
"""
import json
import shutil
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE, TOKEN, QUERY = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]

options = webdriver.ChromeOptions()
for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,800"):
    options.add_argument(flag)
driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)


def wait(predicate, what):
    try:
        return WebDriverWait(driver, 10, poll_frequency=0.05).until(lambda d: predicate())
    except TimeoutException:
        print("FAILED: timed out waiting for " + what, file=sys.stderr)
        driver.quit()
        sys.exit(1)


def js(script, *args):
    return driver.execute_script(script, *args)


driver.get(BASE + "/")
box = wait(lambda: driver.find_elements(By.ID, "token"), "the sign-in form")[0]
box.send_keys(TOKEN)
box.submit()
wait(lambda: js("return document.body.classList.contains('ready')"), "the app")
out = {}
# Channels as the sidebar lists them: [name, workspace or ""].
out["sidebar"] = js("""return [...document.querySelectorAll('#convlist a.conv')].map(a =>
  [a.querySelector('.cname').textContent, a.querySelector('.ws') ? a.querySelector('.ws').textContent : '']);""")
general = js("""const a = [...document.querySelectorAll('#convlist a.conv')].find(a =>
  a.querySelector('.ws') && a.querySelector('.ws').textContent === 'globex' && a.querySelector('.cname').textContent === 'general');
  return a && a.dataset.id;""")
js("location.hash = '#/' + arguments[0]", general)
wait(lambda: js("return document.querySelectorAll('#timeline article.msg').length > 0"), "globex's #general")
out["title"] = js("return document.getElementById('title').textContent")
out["chips"] = js("return [...document.querySelectorAll('#f-in option')].map(o => o.value).filter(v => v.includes('general'))")
q = driver.find_element(By.ID, "q")
q.send_keys(QUERY)
wait(lambda: js("return !document.getElementById('results').hidden && document.querySelectorAll('#hits a.hit').length > 0"),
     "the results")
out["hits"] = js("return [...new Set([...document.querySelectorAll('#hits .hconv')].map(e => e.textContent))]")
# The workspace switcher: its options ([team id, name]; null when hidden), then one workspace chosen.
out["switcher"] = js("""const s = document.getElementById('workspace');
  return s.hidden ? null : [...s.options].map(o => [o.value, o.textContent]);""")
if len(sys.argv) > 5:
    TEAM, TEAM_QUERY = sys.argv[4], sys.argv[5]
    js("const s = document.getElementById('workspace'); s.value = arguments[0]; s.dispatchEvent(new Event('change'));",
       TEAM)
    out["team_sidebar"] = js("return [...document.querySelectorAll('#convlist a.conv')].map(a => a.dataset.id)")
    q.clear()
    q.send_keys(TEAM_QUERY)
    wait(lambda: js("return document.getElementById('summary').textContent.includes('\u201c' + arguments[0] + '\u201d')"
                    + " && document.querySelectorAll('#hits a.hit').length > 0", TEAM_QUERY), "the workspace's results")
    out["team_hits"] = js("""return [...new Set([...document.querySelectorAll('#hits a.hit')].map(a =>
      a.getAttribute('href').split('/')[1]))]""")
driver.quit()
print(json.dumps(out))
