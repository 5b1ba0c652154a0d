package lessons

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"idemlab/playground"
)

// Choice is one answer of a graded question (a quiz question or a
// playground's prediction), its text rendered to inline HTML. Every choice
// explains itself: why it is right, or why it is wrong.
//
//	choices:
//	  - choice: The broker deletes the message when it hands it out.
//	    why: Then a crash would lose it; the broker waits for the ack.
//	  - choice: It only ever hears the ack.
//	    correct: true
//	    why: Silence until the lease ends looks the same in every case.
type Choice struct {
	Text, Why     string // markdown, as written
	HTML, WhyHTML string // inline HTML
	Correct       bool
	// Check, in a playground's prediction only, is a goal (the engine's
	// predicate language) that lint runs on the block's script: it must
	// hold for the correct choice and fail for every other one, so the
	// answer cannot contradict the verdicts it reveals.
	Check *playground.Goal
}

// choiceKeys are the keys a choice may hold ("check" only in a prediction).
var choiceKeys = []string{"choice", "why", "correct", "check"}

// Bounds on a question's choices (MaxChoices also bounds a guess in a
// playground URL).
const (
	minChoices = 2
	MaxChoices = 6
)

// parseChoices reads a list of choices: 2 to 6, each with choice and why,
// exactly one with correct: true. render turns one paragraph of markdown
// into inline HTML (ok false when it is not one paragraph); bad reports a
// problem at a YAML line, prefixed by who (e.g. "question 2"); lineOffset
// turns YAML lines into file lines, as for mappingFields.
//
// A nil render keeps the markdown only (renderChoices fills in the HTML
// later); withCheck allows check: (a goal) on each choice.
func parseChoices(node *yaml.Node, lineOffset int, who string, withCheck bool, render func(markdown string, yamlLine int) (string, bool), bad func(int, string)) []Choice {
	const want = "a list of 2 to 6 choices, each with choice: and why:, one of them with correct: true"
	if node.Kind != yaml.SequenceNode || len(node.Content) < minChoices || len(node.Content) > MaxChoices {
		what := describeYAML(node)
		if node.Kind == yaml.SequenceNode {
			what = english(len(node.Content), "choice")
		}
		bad(node.Line, fmt.Sprintf("%s: choices must be %s, not %s", who, want, what))
		return nil
	}
	var out []Choice
	correct := 0
	for i, item := range node.Content {
		item = resolveAlias(item)
		where := fmt.Sprintf("%s, choice %d", who, i+1)
		if item.Kind != yaml.MappingNode {
			bad(item.Line, fmt.Sprintf("%s: want a mapping of choice and why, not %s", where, describeYAML(item)))
			continue
		}
		var c Choice
		found := map[string]bool{}
		for _, f := range mappingFields(item, lineOffset, bad) {
			found[f.Key] = true
			switch f.Key {
			case "correct":
				if f.Value.Kind != yaml.ScalarNode || f.Value.ShortTag() != "!!bool" {
					bad(f.Line, fmt.Sprintf("%s: correct must be true or false, not %s", where, describeYAML(f.Value)))
					continue
				}
				c.Correct = f.Value.Value == "true"
				if c.Correct {
					correct++
				}
			case "check":
				value, msg := stringValue(f.Key, f.Value)
				if msg == "" && !withCheck {
					msg = "check: is for a playground's prediction, not a quiz"
				}
				if msg == "" {
					goal, err := playground.ParseGoal(value)
					if err != nil {
						msg = "check: " + err.(*playground.InputError).Msg
					}
					c.Check = goal
				}
				if msg != "" {
					bad(f.Line, where+": "+msg)
				}
			case "choice", "why":
				value, msg := stringValue(f.Key, f.Value)
				if msg != "" {
					bad(f.Line, where+": "+msg)
					continue
				}
				inline := ""
				if render != nil {
					var ok bool
					if inline, ok = render(value, f.Value.Line); !ok {
						bad(f.Line, fmt.Sprintf("%s: %s must be one paragraph of text", where, f.Key))
					}
				}
				if f.Key == "choice" {
					c.Text, c.HTML = value, inline
				} else {
					c.Why, c.WhyHTML = value, inline
				}
			default:
				bad(f.Line, where+": "+unknownWord("key", f.Key, choiceKeys))
			}
		}
		for _, key := range choiceKeys[:2] {
			if !found[key] {
				bad(item.Line, fmt.Sprintf("%s: missing %q", where, key))
			}
		}
		out = append(out, c)
	}
	if correct != 1 {
		bad(node.Line, fmt.Sprintf("%s: %s are marked correct: true; want exactly one", who, english(correct, "choice")))
	}
	return out
}

// english is "1 choice", "3 choices", "no choices".
func english(n int, noun string) string {
	switch n {
	case 0:
		return "no " + noun + "s"
	case 1:
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// choicesHTML is a graded question's radio group: picking a choice shows
// why it is right or wrong, by CSS alone (:checked), so it works without
// JavaScript and sends nothing anywhere. name groups the radios; the
// question (inline HTML) is the group's legend.
func choicesHTML(name, question string, choices []Choice) string {
	var b strings.Builder
	b.WriteString(`<fieldset class="choices" data-testid="choices">` + "\n")
	b.WriteString(`<legend class="choices-question">` + question + "</legend>\n")
	for i, c := range choices {
		id := name + "-" + strconv.Itoa(i+1)
		verdict, correct := "Not quite.", "false"
		if c.Correct {
			verdict, correct = "Right.", "true"
		}
		fmt.Fprintf(&b, `<div class="choice" data-correct="%s" data-testid="choice">`+"\n", correct)
		fmt.Fprintf(&b, `<input type="radio" name="%s" id="%s" value="%d">`, html.EscapeString(name), html.EscapeString(id), i+1)
		fmt.Fprintf(&b, `<label for="%s">%s</label>`+"\n", html.EscapeString(id), c.HTML)
		fmt.Fprintf(&b, `<p class="choice-why" data-testid="choice-why"><strong>%s</strong> %s</p>`+"\n", verdict, c.WhyHTML)
		b.WriteString("</div>\n")
	}
	b.WriteString("</fieldset>\n")
	return b.String()
}
