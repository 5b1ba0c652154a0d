package lessons

import (
	"context"
	"errors"
	"fmt"

	"idemlab/playground"
)

// inverseRequiredKeys must be present in an inverse ```exercise block (one
// with break or break_handler): it has no written solution, since the
// checker finds the shortest breaking script, and start is optional.
var inverseRequiredKeys = []string{"id", "title", "goal", "scenarios", "invariants"}

// inverseScripts parses the scripts of an inverse exercise, so that a
// mistake points at its own file line: the handler to break
// (break_handler) and the script the editor opens with (start). It
// returns the fields that failed.
func (p *exerciseParser) inverseScripts() map[string]bool {
	spec := p.spec
	bad := map[string]bool{}
	if spec.BreakHandler != "" {
		if _, line, msg := parseHandlerLine(spec.BreakHandler); msg != "" {
			bad["break_handler"] = true
			p.problems = append(p.problems, Problem{File: spec.File, Line: spec.scriptLine("break_handler", line),
				Msg: fmt.Sprintf("exercise %s: break_handler: %s", spec.ID, msg)})
		}
	}
	if _, err := playground.ParseScript(spec.Start); err != nil {
		bad["start"] = true
		line, msg := 0, err.Error()
		var input *playground.InputError
		if errors.As(err, &input) {
			line, msg = input.Line, input.Msg
		}
		p.problems = append(p.problems, Problem{File: spec.File, Line: spec.scriptLine("start", line),
			Msg: fmt.Sprintf("exercise %s: start: %s", spec.ID, msg)})
	}
	return bad
}

// checkInverse proves an inverse exercise at load time: the handler must
// break within the bounds (else there is nothing for the learner to find),
// and the script the editor opens with must not break it already.
func checkInverse(ctx context.Context, spec *ExerciseSpec) *Problem {
	at := func(field, format string, args ...any) *Problem {
		return &Problem{File: spec.File, Line: spec.FieldLine(field), Msg: fmt.Sprintf("exercise %s: ", spec.ID) + fmt.Sprintf(format, args...)}
	}
	shortest, err := playground.ShortestBreak(ctx, spec.Exercise)
	switch {
	case err != nil:
		return at("bounds", "the checker failed: %v", err)
	case shortest == nil:
		return at("bounds", "the handler holds in every schedule within the bounds: there is nothing for the learner to break; widen the bounds or pick another handler")
	}
	if spec.Start == "" {
		return nil
	}
	res, err := playground.CheckBreak(ctx, spec.Exercise, spec.Start)
	switch {
	case err != nil:
		return at("start", "the checker failed: %v", err)
	case res.Error != nil:
		return &Problem{File: spec.File, Line: spec.scriptLine("start", res.Error.Line), Msg: fmt.Sprintf("exercise %s: start: %s", spec.ID, res.Error.Message)}
	case res.Broken:
		return at("start", "the starting script already breaks the handler (%s): there is nothing left for the learner to find", res.Violation)
	}
	return nil
}
