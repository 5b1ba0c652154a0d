package playground

import (
	"fmt"
	"strconv"
	"strings"
)

// deadLetters tells which messages the broker gave up on.
func (x *explorer) deadLetters(s *sim) string {
	var out string
	for _, id := range x.msgs {
		for _, c := range s.msgs[id].copies {
			if !c.acked && c.deliveries >= s.sc.Settings.MaxDeliveries {
				out += fmt.Sprintf("; after %d deliveries %s goes to the dead-letter queue", c.deliveries, id)
			}
		}
	}
	return out
}

// exploreStory tells a schedule in one line from what the run did.
func exploreStory(s *sim, events []Event) string {
	parts := make([]string, 0, len(events))
	sent := map[string]bool{}
	for i, ev := range events {
		var steps []Step
		for _, st := range s.steps {
			if st.Event == i+1 {
				steps = append(steps, st)
			}
		}
		worker, copyNote := ev.Worker, false
		for _, st := range steps {
			if st.Kind == StepDeliver {
				worker, copyNote = st.Worker, strings.Contains(st.Note, "second copy")
				break
			}
		}
		var p string
		switch ev.Kind {
		case EventDeliver:
			p = "deliver " + ev.Message + " to " + worker
			if copyNote {
				p = "the broker hands a second copy of " + ev.Message + " to " + worker
			}
		case EventRedeliver:
			p = "redeliver " + ev.Message + " to " + worker
		case EventPublish:
			p = "the producer sends " + ev.Message + " again, to " + worker
			if !sent[ev.Message] {
				p = "the producer sends " + ev.Message + " to " + worker
			}
		case EventStart:
			p = worker + " receives " + ev.Message
			if copyNote {
				p = worker + " receives a second copy of " + ev.Message
			}
		case EventStep:
			p = stepStory(ev.Worker, steps)
		case EventFinish:
			p = ev.Worker + " runs to the end"
		case EventCrash:
			p = ev.Worker + " crashes"
		case EventExpire:
			p = ev.Message + "'s lease runs out"
		case EventRestart:
			p = ev.Worker + " restarts"
		case EventReplay:
			p = "the topic is replayed from offset 0"
		case EventPrune:
			p = "the janitor prunes the dedupe table"
		case EventAdvance:
			p = fmt.Sprintf("%d %ss pass", ev.N, s.sc.TickUnit)
		default:
			p = ev.String()
		}
		if ev.Kind == EventDeliver || ev.Kind == EventRedeliver || ev.Kind == EventPublish {
			p += stopStory(steps)
		}
		switch ev.Fault {
		case FaultLoseAck:
			p += "; " + worker + "'s ack is lost"
		case FaultCrashBeforeAck:
			p += "; " + worker + " crashes before acking"
		case FaultCrashAfter:
			p += fmt.Sprintf("; %s crashes after step %d", worker, ev.FaultAfter)
		}
		parts = append(parts, p)
		if ev.Message != "" {
			sent[ev.Message] = true
		}
	}
	return strings.Join(parts, "; ")
}

// stopStory tells where a whole delivery's handler stopped early, and
// why: ", which stops at line 3 (no rows changed)"; "" when it ran to the end.
func stopStory(steps []Step) string {
	line := 0
	for _, st := range steps {
		switch {
		case st.Kind == StepSQL:
			line = st.Line
		case st.Kind == StepStop && line > 0:
			why := "no rows changed"
			if strings.HasPrefix(st.Note, "found a row") {
				why = "it found a row"
			}
			return fmt.Sprintf(", whose handler stops at line %d (%s)", line, why)
		}
	}
	return ""
}

func stepStory(w string, steps []Step) string {
	var lines, then []string
	for _, st := range steps {
		switch st.Kind {
		case StepSQL:
			l := strconv.Itoa(st.Line)
			if st.Error != "" {
				l += ", which fails (" + cleanSQLError(st.Error) + ")"
			}
			lines = append(lines, l)
		case StepBlocked:
			then = append(then, "waits for a lock")
		case StepAck:
			then = append(then, "acks")
		case StepAckRefused:
			then = append(then, "acks with a receipt handle no longer the latest: nothing is deleted")
		case StepStop:
			then = append(then, "stops")
		}
	}
	var parts []string
	switch len(lines) {
	case 0:
	case 1:
		parts = append(parts, "runs line "+lines[0])
	default:
		parts = append(parts, "runs lines "+joinAnd(lines))
	}
	parts = append(parts, then...)
	if len(parts) == 0 {
		return w + " steps"
	}
	return w + " " + strings.Join(parts, ", then ")
}

func joinAnd(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// cleanSQLError drops the driver's prefix and result code from an error:
// "constraint failed: UNIQUE constraint failed: t.c (1555)" → "UNIQUE constraint failed: t.c".
func cleanSQLError(msg string) string {
	// SQLite's busy codes are the point of such an error: named, as the
	// step's note names them, not dropped.
	switch msg {
	case "database is locked (5) (SQLITE_BUSY)":
		return "database is locked: SQLITE_BUSY"
	case "database is locked (517)":
		return "database is locked: SQLITE_BUSY_SNAPSHOT"
	}
	if i := strings.LastIndex(msg, " ("); i > 0 && strings.HasSuffix(msg, ")") {
		if _, err := strconv.Atoi(msg[i+2 : len(msg)-1]); err == nil {
			msg = msg[:i]
		}
	}
	for _, p := range []string{"constraint failed: ", "SQL logic error: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}
