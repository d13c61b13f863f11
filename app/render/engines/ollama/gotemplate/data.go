package main

// The data a chat template sees, shaped as Ollama's template package shapes it
// (template/template.go and api/types.go at fb30760): the field names, their types and
// their order matter, since a template may print a whole value ({{ . }}) and Go formats
// structs field by field and maps in key order.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// message is api.Message as a request carries it.
type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Thinking   string     `json:"thinking,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int            `json:"index"`
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"function"`
}

// propertyType is a JSON Schema type: one name or a list of names.
type propertyType []string

func (p *propertyType) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*p = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return err
	}
	*p = many
	return nil
}

func (p propertyType) MarshalJSON() ([]byte, error) {
	if len(p) == 1 {
		return json.Marshal(p[0])
	}
	return json.Marshal([]string(p))
}

func (p propertyType) String() string {
	switch len(p) {
	case 0:
		return ""
	case 1:
		return p[0]
	}
	return fmt.Sprintf("%v", []string(p))
}

// toolProperty is api.ToolProperty: one parameter of a tool.
type toolProperty struct {
	AnyOf       []toolProperty `json:"anyOf,omitempty"`
	Type        propertyType   `json:"type,omitempty"`
	Items       any            `json:"items,omitempty"`
	Description string         `json:"description,omitempty"`
	Enum        []any          `json:"enum,omitempty"`
	Properties  *orderedProps  `json:"properties,omitempty"`
	Required    []string       `json:"required,omitempty"`
}

// typeScript is what toTypeScriptType writes for a property.
func (p toolProperty) typeScript() string {
	if len(p.AnyOf) > 0 {
		var names []string
		for _, each := range p.AnyOf {
			names = append(names, each.typeScript())
		}
		return strings.Join(names, " | ")
	}
	if len(p.Type) == 0 {
		return "any"
	}
	var names []string
	for _, name := range p.Type {
		names = append(names, typeScriptName(name))
	}
	return strings.Join(names, " | ")
}

func typeScriptName(jsonType string) string {
	switch jsonType {
	case "string", "boolean", "null":
		return jsonType
	case "number", "integer":
		return "number"
	case "array":
		return "any[]"
	case "object":
		return "Record<string, any>"
	}
	return "any"
}

// orderedProps keeps nested properties in the order the request gave them, as
// api.ToolPropertiesMap does when it writes them back as JSON.
type orderedProps struct {
	keys   []string
	values map[string]toolProperty
}

func (o *orderedProps) UnmarshalJSON(data []byte) error {
	o.values = map[string]toolProperty{}
	decoder := json.NewDecoder(bytes.NewReader(data))
	if _, err := decoder.Token(); err != nil { // the opening brace
		return err
	}
	for decoder.More() {
		token, err := decoder.Token()
		if err != nil {
			return err
		}
		key, _ := token.(string)
		var value toolProperty
		if err := decoder.Decode(&value); err != nil {
			return err
		}
		if _, seen := o.values[key]; !seen {
			o.keys = append(o.keys, key)
		}
		o.values[key] = value
	}
	return nil
}

func (o orderedProps) MarshalJSON() ([]byte, error) {
	var out bytes.Buffer
	out.WriteByte('{')
	for i, key := range o.keys {
		if i > 0 {
			out.WriteByte(',')
		}
		name, _ := json.Marshal(key)
		value, err := json.Marshal(o.values[key])
		if err != nil {
			return nil, err
		}
		out.Write(name)
		out.WriteByte(':')
		out.Write(value)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// tool is api.Tool as a request carries it.
type tool struct {
	Type     string `json:"type"`
	Items    any    `json:"items,omitempty"`
	Function struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Parameters  struct {
			Type       string        `json:"type"`
			Defs       any           `json:"$defs,omitempty"`
			Items      any           `json:"items,omitempty"`
			Required   []string      `json:"required,omitempty"`
			Properties *orderedProps `json:"properties"`
		} `json:"parameters"`
	} `json:"function"`
}

// What templates see: the template package's own types, which print as JSON.

func asJSON(v any) string {
	out, _ := json.Marshal(v)
	return string(out)
}

type templateTools []templateTool

func (t templateTools) String() string { return asJSON(t) }

type templateArgs map[string]any

func (t templateArgs) String() string {
	if t == nil {
		return "{}"
	}
	return asJSON(t)
}

type templateProperties map[string]toolProperty

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
