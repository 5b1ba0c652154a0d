package lessons

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"idemlab/playground"
)

// exerciseRequiredKeys must be present in every ```exercise block; the other
// keys (bounds, hints) may be left out.
var exerciseRequiredKeys = []string{"id", "title", "goal", "scenarios", "invariants", "start", "solution"}

// exerciseCheckTimeout bounds one playground.Check at load time: the
// built-in exercises check in well under a second, so a check this long is
// an exercise worth reporting rather than a lint that hangs.
const exerciseCheckTimeout = time.Minute

// ParseExerciseSpec parses and validates the YAML body of an ```exercise
// block: keys are exactly playground.Exercise's YAML keys (an unknown key is
// a problem, a likely typo named), each value has the right type, the
// required keys are present, the starting script and the solution parse as
// handler scripts, and playground's Exercise.Validate accepts the rest.
// Every problem is placed on the line of the key to blame, or of the
// handler line inside start and solution.
//
// It neither checks that ids are unique (Load does, across the course) nor
// runs the checker (Load does when Options.CheckExercises is set).
//
// fenceLine is the file line of the opening fence; the YAML starts on the
// next line. The returned error, if any, is a *LoadError.
func ParseExerciseSpec(body []byte, file string, fenceLine int) (*ExerciseSpec, error) {
	body = normalizeNewlines(body)
	spec := &ExerciseSpec{Exercise: &playground.Exercise{}, File: file, Line: fenceLine, fieldLines: map[string]int{}}
	p := &exerciseParser{spec: spec, lastLine: bytes.Count(body, []byte("\n")) + 1}
	root, err := parseYAMLNode(body)
	if err != nil {
		line, msg := yamlErrorPosition(err, body)
		p.bad(line, "invalid YAML: "+msg)
		return nil, p.err()
	}
	const want = "a YAML mapping of " + "id, title, goal, scenarios, invariants, bounds, start, solution and hints (or, for an inverse exercise, break or break_handler instead of solution)"
	if root == nil || (root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null") {
		p.problems = append(p.problems, Problem{File: file, Line: fenceLine, Msg: "exercise: the block is empty: want " + want})
		return nil, p.err()
	}
	if root.Kind != yaml.MappingNode {
		p.bad(root.Line, "want "+want+", not "+describeYAML(root))
		return nil, p.err()
	}
	typos := map[string]bool{}
	p.decodeStruct(root, reflect.ValueOf(spec.Exercise).Elem(), "", typos)
	required := exerciseRequiredKeys
	if spec.IsInverse() {
		required = inverseRequiredKeys
	}
	for _, key := range required {
		if _, ok := spec.fieldLines[key]; !ok && !typos[key] {
			p.problems = append(p.problems, Problem{File: file, Line: fenceLine, Msg: fmt.Sprintf("exercise: missing %q", key)})
		}
	}
	if len(p.problems) > 0 {
		return nil, p.err()
	}

	// The handler scripts first, so that a mistake points at its own line.
	badScript := map[string]bool{}
	handlerFields := []string{"start", "solution"}
	if spec.IsInverse() { // a script of events to start with, and the handler to break
		badScript, handlerFields = p.inverseScripts(), nil
	}
	for _, field := range handlerFields {
		source := spec.Start
		if field == "solution" {
			source = spec.Solution
		}
		if _, line, msg := parseHandlerLine(source); msg != "" {
			badScript[field] = true
			p.problems = append(p.problems, Problem{File: file, Line: spec.scriptLine(field, line),
				Msg: fmt.Sprintf("exercise %s: %s: %s", spec.ID, field, msg)})
		}
	}
	if err := spec.Validate(); err != nil {
		field, msg := splitValidateError(err.Error(), spec.ID)
		if !badScript[field] {
			p.problems = append(p.problems, Problem{File: file, Line: spec.FieldLine(field), Msg: msg})
		}
	}
	if len(p.problems) > 0 {
		return nil, p.err()
	}
	return spec, nil
}

// parseHandlerLine parses a handler script and splits a failure into the
// script's line (0 when none) and the message without the handler's name.
func parseHandlerLine(source string) (*playground.Handler, int, string) {
	h, err := playground.ParseHandler("mine", source)
	if err == nil {
		return h, 0, ""
	}
	msg := err.Error()
	var input *playground.InputError
	if errors.As(err, &input) {
		msg = input.Msg
	}
	msg = strings.TrimPrefix(msg, "handler mine")
	line := 0
	if n, rest, ok := cutLinePrefix(strings.TrimPrefix(msg, ", ")); ok {
		line, msg = n, rest
	}
	return nil, line, strings.TrimPrefix(msg, ": ")
}

// cutLinePrefix splits "line 4: text" into 4 and "text".
func cutLinePrefix(s string) (int, string, bool) {
	var n int
	rest, found := strings.CutPrefix(s, "line ")
	if !found {
		return 0, s, false
	}
	digits, text, found := strings.Cut(rest, ": ")
	if _, err := fmt.Sscanf(digits, "%d", &n); err != nil || !found || n < 1 {
		return 0, s, false
	}
	return n, text, true
}

