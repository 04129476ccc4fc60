"use strict";
// The chat page: it follows the room over a WebSocket (GET /ws), or with long polls on
// GET /messages where no WebSocket gets through, and sends with POST /messages, one message at
// a time. Messages are always rendered as text.
//
// A message that could not be sent (the server down, say) is marked so, with a retry, and steps
// out of the queue: the messages typed after it go on, so that a page whose server crashed and
// came back sends again at once, whatever it failed to send meanwhile.
//
// The socket carries poll answers, so that both ways of following are one: the page keeps its
// cursor (the last seq it saw) and starts each socket, or poll, from it. A socket that fails
// before its first answer while the server answers a poll is not coming (a proxy that does not
// pass upgrades, a blocked endpoint): the page follows with long polls, and tries a socket
// again after a failure, or after some minutes. The status line says which way the page
// follows in its data-transport: "websocket" or "long-poll".
//
// Every answer names the server's epoch: the history its seqs count in. When it changes (a new
// server process, a stream created again) the page's cursor means nothing any more: the page
// keeps the messages it shows, as earlier ones, reads the new history from its start, and sends
// again those it sent that the new history does not have.

// The limits of a message, as the server enforces them: characters are code points.
const limits = {textChars: {{MaxTextChars}}, textBytes: {{MaxTextBytes}}, nameChars: {{MaxNameChars}}};
const pollTimeout = 25000; // ms a poll may wait on the server, under its 30 s default
const maxBackoff = 2000;   // ms between retries after a failure, at most (before jitter)
const socketRetry = 300000;  // ms on long polls before the page tries a socket again
const socketSilence = 60000; // ms without an answer after which a socket is taken for gone
                             // (the server sends one every 25 s at least)

const $ = id => document.getElementById(id);
const scroller = $("scroll"), log = $("log"), outboxList = $("outbox"), statusLine = $("status");
const form = $("form"), input = $("text"), nameInput = $("name"), notice = $("notice"), count = $("count");
const encoder = new TextEncoder();
const number = new Intl.NumberFormat();

let epoch = null;              // the history the page follows, as the server names it (null: none yet)
const left = new Set();        // the epochs of the histories the page followed before
let last = 0;                  // the cursor: the seq of the last message seen in that history
let catchingUp = true;         // polls do not wait until one answers with nothing new
const shown = new Map();       // message id → {m, li}: the message and its element in the log
const earlier = new Map();     // message id → element, for the messages of histories that ended
const waiting = new Map();     // id of a message sent but not yet polled → its outbox item,
                               // with the seq and epoch the server took it under
const outbox = [];             // messages to send, oldest first: {text, name, li, state}; one
                               // that failed leaves it, and is back once retried
let sending = false;           // a POST is in flight
let wakeFollower = null;       // ends the follower's wait before its next retry
let polling = null;            // the AbortController of the poll in flight
let dropSocket = null;         // ends the socket that follows the room, while there is one
let socketFirst = "WebSocket" in window; // the follower tries a socket before a poll
let pollingSince = 0;          // when the page fell back to long polls
const own = new Set(load("dwell-chat-own", [])); // ids of the messages sent from this browser

// --- storage: localStorage may be unavailable (private modes); the page works without it

function load(key, fallback) {
  try {
    const v = localStorage.getItem(key);
    return v === null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}

function save(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // not kept: the page goes on without it
  }
}

function remember(id) {
  own.add(id);
  save("dwell-chat-own", [...own].slice(-500));
}

// --- measuring and checking input, as the server does

const chars = s => { let n = 0; for (const _ of s) n++; return n; };
const bytes = s => encoder.encode(s).length;
// White space to both String.trim and Go's unicode.IsSpace (which adds U+0085).
const blank = /^[\s\u0085]*$/;
const trimmed = s => s.replace(/^[\s\u0085]+|[\s\u0085]+$/g, "");

function textProblem(text) {
  if (blank.test(text)) return "Nothing to send: the message is empty.";
  const c = chars(text);
  if (c > limits.textChars) {
    return `Too long to send: ${number.format(c)} characters; the limit is ${number.format(limits.textChars)}.`;
  }
  const b = bytes(text);
  if (b > limits.textBytes) {
    return `Too long to send: ${number.format(b)} bytes; the limit is ${number.format(limits.textBytes)} ` +
      "(accented letters take 2 bytes, many symbols 3, emoji 4).";
  }
  return "";
}

function nameProblem(name) {
  const c = chars(name);
  if (c > limits.nameChars) {
    return `Name too long: ${number.format(c)} characters; the limit is ${number.format(limits.nameChars)}.`;
  }
  return "";
}

