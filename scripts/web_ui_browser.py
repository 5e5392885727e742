#!/usr/bin/env python3
"""Drives `slackindex serve`'s web UI in headless Chromium (selenium + Debian's chromium-driver).

Usage: web_ui_browser.py BASE_URL SPEC_JSON SCREENSHOT_DIR

SPEC_JSON names the tokens and the archive's data the checks use (written by WebUIBrowserTests):
  member, outsider: tokens; channel: a long public channel; middle: a ts in it; thread_channel, thread: a thread
  parent; long_thread: a thread parent with over two pages of replies;
  query: a word with more than a page (20) of results; misspelled: a word one typo from a word the archive holds;
  filter: a channel name (for the in: chip); xss: [[channel, ts], ...];
  hidden: a DM the outsider is not in, hidden_ts: a message in it, hidden_word: a word only found in it.

Prints one JSON object of what it saw; exits 1 with the failing check on stderr. Each check waits for the page
(WebDriverWait), never for a fixed time.
"""
import json
import shutil
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE, SPEC, SHOTS = sys.argv[1].rstrip("/"), json.loads(sys.argv[2]), sys.argv[3]
out = {}


def fail(what):
    print("FAILED: " + what, file=sys.stderr)
    try:
        logs = driver.get_log("browser")
        print("browser console: " + json.dumps(logs)[:4000], file=sys.stderr)
        driver.save_screenshot(SHOTS + "/failure.png")
    except Exception:  # noqa: BLE001 - best effort diagnostics
        pass
    driver.quit()
    sys.exit(1)


def check(condition, what):
    if not condition:
        fail(what)


def wait(predicate, what, seconds=10):
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.05).until(lambda d: predicate())
    except TimeoutException:
        fail("timed out waiting for " + what)


def js(script, *args):
    return driver.execute_script(script, *args)


def count():
    return js("return document.querySelectorAll('#timeline article.msg').length")


def no_alert():
    try:
        driver.switch_to.alert
        return False
    except NoAlertPresentException:
        return True


def sign_in(token):
    driver.get(BASE + "/")
    box = wait(lambda: driver.find_elements(By.ID, "token"), "the sign-in form")[0]
    box.send_keys(token)
    box.submit()
    wait(lambda: js("return document.body.classList.contains('ready')"), "the app after signing in")


def open_hash(fragment):
    js("location.hash = arguments[0]", fragment)


def loaded(fragment_id=None):
    """True once the conversation shows messages (and, with an id, that message)."""
    if fragment_id:
        return js("return !!document.getElementById(arguments[0])", "m-" + fragment_id)
    return count() > 0 and js("return !document.querySelector('#conv').hidden")


options = webdriver.ChromeOptions()
# Every host but loopback goes through a closed port: what the page shows comes from the archive's server.
for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,800",
             "--lang=en-US", "--proxy-server=http://127.0.0.1:9"):
    options.add_argument(flag)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
driver = webdriver.Chrome(service=Service(driver_path), options=options)
driver.set_window_size(1280, 800)

# --- sign in: a wrong token is refused, a member's gives an HttpOnly, SameSite=Strict cookie ---
driver.get(BASE + "/")
driver.find_element(By.ID, "token").send_keys("xoxp-slackindex-not-a-token")
driver.find_element(By.ID, "token").submit()
wait(lambda: "not a token" in driver.find_element(By.ID, "error").text, "the wrong token's error")
driver.get_log("browser")  # the refused sign-in's 401 is expected: start the console check after it
sign_in(SPEC["member"])
cookie = driver.get_cookie("slackindex_session")
check(cookie and cookie.get("httpOnly") and cookie.get("sameSite") == "Strict", "cookie flags: %r" % cookie)
check(js("return document.cookie") == "", "the session cookie is hidden from scripts")
out["signed_in"] = True

