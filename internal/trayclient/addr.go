package trayclient

import (
	"net"

	"github.com/m1nd/m1nd/internal/loopback"
)

// DefaultAddr is where `m1nd serve` listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7420"

// Listen binds addr for an owner, refusing anything but a loopback
// address: the owner answers only this machine.
func Listen(addr string) (net.Listener, error) { return loopback.Listen(addr, "the owner") }

// URL is the tray's address for an owner bound to host:port. It names
// localhost (browsers refuse an IP address as a passkey's site) unless the
// owner is bound to another loopback address, which localhost does not
// reach.
func URL(host, port string) string {
	switch host {
	case "", "localhost", "127.0.0.1", "::1":
		return "http://localhost:" + port + "/"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// Pins is what the owner trusts about runners, as the operator set it:
// the pinned runners and the shared secret they prove themselves with.
type Pins struct {
	Secret       string            // the shared local secret; "" refuses every runner call
	Capabilities map[string]string // pinned runner id → capability
	// File, when set, is runners.toml: the owner reads it again with Load
	// whenever its size or modification time changes (looked at on each
	// announce and each question about runners), so a runner the operator
	// pins while the owner runs is pinned within seconds, no restart. A
	// file that does not load keeps the pins the owner had, and says so.
	File string
	Load func(file string) (map[string]string, error)
}
