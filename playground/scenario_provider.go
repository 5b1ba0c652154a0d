package playground

// The stories of effects outside the database (provider.go): a payment
// provider with idempotency keys that it forgets after a while, and an
// email sender without keys.

func init() {
	addHandlers("charge-no-key", "charge-key", "charge-after-commit", "charge-inbox", "charge-outbox",
		"email-in-tx", "email-after-commit", "email-outbox")
	addScenarios(providerScenarios...)
}

var providerScenarios = []*Scenario{
	{
		Name:  "card-charge",
		Title: "A card charged through a payment provider",
		Story: "A billing worker takes charge messages from a queue and charges the customer's card through the payment provider inside its transaction. " +
			"It is killed after the call and before the commit: the id row rolls back, the charge does not, and the queue delivers the message again. " +
			"Without an idempotency key the provider charges a second time; with one it returns the first charge, for as long as it remembers the key (Stripe may prune a key once it is 24 hours old).",
		Handlers:      []string{"charge-no-key", "charge-key"},
		DefaultScript: "deliver pay-1 crash-after 3; redeliver pay-1",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("pay-1", "acc-1", 5000), credit("pay-2", "acc-1", 1200)},
		Accounts:      []Account{{"acc-1", 0}},
		Settings:      BrokerSettings{LeaseTicks: 1, MaxDeliveries: 3, RetentionTicks: 72, KeyLifetimeTicks: 24},
		TickUnit:      "hour",
		Outside:       []string{OutsideCharge},
	},
	{
		Name:  "receipt-email",
		Title: "A receipt emailed twice, or never",
		Story: "After recording a payment, the handler emails the customer a receipt. The worker is killed between two statements and the queue delivers the message again. " +
			"An email sender takes no idempotency key: sent inside the transaction, the receipt goes out again with the retry; sent after the commit, the retry finds the payment recorded, stops, and never sends it. " +
			"An outbox row written with the payment lets the retry send what is still unsent: at least once, never zero times.",
		Handlers:      []string{"email-in-tx", "email-after-commit", "email-outbox"},
		DefaultScript: "deliver pay-1 crash-after 4; redeliver pay-1",
		Workers:       []string{"A", "B"},
		Messages:      []Message{credit("pay-1", "acc-1", 5000), credit("pay-2", "acc-1", 1200)},
		Accounts:      []Account{{"acc-1", 0}},
		Settings:      BrokerSettings{LeaseTicks: 30, MaxDeliveries: 5, RetentionTicks: 3600},
		TickUnit:      "second",
		Outside:       []string{OutsideEmail},
	},
}
