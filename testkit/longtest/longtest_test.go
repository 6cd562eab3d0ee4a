package longtest

import "testing"

func TestOn(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{
		{"1", true},
		{"", false},
		{"0", false},
		{"yes", false}, // one spelling: a typo never half-runs CI's suites
	} {
		t.Setenv(Env, tc.value)
		if got := On(); got != tc.want {
			t.Errorf("%s=%q: On() = %v, want %v", Env, tc.value, got, tc.want)
		}
	}
}

func TestNeed(t *testing.T) {
	for _, tc := range []struct {
		value string
		runs  bool
	}{
		{"", false},
		{"1", true},
	} {
		t.Setenv(Env, tc.value)
		ran := false
		t.Run("long", func(t *testing.T) {
			Need(t, "a long suite")
			ran = true
		})
		if ran != tc.runs {
			t.Errorf("%s=%q: the suite ran %v, want %v", Env, tc.value, ran, tc.runs)
		}
	}
}
