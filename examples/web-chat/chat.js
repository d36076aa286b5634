// typingd web chat: one tab is one person. Plain JavaScript, no build step.
//
// Who you are comes from the URL (?user=alice&name=Alice&room=team) or, without a
// name, from the form; without ?room=, the gateway puts you in its default room
// (gateway.py's DEFAULT_ROOM) and names it in its hello. Every change of the message
// box sends {"op":"type"} to the gateway ({"op":"type","empty":true} when the box
// becomes empty); Enter sends the message ({"op":"send"}). The indicator line shows
// exactly the text of the latest indicator typingd sent this viewer.
"use strict";

(function () {
  const params = new URLSearchParams(location.search);
  const room = params.get("room") || "";   // "": the gateway's default room
  const $ = (id) => document.getElementById(id);
  const messages = $("messages"), indicator = $("indicator"), box = $("box"), statusLine = $("status");
  let me = null;          // {user, name}
  let socket = null;
  let retryMs = 500;
  let here = new Map();   // user -> name, the people in the room
  let roomName = room;   // the hello's room once connected

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

  function addLine(className, who, text) {
    const li = document.createElement("li");
    if (className) li.className = className;
    if (who !== null) {
      const b = document.createElement("span");
      b.className = "who";
      b.textContent = who;
      li.appendChild(b);
    }
    li.appendChild(document.createTextNode(text));
    const atBottom = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 40;
    messages.appendChild(li);
    if (atBottom) messages.scrollTop = messages.scrollHeight;
  }

  function showMessage(m) {
    addLine(m.user === me.user ? "message mine" : "message", m.name || m.user, m.text);
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
          m.history.forEach(showMessage);
          indicator.textContent = "";
          box.disabled = false;
          box.focus();
          here = new Map(m.members.map((p) => [p.user, p.name]));
          roomName = m.room;
          setState("open", presence());
          break;
        case "indicator":
          // Exactly what typingd says this viewer sees ("" when nobody types).
          indicator.textContent = m.text;
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
