// The Model box: a Hugging Face model id or URL, or any GGUF URL, loaded by the server
// (POST /api/sources/hub or /url). For a GGUF repository the server lists its models and
// the box offers them with their sizes, a middle quantisation first.
// Everything user-supplied is written with textContent or .value, never as HTML.
"use strict";

(function () {
  const $ = (selector, root = document) => root.querySelector(selector);
  const playground = window.playground;
  if (!playground || !playground.sources || !$("#model-box")) return;
  const { useSource, uploadStatus, humanSize, loadedMessage, ask } = playground.sources;

  const box = $("#model-box");
  const input = $("#model-ref");
  const picker = $("#model-files");
  const select = $("#model-file");
  box.hidden = false; // without scripts there is nothing to press

  // What the box holds: a repository id (ORG/NAME), a URL on a Hugging Face host (a
  // repository, tree, blob or resolve URL), or any other http(s) URL (a GGUF file).
  const REPO_ID = /^[\w.-]+\/[\w.-]+$/;
  const HUB_HOSTS = ["huggingface.co", "hf.co", "www.huggingface.co"];
  // The Hub this server reads from (PLAYGROUND_HF_ENDPOINT): a mirror's URLs are Hub URLs.
  let hubOrigin = null;
  try { hubOrigin = new URL(box.dataset.hubEndpoint).origin; } catch (error) { hubOrigin = null; }

  function recognise(text) {
    const value = text.trim();
    if (REPO_ID.test(value)) return { endpoint: "/api/sources/hub", body: { repo: value } };
    let url;
    try { url = new URL(value); } catch (error) { return null; }
    if (!["http:", "https:"].includes(url.protocol)) return null;
    if (HUB_HOSTS.includes(url.hostname) || url.origin === hubOrigin) {
      return { endpoint: "/api/sources/hub", body: { repo: value } };
    }
    return { endpoint: "/api/sources/url", body: { url: value } };
  }

  function reading(message) {
    uploadStatus(0, message);
    $("#upload-progress").removeAttribute("value"); // indeterminate: the server is reading
  }

  function provenance(origin) {
    if (!origin) return "";
    if (origin.type === "url") return origin.url;
    const file = origin.file ? "/" + origin.file : "";
    return `${origin.repo}${file} at ${String(origin.sha || "").slice(0, 12)}`;
  }

  /** Fill the GGUF file list of a repository, its default chosen. */
  function offerFiles(answer) {
    select.replaceChildren();
    for (const choice of answer.gguf_files) {
      const option = document.createElement("option");
      option.value = choice.file;
      const shards = choice.shards > 1 ? `, ${choice.shards} parts` : "";
      option.textContent = `${choice.file} (${humanSize(choice.size)}${shards})`;
      option.selected = choice.file === answer.default_file;
      select.append(option);
    }
    picker.hidden = false;
    picker.dataset.repo = answer.origin.repo;
    picker.dataset.sha = answer.origin.sha;
  }

  // What the server is reading for this page: it reads one remote load per client at a
  // time (PLAYGROUND_CLIENT_FETCHES), so a second press waits for the first.
  let inFlight = null;

  async function load(endpoint, body, what) {
    if (inFlight !== null) {
      reading(`Still reading ${inFlight}… (one model at a time)`);
      return;
    }
    inFlight = what;
    reading(`Reading ${what}…`);
    try {
      const answer = await ask(endpoint, body);
      if (answer.status !== 200) {
        const error = (answer.json && answer.json.error) || {};
        uploadStatus(0, `Could not load ${what}: ${error.message || "the server answered HTTP " + answer.status}`);
        return;
      }
      if (!answer.json.id && answer.json.gguf_files) {
        offerFiles(answer.json);
        const count = answer.json.gguf_files.length;
        uploadStatus(100, `${answer.json.origin.repo} holds ${count} GGUF models: pick one and read its header.`);
        return;
      }
      const origin = answer.json.origin;
      const name = (origin && (origin.file || origin.repo)) || what;
      const size = origin && origin.file && answer.json.gguf_files
        ? (answer.json.gguf_files.find((c) => c.file === origin.file) || {}).size : 0;
      const message = size ? loadedMessage(answer.json, name, size) : `Loaded ${name}`;
      uploadStatus(100, `${message} — from ${provenance(origin)}`);
      useSource(answer.json, name);
      // Tokenizer files and GGUF files in one repository: the GGUF files stay on offer.
      if (!origin.file && (answer.json.gguf_files || []).length) offerFiles(answer.json);
    } catch (error) {
      uploadStatus(0, String(error.message || error));
    } finally {
      inFlight = null;
    }
  }

  function loadBox() {
    const found = recognise(input.value);
    picker.hidden = true;
    if (!found) {
      uploadStatus(0, "Type a model id (ORG/NAME), a Hugging Face URL or the URL of a GGUF file.");
      return;
    }
    load(found.endpoint, found.body, input.value.trim());
  }

  $("#model-load").addEventListener("click", loadBox);
  input.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault(); // not the form's submit
    loadBox();
  });
  ["input", "change"].forEach((type) => {
    input.addEventListener(type, (event) => event.stopPropagation()); // not a state edit
    select.addEventListener(type, (event) => event.stopPropagation());
  });
  $("#model-file-load").addEventListener("click", () => {
    const body = { repo: picker.dataset.repo, revision: picker.dataset.sha, file: select.value };
    // The option's text carries the size: the header is a few MB of it, read by ranges.
    const chosen = select.selectedOptions[0] ? select.selectedOptions[0].textContent : select.value;
    load("/api/sources/hub", body, `the header of ${chosen} from ${picker.dataset.repo}`);
  });
})();
