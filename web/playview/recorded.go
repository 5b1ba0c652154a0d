package playview

import (
	"idemlab/lessons"
	"idemlab/playground"
	"idemlab/web/playurl"
	"idemlab/web/site"
)

// A lesson block that runs on PostgreSQL (ledger: postgres-rc…), on a
// server without PostgreSQL ledgers, shows the run recorded on a real
// server (lessons.Recording) instead of running anywhere: labelled as
// recorded, with no controls (each would ask for a run this server cannot
// make), and a link to play the same script live on SQLite. It is never
// run on SQLite in its place.

// isolationWords names a PostgreSQL ledger's isolation level as
// PostgreSQL's documentation writes it.
var isolationWords = map[string]string{
	"postgres-rc":           "READ COMMITTED",
	"postgres-rr":           "REPEATABLE READ",
	"postgres-serializable": "SERIALIZABLE",
}

// recordedView is what a recorded block adds to its playground view.
type recordedView struct {
	Isolation  string // READ COMMITTED
	Path       string // the recording, in the lessons folder
	SQLiteHref string // the same script, live on SQLite
}

// recordedBlockView is the view of a PostgreSQL block's recording, or nil
// when the block has none (the lessons package reports that at load).
func recordedBlockView(v *site.View, place playurl.Place, sc *playground.Scenario, spec *lessons.PlaygroundSpec) *View {
	rec := spec.Recorded
	if rec == nil {
		return nil
	}
	state := place.Home
	state.Panels = playurl.PanelSteps | playurl.PanelSQL // the step list is the transcript; the SQL facts hold PostgreSQL's errors
	pv := NewView(v, place, state, rec.Trace, sc)
	onSQLite := place.Home
	onSQLite.Ledger = ""
	pv.recorded = &recordedView{Isolation: isolationWords[spec.Ledger], Path: rec.Path, SQLiteHref: v.Path(place.Href(onSQLite))}
	return pv
}

// recordedInstead is the recorded view of a PostgreSQL block's own run
// asked for by URL (a permalink, the query spelled out) on a server
// without PostgreSQL; nil for any other state, which runs as usual (and a
// PostgreSQL one is refused with a message naming -ledger-database).
func recordedInstead(v *site.View, place playurl.Place, sc *playground.Scenario, state playurl.State) *View {
	if v.Ledgers != nil || place.Spec == nil || place.Spec.Ledger == "" || !state.SameRun(place.Home) {
		return nil
	}
	return recordedBlockView(v, place, sc, place.Spec)
}

// caption is the lesson block's caption, when the playground shows the
// block's own ledger: a caption tells what happens on that database, and
// would mislead under a run on another ("" then, and outside a lesson).
func (pv *View) caption() string {
	if pv.spec == nil || pv.state.Ledger != pv.spec.Ledger {
		return ""
	}
	return pv.spec.Caption
}
