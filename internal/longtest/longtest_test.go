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

func TestNeedSkipsWhenOff(t *testing.T) {
	t.Setenv(Env, "")
	ran := false
	t.Run("long", func(t *testing.T) {
		Need(t, "a long suite")
		ran = true
	})
	if ran {
		t.Fatal("Need did not skip with the switch off")
	}
}

func TestNeedRunsWhenOn(t *testing.T) {
	t.Setenv(Env, "1")
	ran := false
	t.Run("long", func(t *testing.T) {
		Need(t, "a long suite")
		ran = true
	})
	if !ran {
		t.Fatal("Need skipped with the switch on")
	}
}
