package main

// The tool-call tag Ollama's tools parser looks for in a model's answer (tools/template.go
// at fb30760): the first non-blank text inside the first {{ if }} that names .ToolCalls,
// cut at "{" and trimmed; "{" when there is none, meaning any JSON object may be a call.

import (
	"bytes"
	"strings"
	"text/template"
	"text/template/parse"
)

// toolCallTag is Ollama's parseTag.
func toolCallTag(tmpl *template.Template) string {
	if tmpl == nil || tmpl.Tree == nil {
		return "{"
	}
	branch := findToolCallIf(tmpl.Tree.Root.Nodes)
	if branch == nil {
		return "{"
	}
	text := firstText(branch.List.Nodes)
	if text == nil {
		return "{"
	}
	tag := strings.ReplaceAll(string(text.Text), "\r\n", "\n")
	tag, _, _ = strings.Cut(tag, "{")
	tag = strings.TrimSpace(tag)
	if tag == "" {
		return "{"
	}
	return tag
}

// namesToolCalls says whether the if tests a .ToolCalls field.
func namesToolCalls(n *parse.IfNode) bool {
	for _, command := range n.Pipe.Cmds {
		for _, arg := range command.Args {
			if field, ok := arg.(*parse.FieldNode); ok && contains(field.Ident, "ToolCalls") {
				return true
			}
		}
	}
	return false
}

// findToolCallIf searches if, range and with bodies (not define blocks) in order.
func findToolCallIf(nodes []parse.Node) *parse.IfNode {
	for _, node := range nodes {
		var lists []*parse.ListNode
		switch n := node.(type) {
		case *parse.IfNode:
			if namesToolCalls(n) {
				return n
			}
			lists = []*parse.ListNode{n.List, n.ElseList}
		case *parse.ListNode:
			lists = []*parse.ListNode{n}
		case *parse.RangeNode:
			lists = []*parse.ListNode{n.List, n.ElseList}
		case *parse.WithNode:
			lists = []*parse.ListNode{n.List, n.ElseList}
		}
		for _, list := range lists {
			if list == nil {
				continue
			}
			if found := findToolCallIf(list.Nodes); found != nil {
				return found
			}
		}
	}
	return nil
}

// firstText is the first non-blank text, stopping at the first action and after the
// first if, range or with (found in it or not).
func firstText(nodes []parse.Node) *parse.TextNode {
	for _, node := range nodes {
		switch n := node.(type) {
		case *parse.TextNode:
			if len(bytes.TrimSpace(n.Text)) > 0 {
				return n
			}
		case *parse.ListNode:
			if text := firstText(n.Nodes); text != nil {
				return text
			}
		case *parse.IfNode:
			return firstTextOfBranch(&n.BranchNode)
		case *parse.RangeNode:
			return firstTextOfBranch(&n.BranchNode)
		case *parse.WithNode:
			return firstTextOfBranch(&n.BranchNode)
		case *parse.ActionNode:
			return nil
		}
	}
	return nil
}

// firstTextOfBranch is the first text of a branch's list, else of its else list.
func firstTextOfBranch(n *parse.BranchNode) *parse.TextNode {
	if text := firstText(n.List.Nodes); text != nil {
		return text
	}
	if n.ElseList != nil {
		return firstText(n.ElseList.Nodes)
	}
	return nil
}
