/// The web UI's files, written by hand and kept in the binary (SwiftPM resources on Linux are a separate folder
/// beside it, not part of it). Each is served as it is: edit it here. Archive text never passes through these
/// strings: the script reads the API's JSON and escapes every string it shows (`esc`, `mrkdwn`). `{{v}}` in a
/// page is the assets' version (`WebAsset.version`): their URLs change with their content, so a browser keeps them.
enum WebAssets {
    /// The app page (`/` for a signed-in browser): markup only, no inline script or style.
    static let page = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>slackindex</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/app.css?v={{v}}">
<script src="/ui/app.js?v={{v}}" defer></script>
</head>
<body>
<header class="top">
  <button id="menu" class="iconbtn" aria-label="Show conversations" title="Conversations">☰</button>
  <span class="brand">slackindex</span>
  <form id="searchform" role="search" action="#">
    <input id="q" type="search" placeholder="Search  ( / )" aria-label="Search messages (Slack syntax: from:@name in:#channel after:2024-05-01)" autocomplete="off" spellcheck="false">
  </form>
  <span id="who" class="who"></span>
  <form method="post" action="/ui/signout"><button class="link" type="submit">Sign out</button></form>
</header>
<div class="layout">
  <nav id="sidebar" aria-label="Conversations">
    <select id="workspace" aria-label="Workspace" hidden></select>
    <input id="filter" type="search" placeholder="Filter conversations" aria-label="Filter conversations" autocomplete="off">
    <div id="convlist"></div>
  </nav>
  <main id="main">
    <section id="home" class="home">
      <p id="homemsg">Loading the archive…</p>
    </section>
    <section id="conv" hidden>
      <div class="convhead">
        <h1 id="title"></h1>
        <span id="topic"></span>
        <label class="jump">Jump to <input id="jump" type="date" aria-label="Jump to date"></label>
      </div>
      <div id="timeline" aria-label="Messages" role="log" tabindex="0"><div id="tlstart" class="tlstart"></div></div>
    </section>
    <section id="results" hidden aria-label="Search results">
      <div class="filters" role="group" aria-label="Search filters">
        <select id="f-in" aria-label="Filter: in conversation"></select>
        <input id="f-from" list="people" placeholder="From person" aria-label="Filter: from person" autocomplete="off">
        <datalist id="people"></datalist>
        <label>After <input id="f-after" type="date" aria-label="Filter: after date"></label>
        <label>Before <input id="f-before" type="date" aria-label="Filter: before date"></label>
        <select id="sort" aria-label="Sort results"><option value="score">Most relevant</option><option value="timestamp">Newest first</option></select>
      </div>
      <p id="summary" aria-live="polite"></p>
      <p id="suggest" hidden>Did you mean <a id="suggestion" href="#"></a>?</p>
      <ol id="hits"></ol>
      <nav id="pager" aria-label="Result pages"></nav>
    </section>
  </main>
  <aside id="thread" hidden aria-label="Thread">
    <div class="threadhead"><h2>Thread</h2><button id="closethread" class="iconbtn" aria-label="Close thread (Esc)" title="Close (Esc)">✕</button></div>
    <div id="threadlist"></div>
  </aside>
</div>
</body>
</html>
"""#

    /// The sign-in form (`/` without a session); `{{error}}` takes an escaped sentence.
    static let signIn = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · slackindex</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/app.css?v={{v}}">
</head>
<body class="signin">
<main class="signinbox">
  <h1>slackindex</h1>
  <p>Your Slack archive, searchable and private. Sign in with a token made by <code>slackindex token create --user U…</code>.</p>
  <form method="post" action="/ui/signin">
    <label for="token">Token</label>
    <input id="token" name="token" type="password" autocomplete="off" placeholder="xoxp-slackindex-…" required autofocus>
    <button type="submit">Sign in</button>
  </form>
  <p id="error" class="error" role="alert">{{error}}</p>
</main>
</body>
</html>
"""#
}
