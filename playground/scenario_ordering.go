package playground

import (
	"fmt"
	"sort"
	"strings"
)

// KindPrice sets SKU's price to Price: an absolute value that carries the
// producer's Version of it, one higher for each change of the SKU.
const KindPrice = "price"

// Price is a scenario's initial prices row.
type Price struct {
	SKU     string `json:"sku"`
	Price   int64  `json:"price"`
	Version int64  `json:"version"`
}

func priceChange(id, sku string, price, version int64) Message {
	return Message{ID: id, Kind: KindPrice, SKU: sku, Price: price, Version: version}
}

// stalePrice is the out-of-order story: the newer change is delivered
// first, the older one after it.
var stalePrice = &Scenario{
	Name:  "stale-price",
	Title: "An older price change delivered after a newer one",
	Story: "A catalogue service publishes price.changed with the new price of sku-1 and a version it raises by one for every change: version 2 sets 10.00, version 3 sets 12.00. " +
		"Version 2 fails once and waits for its retry, so version 3 is delivered first. " +
		"A handler that writes whatever arrives puts 10.00 back, dedupe table or not: the two messages have different ids. Only a write guarded by the version keeps 12.00.",
	Handlers:      []string{"set-value", "dedupe-tx", "versioned-set"},
	DefaultScript: "deliver msg-2; deliver msg-1",
	Workers:       []string{"A", "B"},
	Messages:      []Message{priceChange("msg-1", "sku-1", 1000, 2), priceChange("msg-2", "sku-1", 1200, 3)},
	Prices:        []Price{{"sku-1", 900, 1}},
	Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
	TickUnit:      "second",
}

// priceInserts is the SQL that puts the scenario's prices in its template.
func (sc *Scenario) priceInserts(b *strings.Builder) {
	for _, p := range sc.Prices {
		fmt.Fprintf(b, "INSERT INTO prices(sku, price, version) VALUES ('%s', %d, %d);\n", p.SKU, p.Price, p.Version)
	}
}

func (sc *Scenario) initialPriceFigures() []Figure {
	out := make([]Figure, 0, len(sc.Prices))
	for _, p := range sc.Prices {
		out = append(out, Figure{Table: "prices", Key: p.SKU, Value: p.Price})
	}
	return out
}

// newestPrices is the business rule of price changes: of the delivered
// changes of a SKU (those in skip aside), the one with the highest version
// takes effect, if it is newer than the initial row; every older one is
// superseded and must leave no trace. It returns the figures and marks the
// messages that take effect in applies.
func (s *sim) newestPrices(skip, applies map[string]bool) []Figure {
	out := s.sc.initialPriceFigures()
	for i, p := range s.sc.Prices {
		version, newest := p.Version, ""
		for _, m := range s.sc.Messages {
			if m.Kind == KindPrice && m.SKU == p.SKU && s.delivered[m.ID] && !skip[m.ID] && m.Version > version {
				version, newest, out[i].Value = m.Version, m.ID, m.Price
			}
		}
		if newest != "" {
			applies[newest] = true
		}
	}
	return out
}

// actualPrices reads the prices figures from the committed ledger.
func (s *sim) actualPrices() []Figure {
	out := s.sc.initialPriceFigures()
	for i := range out {
		out[i].Value = 0
		for _, v := range s.l.rows("prices") {
			if valueText(v[0]) == out[i].Key {
				out[i].Value, _ = v[1].(int64)
			}
		}
	}
	return out
}

// priceWrite is one committed change of a prices row's price.
type priceWrite struct {
	message string
	price   int64
	step    int
}

// recordPrice keeps each commit that changed a SKU's price, and by which
// message's handler.
func (e *effectLedger) recordPrice(ch rowChange, step int) {
	if ch.After == nil {
		return // a deleted row: its figure reads 0 and the figures judge it
	}
	if ch.Before != nil && valueText(ch.Before[1]) == valueText(ch.After[1]) {
		return
	}
	price, _ := ch.After[1].(int64)
	sku := valueText(ch.After[0])
	if e.prices == nil {
		e.prices = map[string][]priceWrite{}
	}
	e.prices[sku] = append(e.prices[sku], priceWrite{message: ch.Message, price: price, step: step})
}

// accountPrice tells whether a price change is in the ledger: its price is
// the SKU's and its handler wrote it last (times 1). For the change that
// must take effect and is not in the ledger, it names the older change
// that overwrote it (staleBy), if one did.
func (s *sim) accountPrice(acc *messageAccount, m *Message) {
	writes := s.fx.prices[m.SKU]
	var current int64
	for _, v := range s.l.rows("prices") {
		if valueText(v[0]) == m.SKU {
			current, _ = v[1].(int64)
		}
	}
	last := -1
	for i, w := range writes {
		if w.message == m.ID {
			if acc.firstAt == 0 {
				acc.firstAt = w.step
			}
			last = i
		}
	}
	if last >= 0 && last == len(writes)-1 && current == m.Price {
		acc.times = 1
		return
	}
	if !acc.applies || last < 0 {
		return
	}
	for _, w := range writes[last+1:] {
		if o := s.sc.Message(w.message); o != nil && o.Kind == KindPrice && o.SKU == m.SKU && o.Version < m.Version {
			acc.staleBy, acc.staleAt = o.ID, w.step
		}
	}
}

// staleDetail says which older change overwrote the newest one.
func (s *sim) staleDetail(m *Message, acc messageAccount) string {
	o := s.sc.Message(acc.staleBy)
	return fmt.Sprintf("%s, version %d, was overwritten by the stale %s, version %d: %s's price is %d, expected %d",
		m.ID, m.Version, o.ID, o.Version, m.SKU, o.Price, m.Price)
}

// priceKeyString is the prices part of the explorer's state hash: who
// wrote each SKU's price last.
func (e *effectLedger) priceKeyString(b *strings.Builder) {
	skus := make([]string, 0, len(e.prices))
	for sku := range e.prices {
		skus = append(skus, sku)
	}
	sort.Strings(skus)
	for _, sku := range skus {
		ws := e.prices[sku]
		fmt.Fprintf(b, "|%s←%s", sku, ws[len(ws)-1].message)
	}
}
