package exercise

import (
	"errors"
	"idemlab/web/site"
	"net/http"
	"strconv"

	"idemlab/internal/english"
	"idemlab/playground"
)

// Checking an exercise on PostgreSQL: with PostgreSQL ledgers
// (Config.Ledgers), the exercise form offers the same choice of ledger as
// the playground's switch, as a ledger field that /exercises/{id}/check
// and /api/v1/check both read (absent or "sqlite": SQLite). The check runs
// on the server's ledgers (playground.CheckOn) and its counterexample
// replays on the same ledger (ledger=… in the playground link).

// exerciseLedgerLabels name the ledgers in the exercise form's choice.
var exerciseLedgerLabels = map[string]string{
	"sqlite":                "SQLite",
	"postgres-rc":           "PostgreSQL, READ COMMITTED",
	"postgres-rr":           "PostgreSQL, REPEATABLE READ",
	"postgres-serializable": "PostgreSQL, SERIALIZABLE",
}

// checkLedger reads a check request's ledger field: a 400 on the field
// "ledger" for a name that is not a ledger, or one this server lacks. It
// returns the ledger and its name for the form ("" for SQLite).
func (c *Checker) checkLedger(r *http.Request) (playground.Ledger, string, error) {
	name := r.PostForm.Get("ledger")
	lg, err := playground.ParseLedger(name, c.deps.Ledgers)
	if err != nil {
		var ie *playground.InputError
		if errors.As(err, &ie) {
			return lg, "", &site.Error{Status: http.StatusBadRequest, Field: "ledger", Message: "ledger: " + ie.Msg}
		}
		return lg, "", err
	}
	if lg.Postgres == nil {
		return lg, "", nil
	}
	return lg, lg.Name(), nil
}

// ledgerOption is one choice of the exercise form's ledger select.
type ledgerOption struct {
	Name, Label string
	Selected    bool
}

// exerciseLedgerOptions is the form's choice of ledger, current selected;
// nil when the server has no PostgreSQL ledgers.
func exerciseLedgerOptions(v *site.View, current string) []ledgerOption {
	if v.Ledgers == nil {
		return nil
	}
	var out []ledgerOption
	for _, name := range playground.LedgerNames() {
		out = append(out, ledgerOption{Name: name, Label: exerciseLedgerLabels[name], Selected: name == current || current == "" && name == "sqlite"})
	}
	return out
}

// passHeadline is the pass verdict's headline: the schedules counted on
// SQLite; on PostgreSQL, where the checker leaves out mirror images of
// schedules and does not count them, the ledger it held on.
func passHeadline(res *playground.CheckResult) string {
	if res.Ledger == "" {
		return "Holds in all " + strconv.FormatInt(res.NaiveSchedules, 10) + " schedules"
	}
	return "Holds on " + exerciseLedgerLabels[res.Ledger] + " in every schedule within the bounds"
}

// passDetail follows the headline.
func passDetail(res *playground.CheckResult) string {
	d := english.Plural(res.DistinctStates, "distinct state", "distinct states") + " explored"
	if res.Ledger != "" {
		d += " on real PostgreSQL sessions"
	}
	return d + "."
}

// counterexampleOn says where a counterexample breaks the handler when
// it is not SQLite: " on PostgreSQL, READ COMMITTED".
func counterexampleOn(ce *playground.Counterexample) string {
	if ce.Ledger == "" {
		return ""
	}
	return " on " + exerciseLedgerLabels[ce.Ledger]
}
