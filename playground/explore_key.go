package playground

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
)

// key hashes everything that decides a run's future and its invariants: the
// clock, the broker (per message: deliveries, ack, lease, whether it was
// delivered; the log), each worker (message in hand and where it is in the
// handler, transaction, uncommitted rows, lock wait, in-process filter), the
// committed rows (by value: rowids do not matter to a handler). The budget
// left is not part of it: visit compares budgets instead, so that a state
// reached again with more of some budget left is expanded again.
func (x *explorer) key(s *sim, bud exploreBudget) exploreKey {
	var b bytes.Buffer
	num := func(n int64) { b.WriteString(strconv.FormatInt(n, 10)); b.WriteByte(',') }
	str := func(v string) { b.WriteString(strconv.Quote(v)); b.WriteByte(',') }
	flag := func(v bool) {
		if v {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	num(s.now)
	b.WriteString("|msgs:")
	for i := range s.sc.Messages {
		m := s.msgs[s.sc.Messages[i].ID]
		flag(s.delivered[m.m.ID])
		for _, c := range m.copies {
			b.WriteByte('/')
			num(int64(c.deliveries))
			num(c.leaseEnd)
			flag(c.acked)
			flag(c.dead)
		}
		b.WriteByte(';')
	}
	b.WriteString("|log:")
	for _, id := range s.log {
		str(id)
	}
	blocked := []*worker{}
	for _, w := range s.workers {
		if w.blockedAt > 0 {
			blocked = append(blocked, w)
		}
	}
	sort.Slice(blocked, func(i, j int) bool { return blocked[i].blockedAt < blocked[j].blockedAt })
	for _, w := range s.workers {
		b.WriteString("|w:")
		str(w.name)
		ids := make([]string, 0, len(w.filter))
		for id := range w.filter {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			str(id)
		}
		for rank, o := range blocked {
			if o == w {
				num(int64(rank + 1))
			}
		}
		if j := w.job; j != nil {
			b.WriteString("job:")
			str(j.msg.m.ID)
			num(int64(j.msg.n))
			num(int64(j.attempt)) // a late ack deletes only if no one received the copy since
			num(int64(j.pc))
			num(int64(j.executed))
			num(int64(j.txStart))
			str(j.fault)
			num(int64(j.faultAfter))
			num(j.leaseEnd)
			flag(j.leaseExpired)
			flag(j.filterDone)
			num(int64(j.retries)) // @retry-on's retries are bounded per delivery
			flag(j.backoff)
		}
		if w.db != nil {
			w.db.writeState(&b)
		}
	}
	b.WriteString("|fx:" + s.fx.keyString())
	writeRows(&b, s.l)
	return hashKey(b.Bytes())
}

// writeRows writes the ledger's committed rows for a key: by value (rowids
// do not matter to a handler), each table's sorted.
func writeRows(b *bytes.Buffer, l *ledger) {
	for _, t := range tableOrder {
		b.WriteString("|" + t + ":")
		rows := l.rows(t)
		vals := make([]string, 0, len(rows))
		for _, v := range rows {
			vals = append(vals, fmt.Sprint(v...))
		}
		sort.Strings(vals)
		for _, v := range vals {
			b.WriteString(strconv.Quote(v))
			b.WriteByte(',')
		}
	}
}

func hashKey(b []byte) exploreKey {
	h := fnv.New128a()
	h.Write(b)
	var k exploreKey
	copy(k[:], h.Sum(nil))
	return k
}
