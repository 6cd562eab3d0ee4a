package brain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/rules"
)

// ImportRequest is a receipt submitted for import into a block.
type ImportRequest struct {
	WriteRequest
	BlockID string
	Receipt []byte // the receipt JSON, kept exactly (compacted) as submitted
	Origin  string // imported_via: the human gesture's origin
	Proof   *rules.Proof
	// Lands names the mission this import lands and the commits its human
	// saw (a landing, ops.Land); nil for an import that lands no mission.
	// It makes the gesture a landing's: its proof binds the record too.
	Lands *Landing
	// DryRun prepares the import without committing it: the reply's
	// Prepared is what the passkey signs.
	DryRun bool
}

// importGesture is the gesture an import is: a landing's, when it names
// the mission it lands.
func importGesture(lands *Landing) string {
	if lands != nil {
		return rules.GestureLand
	}
	return rules.GestureReceiptImport
}

// ImportResult is the reply to an accepted import.
type ImportResult struct {
	StoreVersion int64  `json:"store_version"`
	BlockID      string `json:"block_id"`
	ReceiptCount int    `json:"receipt_count"`
	Commit       string `json:"commit"`

	Prepared *chain.Prepared `json:"-"` // with DryRun: the commit the passkey's proof lets through
}

// ImportReceipt is the receipt_import law, checks in order: the human
// origin (before anything is parsed), a store exists, the expected store
// version, the block exists, the receipt's scope equals the block's current
// boundary and contract, the evidence contract of its type, and its
// window. The receipt is stored as submitted: nothing re-dates it.
func (s *Store) ImportReceipt(ctx context.Context, req ImportRequest) (*ImportResult, error) {
	now := req.at()
	res := &ImportResult{BlockID: req.BlockID}
	if req.Lands != nil {
		if err := req.Lands.Check(); err != nil {
			return nil, err
		}
	}
	snap, mres, err := s.mutate(ctx, mutation{
		op: StoreOpReceiptImport, expected: req.ExpectedStoreVersion, needStore: true, agent: req.Agent, origin: req.Origin, gesture: importGesture(req.Lands), lands: req.Lands, proof: req.Proof, dryRun: req.DryRun, now: now,
		apply: func(next *Snapshot) (string, error) {
			b := next.Block(req.BlockID)
			if b == nil {
				return "", rules.Refusef(rules.UnknownBlock, "block_id", "this store has no block %s; `m1nd blocks` lists them", rules.Echo(req.BlockID))
			}
			r, compact, err := DecodeReceipt(req.Receipt)
			if err != nil {
				return "", err
			}
			if err := checkScope(b, r); err != nil {
				return "", err
			}
			if err := rules.CheckReceipt(r, now); err != nil {
				return "", err
			}
			b.Receipts = append(b.Receipts, StoredReceipt{
				Receipt: compact, StoreVersion: next.StoreVersion, ImportedBy: req.Agent,
				ImportedVia: req.Origin, ImportedAt: now.UTC().Format(rules.WindowLayout), Lands: req.Lands,
			})
			res.ReceiptCount = len(b.Receipts)
			return fmt.Sprintf("receipt_import %s %s", b.BlockID, r.Type), nil
		},
	})
	if err != nil {
		return nil, err
	}
	res.StoreVersion, res.Prepared = snap.StoreVersion, mres.Prepared
	if !req.DryRun {
		res.Commit = snap.Commit.String()
	}
	return res, nil
}

// checkScope is the anti-poison law: evidence counts only for the block,
// boundary and contract it was proved at.
func checkScope(b *Block, r *rules.Receipt) error {
	for _, id := range []struct{ field, value string }{{"block_id", r.BlockID}, {"scope.block_id", r.Scope.BlockID}} {
		if id.value != "" && id.value != b.BlockID {
			return rules.Refusef(rules.StaleScope, id.field, "the receipt is about block %s, not %s", rules.Echo(id.value), b.BlockID)
		}
	}
	if r.Scope.BoundaryVersion != b.BoundaryVersion {
		return rules.Refusef(rules.StaleScope, "scope.boundary_version",
			"the receipt was proved at boundary v%d; %s is at boundary v%d now", r.Scope.BoundaryVersion, b.BlockID, b.BoundaryVersion)
	}
	if r.Scope.ContractVersion != b.ContractVersion {
		return rules.Refusef(rules.StaleScope, "scope.contract_version",
			"the receipt was proved at contract v%d; %s is at contract v%d now", r.Scope.ContractVersion, b.BlockID, b.ContractVersion)
	}
	return nil
}

// DecodeReceipt parses a submitted receipt strictly (one JSON object, no
// unknown fields) and returns it with its compact bytes, which are what
// the store keeps. A malformed receipt is refused incomplete_evidence.
func DecodeReceipt(data []byte) (*rules.Receipt, []byte, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return nil, nil, rules.Refusef(rules.IncompleteEvidence, "receipt", "the receipt is not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(compact.Bytes()))
	dec.DisallowUnknownFields()
	r := &rules.Receipt{}
	if err := dec.Decode(r); err != nil {
		return nil, nil, rules.Refusef(rules.IncompleteEvidence, "receipt", "the receipt is not a receipt document: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, rules.Refusef(rules.IncompleteEvidence, "receipt", "the receipt must be one JSON object")
	}
	return r, compact.Bytes(), nil
}

// jsonProblem says what was wrong with a submitted document without
// repeating it: the field at fault and what it should be.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Sprintf("%s must be %s", rules.Echo(typeErr.Field), jsonType(typeErr.Type.String()))
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unknown field " + rules.Echo(strings.Trim(field, `"`))
	}
	return "malformed JSON"
}

func jsonType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "*int"):
		return "a number"
	case goType == "bool":
		return "true or false"
	}
	return "an object"
}
