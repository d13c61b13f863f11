// The template editor: CodeMirror 6 with Jinja, lint marks and completion of the names a
// chat template sees. `npm run build` (run by ./playground and the Dockerfile) bundles this
// file with CodeMirror into static/vendor/template-editor.js, which defines
// window.TemplateEditor; playground.js makes the page's one editor with it.
//
// The page talks to the editor only through the small object `create` returns, so the rest
// of the page (and its tests) never reaches into CodeMirror's own API.

import { autocompletion, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab, isolateHistory, undo } from "@codemirror/commands";
import { jinjaCompletionSource, jinjaLanguage } from "@codemirror/lang-jinja";
import { HighlightStyle, LanguageSupport, bracketMatching, syntaxHighlighting } from "@codemirror/language";
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import { EditorSelection, EditorState, Prec } from "@codemirror/state";
import { EditorView, keymap, lineNumbers } from "@codemirror/view";
import { tags } from "@lezer/highlight";

// What a chat template sees when transformers (and the engines that follow it) renders it.
const GLOBALS = [
  { label: "messages", type: "variable", info: "The conversation: a list of {role, content, ...}" },
  { label: "tools", type: "variable", info: "The tool schemas offered, or undefined" },
  { label: "documents", type: "variable", info: "Documents for retrieval, or undefined" },
  { label: "add_generation_prompt", type: "variable", info: "True: end with the assistant's header" },
  { label: "bos_token", type: "variable", info: "A special token" },
  { label: "eos_token", type: "variable", info: "A special token" },
  { label: "raise_exception", type: "function", info: "raise_exception(message): refuse the input" },
  { label: "strftime_now", type: "function", info: "strftime_now(format): today's date" },
];

// The fields of a message, a tool call, a tool schema and a function, offered after a dot.
const MESSAGE_FIELDS = ["role", "content", "tool_calls", "tool_call_id", "name", "reasoning_content"];
const TOOL_CALL_FIELDS = ["id", "type", "function"];
const TOOL_FIELDS = ["type", "function"];
const FUNCTION_FIELDS = ["name", "arguments", "description", "parameters"];

function fields(names) {
  return names.map((label) => ({ label, type: "property" }));
}

const LOOP_FIELDS = ["index", "index0", "first", "last", "length", "revindex", "previtem", "nextitem"];

/** What kind of value an expression gives: "message", "call", "tool" or "". */
function kindOf(expression) {
  if (/tool_calls/.test(expression)) return "call";
  if (/\bmessages\b|\bconversation\b/.test(expression)) return "message";
  if (/\btools\b/.test(expression)) return "tool";
  return "";
}

/** How the template binds `name`: the kind of what its `for` or `set` takes it from. */
function boundKind(name, text) {
  const escaped = name.replace(/[^\w]/g, "");
  const loop = new RegExp(`\\bfor\\s+(?:\\w+\\s*,\\s*)?${escaped}\\s+in\\s+([^%]*)`);
  const set = new RegExp(`\\bset\\s+${escaped}\\s*=\\s*([^%]*)`);
  for (const pattern of [loop, set]) {
    const found = pattern.exec(text);
    if (found && kindOf(found[1])) return kindOf(found[1]);
  }
  if (/message|^msg$/.test(name)) return "message";
  if (/tool_call|call$/.test(name)) return "call";
  return "";
}

const KIND_FIELDS = { message: MESSAGE_FIELDS, call: TOOL_CALL_FIELDS, tool: TOOL_FIELDS };

// The fields offered after `name.`: a message's after a name the template takes from
// `messages` (`{% for m in messages %}`, `{% set last = messages[-1] %}`), a tool call's
// after one from `tool_calls`, and the like.
function propertiesAfter(path, state) {
  const last = path[path.length - 1] || "";
  if (path.length === 1 && last === "loop") return fields(LOOP_FIELDS);
  if (last === "function") return fields(FUNCTION_FIELDS);
  const kind = path.length === 1 ? boundKind(last, state.doc.toString()) : kindOf(last);
  return kind ? fields(KIND_FIELDS[kind]) : [];
}

// The nonce of this script's tag: CodeMirror writes its styles into a <style> element,
// which the page's Content-Security-Policy allows only with the response's nonce.
const styleNonce = (document.currentScript && document.currentScript.nonce) || "";

// Colours with at least 4.5:1 contrast on the editor's white background.
const highlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.operatorKeyword], color: "#7a2d9c" },
  { tag: [tags.string, tags.special(tags.string)], color: "#1d6b2a" },
  { tag: [tags.number, tags.bool, tags.null], color: "#8a4b00" },
  { tag: [tags.comment, tags.blockComment], color: "#5c6370", fontStyle: "italic" },
  { tag: [tags.brace, tags.bracket, tags.punctuation, tags.separator], color: "#3b4c6b" },
  { tag: [tags.variableName, tags.propertyName], color: "#1f3f8f" },
  { tag: tags.function(tags.variableName), color: "#0b5560" },
]);

// Text typed over a selection is inserted by the editor, not by the browser: Chromium's own
// editing, merging the selected lines, writes a `style` attribute into the editable DOM,
// which the page's CSP refuses (a console error each time; CodeMirror redraws anyway).
const typeOverSelection = EditorView.domEventHandlers({
  beforeinput(event, view) {
    const typed = event.inputType === "insertText" && typeof event.data === "string";
    if (!typed || view.composing || view.state.selection.main.empty) return false;
    event.preventDefault();
    view.dispatch({ ...view.state.replaceSelection(event.data), userEvent: "input.type", scrollIntoView: true });
    return true;
  },
});

