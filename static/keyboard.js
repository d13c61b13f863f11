// Keyboard use of the page: the template editor entered deliberately, and arrow keys in tab
// strips.
// Loaded after playground.js, which makes the editor (window.playground.editor).
"use strict";

(function () {
  // --- The template editor: entered deliberately, left with Esc ---
  // Tabbing through the page stops on the editor as a whole (its scroller, one Tab stop),
  // where typing does nothing: a user passing by never types into the template by
  // accident. Enter starts editing (the editable text, which Tab skips); there Tab
  // indents, as template authors need, and Esc stops editing, back on the Tab stop (a first
  // Esc closes an open completion list). A click in the editor edits at once, as always.
  const editor = window.playground && window.playground.editor;
  const hint = document.getElementById("template-keys");
  if (editor) {
    const stop = editor.scroller;
    stop.tabIndex = 0;
    stop.setAttribute("role", "group");
    stop.setAttribute("aria-label", "Chat template");
    editor.content.tabIndex = -1;
    if (hint) {
      hint.hidden = false;
      stop.setAttribute("aria-describedby", hint.id);
    }
    stop.addEventListener("keydown", (event) => {
      if (event.target !== stop || event.key !== "Enter") return;
      event.preventDefault();
      editor.focus();
    });
    editor.onEscape(() => stop.focus({ preventScroll: true }));
  }

  // --- Tab strips (WAI-ARIA APG tabs, manual activation) ---
  // One tab stop per strip; arrows, Home and End move the focus between tabs, and Enter or
  // Space (the button's own click) opens one. Manual, as the APG advises when opening a
  // tab takes time: Analysis and Command render on opening, and arrowing past them must not.
  const STEPS = { ArrowRight: 1, ArrowLeft: -1 };
  document.addEventListener("keydown", (event) => {
    const tab = event.target.closest && event.target.closest('[role="tab"]');
    const list = tab && tab.closest('[role="tablist"]');
    if (!list || event.altKey || event.ctrlKey || event.metaKey) return;
    const tabs = Array.from(list.querySelectorAll('[role="tab"]'));
    const here = tabs.indexOf(tab);
    let next = null;
    if (event.key in STEPS) next = (here + STEPS[event.key] + tabs.length) % tabs.length;
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = tabs.length - 1;
    if (next === null) return;
    event.preventDefault();
    tabs[next].focus();
  });
})();
