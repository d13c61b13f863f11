package main

// The tags Ollama infers around a template's thinking (thinking/template.go at fb30760):
// for each {{ .Thinking }} inside a range over .Messages, the first and last text of the
// nearest enclosing list, trimmed; the last such reference wins. A template with both
// tags makes the model "thinking-capable": /api/chat then turns thinking on when the
// request does not say.

import (
	"strings"
	"text/template"
	"text/template/parse"
)

// visit walks the tree in Ollama's order, keeping the path from the root.
func visit(n parse.Node, path []parse.Node, enter func(parse.Node, []parse.Node)) {
	if n == nil {
		return
	}
	path = append(path, n)
	enter(n, path)
	var children []parse.Node
	switch x := n.(type) {
	case *parse.ListNode:
		children = x.Nodes
	case *parse.BranchNode:
		children = branchChildren(x)
	case *parse.ActionNode:
		children = []parse.Node{x.Pipe}
	case *parse.WithNode:
		children = []parse.Node{&x.BranchNode}
	case *parse.RangeNode:
		children = []parse.Node{&x.BranchNode}
	case *parse.IfNode:
		children = []parse.Node{&x.BranchNode}
	case *parse.TemplateNode:
		children = []parse.Node{x.Pipe}
	case *parse.PipeNode:
		for _, c := range x.Cmds {
			children = append(children, c)
		}
	case *parse.CommandNode:
		children = x.Args
	}
	for _, child := range children {
		visit(child, path, enter)
	}
}

// branchChildren are a branch's pipe, list and else list, those it has.
func branchChildren(x *parse.BranchNode) []parse.Node {
	var children []parse.Node
	if x.Pipe != nil {
		children = append(children, x.Pipe)
	}
	if x.List != nil {
		children = append(children, x.List)
	}
	if x.ElseList != nil {
		children = append(children, x.ElseList)
	}
	return children
}

// rangeOverField says whether the range's pipe names the field.
func rangeOverField(r *parse.RangeNode, field string) bool {
	found := false
	visit(r.Pipe, nil, func(n parse.Node, _ []parse.Node) {
		if f, ok := n.(*parse.FieldNode); ok && f.Ident[0] == field {
			found = true
		}
	})
	return found
}

// thinkingTags is Ollama's thinking.InferTags.
func thinkingTags(tmpl *template.Template) (string, string) {
	opening, closing := "", ""
	visit(tmpl.Root, nil, func(n parse.Node, path []parse.Node) {
		field, ok := n.(*parse.FieldNode)
		if !ok || len(field.Ident) == 0 || field.Ident[0] != "Thinking" {
			return
		}
		var inner *parse.RangeNode
		for i := len(path) - 1; i >= 0 && inner == nil; i-- {
			inner, _ = path[i].(*parse.RangeNode)
		}
		if inner == nil || !rangeOverField(inner, "Messages") {
			return
		}
		for i := len(path) - 1; i >= 0; i-- {
			if list, ok := path[i].(*parse.ListNode); ok {
				if text, ok := list.Nodes[0].(*parse.TextNode); ok {
					opening = strings.TrimSpace(string(text.Text))
				}
				if text, ok := list.Nodes[len(list.Nodes)-1].(*parse.TextNode); ok {
					closing = strings.TrimSpace(string(text.Text))
				}
				return
			}
		}
	})
	return opening, closing
}
