package brain

import "testing"

func TestMatchMember(t *testing.T) {
	for _, tt := range []struct {
		pattern, file string
		want          bool
	}{
		{"core/", "core/a.go", true},
		{"core/", "core/deep/b.go", true},
		{"core/", "core-x/a.go", false},
		{"core/", "core", false},
		{"core/a.go", "core/a.go", true},
		{"core/a.go", "core/a.go.bak", false},
		{"core/*.go", "core/a.go", true},
		{"core/*.go", "core/deep/b.go", false},
		{"core/**", "core/deep/b.go", true},
		{"core/**/*.go", "core/a.go", true},
		{"core/**/*.go", "core/x/y/z.go", true},
		{"**/*_test.go", "core/a_test.go", true},
		{"**/*_test.go", "a_test.go", true},
		{"*", "README.md", true},
		{"*", "core/a.go", false},
		{"docs/[ab].md", "docs/a.md", true},
	} {
		if got := matchMember(tt.pattern, tt.file); got != tt.want {
			t.Errorf("matchMember(%q, %q) = %v, want %v", tt.pattern, tt.file, got, tt.want)
		}
	}
}

func TestMemberPatternProblem(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		ok      bool
	}{
		{"core/", true}, {"core/a.go", true}, {"**/x", true}, {"docs/*.md", true},
		{"", false}, {"/etc/", false}, {"../x", false}, {"a/../b", false}, {"./a", false},
		{"a//b", false}, {"~/x", false}, {`a\b`, false}, {"a**b", false}, {"**/**/**/**/x", false}, {"**/a/**/b/**", true}, {"[", false}, {".", false},
	} {
		if got := memberPatternProblem(tt.pattern) == ""; got != tt.ok {
			t.Errorf("memberPatternProblem(%q) ok = %v, want %v (%s)", tt.pattern, got, tt.ok, memberPatternProblem(tt.pattern))
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Repo-B1": "repo_b1", ".github": "github", "My  Shop!": "my_shop", "___": "", "Ünïcode": "n_code",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
