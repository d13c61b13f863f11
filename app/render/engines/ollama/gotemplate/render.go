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

// executeLegacy runs the template once per turn (system, prompt, response), then a last
// time with everything after the first {{ .Response }} cut, as a fresh template: without
// the functions or missingkey=zero, as in Ollama.
func executeLegacy(w io.Writer, tmpl *template.Template, messages []*message, think bool, level string, set bool) error {
	var system, prompt, response string
	values := func() map[string]any {
		return map[string]any{
			"System": system, "Prompt": prompt, "Response": response,
			"Think": think, "ThinkLevel": level, "IsThinkSet": set,
		}
	}
	turn := func() error {
		err := tmpl.Execute(w, values())
		system, prompt, response = "", "", ""
		return err
	}
	for _, m := range messages {
		var err error
		switch m.Role {
		case "system":
			if prompt != "" || response != "" {
				err = turn()
			}
			system = m.Content
		case "user":
			if response != "" {
				err = turn()
			}
			prompt = m.Content
		case "assistant":
			response = m.Content
		}
		if err != nil {
			return err
		}
	}
	cut := false
	root := deleteNodes(tmpl.Root.Copy(), func(n parse.Node) bool {
		if field, ok := n.(*parse.FieldNode); ok && contains(field.Ident, "Response") {
			cut = true
			return false
		}
		return cut
	})
	last, err := template.New("").AddParseTree("", &parse.Tree{Root: root.(*parse.ListNode)})
	if err != nil {
		return err
	}
	return last.Execute(w, values())
}

// deleteNodes removes, walking in order, every node `drop` says to, and the actions and
// pipes left empty; Ollama's deleteNode.
func deleteNodes(node parse.Node, drop func(parse.Node) bool) parse.Node {
	if drop(node) {
		return nil
	}
	switch n := node.(type) {
	case *parse.ListNode:
		var kept []parse.Node
		for _, child := range n.Nodes {
			if c := deleteNodes(child, drop); c != nil {
				kept = append(kept, c)
			}
		}
		n.Nodes = kept
	case *parse.IfNode:
		n.BranchNode = *deleteNodes(&n.BranchNode, drop).(*parse.BranchNode)
	case *parse.WithNode:
		n.BranchNode = *deleteNodes(&n.BranchNode, drop).(*parse.BranchNode)
	case *parse.RangeNode:
		n.BranchNode = *deleteNodes(&n.BranchNode, drop).(*parse.BranchNode)
	case *parse.BranchNode:
		n.List = deleteNodes(n.List, drop).(*parse.ListNode)
		if n.ElseList != nil {
			n.ElseList = deleteNodes(n.ElseList, drop).(*parse.ListNode)
		}
	case *parse.ActionNode:
		pipe := deleteNodes(n.Pipe, drop)
		if pipe == nil {
			return nil
		}
		n.Pipe = pipe.(*parse.PipeNode)
	case *parse.PipeNode:
		return deletePipe(n, drop)
	}
	return node
}

func deletePipe(n *parse.PipeNode, drop func(parse.Node) bool) parse.Node {
	var commands []*parse.CommandNode
	for _, command := range n.Cmds {
		var args []parse.Node
		for _, arg := range command.Args {
			if a := deleteNodes(arg, drop); a != nil {
				args = append(args, a)
			}
		}
		if len(args) == 0 {
			return nil
		}
		command.Args = args
		commands = append(commands, command)
	}
	if len(commands) == 0 {
		return nil
	}
	n.Cmds = commands
	return n
}

// limitedWriter stops a template once it has written more than `left` characters.
type limitedWriter struct {
	out  bytes.Buffer
	left int
}

var errOutputLimit = errors.New("output limit")

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.left -= len([]rune(string(p)))
	if l.left < 0 {
		return 0, errOutputLimit
	}
	return l.out.Write(p)
}
