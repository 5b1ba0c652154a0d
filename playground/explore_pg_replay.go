package playground

import "slices"

// Replaying less on PostgreSQL. The search rebuilds a state with a
// transaction open by replaying its schedule (a transaction in flight
// cannot be copied), and most of a check's statements are replays. But a
// schedule passes through quiet states, where no transaction is open and
// PostgreSQL's state is its committed rows (explore_pg.go): there a
// snapshot holds everything, the workers' messages in hand included, and
// restoring it is one reset of the ledger to those rows. So a replay
// starts from the deepest quiet state on its path that the search keeps a
// snapshot of (one per quiet state on the path being explored), and runs
// only the events after it: the same run, as the key of each state along
// it says (the key of a quiet state is its committed rows and the run's
// own state, which the snapshot restores whole).

// pgQuietState is a quiet state on the path being explored: the schedule
// that reaches it and its snapshot.
type pgQuietState struct {
	path []Event
	snap *exploreSnapshot
}

// pgReplayFrom restores the deepest quiet state kept on events' path: the
// run there and how many of events it has played; nil and 0 when there is
// none (or on SQLite, where the search keeps none).
func (x *explorer) pgReplayFrom(events []Event) (*sim, int) {
	for i := len(x.quiet) - 1; i >= 0; i-- {
		q := x.quiet[i]
		if len(q.path) <= len(events) && slices.Equal(q.path, events[:len(q.path)]) {
			if s := x.restore(q.snap); s != nil {
				return s, len(q.path)
			}
			return nil, 0
		}
	}
	return nil, 0
}

// pgSnapshotJobs: a snapshot of the run may hold workers mid-handler. On
// PostgreSQL, at a quiet state, a worker's message in hand is only the
// engine's (where it is in the handler, its lease), its session idle. (Not
// on SQLite, whose snapshots keep their rule; nor with a partition, whose
// consumer group a snapshot does not copy.)
func pgSnapshotJobs(s *sim) bool {
	return s.l.pg != nil && s.part == nil
}

// pgSnapshotJob is a worker's message in hand in a snapshot: the job, and
// which copy of its message it holds.
type pgSnapshotJob struct {
	job  job
	copy int // index in the message's copies
}

func snapshotJobs(s *sim) map[string]pgSnapshotJob {
	var out map[string]pgSnapshotJob
	for _, w := range s.workers {
		if w.job == nil {
			continue
		}
		if out == nil {
			out = map[string]pgSnapshotJob{}
		}
		out[w.name] = pgSnapshotJob{job: *w.job, copy: slices.Index(s.msgs[w.job.msg.m.ID].copies, w.job.msg)}
	}
	return out
}

// restore is the job on a run restored from the snapshot, holding that
// run's copy of its message.
func (j pgSnapshotJob) restore(s *sim) *job {
	out := j.job
	out.msg = s.msgs[j.job.msg.m.ID].copies[j.copy]
	return &out
}