// splitValidateError finds the field an Exercise.Validate message blames:
// "exercise ID: bounds.workers: 4; …" → "bounds.workers". The message is
// kept whole.
func splitValidateError(msg, id string) (field, whole string) {
	if rest, ok := strings.CutPrefix(msg, "exercise: id "); ok {
		_ = rest
		return "id", msg
	}
	rest := strings.TrimPrefix(msg, "exercise "+id+": ")
	field, _, _ = strings.Cut(rest, ": ")
	if i := strings.IndexByte(field, '['); i > 0 { // hints[2]
		field = field[:i]
	}
	return field, msg
}

// FieldLine returns the file line of one of the exercise's keys ("goal",
// "bounds.workers", …), else of its parent key, else of the opening fence.
func (s *ExerciseSpec) FieldLine(field string) int {
	for field != "" {
		if line, ok := s.fieldLines[field]; ok {
			return line
		}
		i := strings.LastIndexByte(field, '.')
		if i < 0 {
			break
		}
		field = field[:i]
	}
	return s.Line
}

// scriptLine is the file line of line n (1-based) of the start or solution
// script, when the script is a literal block (start: |) whose lines map one
// to one onto the file; else the key's line.
func (s *ExerciseSpec) scriptLine(field string, n int) int {
	first, ok := s.scriptStart[field]
	if !ok || n < 1 {
		return s.FieldLine(field)
	}
	return first + n - 1
}

// exerciseParser decodes the YAML of one block, field by field, so that
// every problem has the line of its key.
type exerciseParser struct {
	spec     *ExerciseSpec
	lastLine int
	problems []Problem
}

func (p *exerciseParser) bad(yamlLine int, msg string) {
	p.problems = append(p.problems, Problem{File: p.spec.File, Line: p.spec.Line + min(max(yamlLine, 1), p.lastLine), Msg: "exercise: " + msg})
}

func (p *exerciseParser) err() error { return &LoadError{Problems: p.problems} }

// yamlKeys lists the yaml tags of a struct's fields, in declaration order,
// with the index of each field.
func yamlKeys(t reflect.Type) ([]string, map[string]int) {
	var keys []string
	index := map[string]int{}
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		keys = append(keys, tag)
		index[tag] = i
	}
	return keys, index
}

// decodeStruct decodes a mapping into a struct whose fields carry yaml tags
// (playground.Exercise, then its bounds): unknown keys, repeated keys and
// values of the wrong type are problems on their own lines.
func (p *exerciseParser) decodeStruct(node *yaml.Node, dst reflect.Value, prefix string, typos map[string]bool) {
	keys, index := yamlKeys(dst.Type())
	for _, f := range mappingFields(node, p.spec.Line, p.bad) {
		name := prefix + f.Key
		i, known := index[f.Key]
		if !known {
			if prefix == "" {
				p.bad(f.Line, unknownWord("key", f.Key, keys))
			} else {
				p.bad(f.Line, strings.TrimSuffix(prefix, ".")+": "+unknownWord("key", f.Key, keys))
			}
			if guess := closestWord(f.Key, keys); guess != "" {
				typos[prefix+guess] = true
			}
			continue
		}
		p.spec.fieldLines[name] = p.spec.Line + f.Line
		field := dst.Field(i)
		if field.Kind() == reflect.Struct {
			if f.Value.Kind != yaml.MappingNode {
				p.bad(f.Line, fmt.Sprintf("%s must be a mapping, not %s", name, describeYAML(f.Value)))
				continue
			}
			p.decodeStruct(f.Value, field, name+".", typos)
			continue
		}
		if msg := p.decodeValue(name, f.Value, field); msg != "" {
			p.bad(f.Line, msg)
			continue
		}
		if name == "start" || name == "solution" || name == "break_handler" {
			p.rememberScript(name, f.Value)
		}
	}
}

