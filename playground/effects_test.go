package playground

import (
	"reflect"
	"testing"
)

// Effects groups by business key: a payment carried by two messages is one
// effect (at the first of its messages), a message of its own is one
// effect (at that message); steps after the cursor, and commits that
// changed a figure without applying the effect again, do not count.
func TestEffects_OnePerBusinessKey(t *testing.T) {
	sc := &Scenario{Messages: []Message{
		{ID: "msg-1", Kind: KindCredit, PaymentID: "pay-1"},
		{ID: "msg-2", Kind: KindCredit},
		{ID: "msg-3", Kind: KindCredit, PaymentID: "pay-1"},
		{ID: "msg-4", Kind: KindCredit, PaymentID: "pay-2"},
		{ID: "msg-5", Kind: KindCredit, PaymentID: "pay-2"},
	}}
	h := &HandlerTrace{Steps: []Step{
		{Index: 1, Event: 1, Message: "msg-3", Effect: true, applied: true},
		{Index: 2, Event: 1, Message: "msg-2", Effect: true, applied: true},
		{Index: 3, Event: 2, Message: "msg-1", Effect: true, applied: true},
		{Index: 4, Event: 2, Message: "msg-5", Effect: true, applied: true},
		// A figure changed, nothing applied again (an absolute balance
		// written a second time): no application.
		{Index: 5, Event: 2, Message: "msg-2", Effect: true},
		{Index: 6, Event: 3, Message: "msg-2", Effect: true, applied: true},
	}}
	want := []Effect{
		{Key: "pay-1", Kind: KindCredit, Carriers: []string{"msg-1", "msg-3"}, Steps: []int{1, 3}},
		{Key: "msg-2", Kind: KindCredit, Carriers: []string{"msg-2"}, Steps: []int{2}},
		{Key: "pay-2", Kind: KindCredit, Carriers: []string{"msg-5"}, Steps: []int{4}},
	}
	if got := h.Effects(sc, 2); !reflect.DeepEqual(got, want) {
		t.Errorf("Effects at event 2:\n got %+v\nwant %+v", got, want)
	}
}
