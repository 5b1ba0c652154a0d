package playground

import (
	"fmt"
	"strings"
	"sync"
)

// Message kinds.
const (
	KindCredit = "credit" // add Amount to AccountID's balance
	KindShip   = "ship"   // ship OrderID: state 'shipped' and exactly one shipment row
)

// Message is one message the producer publishes. Its ID is stable across
// redeliveries and republishes; that is what a consumer can deduplicate on.
type Message struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	AccountID string `json:"account_id,omitempty"`
	Amount    int64  `json:"amount,omitempty"`
	// Balance is the balance after this credit when messages are applied once
	// each in publish order: what a producer sending absolute values would send.
	Balance int64  `json:"balance,omitempty"`
	OrderID string `json:"order_id,omitempty"`
	// PaymentID is a credit's business key: the payment it carries. A
	// producer that publishes one payment twice under two message ids
	// gives both the same PaymentID; the second must change nothing.
	// Empty: the message is a payment of its own (its key is its ID).
	PaymentID string `json:"payment_id,omitempty"`
	// SKU, Price and Version are a price change's (KindPrice).
	SKU     string `json:"sku,omitempty"`
	Price   int64  `json:"price,omitempty"`
	Version int64  `json:"version,omitempty"`
}

// BusinessKey is what makes a credit one payment: its PaymentID, or its ID
// when it names none.
func (m *Message) BusinessKey() string {
	if m.PaymentID != "" {
		return m.PaymentID
	}
	return m.ID
}

// repeats reports whether an earlier message of the scenario carries the
// same payment: a producer's duplicate under a new message id.
func (sc *Scenario) repeats(m *Message) bool {
	if m.Kind != KindCredit {
		return false
	}
	for i := range sc.Messages {
		o := &sc.Messages[i]
		if o.ID == m.ID {
			return false
		}
		if o.Kind == KindCredit && o.BusinessKey() == m.BusinessKey() {
			return true
		}
	}
	return false
}

// ScenarioSource is one document a scenario's broker behaviour comes from.
type ScenarioSource struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Account and Order are a scenario's initial ledger rows.
type Account struct {
	ID      string `json:"id"`
	Balance int64  `json:"balance"`
}

type Order struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// BrokerSettings are the knobs of the simulated broker. One tick is the
// scenario's TickUnit (a second for queues, an hour for webhook retention).
type BrokerSettings struct {
	LeaseTicks     int64 `json:"lease_ticks"`     // visibility timeout / ack deadline
	MaxDeliveries  int   `json:"max_deliveries"`  // then the message is dead-lettered
	RetentionTicks int64 `json:"retention_ticks"` // prune's default older-than
	Workers        int   `json:"workers"`
	// KeyLifetimeTicks is how long the payment provider remembers an
	// idempotency key (provider.go); 0: forever.
	KeyLifetimeTicks int64 `json:"key_lifetime_ticks,omitempty"`
	// Backoff delays the redelivery of a failed copy (backoff.go); nil:
	// a failed copy waits for its lease to end.
	Backoff *Backoff `json:"backoff,omitempty"`
}

// Scenario is a built-in story: an initial ledger, the messages, the broker
// settings, a default script and the handlers it compares.
type Scenario struct {
	Name          string         `json:"name"`
	Title         string         `json:"title"`
	Story         string         `json:"story"`
	Handlers      []string       `json:"handlers"`
	DefaultScript string         `json:"default_script"`
	Workers       []string       `json:"workers"`
	Messages      []Message      `json:"messages"`
	Settings      BrokerSettings `json:"settings"`
	Accounts      []Account      `json:"accounts"`
	Orders        []Order        `json:"orders"`
	Prices        []Price        `json:"prices,omitempty"`
	TickUnit      string         `json:"tick_unit"`
	// Partition, when set, makes the broker a Kafka-style partition read
	// by poll and rebalance instead of a queue (offsets.go).
	Partition *Partition `json:"partition,omitempty"`
	// Outside lists the effects outside the database each credit must
	// have exactly once (OutsideCharge, OutsideEmail: provider.go).
	Outside []string `json:"outside,omitempty"`
	// Outage, when set, makes the payment provider refuse charges for a
	// while (backoff.go).
	Outage *Outage `json:"outage,omitempty"`
	// Sources are the named broker's documentation of the behaviour the
	// scenario shows (a late ack, a redelivery).
	Sources []ScenarioSource `json:"sources,omitempty"`

	once    sync.Once
	tmpl    *ledgerImage
	tmplErr error

	defaultOnce   sync.Once
	defaultEvents []Event
}

