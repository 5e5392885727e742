extension WebAssets {
    /// The style sheet (`/ui/app.css`): light and dark from `prefers-color-scheme`, a phone layout under 760 px.
    static let styles = #"""
:root {
  --bg: #ffffff; --fg: #1d1c1d; --muted: #616061; --line: #e3e3e3; --side: #3f0e40; --side-fg: #e9dfe9;
  --side-active: #1164a3; --hover: #f6f6f6; --accent: #1264a3; --mark: #fff3a3; --linked: #fff8d6;
  --code: #f4f4f4; --code-fg: #c0392b; --chip: #f1f1f1; --shadow: rgba(0, 0, 0, .12);
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #1a1d21; --fg: #d1d2d3; --muted: #9a9b9d; --line: #35373b; --side: #19171d; --side-fg: #c4c4c6;
    --side-active: #1164a3; --hover: #222529; --accent: #4fa3e3; --mark: #5a4a00; --linked: #3a3420;
    --code: #2a2d31; --code-fg: #e8912d; --chip: #2a2d31; --shadow: rgba(0, 0, 0, .5);
  }
}
* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body { font: 15px/1.46 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif;
  background: var(--bg); color: var(--fg); display: flex; flex-direction: column; }
[hidden] { display: none !important; }
a { color: var(--accent); }
button, input, select { font: inherit; color: inherit; }
.top { display: flex; align-items: center; gap: 12px; padding: 6px 12px; background: var(--side); color: var(--side-fg);
  border-bottom: 1px solid rgba(255, 255, 255, .1); flex: none; }
.brand { font-weight: 700; letter-spacing: .2px; }
.top form[role=search] { flex: 1; max-width: 640px; margin: 0 auto; }
#q { width: 100%; padding: 6px 10px; border-radius: 6px; border: 1px solid rgba(255, 255, 255, .25);
  background: rgba(255, 255, 255, .12); color: #fff; }
#q::placeholder { color: rgba(255, 255, 255, .7); }
#q:focus { background: var(--bg); color: var(--fg); outline: 2px solid var(--accent); }
.who { font-size: 13px; opacity: .85; white-space: nowrap; }
.link { background: none; border: 0; color: inherit; text-decoration: underline; cursor: pointer; font-size: 13px; }
.iconbtn { background: none; border: 0; color: inherit; font-size: 18px; cursor: pointer; padding: 2px 8px; border-radius: 4px; }
.iconbtn:hover { background: rgba(127, 127, 127, .2); }
#menu { display: none; }
.layout { flex: 1; display: flex; min-height: 0; }
#sidebar { width: 260px; flex: none; background: var(--side); color: var(--side-fg); overflow-y: auto; padding: 10px 0; }
#filter { margin: 0 12px 8px; width: calc(100% - 24px); padding: 5px 8px; border-radius: 6px; border: 1px solid rgba(255, 255, 255, .25);
  background: rgba(255, 255, 255, .1); color: #fff; }
