// typingd web chat: one tab is one person. Plain JavaScript, no build step.
//
// Who you are comes from the URL (?user=alice&name=Alice&room=team) or, without a
// name, from the form; without ?room=, the gateway puts you in its default room
// (gateway.py's DEFAULT_ROOM) and names it in its hello. Every change of the message
// box sends {"op":"type"} to the gateway ({"op":"type","empty":true} when the box
// becomes empty); Enter sends the message ({"op":"send"}). The indicator line shows
// exactly the text of the latest indicator typingd sent this viewer.
//
// "Reply" on a message opens its thread in the side pane ({"op":"open_thread"}), with
// its own box and its own indicator line (the indicators with "pane":"side"). The
// live region (#announcer, role="status") is fed only by typingd's announcements: a
// sentence once it has settled, not every change of the indicator lines.
"use strict";

(function () {
  const params = new URLSearchParams(location.search);
  const room = params.get("room") || "";   // "": the gateway's default room
  const $ = (id) => document.getElementById(id);
  const messages = $("messages"), indicator = $("indicator"), box = $("box"), statusLine = $("status");
  const pane = $("thread"), threadMessages = $("thread-messages"), threadIndicator = $("thread-indicator");
  const threadBox = $("thread-box"), announcer = $("announcer");
  let me = null;          // {user, name}
  let socket = null;
  let retryMs = 500;
  let here = new Map();   // user -> name, the people in the room
  let roomName = room;   // the hello's room once connected
  let side = null;        // the thread in the side pane (a message's id), or null
  let said = new Map();   // message id -> the message, in the channel
  let replies = new Map();   // thread -> its messages

  function setState(state, text) {
    document.body.dataset.state = state;
    statusLine.textContent = text;
  }

  function presence() {
    return `in #${roomName}, ${here.size} here`;
  }

  // A query with the URL's room first, if it named one.
  function withRoom(fields) {
    return new URLSearchParams(room ? { room: room, ...fields } : fields);
  }

  function slug(name) {
    const base = name.normalize("NFKD").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
    return (base || "user").slice(0, 32) + "-" + Math.random().toString(36).slice(2, 6);
  }

  function addLine(className, who, text, list = messages) {
    const li = document.createElement("li");
    if (className) li.className = className;
    if (who !== null) {
      const b = document.createElement("span");
      b.className = "who";
      b.textContent = who;
      li.appendChild(b);
    }
    const t = document.createElement("span");
    t.className = "text";
    t.textContent = text;
    li.appendChild(t);
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    list.appendChild(li);
    if (atBottom) list.scrollTop = list.scrollHeight;
    return li;
  }

  function messageLine(m, list) {
    return addLine(m.user === me.user ? "message mine" : "message", m.name || m.user, m.text, list);
  }

  function replyCount(id) {
    const n = (replies.get(id) || []).length;
    return n === 0 ? "Reply" : n === 1 ? "1 reply" : `${n} replies`;
  }

  function showMessage(m) {
    if (m.thread) {
      if (!replies.has(m.thread)) replies.set(m.thread, []);
      replies.get(m.thread).push(m);
      const button = messages.querySelector(`button[data-thread="${CSS.escape(m.thread)}"]`);
      if (button) button.textContent = replyCount(m.thread);
      if (m.thread === side) messageLine(m, threadMessages);
      return;
    }
    said.set(m.id, m);
    const li = messageLine(m, messages);
    li.dataset.id = m.id;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "reply";
    button.dataset.thread = m.id;
    button.textContent = replyCount(m.id);
    button.addEventListener("click", () => send({ op: "open_thread", thread: m.id }));
    li.appendChild(button);
  }

  // The side pane shows thread (null: none). A pane at another thread starts empty,
  // as typingd starts its indicators.
  function showSide(thread) {
    if (thread === side) return;
    side = thread;
    threadIndicator.textContent = "";
    threadMessages.textContent = "";
    threadBox.value = "";
    for (const li of messages.querySelectorAll("li.open")) li.classList.remove("open");
    if (thread === null) {
      pane.hidden = true;
      threadBox.disabled = true;
      return;
    }
    const root = said.get(thread);
    if (root) {
      messageLine(root, threadMessages).classList.add("root");
      const li = messages.querySelector(`li[data-id="${CSS.escape(thread)}"]`);
      if (li) li.classList.add("open");
    }
    (replies.get(thread) || []).forEach((m) => messageLine(m, threadMessages));
    pane.hidden = false;
    threadBox.disabled = false;
  }

  // Only typingd's announcements reach the live region.
  function announce(m) {
    announcer.textContent = m.pane === "side" ? `In the thread: ${m.text}` : m.text;
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const query = withRoom({ user: me.user, name: me.name });
    setState("connecting", "connecting...");
    socket = new WebSocket(`${scheme}//${location.host}/ws?${query}`);
    socket.onopen = () => { retryMs = 500; };
    socket.onmessage = (frame) => {
      let m;
      try { m = JSON.parse(frame.data); } catch (e) { console.warn("not JSON from the gateway", frame.data); return; }
      switch (m.op) {
        case "hello":
          messages.textContent = "";
          said = new Map();
          replies = new Map();
          side = undefined;   // redrawn below
          m.history.forEach(showMessage);
          showSide(m.side);
          indicator.textContent = "";
          box.disabled = false;
          box.focus();
          here = new Map(m.members.map((p) => [p.user, p.name]));
          roomName = m.room;
          setState("open", presence());
          break;
        case "indicator":
          // Exactly what typingd says this viewer sees ("" when nobody types), on the
          // screen it names: the channel, or the thread in the side pane.
          if (m.pane !== "side") indicator.textContent = m.text;
          else if (m.thread === side) threadIndicator.textContent = m.text;
          break;
        case "announce":
          announce(m);
          break;
        case "side":
          showSide(m.thread);
          break;
        case "message":
          showMessage(m);
          break;
        case "joined":
          here.set(m.user, m.name);
          addLine("note", null, `${m.name || m.user} joined`);
          statusLine.textContent = presence();
          break;
        case "left":
          here.delete(m.user);
          addLine("note", null, `${m.name || m.user} left`);
          statusLine.textContent = presence();
          break;
        case "error":
          console.warn("gateway:", m.code, m.message);
          statusLine.textContent = `error: ${m.message}`;
          break;
      }
    };
    socket.onclose = (event) => {
      box.disabled = true;
      indicator.textContent = "";
      showSide(null);
      if (event.code === 4400) {
        setState("closed", `refused: ${event.reason}`);
        return;
      }
      setState("closed", `disconnected (${event.code}); retrying in ${retryMs / 1000} s`);
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 10000);
    };
  }

  // Keystrokes: every change of the box is a keystroke for typingd.
  box.addEventListener("input", () => {
    send(box.value === "" ? { op: "type", empty: true } : { op: "type" });
  });
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing || event.shiftKey) return;
    event.preventDefault();
    const text = box.value.trim();
    if (text === "") return;
    send({ op: "send", text: text });
    box.value = "";
  });
  // The thread's box: the same, in the thread.
  threadBox.addEventListener("input", () => {
    if (side === null) return;
    send(threadBox.value === "" ? { op: "type", thread: side, empty: true } : { op: "type", thread: side });
  });
  threadBox.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.isComposing || event.shiftKey || side === null) return;
    event.preventDefault();
    const text = threadBox.value.trim();
    if (text === "") return;
    send({ op: "send", thread: side, text: text });
    threadBox.value = "";
  });
  $("close-thread").addEventListener("click", () => send({ op: "close_thread" }));

  function start(user, name) {
    me = { user: user, name: name };
    $("me").textContent = name;
    $("me").dataset.user = user;
    $("name-form").hidden = true;
    $("chat").hidden = false;
    document.title = `${name} - typingd web chat`;
    connect();
  }

  if (params.get("user") || params.get("name")) {
    const name = params.get("name") || params.get("user");
    start(params.get("user") || slug(name), name);
  } else {
    setState("naming", "pick a name");
    $("name-form").hidden = false;
    $("name-input").focus();
    $("name-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const name = $("name-input").value.trim();
      if (name === "") return;
      const user = slug(name);
      // The URL now says who this tab is: a reload keeps the same person.
      history.replaceState(null, "", `?${withRoom({ user: user, name: name })}`);
      start(user, name);
    });
  }
})();