// trouble returns what keeps a message from being sent, and the field to fix, or null. While
// the user types, a blank text is no trouble yet.
function trouble(text, name, typing) {
  let problem = nameProblem(name);
  if (problem) return {problem, field: nameInput};
  if (typing && blank.test(text)) return null;
  problem = textProblem(text);
  return problem ? {problem, field: input} : null;
}

// say shows the trouble with the input (none: null). Only the input changes the notice.
function say(t) {
  notice.textContent = t ? t.problem : "";
  input.setAttribute("aria-invalid", String(t?.field === input));
  nameInput.setAttribute("aria-invalid", String(t?.field === nameInput));
}

function recheck() {
  const t = trouble(input.value, trimmed(nameInput.value), true);
  if (t || notice.textContent !== "") say(t);
}

// measure shows the length of the text against the limits, and fits the box to the text.
function measure() {
  const text = input.value, c = chars(text), b = bytes(text);
  let s = `${number.format(c)} / ${number.format(limits.textChars)} characters`;
  if (b !== c) s += ` · ${number.format(b)} / ${number.format(limits.textBytes)} bytes`;
  count.textContent = s;
  count.classList.toggle("over", c > limits.textChars || b > limits.textBytes);
  input.style.height = "auto";
  input.style.height = input.scrollHeight + 2 + "px"; // the borders
}

// --- rendering

function atBottom() {
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
}

function hue(name) {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.codePointAt(0)) % 360;
  return h;
}

function clock(iso) {
  const t = new Date(iso);
  if (isNaN(t)) return null;
  const el = document.createElement("time");
  el.dateTime = iso;
  el.title = t.toLocaleString();
  const today = new Date().toDateString() === t.toDateString();
  el.textContent = (today ? "" : t.toLocaleDateString(undefined, {day: "numeric", month: "short"}) + " ") +
    t.toLocaleTimeString(undefined, {hour: "2-digit", minute: "2-digit"});
  return el;
}

// bubble builds a message's element: its name, its time, its text, all as text.
function bubble(name, time, text, mine) {
  const li = document.createElement("li");
  li.className = mine ? "msg own" : "msg";
  const meta = document.createElement("div");
  meta.className = "meta";
  const who = document.createElement("span");
  who.className = name ? "author" : "author anonymous";
  who.textContent = (name || "anonymous") + (mine ? " (you)" : "");
  if (name) who.style.setProperty("--hue", hue(name));
  meta.append(who);
  const when = time && clock(time);
  if (when) meta.append(when);
  const body = document.createElement("div");
  body.className = "bubble";
  body.textContent = text;
  li.append(meta, body);
  return li;
}

function show(m) {
  if (shown.has(m.id)) return;
  const li = bubble(m.name, m.time, m.text, own.has(m.id));
  shown.set(m.id, {m, li});
  const pending = waiting.get(m.id);
  if (pending) {
    pending.li.remove();
    waiting.delete(m.id);
  }
  // A message shown as an earlier history's that is in this one too (a stream created again
  // while its instances still followed the old one) moves to its place in this one.
  earlier.get(m.id)?.remove();
  earlier.delete(m.id);
  log.append(li);
}

// --- connection state

function setStatus(state, text) {
  statusLine.dataset.state = state;
  statusLine.textContent = text;
}

// setTransport says which way the page follows the room: "websocket" or "long-poll".
function setTransport(name) {
  if (statusLine.dataset.transport === name) return;
  statusLine.dataset.transport = name;
  statusLine.title = name === "websocket" ? "following the room over a WebSocket" : "following the room with long polls";
}

// live is called whenever a request succeeded: the server is there, so a follower waiting to
// retry tries at once.
function live() {
  setStatus("live", "live");
  if (wakeFollower) wakeFollower();
}

function pause(ms) {
  return new Promise(resolve => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      wakeFollower = null;
      resolve();
    }
    wakeFollower = done;
  });
}

// reason is what a failed response says went wrong: the server's error, else its status.
async function reason(r) {
  try {
    const body = await r.json();
    if (body && typeof body.error === "string") return body.error;
  } catch {
    // no JSON error: the status says it
  }
  return `HTTP ${r.status}`;
}

// --- following the room: one history at a time

// enter makes the page follow the history named newEpoch. The messages sent in any other that
// have not come yet are orphans: they come in this history only if they went to it.
function enter(newEpoch) {
  if (epoch !== null && epoch !== newEpoch) left.add(epoch);
  epoch = newEpoch;
  for (const item of waiting.values()) item.orphan = item.epoch !== epoch;
}

// startOver follows a new history: the messages shown stay, above a line that says they are no
// longer on the server, and the page reads the new history from its start.
function startOver(newEpoch) {
  if (shown.size) {
    const line = document.createElement("li");
    line.className = "restart";
    line.textContent = "The server started over: the messages above are no longer on it.";
    log.append(line);
  }
  for (const [id, {li}] of shown) earlier.set(id, li);
  shown.clear();
  enter(newEpoch);
  last = 0;
  catchingUp = true;
}

