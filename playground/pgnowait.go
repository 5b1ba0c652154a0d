package playground

// cannotWait: no other session of the run holds a lock that the statement
// sess runs could wait on, so it finishes without waiting, and settle need
// not ask pg_blocking_pids (a query on the monitor's session, as costly as
// a statement) while it runs. Only the checker says so (holdsNothing is
// set for its runs of a handler that takes no lock of its own, pgLocks):
// then a transaction holds locks only on the rows it wrote, which its
// session's uncommitted changes list. Each other session is idle, or in a
// transaction that has written nothing and has no statement in flight (a
// statement in flight may hold what it has written so far; a failed
// transaction may hold rows of its failed statement).
func (pl *pgLedger) cannotWait(sess *pgSession) bool {
	if pl.holdsNothing == nil || pl.l == nil {
		return false
	}
	for _, c := range pl.l.conns {
		o := c.pg
		if o == nil || o == sess {
			continue
		}
		if o.inflight != nil {
			return false
		}
		switch o.conn.TxStatus() {
		case 'I':
		case 'T':
			if len(c.pending) > 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