// decodeValue checks a value's YAML type against the field's Go type, then
// decodes it; it returns what is wrong, or "".
func (p *exerciseParser) decodeValue(name string, v *yaml.Node, field reflect.Value) string {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return name + " is empty"
	}
	scalarTag := func(t reflect.Type) (tag, word string) {
		switch t.Kind() {
		case reflect.String:
			return "!!str", "a string"
		case reflect.Int, reflect.Int64:
			return "!!int", "a whole number"
		case reflect.Bool:
			return "!!bool", "true or false"
		}
		return "", "a value"
	}
	t := field.Type()
	if t.Kind() == reflect.Slice {
		if v.Kind != yaml.SequenceNode {
			return fmt.Sprintf("%s must be a list, not %s", name, describeYAML(v))
		}
		tag, word := scalarTag(t.Elem())
		for i, item := range v.Content {
			item = resolveAlias(item)
			if item.Kind != yaml.ScalarNode || item.ShortTag() != tag {
				return fmt.Sprintf("%s item %d must be %s, not %s", name, i+1, word, describeYAML(item))
			}
		}
	} else if tag, word := scalarTag(t); v.Kind != yaml.ScalarNode || v.ShortTag() != tag {
		return fmt.Sprintf("%s must be %s, not %s", name, word, describeYAML(v))
	}
	if err := v.Decode(field.Addr().Interface()); err != nil {
		var typeErr *yaml.TypeError
		if errors.As(err, &typeErr) && len(typeErr.Errors) > 0 {
			err = errors.New(typeErr.Errors[0])
		}
		return fmt.Sprintf("%s: %v", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return ""
}

// rememberScript records where the lines of a literal block script start,
// so that a handler error can name its file line.
func (p *exerciseParser) rememberScript(name string, v *yaml.Node) {
	if v.Style&yaml.LiteralStyle == 0 {
		return
	}
	if p.spec.scriptStart == nil {
		p.spec.scriptStart = map[string]int{}
	}
	// A literal block's text starts on the line after its "|" indicator.
	p.spec.scriptStart[name] = p.spec.Line + v.Line + 1
}

// exerciseDirective is the built-in ```exercise directive. Ids must be
// unique across the course: the loader remembers where each was defined.
func (l *loader) exerciseDirective() Directive {
	return Directive{
		Kind: "exercise",
		Parse: func(src *DirectiveSource) (DirectiveOutput, error) {
			spec, err := ParseExerciseSpec(src.Body, src.File, src.Line)
			if err != nil {
				return DirectiveOutput{}, err
			}
			spec.Lesson = src.Lesson
			if first, dup := l.exerciseIDs[spec.ID]; dup {
				return DirectiveOutput{}, Problem{File: src.File, Line: spec.FieldLine("id"),
					Msg: fmt.Sprintf("exercise: id %q is already used by the exercise at %s", spec.ID, first)}
			}
			l.exerciseIDs[spec.ID] = fmt.Sprintf("%s:%d", src.File, src.Line)
			return DirectiveOutput{Value: spec}, nil
		},
	}
}

// checkExercises runs the checker on every exercise of the course: the
// solution must hold in all schedules and the starting script must not (its
// counterexample is what the learner fixes). Checks run in parallel, one
// per CPU; problems come back in course order.
func checkExercises(specs []*ExerciseSpec) []Problem {
	type job struct {
		spec  *ExerciseSpec
		field string
	}
	var jobs []job
	for _, spec := range specs {
		if spec.IsInverse() {
			jobs = append(jobs, job{spec, "break"})
			continue
		}
		jobs = append(jobs, job{spec, "solution"}, job{spec, "start"})
	}
	found := make([]*Problem, len(jobs)) // one slot per job: no lock needed
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			found[i] = checkExerciseScript(j.spec, j.field)
		}()
	}
	wg.Wait()
	var problems []Problem
	for _, p := range found {
		if p != nil {
			problems = append(problems, *p)
		}
	}
	return problems
}

// checkExerciseScript checks one of the exercise's two scripts and returns
// the problem when the solution does not pass or the start does.
func checkExerciseScript(spec *ExerciseSpec, field string) *Problem {
	ctx, cancel := context.WithTimeout(context.Background(), exerciseCheckTimeout)
	defer cancel()
	if spec.IsInverse() {
		return checkInverse(ctx, spec)
	}
	source := spec.Solution
	if field == "start" {
		source = spec.Start
	}
	res, err := playground.Check(ctx, spec.Exercise, source)
	at := func(line int, format string, args ...any) *Problem {
		return &Problem{File: spec.File, Line: line, Msg: fmt.Sprintf("exercise %s: %s: ", spec.ID, field) + fmt.Sprintf(format, args...)}
	}
	switch {
	case err != nil:
		return at(spec.FieldLine(field), "the checker failed: %v", err)
	case field == "solution" && res.Error != nil:
		return at(spec.scriptLine(field, res.Error.Line), "the solution does not pass: %s", res.Error.Message)
	case field == "solution" && !res.Passed:
		return at(spec.FieldLine(field), "the solution does not pass: %s (schedule: %s)", res.Counterexample.Story, res.Counterexample.Script)
	case field == "start" && res.Passed:
		return at(spec.FieldLine(field), "the starting script already holds in all %d schedules: there is nothing for the learner to fix", res.NaiveSchedules)
	case field == "start" && res.Counterexample == nil:
		msg := "no schedule completed"
		line := 0
		if res.Error != nil {
			msg, line = res.Error.Message, res.Error.Line
		}
		return at(spec.scriptLine(field, line), "the starting script must fail by a schedule that breaks an invariant, not by an error: %s", msg)
	}
	return nil
}

// Exercise returns the exercise with this id, or nil.
func (c *Course) Exercise(id string) *ExerciseSpec {
	if c.exercises != nil {
		return c.exercises[id]
	}
	for _, l := range c.Lessons { // a Course built by hand
		for _, e := range l.Exercises {
			if e.ID == id {
				return e
			}
		}
	}
	return nil
}

// Exercises returns every exercise of the course, in course order.
func (c *Course) Exercises() []*ExerciseSpec {
	var all []*ExerciseSpec
	for _, l := range c.Lessons {
		all = append(all, l.Exercises...)
	}
	return all
}