# --- sidebar: groups, counts, fuzzy filter ---
groups = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "#convlist h2")]
out["sidebar_groups"] = groups
counts = js("return [...document.querySelectorAll('#convlist .count')].map(e => e.textContent)")
check(counts and all(c.replace(",", "").isdigit() for c in counts), "message counts in the sidebar")
filt = driver.find_element(By.ID, "filter")
name = SPEC["channel_name"]
filt.send_keys(name[0] + name[2] + name[-1])  # a fuzzy subsequence, not a substring
wait(lambda: js("return [...document.querySelectorAll('#convlist .cname')].some(e => e.textContent === arguments[0])", name),
     "the fuzzy filter to keep " + name)
out["filtered"] = js("return document.querySelectorAll('#convlist a.conv').length")
check(out["filtered"] < len(counts), "the filter narrows the list")
driver.find_element(By.XPATH, "//a[contains(@class,'conv')][.//span[@class='cname' and text()='%s']]" % name).click()
filt.clear()
js("document.getElementById('filter').dispatchEvent(new Event('input'))")

# --- timeline: newest page, sticky day headers, three pages back ---
started = time.time()
wait(lambda: loaded(), "the conversation's messages")
check(driver.current_url.endswith("#/" + SPEC["channel"]), "the URL names the conversation: " + driver.current_url)
first = count()
out["first_page"] = first
out["day_headers"] = js("return document.querySelectorAll('#timeline .dayhead').length")
check(out["day_headers"] > 0, "day headers")
check(js("return getComputedStyle(document.querySelector('.dayhead')).position") == "sticky", "sticky day headers")
# A day scrolled to the top: its header, stuck there, ends above the day's first message (it covered 14px of it).
out["dayhead_overlap"] = js("""const t = document.getElementById('timeline');
  const sec = [...t.querySelectorAll('section.day')][1];
  t.scrollTop += sec.getBoundingClientRect().top - t.getBoundingClientRect().top;
  const head = sec.querySelector('.dayhead').getBoundingClientRect();
  const first = sec.querySelector('article.msg').getBoundingClientRect();
  return Math.round(head.bottom - first.top);""")
js("const t = document.getElementById('timeline'); t.scrollTop = t.scrollHeight")
check(js("const t = document.getElementById('timeline'); return t.scrollHeight - t.scrollTop - t.clientHeight < 5"),
      "the newest page opens scrolled to the bottom")
pages_back = []
for _ in range(3):
    before = count()
    js("document.getElementById('timeline').scrollTop = 0")
    wait(lambda: count() > before, "an older page")
    pages_back.append(count() - before)
out["pages_back"] = pages_back
check(all(n == 50 for n in pages_back), "three pages of 50 older messages: %r" % pages_back)
# Older pages keep the reader's place: the message at the top before loading is still near the top.
check(js("return document.getElementById('timeline').scrollTop") > 100, "scroll position kept after prepending")

# --- a link to a message in the middle: centred, highlighted; forward pages on scrolling down ---
open_hash("#/%s/%s" % (SPEC["channel"], SPEC["middle"]))
wait(lambda: loaded(SPEC["middle"]) and js("return !!document.querySelector('#timeline .linked')"), "the linked message")
check(js("return document.querySelector('#timeline .linked').id") == "m-" + SPEC["middle"], "the linked message is highlighted")
offset = js("""const t = document.getElementById('timeline').getBoundingClientRect();
  const m = document.querySelector('#timeline .linked').getBoundingClientRect();
  return Math.abs((m.top + m.bottom) / 2 - (t.top + t.bottom) / 2);""")
check(offset < 120, "the linked message is centred (%dpx off)" % offset)
around = count()
js("const t = document.getElementById('timeline'); t.scrollTop = t.scrollHeight")
wait(lambda: count() > around, "a newer page when scrolling forward")
out["forward_page"] = count() - around
js("const t = document.getElementById('timeline'); t.scrollTop = 0")
wait(lambda: count() > around + out["forward_page"], "an older page from the linked position")

