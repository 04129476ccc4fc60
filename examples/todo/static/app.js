"use strict";
// The todo page: the list (GET /todos), kept up to date by following the change log over a
// WebSocket (GET /todos/ws), or with long polls (GET /todos/changes) where no WebSocket gets
// through; and the writes (POST, PUT, DELETE /todos), signed in with the token (POST /session)
// when the server asks for it (401). Todos are always rendered as text.
//
// The page keeps the log's cursor: the seq of the last change it applied. It first learns the
// log's last seq (a poll with a cursor ahead of the log is answered with it at once), then reads
// the list, then follows from that cursor: a change made in between is applied again, which
// changes nothing, as each change carries its todo whole. A socket or a poll reconnects with the
// cursor, across a server's restart too (the log is in the database). An answer that says changes
// were missed, or whose cursor went back (a new database), makes the page read the list again.
//
// The list shows what the log says: a write's answer is not shown, its change is, in the log's
// order, so that two pages and the server never disagree. The status line says whether the page
// is live, and how it follows in its data-transport: "websocket" or "long-poll".

const pollTimeout = 25000;       // ms a poll waits on the server, under its 30 s default
const maxBackoff = 5000;         // ms between retries after a failure, at most (before jitter)
const socketRetry = 300000;      // ms on long polls before the page tries a socket again
const socketSilence = 60000;     // ms without a message after which a socket is taken for gone
                                 // (the server sends one every 25 s at least)
const ahead = Number.MAX_SAFE_INTEGER; // a cursor ahead of any log: answered with the log's last

const $ = id => document.getElementById(id);
const list = $("todos"), empty = $("empty"), statusLine = $("status"), notice = $("notice");
const addForm = $("add"), titleInput = $("title");
const signInForm = $("signin"), tokenInput = $("token"), signOutButton = $("signout");

const items = new Map();         // todo id → its <li>, with the todo shown as li.todo
let cursor = null;               // the seq of the last change applied
let useSocket = "WebSocket" in window;
let pollingSince = 0;            // when the page fell back to long polls
let failures = 0;                // in a row, for the backoff
let applying = Promise.resolve(); // answers are applied one after another, in order
let refusedWrite = null;         // the write a 401 refused, made again once signed in

// --- the API

class APIError extends Error {
  constructor(status, message, retryAfter) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

// api makes a request of the API and returns its JSON, or throws an APIError with the
// server's {"error"} (status 0: no answer).
async function api(method, path, body) {
  const init = {method, headers: {Accept: "application/json"}};
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new APIError(0, "the server cannot be reached");
  }
  const data = resp.status === 204 ? null : await resp.json().catch(() => null);
  if (!resp.ok) {
    throw new APIError(resp.status, (data && data.error) || resp.statusText, resp.headers.get("Retry-After"));
  }
  return data;
}

const sleep = ms => new Promise(ok => setTimeout(ok, ms));
const backoff = () => Math.min(maxBackoff, 250 * 2 ** Math.min(failures, 5)) * (0.5 + Math.random() / 2);

// --- the list

function show(todo) {
  let li = items.get(todo.id);
  if (!li) {
    li = document.createElement("li");
    li.dataset.id = String(todo.id);
    const box = document.createElement("input");
    box.type = "checkbox";
    box.id = "done-" + todo.id;
    const label = document.createElement("label");
    label.htmlFor = box.id;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "delete";
    remove.textContent = "Delete";
    box.addEventListener("change", () => toggle(li, box));
    remove.addEventListener("click", () => removeTodo(li, remove));
    li.append(box, label, remove);
    let next = null; // the first item of a larger id: the list stays in id order
    for (const other of list.children) {
      if (Number(other.dataset.id) > todo.id) {
        next = other;
        break;
      }
    }
    list.insertBefore(li, next);
    items.set(todo.id, li);
  }
  li.todo = todo;
  li.classList.toggle("done", todo.done);
  li.querySelector("input").checked = todo.done;
  li.querySelector("label").textContent = todo.title;
  li.querySelector("button").setAttribute("aria-label", "Delete: " + todo.title);
  empty.hidden = true;
}

function hide(id) {
  const li = items.get(id);
  if (!li) return;
  const hadFocus = li.contains(document.activeElement);
  li.remove();
  items.delete(id);
  if (hadFocus) titleInput.focus();
  empty.hidden = items.size > 0;
}

function showAll(todos) {
  const keep = new Set(todos.map(t => t.id));
  for (const id of [...items.keys()]) {
    if (!keep.has(id)) hide(id);
  }
  todos.forEach(show);
  empty.hidden = items.size > 0;
}

// apply applies an answer of the log, {changes, next, missed}, in the order answers come.
function apply(answer) {
  applying = applying.catch(() => {}).then(async () => { // after the last, even if it failed
    if (answer.missed || (cursor !== null && answer.next < cursor)) {
      showAll(await api("GET", "/todos"));
    }
    for (const ch of answer.changes) {
      if (ch.op === "delete") hide(ch.todo.id);
      else show(ch.todo);
    }
    cursor = answer.next;
  });
  return applying;
}

