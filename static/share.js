// Share: store the whole state and give its link (POST /fragments/share), copied at once,
// with a visible "copied". The link holds the page as it was when it was made: after the
// next edit it is marked out of date (and current again if the edits are undone). Which
// view is open is not an edit: the link opens on the view it was made on.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const form = $("state");
  const button = $("share-button");
  const box = $("share-url");
  const status = $("share-status");
  const state = window.playground && window.playground.state;
  if (!form || !button || !box || !status || !state) return;
  // Checking waits for a pause in typing: it reads the whole form.
  const CHECK_DELAY_MS = 200;

  let shared = null; // the fields the link holds, as JSON, or null before a link is made
  let timer = null;

  /** What a link holds of the page now: every field but the open view. */
  function holding() {
    const { view, ...rest } = state.fields();
    return JSON.stringify(rest);
  }

  function say(text, stale = false) {
    status.textContent = text;
    status.hidden = !text;
    box.classList.toggle("stale", stale);
  }

  /** Copy the link: the clipboard API, else a selection (an http page on another host). */
  async function copy(url) {
    try {
      await navigator.clipboard.writeText(url);
      return true;
    } catch (error) {
      box.select();
      return document.execCommand("copy");
    }
  }

  async function share() {
    const made = holding();
    say("Making the link…");
    // URL-encoded, as htmx posts the form: a multipart body would turn every newline of
    // the template into CRLF, and the share would store a different template.
    const body = new URLSearchParams(new FormData(form));
    let answer;
    try {
      answer = await (await fetch("/fragments/share", { method: "POST", body })).json();
    } catch (error) {
      answer = { error: { message: "The link could not be made: " + error.message } };
    }
    if (!answer.url) {
      shared = null;
      box.value = "";
      say((answer.error || {}).message || "The link could not be made.");
      return;
    }
    box.value = new URL(answer.url, location.href).href;
    shared = made;
    box.select();
    const copied = await copy(box.value);
    check();
    if (!box.classList.contains("stale")) say(copied ? "Link copied" : "Select the link to copy it");
  }

  /** Mark the link out of date when the page no longer holds what it holds. */
  function check() {
    clearTimeout(timer);
    if (shared === null) return;
    const stale = holding() !== shared;
    if (stale) say("Out of date: Share again", true);
    else if (box.classList.contains("stale")) say("Up to date again");
  }

  function checkSoon() {
    clearTimeout(timer);
    timer = setTimeout(check, CHECK_DELAY_MS);
  }

  box.setAttribute("aria-describedby", status.id);
  button.addEventListener("click", share);
  ["input", "change"].forEach((type) => document.addEventListener(type, checkSoon, true));
  document.addEventListener("playground:restored", checkSoon);
})();
