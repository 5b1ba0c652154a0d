package playground

import (
	"sort"
	"strings"
)

// notIdempotentOn lists the built-in handlers that are idempotent on
// some ledgers and not on others: handler → ledger (postgres-rc…) → why.
// TestHandlers_CatalogueIsProved checks every claim, on every scenario
// that offers the handler.
var notIdempotentOn = map[string]map[string]string{}

// IdempotentOn reports whether the handler is idempotent on the ledger
// ("" or "sqlite" for SQLite, postgres-rc…): its @idempotent claim, less
// the ledgers it is known to fail on.
func (h *Handler) IdempotentOn(ledger string) bool {
	if !h.Idempotent {
		return false
	}
	_, fails := notIdempotentOn[h.Name][ledger]
	return !fails
}

// IdempotentText is the catalogue's answer for `idemlab handlers`: "yes",
// "no", or where it differs: "yes on SQLite; not at postgres-rc: why".
func (h *Handler) IdempotentText() string {
	if !h.Idempotent {
		return "no"
	}
	fails := notIdempotentOn[h.Name]
	if len(fails) == 0 {
		return "yes"
	}
	ledgers := make([]string, 0, len(fails))
	for l := range fails {
		ledgers = append(ledgers, l)
	}
	sort.Strings(ledgers)
	parts := make([]string, len(ledgers))
	for i, l := range ledgers {
		parts[i] = "not at " + l + ": " + fails[l]
	}
	return "yes on SQLite; " + strings.Join(parts, "; ")
}
