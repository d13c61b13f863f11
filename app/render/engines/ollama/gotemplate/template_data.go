package main

// What templates see (template/template.go at fb30760): the template package's own
// types, built from the request's, whose lists and maps print as JSON.

import (
	"encoding/json"
	"strings"
)

// What templates see: the template package's own types, which print as JSON.

func asJSON(v any) string {
	out, _ := json.Marshal(v)
	return string(out)
}

type templateTools []templateTool

// String prints the tools as JSON.
func (t templateTools) String() string { return asJSON(t) }

type templateArgs map[string]any

// String prints the arguments as JSON ({} for none).
func (t templateArgs) String() string {
	if t == nil {
		return "{}"
	}
	return asJSON(t)
}

type templateProperties map[string]toolProperty

// String prints the properties as JSON ({} for none).
func (t templateProperties) String() string {
	if t == nil {
		return "{}"
	}
	return asJSON(t)
}

type templateTool struct {
	Type     string               `json:"type"`
	Items    any                  `json:"items,omitempty"`
	Function templateToolFunction `json:"function"`
}

// String prints the tool as JSON.
func (t templateTool) String() string { return asJSON(t) }

type templateToolFunction struct {
	Name        string                         `json:"name"`
	Description string                         `json:"description"`
	Parameters  templateToolFunctionParameters `json:"parameters"`
}

type templateToolFunctionParameters struct {
	Type       string             `json:"type"`
	Defs       any                `json:"$defs,omitempty"`
	Items      any                `json:"items,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Properties templateProperties `json:"properties"`
}

type templateToolCall struct {
	ID       string
	Function templateToolCallFunction
}

type templateToolCallFunction struct {
	Index     int
	Name      string
	Arguments templateArgs
}

// templateMessage has Images as Ollama's does (always empty here: no images are sent).
type templateMessage struct {
	Role       string
	Content    string
	Thinking   string
	Images     []string
	ToolCalls  []templateToolCall
	ToolName   string
	ToolCallID string
}

// templateToolsOf converts the request's tools for templates.
func templateToolsOf(tools []tool) templateTools {
	if tools == nil {
		return nil
	}
	out := make(templateTools, len(tools))
	for i, t := range tools {
		params := t.Function.Parameters
		var props templateProperties
		if params.Properties != nil {
			props = templateProperties(params.Properties.values)
		}
		out[i] = templateTool{
			Type:  t.Type,
			Items: t.Items,
			Function: templateToolFunction{
				Name:        t.Function.Name,
				Description: t.Function.Description,
				Parameters: templateToolFunctionParameters{
					Type:       params.Type,
					Defs:       params.Defs,
					Items:      params.Items,
					Required:   params.Required,
					Properties: props,
				},
			},
		}
	}
	return out
}

// templateMessagesOf converts the collated messages for templates.
func templateMessagesOf(messages []*message) []*templateMessage {
	if messages == nil {
		return nil
	}
	out := make([]*templateMessage, len(messages))
	for i, m := range messages {
		var calls []templateToolCall
		for _, call := range m.ToolCalls {
			calls = append(calls, templateToolCall{
				ID: call.ID,
				Function: templateToolCallFunction{
					Index:     call.Function.Index,
					Name:      call.Function.Name,
					Arguments: templateArgs(call.Function.Arguments),
				},
			})
		}
		out[i] = &templateMessage{
			Role: m.Role, Content: m.Content, Thinking: m.Thinking, ToolCalls: calls,
			ToolName: m.ToolName, ToolCallID: m.ToolCallID,
		}
	}
	return out
}

// collate joins consecutive messages of one role (tool messages excepted) with a blank
// line, and every system message's text, as Ollama's template package does.
func collate(messages []message) (string, []*message) {
	var system []string
	var collated []*message
	for i := range messages {
		m := &messages[i]
		if m.Role == "system" {
			system = append(system, m.Content)
		}
		last := len(collated) - 1
		if last >= 0 && collated[last].Role == m.Role && m.Role != "tool" {
			collated[last].Content += "\n\n" + m.Content
		} else {
			collated = append(collated, m)
		}
	}
	return strings.Join(system, "\n\n"), collated
}
