// Package admit is the one admission path of everything that runs SQL: a
// bounded number of runs compute at once (Slots), a request waits its
// turn for at most QueueWait and is answered busy after; identical runs
// in flight are computed once and shared (they are pure functions), and
// their answers are kept in a run cache sized by bytes; each client has a
// fair share (RateLimiter, charged by the CPU a run used); a run is held
// to its playground.Budget; and a run on a PostgreSQL ledger first passes
// that ledger's gate (LedgerGate), so that the database's connections are
// never oversubscribed.
//
// admit knows what an answer is (a body and its status), not what it
// draws: the feature packages hand it the function that computes one.
package admit