# --- keyboard: j/k move the selection, / focuses search ---
driver.find_element(By.ID, "timeline").click()
body = driver.find_element(By.TAG_NAME, "body")
body.send_keys("k")
body.send_keys("k")
sel_a = js("const s = document.querySelector('#timeline .msg.sel'); return s && s.id")
body.send_keys("j")
sel_b = js("const s = document.querySelector('#timeline .msg.sel'); return s && s.id")
check(sel_a and sel_b and sel_a != sel_b, "j/k move the selection (%r, %r)" % (sel_a, sel_b))
body.send_keys("/")
check(js("return document.activeElement.id") == "q", "/ focuses the search box")
driver.find_element(By.ID, "q").send_keys(Keys.ESCAPE)

# --- a thread in the side panel; Esc closes it ---
open_hash("#/%s/%s" % (SPEC["thread_channel"], SPEC["thread"]))
wait(lambda: loaded(SPEC["thread"]), "the thread's parent")
button = driver.find_element(By.CSS_SELECTOR, "#m-%s button.replies" % SPEC["thread"].replace(".", "\\."))
out["reply_button"] = button.text
button.click()
wait(lambda: js("return !document.getElementById('thread').hidden && document.querySelectorAll('#threadlist article').length > 1"),
     "the thread panel")
out["thread_messages"] = js("return document.querySelectorAll('#threadlist article').length")
check(js("return document.querySelector('#threadlist article').id") == "t-" + SPEC["thread"], "the parent heads the thread")
driver.save_screenshot(SHOTS + "/ui-desktop.png")
driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
wait(lambda: js("return document.getElementById('thread').hidden"), "Esc to close the thread panel")

# --- a thread longer than a page: scrolling the panel reads the rest, each reply once ---
open_hash("#/%s/%s" % (SPEC["thread_channel"], SPEC["long_thread"]))
# The link's own rendering marks the parent (the conversation may still show an earlier rendering with it).
wait(lambda: js("const m = document.getElementById('m-' + arguments[0]); return !!m && m.classList.contains('linked')",
                SPEC["long_thread"]), "the long thread's parent, linked")
js("document.querySelector('#m-' + CSS.escape(arguments[0]) + ' button.replies').click()", SPEC["long_thread"])
wait(lambda: js("return document.querySelectorAll('#threadlist article').length") >= 50, "the long thread's first page")
for _ in range(10):
    n = js("return document.querySelectorAll('#threadlist article').length")
    if n >= 131:
        break
    js("const l = document.getElementById('threadlist'); l.scrollTop = l.scrollHeight")
    wait(lambda: js("return document.querySelectorAll('#threadlist article').length") > n, "the thread's next page")
out["long_thread"] = js("return [...document.querySelectorAll('#threadlist article')].map(a => a.id.slice(2))")
driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
wait(lambda: js("return document.getElementById('thread').hidden"), "Esc to close the long thread")

# --- search: typing, a filter chip that writes the syntax, highlighted snippets, a result in context ---
q = driver.find_element(By.ID, "q")
q.send_keys(SPEC["query"])
wait(lambda: js("return !document.getElementById('results').hidden && document.querySelectorAll('#hits a.hit').length > 0"),
     "search results")
out["search_all"] = js("return document.querySelectorAll('#hits a.hit').length")
# More than a page of results: the count comes after the results, then the pager knows the pages.
wait(lambda: js(r"return /^[\d,]+ results for/.test(document.getElementById('summary').textContent)"), "the count of the results")
out["search_total"] = int(js("return document.getElementById('summary').textContent").split(" ")[0].replace(",", ""))
out["search_pager"] = js("return document.querySelector('#pager span') && document.querySelector('#pager span').textContent")
check(js("return document.querySelectorAll('#hits mark').length") > 0, "highlighted snippets")
Select(driver.find_element(By.ID, "f-in")).select_by_value("#" + SPEC["filter"])
wait(lambda: "in:#" + SPEC["filter"] in q.get_attribute("value"), "the chip to write in:#" + SPEC["filter"])
wait(lambda: js("""const h = [...document.querySelectorAll('#hits .hconv')];
  return h.length > 0 && h.every(e => e.textContent === '#' + arguments[0]);""", SPEC["filter"]),
     "results only from #" + SPEC["filter"])
