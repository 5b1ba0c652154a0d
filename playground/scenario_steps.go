package playground

// The story of a flow in several steps: an order is booked in the
// ledger, charged at the payment provider and confirmed by email, and the
// worker can die between any two of them. The order's own row records how
// far the flow got (its state is the recovery point), so a redelivery can
// resume where the last run stopped instead of starting again.

func init() {
	addHandlers("flow-restart", "flow-phases")
	addScenarios(stepsScenarios...)
}

var stepsScenarios = []*Scenario{
	{
		Name:  "order-flow",
		Title: "An order in three steps: book, charge, confirm",
		Story: "A store's consumer takes each placed order through three steps: it books the amount in its ledger, charges the card at the payment provider (the order id is the idempotency key) and emails a confirmation. " +
			"The worker is killed after the charge, and the queue delivers the order again. " +
			"A handler that starts again from the top books the amount a second time; one that keeps a recovery point with each step resumes after the charge. " +
			"The provider remembers a key for 24 hours (1,440 minutes): a flow resumed after that is charged again.",
		Sources: []ScenarioSource{
			{"Brandur Leach: Implementing Stripe-like idempotency keys in Postgres (atomic phases, recovery points)", "https://brandur.org/idempotency-keys"},
			{"Stripe API reference: idempotent requests", "https://docs.stripe.com/api/idempotent_requests"},
		},
		Handlers:      []string{"flow-restart", "flow-phases"},
		DefaultScript: "deliver ord-1 crash-after 6; redeliver ord-1",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("ord-1", "acc-1", 5000), credit("ord-2", "acc-2", 1800)},
		Accounts:      []Account{{"acc-1", 0}, {"acc-2", 0}},
		Settings:      BrokerSettings{LeaseTicks: 1, MaxDeliveries: 5, RetentionTicks: 4320, KeyLifetimeTicks: 1440},
		TickUnit:      "minute",
		Outside:       []string{OutsideCharge, OutsideEmail},
	},
}
