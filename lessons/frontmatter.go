package lessons

import (
	"bytes"
	"fmt"
	"slices"

	"go.abhg.dev/goldmark/frontmatter"
	"gopkg.in/yaml.v3"
)

// frontMatterKeys are the fields every lesson must set, in the order they are
// documented.
var frontMatterKeys = []string{"title", "summary", "order", "minutes", "objectives"}

// optionalFrontMatterKeys may be left out; knownFrontMatterKeys is every
// field a lesson may set, for unknown-field messages.
var (
	optionalFrontMatterKeys = []string{"kind", "sources"}
	knownFrontMatterKeys    = append(slices.Clone(frontMatterKeys), optionalFrontMatterKeys...)
)

// lessonKinds are the values of the kind field; the first is the default.
var lessonKinds = []string{KindLesson, KindReference}

// yamlFrontMatter is the only front matter format accepted: "---" fences.
// Its Unmarshal never panics.
var yamlFrontMatter = frontmatter.Format{Name: "YAML", Delim: '-', Unmarshal: unmarshalYAML}

// frontMatter is the decoded header of a lesson.
type frontMatter struct {
	Title, Summary string
	Order, Minutes int
	Objectives     []string
	Kind           string   // KindLesson unless the file says otherwise
	Sources        []Source // nil when left out (or when every item is wrong)
	HasSources     bool     // the sources field is present, valid or not
	OrderLine      int      // file line of the order key, for duplicate-order messages
}

// frontMatterState says whether a file starts with front matter and where it
// ends, found by scanning the lines the way the frontmatter parser does. The
// parser alone cannot tell "never closed" from "runs to the end of the file".
type frontMatterState int

const (
	frontMatterMissing frontMatterState = iota
	frontMatterUnclosed
	frontMatterPresent
)

// scanFrontMatter also returns the YAML text between the fences.
func scanFrontMatter(src []byte) (frontMatterState, []byte) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	open := fenceDashes(lines[0])
	if open == 0 {
		return frontMatterMissing, nil
	}
	for i, line := range lines[1:] {
		if fenceDashes(line) == open {
			return frontMatterPresent, bytes.Join(lines[1:i+1], nil)
		}
	}
	return frontMatterUnclosed, nil
}

// fenceDashes returns n when line is n ≥ 3 dashes (and a line ending), else 0.
func fenceDashes(line []byte) int {
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	if len(line) < 3 || len(bytes.TrimLeft(line, "-")) != 0 {
		return 0
	}
	return len(line)
}

// decodeFrontMatter checks the front matter's YAML root node. The YAML text
// starts on line 2 of the file (after the opening "---"); bad receives file
// lines.
func decodeFrontMatter(root *yaml.Node, yamlText []byte, bad func(line int, msg string)) frontMatter {
	const firstLine = 1                                 // the YAML's line 1 is the file's line 2
	lastLine := bytes.Count(yamlText, []byte("\n")) + 1 // the closing ---
	badYAML := func(yamlLine int, msg string) { bad(firstLine+min(yamlLine, lastLine), msg) }
	fm := frontMatter{Kind: KindLesson}
	if root == nil || (root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null") {
		bad(1, "front matter is empty: want "+joinWords(frontMatterKeys, "and"))
		return fm
	}
	if root.Kind != yaml.MappingNode {
		badYAML(root.Line, "front matter must be a YAML mapping of "+joinWords(frontMatterKeys, "and")+", not "+describeYAML(root))
		return fm
	}
	seen := map[string]bool{}
	for _, f := range mappingFields(root, firstLine, badYAML) {
		var msg string
		switch f.Key {
		case "title":
			fm.Title, msg = stringValue("title", f.Value)
		case "summary":
			fm.Summary, msg = stringValue("summary", f.Value)
		case "order":
			fm.Order, msg = positiveIntValue("order", f.Value)
			fm.OrderLine = firstLine + f.Line
		case "minutes":
			fm.Minutes, msg = positiveIntValue("minutes", f.Value)
		case "objectives":
			fm.Objectives = stringListValue("objectives", f.Value, badYAML)
		case "sources":
			fm.Sources, fm.HasSources = sourceListValue(f.Value, badYAML), true
		case "kind":
			var kind string
			if kind, msg = stringValue("kind", f.Value); msg == "" {
				if slices.Contains(lessonKinds, kind) {
					fm.Kind = kind
				} else {
					msg = unknownWord("kind", kind, lessonKinds)
				}
			}
		default:
			msg = unknownWord("front matter field", f.Key, knownFrontMatterKeys)
			if guess := closestWord(f.Key, knownFrontMatterKeys); guess != "" {
				seen[guess] = true // reported as a typo, not also as missing
			}
		}
		seen[f.Key] = true
		if msg != "" {
			badYAML(f.Line, msg)
		}
	}
	for _, key := range frontMatterKeys {
		if !seen[key] {
			bad(1, fmt.Sprintf("front matter: missing field %q", key))
		}
	}
	return fm
}

// decodeFrontMatterNode decodes the front matter the parser found into its
// root YAML node.
func decodeFrontMatterNode(data *frontmatter.Data) (*yaml.Node, error) {
	var doc yaml.Node
	if err := data.Decode(&doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return resolveAlias(doc.Content[0]), nil
}