/**
 * Make the editor in place of `textarea` (which stays in the form, hidden, and always holds
 * the editor's text). `extraNames()` gives more names to complete (the kwargs and special
 * tokens the page sends); `onChange()` runs after each change of the text.
 */
function create(textarea, { label, describedBy, extraNames = () => [], onChange = () => {} }) {
  // The text between tags is plain text: the build puts plain-text.mjs in place of the
  // HTML base lang-jinja would use. No auto-closing of `{`, `{%` or quotes: templates are
  // typed and pasted whole, and a closing `%}` typed by hand would be doubled.
  const completion = jinjaCompletionSource({ variables: GLOBALS, properties: propertiesAfter });
  const language = new LanguageSupport(jinjaLanguage, [jinjaLanguage.data.of({ autocomplete: completion })]);
  // One source function for the editor's life: the completion plugin tells its sources
  // apart by identity, and drops the answers of one it no longer finds.
  const sentNames = (context) => {
    const word = context.matchBefore(/\w+/);
    if (!word || (word.from === word.to && !context.explicit)) return null;
    const known = new Set(GLOBALS.map((name) => name.label));
    const options = extraNames()
      .filter((name) => !known.has(name))
      .map((name) => ({ label: name, type: "variable", info: "sent with this render" }));
    return options.length ? { from: word.from, options } : null;
  };
  const moreNames = EditorState.languageData.of(() => [{ autocomplete: sentNames }]);
  // Esc leaves the editor (keyboard.js puts the focus back on its Tab stop); at the lowest
  // precedence, so Esc first closes an open completion list.
  let onEscape = () => false;
  let onHistory = () => {};
  const escape = Prec.lowest(keymap.of([{ key: "Escape", run: () => onEscape() }]));
  const contentAttributes = { "aria-label": label };
  if (describedBy) contentAttributes["aria-describedby"] = describedBy;

  const view = new EditorView({
    parent: textarea.parentNode,
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        lineNumbers(),
        lintGutter(),
        history(),
        bracketMatching(),
        language,
        moreNames,
        syntaxHighlighting(highlight),
        autocompletion({ activateOnTyping: true }),
        EditorView.lineWrapping,
        EditorView.cspNonce.of(styleNonce),
        typeOverSelection,
        EditorView.contentAttributes.of(contentAttributes),
        keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
        escape,
        EditorView.updateListener.of((update) => {
          if (!update.docChanged) return;
          textarea.value = update.state.doc.toString();
          onChange();
          const step = ["undo", "redo"].find((kind) => update.transactions.some((tr) => tr.isUserEvent(kind)));
          if (step) onHistory(step, update.startState.doc.toString());
        }),
      ],
    }),
  });
  textarea.parentNode.insertBefore(view.dom, textarea.nextSibling);
  textarea.hidden = true;

  function lineStart(line) {
    const doc = view.state.doc;
    return doc.line(Math.max(1, Math.min(line, doc.lines))).from;
  }

  return {
    /** The element that holds the whole editor, and the one that scrolls. */
    dom: view.dom,
    scroller: view.scrollDOM,
    /** The editable element (it has the focus while the user types). */
    content: view.contentDOM,
    getValue: () => view.state.doc.toString(),
    /** Replace the whole text, as one step Undo takes back (never merged with the typing
     * just before or after it, which CodeMirror's history otherwise joins within 500 ms). */
    setValue(text) {
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: text },
        annotations: isolateHistory.of("full"),
      });
    },
    undo: () => undo(view),
    focus: () => view.focus(),
    hasFocus: () => view.hasFocus,
    /** The cursor's line, from 1. */
    cursorLine: () => view.state.doc.lineAt(view.state.selection.main.head).number,
    lineCount: () => view.state.doc.lines,
    /** Run `handler(step, before)` after Undo or Redo ("undo", "redo") changed the text;
     * `before` is the text it changed. */
    onHistory(handler) {
      onHistory = handler;
    },
    /** Run `handler` when Esc is pressed in the editor (and no completion list is open). */
    onEscape(handler) {
      onEscape = () => { handler(); return true; };
    },
    /**
     * Show `problems` ({line, message, severity: "error" | "warning" | "info"}) as lint
     * marks on their lines, in place of the ones shown before.
     */
    showProblems(problems) {
      const doc = view.state.doc;
      const diagnostics = problems
        .filter((problem) => problem.line >= 1 && problem.line <= doc.lines)
        .map((problem) => {
          const line = doc.line(problem.line);
          return { from: line.from, to: line.to, severity: problem.severity, message: problem.message, markClass: "cm-problem-line" };
        });
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    /**
     * Put the cursor at the start of `line` and scroll the editor to it; `then(top)` gets
     * the line's top in page coordinates once the editor has drawn it.
     */
    goToLine(line, then = () => {}) {
      const at = lineStart(line);
      view.dispatch({
        selection: EditorSelection.cursor(at),
        effects: EditorView.scrollIntoView(at, { y: "center" }),
      });
      view.requestMeasure({
        read: () => view.coordsAtPos(at),
        write: (coords) => then(coords ? coords.top + window.scrollY : null),
      });
    },
  };
}

window.TemplateEditor = { create };
