package main

// Parsing and executing a chat template as Ollama's template package does
// (template/template.go at fb30760): missingkey=zero, its functions, {{ .Response }}
// appended to a template that names neither .Messages nor .Response, and the legacy
// .System/.Prompt/.Response path, run once per turn and cut after the last .Response.

import (
	"bytes"
	"errors"
	"io"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
)

// renderInput is what one render needs besides the template.
type renderInput struct {
	Messages []message
	Tools    []tool
	Think    any // null, a bool, or a level ("low", "medium", "high", "max")
	Today    time.Time
}

// functions are Ollama's template functions, their clock pinned to `today`.
func functions(today time.Time) template.FuncMap {
	return template.FuncMap{
		"json": asJSON,
		// The format argument is accepted and ignored, as Ollama does.
		"currentDate":   func(...string) string { return today.Format("2006-01-02") },
		"yesterdayDate": func(...string) string { return today.AddDate(0, 0, -1).Format("2006-01-02") },
		"toTypeScriptType": func(v any) string {
			switch p := v.(type) {
			case toolProperty:
				return p.typeScript()
			case *toolProperty:
				if p != nil {
					return p.typeScript()
				}
			}
			return "any"
		},
	}
}

// responseNode is {{ .Response }}, appended to templates that have no place for it.
func responseNode() *parse.ActionNode {
	field := &parse.FieldNode{NodeType: parse.NodeField, Ident: []string{"Response"}}
	command := &parse.CommandNode{NodeType: parse.NodeCommand, Args: []parse.Node{field}}
	pipe := &parse.PipeNode{NodeType: parse.NodePipe, Cmds: []*parse.CommandNode{command}}
	return &parse.ActionNode{NodeType: parse.NodeAction, Pipe: pipe}
}

// parseTemplate is Ollama's template.Parse: its errors are Ollama's.
func parseTemplate(source string, today time.Time) (*template.Template, error) {
	tmpl, err := template.New("").Option("missingkey=zero").Funcs(functions(today)).Parse(source)
	if err != nil {
		return nil, err
	}
	vars, err := templateVars(tmpl)
	if err != nil {
		return nil, err
	}
	if !contains(vars, "messages") && !contains(vars, "response") {
		tmpl.Tree.Root.Nodes = append(tmpl.Tree.Root.Nodes, responseNode())
	}
	return tmpl, nil
}

// contains says whether the list holds s.
func contains(list []string, s string) bool {
	for _, each := range list {
		if each == s {
			return true
		}
	}
	return false
}

// templateVars lists, lower-cased and sorted, every field and variable name the
// template and the templates it defines mention.
func templateVars(tmpl *template.Template) ([]string, error) {
	set := map[string]bool{}
	for _, each := range tmpl.Templates() {
		for _, node := range each.Root.Nodes {
			names, err := identifiers(node)
			if err != nil {
				return nil, err
			}
			for _, name := range names {
				set[strings.ToLower(name)] = true
			}
		}
	}
	vars := make([]string, 0, len(set))
	for name := range set {
		vars = append(vars, name)
	}
	sort.Strings(vars)
	return vars, nil
}

// identifiers is Ollama's template.Identifiers, with its errors.
func identifiers(node parse.Node) ([]string, error) {
	switch n := node.(type) {
	case *parse.ListNode:
		return identifiersOf(n.Nodes)
	case *parse.TemplateNode:
		if n.Pipe == nil {
			return nil, errors.New("undefined template specified")
		}
		return identifiers(n.Pipe)
	case *parse.ActionNode:
		if n.Pipe == nil {
			return nil, errors.New("undefined action in template")
		}
		return identifiers(n.Pipe)
	case *parse.IfNode:
		return branchIdentifiers(&n.BranchNode)
	case *parse.RangeNode:
		return branchIdentifiers(&n.BranchNode)
	case *parse.WithNode:
		return branchIdentifiers(&n.BranchNode)
	case *parse.PipeNode:
		var args []parse.Node
		for _, command := range n.Cmds {
			args = append(args, command.Args...)
		}
		return identifiersOf(args)
	case *parse.FieldNode:
		return n.Ident, nil
	case *parse.VariableNode:
		return n.Ident, nil
	}
	return nil, nil
}

// identifiersOf lists the identifiers of each node in turn.
func identifiersOf(nodes []parse.Node) ([]string, error) {
	var names []string
	for _, node := range nodes {
		found, err := identifiers(node)
		if err != nil {
			return names, err
		}
		names = append(names, found...)
	}
	return names, nil
}

// branchIdentifiers lists those of an if, range or with: its pipe, then its lists.
func branchIdentifiers(n *parse.BranchNode) ([]string, error) {
	if n.Pipe == nil {
		return nil, errors.New("undefined branch")
	}
	names, err := identifiers(n.Pipe)
	if err != nil {
		return names, err
	}
	for _, list := range []*parse.ListNode{n.List, n.ElseList} {
		if list != nil {
			found, err := identifiers(list)
			if err != nil {
				return names, err
			}
			names = append(names, found...)
		}
	}
	return names, nil
}

// thinkValues are .Think, .ThinkLevel and .IsThinkSet for a request's think value.
func thinkValues(think any) (bool, string, bool) {
	switch v := think.(type) {
	case bool:
		if v {
			return true, "medium", true
		}
		return false, "", true
	case string:
		enabled := v == "high" || v == "medium" || v == "low" || v == "max"
		return enabled, v, true
	}
	return false, "", false
}

// execute writes the prompt Ollama's Template.Execute writes for a chat request.
func execute(w io.Writer, tmpl *template.Template, in renderInput) error {
	system, messages := collate(in.Messages)
	vars, err := templateVars(tmpl)
	if err != nil {
		return err
	}
	think, level, set := thinkValues(in.Think)
	if contains(vars, "messages") {
		return tmpl.Execute(w, map[string]any{
			"System": system, "Messages": templateMessagesOf(messages),
			"Tools": templateToolsOf(in.Tools), "Response": "",
			"Think": think, "ThinkLevel": level, "IsThinkSet": set,
		})
	}
	return executeLegacy(w, tmpl, messages, think, level, set)
}

// limitedWriter stops a template once it has written more than `left` characters.
type limitedWriter struct {
	out  bytes.Buffer
	left int
}

var errOutputLimit = errors.New("output limit")

// Write refuses what would pass the output limit.
func (l *limitedWriter) Write(p []byte) (int, error) {
	l.left -= len([]rune(string(p)))
	if l.left < 0 {
		return 0, errOutputLimit
	}
	return l.out.Write(p)
}
