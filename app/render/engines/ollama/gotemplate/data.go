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

// UnmarshalJSON reads one type name or a list of them.
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

// MarshalJSON writes one name as a string, several as a list.
func (p propertyType) MarshalJSON() ([]byte, error) {
	if len(p) == 1 {
		return json.Marshal(p[0])
	}
	return json.Marshal([]string(p))
}

// String is how a template prints the type.
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

// typeScriptName is the TypeScript type of one JSON Schema type name.
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

// UnmarshalJSON reads the properties, keeping their order.
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

// MarshalJSON writes the properties in the order they came.
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
