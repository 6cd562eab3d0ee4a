package cli

import (
	"testing"

	"github.com/m1nd/m1nd/review"
)

func TestParseComment(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want review.Comment
		ok   bool
	}{
		{"hello.go:3=use a constant", review.Comment{Path: "hello.go", Line: 3, Text: "use a constant"}, true},
		{"a=b.go:12=x = y", review.Comment{Path: "a=b.go", Line: 12, Text: "x = y"}, true},
		{"c:d.go:7=", review.Comment{Path: "c:d.go", Line: 7, Text: ""}, true},
		{"dir/f.md:1=:10=", review.Comment{Path: "dir/f.md", Line: 1, Text: ":10="}, true},
		{"hello.go=no line", review.Comment{}, false},
		{"hello.go:0=zero", review.Comment{}, false},
		{"hello.go:-1=neg", review.Comment{}, false},
		{":3=no file", review.Comment{}, false},
		{"hello.go:3", review.Comment{}, false},
	} {
		got, err := ParseComment(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseComment(%q) = %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
