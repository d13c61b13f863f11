// Ollama's sources: a Modelfile (pasted, or a file read here and sent as text) and an
// Ollama model name read by the server from its registry (POST /api/sources/modelfile,
// /api/sources/ollama). The source's TEMPLATE goes into the editor as a Go template
// (sources.js's useSource); its renderer, parser, stops and system show with the source.
// Everything user-supplied is written with textContent or .value, never as HTML.
"use strict";

(function () {
  const $ = (selector, root = document) => root.querySelector(selector);
  const playground = window.playground;
  if (!playground || !playground.sources || !$("#ollama-sources")) return;
  const { useSource, uploadStatus, ask } = playground.sources;
  const box = $("#ollama-sources");
  box.hidden = false; // without scripts there is nothing to press

  let inFlight = false;

  /** POST `body` to `endpoint` and use the source it answers, saying what was loaded. */
  async function load(endpoint, body, what) {
    if (inFlight) return;
    inFlight = true;
    uploadStatus(0, `Reading ${what}…`);
    try {
      const { status, json } = await ask(endpoint, body);
      if (status !== 200 || !json) {
        const error = (json && json.error) || {};
        uploadStatus(0, `Could not load ${what}: ${error.message || "the server answered HTTP " + status}`);
        return;
      }
      const names = Object.keys(json.templates || {});
      const template = names.length ? "its TEMPLATE, as a Go template" : "no TEMPLATE: keeping the current one";
      uploadStatus(100, `Loaded ${what}: ${template}`);
      useSource(json, what);
    } catch (error) {
      uploadStatus(0, String(error.message || error));
    } finally {
      inFlight = false;
    }
  }

  function loadName() {
    const name = $("#ollama-ref").value.trim();
    if (!name) {
      uploadStatus(0, "Type an Ollama model name, such as qwen3:8b.");
      return;
    }
    load("/api/sources/ollama", { name }, name);
  }

  $("#ollama-load").addEventListener("click", loadName);
  $("#ollama-ref").addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault(); // not the form's submit
    loadName();
  });
  $("#modelfile-load").addEventListener("click", () => {
    load("/api/sources/modelfile", { modelfile: $("#modelfile-text").value }, "Modelfile");
  });
  $("#modelfile-file").addEventListener("change", async (event) => {
    const file = event.target.files[0];
    if (file) load("/api/sources/modelfile", { modelfile: await file.text() }, file.name);
  });
  // None of these is a field of the state: edits here change nothing until loaded.
  for (const id of ["#ollama-ref", "#modelfile-text", "#modelfile-file"]) {
    ["input", "change"].forEach((type) => $(id).addEventListener(type, (event) => event.stopPropagation()));
  }
})();
