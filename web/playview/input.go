package playview

import (
	"context"
	"errors"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"net/url"

	"idemlab/playground"
)

// A learner's mistake in a playground (a script that does not parse, a
// handler that does not compile, a number out of range) never takes them
// off the page: the playground keeps its last good state and shows what
// was wrong under the editor the input came from, with the line. Only a
// link that names no playground at all (an unknown scenario or block) gets
// the error page.

// inputProblem is a learner's rejected input, shown in place.
type inputProblem struct {
	Field   string // script, handler, handlers, n, op, seed, at, to, guess
	Message string // the parser's message, e.g. "event 2: unknown event \"delivr\""
	Line    int    // 1-based line of Text the message is about; 0 if none
	Text    string // the rejected text, put back into its editor (script only)
	Op      string // for n/op: the form it came from (advance or prune)
}

// queryFieldsOf are the query parameters that a field's error came from,
// and so the ones dropped to find the last good state.
var queryFieldsOf = map[string][]string{
	playurl.KeyScript:   {playurl.KeyScript, playurl.KeyWas},
	playurl.KeyHandler:  {playurl.KeyHandler},
	playurl.KeyHandlers: {playurl.KeyHandlers, playurl.KeyChecked},
	playurl.KeyN:        {playurl.KeyOp, playurl.KeyN},
	playurl.KeyOp:       {playurl.KeyOp, playurl.KeyN},
	playurl.KeySeed:     {playurl.KeySeed},
	playurl.KeyAt:       {playurl.KeyAt},
	playurl.KeyTo:       {playurl.KeyTo},
	playurl.KeyShow:     {playurl.KeyShow},
	playurl.KeyOpen:     {playurl.KeyOpen},
	playurl.KeyGuess:    {playurl.KeyGuess},
	playurl.KeyExercise: {playurl.KeyExercise},
}

// resolvePlayground reads a place's state from a query (the caller has
// redirected a non-canonical one already, and passes the state it decoded,
// or nil when the query has a problem) and runs it within the budget,
// adding each run's CPU time to usage. On a learner's bad input it runs the
// last good state and returns the view with its problem set; the error is
// then nil. Other errors (our bugs, a run over its budget, cancelled runs)
// are returned as they are, with the state that was running.
func (s *Pages) resolvePlayground(ctx context.Context, budget *playground.Budget, usage *playground.Usage, v *site.View, place playurl.Place, sc *playground.Scenario, q url.Values, decoded *playurl.State) (*View, playurl.State, error) {
	var problem *inputProblem
	run := func(state playurl.State) (*View, error) {
		var u playground.Usage
		pv, err := s.runPlayground(ctx, budget, &u, v, place, sc, state)
		usage.CPU += u.CPU
		if err == nil {
			pv.problem = problem
		}
		return pv, err
	}
	q = cloneQuery(q)
	for range len(queryFieldsOf) + 1 { // each round drops one more field
		var state playurl.State
		var err error
		if decoded != nil { // the first round's state, as the handler decoded q
			state, decoded = *decoded, nil
		} else {
			state, _, err = playurl.StateFromQuery(q, place.Home, sc.Workers)
		}
		if err == nil {
			var pv *View
			if pv, err = run(state); err == nil {
				return pv, state, nil
			}
		}
		var ie *playground.InputError
		if !errors.As(err, &ie) {
			return nil, state, err
		}
		if problem == nil {
			problem = newInputProblem(ie, q)
		}
		fields, ok := queryFieldsOf[ie.Field]
		if !ok {
			break
		}
		if ie.Field == playurl.KeyScript && q.Has(playurl.KeyWas) {
			q.Set(playurl.KeyScript, q.Get(playurl.KeyWas))
			q.Del(playurl.KeyWas)
			continue
		}
		for _, f := range fields {
			q.Del(f)
		}
	}
	// Nothing the learner sent could be kept: the place's start.
	pv, err := run(place.Home)
	return pv, place.Home, err
}

func newInputProblem(ie *playground.InputError, q url.Values) *inputProblem {
	p := &inputProblem{Field: ie.Field, Message: ie.Msg, Line: ie.Line}
	switch ie.Field {
	case playurl.KeyScript:
		p.Text = q.Get(playurl.KeyScript)
	case playurl.KeyN, playurl.KeyOp:
		p.Op = q.Get(playurl.KeyOp)
	}
	return p
}

func cloneQuery(q url.Values) url.Values {
	out := make(url.Values, len(q))
	for k, vs := range q {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// problemOn reports that the rejected input came from field's editor.
func (pv *View) problemOn(field string) bool {
	return pv.problem != nil && pv.problem.Field == field
}

// problemWhat names the rejected input in the learner's terms.
func problemWhat(p *inputProblem) string {
	switch p.Field {
	case "script":
		return "the script has a mistake"
	case "handler":
		return "your handler has a mistake"
	case "handlers":
		return "that choice of handlers"
	case "n", "op":
		return "that number"
	default:
		return "the link's " + p.Field + " parameter"
	}
}