out["search_query"] = q.get_attribute("value")
out["search_filtered"] = js("return document.querySelectorAll('#hits a.hit').length")
out["search_ms"] = js("return +document.getElementById('summary').dataset.ms")
Select(driver.find_element(By.ID, "sort")).select_by_value("timestamp")
wait(lambda: js("""const t = [...document.querySelectorAll('#hits a.hit')].map(a => a.getAttribute('href').split('/').pop());
  return t.length > 1 && t.every((x, i) => i === 0 || parseFloat(t[i - 1]) >= parseFloat(x));"""), "results newest first")
target = driver.find_element(By.CSS_SELECTOR, "#hits a.hit")
href = target.get_attribute("href")
target.click()
want = href.split("/")[-1]
# Until the result's conversation is shown, the timeline still holds the message linked above (`.linked`): wait for
# the result itself to be the one highlighted (waiting for any `.linked` passed at once when the page was slow).
wait(lambda: js("""const l = [...document.querySelectorAll('#timeline .linked, #threadlist .linked')];
  return l.length > 0 && l.every(e => e.dataset.ts === arguments[0]);""", want), "the result in its conversation")
check(js("return document.querySelector('.linked').dataset.ts") == want, "the result's message is highlighted")
out["result_opened"] = href.split("#", 1)[1]
# Away from the results, the search box no longer holds their query.
out["search_box_after"] = q.get_attribute("value")

# --- "did you mean": a misspelled word offers the correction, which searches it ---
q.clear()
q.send_keys(SPEC["misspelled"])
wait(lambda: js("return !document.getElementById('suggest').hidden"), "the did-you-mean suggestion")
out["suggestion"] = js("return document.getElementById('suggestion').textContent")
driver.find_element(By.ID, "suggestion").click()
wait(lambda: q.get_attribute("value") == out["suggestion"] and js(
    "return document.querySelectorAll('#hits a.hit').length > 0 && document.getElementById('suggest').hidden"),
     "the suggestion's results")
q.send_keys(Keys.ESCAPE)
body.send_keys(Keys.ESCAPE)

# --- a shared link, opened fresh (reload) ---
shared = "%s/#/%s/%s" % (BASE, SPEC["channel"], SPEC["middle"])
driver.get("about:blank")
driver.get(shared)
wait(lambda: js("return !!document.querySelector('#timeline .linked')"), "the shared link's message")
check(js("return document.querySelector('#timeline .linked').dataset.ts") == SPEC["middle"], "the shared link's message")
driver.back()
driver.forward()
wait(lambda: js("return !!document.querySelector('#timeline .linked')"), "back and forward to the link")
out["shared_link"] = True

# --- messages that carry markup render as text ---
xss_seen = []
for channel, ts in SPEC["xss"]:
    open_hash("#/%s/%s" % (channel, ts))
    wait(lambda: loaded(ts), "the XSS message " + ts)
    text = js("return document.getElementById('m-' + arguments[0]).querySelector('.text').textContent", ts)
    xss_seen.append(text)
check(any("<script>alert(1)</script>" in t for t in xss_seen), "the script message shows as text: %r" % xss_seen)
check(any("<img src=x onerror=" in t for t in xss_seen), "the img message shows as text: %r" % xss_seen)
check(js("return [...document.querySelectorAll('#timeline script, #timeline img, #timeline iframe')]"
         ".filter(e => !e.closest('.fimage') && !(e.matches('img.av, img.emoji.custom') &&"
         " /^\\/(avatars|emoji)\\//.test(e.getAttribute('src')))).length") == 0,
      "no element made from message text (a stored file's image, avatars and custom emoji aside)")
check(js("return document.body.dataset.xss === undefined") and no_alert(), "no handler ran")
out["xss_text"] = xss_seen

