package main

// The legacy path of Ollama's Template.Execute (template/template.go at fb30760), for a
// template that does not range over .Messages: one run per turn (.System, .Prompt,
// .Response), then a last run of the template cut after its first {{ .Response }}.

import (
	"io"
	"text/template"
	"text/template/parse"
)

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

// deletePipe drops the arguments `drop` says to, and commands left empty.
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
