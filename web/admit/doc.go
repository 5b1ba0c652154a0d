// Package admit is the one admission path of everything that runs SQL: a
// bounded number of runs compute at once (Slots), a request waits its
// turn for at most QueueWait and is answered busy after; identical runs
// in flight are computed once and shared (they are pure functions), and
// their answers are kept in a run cache sized by bytes; each client has a
// fair share (RateLimiter, charged by the CPU a run used, and in a
// workshop room by seat, with an address's ceiling growing with its seats
// up to a bound); each client holds at most its share of what is held at
// once (holds.go: one check, one PostgreSQL ledger, a quarter of the slots);
// a check is admitted and charged as a run is (Admission.Check); a run is
// held to its playground.Budget; and a run on a PostgreSQL ledger first
// passes that ledger's gate (LedgerGate), so that the database's
// connections are never oversubscribed.
//
// The web layer names a request's client once (RateLimiter.WithClient,
// after WithSeat or with RateLimiter.Seats set), and the rest follows from
// the request's context.
//
// admit knows what an answer is (a body and its status), not what it
// draws: the feature packages hand it the function that computes one.
package admit
