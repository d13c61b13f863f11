// Keyboard use of the page: a way out of the template editor, and arrow keys in tab strips.
// Loaded after playground.js, which makes the editor (window.playground.editor).
"use strict";

(function () {
  const MODIFIERS = ["Shift", "Control", "Alt", "Meta"];

  // --- The template editor: Tab indents, so Esc then Tab (or Shift-Tab) leaves it ---
  // CodeMirror 5 keeps Tab for indenting; its manual suggests Esc as the way out. After
  // Esc, the next Tab is left to the browser, which moves the focus as anywhere else.
  const editor = window.playground && window.playground.editor;
  const hint = document.getElementById("template-keys");
  if (editor) {
    editor.setOption("screenReaderLabel", "Chat template");
    if (hint) {
      hint.hidden = false;
      editor.getInputField().setAttribute("aria-describedby", hint.id);
    }
    let leaving = false;
    editor.on("keydown", (cm, event) => {
      if (MODIFIERS.includes(event.key)) return; // Shift before Shift-Tab keeps the state
      if (event.key === "Tab" && leaving) event.codemirrorIgnore = true;
      leaving = event.key === "Escape";
    });
    editor.on("blur", () => { leaving = false; });
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
