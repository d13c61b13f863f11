// Undo for the actions that replace what the user wrote: a library template, a loaded file
// or model, a template tab, an example conversation, a pasted request body, a library
// template to compare with, Reset. Each action is a step of the page's history
// (persist.js `checkpoint`): Back returns to the page before it, Forward to the page after.
// An Undo bar beside the action says what it replaced; Undo puts back only that (edits
// made elsewhere since stay) and is itself a step, which Back returns from. Ctrl+Z does
// the same on the action's controls (text fields keep their own undo); in the template
// editor, undoing the replacement (CodeMirror's own Ctrl+Z) undoes the whole action.
//
// The actions done on a history entry, newest last, are its history.state.undo: each
// names the fields it replaced and the entry that holds them as they were, so Undo works
// after a reload, Back and Forward too.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const playground = window.playground;
  const state = playground && playground.state;
  if (!playground || !state) return;
  const editor = playground.editor;

  const bar = document.createElement("div");
  bar.id = "undo-bar";
  bar.className = "undo-bar";
  bar.hidden = true;
  const said = document.createElement("span");
  said.id = "undo-said";
  said.setAttribute("role", "status");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "button small";
  button.textContent = "Undo";
  button.setAttribute("aria-describedby", said.id);
  bar.append(said, " ", button);

  /** The actions done on this history entry, newest last. */
  function actions() {
    return (history.state && history.state.undo) || [];
  }

  /** Show the Undo of the newest action beside it, or none. */
  function show() {
    const list = actions();
    const action = list[list.length - 1];
    const anchor = action && $(action.anchor);
    if (!anchor) {
      bar.hidden = true;
      return;
    }
    if (anchor.nextElementSibling !== bar) anchor.after(bar);
    said.textContent = action.label;
    bar.hidden = false;
  }

  /**
   * Run `apply`, which replaces the fields `names`, as an action that can be undone.
   * `label` says what replaced what; the Undo bar goes after the element `anchor` (an id),
   * and an Undo gives the focus to `focus` (an id). `before` holds fields as they were
   * when the form holds the new values already (a paste).
   */
  function replacing({ label, names, anchor, focus = null, before = null }, apply) {
    const was = before ? { ...state.fields(), ...before } : null;
    const action = { label, names, anchor, focus, from: state.entry() };
    state.checkpoint({ undo: actions().concat([action]) }, was);
    apply();
    show();
  }

  /**
   * Put back what the newest action replaced, as a new step of the history. `done` names
   * fields put back already (the editor's own undo did the template), and `now` holds the
   * fields the page had before (for that undo, the template it took away).
   */
  function undo({ done = [], now = null } = {}) {
    const list = actions();
    const action = list[list.length - 1];
    if (!action) return;
    const focused = document.activeElement === button;
    const saved = state.savedFields(action.from);
    if (!saved) {
      // Its entry was dropped (the oldest go when storage is full): nothing to put back.
      history.replaceState({ ...history.state, undo: list.slice(0, -1) }, "");
      show();
      return;
    }
    state.checkpoint({ undo: list.slice(0, -1) }, now);
    const values = {};
    action.names.filter((name) => name in saved && !done.includes(name)).forEach((name) => {
      values[name] = saved[name];
    });
    state.restore(values);
    show();
    if (!focused) return;
    if (!bar.hidden) button.focus();
    else if (action.focus && $(action.focus)) $(action.focus).focus();
  }

  button.addEventListener("click", () => undo());

  // Ctrl+Z in the editor took the text back to what an action replaced: that action is
  // undone as a whole (the library entry it named, the file's template name, ...).
  if (editor) {
    editor.onHistory((step, before) => {
      const list = actions();
      const action = list[list.length - 1];
      if (step !== "undo" || !action || !action.names.includes("template")) return;
      const saved = state.savedFields(action.from);
      if (!saved || saved.template !== editor.getValue()) return;
      undo({ done: ["template"], now: { ...state.fields(), template: before } });
    });
  }

  /** A field where Ctrl+Z undoes typing (the browser's own undo, or CodeMirror's). */
  function typesText(element) {
    if (element.isContentEditable || element.tagName === "TEXTAREA") return true;
    const notText = ["checkbox", "radio", "button", "submit", "reset", "file", "range", "color"];
    return element.tagName === "INPUT" && !notText.includes(element.type);
  }

  /** Whether `element` is the control of the newest action, beside it or its Undo. */
  function nearNewest(element) {
    const list = actions();
    const action = list[list.length - 1];
    if (!action) return false;
    const places = [bar, $(action.anchor), action.focus && $(action.focus)];
    return places.some((place) => place && place.contains(element));
  }

  document.addEventListener("keydown", (event) => {
    const z = event.key === "z" || event.key === "Z";
    if (!z || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return;
    const target = event.target;
    if (editor && editor.dom.contains(target) && !editor.content.contains(target)) {
      event.preventDefault(); // the editor's Tab stop: undo as in its text
      editor.undo();
      return;
    }
    if (typesText(target) || !nearNewest(target)) return;
    event.preventDefault();
    undo();
  });

  // Reset: the default state, as a new entry of the history (the server's page).
  $("reset").addEventListener("click", () => {
    const action = {
      label: "Reset put back the default template and conversation.",
      names: Object.keys(state.fields()),
      anchor: "page-actions",
      focus: "reset",
      from: state.entry(),
    };
    state.reload({ undo: actions().concat([action]) });
  });

  window.addEventListener("popstate", show); // after persist.js has put the entry back
  playground.replacing = replacing;
  show();
})();