// receive takes a poll's answer, or a socket's. An answer from another history, or whose cursor
// is behind the page's (a history that started again under the same name), starts over instead:
// its messages are those after a cursor that meant something else. It reports whether the
// answer was taken; after a start over, the page reads the new history from after=0.
function receive(body) {
  if (epoch === null) {
    enter(body.epoch);
  } else if (body.epoch !== epoch || body.last < last) {
    startOver(body.epoch);
    return false;
  }
  const stick = atBottom();
  body.messages.forEach(show);
  last = body.last;
  if (stick && body.messages.length) scroller.scrollTop = scroller.scrollHeight;
  if (!body.messages.length) catchingUp = false;
  settle();
  return true;
}

// settle sends again the messages the server took that the history the page follows will not
// bring: an orphan, once the page has read this history up to now (the server that took it, or
// its stream, is gone; had it gone to this history, the poll would have brought it), and one
// taken in this history whose seq the cursor has passed.
function settle() {
  const again = [];
  for (const [id, item] of waiting) {
    if (item.orphan ? !catchingUp : item.epoch === epoch && item.seq <= last) {
      waiting.delete(id);
      setState(item, "waiting");
      again.push(item);
    }
  }
  if (!again.length) return;
  // Before the messages typed after them, behind the one on its way.
  outbox.splice(sending ? 1 : 0, 0, ...again);
  pump();
}

// lookAgain makes the follower read the history up to now at once: it polls without waiting
// on the server, or opens its socket again. A POST answer named another epoch than the page's.
function lookAgain() {
  catchingUp = true;
  polling?.abort();
  dropSocket?.();
  if (wakeFollower) wakeFollower();
}

// listen follows the room over a WebSocket from the cursor until the socket closes, and
// resolves with whether it was live (an answer came): the server sends the answers a poll with
// timeout=0 would, up to one with no messages, then each batch as it comes, and one with none
// every 25 s. A socket silent for longer is taken for gone.
function listen() {
  return new Promise(resolve => {
    let ws;
    try {
      ws = new WebSocket(`${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws?after=${last}`);
    } catch {
      resolve(false);
      return;
    }
    let answered = false, silence = 0;
    const end = () => {
      clearTimeout(silence);
      ws.onmessage = ws.onclose = null;
      if (dropSocket === end) dropSocket = null;
      if (ws.readyState !== WebSocket.CLOSED) ws.close();
      resolve(answered);
    };
    const heard = () => {
      clearTimeout(silence);
      silence = setTimeout(end, socketSilence);
    };
    dropSocket = end;
    heard();
    ws.onclose = end;
    ws.onmessage = ev => {
      let body;
      try {
        body = JSON.parse(ev.data);
      } catch {
        end();
        return;
      }
      if (!Array.isArray(body.messages)) return; // the answer to a post: this page posts with POST
      heard();
      answered = true;
      setTransport("websocket");
      live();
      if (!receive(body)) end(); // started over: the new history is read from its start
    };
  });
}

// follow follows the room for ever: over a socket while one gets through, else with polls. A
// socket that was live and ended is opened again at once (unless they keep ending within
// seconds). One that fails is followed by a poll, without waiting on the server: if the poll
// fails too, the server is away, and the page backs off (and tries a socket first again); if it
// succeeds, the page tries a socket once more, and when that fails too it falls back to polls,
// for socketRetry. After a failure it asks again within seconds (backoff with jitter), first
// without waiting on the server, so that the page says live as soon as it is back; so it does at
// the start, and after starting over, until an answer has nothing new.
async function follow() {
  let failures = 0;
  let reachable = false; // the last request was a poll that succeeded: a socket failing now is the socket's fault
  let brief = 0;         // live sockets in a row that ended within seconds
  for (;;) {
    if (socketFirst) {
      const opened = Date.now();
      if (await listen()) {
        failures = 0;
        reachable = false;
        // A server that keeps ending its sockets at once is not asked again at once for ever.
        brief = Date.now() - opened < 10000 ? brief + 1 : 0;
        if (brief >= 3) await pause(maxBackoff);
        continue;
      }
      catchingUp = true;
      if (reachable) {
        socketFirst = false;
        pollingSince = Date.now();
      }
    }
    polling = new AbortController();
    try {
      const timeout = catchingUp ? 0 : pollTimeout;
      const r = await fetch(`/messages?after=${last}&timeout=${timeout}`, {cache: "no-store", signal: polling.signal});
      if (!r.ok) throw new Error(await reason(r));
      const body = await r.json();
      setTransport("long-poll");
      live();
      failures = 0;
      reachable = true;
      receive(body);
      if (!socketFirst && Date.now() - pollingSince > socketRetry) socketFirst = true;
    } catch (e) {
      if (e.name === "AbortError") continue; // lookAgain: poll again at once
      failures++;
      reachable = false;
      catchingUp = true;
      socketFirst = "WebSocket" in window; // the server may come back with its sockets
      setStatus("offline", failures === 1 ? "reconnecting…" : "offline, retrying…");
      const delay = Math.min(250 * 2 ** failures, maxBackoff) * (0.75 + Math.random() / 2);
      await pause(delay);
    }
  }
}