# --- what a message carries: mrkdwn, links, mentions, emoji, (edited), reactions, files, apps, joins ---
open_hash("#/%s/%s" % (SPEC["thread_channel"], SPEC["rendered"]))
wait(lambda: loaded(SPEC["rendered"]), "the rendered message")
if SPEC.get("stored_images", True):
    # An archive that stores files (SQLite; PostgreSQL does not yet): the image, the avatar and the emoji load.
    wait(lambda: js("const i = document.querySelector('#m-' + CSS.escape(arguments[0]) + ' .fimage img');"
                    "return !!i && i.complete && i.naturalWidth > 0", SPEC["rendered"]), "the stored image loads")
    wait(lambda: js("const m = document.getElementById('m-' + arguments[0]);"
                    "return [...m.querySelectorAll('img.av, img.emoji.custom')].filter(i => i.complete && i.naturalWidth > 0)"
                    ".length >= 3", SPEC["rendered"]), "the avatar and the custom emoji load")
out["rendered"] = js("""const m = document.getElementById('m-' + arguments[0]);
  const text = m.querySelector('.text p');
  const head = [...text.childNodes].slice(0, 7).map(n => n.outerHTML || n.textContent).join('');
  const next = m.closest('section').querySelectorAll('article');
  const i = [...next].indexOf(m);
  const bot = next[i + 1], join = next[i + 2], block = next[i + 3], cast = next[i + 4];
  return {
    html: head, link: text.querySelector('a[href^=http]').getAttribute('href'),
    mention: text.querySelector('.mention:not(.loud)').textContent, here: text.querySelector('.mention.loud').textContent,
    emoji: text.querySelector('.emoji:not(.custom)') ? text.querySelector('.emoji:not(.custom)').textContent : (text.textContent.match(/:tada:/) || [null])[0],
    avatar: (() => { const i = m.querySelector('img.av'); return i && { src: i.getAttribute('src'), width: i.naturalWidth }; })(),
    custom: (() => { const i = text.querySelector('img.emoji.custom'); return i && { src: i.getAttribute('src'), alt: i.alt,
      width: i.naturalWidth }; })(),
    custom_reaction: (() => { const r = m.querySelectorAll('.reaction')[1]; const i = r && r.querySelector('img.emoji.custom');
      return i && { src: i.getAttribute('src'), width: i.naturalWidth, text: r.textContent.trim() }; })(),
    emoji_font: document.documentElement.dataset.emoji, edited: !!m.querySelector('.edited'),
    reaction: m.querySelector('.reaction').textContent, reacted: m.querySelector('.reaction').title,
    file: m.querySelector('.files li').textContent.trim(),
    file_link: m.querySelector('.files a.file') && m.querySelector('.files a.file').getAttribute('href'),
    grouped: [...m.closest('section').querySelectorAll('article')].filter(a => a.classList.contains('cont')).map(a => a.id.slice(2)),
    group_head: (() => { const c = m.closest('section').querySelector('article.cont');
      return c ? [getComputedStyle(c.querySelector('.av')).visibility, getComputedStyle(c.querySelector('.name')).display] : null; })(),
    image: (() => { const i = m.querySelector('.fimage img'); return i && { src: i.getAttribute('src'),
      width: i.naturalWidth, link: i.closest('a').getAttribute('href') }; })(),
    bot: bot ? bot.querySelector('.meta').textContent.replace(/\\s*\\d+:\\d+.*$/, '').trim() : null,
    join_quiet: !!(join && join.classList.contains('quiet')),
    quote: block && block.querySelector('blockquote') && block.querySelector('blockquote').textContent,
    list: block ? [...block.querySelectorAll('ul li')].map(li => li.textContent) : null,
    code: block && block.querySelector('pre') && block.querySelector('pre').textContent,
    channel: block && block.querySelector('a.mention[href^="#/"]') && block.querySelector('a.mention[href^="#/"]').textContent,
    broadcast: cast && cast.classList.contains('broadcast') && cast.querySelector('.note') ? cast.querySelector('.note').textContent : null,
  };""", SPEC["rendered"])

