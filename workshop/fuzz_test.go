package workshop_test

import (
	"errors"
	"strings"
	"testing"

	"idemlab/workshop"
)

// inputErrorOrNil fails unless err is nil or an *InputError naming a field.
func inputErrorOrNil(t *testing.T, err error) {
	t.Helper()
	var ie *workshop.InputError
	if err != nil && (!errors.As(err, &ie) || ie.Field == "" || ie.Msg == "") {
		t.Fatalf("error %v (%T) does not name a field", err, err)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{`{"kind":"lesson_opened","lesson":"01-intro"}`, `{"kind":"exercise_checked","exercise":"x","passed":false,"counterexample":"c"}`,
		`{"kind":"quiz_answered","lesson":"l","quiz":"q","correct":true}`, `{"kind":"hint_used","exercise":"x","hint":3}`, `{"kind":"hand_raised"}`, `{"kind":7}`, `nul`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		e, err := workshop.DecodeEvent(strings.NewReader(body))
		inputErrorOrNil(t, err)
		if err == nil && (e.Kind.Push() || e.Kind == "") {
			t.Fatalf("accepted %+v", e)
		}
	})
}

func FuzzParseCode(f *testing.F) {
	for _, s := range []string{"KQ7-M4P", "kq7m4p", "", "KQ7-M4P-", "ß"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := workshop.ParseCode(s)
		inputErrorOrNil(t, err)
		if err == nil {
			if again, err := workshop.ParseCode(string(c)); err != nil || again != c {
				t.Fatalf("ParseCode(%q) = %q, which parses as %q, %v", s, c, again, err)
			}
		}
	})
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"0b6f2c1e-8f8a-4c53-9a3e-1f2d3c4b5a69", "", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := workshop.ParseKey(s)
		inputErrorOrNil(t, err)
	})
}

func FuzzParseToken(f *testing.F) {
	f.Add(string(workshop.NewToken()))
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		_, err := workshop.ParseToken(s)
		inputErrorOrNil(t, err)
	})
}

func FuzzCheckRoomSpec(f *testing.F) {
	f.Add("Tuesday workshop", "01-intro\n02-dedupe", "ex-1")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, name, lessons, exercises string) {
		spec, err := workshop.CheckRoomSpec(workshop.RoomSpec{Name: name, Lessons: strings.Split(lessons, "\n"), Exercises: strings.Split(exercises, "\n")})
		inputErrorOrNil(t, err)
		if err == nil && (spec.Name == "" || len(spec.Name) > 4*workshop.MaxRoomName) {
			t.Fatalf("accepted name %q", spec.Name)
		}
	})
}
