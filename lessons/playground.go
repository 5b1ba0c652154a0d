package lessons

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Verdicts are the words a playground's expect map may use, one per handler:
// the engine's verdicts of a run that has settled (playground.Verdict…).
var Verdicts = []string{"ok", "duplicate-effect", "lost-effect", "unexpected-effect", "dead-lettered"}

// playgroundKeys are the keys a ```playground block may hold.
var playgroundKeys = []string{"scenario", "handlers", "script", "caption", "expect", "goals", "predict", "ledger"}

// ParsePlaygroundSpec parses and structurally validates the YAML body of a
// ```playground block: every field has the right type, scenario, handlers,
// script and caption are present, handlers are unique, and expect maps listed
// handlers to verdicts. It does not know the engine's scenario and handler
// names: that is Options.CheckPlayground's job.
//
// fenceLine is the file line of the opening fence; the YAML starts on the next
// line. The returned error, if any, is a *LoadError listing every problem.
func ParsePlaygroundSpec(body []byte, file string, fenceLine int) (*PlaygroundSpec, error) {
	body = normalizeNewlines(body)
	spec := &PlaygroundSpec{File: file, Line: fenceLine, fieldLines: map[string]int{}}
	var problems []Problem
	lastLine := bytes.Count(body, []byte("\n")) + 1 // the closing fence, for errors at the end
	badYAML := func(yamlLine int, msg string) {
		problems = append(problems, Problem{File: file, Line: fenceLine + min(yamlLine, lastLine), Msg: "playground: " + msg})
	}
	root, err := parseYAMLNode(body)
	if err != nil {
		line, msg := yamlErrorPosition(err, body)
		badYAML(line, "invalid YAML: "+msg)
		return nil, &LoadError{Problems: problems}
	}
	const want = "a YAML mapping of scenario, handlers, script and caption"
	if root == nil || (root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null") {
		problems = append(problems, Problem{File: file, Line: fenceLine, Msg: "playground: the block is empty: want " + want})
		return nil, &LoadError{Problems: problems}
	}
	if root.Kind != yaml.MappingNode {
		badYAML(root.Line, "want "+want+", not "+describeYAML(root))
		return nil, &LoadError{Problems: problems}
	}
	var expectNode *yaml.Node
	typos := map[string]bool{} // keys reported as misspelt, so not also as missing
	for _, f := range mappingFields(root, fenceLine, badYAML) {
		spec.fieldLines[f.Key] = fenceLine + f.Line
		var msg string
		switch f.Key {
		case "scenario":
			spec.Scenario, msg = stringValue("scenario", f.Value)
		case "script":
			spec.Script, msg = stringValue("script", f.Value)
		case "caption":
			spec.Caption, msg = stringValue("caption", f.Value)
		case "handlers":
			spec.Handlers = stringListValue("handlers", f.Value, badYAML)
			for i, h := range spec.Handlers {
				if slices.Contains(spec.Handlers[:i], h) {
					msg = fmt.Sprintf("handlers: %q is listed twice", h)
				}
			}
		case "expect":
			expectNode = f.Value
		case "predict":
			spec.Predict = parsePredict(f.Value, fenceLine, badYAML)
		case "ledger":
			spec.Ledger, msg = ledgerValue(f.Value)
		case "goals":
			spec.Goals = parseGoals(f.Value, fenceLine, badYAML)
			for _, g := range spec.Goals {
				spec.fieldLines["goals."+g.ID] = g.Line
			}
		default:
			msg = unknownWord("key", f.Key, playgroundKeys)
			if guess := closestWord(f.Key, playgroundKeys); guess != "" {
				typos[guess] = true
			}
		}
		if msg != "" {
			badYAML(f.Line, msg)
		}
	}
	for _, key := range playgroundKeys[:4] {
		if _, ok := spec.fieldLines[key]; !ok && !typos[key] {
			problems = append(problems, Problem{File: file, Line: fenceLine, Msg: fmt.Sprintf("playground: missing %q", key)})
		}
	}
	if expectNode != nil {
		spec.Expect = parseExpect(expectNode, spec, fenceLine, badYAML)
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	return spec, nil
}

// parseExpect reads the expect mapping: handler name → verdict.
func parseExpect(node *yaml.Node, spec *PlaygroundSpec, fenceLine int, badYAML func(int, string)) map[string]string {
	handlers := spec.Handlers
	if node.Kind != yaml.MappingNode {
		badYAML(node.Line, "expect must be a mapping of handler: verdict, not "+describeYAML(node))
		return nil
	}
	expect := map[string]string{}
	for _, f := range mappingFields(node, fenceLine, badYAML) {
		verdict, msg := stringValue("expect "+f.Key, f.Value)
		switch {
		case msg != "":
		case !slices.Contains(handlers, f.Key):
			msg = fmt.Sprintf("expect names handler %q, which is not in handlers", f.Key)
		case !slices.Contains(Verdicts, verdict):
			msg = fmt.Sprintf("expect %s: %q is not a verdict (want %s)", f.Key, verdict, keyList(Verdicts))
		}
		if msg != "" {
			badYAML(f.Line, msg)
			continue
		}
		expect[f.Key] = verdict
		spec.fieldLines["expect."+f.Key] = fenceLine + f.Line
	}
	return expect
}

// FieldLine returns the file line of one of the spec's keys ("scenario",
// "script", …, or "expect.HANDLER" for one expect entry), or the fence line
// when the key was not written.
func (s *PlaygroundSpec) FieldLine(field string) int {
	if line, ok := s.fieldLines[field]; ok {
		return line
	}
	if top, _, nested := strings.Cut(field, "."); nested {
		return s.FieldLine(top)
	}
	return s.Line
}
