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
// strings and repeated keys are reported through bad (with the key's line in
// the YAML text) and left out; lineOffset turns YAML lines into file lines
// for the message.
func mappingFields(m *yaml.Node, lineOffset int, bad func(line int, msg string)) []yamlField {
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
			bad(key.Line, fmt.Sprintf("%q is set twice (first on line %d)", key.Value, lineOffset+first))
			continue
		}
		seen[key.Value] = key.Line
		fields = append(fields, yamlField{Key: key.Value, Line: key.Line, Value: value})
	}
	return fields
}

// stringValue reads a non-empty string scalar, or says what is wrong.
func stringValue(name string, v *yaml.Node) (string, string) {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return "", name + " is empty"
	}
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

// keyList formats alternatives for a message: "a, b or c".
func keyList(keys []string) string { return joinWords(keys, "or") }

// joinWords formats a list for a message: "a, b and c".
func joinWords(words []string, conjunction string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conjunction + " " + words[len(words)-1]
}

// unknownWord says that word is not one of known: "unknown key "handler":
// did you mean "handlers"?" for a likely typo, else the list of known words.
func unknownWord(what, word string, known []string) string {
	if guess := closestWord(word, known); guess != "" {
		return fmt.Sprintf("unknown %s %q: did you mean %q?", what, word, guess)
	}
	return fmt.Sprintf("unknown %s %q (want %s)", what, word, keyList(known))
}

// closestWord returns the known word that word is likely a typo of, or "".
func closestWord(word string, known []string) string {
	best, bestDistance := "", 3 // more than two edits away is not a typo
	for _, k := range known {
		if d := editDistance(word, k); d < bestDistance {
			best, bestDistance = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between two short words.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
