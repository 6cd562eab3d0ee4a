package rules

import (
	"crypto/ed25519"
	"strings"
	"testing"
)

func statement() *GateStatement {
	return &GateStatement{
		Schema: GateStatementSchema, MissionID: "msn_0123456789ab", Letter: "sha256:" + strings.Repeat("1", 64),
		RunnerID: "build-1", Pins: 3, Pin: "sha256:" + strings.Repeat("2", 64),
		Commit: strings.Repeat("3", 40), Tree: strings.Repeat("4", 40), GateCommand: "go test ./...",
		ExitStatus: 0, ArtifactHash: "sha256:" + strings.Repeat("5", 64),
		StartedAt: "2026-12-04T10:00:00Z", EndedAt: "2026-12-04T10:01:00Z",
	}
}

func TestGateAttestation(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	att := SignGate(priv, statement())
	parsed, err := ParseAttestation(att.Trailer())
	if err != nil {
		t.Fatalf("the trailer does not read back: %v", err)
	}
	if err := VerifyGate(parsed, statement()); err != nil {
		t.Fatalf("a runner's own signature: %v", err)
	}
	// Each field the signature binds, changed, fails it.
	tests := []struct {
		name string
		edit func(st *GateStatement, a *Attestation)
	}{
		{"another mission", func(st *GateStatement, _ *Attestation) { st.MissionID = "msn_0123456789ac" }},
		{"another letter", func(st *GateStatement, _ *Attestation) { st.Letter = "sha256:" + strings.Repeat("9", 64) }},
		{"another runner", func(st *GateStatement, _ *Attestation) { st.RunnerID = "build-2" }},
		{"another pin", func(st *GateStatement, _ *Attestation) { st.Pin = "sha256:" + strings.Repeat("9", 64) }},
		{"another commit", func(st *GateStatement, _ *Attestation) { st.Commit = strings.Repeat("9", 40) }},
		{"another tree", func(st *GateStatement, _ *Attestation) { st.Tree = strings.Repeat("9", 40) }},
		{"another gate", func(st *GateStatement, _ *Attestation) { st.GateCommand = "true" }},
		{"another exit", func(st *GateStatement, _ *Attestation) { st.ExitStatus = 1 }},
		{"another log", func(st *GateStatement, _ *Attestation) { st.ArtifactHash = "sha256:" + strings.Repeat("9", 64) }},
		{"another window", func(st *GateStatement, _ *Attestation) { st.EndedAt = "2026-12-04T10:02:00Z" }},
		{"another pin set", func(st *GateStatement, a *Attestation) { st.Pins, a.Pins = 4, 4 }},
		{"another key", func(_ *GateStatement, a *Attestation) { a.Key = RunnerKey(other.Public().(ed25519.PublicKey)) }},
		{"a flipped bit", func(_ *GateStatement, a *Attestation) { a.Sig = append([]byte{a.Sig[0] ^ 1}, a.Sig[1:]...) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, a := statement(), parsed
			tt.edit(st, &a)
			err := VerifyGate(a, st)
			if r, ok := AsRefusal(err); !ok || r.Code != UnprovenGate {
				t.Fatalf("%s: %v, want unproven_gate", tt.name, err)
			}
		})
	}
}

func TestParseAttestation(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	good := SignGate(priv, statement()).Trailer()
	fields := strings.Fields(good)
	for _, bad := range []string{
		"",
		"pins=3",
		"pins=0 " + fields[1] + " " + fields[2],
		"pins=x " + fields[1] + " " + fields[2],
		fields[0] + " key=rsa:abc " + fields[2],
		fields[0] + " " + fields[1] + " sig=short",
		fields[1] + " " + fields[0] + " " + fields[2],
		good + " extra=1",
	} {
		if _, err := ParseAttestation(bad); err == nil {
			t.Errorf("%q: read as an attestation", bad)
		}
	}
}

func TestRunnerKeyFingerprint(t *testing.T) {
	pub, _, _ := ed25519.GenerateKey(nil)
	key := RunnerKey(pub)
	back, err := ParseRunnerKey(key)
	if err != nil || !back.Equal(pub) {
		t.Fatalf("round trip: %v", err)
	}
	fp := RunnerKeyFingerprint(key)
	if len(fp) != 19 || strings.Count(fp, " ") != 3 {
		t.Fatalf("fingerprint %q: want four groups of four hex digits", fp)
	}
}

func FuzzParseAttestation(f *testing.F) {
	_, priv, _ := ed25519.GenerateKey(nil)
	f.Add(SignGate(priv, statement()).Trailer())
	f.Add("pins=1 key=ed25519:AAAA sig=AAAA")
	f.Fuzz(func(t *testing.T, value string) {
		a, err := ParseAttestation(value)
		if err != nil {
			return
		}
		// What reads is spelled back as it reads.
		again, err := ParseAttestation(a.Trailer())
		if err != nil || again.Pins != a.Pins || again.Key != a.Key || string(again.Sig) != string(a.Sig) {
			t.Fatalf("%q reads, but its spelling %q does not read back the same: %v", value, a.Trailer(), err)
		}
	})
}
