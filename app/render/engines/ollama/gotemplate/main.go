// Command ollama-gotemplate renders chat templates as Ollama's /api/chat does: Go's
// text/template with Ollama's data and functions (read from ollama/ollama at commit
// fb30760996871fa9460115c753afd2c60d4ab0f7; written here from what it does, standard
// library only).
//
// One JSON request per line on stdin, one JSON answer per line on stdout:
//
//	{"op": "render", "template", "messages", "tools", "think", "max_chars", "today"}
//	    -> {"prompt"} or {"error": {"type", "message", "line", "limit"}}
//	{"op": "inspect", "template"} -> {"vars", "tag", "thinking"} or {"error"}
//
// The Python side (runner.py) bounds the process's CPU time and memory and replaces it
// when it runs out; this side bounds the output and the template's nesting.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

type request struct {
	Op       string    `json:"op"`
	Template string    `json:"template"`
	Messages []message `json:"messages"`
	Tools    []tool    `json:"tools"`
	Think    any       `json:"think"`
	MaxChars int       `json:"max_chars"`
	Today    string    `json:"today"`
}

type problem struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Limit   string `json:"limit,omitempty"`
}

// maxStack bounds a goroutine's stack: below Go's own 1 GB default, so that a template
// that recurses stops at text/template's depth limit, or dies, within the memory allowance.
const maxStack = 256 << 20

// templateLine finds the line text/template names in its messages ("template: :3: ...").
var templateLine = regexp.MustCompile(`^template: [^:]*:(\d+):`)

// problemOf names what went wrong: the line, and the limit if one was hit.
func problemOf(err error, kind string) *problem {
	message := err.Error()
	p := &problem{Type: kind, Message: message}
	if match := templateLine.FindStringSubmatch(message); match != nil {
		p.Line, _ = strconv.Atoi(match[1])
	}
	switch {
	case errors.Is(err, errOutputLimit):
		p.Type, p.Limit = "LimitExceeded", "output_chars"
		p.Message = "The template wrote more characters than a render may (PLAYGROUND_OUTPUT_CHARS)."
	case strings.Contains(message, "exceeded maximum template depth"):
		p.Type, p.Limit = "LimitExceeded", "recursion"
		p.Message = "The template nests or recurses too deeply to render: " + message
	}
	return p
}

// today is the pinned day, or the clock's.
func today(given string) time.Time {
	if day, err := time.Parse("2006-01-02", given); err == nil {
		return day
	}
	return time.Now()
}

// render answers one render request.
func render(req *request) map[string]any {
	tmpl, err := parseTemplate(req.Template, today(req.Today))
	if err != nil {
		return map[string]any{"error": problemOf(err, "TemplateSyntaxError")}
	}
	out := &limitedWriter{left: req.MaxChars}
	input := renderInput{Messages: req.Messages, Tools: req.Tools, Think: req.Think}
	if err := execute(out, tmpl, input); err != nil {
		return map[string]any{"error": problemOf(err, "TemplateError")}
	}
	return map[string]any{"prompt": out.out.String()}
}

// inspect answers a template's variables, tool-call tag and thinking tags.
func inspect(req *request) map[string]any {
	tmpl, err := parseTemplate(req.Template, time.Now())
	if err != nil {
		return map[string]any{"error": problemOf(err, "TemplateSyntaxError")}
	}
	vars, err := templateVars(tmpl)
	if err != nil {
		return map[string]any{"error": problemOf(err, "TemplateSyntaxError")}
	}
	opening, closing := thinkingTags(tmpl)
	return map[string]any{"vars": vars, "tag": toolCallTag(tmpl), "thinking": []string{opening, closing}}
}

// answer serves one request; a panic (Ollama's own code panics on some templates too)
// is an error answer, not the end of the process.
func answer(line []byte) (result map[string]any) {
	defer func() {
		if caught := recover(); caught != nil {
			message := fmt.Sprintf("Ollama's template code fails on this template (a Go panic: %v).", caught)
			result = map[string]any{"error": &problem{Type: "TemplateError", Message: message}}
		}
	}()
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return map[string]any{"error": &problem{Type: "RequestError", Message: err.Error()}}
	}
	for i := range req.Messages {
		req.Messages[i].Role = strings.ToLower(req.Messages[i].Role)
	}
	if req.Op == "inspect" {
		return inspect(&req)
	}
	return render(&req)
}

// main serves requests, one JSON line each, until stdin closes.
func main() {
	debug.SetMaxStack(maxStack)
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	encoder := json.NewEncoder(out)
	encoder.SetEscapeHTML(false)
	// Loaded and listening: the Python side starts timing renders from here.
	_ = encoder.Encode(map[string]bool{"ready": true})
	_ = out.Flush()
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			_ = encoder.Encode(answer(line))
			_ = out.Flush()
		}
		if err != nil {
			return
		}
	}
}
