// Package chatpage is the page of the chat examples (examples/chat, examples/chatcluster): one
// self-contained HTML document, with its style and script, that posts with POST /messages and
// follows the room with long polls on GET /messages, keeping its cursor across failures.
package chatpage

import "github.com/dwellhttp/dwell/core"

// Serve answers GET / with the page.
func Serve(c *core.Ctx) {
	c.SetHeader("Content-Type", "text/html; charset=utf-8")
	c.WriteString(pageHTML)
}

const pageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dwell chat</title>
<style>
  body { font: 16px/1.4 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
  #log { list-style: none; padding: 0; min-height: 12rem; }
  #log li { padding: .25rem 0; border-bottom: 1px solid #eee; white-space: pre-wrap; }
  #log small { color: #888; margin-right: .5rem; }
  form { display: flex; gap: .5rem; }
  input { flex: 1; padding: .4rem; font: inherit; }
  #status { color: #888; font-size: .9rem; }
</style>
</head>
<body>
<h1>dwell chat</h1>
<ul id="log"></ul>
<form id="form">
  <input id="text" maxlength="4096" autocomplete="off" placeholder="Say something" required>
  <button>Send</button>
</form>
<p id="status">connecting…</p>
<script>
"use strict";
const log = document.getElementById("log");
const status = document.getElementById("status");
let last = 0;

function show(m) {
  const li = document.createElement("li");
  const seq = document.createElement("small");
  seq.textContent = "#" + m.seq;
  li.append(seq, document.createTextNode(m.text));
  log.append(li);
  window.scrollTo(0, document.body.scrollHeight);
}

async function follow() {
  for (;;) {
    try {
      const r = await fetch("/messages?after=" + last + "&timeout=30000", {cache: "no-store"});
      if (!r.ok) throw new Error("HTTP " + r.status);
      const body = await r.json();
      body.messages.forEach(show);
      last = body.last;
      status.textContent = "live";
    } catch (e) {
      status.textContent = "reconnecting… (" + e.message + ")";
      await new Promise(ok => setTimeout(ok, 2000));
    }
  }
}

document.getElementById("form").addEventListener("submit", async ev => {
  ev.preventDefault();
  const input = document.getElementById("text");
  const text = input.value;
  if (!text) return;
  const r = await fetch("/messages", {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({text}),
  });
  if (r.ok) input.value = "";
  else status.textContent = "not sent: HTTP " + r.status;
});

follow();
</script>
</body>
</html>
`
