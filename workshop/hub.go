package workshop

import "sync"

// Hub wakes the followers of a room when its events change. It carries no
// events: a woken follower reads what it has not seen from the store, so the
// store stays the one truth (a PostgreSQL backend can wake a Hub from
// LISTEN/NOTIFY across replicas and nothing else changes).
//
// A follower takes the room's signal channel before reading the store and
// waits on it after: an event committed after the read closes that channel,
// so nothing is missed between the two.
type Hub struct {
	mu    sync.Mutex
	rooms map[int64]*roomSignals
}

type roomSignals struct {
	all    chan struct{} // closed on any event
	pushes chan struct{} // closed on events learners receive
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{rooms: make(map[int64]*roomSignals)} }

func (h *Hub) signals(roomID int64) *roomSignals {
	s := h.rooms[roomID]
	if s == nil {
		s = &roomSignals{all: make(chan struct{}), pushes: make(chan struct{})}
		h.rooms[roomID] = s
	}
	return s
}

// Signal returns a channel closed at the room's next event (its next push,
// with pushesOnly).
func (h *Hub) Signal(roomID int64, pushesOnly bool) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.signals(roomID)
	if pushesOnly {
		return s.pushes
	}
	return s.all
}

// Notify wakes the room's followers after an event was committed.
func (h *Hub) Notify(roomID int64, push bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.signals(roomID)
	close(s.all)
	s.all = make(chan struct{})
	if push {
		close(s.pushes)
		s.pushes = make(chan struct{})
	}
}

// NotifyAll wakes every follower of every room, as a listener does after
// a gap in which it may have missed notifications: each reads the store.
func (h *Hub) NotifyAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, s := range h.rooms {
		close(s.all)
		close(s.pushes)
		h.rooms[id] = &roomSignals{all: make(chan struct{}), pushes: make(chan struct{})}
	}
}

// Forget drops a deleted room's signals, waking whoever still follows it.
func (h *Hub) Forget(roomID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.rooms[roomID]; s != nil {
		close(s.all)
		close(s.pushes)
		delete(h.rooms, roomID)
	}
}
