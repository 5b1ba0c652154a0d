package lessons

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// unmarshalYAML is yaml.Unmarshal that reports a panic of the decoder as an
// error: lesson files are untrusted input and must never crash a server.
func unmarshalYAML(src []byte, dst any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return yaml.Unmarshal(src, dst)
}

// parseYAMLNode decodes src into its root node (aliases resolved). It returns
// nil, nil for empty input.
func parseYAMLNode(src []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := unmarshalYAML(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return resolveAlias(doc.Content[0]), nil
}

// resolveAlias follows *alias nodes to what they name (bounded, since a
// hostile document could in principle chain them).
func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 32; i++ {
		n = n.Alias
	}
	return n
}

// describeYAML names what a node holds, for "want X, got Y" messages.
func describeYAML(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return "a string"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!bool":
			return "true/false"
		case "!!null":
			return "nothing"
		default:
			return "a value tagged " + n.ShortTag()
		}
	}
	return "an unsupported YAML value"
}

// yamlField is one key of a YAML mapping with its value.
type yamlField struct {
	Key   string
	Line  int // line of the key inside the YAML text
	Value *yaml.Node
}

// mappingFields lists the keys of a mapping in order. Keys that are not
// strings and repeated keys are reported through bad (with the key's line)
// and left out.
func mappingFields(m *yaml.Node, bad func(line int, msg string)) []yamlField {
	var fields []yamlField
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, value := resolveAlias(m.Content[i]), resolveAlias(m.Content[i+1])
		if key == nil || value == nil {
			continue
		}
		if key.Kind != yaml.ScalarNode {
			bad(m.Content[i].Line, "a key must be a plain word, not "+describeYAML(key))
			continue
		}
		if first, dup := seen[key.Value]; dup {
			bad(key.Line, fmt.Sprintf("key %q repeats the one on line %d", key.Value, first))
			continue
		}
		seen[key.Value] = key.Line
		fields = append(fields, yamlField{Key: key.Value, Line: key.Line, Value: value})
	}
	return fields
}

// stringValue reads a non-empty string scalar, or says what is wrong.
func stringValue(name string, v *yaml.Node) (string, string) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
		return "", fmt.Sprintf("%s must be a string, not %s", name, describeYAML(v))
	}
	s := strings.TrimSpace(v.Value)
	if s == "" {
		return "", name + " is empty"
	}
	return s, ""
}

// positiveIntValue reads an integer ≥ 1, or says what is wrong.
func positiveIntValue(name string, v *yaml.Node) (int, string) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
		return 0, fmt.Sprintf("%s must be a whole number, not %s", name, describeYAML(v))
	}
	var n int
	if err := v.Decode(&n); err != nil {
		return 0, fmt.Sprintf("%s: %q is not a whole number", name, v.Value)
	}
	if n < 1 {
		return 0, fmt.Sprintf("%s must be 1 or more, not %d", name, n)
	}
	return n, ""
}

// stringListValue reads a non-empty list of non-empty strings; each bad item
// is reported with its own line.
func stringListValue(name string, v *yaml.Node, bad func(line int, msg string)) []string {
	if v.Kind != yaml.SequenceNode {
		bad(v.Line, fmt.Sprintf("%s must be a list, not %s", name, describeYAML(v)))
		return nil
	}
	if len(v.Content) == 0 {
		bad(v.Line, name+" is an empty list")
		return nil
	}
	var out []string
	for i, item := range v.Content {
		item = resolveAlias(item)
		s, msg := stringValue(fmt.Sprintf("%s item %d", name, i+1), item)
		if msg != "" {
			bad(item.Line, msg)
			continue
		}
		out = append(out, s)
	}
	return out
}

// keyList formats allowed keys for a message: "a, b or c".
func keyList(keys []string) string {
	if len(keys) == 1 {
		return keys[0]
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}
