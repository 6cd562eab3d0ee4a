package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"
	tests := []struct {
		name    string
		ldflags string
		bi      *debug.BuildInfo
		want    string
	}{
		{"no build info", "dev", nil, "dev (commit unknown)"},
		{"checkout without VCS info", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev (commit unknown)"},
		{"checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "dev (commit 1a2b3c4d5e6f)"},
		{"dirty checkout", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "dev (commit 1a2b3c4d5e6f, modified)"},
		{"go install m@v", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0 (commit unknown)"},
		{"pseudo-version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201072500-1a2b3c4d5e6f"}, Settings: vcs(rev, "false")}, "v0.0.0-20261201072500-1a2b3c4d5e6f (commit 1a2b3c4d5e6f)"},
		{"ldflags win", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}, Settings: vcs(rev, "false")}, "v1.2.3 (commit 1a2b3c4d5e6f)"},
	}
	for _, tt := range tests {
		if got := versionOf(tt.ldflags, tt.bi).String(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