// --- following the log

function setStatus(state, transport) {
  statusLine.dataset.state = state;
  if (transport) statusLine.dataset.transport = transport;
  statusLine.textContent = {live: "live", connecting: "connecting…", offline: "offline: reconnecting…"}[state];
}

async function start() {
  for (;;) {
    try {
      const now = await api("GET", "/todos/changes?timeout=0&after=" + ahead);
      showAll(await api("GET", "/todos"));
      cursor = now.next;
      break;
    } catch (e) {
      failures++;
      setStatus("offline");
      await sleep(backoff());
    }
  }
  failures = 0;
  follow();
  api("GET", "/session").then(s => { signOutButton.hidden = !s.signed_in; }, () => {});
}

function follow() {
  if (useSocket) openSocket();
  else poll();
}

function openSocket() {
  const url = new URL("/todos/ws?after=" + cursor, location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(url);
  let heard = false;
  let silence = 0;
  const listen = () => {
    clearTimeout(silence);
    silence = setTimeout(() => ws.close(), socketSilence);
  };
  listen();
  ws.onmessage = ev => {
    heard = true;
    failures = 0;
    listen();
    setStatus("live", "websocket");
    apply(JSON.parse(ev.data)).catch(() => ws.close()); // the list could not be read again
  };
  ws.onclose = async () => {
    clearTimeout(silence);
    ws.onmessage = null;
    setStatus("offline");
    if (!heard) {
      failures++;
      // A socket that failed before its first message, where a poll gets an answer: something
      // on the way passes no WebSocket. Follow with polls.
      try {
        await api("GET", "/todos/changes?timeout=0&after=" + ahead);
        useSocket = false;
        pollingSince = Date.now();
      } catch {
        // the server is down: try the socket again
      }
    }
    await applying.catch(() => {});
    await sleep(heard ? 0 : backoff());
    follow();
  };
}

async function poll() {
  let wait = 0; // the first poll catches up at once, and says the page is live
  for (;;) {
    try {
      const answer = await api("GET", `/todos/changes?after=${cursor}&timeout=${wait}`);
      failures = 0;
      setStatus("live", "long-poll");
      await apply(answer);
      wait = answer.changes.length ? 0 : pollTimeout;
    } catch (e) {
      failures++;
      wait = 0;
      setStatus("offline");
      await sleep(backoff());
    }
    if ("WebSocket" in window && Date.now() - pollingSince > socketRetry) {
      useSocket = true;
      return follow();
    }
  }
}

// --- writes

// write runs request, a write, and says what went wrong in the notice: for a 401, it shows the
// sign-in form, and makes the write again once signed in. It returns whether the write was made.
async function write(request, what) {
  try {
    await request();
    notice.textContent = "";
    return true;
  } catch (e) {
    if (e.status === 401) {
      refusedWrite = () => write(request, what);
      signInForm.hidden = false;
      tokenInput.focus();
      notice.textContent = `Sign in to ${what}.`;
    } else if (e.status === 429) {
      notice.textContent = `Too many changes at once: try again in ${e.retryAfter || 1} s.`;
    } else {
      notice.textContent = `Could not ${what}: ${e.message}.`;
    }
    return false;
  }
}

addForm.addEventListener("submit", async ev => {
  ev.preventDefault();
  const title = titleInput.value.trim();
  if (!title) {
    notice.textContent = "Type what needs doing first.";
    titleInput.focus();
    return;
  }
  const button = addForm.querySelector("button");
  button.disabled = true;
  if (await write(() => api("POST", "/todos", {title, done: false}), "add a todo")) {
    titleInput.value = "";
  }
  button.disabled = false;
});

async function toggle(li, box) {
  const done = box.checked;
  if (!(await write(() => api("PUT", "/todos/" + li.todo.id, {title: li.todo.title, done}), "change it"))) {
    box.checked = li.todo.done; // as the log last said
  }
}

async function removeTodo(li, button) {
  button.disabled = true;
  await write(() => api("DELETE", "/todos/" + li.todo.id), "delete it");
  button.disabled = false; // the item goes when its change comes
}

signInForm.addEventListener("submit", async ev => {
  ev.preventDefault();
  try {
    await api("POST", "/session", {token: tokenInput.value});
  } catch (e) {
    notice.textContent = e.status === 401 ? "That is not the token." : `Could not sign in: ${e.message}.`;
    tokenInput.select();
    return;
  }
  tokenInput.value = "";
  signInForm.hidden = true;
  signOutButton.hidden = false;
  notice.textContent = "";
  titleInput.focus();
  const again = refusedWrite;
  refusedWrite = null;
  if (again) again();
});

signOutButton.addEventListener("click", async () => {
  await api("DELETE", "/session").catch(() => {});
  signOutButton.hidden = true;
});

start();
