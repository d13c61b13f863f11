// The structured message editor, kept in sync with the raw JSON text area (`#messages`),
// which stays the form field the server reads. Fields the editor does not know (content
// blocks, names, ...) are kept as they are.
//
// An edit redraws only what it changes (one card, or one tool call), never the whole list:
// with hundreds of messages a full redraw cost a frame per keystroke, dropped the focus
// and moved the page. Actions find their message by identity, not by a captured index.
"use strict";

(function () {
  const raw = document.getElementById("messages");
  const editor = document.getElementById("message-editor");
  if (!raw || !editor) return;
  const ROLES = ["system", "developer", "user", "assistant", "tool"];
  let messages = [];
  let publishing = false;
  let lastRaw = raw.value; // the raw JSON last read: what a pasted request body replaces

  function element(tag, attributes = {}, text = null) {
    const node = document.createElement(tag);
    Object.entries(attributes).forEach(([key, value]) => node.setAttribute(key, value));
    if (text !== null) node.textContent = text;
    return node;
  }

  /** Write the messages to the raw JSON field and let the form re-render. */
  function publish() {
    raw.value = JSON.stringify(messages, null, 2);
    lastRaw = raw.value;
    publishing = true; // our own edit: do not redraw the editor being typed in
    raw.dispatchEvent(new Event("input", { bubbles: true }));
    publishing = false;
  }

  function input(labelText, value, onChange, multiline = false) {
    const label = element("label", { class: "field" }, labelText);
    const field = multiline ? element("textarea", { rows: "2", spellcheck: "false" }) : element("input");
    field.value = value;
    field.addEventListener("input", (event) => {
      event.stopPropagation(); // the JSON field's own event triggers the render
      onChange(field.value);
      publish();
    });
    label.appendChild(field);
    return label;
  }

  /** A button whose action changes the messages, then publishes them. */
  function button(text, action, attributes = {}) {
    const node = element("button", { type: "button", class: "button small", ...attributes }, text);
    node.addEventListener("click", () => { action(node); publish(); });
    return node;
  }

  /** Keep the control used on screen without jumping: scroll only if it left the view. */
  function keepInView(node) {
    node.scrollIntoView({ block: "nearest" });
  }

  /** A field that may be absent: empty text removes the key. */
  function optional(message, key) {
    return (text) => {
      if (text === "") delete message[key];
      else message[key] = text;
    };
  }

  function contentField(message) {
    if (Array.isArray(message.content)) {
      return input("content (blocks, JSON)", JSON.stringify(message.content), (text) => {
        try { message.content = JSON.parse(text); } catch (error) { /* keep the last valid */ }
      }, true);
    }
    return input("content", message.content == null ? "" : String(message.content),
      (text) => { message.content = text; }, true);
  }

  function toolCallRow(message, call) {
    const fn = call.function || (call.function = {});
    const row = element("div", { class: "tool-call" });
    row.appendChild(input("tool call name", fn.name || "", (text) => { fn.name = text; }));
    // Kept as the user writes it: JSON text, as OpenAI clients send it. An object from a
    // pasted body shows as JSON and stays an object until edited. Each engine gets the
    // form its callers send (the server converts, and the prompt says so).
    const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    row.appendChild(input("arguments (JSON text)", args, (text) => { fn.arguments = text; }));
    row.appendChild(input("id", call.id || "", optional(call, "id")));
    row.appendChild(button("Remove call", () => {
      message.tool_calls.splice(message.tool_calls.indexOf(call), 1);
      // The focus goes to the next call's Remove, else to "Add tool call".
      const next = row.nextElementSibling;
      row.remove();
      const target = next.matches(".tool-call") ? next.querySelector(".remove-call") : next;
      target.focus();
    }, { class: "button small remove-call" }));
    return row;
  }

  function toolCallsField(message) {
    const box = element("div", { class: "tool-calls" });
    (message.tool_calls || []).forEach((call) => box.appendChild(toolCallRow(message, call)));
    box.appendChild(button("Add tool call", (add) => {
      const call = { type: "function", function: { name: "", arguments: "{}" } };
      message.tool_calls = message.tool_calls || [];
      message.tool_calls.push(call);
      add.before(toolCallRow(message, call)); // the button stays, and keeps the focus
      keepInView(add);
    }));
    return box;
  }

  /** The fields that depend on the role, drawn again when the role changes. */
  function roleFields(message) {
    const fields = [contentField(message)];
    if (message.role === "assistant") {
      fields.push(input("reasoning_content", message.reasoning_content || "",
        optional(message, "reasoning_content"), true));
      fields.push(toolCallsField(message));
    }
    if (message.role === "tool") {
      fields.push(input("tool_call_id", message.tool_call_id || "", optional(message, "tool_call_id")));
    }
    return fields;
  }

  function roleSelect(message, node, body) {
    const select = element("select", { "aria-label": "role" });
    const roles = ROLES.includes(message.role) ? ROLES : ROLES.concat([message.role]);
    roles.forEach((role) => {
      const option = element("option", { value: role }, role);
      option.selected = role === message.role;
      select.appendChild(option);
    });
    select.addEventListener("change", (event) => {
      event.stopPropagation();
      message.role = select.value;
      node.className = "message role-" + message.role;
      body.replaceChildren(...roleFields(message));
      publish();
    });
    return select;
  }

  /** Swap a message with its neighbour: the neighbour's card moves, so the focus stays put. */
  function move(message, node, step, pressed) {
    const index = messages.indexOf(message);
    const target = index + step;
    if (target < 0 || target >= messages.length) return;
    [messages[index], messages[target]] = [messages[target], messages[index]];
    const neighbour = step < 0 ? node.previousElementSibling : node.nextElementSibling;
    if (step < 0) node.after(neighbour);
    else node.before(neighbour);
    keepInView(pressed);
  }

  /** Remove a message; the focus goes to the same button of the card taking its place. */
  function remove(message, node) {
    messages.splice(messages.indexOf(message), 1);
    const next = node.nextElementSibling || node.previousElementSibling;
    node.remove();
    const target = next ? next.querySelector('[data-action="remove"]') : document.getElementById("add-message");
    target.focus();
  }

  function card(message) {
    const node = element("div", { class: "message role-" + message.role });
    const head = element("div", { class: "message-head" });
    const body = element("div", { class: "message-body" });
    head.appendChild(roleSelect(message, node, body));
    head.appendChild(button("↑", (b) => move(message, node, -1, b), { "aria-label": "Move up", title: "Move up" }));
    head.appendChild(button("↓", (b) => move(message, node, 1, b), { "aria-label": "Move down", title: "Move down" }));
    head.appendChild(button("Remove", () => remove(message, node), { "data-action": "remove" }));
    body.replaceChildren(...roleFields(message));
    node.append(head, body);
    return node;
  }

  /** Draw every card: only for a new conversation (raw JSON edits, examples, a share). */
  function draw() {
    editor.replaceChildren(...messages.map(card));
  }

  /** Load an OpenAI request body's messages, tools and kwargs, as an action Undo and Back
   * take back (undo.js); the raw field holds the body already. Returns the messages. */
  function loadBody(body) {
    const fill = (id, data) => {
      if (data === undefined) return;
      document.getElementById(id).value = JSON.stringify(data, null, 2);
    };
    const action = {
      label: "The pasted request body replaced the messages, tools and template kwargs.",
      names: ["messages", "tools", "kwargs"],
      anchor: "raw-messages",
      focus: "messages",
      before: { messages: lastRaw },
    };
    const replacing = window.playground ? window.playground.replacing : (_, apply) => apply();
    replacing(action, () => {
      fill("tools", body.tools);
      fill("kwargs", body.chat_template_kwargs);
      raw.value = JSON.stringify(body.messages, null, 2);
    });
    return body.messages;
  }

  /** Read the raw field; an OpenAI request body also fills tools and kwargs. */
  function readRaw() {
    if (publishing) return;
    let value;
    try { value = JSON.parse(raw.value || "[]"); } catch (error) { return; }
    if (value && !Array.isArray(value) && Array.isArray(value.messages)) value = loadBody(value);
    if (!Array.isArray(value) || !value.every((m) => m && typeof m === "object")) return;
    lastRaw = raw.value;
    messages = value;
    draw();
  }

  raw.addEventListener("input", readRaw);
  const add = document.getElementById("add-message");
  add.addEventListener("click", () => {
    const last = messages[messages.length - 1];
    const message = { role: last && last.role === "user" ? "assistant" : "user", content: "" };
    messages.push(message);
    const added = card(message);
    editor.appendChild(added);
    keepInView(add);
    publish();
    // The new message is what the user edits next: its first field takes the focus.
    added.querySelector("select, textarea, input").focus();
  });
  document.getElementById("toggle-raw").addEventListener("click", () => {
    const box = document.getElementById("raw-messages");
    box.hidden = !box.hidden;
  });

  editor.hidden = false;
  document.getElementById("message-actions").hidden = false;
  document.getElementById("raw-messages").hidden = true;
  readRaw();
})();
