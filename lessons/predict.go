package lessons

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"idemlab/playground"
)

// PredictSpec is a playground block's "predict, then run" question: the
// page asks it before it shows the verdicts, the learner picks a choice,
// and the verdicts reveal with the choice's why.
//
//	predict:
//	  question: Which handler ends above the expected balance?
//	  choices:
//	    - choice: "`increment`"
//	      correct: true
//	      check: increment acc-1 above expected
//	      why: It adds the amount on every delivery, and msg-1 came twice.
//	    - choice: "`dedupe-tx`"
//	      check: dedupe-tx acc-1 above expected
//	      why: Its second run finds msg-1's row and changes nothing.
//
// Each choice may carry a check (a goal, see playground.Goal): lint runs
// the block's script and requires the correct choice's check to hold and
// every other choice's to fail.
type PredictSpec struct {
	Question     string // markdown
	QuestionHTML string // inline HTML
	Choices      []Choice
}

// predictKeys are the keys of a predict mapping.
var predictKeys = []string{"question", "choices"}

// parsePredict reads a playground block's predict mapping; its text is
// rendered later (renderBlockText), when the lesson's renderer is at hand.
func parsePredict(node *yaml.Node, fenceLine int, badYAML func(int, string)) *PredictSpec {
	if node.Kind != yaml.MappingNode {
		badYAML(node.Line, "predict must be a mapping of question and choices, not "+describeYAML(node))
		return nil
	}
	p := &PredictSpec{}
	found := map[string]bool{}
	ok := true
	bad := func(line int, msg string) {
		ok = false
		badYAML(line, "predict: "+msg)
	}
	for _, f := range mappingFields(node, fenceLine, badYAML) {
		found[f.Key] = true
		switch f.Key {
		case "question":
			value, msg := stringValue("question", f.Value)
			if msg != "" {
				bad(f.Line, msg)
			}
			p.Question = value
		case "choices":
			p.Choices = parseChoices(f.Value, fenceLine, "question", true, nil, func(line int, msg string) { bad(line, msg) })
		default:
			bad(f.Line, unknownWord("key", f.Key, predictKeys))
		}
	}
	for _, key := range predictKeys {
		if !found[key] {
			bad(node.Line, fmt.Sprintf("missing %q", key))
		}
	}
	if !ok {
		return nil
	}
	return p
}

// checkPredict runs the prediction's checks against the block's own run.
func checkPredict(spec *PlaygroundSpec, sc *playground.Scenario, start *playground.Trace) error {
	if spec.Predict == nil {
		return nil
	}
	var problems []error
	for i, c := range spec.Predict.Choices {
		if c.Check == nil {
			continue
		}
		bad := func(format string, args ...any) {
			problems = append(problems, &FieldError{Field: "predict", Err: fmt.Errorf("choice %d: "+format, append([]any{i + 1}, args...)...)})
		}
		if err := c.Check.Check(sc, spec.Handlers); err != nil {
			bad("%s", err.(*playground.InputError).Msg)
			continue
		}
		met := c.Check.Met(start, sc, -1)
		switch {
		case c.Correct && !met:
			bad("it is marked correct, but the engine shows %q does not hold at the end of the script", c.Check.String())
		case !c.Correct && met:
			bad("it is marked wrong, but the engine shows %q holds at the end of the script", c.Check.String())
		}
	}
	return errors.Join(problems...)
}
