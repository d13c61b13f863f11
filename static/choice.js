// Menus whose choice replaces what the user wrote (Library, and the Diff's library template)
// load only a confirmed choice. On a closed <select>, Chromium and Firefox on Linux and
// Windows change the value, and fire `change`, at each arrow key or typed letter: loading
// on `change` replaced the template at every entry the user passed. So a change made by
// keys on the closed menu only picks, and says how to load; Enter (or the menu's Load
// button) loads. A choice made otherwise (a click in the open list, Enter in it, a screen
// reader's pick) is deliberate and loads at once.
"use strict";

/**
 * Make `select` call `load()` on a confirmed choice only. The hint, a status line saying
 * how to load a choice picked with keys, goes after the element `hintAfter`; `how` names
 * what loads it ("Enter", "Enter or Load"). Returns `confirm()` (load the choice, as a
 * Load button does) and `say(text)` (in the hint's place).
 */
window.confirmedChoice = function confirmedChoice(select, { load, hintAfter, how = "Enter" }) {
  const hint = document.createElement("span");
  hint.id = select.id + "-hint";
  hint.className = "choice-hint";
  hint.setAttribute("role", "status");
  hintAfter.after(hint);
  let keyed = false; // the change comes from a key pressed on the closed menu

  function confirm() {
    hint.textContent = "";
    if (select.value) load();
  }

  select.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault(); // not the form's submit
      confirm();
      return;
    }
    keyed = true;
    setTimeout(() => { keyed = false; }); // the change a key makes comes before this
  });
  select.addEventListener("change", () => {
    if (!keyed) confirm();
    else if (select.value) hint.textContent = `${how} loads “${select.selectedOptions[0].textContent}”.`;
    else hint.textContent = "";
  });
  /** Say `text` where the hint goes (a load that failed). */
  function say(text) {
    hint.textContent = text;
  }
  return { confirm, say };
};
