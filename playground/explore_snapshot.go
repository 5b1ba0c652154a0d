package playground

// exploreSnapshot is a run's state at a node where no worker holds a
// message (on PostgreSQL: where no transaction is open, pgSnapshotJobs):
// the ledger's image, and the Go state of the run.
type exploreSnapshot struct {
	jobs      map[string]pgSnapshotJob // worker → the message it holds (PostgreSQL)
	ledger    *ledgerImage
	now       int64
	event     int
	blockSeq  int
	log       []string
	delivered map[string]bool
	fx        *effectLedger
	msgs      map[string][]brokerCopy // message → its copies
	filters   map[string]map[string]bool
	steps     []Step
}

// snapshot copies a quiescent run; it returns nil when a worker is busy or
// a transaction is open, or when the copy fails (the caller replays).
func (x *explorer) snapshot(s *sim) *exploreSnapshot {
	if x.fresh {
		return nil
	}
	for _, w := range s.workers {
		if w.job != nil && !pgSnapshotJobs(s) || w.blockedAt > 0 {
			return nil
		}
	}
	if !s.l.quiet() {
		return nil
	}
	im, err := x.image(s.l)
	if err != nil {
		return nil
	}
	snap := &exploreSnapshot{ledger: im,
		now: s.now, event: s.event, blockSeq: s.blockSeq, log: append([]string(nil), s.log...),
		delivered: map[string]bool{}, fx: s.fx.clone(), msgs: map[string][]brokerCopy{},
		filters: map[string]map[string]bool{}, steps: s.steps[:len(s.steps):len(s.steps)], jobs: snapshotJobs(s)}
	for k, v := range s.delivered {
		snap.delivered[k] = v
	}
	for k, m := range s.msgs {
		cs := make([]brokerCopy, len(m.copies))
		for i, c := range m.copies {
			cs[i] = *c
		}
		snap.msgs[k] = cs
	}
	for _, w := range s.workers {
		f := make(map[string]bool, len(w.filter))
		for id := range w.filter {
			f[id] = true
		}
		snap.filters[w.name] = f
	}
	return snap
}

func (snap *exploreSnapshot) close() {
	if snap != nil {
		snap.ledger.close()
	}
}

// restore rebuilds the run at the snapshot on the spare ledger (or a new
// one); nil when that fails (the caller replays).
func (x *explorer) restore(snap *exploreSnapshot) *sim {
	if x.lg.Postgres != nil {
		s := x.pgRestore(snap.ledger)
		if s == nil {
			return nil
		}
		s = snap.restoreInto(s)
		x.pgMark(s)
		return s
	}
	l := x.spare
	x.spare = nil
	if l == nil {
		s, err := x.newSim()
		if err != nil {
			return nil
		}
		x.runs-- // counted below
		l = s.l
	}
	x.runs++
	if err := l.reset(snap.ledger); err != nil {
		l.close()
		return nil
	}
	return snap.restoreInto(x.resume(l))
}

// restoreInto gives a run over a ledger reset to the snapshot's rows the
// snapshot's Go state.
func (snap *exploreSnapshot) restoreInto(s *sim) *sim {
	s.now, s.event, s.blockSeq = snap.now, snap.event, snap.blockSeq
	s.log = append([]string(nil), snap.log...)
	s.steps = snap.steps
	for k, v := range snap.delivered {
		s.delivered[k] = v
	}
	s.fx = snap.fx.clone()
	for k, cs := range snap.msgs {
		m := s.msgs[k]
		m.copies = make([]*brokerCopy, len(cs))
		for i := range cs {
			c := cs[i]
			m.copies[i] = &c
		}
	}
	for _, w := range s.workers {
		for id := range snap.filters[w.name] {
			w.remember(id)
		}
		if j, ok := snap.jobs[w.name]; ok {
			w.job = j.restore(s)
		}
	}
	return s
}

// releaseSpare closes the explorer's spare ledger, if it kept one.
func (x *explorer) releaseSpare() {
	if x.spare != nil {
		releaseLedger(x.spare, true)
		x.spare = nil
	}
}
