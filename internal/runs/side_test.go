package runs

import (
	"os"
	"path/filepath"
	"testing"
)

// A side record reads back as written; a record that names another
// mission, does not parse, or sits under an id that is not a mission's
// reads as never run here.
func TestReadSideTrustsOnlyItsOwnRecord(t *testing.T) {
	dir := t.TempDir()
	const id = "msn_0123456789ab"
	if _, ok, err := ReadSide(dir, id); ok || err != nil {
		t.Fatalf("nothing written: ok %v, %v", ok, err)
	}
	if err := os.MkdirAll(SideDir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteSide(dir, &Side{MissionID: id, RunnerID: "b1", Worktree: "/w", Branch: "m1nd/x"}); err != nil {
		t.Fatal(err)
	}
	s, ok, err := ReadSide(dir, id)
	if err != nil || !ok || s.RunnerID != "b1" || s.Worktree != "/w" {
		t.Fatalf("read back %+v %v %v", s, ok, err)
	}
	if info, err := os.Stat(filepath.Join(SideDir(dir), id+".json")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("side record mode: %v %v, want 0600", info, err)
	}
	const other = "msn_00000000000c"
	otherPath := filepath.Join(SideDir(dir), other+".json")
	for _, tc := range []struct{ name, body string }{
		{"another mission", `{"mission_id":"msn_ba9876543210"}`},
		{"does not parse", `{`},
		{"no mission named", `{}`},
	} {
		if err := os.WriteFile(otherPath, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if s, ok, err := ReadSide(dir, other); ok || err != nil {
			t.Errorf("%s: read %+v %v %v, want as never run", tc.name, s, ok, err)
		}
	}
	if err := os.WriteFile(otherPath, []byte(`{`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ReadSide(dir, "../escape"); ok {
		t.Error("an id that is not a mission's read a record")
	}
	// ReadSides skips the record that does not parse.
	all, err := ReadSides(dir)
	if err != nil || len(all) != 1 || all[0].MissionID != id {
		t.Errorf("ReadSides = %v %v, want only %s", all, err, id)
	}
}
