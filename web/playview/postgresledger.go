package playview

import (
	"idemlab/playground"
	"idemlab/web/playurl"
	"idemlab/web/site"
)

// The ledger switch: with PostgreSQL ledgers (Config.Ledgers), every
// playground offers the same state on SQLite or on PostgreSQL at each
// isolation level, as links (ledger=… in the one codec, package playurl).

// ledgerLabels are the switch's labels and titles, in LedgerNames' order.
var ledgerLabels = map[string][2]string{
	"sqlite":                {"SQLite", "Run the script on SQLite, one writer at a time"},
	"postgres-rc":           {"PostgreSQL RC", "Run the same script on PostgreSQL at READ COMMITTED"},
	"postgres-rr":           {"RR", "Run the same script on PostgreSQL at REPEATABLE READ"},
	"postgres-serializable": {"Serializable", "Run the same script on PostgreSQL at SERIALIZABLE"},
}

// ledgerSwitch is one link per ledger to the same state on it; nil when
// the server has no PostgreSQL ledgers.
func ledgerSwitch(v *site.View, place playurl.Place, state playurl.State) []actionLink {
	if v.Ledgers == nil {
		return nil
	}
	var out []actionLink
	for _, name := range playground.LedgerNames() {
		next := state
		next.Ledger = name
		if name == "sqlite" {
			next.Ledger = ""
		}
		l := ledgerLabels[name]
		out = append(out, actionLink{Label: l[0], Title: l[1], Href: v.Path(place.Href(next)), Current: next.Ledger == state.Ledger, TestID: "pg-ledger-" + name})
	}
	return out
}