#workspace { display: block; margin: 0 12px 8px; width: calc(100% - 24px); padding: 4px 6px; border-radius: 6px; }
#workspace[hidden] { display: none; }
#filter::placeholder { color: rgba(255, 255, 255, .65); }
#sidebar h2 { font-size: 13px; font-weight: 600; margin: 14px 16px 4px; opacity: .8; }
#sidebar ul { list-style: none; margin: 0; padding: 0; }
a.conv { display: flex; align-items: center; gap: 6px; padding: 3px 16px; color: var(--side-fg); text-decoration: none; font-size: 14.5px; }
a.conv:hover { background: rgba(0, 0, 0, .25); }
a.conv.active { background: var(--side-active); color: #fff; }
a.conv.archived .cname { opacity: .6; font-style: italic; }
.prefix { width: 16px; text-align: center; opacity: .7; font-size: 12px; flex: none; }
.cname { flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.count { font-size: 11.5px; opacity: .6; font-variant-numeric: tabular-nums; }
.ws { font-size: 11px; opacity: .6; margin: 0 6px; }
.none { padding: 0 16px; opacity: .7; }
main { flex: 1; min-width: 0; display: flex; flex-direction: column; }
main > section { flex: 1; min-height: 0; display: flex; flex-direction: column; }
.home { padding: 40px; color: var(--muted); }
.convhead { display: flex; align-items: baseline; gap: 12px; padding: 10px 20px; border-bottom: 1px solid var(--line); flex: none; }
.convhead h1 { font-size: 18px; margin: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
#topic { color: var(--muted); font-size: 13px; flex: 1; }
.jump { font-size: 13px; color: var(--muted); white-space: nowrap; margin-left: auto; }
.jump input { border: 1px solid var(--line); border-radius: 4px; background: var(--bg); padding: 1px 4px; }
#timeline { flex: 1; overflow-y: auto; padding: 0 0 16px; outline: none; overflow-anchor: none; scroll-padding-top: 30px; }
.tlstart { padding: 24px 20px 8px; color: var(--muted); font-size: 14px; }
.day { margin-top: 8px; }
/* The header takes its own 28px above the day's first message (it used to hang 14px over it, and stuck at the top
   it covered that message's first line); the day's rule is drawn behind it. */
.dayhead { position: sticky; top: 0; z-index: 2; margin: 0; text-align: center; font-size: 13px; font-weight: 600;
  height: 28px; line-height: 26px; pointer-events: none; }
.dayhead::before { content: ''; position: absolute; left: 0; right: 0; top: 50%; border-top: 1px solid var(--line); z-index: -1; }
.dayhead span { position: relative; }
.dayhead span { background: var(--bg); border: 1px solid var(--line); border-radius: 14px; padding: 2px 14px; box-shadow: 0 1px 2px var(--shadow); }
.msg { display: flex; gap: 10px; padding: 6px 20px; position: relative; outline: none; }
.msg:hover { background: var(--hover); }
.msg.cont { padding-top: 1px; padding-bottom: 1px; }
.msg.cont .av { visibility: hidden; height: 0; }
.msg.cont .meta { position: absolute; left: 0; width: 66px; justify-content: center; top: 3px; }
.msg.cont .meta > :not(.time) { display: none; }
.msg.cont .time { font-size: 10px; white-space: nowrap; visibility: hidden; }
.msg.cont:hover .time, .msg.cont.sel .time { visibility: visible; }
.msg.sel { box-shadow: inset 3px 0 0 var(--accent); background: var(--hover); }
.msg.linked { background: var(--linked); }
.av { width: 36px; height: 36px; border-radius: 6px; flex: none; display: flex; align-items: center; justify-content: center;
  color: #fff; font-weight: 700; font-size: 14px; margin-top: 2px; }
.c0 { background: #b5475a; } .c1 { background: #2f7d4f; } .c2 { background: #2d68a8; } .c3 { background: #8a5a1f; }
.c4 { background: #7a4aa8; } .c5 { background: #0f7d86; } .c6 { background: #a8452d; } .c7 { background: #4a6a1f; }
.c8 { background: #5a5fb0; } .c9 { background: #a83d8a; } .c10 { background: #3d7a6a; } .c11 { background: #6b6b2d; }
.body { min-width: 0; flex: 1; }
.meta { display: flex; align-items: baseline; gap: 8px; }
.name { font-weight: 700; }
.badge { font-size: 10px; font-weight: 700; background: var(--chip); color: var(--muted); padding: 0 4px; border-radius: 3px; }
.time { font-size: 12px; color: var(--muted); text-decoration: none; }
.time:hover { text-decoration: underline; }
.text { overflow-wrap: anywhere; }
.text p { margin: 0; }
.text blockquote { margin: 4px 0; padding-left: 10px; border-left: 4px solid var(--line); color: var(--muted); }
.text ul, .text ol { margin: 2px 0; padding-left: 24px; }
code { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); color: var(--code-fg);
  border: 1px solid var(--line); border-radius: 3px; padding: 0 3px; }
pre { font: 12.5px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); border: 1px solid var(--line);
  border-radius: 4px; padding: 8px; margin: 4px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.mention { background: rgba(29, 155, 209, .12); color: var(--accent); border-radius: 3px; padding: 0 2px; text-decoration: none; }
.mention.loud { background: rgba(242, 199, 68, .3); color: inherit; }
.emoji { font-size: 1.1em; }
img.emoji.custom { width: 1.375em; height: 1.375em; object-fit: contain; vertical-align: -0.3em; }
.reaction img.emoji.custom { width: 16px; height: 16px; vertical-align: -3px; }
img.av { object-fit: cover; background: var(--chip); }
.edited { font-size: 12px; color: var(--muted); }
.note { font-size: 12.5px; color: var(--muted); }
.attachment { border-left: 4px solid var(--line); padding: 2px 10px; margin: 4px 0; }
.files { list-style: none; margin: 4px 0; padding: 0; display: flex; flex-wrap: wrap; gap: 6px; }
.files li { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; font-size: 13.5px; }
.fsize { color: var(--muted); font-size: 12px; }
a.file { color: inherit; text-decoration: none; }
a.file:hover .fname { text-decoration: underline; color: var(--accent); }
.ficon { vertical-align: -2px; margin-right: 4px; color: var(--muted); }
#suggest { font-size: 14px; margin: 4px 0 10px; }
.fmissing { color: var(--muted); font-size: 12px; font-style: italic; }
.files li.fimage { border: 0; padding: 0; }
.fimage img { display: block; max-width: min(360px, 100%); max-height: 240px; border-radius: 6px; border: 1px solid var(--line); }
.reactions { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 4px; }
.reaction { border: 1px solid var(--line); background: var(--chip); border-radius: 12px; padding: 0 8px; font-size: 13px; cursor: default; }
.reaction b { font-weight: 600; font-size: 12px; color: var(--muted); }
.replies { background: none; border: 0; color: var(--accent); font-weight: 600; font-size: 13px; padding: 2px 0; cursor: pointer; }
.replies:hover { text-decoration: underline; }
.msg.quiet { padding-top: 2px; padding-bottom: 2px; color: var(--muted); font-size: 13.5px; }
.msg.quiet .av { width: 20px; height: 20px; font-size: 10px; margin-left: 16px; opacity: .6; }
.msg.quiet .meta { display: inline-flex; margin-right: 6px; }
.msg.quiet .body { display: flex; flex-wrap: wrap; align-items: baseline; }
.msg.quiet .name { font-weight: 600; }
.msg.broadcast .note { margin-bottom: 2px; }
#thread { width: 400px; flex: none; border-left: 1px solid var(--line); display: flex; flex-direction: column; background: var(--bg); }
.threadhead { display: flex; align-items: center; justify-content: space-between; padding: 8px 12px 8px 20px; border-bottom: 1px solid var(--line); }
.threadhead h2 { font-size: 16px; margin: 0; }
#threadlist { flex: 1; overflow-y: auto; padding-bottom: 16px; }
.replycount { margin: 4px 20px; font-size: 13px; color: var(--muted); border-bottom: 1px solid var(--line); padding-bottom: 4px; }
#results { overflow-y: auto; padding: 12px 20px; display: block; }
.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; font-size: 13px; }
.filters select, .filters input { border: 1px solid var(--line); border-radius: 14px; background: var(--chip); padding: 3px 10px; font-size: 13px; max-width: 220px; }
.filters label { display: inline-flex; gap: 4px; align-items: center; color: var(--muted); }
#summary { color: var(--muted); font-size: 13px; }
#hits { list-style: none; margin: 0; padding: 0; }
#hits li { border: 1px solid var(--line); border-radius: 8px; margin-bottom: 8px; }
a.hit { display: block; padding: 8px 12px; color: inherit; text-decoration: none; border-radius: 8px; }
a.hit:hover, a.hit:focus { background: var(--hover); outline: 2px solid var(--accent); }
.hmeta { font-size: 12.5px; color: var(--muted); }
.hconv { font-weight: 600; color: var(--fg); }
.snip { margin-top: 2px; overflow-wrap: anywhere; }
.snip p { margin: 0; }
mark { background: var(--mark); color: inherit; border-radius: 2px; padding: 0 1px; }
.source { font-size: 11px; border: 1px solid var(--line); border-radius: 3px; padding: 0 4px; }
#pager { display: flex; gap: 12px; align-items: center; justify-content: center; margin: 12px 0; font-size: 14px; }
#pager button { border: 1px solid var(--line); background: var(--chip); border-radius: 6px; padding: 4px 12px; cursor: pointer; }
#pager button:disabled { opacity: .4; cursor: default; }
body.signin { align-items: center; justify-content: center; background: var(--side); }
.signinbox { background: var(--bg); color: var(--fg); border-radius: 10px; padding: 28px 32px; width: min(440px, 92vw);
  box-shadow: 0 10px 30px var(--shadow); }
.signinbox h1 { margin: 0 0 8px; }
.signinbox label { display: block; font-weight: 600; margin: 14px 0 4px; }
.signinbox input { width: 100%; padding: 8px 10px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); }
.signinbox button { margin-top: 12px; width: 100%; padding: 8px; border: 0; border-radius: 6px; background: #007a5a; color: #fff; font-weight: 700; cursor: pointer; }
.error { color: #d0342c; min-height: 1em; }
@media (max-width: 760px) {
  #menu { display: block; }
  .brand, .who { display: none; }
  #sidebar { position: fixed; top: 45px; bottom: 0; left: 0; z-index: 10; width: 82vw; transform: translateX(-100%);
    transition: transform .15s; box-shadow: 2px 0 12px var(--shadow); }
  body.nav-open #sidebar { transform: none; }
  #thread { position: fixed; inset: 45px 0 0 0; width: auto; z-index: 9; }
  .msg { padding: 6px 10px; }
  .msg.cont { padding-top: 1px; padding-bottom: 1px; }
  .msg.cont .meta { width: 56px; }
  .convhead { padding: 8px 10px; flex-wrap: wrap; }
  .jump { margin-left: 0; }
  #results { padding: 10px; }
}
"""#
}