# --- jump to a date ---
# The earlier rendering (with an earlier link's highlight) stays until the jump's page arrives: wait for a linked
# message on or after the day; a jump that lands before it times out here.
day_start = js("return new Date(2024, 4, 20).getTime() / 1000")
js("""const j = document.getElementById('jump'); j.value = '2024-05-20'; j.dispatchEvent(new Event('change'))""")
wait(lambda: driver.current_url.endswith(".000000") and js(
    "const l = document.querySelector('#timeline .linked'); return !!l && parseFloat(l.dataset.ts) >= arguments[0]", day_start),
     "jump to 2024-05-20: a linked message on or after the day")
out["jumped_to"] = js("return document.querySelector('#timeline .linked').dataset.ts")

# --- phone width ---
open_hash("#/%s" % SPEC["thread_channel"])
wait(lambda: loaded(), "the conversation at phone width")
driver.set_window_size(390, 844)
time.sleep(0.3)  # let the layout settle before the picture (no state to wait on)
check(js("return getComputedStyle(document.getElementById('sidebar')).transform") != "none", "the sidebar folds away")
check(js("return document.documentElement.scrollWidth <= window.innerWidth + 1"), "no sideways scrolling on a phone")
js("const t = document.getElementById('timeline'); t.scrollTop = t.scrollHeight")
driver.save_screenshot(SHOTS + "/ui-phone.png")
driver.set_window_size(1280, 800)

# --- first useful paint of a conversation, measured in the browser ---
paints = []
for _ in range(5):
    driver.get("about:blank")
    driver.get("%s/#/%s" % (BASE, SPEC["channel"]))
    wait(lambda: loaded() and js("return !!document.body.dataset.paint"), "the conversation")
    # performance.now() counts from the navigation's start: the script noted it when the messages were placed.
    paints.append(int(js("return document.body.dataset.paint")))
out["paint_ms"] = sorted(paints)

# --- sign out, then the outsider: cannot open, search or link to the DM ---
driver.find_element(By.CSS_SELECTOR, "form[action='/ui/signout'] button").click()
wait(lambda: driver.find_elements(By.ID, "token"), "the sign-in form after signing out")
sign_in(SPEC["outsider"])
check(not js("return !!document.querySelector('#convlist a[data-id=\"' + arguments[0] + '\"]')", SPEC["hidden"]),
      "the DM is not in the outsider's sidebar")
open_hash("#/%s/%s" % (SPEC["hidden"], SPEC["hidden_ts"]))
wait(lambda: js("return document.getElementById('title').textContent") == "Conversation not found", "the refusal")
check(count() == 0, "no message of the DM shown")
out["outsider_link"] = js("return document.getElementById('tlstart').textContent")
q = driver.find_element(By.ID, "q")
q.clear()
q.send_keys(SPEC["hidden_word"])
wait(lambda: js("return !document.getElementById('results').hidden && /result/i.test(document.getElementById('summary').textContent)"),
     "the outsider's search")
hrefs = js("return [...document.querySelectorAll('#hits a.hit')].map(a => a.getAttribute('href'))")
check(not any(SPEC["hidden"] in h for h in hrefs), "no result from the DM: %r" % hrefs)
q.clear()
q.send_keys("%s in:%s" % (SPEC["hidden_word"], SPEC["hidden"]))
wait(lambda: "No results" in js("return document.getElementById('summary').textContent") or
     js("return document.querySelectorAll('#hits a.hit').length") == 0, "in: the DM finds nothing")
out["outsider_hits"] = len(hrefs)

out["offsite_requests"] = js("return performance.getEntriesByType('resource').map(e => e.name)"
                             ".filter(u => !u.startsWith(location.origin))")
out["console_errors"] = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
driver.quit()
print(json.dumps(out))
