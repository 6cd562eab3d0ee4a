package cli

import (
	"strings"
	"testing"
)

func TestHoistFlags(t *testing.T) {
	inv := &Invocation{io: &IOStreams{}}
	app := newApp(inv, allCommands(inv, nil))
	tests := []struct{ in, want string }{
		{"m1nd mission show msn_0123456789ab --json", "m1nd mission show --json msn_0123456789ab"},
		{"m1nd -C dir mission heads --phase merge_wait", "m1nd -C dir mission heads --phase merge_wait"},
		{"m1nd mission heads x --phase merge_wait", "m1nd mission heads --phase merge_wait x"},
		{"m1nd mission post letter.json --agent a1", "m1nd mission post --agent a1 letter.json"},
		{"m1nd mission post - --agent=a1", "m1nd mission post --agent=a1 -"},
		{"m1nd mission show ID -- --json", "m1nd mission show -- ID --json"},
		{"m1nd mission bogus --json", "m1nd mission bogus --json"}, // the group names the verb it does not know
		{"m1nd status", "m1nd status"},
	}
	for _, tt := range tests {
		got := strings.Join(hoistFlags(app, strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("hoistFlags(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
