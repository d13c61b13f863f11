// Never lose work: the whole form (template, conversation, options, source, open tab) is
// kept in sessionStorage under a key held by this history entry (history.state), and
// put back when the entry is shown again: after a reload, Back or Forward, or a tab
// reopened. The URL stays what it was ("/" or a share's "/s/<id>"), so it can still be
// shared; a state of several MB would not fit in a URL anyway. An action that replaces
// what the user wrote (undo.js) opens a new history entry (`checkpoint`), so Back brings
// the work back.
//
// The browser's own restoring of form fields is turned off (autocomplete="off" on the
// form): it filled the hidden JSON but not the message editor or the output, which then
// disagreed.
"use strict";

(function () {
  const $ = (selector, root = document) => root.querySelector(selector);
  const form = $("#state");
  const playground = window.playground;
  if (!form || !playground) return;

  const PREFIX = "playground:entry:";
  const INDEX = "playground:entries";
  // History entries kept; the oldest are dropped first when storage is full.
  const MAX_ENTRIES = 20;
  // Saving waits for a pause in typing.
  const SAVE_DELAY_MS = 300;

  function newKey() {
    const random = window.crypto && crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2);
    return PREFIX + random;
  }

  /** This history entry's key, given to it on its first visit. */
  function entryKey() {
    const state = history.state || {};
    if (state.playgroundEntry) return state.playgroundEntry;
    const key = newKey();
    history.replaceState({ ...state, playgroundEntry: key }, "");
    return key;
  }

  /** Every named field as the server reads it (not the file pickers or the request number). */
  function fields() {
    const values = {};
    Array.from(form.elements).forEach((element) => {
      if (!element.name || element.name === "seq" || element.type === "file") return;
      if (element.tagName === "BUTTON") return;
      values[element.name] = element.type === "checkbox" ? element.checked : element.value;
    });
    return values;
  }

  function readIndex() {
    try { return JSON.parse(sessionStorage.getItem(INDEX)) || []; } catch (error) { return []; }
  }

  /** Forget the oldest entries but `keep`, down to `count`. */
  function prune(keep, count) {
    const index = readIndex().filter((key) => key !== keep);
    while (index.length > count) sessionStorage.removeItem(index.shift());
    sessionStorage.setItem(INDEX, JSON.stringify(index.concat([keep])));
  }

  function note(text) {
    const box = $("#persist-note");
    box.textContent = text;
    box.hidden = !text;
  }

  let key = entryKey();
  let timer = null;
  let resetting = false;
  let lastSaved = null; // what this entry holds already, to skip writing it again
  // The states of this document's entries, also when too large for sessionStorage: Back
  // and Undo find them here first.
  const memory = new Map();

  function remember(entry, state) {
    memory.delete(entry);
    memory.set(entry, state);
    if (memory.size > MAX_ENTRIES) memory.delete(memory.keys().next().value);
  }

  /** Save this entry's state: the form's fields, or `values` given in their place. */
  function save(values) {
    clearTimeout(timer);
    timer = null;
    if (resetting) return; // the reloaded page is the new entry's, and starts afresh
    const state = JSON.stringify(values || fields());
    // Writing a long prompt's state takes tens of ms, after every answer: only a change.
    if (state === lastSaved) return;
    remember(key, state);
    const text = `{"saved":${Date.now()},"fields":${state}}`;
    try {
      try {
        sessionStorage.setItem(key, text);
      } catch (full) {
        prune(key, 0); // room for this entry: the others go first
        sessionStorage.setItem(key, text);
      }
      prune(key, MAX_ENTRIES - 1);
      lastSaved = state;
      note("");
    } catch (error) {
      sessionStorage.removeItem(key);
      note("This state is too large to keep across a reload: Share it to keep it.");
    }
  }

  function saveSoon() {
    clearTimeout(timer);
    timer = setTimeout(save, SAVE_DELAY_MS);
  }

  /** Put saved values back into their fields (those `values` names), then render. */
  function restore(values) {
    Array.from(form.elements).forEach((element) => {
      if (!(element.name in values) || element.name === "template" || element.type === "file") return;
      if (element.tagName === "BUTTON" || element.name === "seq") return;
      if (element.type === "checkbox") element.checked = Boolean(values[element.name]);
      else element.value = values[element.name];
    });
    // Editors opened on what they hold; the message editor redraws from the raw JSON.
    form.querySelectorAll("details").forEach((details) => {
      if (Array.from(details.querySelectorAll("textarea")).some((area) => area.value.trim())) details.open = true;
    });
    if (typeof values.template === "string") playground.setTemplate(values.template);
    $("#messages").dispatchEvent(new Event("input", { bubbles: true }));
    if ("view" in values) playground.showView(values.view || "prompt");
    playground.showCompareMode(); // its select was set without a change event
    document.dispatchEvent(new CustomEvent("playground:restored"));
    if (window.htmx) window.htmx.trigger(form, "playground:refresh");
  }

  /** The fields an entry holds (this document's memory first), or null. */
  function savedFields(entry) {
    try {
      if (memory.has(entry)) return JSON.parse(memory.get(entry));
      const saved = JSON.parse(sessionStorage.getItem(entry));
      return saved ? saved.fields || {} : null;
    } catch (error) {
      return null;
    }
  }

  function load() {
    return savedFields(key);
  }

  // After htmx has set up the form (on DOMContentLoaded, which comes after the deferred
  // scripts), or the render is never asked.
  function start() {
    const saved = load();
    if (saved) restore(saved);
  }
  if (document.readyState === "complete") start();
  else document.addEventListener("DOMContentLoaded", () => setTimeout(start));

  // Any edit, tab or source change ends in a render: save after each, and when leaving.
  ["input", "change", "click"].forEach((type) => document.addEventListener(type, saveSoon, true));
  document.body.addEventListener("htmx:afterSwap", saveSoon);
  window.addEventListener("pagehide", () => save());
  document.addEventListener("visibilitychange", () => { if (document.hidden && timer) save(); });
  // Shown again from the back-forward cache: the page is as it was left, but a render
  // in flight when it was left never arrived.
  window.addEventListener("pageshow", (event) => {
    if (!event.persisted) return;
    key = entryKey();
    lastSaved = null;
    if (window.htmx) window.htmx.trigger(form, "playground:refresh");
  });

  // Back and Forward between entries of this document (`checkpoint` opens them): show the
  // entry's own state; one never saved is the default state, which the server gives.
  window.addEventListener("popstate", (event) => {
    const target = (event.state || {}).playgroundEntry;
    if (!target || target === key) return;
    save();
    key = target;
    lastSaved = null;
    const saved = load();
    if (saved) restore(saved);
    else location.reload();
  });

  /**
   * Keep this entry's state (the form's fields, or `values` given for them) and open a
   * new history entry, whose history.state also holds `extra`: Back returns here.
   */
  function checkpoint(extra = {}, values = null) {
    save(values);
    key = newKey();
    history.pushState({ ...extra, playgroundEntry: key }, "");
    lastSaved = null;
  }

  /** Open the default state as a new entry (Reset): the server's page, reloaded. */
  function reload(extra = {}) {
    checkpoint(extra);
    resetting = true;
    history.replaceState({ ...extra, playgroundEntry: key }, "", "/");
    location.reload();
  }

  playground.state = { fields, restore, savedFields, checkpoint, reload, entry: () => key };
})();
