package rules

import (
	"slices"
	"testing"
)

func TestAbbreviated(t *testing.T) {
	ids := []string{"89d7aaaaaaaa", "89d7bbbbbbbb", "1234cccccccc", "123"}
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"1234cccccccc", []string{"1234cccccccc"}},
		{"123", []string{"123"}}, // an id typed whole, however short
		{"89d", nil},             // shorter than MinAbbrev names nothing
		{"89d7", []string{"89d7aaaaaaaa", "89d7bbbbbbbb"}},
		{"89d7b", []string{"89d7bbbbbbbb"}},
		{"ffff", nil},
	} {
		if got := Abbreviated(tc.typed, ids); !slices.Equal(got, tc.want) {
			t.Errorf("Abbreviated(%q) = %v, want %v", tc.typed, got, tc.want)
		}
	}
}

func TestAmbiguousLesson(t *testing.T) {
	got := AmbiguousLesson("letter", "ab12", []string{"ab1200000000", "ab1211111111", "ab1222222222", "ab1233333333", "ab1244444444", "ab1255555555"})
	want := `"ab12" is ambiguous: 6 letters start with it (ab1200000000, ab1211111111, ab1222222222, ab1233333333, ab1244444444, and 1 more); type more of it`
	if got != want {
		t.Fatalf("AmbiguousLesson:\n got %s\nwant %s", got, want)
	}
}
