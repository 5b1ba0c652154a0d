package lessons

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// Source is a document a lesson's facts come from, listed in its front
// matter ("sources") and shown as a link at the end of the lesson. Nothing
// fetches it: it is a link for the reader.
type Source struct {
	Title string // what the link says, such as "Amazon SQS: visibility timeout"
	URL   string // an absolute https:// address
}

// sourceKeys are the fields of one sources item, in the order they are
// documented.
var sourceKeys = []string{"title", "url"}

// maxSourceURL bounds an address: a longer one is a paste gone wrong.
const maxSourceURL = 2000

// sourceListValue reads the front matter's sources: a non-empty list of
// {title, url} mappings with distinct https addresses. Each bad item is
// reported with its own line (a YAML line, as bad expects).
func sourceListValue(v *yaml.Node, bad func(line int, msg string)) []Source {
	if v.Kind != yaml.SequenceNode {
		bad(v.Line, "sources must be a list of title and url pairs, not "+describeYAML(v))
		return nil
	}
	if len(v.Content) == 0 {
		bad(v.Line, "sources is an empty list")
		return nil
	}
	var out []Source
	firstItem := map[string]int{} // URL → item number
	for i, item := range v.Content {
		item = resolveAlias(item)
		name := fmt.Sprintf("sources item %d", i+1)
		s, ok := sourceValue(name, item, bad)
		if !ok {
			continue
		}
		if first, dup := firstItem[s.URL]; dup {
			bad(item.Line, fmt.Sprintf("%s: %s is already listed as item %d", name, s.URL, first))
			continue
		}
		firstItem[s.URL] = i + 1
		out = append(out, s)
	}
	return out
}

// sourceValue reads one sources item, reporting each problem through bad.
func sourceValue(name string, item *yaml.Node, bad func(line int, msg string)) (Source, bool) {
	if item == nil || item.Kind != yaml.MappingNode {
		line := 0
		what := "nothing"
		if item != nil {
			line, what = item.Line, describeYAML(item)
		}
		bad(line, fmt.Sprintf("%s must be a mapping of title and url, not %s", name, what))
		return Source{}, false
	}
	var s Source
	ok, seen := true, map[string]bool{}
	for _, f := range mappingFields(item, 1, bad) {
		var msg string
		switch f.Key {
		case "title":
			s.Title, msg = stringValue(name+" title", f.Value)
		case "url":
			var raw string
			if raw, msg = stringValue(name+" url", f.Value); msg == "" {
				s.URL, msg = sourceURL(name+" url", raw)
			}
		default:
			msg = name + ": " + unknownWord("key", f.Key, sourceKeys)
			if guess := closestWord(f.Key, sourceKeys); guess != "" {
				seen[guess] = true // reported as a typo, not also as missing
			}
		}
		seen[f.Key] = true
		if msg != "" {
			bad(f.Line, msg)
			ok = false
		}
	}
	for _, key := range sourceKeys {
		if !seen[key] {
			bad(item.Line, fmt.Sprintf("%s: missing %q", name, key))
			ok = false
		}
	}
	return s, ok
}

// sourceURL checks that raw is an absolute https address of a named host,
// with no credentials, spaces or control characters.
func sourceURL(name, raw string) (string, string) {
	if len(raw) > maxSourceURL {
		return "", fmt.Sprintf("%s is %d characters long, more than %d", name, len(raw), maxSourceURL)
	}
	if i := strings.IndexFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return "", fmt.Sprintf("%s %q contains a space or a control character at byte %d", name, raw, i+1)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Sprintf("%s %q is not a web address", name, raw)
	}
	switch {
	case u.Scheme != "https":
		return "", fmt.Sprintf("%s %q: want an https:// address", name, raw)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Sprintf("%s %q has no host name", name, raw)
	case u.User != nil:
		return "", fmt.Sprintf("%s %q must not hold a user name or password", name, raw)
	}
	return raw, ""
}
