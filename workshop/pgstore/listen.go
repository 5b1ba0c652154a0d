package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"idemlab/workshop"
)

// Channel is the NOTIFY channel of workshop events.
const Channel = "idemlab_workshop"

// What a notification announces.
const (
	event   = "event"   // an event followers of the whole room read
	push    = "push"    // an event learners receive too
	deleted = "deleted" // the room is gone
)

// notify queues a notification "ROOM EVENT WHAT" in tx; PostgreSQL sends it
// to every listener when tx commits, and never if it rolls back.
func notify(ctx context.Context, tx pgx.Tx, roomID, eventID int64, what string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, Channel, fmt.Sprintf("%d %d %s", roomID, eventID, what))
	return err
}

// parseNotification reads notify's payload.
func parseNotification(payload string) (roomID, eventID int64, what string, err error) {
	f := strings.Fields(payload)
	if len(f) != 3 {
		return 0, 0, "", fmt.Errorf("pgstore: notification %q: want ROOM EVENT WHAT", payload)
	}
	roomID, err1 := strconv.ParseInt(f[0], 10, 64)
	eventID, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || (f[2] != event && f[2] != push && f[2] != deleted) {
		return 0, 0, "", fmt.Errorf("pgstore: notification %q: want ROOM EVENT WHAT", payload)
	}
	return roomID, eventID, f[2], nil
}

// Reconnect delays of Listen after a lost connection: it starts at the
// first and doubles up to the second.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 2 * time.Second
)

// Listen wakes hub's followers whenever any replica commits an event, until
// ctx ends. It holds one connection of its own (LISTEN needs a session, so
// not the pool's); when that connection is lost it reconnects, and after
// every (re)connection it wakes every room's followers, so that whatever
// was committed while it was away is read from the store.
func (s *Store) Listen(ctx context.Context, hub *workshop.Hub, logger *slog.Logger) {
	delay := listenRetryMin
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, hub, func() { delay = listenRetryMin })
		if ctx.Err() != nil {
			return
		}
		logger.Warn("workshop fan-out lost its PostgreSQL connection; reconnecting", "err", err, "retry_in", delay.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, listenRetryMax)
	}
}

// listenOnce connects, listens and dispatches until the connection fails.
func (s *Store) listenOnce(ctx context.Context, hub *workshop.Hub, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.config.ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{Channel}.Sanitize()); err != nil {
		return err
	}
	connected()
	hub.NotifyAll() // catch up on what was committed while no one listened
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		roomID, _, what, err := parseNotification(n.Payload)
		if err != nil {
			continue // not ours: someone else NOTIFYing on the channel
		}
		if what == deleted {
			hub.Forget(roomID)
		} else {
			hub.Notify(roomID, what == push)
		}
	}
}
