package rules

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A gate's word is proven, not claimed (DESIGN §10). When a runner's gate
// passes, runnerd signs what it tested with a key only it can read: the
// mission, the merge_wait letter (by the sha256 of its canonical bytes),
// the runner and the approved pin set version it ran under, the pin, the
// commit and the tree, the gate command, its exit status, the hash of its
// full log and its window. The signature rides as a trailer of the
// merge_wait letter's commit (the letter schema is frozen); the runner's
// public key is part of the pin set a human approves (refs/m1nd/pins). A
// merge_wait that names a runner without a signature that verifies by the
// key approved for that runner is refused unproven_gate by every verifier;
// one an agent posts on its own, naming no runner, is a claim.

// AttestationTrailer is the commit trailer that carries a runner's
// signature over its gate.
const AttestationTrailer = "M1nd-Gate-Attestation"

// GateStatementSchema names what a runner signs.
const GateStatementSchema = "m1nd-gate-attestation-v0"

// PinRef is the evidence ref prefix naming the approved runner pin whose
// gate proved the work (pin:sha256:<64 hex>).
const PinRef = "pin:"

// GateStatement is what a runner's signature binds. Every field but
// Letter and Pins is read off the merge_wait letter itself; Letter binds
// the rest of it, Pins the approval the runner ran under.
type GateStatement struct {
	Schema       string `json:"schema"`
	MissionID    string `json:"mission_id"`
	Letter       string `json:"letter"` // sha256:<64 hex> of the letter's canonical bytes
	RunnerID     string `json:"runner_id"`
	Pins         int64  `json:"pins"` // the version of refs/m1nd/pins that approved the runner
	Pin          string `json:"pin"`  // sha256:<64 hex>, the runner's whole pin
	Commit       string `json:"commit"`
	Tree         string `json:"tree"`
	GateCommand  string `json:"gate_command"`
	ExitStatus   int64  `json:"exit_status"`
	ArtifactHash string `json:"artifact_hash"`
	StartedAt    string `json:"started_at"`
	EndedAt      string `json:"ended_at"`
}

// signed is the bytes a runner signs: a domain tag, then the statement's
// JSON (its fields in this fixed order, so the bytes are a function of the
// values).
func (s *GateStatement) signed() []byte {
	body, _ := json.Marshal(s) // a struct of strings and integers: never fails
	return append([]byte("m1nd-gate-attestation-v0\x00"), body...)
}

// Attestation is a runner's signature over a gate statement, as its trailer
// carries it: the pin set version it ran under, the runner key that
// signed, the signature.
type Attestation struct {
	Pins int64
	Key  string // ed25519:<base64url of the 32-byte public key>
	Sig  []byte
}

// Trailer is the attestation's trailer value: "pins=N key=ed25519:… sig=…".
func (a Attestation) Trailer() string {
	return fmt.Sprintf("pins=%d key=%s sig=%s", a.Pins, a.Key, b64.EncodeToString(a.Sig))
}

// unproven is the refusal of a gate no approved runner proved.
func unproven(format string, args ...any) error {
	return Refusef(UnprovenGate, "gate", format, args...)
}

// ParseAttestation reads an attestation trailer's value.
func ParseAttestation(value string) (Attestation, error) {
	var a Attestation
	fields := strings.Fields(value)
	if len(fields) != 3 {
		return a, unproven("the %s trailer is pins=N key=ed25519:… sig=…", AttestationTrailer)
	}
	pins, okPins := strings.CutPrefix(fields[0], "pins=")
	key, okKey := strings.CutPrefix(fields[1], "key=")
	sig, okSig := strings.CutPrefix(fields[2], "sig=")
	n, err := strconv.ParseInt(pins, 10, 64)
	if !okPins || !okKey || !okSig || err != nil || n < 1 {
		return a, unproven("the %s trailer is pins=N key=ed25519:… sig=…", AttestationTrailer)
	}
	if _, err := ParseRunnerKey(key); err != nil {
		return a, err
	}
	raw, err := b64.DecodeString(sig)
	if err != nil || len(raw) != ed25519.SignatureSize {
		return a, unproven("the %s trailer's sig is an Ed25519 signature, base64url", AttestationTrailer)
	}
	return Attestation{Pins: n, Key: key, Sig: raw}, nil
}

// runnerKeyPrefix starts a runner key's spelling.
const runnerKeyPrefix = "ed25519:"

// RunnerKey spells an Ed25519 public key as a pin set and a trailer carry
// it: ed25519:<base64url>.
func RunnerKey(pub ed25519.PublicKey) string {
	return runnerKeyPrefix + b64.EncodeToString(pub)
}

// ParseRunnerKey reads a runner key's spelling.
func ParseRunnerKey(key string) (ed25519.PublicKey, error) {
	enc, ok := strings.CutPrefix(key, runnerKeyPrefix)
	raw, err := b64.DecodeString(enc)
	if !ok || err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, Refusef(InvalidLetter, "key", "a runner key is ed25519: followed by the 32-byte public key, base64url")
	}
	return ed25519.PublicKey(raw), nil
}

// RunnerKeyFingerprint is how a person compares a runner key: the first
// 16 hex digits of the sha256 of its spelling, in groups of four.
func RunnerKeyFingerprint(key string) string {
	sum := sha256.Sum256([]byte(key))
	h := hex.EncodeToString(sum[:8])
	return h[0:4] + " " + h[4:8] + " " + h[8:12] + " " + h[12:16]
}

// SignGate signs a gate statement with a runner's private key, under the
// pin set version st names.
func SignGate(priv ed25519.PrivateKey, st *GateStatement) Attestation {
	return Attestation{Pins: st.Pins, Key: RunnerKey(priv.Public().(ed25519.PublicKey)), Sig: ed25519.Sign(priv, st.signed())}
}

// VerifyGate checks that a's signature is by a.Key over st; anything else
// is refused unproven_gate.
func VerifyGate(a Attestation, st *GateStatement) error {
	pub, err := ParseRunnerKey(a.Key)
	if err != nil {
		return err
	}
	if a.Pins != st.Pins {
		return unproven("the attestation names pin set v%d, the statement v%d", a.Pins, st.Pins)
	}
	if !ed25519.Verify(pub, st.signed(), a.Sig) {
		return unproven("runner %s's attestation does not verify over this letter: it was made for another letter, tree or gate, or by another key", Echo(st.RunnerID))
	}
	return nil
}
