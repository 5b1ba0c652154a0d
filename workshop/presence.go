package workshop

import "time"

// Presence: which learners have their room open now. web calls Connect when
// a learner's stream of pushes opens (every page of a learner in a room
// keeps one) and the returned function when it closes. It is this
// process's knowledge: on another replica a learner counts as online while
// their last event is recent (OnlineWindow).

// OnlineWindow is how recent a learner's last event must be for them to
// count as online when no stream of theirs is open on this replica.
const OnlineWindow = 2 * time.Minute

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
		}
	}
}

// Online tells whether the learner has a stream open here, or sent an
// event within OnlineWindow of now.
func (s *Service) Online(p *LearnerProgress, now time.Time) bool {
	s.mu.Lock()
	n := s.streams[p.Learner.ID]
	s.mu.Unlock()
	return n > 0 || now.Sub(p.LastSeen) < OnlineWindow
}
