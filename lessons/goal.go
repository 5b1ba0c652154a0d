package lessons

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"gopkg.in/yaml.v3"

	"idemlab/playground"
)

// GoalSpec is one of a playground block's goals: a task for the learner
// and the predicate the engine checks against the playground's current
// state (playground.Goal, whose language goal.go in that package defines).
//
//	goals:
//	  - id: three-copies
//	    task: Lose the second ack too, so that `increment` credits msg-1 three times.
//	    check: increment applies msg-1 3 times
//	    solution: deliver msg-1 lose-ack; redeliver msg-1 lose-ack; redeliver msg-1
//	    done: Every copy credited again; dedupe-tx recorded msg-1 once and skipped the rest.
//
// id is unique within the lesson (it names the goal in the page, as
// data-goal-met, and in a workshop's progress); task is one paragraph of
// markdown; solution is a script that meets the goal, which the engine
// check runs (so every goal is reachable); done, optional, is shown once
// the goal is met.
type GoalSpec struct {
	ID       string
	Task     string // markdown, as written
	TaskHTML string // inline HTML (rendered like the lesson, raw HTML off)
	Check    *playground.Goal
	Solution string
	Done     string // markdown, as written
	DoneHTML string // inline HTML, "" without done
	Line     int    // file line of the goal's "- id:" item
}

// goalKeys are the keys a goal may hold; the first four are required.
var goalKeys = []string{"id", "task", "check", "solution", "done"}

var goalID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// parseGoals reads a playground block's goals list.
func parseGoals(node *yaml.Node, fenceLine int, badYAML func(int, string)) []*GoalSpec {
	if node.Kind != yaml.SequenceNode || len(node.Content) == 0 {
		badYAML(node.Line, "goals must be a non-empty list of goals (id, task, check, solution), not "+describeYAML(node))
		return nil
	}
	var goals []*GoalSpec
	for i, item := range node.Content {
		item = resolveAlias(item)
		n := i + 1
		if item.Kind != yaml.MappingNode {
			badYAML(item.Line, fmt.Sprintf("goal %d: want a mapping of id, task, check and solution, not %s", n, describeYAML(item)))
			continue
		}
		g := &GoalSpec{Line: fenceLine + item.Line}
		found := map[string]bool{}
		ok := true
		for _, f := range mappingFields(item, fenceLine, badYAML) {
			found[f.Key] = true
			value, msg := "", ""
			if slices.Contains(goalKeys, f.Key) {
				value, msg = stringValue(f.Key, f.Value)
			} else {
				msg = unknownWord("key", f.Key, goalKeys)
			}
			switch {
			case msg != "":
			case f.Key == "id" && !goalID.MatchString(value):
				msg = fmt.Sprintf("id %q: want 1 to 40 of a-z, 0-9 and -", value)
			case f.Key == "check":
				goal, err := playground.ParseGoal(value)
				var input *playground.InputError
				if errors.As(err, &input) {
					msg = "check: " + input.Msg
				} else {
					g.Check = goal
				}
			}
			if msg != "" {
				badYAML(f.Line, fmt.Sprintf("goal %d: %s", n, msg))
				ok = false
				continue
			}
			switch f.Key {
			case "id":
				g.ID = value
			case "task":
				g.Task = value
			case "solution":
				g.Solution = value
			case "done":
				g.Done = value
			}
		}
		for _, key := range goalKeys[:4] {
			if !found[key] {
				badYAML(item.Line, fmt.Sprintf("goal %d: missing %q", n, key))
				ok = false
			}
		}
		for _, other := range goals {
			if g.ID != "" && other.ID == g.ID {
				badYAML(item.Line, fmt.Sprintf("goal %d: id %q is used twice", n, g.ID))
				ok = false
			}
		}
		if ok {
			goals = append(goals, g)
		}
	}
	return goals
}

// checkGoals is the engine's part of a block's check: every goal names
// only what the run has, the block's own script does not meet it already
// (it would tick before the learner did anything), and its solution meets
// it. start is the run of the block's own script. Problems are
// *FieldErrors on "goals".
func checkGoals(spec *PlaygroundSpec, start *playground.Trace, run func(script string) (*playground.Trace, error)) error {
	if len(spec.Goals) == 0 && spec.Predict == nil {
		return nil
	}
	sc, err := playground.LookupScenario(spec.Scenario)
	if err != nil {
		return nil // the scenario check reports it
	}
	problems := []error{checkPredict(spec, sc, start)}
	bad := func(g *GoalSpec, format string, args ...any) {
		problems = append(problems, &FieldError{Field: "goals." + g.ID, Err: fmt.Errorf("goal %q: "+format, append([]any{g.ID}, args...)...)})
	}
	for _, g := range spec.Goals {
		if err := g.Check.Check(sc, spec.Handlers); err != nil {
			bad(g, "%s", err.(*playground.InputError).Msg)
			continue
		}
		if g.Check.Met(start, sc, -1) {
			bad(g, "the block's own script already meets %q: the goal would be met before the learner does anything", g.Check.String())
		}
		tr, err := run(g.Solution)
		switch {
		case err != nil:
			bad(g, "its solution does not run: %v", err)
		case !g.Check.Met(tr, sc, -1):
			bad(g, "its solution %q does not meet %q, so lint cannot show the goal is reachable", g.Solution, g.Check.String())
		}
	}
	return errors.Join(problems...)
}

// renderBlockText renders the text of a block's goals (task, done) and
// prediction (question, choices, whys) as one paragraph of inline HTML each.
func (l *loader) renderBlockText(spec *PlaygroundSpec, src *DirectiveSource) error {
	var problems []Problem
	renderAt := func(who string, bodyLine int) func(key, markdown string) string {
		return func(key, markdown string) string {
			if markdown == "" {
				return ""
			}
			html, linkProblems := l.renderInline("playground: "+who, markdown, src, bodyLine)
			problems = append(problems, linkProblems...)
			inline, ok := singleParagraph(html)
			if !ok {
				problems = append(problems, src.Problem(bodyLine, "playground: %s: %s must be one paragraph of text", who, key))
			}
			return inline
		}
	}
	for _, g := range spec.Goals {
		if first, dup := l.goalIDs[src.File+"/"+g.ID]; dup && first != g.Line {
			problems = append(problems, src.Problem(g.Line-src.Line, "playground: goal id %q is already used on line %d: goal ids are unique within a lesson", g.ID, first))
		}
		l.goalIDs[src.File+"/"+g.ID] = g.Line
		render := renderAt("goal "+g.ID, g.Line-src.Line)
		g.TaskHTML, g.DoneHTML = render("task", g.Task), render("done", g.Done)
	}
	if p := spec.Predict; p != nil {
		render := renderAt("predict", spec.FieldLine("predict")-src.Line)
		p.QuestionHTML = render("question", p.Question)
		for i := range p.Choices {
			p.Choices[i].HTML, p.Choices[i].WhyHTML = render("choice", p.Choices[i].Text), render("why", p.Choices[i].Why)
		}
	}
	if len(problems) > 0 {
		return &LoadError{Problems: problems}
	}
	return nil
}
