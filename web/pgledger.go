package web

import "idemlab/playground"

// The ledger switch: with PostgreSQL ledgers (Config.Ledgers), every
// playground offers the same state on SQLite or on PostgreSQL at each
// isolation level, as links (ledger=… in the one codec, pgurl.go).

// ledgerLabels are the switch's labels and titles, in LedgerNames' order.
var ledgerLabels = map[string][2]string{
	"sqlite":                {"SQLite", "Run the script on SQLite, one writer at a time"},
	"postgres-rc":           {"PostgreSQL RC", "Run the same script on PostgreSQL at READ COMMITTED"},
	"postgres-rr":           {"RR", "Run the same script on PostgreSQL at REPEATABLE READ"},
	"postgres-serializable": {"Serializable", "Run the same script on PostgreSQL at SERIALIZABLE"},
}

// ledgerSwitch is one link per ledger to the same state on it; nil when
// the server has no PostgreSQL ledgers.
func ledgerSwitch(v *siteView, place pgPlace, state State) []actionLink {
	if v.ledgers == nil {
		return nil
	}
	var out []actionLink
	for _, name := range playground.LedgerNames() {
		next := state
		next.ledger = name
		if name == "sqlite" {
			next.ledger = ""
		}
		l := ledgerLabels[name]
		out = append(out, actionLink{Label: l[0], Title: l[1], Href: v.path(place.href(next)), Current: next.ledger == state.ledger, TestID: "pg-ledger-" + name})
	}
	return out
}