// --- sending: one POST at a time, in order; a message that fails stays, marked not sent, with
// a retry, and does not hold back those typed after it

function setState(item, state, detail) {
  item.state = state;
  item.li.classList.toggle("failed", state === "failed");
  const line = item.li.querySelector(".state");
  line.replaceChildren();
  if (state === "failed") {
    line.append(`Not sent: ${detail}.`);
    const again = document.createElement("button");
    again.type = "button";
    again.textContent = "Retry";
    again.addEventListener("click", () => retry(item));
    const edit = document.createElement("button");
    edit.type = "button";
    edit.textContent = "Edit";
    edit.addEventListener("click", () => unsend(item));
    line.append(again, edit);
  } else {
    line.append(state === "sending" ? "sending…" : state === "sent" ? "sent" : "waiting…");
  }
}

function enqueue(text, name) {
  const li = bubble(name, null, text, true);
  li.classList.add("pending");
  const line = document.createElement("div");
  line.className = "state";
  li.append(line);
  const item = {text, name, li};
  setState(item, "waiting");
  outbox.push(item);
  outboxList.append(li);
  scroller.scrollTop = scroller.scrollHeight;
  pump();
}

// retry puts a message that was not sent back at the end of the queue: it goes when retried,
// after the messages already waiting.
function retry(item) {
  setState(item, "waiting");
  outbox.push(item);
  pump();
}

// unsend takes a message that was not sent (and so is out of the queue) back into the input,
// before what is typed there.
function unsend(item) {
  item.li.remove();
  input.value = input.value === "" ? item.text : item.text + "\n" + input.value;
  measure();
  recheck();
  input.focus();
}

// pump sends the first message of the queue, and the next once it is done. Sent or not, the
// message leaves the queue: one that failed stays in the outbox, marked, until it is retried or
// taken back. Had it kept its place, every message typed after it would wait behind it for as
// long as nobody retried it: after a crash, all those typed once the server is back.
async function pump() {
  const item = outbox[0];
  if (sending || !item) return;
  sending = true;
  setState(item, "sending");
  let m = null;
  try {
    m = await post(item);
  } catch (e) {
    setState(item, "failed", e.message);
  }
  sending = false;
  outbox.shift(); // item, still first: settle puts what it sends again behind it
  if (m) {
    live();
    remember(m.id);
    sent(item, m);
  }
  pump();
}

// post sends a message with POST /messages and returns the server's answer, {id, seq, time,
// epoch}; it throws an Error that says why the message was not sent.
async function post(item) {
  const message = item.name ? {name: item.name, text: item.text} : {text: item.text};
  let r;
  try {
    r = await fetch("/messages", {
      method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify(message),
    });
  } catch {
    throw new Error("no connection to the server");
  }
  if (!r.ok) throw new Error(await reason(r));
  return r.json();
}

// sent marks a message the server took: as the user's own if the poll showed it already, else
// as sent until the poll shows it in its place. Its seq and epoch say where it went, for settle.
function sent(item, m) {
  const seen = shown.get(m.id);
  if (seen) {
    item.li.remove();
    const li = bubble(seen.m.name, seen.m.time, seen.m.text, true);
    seen.li.replaceWith(li);
    seen.li = li;
    return;
  }
  setState(item, "sent");
  item.seq = m.seq;
  item.epoch = m.epoch;
  // Taken in a history the page has left: an orphan. In one it has not followed yet, which may
  // have replaced the page's: the message waits for the page there. Either way the page looks.
  item.orphan = m.epoch !== epoch && left.has(m.epoch);
  waiting.set(m.id, item);
  if (epoch !== null && m.epoch !== epoch) lookAgain();
}

function submit() {
  const text = input.value, name = trimmed(nameInput.value);
  const t = trouble(text, name, false);
  if (t) {
    say(t);
    t.field.focus();
    return;
  }
  say(null);
  input.value = "";
  measure();
  enqueue(text, name);
}

form.addEventListener("submit", ev => {
  ev.preventDefault();
  submit();
});
input.addEventListener("keydown", ev => {
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    submit();
  }
});
input.addEventListener("input", () => { measure(); recheck(); });
nameInput.addEventListener("input", () => {
  recheck();
  const name = trimmed(nameInput.value);
  if (!nameProblem(name)) save("dwell-chat-name", name);
});

nameInput.value = load("dwell-chat-name", "");
measure();
follow();
