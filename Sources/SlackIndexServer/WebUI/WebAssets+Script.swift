extension WebAssets {
    /// The script (`/ui/app.js`): sidebar, timeline, thread panel, search, keys; routes on the URL hash.
    static let script = #"""
'use strict';
// slackindex web UI: one hand-written script over the archive's JSON API (/api/…), signed in by an HttpOnly
// session cookie. Every piece of archive text reaches the page through esc() or mrkdwn(), which escape it.
(() => {
  const $ = (id) => document.getElementById(id);
  const S = {
    me: null, users: new Map(), handles: new Map(), convs: [], byId: new Map(), emoji: new Map(),
    conv: null, before: '', after: '', loading: false, gen: 0, sgen: 0, thread: null, sel: null,
    page: 1, mode: 'home', pendingThread: null, paintedNow: () => {},
    // The workspace switcher's choice (a team id; '' for all): the sidebar's conversations and the searches' team_id.
    team: '',
    // Files `slackindex files` stored (served at /files/ID): id → content type, from each timeline page.
    stored: new Map(),
    // Which of those have a stored thumbnail (/files/ID?thumb=1), shown in place of the whole image.
    thumbs: new Set(),
    // Stored avatars (user id → /avatars/ID?v=…), custom emoji (name → /emoji/NAME?v=…, aliases resolved) and
    // custom names that alias a standard emoji (name → its name): slackindex.images, once.
    avatars: new Map(), custom: new Map(), customAlias: new Map(),
  };
  const PAGE = 50;
  // The assets' version (`?v=…` of this script's URL): the emoji table is asked for under it too.
  const VERSION = new URL(document.currentScript.src).search;

  // ---- the API ----
  async function api(method, params) {
    for (let attempt = 0; ; attempt++) {
      const r = await fetch('/api/' + method, {
        method: 'POST', body: new URLSearchParams(params || {}), credentials: 'same-origin',
      });
      if (r.status === 429 && attempt < 5) {
        await new Promise((done) => setTimeout(done, 1000 * (+r.headers.get('Retry-After') || 1)));
        continue;
      }
      const j = await r.json();
      if (!j.ok) {
        if (j.error === 'not_authed' || j.error === 'invalid_auth') location.reload();
        const e = new Error(j.error);
        e.code = j.error;
        throw e;
      }
      return j;
    }
  }

  // ---- text ----
  const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  const esc = (s) => String(s == null ? '' : s).replace(/[&<>"']/g, (c) => ESC[c]);
  const decode = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const fmtNum = (n) => Number(n).toLocaleString();

  function uname(id) {
    const u = S.users.get(id);
    return u ? u.label : null;
  }

  // Whether the system draws emoji: a headless browser or a bare Linux desktop has no emoji font, and shows
  // every emoji as the same empty box. An emoji drawn like a character no font has means none does.
  function drawsEmoji() {
    try {
      const canvas = document.createElement('canvas');
      canvas.width = canvas.height = 24;
      const ctx = canvas.getContext('2d', { willReadFrequently: true });
      const pixels = (text) => {
        ctx.clearRect(0, 0, 24, 24);
        ctx.font = '20px sans-serif';
        ctx.textBaseline = 'top';
        ctx.fillText(text, 0, 0);
        return ctx.getImageData(0, 0, 24, 24).data.join();
      };
      return pixels('\u{1F389}') !== pixels('\u{10FFFD}');
    } catch (e) {
      return true;
    }
  }
  const EMOJI_FONT = drawsEmoji();
  document.documentElement.dataset.emoji = EMOJI_FONT ? 'font' : 'none';

  // The emoji's glyph, or null where the system cannot draw it (then `:name:` is shown).
  function emojiOf(name) {
    if (!EMOJI_FONT) return null;
    const base = name.toLowerCase().replace(/-/g, '_').replace(/::skin.*$/, '');
    return S.emoji.get(base) || null;
  }

  // An emoji as markup: a custom one as its image from the archive (whatever the fonts), an alias of a standard
  // one or a standard one as its glyph; null when neither (then `:name:` is shown).
  function emojiHTML(name) {
    const base = String(name).replace(/::skin.*$/, '');
    const url = S.custom.get(base) || S.custom.get(base.toLowerCase());
    if (url) {
      return '<img class="emoji custom" src="' + esc(url) + '" alt=":' + esc(base) + ':" title=":' + esc(base) + ':">';
    }
    const glyph = emojiOf(S.customAlias.get(base) || base);
    return glyph ? '<span class="emoji" title=":' + esc(base) + ':">' + esc(glyph) + '</span>' : null;
  }

  function special(inner) {
    const bar = inner.indexOf('|');
    const target = bar < 0 ? inner : inner.slice(0, bar);
    const label = bar < 0 ? '' : inner.slice(bar + 1);
    if (target[0] === '@') {
      const id = target.slice(1);
      return '<span class="mention">@' + esc(uname(id) || decode(label) || id) + '</span>';
    }
    if (target[0] === '#') {
      const id = target.slice(1);
      const c = S.byId.get(id);
      if (c) return '<a class="mention" href="#/' + esc(id) + '">#' + esc(c.label) + '</a>';
      return '<span class="mention">#' + esc(decode(label) || id) + '</span>';
    }
    if (target[0] === '!') {
      const word = target.slice(1).split('^')[0];
      if (word === 'here' || word === 'channel' || word === 'everyone') {
        return '<span class="mention loud">@' + word + '</span>';
      }
      return '<span class="mention">' + esc(decode(label) || '@' + word) + '</span>';
    }
    if (/^(https?|mailto):/i.test(target)) {
      return '<a href="' + esc(decode(target)) + '" target="_blank" rel="noopener noreferrer">' +
        esc(decode(label || target)) + '</a>';
    }
    return esc('<' + decode(inner) + '>');
  }

  // Bold, italic, strike on escaped text (it holds no tags, only the placeholders).
  function inline(t) {
    const edge = '(^|[\\s(\\u0001>\'"])';
    const end = '(?=$|[\\s).,!?:;\'"\\u0001<])';
    for (const [mark, tag] of [['\\*', 'b'], ['_', 'i'], ['~', 's']]) {
      const re = new RegExp(edge + mark + '(?=[^\\s' + mark + '])([^\\n]*?[^\\s' + mark + '])' + mark + end, 'g');
      t = t.replace(re, '$1<' + tag + '>$2</' + tag + '>');
    }
    return t;
  }

  function blocks(t) {
    const out = [];
    let quote = [];
    let list = null;
    const flushQuote = () => {
      if (quote.length) out.push('<blockquote>' + quote.join('<br>') + '</blockquote>');
      quote = [];
    };
    const flushList = () => {
      if (list) out.push('<' + list.tag + '>' + list.items.map((i) => '<li>' + i + '</li>').join('') + '</' + list.tag + '>');
      list = null;
    };
    const lines = [];
    const flushLines = () => {
      if (lines.length) out.push('<p>' + lines.join('<br>') + '</p>');
      lines.length = 0;
    };
    for (const line of t.split('\n')) {
      let m = line.match(/^&gt;\s?(.*)$/);
      if (m) { flushLines(); flushList(); quote.push(m[1]); continue; }
      flushQuote();
      m = line.match(/^\s*(?:[•◦▪-]|\*) (.*)$/);
      const n = m ? null : line.match(/^\s*\d+[.)] (.*)$/);
      if (m || n) {
        flushLines();
        const tag = m ? 'ul' : 'ol';
        if (!list || list.tag !== tag) { flushList(); list = { tag, items: [] }; }
        list.items.push((m || n)[1]);
        continue;
      }
      flushList();
      lines.push(line);
    }
    flushLines(); flushQuote(); flushList();
    return out.join('');
  }

  // Slack mrkdwn → HTML. Code, links and mentions are held aside as placeholders (\u0001N\u0001) while the rest
  // is escaped and formatted, so no archive text is ever inserted unescaped.
  function mrkdwn(text) {
    const held = [];
    const hold = (html) => '\u0001' + (held.push(html) - 1) + '\u0001';
    let t = String(text || '').replace(/\u0001/g, '');
    t = t.replace(/```([\s\S]*?)```/g, (_, c) => hold('<pre>' + esc(decode(c.replace(/^\n/, ''))) + '</pre>'));
    t = t.replace(/`([^`\n]+)`/g, (_, c) => hold('<code>' + esc(decode(c)) + '</code>'));
    t = t.replace(/<([^<>\n]+)>/g, (_, inner) => hold(special(inner)));
    t = esc(decode(t));
    t = t.replace(/:([a-z0-9_+'-]+):(?::skin-tone-\d:)?/gi, (m, n) => emojiHTML(n) || m);
    t = blocks(inline(t));
    for (let i = 0; i < 3 && t.includes('\u0001'); i++) t = t.replace(/\u0001(\d+)\u0001/g, (_, i) => held[+i]);
    return t;
  }

  // ---- dates ----
  const tsDate = (ts) => new Date(parseFloat(ts) * 1000);
  function dayKey(ts) {
    const d = tsDate(ts);
    return d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, '0');
  }
  const dayLabel = (ts) => tsDate(ts).toLocaleDateString(undefined, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' });
  const timeLabel = (ts) => tsDate(ts).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

  // ---- avatars ----
  function hue(id) {
    let h = 0;
    for (const ch of String(id)) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    return h % 12;
  }
  function initials(name) {
    const words = String(name).replace(/^[@#]/, '').split(/[\s._-]+/).filter(Boolean);
    return ((words[0] || '?')[0] + (words.length > 1 ? words[words.length - 1][0] : '')).toUpperCase();
  }

  // ---- messages ----
  const QUIET = new Set(['channel_join', 'channel_leave', 'channel_topic', 'channel_purpose', 'channel_name',
    'group_join', 'group_leave', 'group_topic', 'group_purpose', 'group_name', 'channel_archive',
    'channel_unarchive', 'pinned_item', 'unpinned_item']);

  function author(m) {
    if (m.user && S.users.has(m.user)) return { id: m.user, name: uname(m.user), bot: S.users.get(m.user).bot };
    if (m.bot_profile || m.bot_id || m.subtype === 'bot_message') {
      return { id: m.bot_id || m.username || 'bot', name: (m.bot_profile && m.bot_profile.name) || m.username || 'bot', bot: true };
    }
    const profile = m.user_profile || {};
    return { id: m.user || '?', name: profile.display_name || profile.real_name || m.username || m.user || 'unknown', bot: false };
  }

  function addStored(files, thumbs) {
    for (const id in files || {}) S.stored.set(id, files[id]);
    for (const id of thumbs || []) S.thumbs.add(id);
  }

  // A file: a stored image inline (scaled down; a click opens the whole image), another stored file as a card that
  // downloads it, one never fetched as a card that says so. In a thread, files of replies the timeline has not
  // listed are shown as plain cards (nothing is claimed about them).
  // A stored image inline (click for the whole), another stored file as a download, and a file never fetched as
  // its Slack page (only an https link is made one), saying so.
  function fileHTML(f, inThread) {
    const name = esc(f.name || f.title || 'file');
    const type = f.id ? S.stored.get(f.id) : undefined;
    const url = f.id ? '/files/' + encodeURIComponent(f.id) : '';
    if (type && /^image\/(png|jpeg|gif|webp)/.test(type)) {
      const shown = S.thumbs.has(f.id) ? url + '?thumb=1' : url;
      return '<li class="fimage"><a href="' + esc(url) + '" target="_blank" rel="noopener"><img src="' + esc(shown) +
        '" alt="' + name + '" loading="lazy"></a></li>';
    }
    const size = ' <span class="fsize">' + esc(fileSize(f.size)) + '</span>';
    if (type) {
      return '<li><a class="file" href="' + esc(url) + '" download>' + FILE_ICON + '<span class="fname">' + name +
        '</span>' + size + '</a></li>';
    }
    const link = /^https:\/\//i.test(f.permalink || '') ? f.permalink : '';
    let h = '<li>' + (link ? '<a class="file" href="' + esc(link) + '" target="_blank" rel="noopener noreferrer">' : '') +
      FILE_ICON + '<span class="fname">' + name + '</span>' + size + (link ? '</a>' : '');
    if (!inThread && f.mode !== 'external') h += ' <span class="fmissing">not fetched</span>';
    return h + '</li>';
  }

  function fileSize(n) {
    if (!n && n !== 0) return '';
    const units = ['B', 'KB', 'MB', 'GB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + ' ' + units[i];
  }

  // A file's icon, drawn (an emoji would be an empty box where the system has no emoji font).
  const FILE_ICON = '<svg class="ficon" aria-hidden="true" viewBox="0 0 16 16" width="14" height="14"><path d="M3 1h7l3 3v11H3z' +
    'M10 1v3h3" fill="none" stroke="currentColor" stroke-width="1.3"/></svg>';

  // Consecutive messages of one author within five minutes are one group, as in Slack: avatar and name once.
  // Runs over a whole list (a day, the thread panel) after messages were placed, either end.
  const GROUP_SECONDS = 300;
  function regroup(articles) {
    let prev = null;
    for (const el of articles) {
      // Only next to each other: the thread panel's reply count parts its parent from the replies.
      if (el.previousElementSibling !== prev) prev = null;
      const same = prev && el.dataset.author === prev.dataset.author && !el.classList.contains('quiet') &&
        !prev.classList.contains('quiet') && !el.classList.contains('broadcast') &&
        parseFloat(el.dataset.ts) - parseFloat(prev.dataset.ts) < GROUP_SECONDS;
      el.classList.toggle('cont', !!same);
      prev = el;
    }
  }

  function messageHTML(m, inThread) {
    const a = author(m);
    const quiet = QUIET.has(m.subtype);
    const classes = ['msg'];
    if (quiet) classes.push('quiet');
    if (a.bot) classes.push('bot');
    if (m.subtype === 'thread_broadcast') classes.push('broadcast');
    const link = '#/' + S.conv + '/' + (inThread && m.thread_ts && m.thread_ts !== m.ts ? m.thread_ts : m.ts);
    let h = '<article class="' + classes.join(' ') + '" id="' + (inThread ? 't-' : 'm-') + esc(m.ts) + '" data-ts="' +
      esc(m.ts) + '" data-author="' + esc(a.id) + '" tabindex="-1">';
    const picture = S.avatars.get(a.id);
    h += (picture ? '<img class="av" src="' + esc(picture) + '" alt="" aria-hidden="true">'
      : '<div class="av c' + hue(a.id) + '" aria-hidden="true">' + esc(initials(a.name)) + '</div>') + '<div class="body">';
    h += '<div class="meta"><span class="name">' + esc(a.name) + '</span>';
    if (a.bot) h += '<span class="badge">APP</span>';
    h += '<a class="time" href="' + esc(link) + '" title="' + esc(tsDate(m.ts).toLocaleString()) + ' (link to this message)">' +
      esc(timeLabel(m.ts)) + '</a></div>';
    if (m.subtype === 'thread_broadcast') h += '<div class="note">replied to a thread</div>';
    h += '<div class="text">' + mrkdwn(m.text);
    if (m.edited) h += ' <span class="edited">(edited)</span>';
    h += '</div>';
    for (const att of m.attachments || []) {
      const body = [att.pretext, att.title, att.text].filter(Boolean).join('\n') || att.fallback || '';
      if (body) h += '<div class="attachment">' + mrkdwn(body) + '</div>';
    }
    if (m.files && m.files.length) {
      h += '<ul class="files" aria-label="Files">';
      for (const f of m.files) h += fileHTML(f, inThread);
      h += '</ul>';
    }
    if (m.reactions && m.reactions.length) {
      h += '<div class="reactions">';
      for (const r of m.reactions) {
        const who = (r.users || []).map((u) => uname(u) || u).join(', ');
        h += '<span class="reaction" tabindex="0" title="' + esc(who + ' reacted with :' + r.name + ':') + '" aria-label="' +
          esc(r.name + ' ' + r.count + ': ' + who) + '">' + (emojiHTML(r.name) || ':' + esc(r.name) + ':') +
          ' <b>' + esc(r.count) + '</b></span>';
      }
      h += '</div>';
    }
    if (!inThread && m.reply_count && m.thread_ts === m.ts) {
      h += '<button class="replies" data-thread="' + esc(m.ts) + '">' + esc(fmtNum(m.reply_count)) +
        (m.reply_count === 1 ? ' reply' : ' replies') + '</button>';
    }
    return h + '</div></article>';
  }

  function node(html) {
    const t = document.createElement('template');
    t.innerHTML = html;
    return t.content.firstElementChild;
  }

  // ---- sidebar ----
  const GROUPS = [['channel', 'Channels'], ['private', 'Private channels'], ['dm', 'Direct messages'], ['mpim', 'Group messages']];

  function convLabel(c) {
    if (c.kind === 'dm' || c.kind === 'mpim') {
      const others = (c.members || []).filter((u) => u !== S.me);
      const names = (others.length ? others : c.members || []).map((u) => uname(u) || u);
      return names.join(', ') || c.name;
    }
    return c.name;
  }

  function fuzzy(query, text) {
    if (!query) return 0;
    const q = query.toLowerCase();
    const t = text.toLowerCase();
    const at = t.indexOf(q);
    if (at >= 0) return at === 0 ? 3 : 2;
    let i = 0;
    for (const ch of t) if (ch === q[i]) i++;
    return i === q.length ? 1 : -1;
  }

  // Drawn, not an emoji: the system may have no emoji font.
  const LOCK_ICON = '<svg viewBox="0 0 16 16" width="12" height="12"><path d="M4 7V5a4 4 0 0 1 8 0v2M3 7h10v8H3z" ' +
    'fill="none" stroke="currentColor" stroke-width="1.6"/></svg>';

  const inTeam = (c) => !S.team || c.workspace_id === S.team;

  // The workspace switcher: shown only when the archive holds more than one workspace.
  function fillWorkspaces(workspaces) {
    const select = $('workspace');
    if (workspaces.length < 2) { select.hidden = true; return; }
    let h = '<option value="">All workspaces</option>';
    for (const w of workspaces) h += '<option value="' + esc(w.id) + '">' + esc(w.name) + '</option>';
    select.innerHTML = h;
    select.hidden = false;
  }

  function renderSidebar() {
    const q = $('filter').value.trim();
    const list = $('convlist');
    let h = '';
    for (const [kind, title] of GROUPS) {
      let items = S.convs.filter((c) => c.kind === kind && inTeam(c))
        .map((c) => ({ c, score: fuzzy(q, c.workspace ? c.label + ' ' + c.workspace : c.label) }))
        .filter((x) => x.score >= 0);
      if (q) items.sort((x, y) => y.score - x.score);
      if (!items.length) continue;
      h += '<h2>' + esc(title) + '</h2><ul>';
      for (const { c } of items) {
        const prefix = kind === 'channel' ? '#' : kind === 'private' ? LOCK_ICON : kind === 'dm' ? '●' : '◆';
        h += '<li><a class="conv' + (c.id === S.conv ? ' active' : '') + (c.is_archived ? ' archived' : '') + '" href="#/' +
          esc(c.id) + '" data-id="' + esc(c.id) + '"' + (c.id === S.conv ? ' aria-current="page"' : '') + '><span class="prefix" aria-hidden="true">' +
          prefix + '</span><span class="cname">' + esc(c.label) + '</span>' +
          (c.workspace ? '<span class="ws">' + esc(c.workspace) + '</span>' : '') +
          '<span class="count" title="messages">' +
          esc(fmtNum(c.count)) + '</span></a></li>';
      }
      h += '</ul>';
    }
    list.innerHTML = h || (S.listed ? '<p class="none">No conversation matches.</p>' : '<p class="none">Loading…</p>');
  }

  // ---- timeline ----
  function daySection(ts) {
    const sec = document.createElement('section');
    sec.className = 'day';
    sec.dataset.day = dayKey(ts);
    sec.innerHTML = '<h2 class="dayhead"><span>' + esc(dayLabel(ts)) + '</span></h2>';
    return sec;
  }

  // Messages go in as runs of one day, each run made into markup at once (one parse per run, not per message).
  function place(messages, where) {
    const tl = $('timeline');
    const runs = [];
    for (const m of messages) {
      const day = dayKey(m.ts);
      const last = runs[runs.length - 1];
      if (last && last.day === day) last.html.push(messageHTML(m, false));
      else runs.push({ day, ts: m.ts, html: [messageHTML(m, false)] });
    }
    const fragment = (html) => {
      const t = document.createElement('template');
      t.innerHTML = html;
      return t.content;
    };
    if (where === 'top') {
      const oldHeight = tl.scrollHeight;
      const oldTop = tl.scrollTop;
      for (let i = runs.length - 1; i >= 0; i--) {
        let sec = tl.querySelector('section.day');
        if (!sec || sec.dataset.day !== runs[i].day) {
          sec = daySection(runs[i].ts);
          $('tlstart').after(sec);
        }
        sec.firstElementChild.after(fragment(runs[i].html.join('')));
      }
      tl.scrollTop = oldTop + (tl.scrollHeight - oldHeight);
    } else {
      for (const run of runs) {
        let sec = tl.lastElementChild;
        if (!sec || sec.tagName !== 'SECTION' || sec.dataset.day !== run.day) {
          sec = daySection(run.ts);
          tl.append(sec);
        }
        sec.append(fragment(run.html.join('')));
      }
    }
    for (const sec of tl.querySelectorAll('section.day')) regroup(sec.querySelectorAll(':scope > article.msg'));
    markStart();
  }

  function markStart() {
    const c = S.byId.get(S.conv);
    $('tlstart').textContent = S.before ? 'Loading older messages…' : c ? 'This is the very beginning of ' + c.title + '.' : '';
  }

  async function page(direction) {
    const cursor = direction === 'top' ? S.before : S.after;
    if (!cursor || S.loading) return;
    const gen = S.gen;
    S.loading = true;
    try {
      const r = await api('slackindex.timeline', { channel: S.conv, cursor, limit: PAGE });
      if (gen !== S.gen) return;
      if (direction === 'top') S.before = r.before; else S.after = r.after;
      addUsers(r.users);
      addStored(r.stored_files, r.stored_thumbs);
      place(r.messages, direction);
    } finally {
      if (gen === S.gen) S.loading = false;
    }
    nearEdge();
  }

  function nearEdge() {
    const tl = $('timeline');
    if (S.loading || S.mode !== 'conv') return;
    if (tl.scrollTop < 800 && S.before) page('top');
    else if (tl.scrollHeight - tl.scrollTop - tl.clientHeight < 800 && S.after) page('bottom');
  }

  function showMode(mode) {
    // Away from the results, the search box no longer holds their query.
    if (S.mode === 'search' && mode !== 'search') { $('q').value = ''; $('suggest').hidden = true; }
    S.mode = mode;
    $('conv').hidden = mode !== 'conv';
    $('results').hidden = mode !== 'search';
    $('home').hidden = mode !== 'home';
    document.body.classList.remove('nav-open');
  }

  // The conversation's first page; `early` is that request already under way (started with the page's others).
  async function openConv(id, ts, early) {
    const gen = ++S.gen;
    S.conv = id;
    S.loading = true;
    S.sel = null;
    showMode('conv');
    renderSidebar();
    showTitle();
    const tl = $('timeline');
    let r;
    try {
      r = await (early || firstPage(id, ts));
      await S.emojiReady;
    } catch (e) {
      if (gen !== S.gen) return;
      S.paintedNow();
      S.loading = false;
      S.before = S.after = '';
      tl.replaceChildren($('tlstart'));
      $('title').textContent = 'Conversation not found';
      $('tlstart').textContent = e.code === 'channel_not_found'
        ? 'This conversation does not exist in the archive, or your token may not read it.'
        : 'Could not load this conversation (' + e.code + ').';
      return;
    }
    if (gen !== S.gen) return;
    // The page names its conversation and users: it is shown before the sidebar and the member list arrive.
    addUsers(r.users);
    addStored(r.stored_files, r.stored_thumbs);
    if (!S.byId.has(id) && r.conversation) {
      addConv(r.conversation);
      showTitle();
    }
    S.before = r.before;
    S.after = r.after;
    tl.replaceChildren($('tlstart'));
    place(r.messages, 'bottom');
    if (!S.painted) {
      // First useful paint: the frame after the first messages were placed (ms since the navigation started).
      S.painted = true;
      requestAnimationFrame(() => requestAnimationFrame(() => {
        document.body.dataset.paint = Math.round(performance.now());
        S.paintedNow();
      }));
    }
    if (ts && r.anchor) {
      const el = $('m-' + r.anchor);
      if (el) {
        el.classList.add('linked');
        el.scrollIntoView({ block: 'center' });
        select(el, false);
      }
    } else {
      tl.scrollTop = tl.scrollHeight;
    }
    S.loading = false;
    if (S.pendingThread) {
      const [parent, reply] = S.pendingThread;
      S.pendingThread = null;
      openThread(parent, reply);
    }
    setTimeout(nearEdge, 50);
  }

  function showTitle() {
    const c = S.byId.get(S.conv);
    $('title').textContent = c ? c.title : S.conv;
    $('topic').textContent = '';
    document.title = (c ? c.title : S.conv) + ' · slackindex';
  }

  function firstPage(id, ts) {
    return api('slackindex.timeline', ts ? { channel: id, around: ts, limit: PAGE * 2 } : { channel: id, limit: PAGE * 2 });
  }

  // ---- thread panel ----
  async function openThread(ts, highlight) {
    S.thread = { ts, cursor: '', channel: S.conv, first: true, loading: false, highlight };
    $('thread').hidden = false;
    document.body.classList.add('thread-open');
    $('threadlist').replaceChildren();
    await moreThread();
    $('closethread').focus({ preventScroll: true });
  }

  async function moreThread() {
    const t = S.thread;
    if (!t || t.loading || (!t.first && !t.cursor)) return;
    t.loading = true;
    const params = { channel: t.channel, ts: t.ts, limit: PAGE };
    if (t.cursor) params.cursor = t.cursor;
    try {
      const r = await api('conversations.replies', params);
      await S.usersReady;
      if (S.thread !== t) return;
      const list = $('threadlist');
      const messages = t.first ? r.messages : r.messages.slice(1);
      for (const m of messages) list.append(node(messageHTML(m, true)));
      regroup(list.querySelectorAll(':scope > article.msg'));
      if (t.first && r.messages.length) {
        const n = r.messages[0].reply_count || r.messages.length - 1;
        list.firstElementChild.insertAdjacentHTML('afterend', '<p class="replycount">' + esc(fmtNum(n)) + (n === 1 ? ' reply' : ' replies') + '</p>');
      }
      t.first = false;
      t.cursor = (r.response_metadata && r.response_metadata.next_cursor) || '';
      if (t.highlight) {
        const el = $('t-' + t.highlight);
        if (el) { el.classList.add('linked'); el.scrollIntoView({ block: 'center' }); t.highlight = null; }
      }
    } finally {
      t.loading = false;
    }
  }

  function closeThread() {
    S.thread = null;
    $('thread').hidden = true;
    document.body.classList.remove('thread-open');
  }

  // ---- search ----
  function searchLabel(match) {
    const ch = match.channel || {};
    const c = S.byId.get(ch.id);
    return c ? c.title : ch.is_im ? '@' + (uname(ch.name) || ch.name) : '#' + (ch.name || ch.id);
  }

  // The chosen workspace as search.messages and slackindex.count take it (Slack's team_id).
  const teamParam = () => (S.team ? { team_id: S.team } : {});

  // One search in flight at a time (the server admits two per token): a query typed meanwhile runs as soon as the
  // one in flight answers, and only the latest of them.
  let searching = false;
  let searchNext = 0;
  async function runSearch(pageNumber) {
    if (searching) { searchNext = pageNumber; return; }
    searching = true;
    try {
      await search(pageNumber);
    } finally {
      searching = false;
      if (searchNext) { const next = searchNext; searchNext = 0; runSearch(next); }
    }
  }

  async function search(pageNumber) {
    const q = $('q').value.trim();
    if (!q) { if (S.mode === 'search') showMode(S.conv ? 'conv' : 'home'); return; }
    const gen = ++S.sgen;
    S.page = pageNumber;
    const started = performance.now();
    let r;
    try {
      // The results first; the exact count (most of a common word's time) follows in its own request. Words also
      // find their variants (variants=true), as in Slack's own search.
      r = await api('search.messages', Object.assign({
        query: q, highlight: 'true', variants: 'true', count: 20, page: pageNumber, sort: $('sort').value, sort_dir: 'desc',
        exact_total: 'false', suggest: 'false',
      }, teamParam()));
      await S.usersReady;
    } catch (e) {
      if (gen !== S.sgen) return;
      showMode('search');
      $('summary').textContent = 'Search failed: ' + e.code;
      $('hits').replaceChildren();
      $('pager').replaceChildren();
      return;
    }
    if (gen !== S.sgen) return;
    showMode('search');
    const took = Math.round(performance.now() - started);
    const more = r.messages.matches.length && r.messages.total > (pageNumber - 1) * 20 + r.messages.matches.length;
    // A count already made for this query (another page, another order) is used again.
    const counted = S.counted && S.counted.q === q && S.counted.team === S.team ? S.counted.total : null;
    const total = more ? counted : r.messages.total;
    const known = { q, team: S.team, took, gen, pageNumber, total, problem: r.remote_problem || '' };
    showCount(known);
    $('summary').dataset.ms = took;
    let h = '';
    for (const m of r.messages.matches) {
      const reply = m.thread_ts && m.thread_ts !== m.ts;
      const href = '#/' + m.channel.id + '/' + (reply ? m.thread_ts + '/' + m.ts : m.ts);
      const marked = mrkdwn(m.text).replace(/\uE000/g, '<mark>').replace(/\uE001/g, '</mark>');
      h += '<li><a class="hit" href="' + esc(href) + '"><div class="hmeta"><span class="hconv">' + esc(searchLabel(m)) +
        '</span> · <span class="name">' + esc(uname(m.user) || m.username || '') + '</span> · <time>' + esc(tsDate(m.ts).toLocaleString()) +
        '</time>' + (reply ? ' · <span class="note">in a thread</span>' : '') + (m.source ? ' · <span class="source">' + esc(m.source) + '</span>' : '') +
        '</div><div class="snip">' + marked + '</div></a></li>';
    }
    $('hits').innerHTML = h;
    $('suggest').hidden = true;
    if (pageNumber === 1 && r.messages.matches.length <= 2) suggestLater(known);
    if (more && counted === null) countLater(known);
  }

  // "Did you mean", as the terminal says it, for a query of (almost) no hits: asked once typing pauses, not on
  // every keystroke (over the vocabulary of 1M messages it costs a partial word 60–70 ms). The server offers a
  // correction only when it finds messages.
  let suggestTimer = 0;
  function suggestLater(k) {
    clearTimeout(suggestTimer);
    suggestTimer = setTimeout(async () => {
      if (k.gen !== S.sgen) return;
      // A search or a count in flight holds the token's searches (two at a time): asked after them, not beside.
      if (searching || counting) { suggestLater(k); return; }
      try {
        const r = await api('search.messages', Object.assign({
          query: k.q, variants: 'true', count: 1, exact_total: 'false', suggest: 'true',
        }, k.team ? { team_id: k.team } : {}));
        if (k.gen !== S.sgen) return;
        $('suggest').hidden = !r.suggestion;
        $('suggestion').textContent = r.suggestion || '';
      } catch (e) {
        // No suggestion: the results stand as they are.
      }
    }, 400);
  }

  // The summary and the pager: `total` null while the count is on its way.
  function showCount(k) {
    const n = k.total;
    const label = n === null ? 'Results' : fmtNum(n) + (n === 1 ? ' result' : ' results');
    const pending = n !== null ? '' : k.failed ? ' · the count is unavailable' : ' · counting…';
    $('summary').textContent = (n === 0 ? 'No results for “' + k.q + '”.' : label + ' for “' + k.q + '” (' + k.took + ' ms)' + pending) +
      (k.problem ? ' · Remote: ' + k.problem : '');
    const pages = n === null ? k.pageNumber + 1 : Math.ceil(n / 20);
    let p = '';
    if (pages > 1) {
      p += '<button data-page="' + (k.pageNumber - 1) + '"' + (k.pageNumber <= 1 ? ' disabled' : '') + '>← Previous</button>';
      p += '<span>Page ' + k.pageNumber + (n === null ? '' : ' of ' + fmtNum(pages)) + '</span>';
      p += '<button data-page="' + (k.pageNumber + 1) + '"' + (k.pageNumber >= Math.min(pages, 100) ? ' disabled' : '') + '>Next →</button>';
    }
    $('pager').innerHTML = p;
  }

  // One count in flight at a time; a count whose search was replaced meanwhile is not asked for or shown.
  let counting = false;
  let countNext = null;
  async function countLater(k) {
    if (counting) { countNext = k; return; }
    counting = true;
    try {
      if (k.gen === S.sgen) {
        const team = k.team ? { team_id: k.team } : {};
        const r = await api('slackindex.count', Object.assign({ query: k.q, variants: 'true' }, team));
        S.counted = { q: k.q, team: k.team, total: r.total };
        if (k.gen === S.sgen) showCount(Object.assign(k, { total: r.total }));
      }
    } catch (e) {
      // The results stay; the summary says their number is missing.
      if (k.gen === S.sgen) showCount(Object.assign(k, { failed: true }));
    } finally {
      counting = false;
      if (countNext) { const next = countNext; countNext = null; countLater(next); }
    }
  }

  // A filter chip writes Slack's syntax into the box: `prefix:value` replaces any earlier one.
  function writeFilter(prefix, value) {
    const re = new RegExp('(^|\\s)' + prefix + ':("[^"]*"|\\S+)', 'g');
    let q = $('q').value.replace(re, ' ').replace(/\s+/g, ' ').trim();
    if (value) q = (q ? q + ' ' : '') + prefix + ':' + value;
    $('q').value = q;
    runSearch(1);
  }

  function fillFilters() {
    let h = '<option value="">Any conversation</option>';
    for (const c of S.convs.filter(inTeam)) {
      if (c.kind === 'channel' || c.kind === 'private') h += '<option value="' + esc(c.title) + '">' + esc(c.title) + '</option>';
    }
    for (const c of S.convs.filter(inTeam)) {
      if (c.kind === 'dm') {
        const other = (c.members || []).find((u) => u !== S.me);
        const handle = other && S.users.get(other);
        if (handle) h += '<option value="@' + esc(handle.handle) + '">' + esc(c.label) + '</option>';
      }
    }
    $('f-in').innerHTML = h;
    let people = '';
    for (const [, u] of S.users) people += '<option value="@' + esc(u.handle) + '">' + esc(u.label) + '</option>';
    $('people').innerHTML = people;
  }

  // ---- selection and keys ----
  function select(el, scroll) {
    if (S.sel) S.sel.classList.remove('sel');
    S.sel = el;
    if (!el) return;
    el.classList.add('sel');
    el.focus({ preventScroll: true });
    if (scroll) el.scrollIntoView({ block: 'nearest' });
  }

  function move(step) {
    if (S.mode === 'search') {
      const hits = [...document.querySelectorAll('#hits a.hit')];
      if (!hits.length) return;
      const i = hits.indexOf(document.activeElement);
      hits[Math.max(0, Math.min(hits.length - 1, i < 0 ? 0 : i + step))].focus();
      return;
    }
    const items = [...document.querySelectorAll('#timeline article.msg')];
    if (!items.length) return;
    let i = items.indexOf(S.sel);
    if (i < 0) {
      const top = $('timeline').getBoundingClientRect();
      i = items.findIndex((el) => el.getBoundingClientRect().bottom > top.bottom) - 1;
      if (i < 0) i = items.length - 1;
    } else {
      i = Math.max(0, Math.min(items.length - 1, i + step));
    }
    select(items[i], true);
  }

  function onKey(e) {
    const typing = /^(INPUT|SELECT|TEXTAREA)$/.test((document.activeElement || {}).tagName);
    if ((e.key === 'k' && (e.ctrlKey || e.metaKey)) || (e.key === '/' && !typing)) {
      e.preventDefault();
      $('q').focus();
      $('q').select();
      return;
    }
    if (e.key === 'Escape') {
      if (!$('thread').hidden) closeThread();
      else if (typing) document.activeElement.blur();
      else if (S.mode === 'search' && S.conv) showMode('conv');
      return;
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === 'j' || e.key === 'ArrowDown') { e.preventDefault(); move(1); }
    else if (e.key === 'k' || e.key === 'ArrowUp') { e.preventDefault(); move(-1); }
    else if (e.key === 'Enter' && S.sel) {
      const b = S.sel.querySelector('.replies');
      if (b) openThread(b.dataset.thread);
    }
  }

  // ---- routing: #/C123, #/C123/TS, #/C123/THREAD_TS/REPLY_TS ----
  const ROUTE = /^\/([A-Z0-9]+)(?:\/(\d+\.\d+))?(?:\/(\d+\.\d+))?$/;

  function route(early) {
    const h = decodeURIComponent(location.hash.slice(1));
    const m = h.match(ROUTE);
    if (!m) {
      showMode(S.conv ? 'conv' : 'home');
      return;
    }
    closeThread();
    if (m[3]) S.pendingThread = [m[2], m[3]];
    openConv(m[1], m[2], early);
  }

  // ---- start ----
  // Names as the timeline's pages and the sidebar's list carry them ({id: {name, label, bot}}).
  function addUsers(users) {
    for (const id in users || {}) {
      if (!S.users.has(id)) S.users.set(id, { handle: users[id].name, label: users[id].label, bot: !!users[id].bot });
    }
  }

  async function loadUsers() {
    let cursor = '';
    do {
      const r = await api('users.list', cursor ? { limit: 1000, cursor } : { limit: 1000 });
      for (const u of r.members) {
        const p = u.profile || {};
        S.users.set(u.id, { handle: u.name, label: p.display_name || u.real_name || p.real_name || u.name || u.id, bot: !!u.is_bot });
      }
      cursor = (r.response_metadata && r.response_metadata.next_cursor) || '';
    } while (cursor);
  }

  // The archive's avatars and custom emoji (slackindex.images): served by this server, never fetched from Slack.
  async function loadImages() {
    const r = await api('slackindex.images');
    for (const id in r.avatars || {}) S.avatars.set(id, r.avatars[id]);
    for (const name in r.emoji || {}) S.custom.set(name, r.emoji[name]);
    for (const name in r.emoji_aliases || {}) S.customAlias.set(name, r.emoji_aliases[name]);
  }

  async function loadEmoji() {
    const r = await fetch('/ui/emoji.txt' + VERSION, { credentials: 'same-origin' });
    for (const line of (await r.text()).split('\n')) {
      const sp = line.indexOf(' ');
      if (sp > 0) S.emoji.set(line.slice(0, sp), line.slice(sp + 1));
    }
  }

  function addConv(c) {
    c.label = convLabel(c);
    // Where two workspaces share the name: `acme/#general`, as the terminal shows it.
    c.title = (c.workspace ? c.workspace + '/' : '') + (c.kind === 'channel' || c.kind === 'private' ? '#' + c.name : c.label);
    S.byId.set(c.id, c);
  }

  function wire() {
    $('timeline').addEventListener('scroll', nearEdge, { passive: true });
    $('threadlist').addEventListener('scroll', () => {
      const l = $('threadlist');
      if (l.scrollHeight - l.scrollTop - l.clientHeight < 400) moreThread();
    }, { passive: true });
    $('main').addEventListener('click', (e) => {
      const b = e.target.closest('button.replies');
      if (b) openThread(b.dataset.thread);
      const p = e.target.closest('#pager button');
      if (p && !p.disabled) runSearch(+p.dataset.page);
      const msg = e.target.closest('#timeline article.msg');
      if (msg && !e.target.closest('a,button')) select(msg, false);
    });
    $('closethread').addEventListener('click', closeThread);
    $('filter').addEventListener('input', renderSidebar);
    $('workspace').addEventListener('change', () => {
      S.team = $('workspace').value;
      renderSidebar();
      fillFilters();
      if (S.mode === 'search') runSearch(1);
    });
    $('filter').addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        const first = document.querySelector('#convlist a.conv');
        if (first) location.hash = first.getAttribute('href');
      }
    });
    let timer = 0;
    $('q').addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => runSearch(1), 40); });
    $('searchform').addEventListener('submit', (e) => { e.preventDefault(); clearTimeout(timer); runSearch(1); });
    $('sort').addEventListener('change', () => runSearch(1));
    $('suggestion').addEventListener('click', (e) => {
      e.preventDefault();
      $('q').value = $('suggestion').textContent;
      runSearch(1);
    });
    $('f-in').addEventListener('change', () => writeFilter('in', $('f-in').value));
    $('f-from').addEventListener('change', () => writeFilter('from', $('f-from').value.trim()));
    $('f-after').addEventListener('change', () => writeFilter('after', $('f-after').value));
    $('f-before').addEventListener('change', () => writeFilter('before', $('f-before').value));
    $('jump').addEventListener('change', () => {
      const v = $('jump').value;
      if (!v || !S.conv) return;
      const [y, mo, d] = v.split('-').map(Number);
      const seconds = Math.floor(new Date(y, mo - 1, d).getTime() / 1000);
      location.hash = '#/' + S.conv + '/' + seconds + '.000000';
    });
    $('menu').addEventListener('click', () => document.body.classList.toggle('nav-open'));
    document.addEventListener('keydown', onKey);
    window.addEventListener('hashchange', () => route());
  }

  async function start() {
    wire();
    // A linked conversation's first page is asked for with everything else and shown as soon as it arrives (it
    // names its conversation and people); the sidebar and the whole member list follow.
    const linked = decodeURIComponent(location.hash.slice(1)).match(ROUTE);
    const early = linked ? firstPage(linked[1], linked[2]) : null;
    if (early) early.catch(() => {});
    S.emojiReady = Promise.all([loadEmoji().catch(() => {}), loadImages().catch(() => {})]);
    // The whole member list (parsed and filed on the main thread) waits for a linked conversation's first paint.
    const painted = new Promise((done) => { S.paintedNow = done; });
    S.usersReady = (linked ? painted : Promise.resolve()).then(loadUsers).catch(() => {});
    const listed = Promise.all([api('auth.test'), api('slackindex.conversations')]);
    listed.catch(() => {});
    if (linked) route(early);
    const [auth, convs] = await listed;
    // The sidebar is drawn after a linked conversation's first paint, not in its way.
    if (linked) await painted;
    S.me = auth.user_id;
    addUsers(convs.users);
    S.convs = convs.conversations;
    fillWorkspaces(convs.workspaces || []);
    S.listed = true;
    for (const c of S.convs) addConv(c);
    S.convs.sort((a, b) => a.label.localeCompare(b.label));
    if (S.conv) { showTitle(); markStart(); }
    renderSidebar();
    document.body.classList.add('ready');
    if (!linked) {
      if (location.hash.length > 2) route();
      else {
        const general = S.convs.find((c) => c.kind === 'channel' && c.name === 'general') || S.convs.find((c) => c.kind === 'channel');
        if (general) location.replace('#/' + general.id);
        else showMode('home');
      }
    }
    await S.usersReady;
    $('who').textContent = uname(S.me) || auth.user || 'archive owner';
    // The search chips' lists (every person) are filled once the member list is in.
    fillFilters();
  }

  start().catch((e) => {
    $('homemsg').textContent = 'The archive could not be loaded: ' + (e.code || e.message);
    showMode('home');
  });
})();
"""#
}
