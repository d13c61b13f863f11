// The Prompt and Tokens views, drawn by the browser from plain text and compact data.
// The server sends the prompt as plain text (the page without JavaScript shows that),
// its special tokens and markers as offsets, and the tokens as one length per token with
// the ids as a JSON array. Drawing a span per character or per token made a 190k-character
// prompt cost minutes of layout; here the text is cut into blocks of about BLOCK
// characters, and only blocks near the screen get their markers and token spans (blocks
// that scroll away go back to plain text), so the work per update follows the screen,
// not the prompt. Markers sit over the real characters or in pseudo-elements: drawn or
// not, a block lays out alike, and copied text is the prompt itself.
// Everything user-supplied is written with textContent, never as HTML.
"use strict";

(function () {
  const outputs = document.getElementById("outputs");
  if (!outputs) return;

  //: Characters per block (a block ends at a newline when one comes soon after).
  const BLOCK = 1500;
  //: How far beyond the screen blocks are drawn, so that scrolling finds them ready.
  const NEAR = "600px 0px";

  let observer = null;
  /** What each block draws when it comes near the screen, and its plain text. */
  const blocks = new WeakMap();

  function watch(element, text, draw) {
    element.textContent = text;
    blocks.set(element, { text, draw });
    observer.observe(element);
  }

  //: Characters of a line that fit the width of the output column, about (for the
  //: height a block is given before it is first laid out).
  const LINE_CHARS = 90;

  /** A block holding whole lines (it starts a line and ends one) is a box of its own,
   * which the browser lays out and paints only near the screen (`content-visibility`):
   * laying out all of a 150k-character prompt on each update cost more than the rest
   * of the update. Until it is first laid out it counts as about its height in lines.
   * Other blocks stay inline, as a cut inside a line must. */
  function wholeLines(element, text, startsLine) {
    if (!startsLine || !text.endsWith("\n")) return;
    let lines = 0;
    for (const line of text.split("\n")) lines += Math.max(1, Math.ceil(line.length / LINE_CHARS));
    element.classList.add("lines");
    element.style.containIntrinsicSize = `auto ${lines - 1}lh`;
  }

  function onSight(entries) {
    for (const entry of entries) {
      const block = blocks.get(entry.target);
      if (!block) continue;
      if (entry.isIntersecting && !entry.target.dataset.drawn) {
        entry.target.replaceChildren(block.draw());
        entry.target.dataset.drawn = "1";
      } else if (!entry.isIntersecting && entry.target.dataset.drawn) {
        entry.target.textContent = block.text;
        delete entry.target.dataset.drawn;
      }
    }
  }

  function span(className, text) {
    const element = document.createElement("span");
    element.className = className;
    if (text !== undefined) element.textContent = text;
    return element;
  }

  // --- Prompt: whitespace markers, special tokens and template markers ---
  const WHITESPACE = / +|\t|\n|\r+/g;
  const WHITESPACE_CLASS = { " ": "seg-space", "\t": "seg-tab", "\n": "seg-newline", "\r": "seg-return" };

  /** Text with each run of spaces, each tab and each newline in its own span. */
  function appendText(parent, text) {
    let at = 0;
    for (const match of text.matchAll(WHITESPACE)) {
      if (match.index > at) parent.append(text.slice(at, match.index));
      parent.append(span(WHITESPACE_CLASS[match[0][0]], match[0]));
      at = match.index + match[0].length;
    }
    if (at < text.length) parent.append(text.slice(at));
  }

  /** Block ends: about BLOCK characters, at a newline when one follows soon, never
   * inside a mark (`marks` are [start, end, kind], in order). */
  function blockEnds(length, text, marks) {
    const ends = [];
    let start = 0;
    let m = 0;
    while (start < length) {
      let end = Math.min(length, start + BLOCK);
      const newline = end < length ? text.indexOf("\n", end) : -1;
      if (newline !== -1 && newline < start + 2 * BLOCK) end = newline + 1;
      while (m < marks.length && marks[m][1] <= end) m += 1;
      if (m < marks.length && marks[m][0] < end) end = marks[m][1];
      ends.push(end);
      start = end;
    }
    return ends;
  }

  function drawPrompt(pre) {
    const text = pre.textContent;
    const marks = JSON.parse(pre.dataset.marks || "[]");
    pre.textContent = "";
    let start = 0;
    let m = 0;
    for (const end of blockEnds(text.length, text, marks)) {
      const first = m;
      while (m < marks.length && marks[m][0] < end) m += 1;
      const own = marks.slice(first, m);
      const from = start;
      const block = span("block");
      pre.append(block);
      wholeLines(block, text.slice(from, end), from === 0 || text[from - 1] === "\n");
      watch(block, text.slice(from, end), () => {
        const fragment = document.createDocumentFragment();
        let at = from;
        for (const [markStart, markEnd, kind] of own) {
          appendText(fragment, text.slice(at, markStart));
          fragment.append(span("seg-" + kind, text.slice(markStart, markEnd)));
          at = markEnd;
        }
        appendText(fragment, text.slice(at, end));
        return fragment;
      });
      start = end;
    }
  }

  // --- Tokens: coloured pieces, ids beside them, the id list, hover in both ---
  let tokens = null;

  function drawTokens(pre, list) {
    const data = JSON.parse(pre.dataset.tokens);
    const raw = document.getElementById("prompt-raw");
    const text = raw ? raw.value : "";
    const ids = JSON.parse(list.textContent);
    const count = data.lens.length;
    const special = new Set(data.special);
    const gaps = new Map(data.gaps);
    // Where each token's text starts (gaps are text no token covers, before token i).
    const starts = new Int32Array(count + 1);
    let at = 0;
    for (let i = 0; i < count; i += 1) {
      at += gaps.get(i) || 0;
      starts[i] = at;
      at += data.lens[i];
    }
    starts[count] = at;
    const end = at + (gaps.get(count) || 0);
    // The id list's blocks and the first token of each, to find a token's id from its index.
    const idBlocks = [];
    const firsts = [];
    tokens = { ids, starts, lens: data.lens, pieces: data.pieces, special, idBlocks, firsts };

    function tokenSpan(i) {
      const piece = text.slice(starts[i], starts[i] + data.lens[i]);
      let name = "tok c" + (i % 8);
      if (special.has(i)) name += " special";
      if (piece && !piece.trim()) name += " ws";
      const element = span(name);
      element.dataset.i = i;
      element.dataset.id = ids[i];
      const shown = i in data.pieces ? data.pieces[i] : piece;
      element.title = `#${i} · id ${ids[i]} · ${shown}`;
      // Newlines get a visible mark inside the token, so newline tokens can be seen; the
      // id goes on the last mark, before the line ends, not at the start of the next line.
      const lines = piece.split("\n");
      lines.forEach((line, k) => {
        if (k) {
          const mark = span("nl");
          if (k === lines.length - 1) mark.dataset.id = ids[i];
          element.append(mark, "\n");
        }
        if (line) element.append(line);
      });
      if (lines.length > 1) element.classList.add("has-nl");
      return element;
    }

    function gapSpan(from, to) {
      const element = span("untokenized", text.slice(from, to));
      element.title = "no token covers this text";
      return element;
    }

    pre.textContent = "";
    list.textContent = "";
    list.append("[");
    let first = 0;
    do {
      let last = first;
      while (last < count && starts[last] + data.lens[last] - starts[first] < BLOCK) last += 1;
      // Then on to a token that ends a line, when one comes soon (see wholeLines).
      let line = last;
      while (line < count && starts[line] - starts[first] < 2 * BLOCK
        && text[starts[line] + data.lens[line] - 1] !== "\n") line += 1;
      if (line < count && starts[line] - starts[first] < 2 * BLOCK) last = line;
      last = Math.min(count, last + 1);
      const from = starts[first] - (gaps.get(first) || 0);
      const to = last === count ? end : starts[last] - (gaps.get(last) || 0);
      const [a, b] = [first, last];
      const block = span("block");
      pre.append(block);
      wholeLines(block, text.slice(from, to), from === 0 || text[from - 1] === "\n");
      watch(block, text.slice(from, to), () => {
        const fragment = document.createDocumentFragment();
        for (let i = a; i < b; i += 1) {
          if (gaps.has(i)) fragment.append(gapSpan(starts[i] - gaps.get(i), starts[i]));
          fragment.append(tokenSpan(i));
        }
        if (b === count && gaps.has(count)) fragment.append(gapSpan(starts[count], end));
        return fragment;
      });
      // A box of its own, as whole lines are: a line break between two blocks of a
      // list of numbers changes nothing it says.
      const idBlock = span("block lines");
      list.append(idBlock);
      idBlocks.push(idBlock);
      firsts.push(a);
      const idText = ids.slice(a, b).join(", ") + (b < count ? ", " : "");
      idBlock.style.containIntrinsicSize = `auto ${Math.ceil(idText.length / LINE_CHARS)}lh`;
      watch(idBlock, idText, () => {
        const fragment = document.createDocumentFragment();
        for (let i = a; i < b; i += 1) {
          const id = span("tid", String(ids[i]));
          id.dataset.i = i;
          fragment.append(id, i + 1 < count ? ", " : "");
        }
        return fragment;
      });
      first = last;
    } while (first < count);
    list.append("]");
  }

  /** Token `index`'s id in the list, drawn, and scrolled into the list's own box (not
   * the page): a long prompt's list is far from the text the reader points at. */
  function showId(index) {
    const list = document.getElementById("token-ids");
    if (!tokens || !list) return;
    let k = tokens.firsts.length - 1;
    while (k > 0 && tokens.firsts[k] > index) k -= 1;
    const block = tokens.idBlocks[k];
    if (!block.dataset.drawn) {
      block.replaceChildren(blocks.get(block).draw());
      block.dataset.drawn = "1";
    }
    const id = block.querySelector(`[data-i="${index}"]`);
    if (!id) return;
    const top = id.offsetTop; // the list is the id's offset parent (position: relative)
    if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - id.offsetHeight) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  }

  let hovered = [];
  function highlight(index, fromText) {
    hovered.forEach((element) => element.classList.remove("hover"));
    if (index !== null && fromText) showId(index);
    hovered = index === null ? [] : Array.from(document.querySelectorAll(
      `#tokens [data-i="${index}"], #token-ids [data-i="${index}"]`));
    hovered.forEach((element) => element.classList.add("hover"));
  }
  document.addEventListener("mouseover", (event) => {
    const target = event.target.closest && event.target.closest("#tokens .tok, #token-ids .tid");
    const index = target ? Number(target.dataset.i) : null;
    if (hovered.length && hovered[0].dataset.i === String(index)) return;
    highlight(index, Boolean(target && target.classList.contains("tok")));
  });

  // --- Local controls: ids beside pieces, copy the ids ---
  const showIds = document.getElementById("show-ids");
  function applyIds() {
    outputs.classList.toggle("show-ids", Boolean(showIds && showIds.checked));
  }
  if (showIds) showIds.addEventListener("change", applyIds);
  const copyIds = document.getElementById("copy-ids");
  if (copyIds) {
    copyIds.addEventListener("click", async () => {
      if (!tokens) return;
      await navigator.clipboard.writeText("[" + tokens.ids.join(", ") + "]");
      copyIds.textContent = "Copied";
      setTimeout(() => { copyIds.textContent = "Copy ids (JSON)"; }, 1200);
    });
  }

  /** Draw the output swapped in (or loaded); the previous one's blocks are gone with it. */
  function draw() {
    const output = document.getElementById("output");
    if (!output || output.dataset.drawn) return;
    output.dataset.drawn = "1";
    if (observer) observer.disconnect();
    observer = new IntersectionObserver(onSight, { rootMargin: NEAR });
    // A stale copy of the last good output (views.js moves its blocks under an error)
    // is drawn as it comes on screen too: blocks that were off screen (a hidden pane on
    // a phone) were plain text when they moved, and would stay so.
    document.querySelectorAll(".stale-content .block").forEach((block) => {
      if (blocks.has(block)) observer.observe(block);
    });
    tokens = null;
    const prompt = document.getElementById("prompt");
    if (prompt) drawPrompt(prompt);
    const pre = document.getElementById("tokens");
    const list = document.getElementById("token-ids");
    if (pre && list && pre.dataset.tokens) drawTokens(pre, list);
    if (copyIds) copyIds.disabled = !tokens;
  }

  // The tokens' data and the tokens per message (a render per message) come only for
  // this view: opening it asks for them when the output was rendered for another view.
  const tokensTab = document.querySelector('.tab[data-view="tokens"]');
  if (tokensTab) {
    tokensTab.addEventListener("click", () => {
      const later = document.querySelector('#tokens[data-counts="later"]');
      if (later && window.htmx) window.htmx.trigger("#state", "playground:refresh");
    });
  }

  document.body.addEventListener("htmx:afterSwap", draw);
  applyIds();
  draw();
  window.playgroundOutputs = { draw, highlight, tokens: () => tokens };
})();
