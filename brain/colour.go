package brain

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/rules"
)

// Colour is what the evidence says about a block.
type Colour string

// The colours, in the order the law tests them.
const (
	Broken         Colour = "broken"
	Unknown        Colour = "unknown"
	EvidenceBacked Colour = "evidence-backed"
	NeedsEvidence  Colour = "needs-evidence"
)

// Colours lists every colour, for per-colour counts.
var Colours = []Colour{Broken, NeedsEvidence, EvidenceBacked, Unknown}

// Paint is a block's colour and why it has it, in one line.
type Paint struct {
	Colour Colour `json:"colour"`
	Why    string `json:"why"`
}

// Colour derives the block's colour from its receipts (and nothing else:
// mission letters never colour a block). In order: the newest receipt of
// some type failed → broken; the contract requires no type → unknown;
// every required type's newest receipt is earned and fresh (scope equal to
// the block's boundary and contract, not expired, not failing) →
// evidence-backed; else needs-evidence.
func (b *Block) Colour(now time.Time) Paint {
	newest := map[string]*rules.Receipt{}
	var order []string
	for _, stored := range b.Receipts {
		var r rules.Receipt
		if json.Unmarshal(stored.Receipt, &r) != nil {
			continue
		}
		if _, seen := newest[r.Type]; !seen {
			order = append(order, r.Type)
		}
		newest[r.Type] = &r
	}
	for _, typ := range order {
		if r := newest[typ]; failing(r) {
			return Paint{Broken, fmt.Sprintf("the newest %s receipt failed (exit %d)", typ, *r.Evidence.ExitStatus)}
		}
	}
	if len(b.ReceiptContract.Required) == 0 {
		return Paint{Unknown, "the receipt contract requires no evidence"}
	}
	var missing []string
	for _, typ := range b.ReceiptContract.Required {
		r := newest[typ]
		switch {
		case r == nil:
			missing = append(missing, fmt.Sprintf("no %s receipt yet", typ))
		case r.Scope.BoundaryVersion != b.BoundaryVersion:
			missing = append(missing, fmt.Sprintf("the %s receipt proved boundary v%d, the block is at v%d", typ, r.Scope.BoundaryVersion, b.BoundaryVersion))
		case r.Scope.ContractVersion != b.ContractVersion:
			missing = append(missing, fmt.Sprintf("the %s receipt proved contract v%d, the block is at v%d", typ, r.Scope.ContractVersion, b.ContractVersion))
		case expired(r, now):
			missing = append(missing, fmt.Sprintf("the %s receipt expired on %s", typ, r.Validity.ExpiresOn))
		}
	}
	if len(missing) > 0 {
		return Paint{NeedsEvidence, strings.Join(missing, "; ")}
	}
	return Paint{EvidenceBacked, fmt.Sprintf("%s proved at boundary v%d", strings.Join(b.ReceiptContract.Required, ", "), b.BoundaryVersion)}
}

func failing(r *rules.Receipt) bool {
	return r.Evidence.ExitStatus != nil && *r.Evidence.ExitStatus != 0
}

// expired reads validity.expires_on as rules.ExpiresAt does (the import
// refuses any other spelling). A value that still does not parse, in a
// store written by other means, makes the receipt count as expired:
// evidence that cannot say when it ends is not fresh.
func expired(r *rules.Receipt, now time.Time) bool {
	if r.Validity == nil || r.Validity.ExpiresOn == "" {
		return false
	}
	at, err := rules.ExpiresAt(r.Validity.ExpiresOn)
	return err != nil || !now.Before(at)
}
