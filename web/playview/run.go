package playview

import (
	"context"
	"encoding/json"
	"idemlab/web/admit"
	"idemlab/web/playurl"
	"idemlab/web/site"
	"net/http"
	"net/url"
	"time"

	"github.com/a-h/templ"

	"idemlab/playground"
)

// serveRun answers a request that runs SQL through the admission path
// (admission.go): the client's share first, then the cache, a computation
// in flight, or a new one in a slot. Refusals are errors for the one error
// path (busy 503, rate 429, both with Retry-After); a run over its budget is
// an answer (422) that compute rendered.
func (s *Pages) ServeRun(w http.ResponseWriter, r *http.Request, compute admit.ComputeFunc) error {
	client, err := s.AdmitClient(r)
	if err != nil {
		return err
	}
	key := r.URL.Path + "?" + r.URL.RawQuery
	out, source, err := s.Adm.Run(s.onLedger(r), key, site.AcceptsGzip(r.Header.Get("Accept-Encoding")), compute)
	if err != nil {
		return err
	}
	if source == "miss" {
		// An expensive run's client pays for its CPU in tokens, and a run
		// over its budget costs half a burst more: asking for too much is
		// what an attacker does, and a learner rarely.
		cost := float64(out.CPU / admit.AdmissionCostUnit)
		if out.Refusal != "" {
			cost += admit.RateLimitBurst / 2
		}
		if cost > 0 {
			s.Limiter().Charge(client, cost)
		}
	}
	if out.Refusal != "" {
		s.Metrics.Refused("budget")
	}
	out.Write(w, r)
	return nil
}

// refusalView says why a playground's run was stopped, and where to go.
type refusalView struct {
	limit   string // the budget limit crossed (playground.Limit…, or rendered-bytes)
	message string
	home    string // the playground's start
	undo    string // the state without its last event, or ""
}

// refusedView is the playground of a run stopped at its budget.
func refusedView(v *site.View, place playurl.Place, state playurl.State, limit, message string) *View {
	sc, _ := playground.LookupScenario(state.Scenario) // the run looked it up already
	if sc == nil {
		sc = &playground.Scenario{Name: state.Scenario, Title: state.Scenario}
	}
	pv := &View{id: "playground", Place: place, state: state, scenario: sc, spec: place.Spec, at: -1}
	if place.Block != "" {
		pv.id = place.Block
	}
	pv.self = v.Path(place.Href(state))
	pv.refusal = &refusalView{limit: limit, message: message, home: v.Path(place.Href(place.Home))}
	if len(state.Events) > 1 {
		prev := state
		prev.Events, prev.At = state.Events[:len(state.Events)-1], -1
		pv.refusal.undo = v.Path(place.Href(prev))
	}
	return pv
}

// playgroundCompute runs the playground state a query names (decoded
// already, when the handler could) and renders it with draw. A learner's bad input is drawn in place (resolvePlayground)
// with status 400; a run stopped at its budget, or an answer over
// renderCap, is drawn as the refused playground with status 422.
func (s *Pages) PlaygroundCompute(v *site.View, place playurl.Place, sc *playground.Scenario, q url.Values, decoded *playurl.State, draw func(*View) templ.Component) admit.ComputeFunc {
	return func(ctx context.Context, b *playground.Budget, form admit.AnswerForm) (*admit.Output, error) {
		start := time.Now()
		var used playground.Usage
		pv, state, err := s.resolvePlayground(ctx, b, &used, v, place, sc, q, decoded)
		out := &admit.Output{Status: http.StatusOK, ContentType: site.HTMLContentType}
		if err == nil && pv.problem != nil {
			out.Status = http.StatusBadRequest
		}
		if limit, msg, ok := admit.BudgetMessage(err, s.Adm.RenderCap); ok {
			pv, out.Status, out.Refusal = refusedView(v, place, state, limit, msg), http.StatusUnprocessableEntity, limit
		} else if err != nil {
			return nil, err
		}
		buf := site.RenderBuffers.Take(s.Adm.RenderCap)
		defer site.RenderBuffers.Release(buf)
		err = site.RenderInto(ctx, draw(pv), buf)
		if limit, msg, ok := admit.BudgetMessage(err, s.Adm.RenderCap); ok && out.Refusal == "" {
			pv, out.Status, out.Refusal = refusedView(v, place, state, limit, msg), http.StatusUnprocessableEntity, limit
			err = site.RenderInto(ctx, draw(pv), buf)
		}
		if err != nil {
			return nil, err
		}
		out.Body, out.Took, out.CPU = form.Payload(buf.Bytes()), time.Since(start), used.CPU
		s.Metrics.ObserveRun(out.Took)
		return out, nil
	}
}

// apiRunCompute runs an API request and encodes its trace; a run over its
// budget, or a trace over renderCap, is a 422 whose error names the limit.
func (s *Pages) apiRunCompute(req playground.Request) admit.ComputeFunc {
	return func(ctx context.Context, b *playground.Budget, form admit.AnswerForm) (*admit.Output, error) {
		start := time.Now()
		var used playground.Usage
		req.Budget, req.Usage = b, &used
		tr, err := playground.Run(ctx, req)
		out := &admit.Output{Status: http.StatusOK, ContentType: site.JsonContentType}
		buf := site.RenderBuffers.Take(s.Adm.RenderCap)
		defer site.RenderBuffers.Release(buf)
		if err == nil {
			// As json.Marshal, then a newline; a trace over the cap is
			// refused by buf.
			err = json.NewEncoder(buf).Encode(tr)
		}
		if limit, msg, ok := admit.BudgetMessage(err, s.Adm.RenderCap); ok {
			out.Status, out.Refusal = http.StatusUnprocessableEntity, limit
			buf.Reset()
			err = json.NewEncoder(&buf.Buffer).Encode(site.APIError{Error: msg, Field: "budget", Limit: limit})
		}
		if err != nil {
			return nil, err
		}
		out.Body, out.Took, out.CPU = form.Payload(buf.Bytes()), time.Since(start), used.CPU
		s.Metrics.ObserveRun(out.Took)
		return out, nil
	}
}

// onLedger returns r's context, carrying the ledger gate when r's run is on
// a PostgreSQL ledger of this server (its ledger= names one).
func (s *Pages) onLedger(r *http.Request) context.Context {
	ctx := r.Context()
	if s.LedgerGate == nil {
		return ctx
	}
	lg, err := playground.ParseLedger(r.URL.Query().Get(playurl.KeyLedger), s.Ledgers)
	if err != nil || lg.Postgres == nil {
		return ctx // the run refuses the ledger itself, with a 400
	}
	return admit.WithLedgerGate(ctx, s.LedgerGate)
}