func credit(id, account string, amount int64) Message {
	return Message{ID: id, Kind: KindCredit, AccountID: account, Amount: amount}
}

// paid is a credit that carries a payment: two messages with one payment
// are one business event published twice.
func paid(id, account string, amount int64, payment string) Message {
	m := credit(id, account, amount)
	m.PaymentID = payment
	return m
}

func ship(id, order string) Message { return Message{ID: id, Kind: KindShip, OrderID: order} }

var scenarioList = []*Scenario{
	{
		Name:  "lost-ack",
		Title: "The ack that never arrived",
		Story: "An SQS consumer credits the account, commits, and calls DeleteMessage, but the call times out. " +
			"SQS never learns the message was handled, so after the 30-second visibility timeout it delivers it again. " +
			"AWS says standard queues deliver at least once and tells you to make the consumer idempotent.",
		Handlers:      []string{"increment", "dedupe-tx"},
		DefaultScript: "deliver msg-1 lose-ack; deliver msg-2; redeliver msg-1",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("msg-1", "acc-1", 50), credit("msg-2", "acc-1", 20)},
		Accounts:      []Account{{"acc-1", 100}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	{
		Name:  "crash-before-ack",
		Title: "Committed, then killed before the ack",
		Story: "A worker commits its transaction and is killed (a deploy, the OOM killer) before it acks. " +
			"Temporal retries an activity whose worker crashed before reporting; Sidekiq re-runs a job it lost track of. " +
			"The redelivery is harmless only if the record of the message committed together with the effect.",
		Handlers:      []string{"increment", "dedupe-tx"},
		DefaultScript: "deliver msg-1 crash-before-ack; redeliver msg-1",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("msg-1", "acc-1", 40), credit("msg-2", "acc-1", 25)},
		Accounts:      []Account{{"acc-1", 100}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	{
		Name:  "lease-expiry",
		Title: "A slow handler outlives its lease",
		Story: "A job takes 45 seconds on a queue with a 30-second visibility timeout. " +
			"The message becomes visible again while worker A is still busy, and worker B receives it with a new receipt handle. " +
			"A's late DeleteMessage carries the old one: SQS answers success but deletes nothing, so B's copy counts (had no one received it again, A's delete would have worked). " +
			"River and Oban rescue jobs they think are stuck the same way, and say it can run a job twice.",
		Sources: []ScenarioSource{
			{"Amazon SQS API Reference: DeleteMessage (the most recently received receipt handle)", "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_DeleteMessage.html"},
			{"Amazon SQS Developer Guide: visibility timeout", "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html"},
		},
		Handlers:      []string{"increment", "dedupe-tx"},
		DefaultScript: "start msg-1 on A; expire msg-1; redeliver msg-1 to B; finish A",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("msg-1", "acc-1", 70)},
		Accounts:      []Account{{"acc-1", 100}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	{
		Name:  "webhook-retry",
		Title: "A payment webhook retried while the first is still running",
		Story: "Stripe posts payment_intent.succeeded and gives up waiting for the answer, then retries the same event id. " +
			"The retry lands on another instance while the first request is still inside its transaction. " +
			"An in-process cache of ids only knows what its own instance saw; a primary key in the database makes the retry wait, then skip.",
		Handlers:      []string{"increment", "memory-filter", "dedupe-tx"},
		DefaultScript: "start evt-1 on A; step A 2; publish evt-1 to B; finish A",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("evt-1", "acc-1", 4200)},
		Accounts:      []Account{{"acc-1", 10000}},
		Settings:      BrokerSettings{LeaseTicks: 10, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	{
		Name:  "concurrent-duplicate",
		Title: "Two workers race on one message",
		Story: "An SQS standard queue occasionally hands out two copies of a message, and two of the group's three consumers receive them at the same moment. " +
			"Each checks the dedupe table, finds nothing, and goes ahead. " +
			"Only a check that is part of the same atomic write (a primary key in the transaction) stops the second one.",
		Handlers:      []string{"check-then-insert", "dedupe-tx"},
		DefaultScript: "start msg-1 on A; start msg-1 on B; step A; step B; step A; step B; finish A; finish B",
		Workers:       []string{"A", "B", "C"},
		Messages:      []Message{credit("msg-1", "acc-1", 30), credit("msg-2", "acc-1", 45)},
		Accounts:      []Account{{"acc-1", 100}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	{
		Name:  "topic-replay",
		Title: "A topic replayed from offset 0",
		Story: "A Kafka consumer group is recreated with auto.offset.reset=earliest, or its committed offsets expired after seven idle days. " +
			"It reads the whole seven-day log again from offset 0. " +
			"Increments count every message twice; absolute values replayed in order and deduplicated credits survive.",
		Handlers:      []string{"increment", "set-value", "dedupe-tx"},
		DefaultScript: "deliver msg-1; deliver msg-2; deliver msg-3; replay",
		Workers:       []string{"A"},
		Messages:      []Message{credit("msg-1", "acc-1", 10), credit("msg-2", "acc-1", 20), credit("msg-3", "acc-1", 30)},
		Accounts:      []Account{{"acc-1", 100}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	{
		Name:  "early-prune",
		Title: "The dedupe table forgot too early",
		Story: "The dedupe table keeps ids for 24 hours, but Stripe retries a failed webhook for up to three days. " +
			"A retry that arrives after the prune finds no id and is applied again. " +
			"Retention must outlast every way a message can come back; brandur's idempotency keys are kept 72 hours for that reason.",
		Handlers:      []string{"dedupe-tx", "conditional"},
		DefaultScript: "deliver pay-1; advance 48; prune; publish pay-1",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("pay-1", "acc-1", 900), credit("pay-2", "acc-1", 300)},
		Accounts:      []Account{{"acc-1", 1000}},
		Settings:      BrokerSettings{LeaseTicks: 1, MaxDeliveries: 5, RetentionTicks: 24},
		TickUnit:      "hour",
	},
	{
		Name:  "producer-retry",
		Title: "The producer sent it twice, under two ids",
		Story: "A payment service publishes payment.succeeded to Google Pub/Sub; the publish call times out and the client publishes again, and both publishes land. " +
			"The two copies carry two message ids, so even Pub/Sub's exactly-once delivery treats them as two messages and delivers both. " +
			"A dedupe table keyed on the message id lets both through; a unique key on the payment id lets the payment take effect once.",
		Handlers:      []string{"dedupe-tx", "dedupe-key"},
		DefaultScript: "deliver msg-1; deliver msg-2; deliver msg-3",
		Workers:       []string{"A", "B"},
		Messages: []Message{paid("msg-1", "acc-1", 75, "pay-7"), paid("msg-2", "acc-1", 75, "pay-7"),
			paid("msg-3", "acc-1", 40, "pay-8")},
		Accounts: []Account{{"acc-1", 500}},
		Settings: BrokerSettings{LeaseTicks: 10, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit: "second",
	},
	{
		Name:  "dlq-redrive",
		Title: "Redriven from the dead-letter queue a week later",
		Story: "A consumer credits the payment and commits, but its acks keep failing, so after three deliveries SQS moves the message to the dead-letter queue, though it was applied. " +
			"A week later an operator redrives the queue, and the message comes back with its receive count starting over. " +
			"The dedupe table kept ids for one day: the id is gone, and the copy is applied again. A dead-letter queue is one more way for a copy to come back late.",
		Handlers:      []string{"increment", "dedupe-tx"},
		DefaultScript: "deliver pay-1 lose-ack; redeliver pay-1 lose-ack; redeliver pay-1 lose-ack; redeliver pay-1; advance 168; prune; redrive pay-1",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("pay-1", "acc-1", 300)},
		Accounts:      []Account{{"acc-1", 1000}},
		Settings:      BrokerSettings{LeaseTicks: 1, MaxDeliveries: 3, RetentionTicks: 24},
		TickUnit:      "hour",
	},
	{
		Name:  "restart-filter",
		Title: "An in-process filter forgets on restart",
		Story: "A consumer keeps the ids it has handled in a set in memory, like the optional local cache of AWS Lambda Powertools' idempotency utility. " +
			"The ack is lost, a deploy restarts the process, and the redelivery meets an empty set. " +
			"A cache in front of the dedupe table saves work; it cannot replace it.",
		Handlers:      []string{"memory-filter", "filter-dedupe"},
		DefaultScript: "deliver msg-1 lose-ack; restart A; redeliver msg-1",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("msg-1", "acc-1", 60)},
		Accounts:      []Account{{"acc-1", 100}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	{
		Name:  "order-shipping",
		Title: "One paid order, two parcels",
		Story: "A warehouse service ships an order when order.paid arrives. " +
			"The ack is lost and another worker receives the message again, as RabbitMQ does when a channel closes with unacked deliveries. " +
			"A naive handler ships a second parcel; an UPDATE guarded by WHERE state = 'paid' lets exactly one delivery win.",
		Handlers:      []string{"increment", "conditional"},
		DefaultScript: "deliver ship-1 lose-ack; deliver ship-2; redeliver ship-1 to B",
		Workers:       []string{"A", "B"},
		Messages:      []Message{ship("ship-1", "ord-1"), ship("ship-2", "ord-2")},
		Orders:        []Order{{"ord-1", "paid"}, {"ord-2", "paid"}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 20, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	{
		Name:  "crash-mid-handler",
		Title: "Killed between two statements",
		Story: "The process dies between two statements of the handler: kill -9 during a deploy, or a pod evicted mid-request. " +
			"What had committed by then decides the retry: if the id was recorded first the effect is lost, if the effect came first it is applied twice. " +
			"Only an id committed in the same transaction as the effect survives every crash point.",
		Handlers:      []string{"mark-before", "mark-after", "dedupe-tx"},
		DefaultScript: "deliver msg-1 crash-after 4; redeliver msg-1 to B",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("msg-1", "acc-1", 80), credit("msg-2", "acc-1", 35)},
		Accounts:      []Account{{"acc-1", 100}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	{
		Name:  "never-paid",
		Title: "Already shipped, never paid, cancelled: all ack",
		Story: "The warehouse receives ship messages for three orders: one whose payment never went through, one the customer cancelled, one paid. " +
			"A message for an order that is not paid must ship nothing, and must still be acked, or the broker redelivers it until it lands in the dead-letter queue. " +
			"A redelivered message for an order already shipped is the same case: the guard WHERE state = 'paid' changes no row, and the handler acks.",
		Handlers:      []string{"increment", "conditional"},
		DefaultScript: "deliver ship-3 lose-ack; deliver ship-1; deliver ship-2; redeliver ship-3 to B",
		Workers:       []string{"A", "B"},
		Messages:      []Message{ship("ship-1", "ord-1"), ship("ship-2", "ord-2"), ship("ship-3", "ord-3")},
		Orders:        []Order{{"ord-1", "pending"}, {"ord-2", "cancelled"}, {"ord-3", "paid"}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
	},
	stalePrice,
	partitionCrash,
}

var scenarioByName = func() map[string]*Scenario {
	m := map[string]*Scenario{}
	for _, sc := range scenarioList {
		sc.prepare()
		m[sc.Name] = sc
	}
	return m
}()

// prepare fills in what a scenario literal leaves out: the worker count and
// each credit's balance.
func (sc *Scenario) prepare() {
	sc.Settings.Workers = len(sc.Workers)
	balances := map[string]int64{}
	for _, a := range sc.Accounts {
		balances[a.ID] = a.Balance
	}
	for i := range sc.Messages {
		msg := &sc.Messages[i]
		if msg.Kind == KindCredit {
			if !sc.repeats(msg) { // a repeated payment sends the balance the first one did
				balances[msg.AccountID] += msg.Amount
			}
			msg.Balance = balances[msg.AccountID]
		}
	}
}

// addScenarios appends built-in scenarios after those of scenarioList (a
// topic's file registers its own from init).
func addScenarios(list ...*Scenario) {
	for _, sc := range list {
		sc.prepare()
		scenarioByName[sc.Name] = sc
		scenarioList = append(scenarioList, sc)
	}
}

// Scenarios returns the built-in scenarios in teaching order.
func Scenarios() []*Scenario { return append([]*Scenario(nil), scenarioList...) }

// LookupScenario returns a built-in scenario; the error lists the known names.
func LookupScenario(name string) (*Scenario, error) {
	scenarioLookups.Add(1)
	if sc, ok := scenarioByName[name]; ok {
		return sc, nil
	}
	names := make([]string, len(scenarioList))
	for i, sc := range scenarioList {
		names[i] = sc.Name
	}
	return nil, &InputError{Field: "scenario", Msg: fmt.Sprintf("unknown scenario %q; scenarios are %s", clip(name), strings.Join(names, ", "))}
}

// DefaultEvents is the scenario's default script, parsed once per process.
// Callers must not modify the slice (appending to a copy is fine).
func (sc *Scenario) DefaultEvents() []Event {
	sc.defaultOnce.Do(func() {
		if s, err := ParseScript(sc.DefaultScript); err == nil { // TestScenarios_Catalogue parses every one
			sc.defaultEvents = s.Events[:len(s.Events):len(s.Events)]
		}
	})
	return sc.defaultEvents
}

// Message returns the scenario's message with the id, or nil.
func (sc *Scenario) Message(id string) *Message {
	for i := range sc.Messages {
		if sc.Messages[i].ID == id {
			return &sc.Messages[i]
		}
	}
	return nil
}

// CheckScript reports the first event that names a message or worker the
// scenario does not have: "event 3: unknown worker C; workers are A, B".
func (sc *Scenario) CheckScript(s *Script) error {
	for i, ev := range s.Events {
		if ev.Message != "" && sc.Message(ev.Message) == nil {
			ids := make([]string, len(sc.Messages))
			for j, m := range sc.Messages {
				ids[j] = m.ID
			}
			return &InputError{Field: "script", Msg: fmt.Sprintf("event %d: unknown message %s; messages are %s", i+1, ev.Message, strings.Join(ids, ", "))}
		}
		if err := sc.checkPartitionEvent(i+1, ev); err != nil {
			return err
		}
		if ev.Worker != "" && !contains(sc.Workers, ev.Worker) {
			return &InputError{Field: "script", Msg: fmt.Sprintf("event %d: unknown worker %s; workers are %s", i+1, ev.Worker, strings.Join(sc.Workers, ", "))}
		}
	}
	return nil
}

// InitialFigures are the figures before any event: each account's
// balance and each order's state, as the scenario lists them.
func (sc *Scenario) InitialFigures() []Figure {
	out := make([]Figure, 0, len(sc.Accounts)+len(sc.Orders))
	for _, a := range sc.Accounts {
		out = append(out, Figure{Table: "accounts", Key: a.ID, Value: a.Balance})
	}
	for _, o := range sc.Orders {
		out = append(out, Figure{Table: "orders", Key: o.ID, State: o.State})
	}
	out = append(out, sc.initialPriceFigures()...)
	return append(out, sc.outsideFigures(nil, nil)...)
}

// InitialLedger is the ledger before any event, in the tables, columns and
// order of a frame's; nil if the ledger cannot be built (Run reports why).
func (sc *Scenario) InitialLedger() []TableRows {
	im, err := sc.template()
	if err != nil {
		return nil
	}
	return append(renderTables(im.rows), sc.outsideTables(nil)...)
}

// Tables lists the ledger tables the scenario's story uses, in trace
// order: accounts when it has accounts, orders and shipments when it has
// orders, and the dedupe table always (empty, it is the point for a naive
// handler); with effects outside the database, the inbox, the outbox and
// the outside systems' records (provider.go).
func (sc *Scenario) Tables() []string {
	var out []string
	for _, t := range tableOrder {
		switch t {
		case "accounts":
			if len(sc.Accounts) == 0 {
				continue
			}
		case "orders", "shipments":
			if len(sc.Orders) == 0 {
				continue
			}
		case "prices":
			if len(sc.Prices) == 0 {
				continue
			}
		case "consumer_offsets":
			if sc.Partition == nil {
				continue
			}
		case "inbox", "outbox":
			if len(sc.Outside) == 0 {
				continue
			}
		}
		out = append(out, t)
	}
	return append(out, sc.outsideTableNames()...)
}

// template builds the scenario's initial ledger once per process.
func (sc *Scenario) template() (*ledgerImage, error) {
	sc.once.Do(func() {
		var b strings.Builder
		for _, a := range sc.Accounts {
			fmt.Fprintf(&b, "INSERT INTO accounts(id, balance) VALUES ('%s', %d);\n", a.ID, a.Balance)
		}
		for _, o := range sc.Orders {
			fmt.Fprintf(&b, "INSERT INTO orders(id, state) VALUES ('%s', '%s');\n", o.ID, o.State)
		}
		sc.priceInserts(&b)
		if sc.Partition != nil {
			fmt.Fprintf(&b, "INSERT INTO consumer_offsets(partition_id, next_offset) VALUES ('%s', 0);\n", sc.Partition.Name)
		}
		sc.tmpl, sc.tmplErr = newLedgerTemplate(b.String())
	})
	return sc.tmpl, sc.tmplErr
}
