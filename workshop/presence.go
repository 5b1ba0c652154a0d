package workshop

import "time"

// Presence: which learners have their room open now. web calls Connect when
// a learner's stream of pushes opens (every page of a learner in a room
// keeps one) and the returned function when it closes. It is this
// process's knowledge: on another replica a learner counts as online while
// their last event is recent (OnlineWindow).
//
// A stream that closed here, with no event from the learner since, means
// the learner's page lost its connection (a closed tab, a replica gone, a
// network down): they count as disconnected once ReconnectGrace has passed
// without a stream of theirs opening again, which is longer than a page
// takes to reconnect by itself.

// OnlineWindow is how recent a learner's last event must be for them to
// count as online when no stream of theirs is open on this replica.
const OnlineWindow = 2 * time.Minute

// ReconnectGrace is how long a learner whose stream closed here still
// counts as online: their page reconnects within a few seconds.
const ReconnectGrace = 15 * time.Second

// Connect records that one of the learner's streams is open, until the
// returned function is called.
func (s *Service) Connect(learnerID int64) (disconnect func()) {
	s.mu.Lock()
	if s.streams == nil {
		s.streams = make(map[int64]int)
	}
	s.streams[learnerID]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.streams[learnerID]--; s.streams[learnerID] <= 0 {
			delete(s.streams, learnerID)
			if s.lastSeen == nil {
				s.lastSeen = make(map[int64]time.Time)
			}
			s.lastSeen[learnerID] = s.now()
		}
	}
}

// Online tells whether the learner counts as online at now (Presence).
func (s *Service) Online(p *LearnerProgress, now time.Time) bool {
	online, _ := s.Presence(p, now)
	return online
}

// Presence tells whether the learner counts as online at now: a stream of
// theirs is open here; or none closed here since their last event and that
// event is within OnlineWindow; or one closed here within ReconnectGrace.
// lastSeen is when the server last heard of them: now while a stream is
// open, else the later of their last event and their last stream's end.
func (s *Service) Presence(p *LearnerProgress, now time.Time) (online bool, lastSeen time.Time) {
	s.mu.Lock()
	n := s.streams[p.Learner.ID]
	closed, hadStream := s.lastSeen[p.Learner.ID]
	s.mu.Unlock()
	switch {
	case n > 0:
		return true, now
	case hadStream && !closed.Before(p.LastSeen):
		return now.Sub(closed) < ReconnectGrace, closed
	default:
		return now.Sub(p.LastSeen) < OnlineWindow, p.LastSeen
	}
}
